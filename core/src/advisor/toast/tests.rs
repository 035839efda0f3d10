use super::*;
use crate::rewrite::wal::WalCount;
use crate::sampling::BlockTotals;

fn speeds(method: &str, raw: i64, compress_mbps: f64) -> ToastRow {
    ToastRow {
        method: method.into(),
        values: 100,
        compressed_values: 0,
        raw_bytes: raw,
        stored_bytes: 0,
        ratio: 1.0,
        compress_mbps,
        decompress_mbps: compress_mbps * 4.0,
        stored_bytes_low: None,
        stored_bytes_high: None,
    }
}

/// `blocks` sampled blocks of `per_block` rows each, of `nblocks`, each row stored as
/// (now, pglz, lz4) bytes.
fn blocks(nblocks: u64, sampled: usize, per_block: usize, raw: usize, sizes: (usize, i64, i64)) -> ColumnBlocks {
    let mut b = BlockTotals::default();
    for _ in 0..per_block {
        b.add(raw, sizes.0, &[sizes.1, sizes.2]);
        // stored raw now: a rewrite to a method changes it where the method shrinks it
        b.add_rewrites(&[sizes.1 < sizes.0 as i64, sizes.2 < sizes.0 as i64]);
    }
    ColumnBlocks { nblocks, blocks: vec![b; sampled] }
}

const STORED_RAW: &[(String, u64)] = &[];

fn measured<'a>(blocks: &'a ColumnBlocks, pglz: &'a ToastRow, lz4: &'a ToastRow) -> ColumnMeasurement<'a> {
    ColumnMeasurement {
        target: "public.t.c",
        table_name: "public.t",
        column: "c",
        table_literal: "'public.t'",
        column_name: "c",
        configured: None,
        default_method: ToastCompression::Pglz,
        methods_now: STORED_RAW,
        pglz,
        lz4,
        blocks,
        written: Rate { amount: 86400.0, seconds: 86400.0 },
        read: Rate { amount: 0.0, seconds: 86400.0 },
        partitions: &[],
        partial: None,
        index_bytes: 0.0,
        page_images: true,
    }
}

#[test]
fn the_values_to_rewrite_are_those_a_rewrite_changes_exactly_where_all_were_read() {
    // a table of 10 blocks read whole, each of 3 values in pglz (rewritten to lz4) and 1 in
    // lz4 (kept), each 2,000 bytes stored now, pglz 2,000, lz4 1,500 anew
    let mut b = BlockTotals::default();
    for kept in [false, false, false, true] {
        b.add(8000, 2000, &[2000, 1500]);
        b.add_rewrites(&[kept, !kept]);
    }
    // the rewrite to lz4 of a block's 3 rows: 10,000 bytes of records each, the block's heap
    // page due an image of 8,000 bytes, two TOAST pages reached (8,000 bytes each) but not due
    let mut wal = WalCount { records: 30_000.0, ..WalCount::default() };
    wal.add_page(8000, true);
    wal.add_page(8000, false);
    b.wal = vec![WalCount::default(), wal];
    let sample = ColumnBlocks { nblocks: 10, blocks: vec![b; 10] };
    let (pglz, lz4) = (speeds("pglz", 320_000, 100.0), speeds("lz4", 320_000, 500.0));
    let methods = [("pglz".to_string(), 30), ("lz4".to_string(), 10)];
    let index_bytes = 81920.0;
    let row = column_row(&ColumnMeasurement { methods_now: &methods, index_bytes, ..measured(&sample, &pglz, &lz4) });
    assert_eq!(row.recommended, "lz4");
    // read whole: the records and images due are the blocks' sums, the high end adds every page
    // reached and the index pages of the 30 rows of 40 rewritten
    let lsn = |b: f64| b * 8192.0 / 8168.0;
    let interval = sample.rewrite_wal(1, index_bytes * 0.75).unwrap();
    assert!((interval.about - lsn(380_000.0)).abs() < 1e-6);
    assert!((interval.low - lsn(300_000.0 * 0.95 + 80_000.0)).abs() < 1e-6);
    assert!((interval.high - lsn(300_000.0 * 1.05 + 80_000.0 + 160_000.0 + 61_440.0)).abs() < 1e-6);
    // 30 of 40 rows, no "about": the table was read whole
    assert!(
        row.note.contains("CALL rewrites the existing values online")
            && row.note.contains(": 30 values to rewrite, writing about 372 kB of WAL (95% interval 357 kB..604 kB)"),
        "{}",
        row.note
    );
    // no images counted (the caller may not read whole rows): said so
    let row = column_row(&ColumnMeasurement {
        methods_now: &methods,
        index_bytes,
        page_images: false,
        ..measured(&sample, &pglz, &lz4)
    });
    assert!(row.note.contains("and full-page images not counted here (you may not read whole rows"), "{}", row.note);
}

/// A table of 10 blocks read whole, each of `stale` values in pglz (rewritten to lz4) and
/// `4 - stale` in lz4, under a default of lz4 (PostgreSQL 19).
fn lz4_default_with_pglz_values(stale: usize) -> (ColumnBlocks, [(String, u64); 2]) {
    let mut b = BlockTotals::default();
    for i in 0..40 {
        let old = i < stale;
        b.add(8000, if old { 2000 } else { 1900 }, &[2000, 1900]);
        b.add_rewrites(&[!old, old]);
    }
    let sample = ColumnBlocks { nblocks: 10, blocks: vec![b; 10] };
    (sample, [("pglz".to_string(), 10 * stale as u64), ("lz4".to_string(), 10 * (40 - stale) as u64)])
}

#[test]
fn values_left_in_another_method_get_the_call_alone() {
    let (pglz, lz4) = (speeds("pglz", 320_000, 100.0), speeds("lz4", 320_000, 500.0));
    let (sample, methods) = lz4_default_with_pglz_values(30);
    let row = column_row(&ColumnMeasurement {
        methods_now: &methods,
        default_method: ToastCompression::Lz4,
        ..measured(&sample, &pglz, &lz4)
    });
    assert_eq!(
        (row.current.as_str(), row.recommended.as_str()),
        ("lz4 (default_toast_compression); stored values sampled: pglz 300, lz4 100", "lz4")
    );
    assert_eq!(row.apply_sql.as_deref(), Some("CALL compresslab.recompress('public.t', 'c', 'lz4');"));
    assert!(
        row.note.contains("The column's method is lz4 (default_toast_compression) already, but values keep the method they were written with (sampled: pglz 300, lz4 100): VACUUM FULL, CLUSTER, REPACK (PostgreSQL 19), table rewrites")
            && row.note.contains(": 300 values to rewrite, writing about "),
        "{}",
        row.note
    );
    // writes already use lz4: no change of CPU to price
    assert_eq!((row.compress_cpu_seconds_per_gb, row.compress_cpu_seconds_per_day), (None, None));
    // under 5% of the values left behind: keep
    let (sample, methods) = lz4_default_with_pglz_values(1);
    let row = column_row(&ColumnMeasurement {
        methods_now: &methods,
        default_method: ToastCompression::Lz4,
        ..measured(&sample, &pglz, &lz4)
    });
    assert!(row.apply_sql.is_none() && row.note.starts_with("keep: "), "{}", row.note);
    // two in 40: 5%, rewritten
    let (sample, methods) = lz4_default_with_pglz_values(2);
    let row = column_row(&ColumnMeasurement {
        methods_now: &methods,
        default_method: ToastCompression::Lz4,
        ..measured(&sample, &pglz, &lz4)
    });
    assert_eq!(row.apply_sql.as_deref(), Some("CALL compresslab.recompress('public.t', 'c', 'lz4');"));
}

#[test]
fn values_pglz_refuses_and_lz4_compresses_move_to_lz4() {
    // 100 values of 8,000 bytes stored raw under pglz, in 10 of 100 blocks; lz4 stores 22.5% less
    let sample = blocks(100, 10, 10, 8000, (8000, 8000, 6200));
    let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
    let methods = [("uncompressed".to_string(), 100)];
    let row = column_row(&ColumnMeasurement { methods_now: &methods, ..measured(&sample, &pglz, &lz4) });
    assert_eq!(row.recommended, "lz4");
    assert_eq!(row.bytes_now, Some(8_000_000), "scaled by 100 blocks / 10 sampled");
    assert_eq!(row.bytes_recommended, Some(6_200_000));
    // every block alike: no spread, the interval is the point
    assert_eq!((row.bytes_now_low, row.bytes_now_high), (Some(8_000_000), Some(8_000_000)));
    assert_eq!((row.bytes_recommended_low, row.bytes_recommended_high), (Some(6_200_000), Some(6_200_000)));
    assert_eq!(row.confidence, Confidence::High);
    assert!((row.saving_percent - 22.5).abs() < 1e-9);
    assert_eq!(
        row.apply_sql.as_deref(),
        Some(
            "SET lock_timeout = '1s'; ALTER TABLE public.t ALTER COLUMN c SET COMPRESSION lz4;\n\
             CALL compresslab.recompress('public.t', 'c', 'lz4');"
        )
    );
    assert!(row.note.contains("55P03") && row.note.contains("ACCESS EXCLUSIVE"), "{}", row.note);
    // 100 raw values of 8,000 bytes sampled of 1,000 rows: all 1,000 to rewrite
    assert!(
        row.note.contains("about 1000 values to rewrite (95% interval 1000..1000), writing about "),
        "{}",
        row.note
    );
    assert!(row.current.starts_with("pglz (default_toast_compression); stored values sampled: uncompressed 100"));
    assert!(
        row.basis.starts_with(
            "100 values sampled, every row of 10 of the table's 100 blocks, chosen at random (about 1000 rows in all)"
        ),
        "{}",
        row.basis
    );
    assert!(
        row.basis.contains("pglz would store 8000000 bytes (95% interval 8000000..8000000), lz4 6200000 bytes"),
        "{}",
        row.basis
    );
    // CPU per GiB at 500 MB/s: 2^30 / 5e8 s
    assert!((row.compress_cpu_seconds_per_gb.unwrap() - GB / 5e8).abs() < 1e-9);
    // one row of 8,000 bytes written a second
    assert!((row.compress_cpu_seconds_per_day.unwrap() - 86400.0 * 8000.0 / 5e8).abs() < 1e-6);
}

#[test]
fn a_table_read_whole_is_exact() {
    let sample = blocks(10, 10, 10, 8000, (8000, 8000, 6200));
    let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
    let row = column_row(&measured(&sample, &pglz, &lz4));
    assert_eq!((row.bytes_now, row.bytes_now_low, row.bytes_now_high), (Some(800_000), Some(800_000), Some(800_000)));
    assert!(row.basis.starts_with("100 values sampled, every row of the table's 10 blocks ("), "{}", row.basis);
    assert!(row.basis.contains("now 800000 bytes (exact)"), "{}", row.basis);
}

#[test]
fn the_interval_follows_the_blocks_spread_and_sets_the_confidence() {
    // blocks of one row each of 1,000 to 20,000 bytes: a wide interval, low confidence;
    // pglz and lz4 within a few percent of each other: the choice is within the noise
    let mut sample = ColumnBlocks { nblocks: 1000, blocks: Vec::new() };
    for i in 0..30 {
        let mut b = BlockTotals::default();
        let bytes = 1000 + (i * 7919 % 20) * 1000;
        b.add(bytes, bytes, &[bytes as i64 / 2, bytes as i64 * 52 / 100]);
        sample.blocks.push(b);
    }
    let (pglz, lz4) = (speeds("pglz", 1, 100.0), speeds("lz4", 1, 500.0));
    let row = column_row(&measured(&sample, &pglz, &lz4));
    let (low, high) = (row.bytes_recommended_low.unwrap(), row.bytes_recommended_high.unwrap());
    assert!(low < row.bytes_recommended.unwrap() && row.bytes_recommended.unwrap() < high);
    assert!(row.bytes_now_low.unwrap() < row.bytes_now.unwrap());
    assert_eq!(row.confidence, Confidence::Low);
    assert!(row.note.contains("within the sampling noise"), "{}", row.note);
}

#[test]
fn a_partitioned_table_is_one_row_with_a_statement_per_partition() {
    let sample = blocks(100, 10, 10, 8000, (8000, 8000, 6200));
    let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
    let partitions = ["public.t_2024".to_string(), "public.t_2025".to_string()];
    let row = column_row(&ColumnMeasurement { partitions: &partitions, ..measured(&sample, &pglz, &lz4) });
    assert_eq!(
        row.apply_sql.as_deref(),
        Some(
            "SET lock_timeout = '1s'; ALTER TABLE public.t ALTER COLUMN c SET COMPRESSION lz4;\n\
             SET lock_timeout = '1s'; ALTER TABLE public.t_2024 ALTER COLUMN c SET COMPRESSION lz4;\n\
             SET lock_timeout = '1s'; ALTER TABLE public.t_2025 ALTER COLUMN c SET COMPRESSION lz4;\n\
             CALL compresslab.recompress('public.t', 'c', 'lz4');"
        )
    );
    assert!(
        row.basis
            .starts_with("100 values sampled, every row of 10 of the table's 100 blocks across its 2 partitions, "),
        "{}",
        row.basis
    );
}

#[test]
fn a_partial_sample_says_so_and_is_low_confidence() {
    let sample = blocks(100, 10, 10, 8000, (8000, 8000, 6200));
    let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
    let why = "the next value (60 MB) did not fit in the 7 MB left of the column's byte cap";
    let row = column_row(&ColumnMeasurement { partial: Some(why), ..measured(&sample, &pglz, &lz4) });
    assert_eq!(row.confidence, Confidence::Low);
    assert!(row.basis.ends_with(&format!("; partially sampled: {why}")), "{}", row.basis);
}

#[test]
fn columns_under_a_megabyte_fold_into_one_row() {
    let column = |target: &str, now: Option<i64>, then: i64, cpu: Option<f64>, confidence: Confidence| AdviceRow {
        area: "toast".into(),
        target: target.into(),
        current: "pglz (default_toast_compression); stored values sampled: pglz 300".into(),
        recommended: if then < now.unwrap_or(0) { "lz4" } else { "pglz" }.into(),
        bytes_now: now,
        bytes_recommended: Some(then),
        compress_cpu_seconds_per_day: cpu,
        confidence,
        apply_sql: Some("ALTER TABLE ...".into()),
        ..AdviceRow::default()
    };
    let wal = AdviceRow { area: "wal_compression".into(), bytes_now: Some(10), ..AdviceRow::default() };
    let rows = vec![
        wal.clone(),
        column("public.big.c", Some(50 << 20), 40 << 20, Some(1.0), Confidence::High),
        column("public.a.c", Some(600_000), 500_000, Some(0.5), Confidence::High),
        column("public.b.c", Some(SMALL_COLUMN_BYTES - 1), SMALL_COLUMN_BYTES - 1, None, Confidence::Medium),
        column("public.nostats.c", None, 0, None, Confidence::High),
        column("public.edge.c", Some(SMALL_COLUMN_BYTES), 1, None, Confidence::High),
    ];
    let (folded, n) = fold_small_columns(rows);
    assert_eq!(n, 2);
    let targets: Vec<&str> = folded.iter().map(|r| r.target.as_str()).collect();
    assert_eq!(targets, ["", "public.big.c", "2 columns under 1 MB each", "public.nostats.c", "public.edge.c"]);
    let summary = &folded[2];
    assert_eq!(summary.bytes_now, Some(600_000 + SMALL_COLUMN_BYTES - 1));
    assert_eq!(summary.bytes_recommended, Some(500_000 + SMALL_COLUMN_BYTES - 1));
    assert_eq!((summary.compress_cpu_seconds_per_day, summary.decompress_cpu_seconds_per_day), (Some(0.5), None));
    assert_eq!((summary.apply_sql.as_deref(), summary.confidence), (None, Confidence::Medium));
    assert_eq!(summary.current, "2 columns, all pglz (default_toast_compression)");
    assert_eq!(summary.recommended, "2 columns: lz4 1, pglz 1");
    assert!(summary.basis.ends_with(": public.a.c, public.b.c"), "{}", summary.basis);
    assert!(summary.note.contains("verbose => true"), "{}", summary.note);
    // nothing small, or one small column alone: the rows as they were
    let (same, none) = fold_small_columns(vec![wal.clone()]);
    assert_eq!((same, none), (vec![wal.clone()], 0));
    let alone = vec![wal, column("public.a.c", Some(600_000), 500_000, None, Confidence::High)];
    let (same, none) = fold_small_columns(alone.clone());
    assert_eq!((same, none), (alone, 0));
}

#[test]
fn a_kept_method_has_no_statement_and_no_cpu_figures() {
    let sample = blocks(100, 10, 10, 8000, (4000, 4000, 6000));
    let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
    let row = column_row(&measured(&sample, &pglz, &lz4));
    assert_eq!(row.recommended, "pglz");
    assert!(row.apply_sql.is_none() && row.note.starts_with("keep: "));
    assert_eq!((row.compress_cpu_seconds_per_gb, row.compress_cpu_seconds_per_day), (None, None));
}

#[test]
fn an_interval_in_words_for_each_kind_of_sample() {
    let e = |low: Option<f64>, high: Option<f64>| Estimate { total: 1000.0, low, high };
    assert_eq!(interval_words(&e(Some(1000.0), Some(1000.0)), true), "exact");
    assert_eq!(interval_words(&e(Some(990.0), Some(1020.0)), true), "every value read; the model's error 990..1020");
    assert_eq!(interval_words(&e(Some(900.0), Some(1100.0)), false), "95% interval 900..1100");
    assert_eq!(interval_words(&e(None, None), false), "no interval: one block");
}
