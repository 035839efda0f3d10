use super::pieces::{self, Piece, PieceLog, RecordSeen, LOAD_MIN_BYTES};
use super::*;

const MB: u64 = CHUNK_BYTES;
/// Microseconds in a second.
const S: i64 = 1_000_000;

fn whatif(setting: &str, wal_bytes: i64, compress: f64) -> WalWhatIfRow {
    WalWhatIfRow {
        wal_compression: WalCompression::from_setting(setting).unwrap(),
        start_lsn: "0/1000000".into(),
        end_lsn: "0/5000000".into(),
        records: 1000,
        fpi_images: 500,
        sampled_images: 500,
        compressed_images: 0,
        stored_images: 0,
        fpi_bytes: 0,
        wal_bytes,
        saving_percent: 100.0 * (1.0 - wal_bytes as f64 / 64e6),
        compress_cpu_seconds: compress,
        decompress_cpu_seconds: compress / 4.0,
    }
}

/// `n` steady pieces of 1 MB from `lsn` on, written from `t0` (microseconds) at `seconds`
/// each, `images` images a piece each saving `saved` bytes under pglz, lz4 and zstd (off
/// saves nothing: written under off), a commit every 10 kB.
fn steady(lsn: u64, n: u64, t0: i64, seconds: f64, images: u64, saved: [f64; 3]) -> Vec<Piece> {
    (0..n)
        .map(|i| {
            let start = lsn + i * MB;
            let t = t0 + (i as f64 * seconds * 1e6) as i64;
            Piece {
                start,
                end: start + MB,
                records: 5000,
                images,
                load_bytes: MB - images * 2000,
                stamps: 100,
                first_stamp: Some((start + 100, t)),
                last_stamp: Some((start + MB - 100, t + (seconds * 1e6) as i64)),
                sampled: images,
                saved: vec![0.0, saved[0] * images as f64, saved[1] * images as f64, saved[2] * images as f64],
            }
        })
        .collect()
}

/// `n` pieces of a one-off load: rows written by one transaction (no commit inside) over
/// `seconds` in all, the commit of its CREATE TABLE at the start and its own at the end.
fn load(lsn: u64, n: u64, t0: i64, seconds: f64) -> Vec<Piece> {
    (0..n)
        .map(|i| {
            let start = lsn + i * MB;
            let stamp = if i == n - 1 {
                Some((start + MB - 100, t0 + (seconds * 1e6) as i64))
            } else {
                (i == 0).then_some((start + 100, t0))
            };
            Piece {
                start,
                end: start + MB,
                records: 8000,
                load_bytes: MB,
                stamps: stamp.is_some() as u64,
                first_stamp: stamp,
                last_stamp: stamp,
                saved: vec![0.0; 4],
                ..Piece::default()
            }
        })
        .collect()
}

/// The what-if's rows over `pieces` (written under off), as the reader would give them.
fn rows_for(pieces: &[Piece]) -> Vec<WalWhatIfRow> {
    let bytes: u64 = pieces.iter().map(Piece::bytes).sum();
    let images: u64 = pieces.iter().map(|p| p.images).sum();
    ["off", "pglz", "lz4", "zstd"]
        .iter()
        .enumerate()
        .map(|(i, setting)| {
            let saved: f64 = pieces.iter().map(|p| p.saved[i]).sum();
            let mut row = whatif(setting, (bytes as f64 - saved).round() as i64, if i == 0 { 0.0 } else { 0.5 });
            row.start_lsn = lsn_text(pieces[0].start);
            row.end_lsn = lsn_text(pieces.last().unwrap().end);
            (row.fpi_images, row.sampled_images) = (images as i64, images as i64);
            row.saving_percent = 100.0 * saved / bytes as f64;
            row
        })
        .collect()
}

fn stats(written: f64, images: f64, seconds: f64) -> (Rate, Rate) {
    (Rate { amount: written, seconds }, Rate { amount: images, seconds })
}

/// pg_wal read back from the flush at `now`, pg_stat_wal's figures standing by.
fn pg_wal(now: i64) -> WalPeriod {
    let (written, images) = stats(1e12, 1e6, 600.0);
    WalPeriod::PgWal { now, statistics: WalStatistics { written, images, image_bytes: None } }
}

/// The row's saving under its pick, and its 95% interval, in percent of bytes_now.
fn saving_and_interval(row: &AdviceRow) -> (f64, f64, f64) {
    let now = row.bytes_now.unwrap() as f64;
    let pct = |b: i64| 100.0 * (now - b as f64) / now;
    (row.saving_percent, pct(row.bytes_recommended_high.unwrap()), pct(row.bytes_recommended_low.unwrap()))
}

/// The saving under `setting` (index) of `pieces` counted whole: the truth a what-if over
/// their range gives.
fn truth(pieces: &[Piece], setting: usize) -> f64 {
    let bytes: u64 = pieces.iter().map(Piece::bytes).sum();
    100.0 * pieces.iter().map(|p| p.saved[setting]).sum::<f64>() / bytes as f64
}

const LZ4: usize = 2;

#[test]
fn parts_are_read_back_from_the_flush_newest_first() {
    let gb = 1u64 << 30;
    // the first part: an eighth of the time at every image, whole pieces, at most 16 MB
    let (start, sample) = pieces::next_part(10 * gb, 0, 0.49, None).unwrap();
    assert_eq!(sample, 1.0);
    assert_eq!(start % MB, 0);
    let first = 10 * gb - start;
    assert!(first >= gb / 80 && first < gb / 80 + MB, "{first}");
    assert_eq!(pieces::next_part(10 * gb, 0, 4.9, None), Some((10 * gb - 16 * MB, 1.0)));
    // then at the speed measured: twice slower than the model, the rest of 10 GB in 4 s is a
    // 1% sample, each part at most half the time left
    let (next, sample) = pieces::next_part(start, 0, 4.0, Some(2.0)).unwrap();
    assert_eq!(sample, pieces::MIN_SAMPLE);
    let bytes = (start - next) as f64;
    let expected = 2.0 / (2.0 * pieces::model_seconds(gb, 0.01)) * gb as f64;
    assert!((bytes / expected - 1.0).abs() < 0.01, "{bytes} {expected}");
    // 100 MB left, time for all of it at every image: read to the floor at once
    assert_eq!(pieces::next_part(100 * MB + 7, 7, 10.0, Some(1.0)), Some((7, 1.0)));
    // a part is at least one piece, never empty
    let (tiny, _) = pieces::next_part(5 * MB + 10, 0, 1e-6, Some(1.0)).unwrap();
    assert_eq!(tiny, 4 * MB);
    let (tiny, _) = pieces::next_part(5 * MB, 0, 1e-6, Some(1.0)).unwrap();
    assert_eq!(tiny, 4 * MB);
    // nothing left, or no time
    assert_eq!(pieces::next_part(7, 7, 10.0, None), None);
    assert_eq!(pieces::next_part(gb, 0, 0.0, None), None);
}

#[test]
fn the_log_cuts_records_into_pieces_and_counts_what_a_load_writes() {
    let mut log = PieceLog::default();
    let record = |lsn: u64, len: u64, images: u64, whole_page: bool, time: Option<i64>| RecordSeen {
        lsn,
        end_lsn: lsn + len,
        images,
        image_bytes: images * 4000,
        whole_page,
        time,
    };
    log.observe(&record(MB - 10_000, 9_000, 2, false, None));
    log.observe(&record(MB - 1_000, 5_000, 0, false, Some(7)));
    log.observe(&record(MB + 4_000, 8_200, 1, true, None));
    log.observe(&record(MB + 12_200, 50, 0, false, Some(9)));
    let p = &log.pieces;
    assert_eq!(p.len(), 2);
    // the first piece ends where the second's first record starts
    assert_eq!((p[0].start, p[0].end, p[1].start, p[1].end), (MB - 10_000, MB + 4_000, MB + 4_000, MB + 12_250));
    assert_eq!((p[0].records, p[0].images, p[0].stamps), (2, 2, 1));
    // images are not what a load writes; pages written whole are
    assert_eq!(p[0].load_bytes, 9_000 - 8_000 + 5_000);
    assert_eq!(p[1].load_bytes, 8_200 + 50);
    assert_eq!((p[1].first_stamp, p[1].last_stamp), (Some((MB + 12_200, 9)), Some((MB + 12_200, 9))));
}

#[test]
fn a_parts_pieces_sum_to_its_rows() {
    let mut log = PieceLog::default();
    for i in 0..3 {
        log.observe(&RecordSeen {
            lsn: i * MB,
            end_lsn: i * MB + 500_000,
            images: 10,
            image_bytes: 80_000,
            ..RecordSeen::default()
        });
    }
    // two pieces sampled (5 images each), the third not; lz4 rows save 1% more than the images
    // (page headers)
    let chunks = vec![
        ChunkSavings { index: 0, images: 5, saved: vec![0, 10_000, 20_000, 25_000] },
        ChunkSavings { index: 1, images: 5, saved: vec![0, 30_000, 40_000, 45_000] },
    ];
    let per_image = [0.0, 4_000.0, 6_000.0, 7_000.0];
    let as_written = 3 * MB as i64;
    let rows: Vec<WalWhatIfRow> = ["off", "pglz", "lz4", "zstd"]
        .iter()
        .enumerate()
        .map(|(i, s)| whatif(s, as_written - (per_image[i] * 30.0 * if i == 2 { 1.01 } else { 1.0 }) as i64, 0.0))
        .collect();
    let pieces = pieces::pieces_of_part(&rows, as_written, &chunks, log);
    assert_eq!(pieces.len(), 3);
    // scaled from 5 sampled images to 10; the unsampled piece at the part's 6,000 an image
    assert_eq!(pieces[0].saved[1], 20_000.0);
    assert_eq!(pieces[2].saved[2], 60_000.0 * 1.01);
    for (i, row) in rows.iter().enumerate() {
        let sum: f64 = pieces.iter().map(|p| p.saved[i]).sum();
        assert!((sum - (as_written - row.wal_bytes) as f64).abs() < 1e-6, "{i}: {sum}");
    }
    // the parts as one read
    let both = pieces::combine_rows(&[rows.clone(), rows.clone()], 0, 6 * MB);
    assert_eq!((both[2].wal_bytes, both[2].fpi_images), (2 * rows[2].wal_bytes, 1000));
    assert_eq!((both[0].start_lsn.as_str(), both[0].end_lsn.as_str()), ("0/0", "0/600000"));
    assert!(
        (both[2].saving_percent
            - rows[2].saving_percent * 0.0
            - 100.0 * (1.0 - rows[2].wal_bytes as f64 / rows[0].wal_bytes as f64))
            .abs()
            < 1e-9
    );
}

#[test]
fn a_bulk_load_is_set_apart_and_the_advice_is_on_the_steady_rate() {
    // 300 MB of rows in one transaction over 20 s, then 40 s of a steady workload: 20 pieces
    // of 1 MB, 120 images each saving ~7 kB (about 80% of the WAL)
    let saved = [6_900.0, 6_800.0, 7_100.0];
    let bulk = load(0, 300, 0, 20.0);
    let after: Vec<Piece> = (0..20u64)
        .flat_map(|i| {
            let lz4 = saved[1] + (i % 3) as f64 * 100.0 - 100.0;
            steady(300 * MB + i * MB, 1, 20 * S + 2 * i as i64 * S, 2.0, 120, [saved[0], lz4, saved[2]])
        })
        .collect();
    let read: Vec<Piece> = bulk.iter().chain(&after).cloned().collect();
    let now = 20 * S + 40 * S;
    let split = pieces::split(&read, Some((read.last().unwrap().end, now)));
    assert_eq!(split.loads.len(), 1);
    let only = &split.loads[0];
    assert!((only.start, only.end) == (0, 300 * MB) && (only.seconds - 20.0).abs() < 1e-6, "{only:?}");
    assert!((split.steady_seconds() - 40.0).abs() < 1e-6);
    assert_eq!(split.steady_ranges(&read), vec![(300 * MB, 320 * MB)]);
    // the whole read, as the old rule took it: the load dilutes the saving below 5%
    assert!(truth(&read, LZ4) < 5.0, "{}", truth(&read, LZ4));
    let row = from_whatif(&rows_for(&read), &read, "off", pg_wal(now), None);
    let alone = from_whatif(&rows_for(&after), &after, "off", pg_wal(now), None);
    assert_eq!((row.recommended.as_str(), alone.recommended.as_str()), ("lz4", "lz4"));
    assert_eq!((row.bytes_now, row.bytes_recommended), (alone.bytes_now, alone.bytes_recommended));
    assert_eq!(row.bytes_now, Some(20 * MB as i64));
    assert!((row.observed_period.unwrap() - 40.0).abs() < 1e-6);
    // the saving is the steady WAL's, within its interval
    let (saving, low, high) = saving_and_interval(&row);
    assert!((saving - truth(&after, LZ4)).abs() < 1e-3, "{saving}");
    assert!(low <= saving && saving <= high && low < high, "{low} {saving} {high}");
    assert!(
        row.basis.contains("set apart as a one-off load (16 MB or more written by few transactions or at 10 times the steady rate, mostly rows and whole pages): 300 MB at 0/0..0/12C00000 over 20 s; the advice is on the steady WAL"),
        "{}",
        row.basis
    );
    assert!(row.basis.contains("the period is the steady WAL read's own, 0/12C00000..0/14000000: 20 MB written and 2400 full-page images over 40 s"), "{}", row.basis);
    // every setting's saving with its interval, in the note
    assert!(row.note.contains("lz4 77.8% (95% interval "), "{}", row.note);
    assert!(!alone.basis.contains("one-off load"), "{}", alone.basis);
    assert_eq!(row.confidence, Confidence::Low, "two minutes to a day");
}

#[test]
fn four_calls_during_a_steady_run_after_a_load_pick_the_same_within_their_intervals() {
    // the load, then calls 30 s apart as the steady run goes on; images vary by piece (a
    // checkpoint's burst first, then fewer)
    let bulk = load(0, 300, 0, 20.0);
    let mut run: Vec<Piece> = Vec::new();
    let mut picks = Vec::new();
    for call in 1..=4u64 {
        while run.len() < (call * 15) as usize {
            let i = run.len() as u64;
            let images = if i % 30 < 10 { 120 } else { 30 + (i * 7) % 20 };
            let per = 6_500.0 + ((i * 13) % 7) as f64 * 100.0;
            run.extend(steady(
                300 * MB + i * MB,
                1,
                20 * S + (i * 2) as i64 * S,
                2.0,
                images,
                [per - 100.0, per, per + 300.0],
            ));
        }
        let read: Vec<Piece> = bulk.iter().chain(&run).cloned().collect();
        let now = 20 * S + (run.len() * 2) as i64 * S;
        let row = from_whatif(&rows_for(&read), &read, "off", pg_wal(now), None);
        let (saving, low, high) = saving_and_interval(&row);
        let steady_truth = truth(&run, LZ4);
        assert!((saving - steady_truth).abs() < 1e-3, "call {call}: {saving} against {steady_truth}");
        assert!(low <= steady_truth && steady_truth <= high && low < high, "call {call}: {low} {steady_truth} {high}");
        picks.push(row.recommended);
    }
    assert!(picks.iter().all(|p| p == "lz4"), "{picks:?}");
}

#[test]
fn a_load_in_the_middle_leaves_the_steady_wal_on_both_sides() {
    let saved = [6_900.0, 6_800.0, 7_100.0];
    let before = steady(0, 30, 0, 2.0, 100, saved);
    let bulk = load(30 * MB, 100, 60 * S, 10.0);
    let after = steady(130 * MB, 30, 70 * S, 2.0, 100, saved);
    let read: Vec<Piece> = before.iter().chain(&bulk).chain(&after).cloned().collect();
    let now = 130 * S;
    let split = pieces::split(&read, Some((read.last().unwrap().end, now)));
    assert_eq!(split.loads.len(), 1);
    assert_eq!(split.steady_ranges(&read), vec![(0, 30 * MB), (130 * MB, 160 * MB)]);
    assert!((split.steady_seconds() - 120.0).abs() < 1e-6, "{}", split.steady_seconds());
    let row = from_whatif(&rows_for(&read), &read, "off", pg_wal(now), None);
    assert_eq!(row.bytes_now, Some(60 * MB as i64));
    assert!(row.basis.contains("own, 0/0..0/1E00000, 0/8200000..0/A000000: 60 MB"), "{}", row.basis);
}

#[test]
fn a_load_of_many_commits_at_ten_times_the_rate_is_a_load_and_bursts_of_images_are_not() {
    let saved = [6_900.0, 6_800.0, 7_100.0];
    // a checkpoint every 60 s: 10 pieces of images written in 10 s, then 10 pieces of few
    // images in 50 s; the rows and records besides the images come at a steady rate
    let mut read = Vec::new();
    for cycle in 0..4u64 {
        let base = cycle * 20;
        let t = (cycle * 60) as i64 * S;
        let mut burst = steady(base * MB, 10, t, 1.0, 120, saved);
        burst.iter_mut().for_each(|p| p.load_bytes = 20_000);
        let mut quiet = steady((base + 10) * MB, 10, t + 10 * S, 5.0, 10, saved);
        quiet.iter_mut().for_each(|p| p.load_bytes = 100_000);
        read.extend(burst);
        read.extend(quiet);
    }
    let end = Some((read.last().unwrap().end, 240 * S));
    assert!(pieces::split(&read, end).loads.is_empty(), "a checkpoint's burst is the workload");
    // then an application loads 40 MB in transactions of 20 kB, at 30 MB/s
    let mut loaded = read.clone();
    let mut batch = steady(80 * MB, 40, 240 * S, 1.0 / 30.0, 0, saved);
    batch.iter_mut().for_each(|p| p.load_bytes = MB);
    loaded.extend(batch);
    let split = pieces::split(&loaded, Some((loaded.last().unwrap().end, 240 * S + 4 * S / 3)));
    assert_eq!(split.loads.len(), 1, "{:?}", split.loads);
    assert_eq!((split.loads[0].start, split.loads[0].end), (80 * MB, 120 * MB));
    // a run of a few MB in one transaction is the workload's: under 16 MB
    let mut small = read.clone();
    small.extend(load(80 * MB, LOAD_MIN_BYTES / MB - 1, 241 * S, 1.0));
    assert!(pieces::split(&small, None).loads.is_empty());
}

#[test]
fn an_idle_hour_is_not_a_steady_rate_that_makes_the_workload_a_load() {
    let saved = [6_900.0, 6_800.0, 7_100.0];
    let mut read = steady(0, 20, 0, 2.0, 50, saved);
    // one piece spanning an idle hour
    read.extend(steady(20 * MB, 1, 40 * S, 3600.0, 50, saved));
    read.extend(steady(21 * MB, 20, 3640 * S, 2.0, 50, saved));
    let split = pieces::split(&read, Some((read.last().unwrap().end, 3680 * S)));
    assert!(split.loads.is_empty(), "{:?}", split.loads);
    assert!((split.steady_seconds() - 3680.0).abs() < 1e-6);
}

#[test]
fn a_read_that_is_all_load_is_advised_on_and_says_so() {
    let mut bulk = load(0, 40, 0, 10.0);
    // an index build: pages written whole, which compress
    bulk.iter_mut().skip(30).for_each(|p| {
        p.images = 100;
        p.sampled = 100;
        p.saved = vec![0.0, 5_000.0 * 100.0, 5_000.0 * 100.0, 5_500.0 * 100.0];
    });
    let row = from_whatif(&rows_for(&bulk), &bulk, "off", pg_wal(10 * S), None);
    assert_eq!(row.confidence, Confidence::Low);
    assert!(row.basis.contains("the WAL read is all one-off load"), "{}", row.basis);
    assert_eq!(row.bytes_now, Some(40 * MB as i64));
}

#[test]
fn keeping_off_has_the_interval_of_the_setting_turned_down() {
    // random data: images save 3% of the WAL, varying by piece
    let mut read = Vec::new();
    for i in 0..40u64 {
        let per = 150.0 + (i % 5) as f64 * 40.0;
        read.extend(steady(i * MB, 1, (i * 2) as i64 * S, 2.0, 120, [per * 0.9, per, per * 1.1]));
    }
    let row = from_whatif(&rows_for(&read), &read, "off", pg_wal(80 * S), None);
    assert_eq!(row.recommended, "off");
    assert!(row.note.starts_with("keep: no setting saves 5% of WAL (best 2.9%)"), "{}", row.note);
    // the decision's interval: zstd's, which the rule turned down, not off's point
    assert!(row.note.contains("zstd 2.9% (95% interval "), "{}", row.note);
    assert!(row.basis.contains("under zstd, the best setting turned down (95% interval "), "{}", row.basis);
    assert!(!row.basis.contains("under off (95% interval"), "{}", row.basis);
    // off kept: its bytes are counted, not estimated
    assert_eq!((row.bytes_recommended_low, row.bytes_recommended_high), (row.bytes_now, row.bytes_now));
}

/// 10 pieces of 100 images, each saving 3,900, 4,000 and 4,600 bytes under pglz, lz4 and zstd,
/// with one record's time only (an archive's few commits).
fn read_with_one_time() -> Vec<Piece> {
    let mut read = steady(0, 10, 0, 1.0, 100, [3_900.0, 4_000.0, 4_600.0]);
    read.iter_mut().for_each(|p| (p.stamps, p.first_stamp, p.last_stamp) = (0, None, None));
    read[3].stamps = 1;
    read[3].first_stamp = Some((3 * MB, 5));
    read[3].last_stamp = read[3].first_stamp;
    read
}

#[test]
fn without_times_the_read_uses_pg_stat_wals_period_and_its_images() {
    // one record's time only: the period's figures stand for it
    let read = read_with_one_time();
    let (written, images) = stats(6.4e9, 100_000.0, 86400.0);
    let period = WalPeriod::Archive { statistics: WalStatistics { written, images, image_bytes: None } };
    let steady_day = Inserted { rows: 1000.0, held: 1_000_000.0 };
    // no piece is steady by its times: the pieces all have too few commits, but are images
    let row = from_whatif(&rows_for(&read), &read, "off", period, Some(steady_day));
    assert_eq!(row.recommended, "lz4");
    assert_eq!((row.bytes_now, row.observed_period), (Some(6_400_000_000), Some(86400.0)));
    assert_eq!(row.bytes_recommended, Some(6_400_000_000 - 100_000 * 4_000));
    assert!(row.basis.contains("the WAL read carries fewer than two times to span a period: bytes over the period from pg_stat_wal: 6104 MB written and 100000 full-page images over 24.0 h"), "{}", row.basis);
    // 10 MB read of 6.4 GB: a step lower
    assert!(row.basis.contains("the WAL read is 0.16% of the period's"), "{}", row.basis);
    // the rows inserted, over pg_stat_wal's period or not counted
    let loaded = from_whatif(
        &rows_for(&read),
        &read,
        "off",
        WalPeriod::Archive {
            statistics: WalStatistics { written: Rate { seconds: 25200.0, ..written }, images, image_bytes: None },
        },
        Some(Inserted { rows: 1e6, held: 1e6 }),
    );
    assert!(loaded.basis.contains("the period is dominated by a bulk load"), "{}", loaded.basis);
    assert_eq!(loaded.confidence, Confidence::Low);
    let other = from_whatif(&rows_for(&read), &read, "off", period, None);
    assert!(other.basis.contains("a bulk load is not judged from rows inserted: pg_stat_database's counters cover another period than pg_stat_wal's"), "{}", other.basis);
}

#[test]
fn pg19s_image_bytes_count_the_periods_images() {
    // pg_stat_wal counts 100,000 images over the day, but 19's wal_fpi_bytes 1.2 GB of them as
    // written: at the read's 8,000 bytes an image, 150,000 images of the read's kind
    let read = read_with_one_time();
    let mut rows = rows_for(&read);
    rows.iter_mut().for_each(|r| r.fpi_bytes = r.fpi_images * 8_000);
    let (written, images) = stats(6.4e9, 100_000.0, 86400.0);
    let with_bytes = WalStatistics { written, images, image_bytes: Some(1.2e9) };
    let row = from_whatif(&rows, &read, "off", WalPeriod::Archive { statistics: with_bytes }, None);
    assert_eq!(row.bytes_recommended, Some(6_400_000_000 - 150_000 * 4_000));
    assert!(
        row.basis.contains(
            "150000 full-page images over 24.0 h; the images from pg_stat_wal's wal_fpi_bytes: 1144 MB of full-page \
             images as written, at the WAL read's 8000 bytes an image"
        ),
        "{}",
        row.basis
    );
    // before 19 (no wal_fpi_bytes), or with none counted: pg_stat_wal's count of images
    for image_bytes in [None, Some(0.0)] {
        let statistics = WalStatistics { image_bytes, ..with_bytes };
        let row = from_whatif(&rows, &read, "off", WalPeriod::Archive { statistics }, None);
        assert_eq!(row.bytes_recommended, Some(6_400_000_000 - 100_000 * 4_000));
        assert!(!row.basis.contains("wal_fpi_bytes"), "{}", row.basis);
    }
}

#[test]
fn from_whatif_scales_to_a_day_and_prices_per_gb() {
    // a day of steady WAL: 64 pieces, each 1 MB over 1350 s, 10 images saving 40 kB under lz4
    let read = steady(0, 64, 0, 1350.0, 10, [40_000.0, 40_000.0, 42_000.0]);
    let row = from_whatif(&rows_for(&read), &read, "off", pg_wal(86400 * S), None);
    assert_eq!(row.recommended, "lz4");
    assert!((row.observed_period.unwrap() - 86400.0).abs() < 1e-6);
    assert_eq!((row.bytes_now, row.bytes_per_day_now), (Some(64 * MB as i64), Some(64 * MB as i64)));
    assert_eq!(row.bytes_recommended, Some(64 * MB as i64 - 640 * 40_000));
    assert_eq!(
        row.apply_sql.as_deref(),
        Some("ALTER SYSTEM SET wal_compression = 'lz4';\nSELECT pg_catalog.pg_reload_conf();")
    );
    // 0.5 CPU seconds over the 64 MB read, per GiB of WAL and per day
    let per_gb = row.compress_cpu_seconds_per_gb.unwrap();
    assert!((per_gb - 0.5 / (64.0 * MB as f64 / GB)).abs() < 1e-9);
    assert!((row.compress_cpu_seconds_per_day.unwrap() - 0.5).abs() < 1e-6);
    assert_eq!(row.confidence, Confidence::Medium, "{}", row.basis);
    assert_eq!(row.target, "wal_compression (cluster-wide)");
    assert!(
        row.basis.starts_with(
            "the cluster's WAL (every database's) 0/0..0/4000000, the newest, read back from 0/4000000: 64 MB as \
             written (wal_compression = off now), 64 MB with every image uncompressed ("
        ),
        "{}",
        row.basis
    );
    // kept: no statement and no CPU figures
    let mut lz4_rows = rows_for(&read);
    lz4_rows[0].wal_bytes += 640 * 40_000;
    let kept = from_whatif(&lz4_rows, &read, "lz4", pg_wal(86400 * S), None);
    assert!(kept.apply_sql.is_none() && kept.note.starts_with("keep: "), "{}", kept.note);
    assert_eq!(kept.compress_cpu_seconds_per_gb, None);
}

/// Pieces of the WAL read where an image saves `per_image[i]` bytes under lz4 (index 2 of
/// off, pglz, lz4, zstd), `images` images each.
fn pieces(images: u64, per_image: &[i64]) -> Vec<ChunkSavings> {
    per_image
        .iter()
        .map(|&s| ChunkSavings {
            index: 0,
            images,
            saved: vec![0, s * images as i64, s * images as i64, s * images as i64],
        })
        .collect()
}

#[test]
fn the_interval_comes_from_how_the_pieces_vary() {
    assert_eq!(saved_per_image(&[], 2, 0.0), None);
    assert_eq!(saved_per_image(&pieces(10, &[4000]), 2, 0.0), Some((4000.0, None)), "one piece: no spread");
    // the same saving in every piece: no width
    assert_eq!(saved_per_image(&pieces(10, &[4000, 4000, 4000]), 2, 0.0), Some((4000.0, Some(0.0))));
    // 3,000 and 5,000 with 10 images each: ratio 4,000; residuals ±10,000 over a mean of 10
    // images, so a variance of (1 + 1) / (2 * 1) = 1,000,000 and a half-width of 1.96 * 1,000
    let (ratio, half) = saved_per_image(&pieces(10, &[3000, 5000]), 2, 0.0).unwrap();
    assert_eq!(ratio, 4000.0);
    assert!((half.unwrap() - 1960.0).abs() < 1e-9, "{half:?}");
    // every image of the period compressed: nothing left to estimate
    assert_eq!(saved_per_image(&pieces(10, &[3000, 5000]), 2, 1.0).unwrap().1, Some(0.0));
    // a quarter of the period's images sampled: the variance times 3/4
    let quarter = saved_per_image(&pieces(10, &[3000, 5000]), 2, 0.25).unwrap().1.unwrap();
    assert!((quarter - 1960.0 * 0.75f64.sqrt()).abs() < 1e-9);
}

#[test]
fn the_intervals_cover_the_periods_saving_in_at_least_93_of_200_seeds() {
    // a period of 2,000 pieces whose images save 4,000 bytes each on average, varying by
    // piece (a gamma-like spread, pieces of 5 to 40 images); each seed reads 100 pieces at random
    let mut covered = 0;
    for seed in 0..200u64 {
        let mut rng = crate::rng::SeededRng::new(1000 + seed);
        let population: Vec<ChunkSavings> = (0..2000)
            .map(|_| {
                let images = 5 + rng.below(36);
                let each = 2000 + rng.below(2000) as i64 + (rng.below(4000) as i64) * (rng.below(2) as i64);
                ChunkSavings { index: 0, images, saved: vec![0, 0, each * images as i64, 0] }
            })
            .collect();
        let truth = saved_per_image(&population, 2, 1.0).unwrap().0;
        let mut order: Vec<usize> = (0..population.len()).collect();
        for i in 0..100 {
            let j = i + rng.below((order.len() - i) as u64) as usize;
            order.swap(i, j);
        }
        let read: Vec<ChunkSavings> = order[..100].iter().map(|&i| population[i].clone()).collect();
        let share =
            read.iter().map(|c| c.images).sum::<u64>() as f64 / population.iter().map(|c| c.images).sum::<u64>() as f64;
        let (ratio, half) = saved_per_image(&read, 2, share).unwrap();
        let half = half.unwrap();
        assert!(half > 0.0);
        if (ratio - truth).abs() <= half {
            covered += 1;
        }
    }
    assert!(covered >= 186, "{covered} of 200 covered");
}

#[test]
fn a_pick_within_the_noise_is_low() {
    // lz4 saving 5.0% of the WAL, give or take: off at one end of its interval
    let mut read = Vec::new();
    for (i, per) in [200.0, 440.0, 200.0, 440.0, 320.0, 320.0, 200.0, 440.0, 320.0, 320.0].iter().enumerate() {
        read.extend(steady(i as u64 * MB, 1, i as i64 * S, 1.0, 160, [per * 31.0 / 32.0, *per, per * 33.0 / 32.0]));
    }
    let noisy = from_whatif(&rows_for(&read), &read, "off", pg_wal(10 * S), None);
    assert_eq!(noisy.recommended, "lz4", "5.0%: on the threshold; {}", noisy.note);
    assert_eq!(noisy.confidence, Confidence::Low);
    assert!(noisy.basis.contains("the pick is within the noise"), "{}", noisy.basis);
}
