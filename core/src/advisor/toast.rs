//! A column's `toast` row: the stored bytes of its sampled values under pglz and lz4 (each row
//! toasted anew, `scenarios::toast::stored_per_row`), scaled to the table, priced in CPU at the
//! speeds measured on the same values and the rates `pg_stat_user_tables` observed.

use super::words::{period, seconds_per_gb, size, Rate, GB};
use super::{choose_toast, confidence, saving_percent, AdviceRow};
use crate::rewrite;
use crate::scenarios::toast::{ToastRow, TOAST_TUPLE_THRESHOLD};
use crate::sql_text::string_literal;

/// What a column's measurement gets through a second: each sampled byte is detoasted, toasted
/// anew under pglz and lz4, and timed ([`crate::scenarios::toast::estimate`]) three times
/// each way; pglz compressing text at about 100 MB/s makes it about 15 MB/s, taken lower.
pub const SAMPLE_BYTES_PER_SECOND: f64 = 10e6;
/// At most this many bytes of a column's values are held at once, whatever the budget.
pub const SAMPLE_MEMORY_BYTES: usize = 64 << 20;

/// The bytes of values a column's sample may hold with `seconds_left` of the budget: what the
/// measurement gets through in that time, at most [`SAMPLE_MEMORY_BYTES`]. A value that does
/// not fit in what is left ends the sample; a column whose first value does not fit is skipped.
pub fn sample_byte_cap(seconds_left: f64) -> usize {
    ((seconds_left.max(0.0) * SAMPLE_BYTES_PER_SECOND) as usize).min(SAMPLE_MEMORY_BYTES)
}

/// A column storing fewer bytes than this (1 MiB) is folded with the others like it into one
/// row unless `advise(..., verbose => true)`: whatever its method, it saves a few hundred
/// kilobytes at most, and a database of many small tables would otherwise bury the columns that
/// matter under rows of them.
pub const SMALL_COLUMN_BYTES: i64 = 1 << 20;
/// The summary row names at most this many of the columns it folds.
const FOLDED_NAMES: usize = 20;

/// `rows` with the `toast` rows of columns storing under [`SMALL_COLUMN_BYTES`] folded into one
/// summary row (where the first of them was), and how many were folded: none when fewer than
/// two are small (one keeps its own row and name). The summary sums their bytes and CPU per
/// day, has no statement (each column's is in its own row with `verbose`) and the lowest of
/// their confidences. Columns without totals (no statistics) keep their rows.
pub fn fold_small_columns(rows: Vec<AdviceRow>) -> (Vec<AdviceRow>, usize) {
    let small = |r: &AdviceRow| r.area == "toast" && r.bytes_now.is_some_and(|b| b < SMALL_COLUMN_BYTES);
    if rows.iter().filter(|r| small(r)).count() < 2 {
        return (rows, 0);
    }
    let Some(at) = rows.iter().position(small) else { return (rows, 0) };
    let (folded, mut kept): (Vec<AdviceRow>, Vec<AdviceRow>) = rows.into_iter().partition(small);
    let n = folded.len();
    let sum = |f: fn(&AdviceRow) -> Option<i64>| folded.iter().filter_map(f).sum::<i64>();
    let (now, then) = (sum(|r| r.bytes_now), sum(|r| r.bytes_recommended));
    let cpu = |f: fn(&AdviceRow) -> Option<f64>| {
        folded.iter().filter_map(f).fold(None, |total: Option<f64>, s| Some(total.unwrap_or(0.0) + s))
    };
    let counts = |f: fn(&AdviceRow) -> &str| {
        let mut counts: Vec<(&str, usize)> = Vec::new();
        for row in &folded {
            let name = f(row).split(';').next().unwrap_or_default();
            match counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => counts.push((name, 1)),
            }
        }
        counts.iter().map(|(name, count)| format!("{name} {count}")).collect::<Vec<_>>().join(", ")
    };
    let confidence = ["low", "medium", "high"]
        .into_iter()
        .find(|level| folded.iter().any(|r| r.confidence == *level))
        .unwrap_or("low");
    let mut names: Vec<&str> = folded.iter().take(FOLDED_NAMES).map(|r| r.target.as_str()).collect();
    let more = format!("and {} more", n.saturating_sub(FOLDED_NAMES));
    if n > FOLDED_NAMES {
        names.push(&more);
    }
    let summary = AdviceRow {
        area: "toast".into(),
        target: format!("{n} columns under 1 MB each"),
        current: counts(|r| r.current.as_str()),
        recommended: counts(|r| r.recommended.as_str()),
        bytes_now: Some(now),
        bytes_recommended: Some(then),
        saving_percent: saving_percent(now, then),
        compress_cpu_seconds_per_day: cpu(|r| r.compress_cpu_seconds_per_day),
        decompress_cpu_seconds_per_day: cpu(|r| r.decompress_cpu_seconds_per_day),
        basis: format!("each column measured as its own row would be: {}", names.join(", ")),
        confidence: confidence.into(),
        apply_sql: None,
        note: format!(
            "{n} columns storing under 1 MB each, {} together: too small for their compression to matter. \
             compresslab.advise(..., verbose => true) gives each its own row, with its statement.",
            size(now as f64)
        ),
        ..AdviceRow::default()
    };
    kept.insert(at.min(kept.len()), summary);
    (kept, n)
}

/// What `advise()` measured of one column.
#[derive(Debug, Clone)]
pub struct ColumnMeasurement<'a> {
    /// `schema.table.column`; the table and the column as SQL names (quoted as needed).
    pub target: &'a str,
    pub table_name: &'a str,
    pub column: &'a str,
    /// The table as a `regclass` literal (`'schema.table'`, quoted as the server's `regclass`
    /// input reads it) and the column's name as it is: `recompress`'s arguments.
    pub table_literal: &'a str,
    pub column_name: &'a str,
    /// The column's compression, empty for `default_toast_compression`, and that setting.
    pub configured: &'a str,
    pub default_method: &'a str,
    /// How each sampled value is stored now: its method (None: uncompressed) and `pg_column_size`.
    pub now: &'a [(Option<String>, usize)],
    /// The sample's raw bytes and speeds under pglz and lz4 (the server's routines), unscaled.
    pub pglz: &'a ToastRow,
    pub lz4: &'a ToastRow,
    /// The sample's stored bytes under pglz and lz4, each row toasted anew.
    pub pglz_bytes: i64,
    pub lz4_bytes: i64,
    /// The table's rows by its statistics; None when it has none and the sample may not be all.
    pub table_rows: Option<f64>,
    /// Rows written and read since the statistics were reset.
    pub written: Rate,
    pub read: Rate,
    /// A partitioned table's partitions (`schema.table`, quoted as needed), empty for a plain
    /// table: its values are sampled across them and each gets the statement.
    pub partitions: &'a [String],
    /// Why the sample stopped short of its count (the byte cap or the deadline), if it did.
    pub partial: Option<&'a str>,
}

/// The row of one column.
pub fn column_row(m: &ColumnMeasurement) -> AdviceRow {
    let sampled = m.now.len();
    let raw = m.pglz.raw_bytes;
    let scale = m.table_rows.map(|rows| if rows > sampled as f64 { rows / sampled as f64 } else { 1.0 });
    let scaled = |bytes: i64| scale.map(|k| (bytes as f64 * k).round() as i64);
    let decision = choose_toast(raw, m.pglz_bytes, m.lz4_bytes);
    let configured = if m.configured.is_empty() { m.default_method } else { m.configured };
    let current = if m.configured.is_empty() {
        format!("{configured} (default_toast_compression)")
    } else {
        configured.to_string()
    };
    let recommended =
        if decision.recommended.is_empty() { configured.to_string() } else { decision.recommended.clone() };
    let keep = recommended == configured;
    let stored_now: i64 = m.now.iter().map(|(_, size)| *size as i64).sum();
    let stored_then = match recommended.as_str() {
        _ if decision.recommended.is_empty() => stored_now,
        "pglz" => m.pglz_bytes,
        _ => m.lz4_bytes,
    };
    let chosen = if recommended == "pglz" { m.pglz } else { m.lz4 };
    let avg_raw = if sampled > 0 { raw as f64 / sampled as f64 } else { 0.0 };
    let gb_per_day = |rate: Rate| rate.per_day().map(|rows| rows * avg_raw / GB);
    let (compress_per_gb, decompress_per_gb) = if keep {
        (None, None)
    } else {
        (seconds_per_gb(chosen.compress_mbps), seconds_per_gb(chosen.decompress_mbps))
    };
    let mut mix: Vec<(String, usize)> = Vec::new();
    for (method, _) in m.now {
        let name = method.clone().unwrap_or_else(|| "uncompressed".into());
        match mix.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => mix.push((name, 1)),
        }
    }
    let mix: Vec<String> = mix.iter().map(|(method, count)| format!("{method} {count}")).collect();
    let rows_in_words = match m.table_rows {
        Some(rows) => format!("of about {:.0}", rows.max(sampled as f64)),
        None => "(the table has no statistics: ANALYZE it for totals)".into(),
    } + &if m.partitions.is_empty() {
        String::new()
    } else {
        format!(" across its {} partitions", m.partitions.len())
    };
    AdviceRow {
        area: "toast".into(),
        target: m.target.into(),
        current: format!("{current}; stored values sampled: {}", mix.join(", ")),
        recommended: recommended.clone(),
        bytes_now: scaled(stored_now),
        bytes_recommended: scaled(stored_then),
        saving_percent: saving_percent(stored_now, stored_then),
        compress_cpu_seconds_per_day: gb_per_day(m.written).zip(compress_per_gb).map(|(gb, s)| gb * s),
        decompress_cpu_seconds_per_day: gb_per_day(m.read).zip(decompress_per_gb).map(|(gb, s)| gb * s),
        compress_cpu_seconds_per_gb: compress_per_gb,
        decompress_cpu_seconds_per_gb: decompress_per_gb,
        basis: format!(
            "{sampled} values sampled {rows_in_words} ({} raw), each row toasted anew under pglz and lz4 with the \
             server's routines: pglz would store {} bytes, lz4 {} bytes; per day from pg_stat_user_tables: {:.0} rows written, {:.0} read (each read counted as \
             detoasting the value) over {}",
            size(raw as f64),
            scaled(m.pglz_bytes).map_or_else(|| "?".into(), |b| b.to_string()),
            scaled(m.lz4_bytes).map_or_else(|| "?".into(), |b| b.to_string()),
            m.written.amount,
            m.read.amount,
            period(m.written.seconds)
        ) + &m.partial.map_or_else(String::new, |why| format!("; partially sampled: {why}")),
        confidence: if m.partial.is_some() { "low" } else { confidence(sampled as u64, m.written.seconds) }.into(),
        // SET COMPRESSION on a partitioned table does not reach its partitions (PostgreSQL 15
        // sets the parent's only, which new partitions inherit): one statement for each, each
        // under a lock_timeout; then the CALL that rewrites the existing values.
        apply_sql: (!keep).then(|| {
            std::iter::once(m.table_name)
                .chain(m.partitions.iter().map(String::as_str))
                .map(|table| {
                    format!(
                        "SET lock_timeout = '1s'; ALTER TABLE {table} ALTER COLUMN {} SET COMPRESSION {recommended};",
                        m.column
                    )
                })
                .chain(std::iter::once(format!(
                    "CALL compresslab.recompress({}, {}, '{recommended}');",
                    m.table_literal,
                    string_literal(m.column_name)
                )))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        note: if keep {
            format!("keep: {}.", decision.reason)
        } else {
            let (rows, cost) = rewrite_cost(m, &recommended, scaled(stored_then));
            format!(
                "{}. Each ALTER TABLE takes an ACCESS EXCLUSIVE lock{}: lock_timeout makes it give up after 1 s \
                 instead of queueing behind a long query and blocking every reader of the table meanwhile; on \
                 55P03 (lock_not_available) run the line again. SET COMPRESSION applies to values written from \
                 then on: VACUUM FULL, CLUSTER, table rewrites, INSERT ... SELECT and UPDATEs that keep the value \
                 all keep the old method (tested by compresslab). The CALL rewrites the existing values online, in \
                 batches that each commit (row locks only; resumable): {rows}{cost}; dead row versions stay until \
                 VACUUM. A dump and restore would rewrite about {} here.",
                decision.reason,
                if m.partitions.is_empty() { "" } else { " on its table only (partitions get their own)" },
                scaled(stored_now).map_or_else(|| "the whole column".into(), |b| size(b as f64))
            )
        },
        // a column's bytes are a total: no period, nothing per day
        observed_period: None,
        bytes_per_day_now: None,
        bytes_per_day_recommended: None,
    }
}

/// What the CALL of a column's advice rewrites and costs, in words: the values sampled that a
/// new write would store differently (compressed with another method, or stored raw and large),
/// scaled to the table, and the WAL and time [`rewrite::estimate`] gives for them.
fn rewrite_cost(m: &ColumnMeasurement, recommended: &str, bytes_then: Option<i64>) -> (String, String) {
    let sampled = m.now.len().max(1) as f64;
    let moved = m
        .now
        .iter()
        .filter(|(method, size)| match method {
            Some(method) => method != recommended,
            None => *size > TOAST_TUPLE_THRESHOLD / 2,
        })
        .count() as f64;
    let share = moved / sampled;
    match (m.table_rows, bytes_then) {
        (Some(rows), Some(bytes)) => {
            let rows = (rows.max(sampled) * share).round();
            let e = rewrite::estimate(rows, bytes as f64 * share, None);
            (
                format!("about {rows:.0} values to rewrite"),
                format!(
                    ", writing about {} of WAL (their new values, and each row's records) in about {} at full \
                     speed (max_wal_rate => '20 MB/s' spreads it)",
                    size(e.wal_bytes),
                    period(e.seconds.max(1.0))
                ),
            )
        }
        _ => (format!("{:.0}% of the values sampled to rewrite", share * 100.0), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    fn measured<'a>(
        now: &'a [(Option<String>, usize)],
        pglz: &'a ToastRow,
        lz4: &'a ToastRow,
    ) -> ColumnMeasurement<'a> {
        ColumnMeasurement {
            target: "public.t.c",
            table_name: "public.t",
            column: "c",
            table_literal: "'public.t'",
            column_name: "c",
            configured: "",
            default_method: "pglz",
            now,
            pglz,
            lz4,
            pglz_bytes: 800_000,
            lz4_bytes: 620_000,
            table_rows: Some(1000.0),
            written: Rate { amount: 86400.0, seconds: 86400.0 },
            read: Rate { amount: 0.0, seconds: 86400.0 },
            partitions: &[],
            partial: None,
        }
    }

    #[test]
    fn values_pglz_refuses_and_lz4_compresses_move_to_lz4() {
        // 100 values of 8,000 bytes stored raw under pglz; lz4 stores 22.5% less
        let now = vec![(None, 8000); 100];
        let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
        let row = column_row(&measured(&now, &pglz, &lz4));
        assert_eq!(row.recommended, "lz4");
        assert_eq!(row.bytes_now, Some(8_000_000), "scaled by 1,000 rows / 100 sampled");
        assert_eq!(row.bytes_recommended, Some(6_200_000));
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
        assert!(row.note.contains("about 1000 values to rewrite, writing about "), "{}", row.note);
        assert!(row.current.starts_with("pglz (default_toast_compression); stored values sampled: uncompressed 100"));
        // CPU per GiB at 500 MB/s: 2^30 / 5e8 s
        assert!((row.compress_cpu_seconds_per_gb.unwrap() - GB / 5e8).abs() < 1e-9);
        // one row of 8,000 bytes written a second
        assert!((row.compress_cpu_seconds_per_day.unwrap() - 86400.0 * 8000.0 / 5e8).abs() < 1e-6);
    }

    #[test]
    fn without_statistics_there_are_no_totals() {
        let now = vec![(None, 8000); 100];
        let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
        let row = column_row(&ColumnMeasurement { table_rows: None, ..measured(&now, &pglz, &lz4) });
        assert_eq!((row.bytes_now, row.bytes_recommended), (None, None));
        assert!(row.basis.contains("ANALYZE"), "{}", row.basis);
        assert!((row.saving_percent - 22.5).abs() < 1e-9, "the sample still says how much");
    }

    #[test]
    fn a_partitioned_table_is_one_row_with_a_statement_per_partition() {
        let now = vec![(None, 8000); 100];
        let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
        let partitions = ["public.t_2024".to_string(), "public.t_2025".to_string()];
        let row = column_row(&ColumnMeasurement { partitions: &partitions, ..measured(&now, &pglz, &lz4) });
        assert_eq!(
            row.apply_sql.as_deref(),
            Some(
                "SET lock_timeout = '1s'; ALTER TABLE public.t ALTER COLUMN c SET COMPRESSION lz4;\n\
                 SET lock_timeout = '1s'; ALTER TABLE public.t_2024 ALTER COLUMN c SET COMPRESSION lz4;\n\
                 SET lock_timeout = '1s'; ALTER TABLE public.t_2025 ALTER COLUMN c SET COMPRESSION lz4;\n\
                 CALL compresslab.recompress('public.t', 'c', 'lz4');"
            )
        );
        assert!(row.basis.starts_with("100 values sampled of about 1000 across its 2 partitions ("), "{}", row.basis);
    }

    #[test]
    fn the_byte_cap_follows_the_time_left_up_to_the_memory_cap() {
        assert_eq!(sample_byte_cap(0.5), 5_000_000);
        assert_eq!(sample_byte_cap(-1.0), 0);
        assert_eq!(sample_byte_cap(60.0), SAMPLE_MEMORY_BYTES);
        // a 2 s budget leaves about 1 s for the columns: a 60 MB value does not fit
        assert!(sample_byte_cap(1.0) < 60 << 20);
    }

    #[test]
    fn a_partial_sample_says_so_and_is_low_confidence() {
        let now = vec![(None, 8000); 1000];
        let (pglz, lz4) = (speeds("pglz", 8_000_000, 100.0), speeds("lz4", 8_000_000, 500.0));
        let full = column_row(&ColumnMeasurement {
            written: Rate { amount: 1.0, seconds: 7200.0 },
            ..measured(&now, &pglz, &lz4)
        });
        assert_eq!(full.confidence, "high");
        let why = "the next value (60 MB) did not fit in the 7 MB left of the column's byte cap";
        let row = column_row(&ColumnMeasurement {
            partial: Some(why),
            written: Rate { amount: 1.0, seconds: 7200.0 },
            ..measured(&now, &pglz, &lz4)
        });
        assert_eq!(row.confidence, "low");
        assert!(row.basis.ends_with(&format!("; partially sampled: {why}")), "{}", row.basis);
    }

    #[test]
    fn columns_under_a_megabyte_fold_into_one_row() {
        let column = |target: &str, now: Option<i64>, then: i64, cpu: Option<f64>, confidence: &str| AdviceRow {
            area: "toast".into(),
            target: target.into(),
            current: "pglz (default_toast_compression); stored values sampled: pglz 300".into(),
            recommended: if then < now.unwrap_or(0) { "lz4" } else { "pglz" }.into(),
            bytes_now: now,
            bytes_recommended: Some(then),
            compress_cpu_seconds_per_day: cpu,
            confidence: confidence.into(),
            apply_sql: Some("ALTER TABLE ...".into()),
            ..AdviceRow::default()
        };
        let wal = AdviceRow { area: "wal_compression".into(), bytes_now: Some(10), ..AdviceRow::default() };
        let rows = vec![
            wal.clone(),
            column("public.big.c", Some(50 << 20), 40 << 20, Some(1.0), "high"),
            column("public.a.c", Some(600_000), 500_000, Some(0.5), "high"),
            column("public.b.c", Some(SMALL_COLUMN_BYTES - 1), SMALL_COLUMN_BYTES - 1, None, "medium"),
            column("public.nostats.c", None, 0, None, "high"),
            column("public.edge.c", Some(SMALL_COLUMN_BYTES), 1, None, "high"),
        ];
        let (folded, n) = fold_small_columns(rows);
        assert_eq!(n, 2);
        let targets: Vec<&str> = folded.iter().map(|r| r.target.as_str()).collect();
        assert_eq!(targets, ["", "public.big.c", "2 columns under 1 MB each", "public.nostats.c", "public.edge.c"]);
        let summary = &folded[2];
        assert_eq!(summary.bytes_now, Some(600_000 + SMALL_COLUMN_BYTES - 1));
        assert_eq!(summary.bytes_recommended, Some(500_000 + SMALL_COLUMN_BYTES - 1));
        assert_eq!((summary.compress_cpu_seconds_per_day, summary.decompress_cpu_seconds_per_day), (Some(0.5), None));
        assert_eq!((summary.apply_sql.as_deref(), summary.confidence.as_str()), (None, "medium"));
        assert_eq!(summary.current, "pglz (default_toast_compression) 2");
        assert_eq!(summary.recommended, "lz4 1, pglz 1");
        assert!(summary.basis.ends_with(": public.a.c, public.b.c"), "{}", summary.basis);
        assert!(summary.note.contains("verbose => true"), "{}", summary.note);
        // nothing small, or one small column alone: the rows as they were
        let (same, none) = fold_small_columns(vec![wal.clone()]);
        assert_eq!((same, none), (vec![wal.clone()], 0));
        let alone = vec![wal, column("public.a.c", Some(600_000), 500_000, None, "high")];
        let (same, none) = fold_small_columns(alone.clone());
        assert_eq!((same, none), (alone, 0));
    }

    #[test]
    fn a_kept_method_has_no_statement_and_no_cpu_figures() {
        let now = vec![(Some("pglz".to_string()), 4000); 100];
        let (pglz, lz4) = (speeds("pglz", 800_000, 100.0), speeds("lz4", 800_000, 500.0));
        let row =
            column_row(&ColumnMeasurement { pglz_bytes: 400_000, lz4_bytes: 600_000, ..measured(&now, &pglz, &lz4) });
        assert_eq!(row.recommended, "pglz");
        assert!(row.apply_sql.is_none() && row.note.starts_with("keep: "));
        assert_eq!((row.compress_cpu_seconds_per_gb, row.compress_cpu_seconds_per_day), (None, None));
    }
}
