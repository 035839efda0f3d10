//! A column's `toast` row: the stored bytes of its sampled values under pglz and lz4 (each row
//! toasted anew, `scenarios::toast::stored_per_row`), scaled to the table, priced in CPU at the
//! speeds measured on the same values and the rates `pg_stat_user_tables` observed.

use super::words::{period, seconds_per_gb, size, Rate, GB};
use super::{choose_toast, saving_percent, AdviceRow, Confidence};
use crate::pg_compression::ToastCompression;
use crate::rewrite;
use crate::sampling::{ColumnBlocks, Estimate};
use crate::scenarios::toast::ToastRow;
use crate::sql_text::string_literal;

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
    // The intervals summed: each column's holds its total with 95% confidence, their sum
    // holds the sum at least as often (wider than need be, never narrower).
    let bound = |f: fn(&AdviceRow) -> Option<i64>| folded.iter().map(f).sum::<Option<i64>>();
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
        // "26 columns, all pglz"; "26 columns: pglz 20, lz4 6"
        match counts.as_slice() {
            [(name, count)] => format!("{count} columns, all {name}"),
            _ => format!(
                "{n} columns: {}",
                counts.iter().map(|(name, count)| format!("{name} {count}")).collect::<Vec<_>>().join(", ")
            ),
        }
    };
    let confidence = folded.iter().map(|r| r.confidence).min().unwrap_or(Confidence::Low);
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
        bytes_now_low: bound(|r| r.bytes_now_low),
        bytes_now_high: bound(|r| r.bytes_now_high),
        bytes_recommended_low: bound(|r| r.bytes_recommended_low),
        bytes_recommended_high: bound(|r| r.bytes_recommended_high),
        saving_percent: saving_percent(now, then),
        compress_cpu_seconds_per_day: cpu(|r| r.compress_cpu_seconds_per_day),
        decompress_cpu_seconds_per_day: cpu(|r| r.decompress_cpu_seconds_per_day),
        basis: format!("each column measured as its own row would be: {}", names.join(", ")),
        confidence,
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
    /// The column's compression, None for `default_toast_compression`, and that setting.
    pub configured: Option<ToastCompression>,
    pub default_method: ToastCompression,
    /// How the sampled values are stored now: each method ("uncompressed" for none) and how
    /// many values, in the order first seen.
    pub methods_now: &'a [(String, u64)],
    /// Speeds under pglz and lz4 (the server's routines), timed on part of the sample.
    pub pglz: &'a ToastRow,
    pub lz4: &'a ToastRow,
    /// The block sample: per block, the column's stored bytes now and, each row toasted anew,
    /// under each method of `ToastCompression::ALL`, at its place there.
    pub blocks: &'a ColumnBlocks,
    /// Rows written and read since the statistics were reset.
    pub written: Rate,
    pub read: Rate,
    /// A partitioned table's partitions (`schema.table`, quoted as needed), empty for a plain
    /// table: its values are sampled across them and each gets the statement.
    pub partitions: &'a [String],
    /// Why a block was left out of the sample for a value too large to read within the budget,
    /// if one was (the sample then misses its largest values: confidence low).
    pub partial: Option<&'a str>,
    /// The bytes of the table's indexes: a rewrite's new entries may write an image of each
    /// page (the WAL interval's high end).
    pub index_bytes: f64,
    /// Whether the blocks' WAL counts full-page images: not for a role that may not read whole
    /// rows of the table (an image holds every column of every row).
    pub page_images: bool,
}

/// `high` when every figure's 95% margin is under 2%, `medium` under 10%, else `low`.
fn confidence_of_margin(margin: f64) -> Confidence {
    if margin < 0.02 {
        Confidence::High
    } else if margin < 0.10 {
        Confidence::Medium
    } else {
        Confidence::Low
    }
}

/// An estimate's interval in words: "exact" for a table read whole, unless the model's known
/// error leaves a range there.
fn interval_words(e: &Estimate, whole: bool) -> String {
    match e.rounded() {
        (_, Some(low), Some(high)) if whole && low < high => {
            format!("every value read; the model's error {low}..{high}")
        }
        _ if whole => "exact".into(),
        (_, Some(low), Some(high)) => format!("95% interval {low}..{high}"),
        _ => "no interval: one block".into(),
    }
}

/// The least share of a column's values stored with another method than its own, the one to
/// use, for which its row recommends the rewrite.
pub const STALE_SHARE: f64 = 0.05;

/// What keeps a value's method, in the notes' words (pgrx-tests/sql/advise.sql tests each,
/// pgrx-tests/sql/repack.sql 19's REPACK).
const KEEP_OLD_METHOD: &str = "VACUUM FULL, CLUSTER, REPACK (PostgreSQL 19), table rewrites, INSERT ... SELECT and \
     UPDATEs that keep the value all keep the old method (tested by compresslab)";

/// The row of one column.
pub fn column_row(m: &ColumnMeasurement) -> AdviceRow {
    let sample = m.blocks.sampled();
    let (sampled, raw) = (sample.rows, sample.raw as i64);
    // The block sample holds each method's bytes at the method's place in ToastCompression::ALL.
    let method_bytes = |t: ToastCompression| sample.methods.get(t as usize).copied().unwrap_or(0) as i64;
    let (pglz_bytes, lz4_bytes) = (method_bytes(ToastCompression::Pglz), method_bytes(ToastCompression::Lz4));
    let (now, pglz, lz4) = (
        m.blocks.now(),
        m.blocks.method(ToastCompression::Pglz as usize),
        m.blocks.method(ToastCompression::Lz4 as usize),
    );
    let decision = choose_toast(raw, pglz_bytes, lz4_bytes);
    let configured = m.configured.unwrap_or(m.default_method);
    let current = match m.configured {
        None => format!("{configured} (default_toast_compression)"),
        Some(method) => method.to_string(),
    };
    let recommended = decision.recommended.unwrap_or(configured);
    // The method already the one to use while values written before stay in another (an
    // upgrade to PostgreSQL 19, whose default is lz4; an earlier SET COMPRESSION): the CALL
    // alone, when they are a share worth a rewrite.
    let stale = recommended == configured
        && decision.recommended.is_some()
        && m.blocks.rewrites(recommended as usize).total >= STALE_SHARE * m.blocks.rows().total.max(1.0);
    let keep = recommended == configured && !stale;
    let stored_now = sample.now as i64;
    let (stored_then, then) = match decision.recommended {
        None => (stored_now, now),
        Some(ToastCompression::Pglz) => (pglz_bytes, pglz),
        Some(ToastCompression::Lz4) => (lz4_bytes, lz4),
    };
    let chosen = match recommended {
        ToastCompression::Pglz => m.pglz,
        ToastCompression::Lz4 => m.lz4,
    };
    let avg_raw = if sampled > 0 { raw as f64 / sampled as f64 } else { 0.0 };
    let gb_per_day = |rate: Rate| rate.per_day().map(|rows| rows * avg_raw / GB);
    let (compress_per_gb, decompress_per_gb) = if recommended == configured {
        (None, None)
    } else {
        (seconds_per_gb(chosen.compress_mbps), seconds_per_gb(chosen.decompress_mbps))
    };
    let mix: Vec<String> = m.methods_now.iter().map(|(method, count)| format!("{method} {count}")).collect();
    let partitions =
        if m.partitions.is_empty() { String::new() } else { format!(" across its {} partitions", m.partitions.len()) };
    let blocks = if m.blocks.whole() {
        format!("every row of the table's {} blocks{partitions}", m.blocks.nblocks)
    } else {
        format!(
            "every row of {} of the table's {} blocks{partitions}, chosen at random (about {:.0} rows in all)",
            m.blocks.blocks.len(),
            m.blocks.nblocks,
            m.blocks.rows().total
        )
    };
    let (now_bytes, now_low, now_high) = now.rounded();
    let (then_bytes, then_low, then_high) = then.rounded();
    let margin = now.relative_margin().max(then.relative_margin());
    let noise = decision.recommended.is_some() && !m.blocks.whole() && pglz.overlaps(&lz4);
    AdviceRow {
        area: "toast".into(),
        target: m.target.into(),
        current: format!("{current}; stored values sampled: {}", mix.join(", ")),
        recommended: recommended.setting().into(),
        bytes_now: Some(now_bytes),
        bytes_recommended: Some(then_bytes),
        bytes_now_low: now_low,
        bytes_now_high: now_high,
        bytes_recommended_low: then_low,
        bytes_recommended_high: then_high,
        saving_percent: saving_percent(stored_now, stored_then),
        compress_cpu_seconds_per_day: gb_per_day(m.written).zip(compress_per_gb).map(|(gb, s)| gb * s),
        decompress_cpu_seconds_per_day: gb_per_day(m.read).zip(decompress_per_gb).map(|(gb, s)| gb * s),
        compress_cpu_seconds_per_gb: compress_per_gb,
        decompress_cpu_seconds_per_gb: decompress_per_gb,
        basis: format!(
            "{sampled} values sampled, {blocks} ({} raw), each row toasted anew under pglz and lz4 with the \
             server's routines: pglz would store {} bytes ({}), lz4 {} bytes ({}), now {now_bytes} bytes ({}); \
             per day from pg_stat_user_tables: {:.0} rows written, {:.0} read (each read counted as detoasting the \
             value) over {}",
            size(raw as f64),
            pglz.rounded().0,
            interval_words(&pglz, m.blocks.whole()),
            lz4.rounded().0,
            interval_words(&lz4, m.blocks.whole()),
            interval_words(&now, m.blocks.whole()),
            m.written.amount,
            m.read.amount,
            period(m.written.seconds)
        ) + &m.partial.map_or_else(String::new, |why| format!("; partially sampled: {why}")),
        confidence: if m.partial.is_some() { Confidence::Low } else { confidence_of_margin(margin) },
        // SET COMPRESSION on a partitioned table does not reach its partitions (PostgreSQL 15
        // sets the parent's only, which new partitions inherit): one statement for each, each
        // under a lock_timeout; then the CALL that rewrites the existing values.
        apply_sql: (!keep).then(|| {
            std::iter::once(m.table_name)
                .chain(m.partitions.iter().map(String::as_str))
                .filter(|_| !stale)
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
        } else if stale {
            let (rows, cost) = rewrite_cost(m, recommended);
            format!(
                "{}. The column's method is {current} already, but values keep the method they were written \
                 with (sampled: {}): {KEEP_OLD_METHOD}. The CALL rewrites the existing values online, in batches \
                 that each commit (row locks only; resumable): {rows}{cost}; dead row versions stay until VACUUM.",
                decision.reason,
                mix.join(", ")
            )
        } else {
            let (rows, cost) = rewrite_cost(m, recommended);
            format!(
                "{}. Each ALTER TABLE takes an ACCESS EXCLUSIVE lock{}: lock_timeout makes it give up after 1 s \
                 instead of queueing behind a long query and blocking every reader of the table meanwhile; on \
                 55P03 (lock_not_available) run the line again. SET COMPRESSION applies to values written from \
                 then on: {KEEP_OLD_METHOD}. The CALL rewrites the existing values online, in \
                 batches that each commit (row locks only; resumable): {rows}{cost}; dead row versions stay until \
                 VACUUM. A dump and restore would rewrite about {} here.",
                decision.reason,
                if m.partitions.is_empty() { "" } else { " on its table only (partitions get their own)" },
                size(now_bytes as f64)
            )
        } + if noise {
            " The 95% intervals of pglz's and lz4's bytes overlap: on size, the choice is within the sampling noise."
        } else {
            ""
        },
        // a column's bytes are a total: no period, nothing per day
        observed_period: None,
        bytes_per_day_now: None,
        bytes_per_day_recommended: None,
    }
}

/// What the CALL of a column's advice rewrites and costs, in words: the values a rewrite to
/// `recommended` changes (compressed with another method, or stored raw where it would compress
/// them: the CALL tries each and keeps what shrinks), counted per sampled block and scaled to
/// the table with their 95% interval, and the WAL it writes counted per sampled block as the
/// dry run counts it ([`rewrite::wal`]: each row's records, an image of each page changed
/// first since the last checkpoint), with its interval.
fn rewrite_cost(m: &ColumnMeasurement, recommended: ToastCompression) -> (String, String) {
    let i = recommended as usize;
    let rewrites = m.blocks.rewrites(i);
    let rows_total = m.blocks.rows().total.max(1.0);
    let share = (rewrites.total / rows_total).clamp(0.0, 1.0);
    let count = match rewrites.rounded() {
        (n, _, _) if m.blocks.whole() => format!("{n} values to rewrite"),
        (n, Some(low), Some(high)) => format!("about {n} values to rewrite (95% interval {low}..{high})"),
        (n, _, _) => format!("about {n} values to rewrite (one block read: no interval)"),
    };
    let cost = match m.blocks.rewrite_wal(i, m.index_bytes * share) {
        Some(wal) if !m.page_images => format!(
            ", writing {} for their new values and each row's records, and full-page images not counted here \
             (you may not read whole rows of the table: SELECT on some of its columns only, or row-level security \
             hiding rows; its dry_run, run by the owner, counts them) \
             in about {} at full speed (max_wal_rate => '20 MB/s' spreads it)",
            wal.words(),
            period(rewrite::seconds(wal.about, None).max(1.0))
        ),
        Some(wal) => format!(
            ", writing {} (their new values, each row's records, and an image of each page changed first \
             since the last checkpoint; the high end: one more of each) in about {} at full speed \
             (max_wal_rate => '20 MB/s' spreads it; its dry_run reads every page)",
            wal.words(),
            period(rewrite::seconds(wal.about, None).max(1.0))
        ),
        None => ", writing WAL this sample cannot bound (one block read: its dry_run counts it)".to_string(),
    };
    (count, cost)
}

#[cfg(test)]
mod tests;
