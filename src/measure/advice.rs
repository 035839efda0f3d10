//! What `advise()` measures for each row: reads the server (WAL, sampled rows, statistics,
//! settings) and runs the measurements, then leaves the arithmetic and the decision to the
//! core's advisor.

use std::time::Instant;

use compresslab_core::advisor::toast::ColumnMeasurement;
use compresslab_core::advisor::{self, AdviceRow};
use compresslab_core::lab::{Codec, Payload};
use compresslab_core::scenarios::fpi::FpiTotals;
use compresslab_core::scenarios::spill::{self, SpillSpec, SpillStrategy};
use compresslab_core::scenarios::toast::{self, TOAST_METHODS};
use pgrx::prelude::*;
use pgrx::PgRelation;

use super::{add_relation, codec_of, replay_range};
use crate::errors::OrRaise;
use crate::server::activity::{self, ToastColumn};
use crate::server::wal::WalSource;
use crate::server::{check_interrupts, sampling, wal, PgHooks};

/// Rows of a table turned into change records for the spill simulation.
const SPILL_SAMPLE_ROWS: i64 = 2000;
/// Without images in pg_wal: pages sampled from this many of the most-written tables.
const FALLBACK_TABLES: i64 = 5;
const FALLBACK_PAGES: i32 = 200;
/// Timed iterations of each method on a column's sample.
const TOAST_ITERATIONS: u32 = 3;

/// The `wal_compression` row from the WAL in pg_wal or in the archived segments of `wal_dir`
/// (from `since`, default the oldest), read and sampled to fit before `deadline`, scaled to a
/// day with pg_stat_wal.
pub fn wal_row(since: Option<u64>, deadline: Instant, wal_dir: Option<&str>) -> Result<AdviceRow, String> {
    let source = WalSource::open(wal_dir);
    let (oldest, flush) = match &source {
        WalSource::PgWal => {
            wal::require_readable_pg_wal();
            (wal::oldest_segment().ok_or("no WAL segment in pg_wal")?.0, wal::flush_lsn())
        }
        WalSource::Archive(archive) => {
            let (oldest, newest) = (archive.oldest().0, archive.newest().0);
            archive.require_contiguous(since.unwrap_or(oldest).clamp(oldest, newest), newest);
            (oldest, newest)
        }
    };
    let seconds = deadline.saturating_duration_since(Instant::now()).as_secs_f64();
    if seconds <= 0.0 {
        return Err("no time left in its share of the budget (a larger budget reads WAL)".into());
    }
    let (start, sample) = advisor::wal::window(seconds, since.unwrap_or(oldest).clamp(oldest, flush), flush);
    let rows = replay_range(&source, start, flush, sample, Some(deadline)).finish().or_raise();
    let current_setting = activity::setting("wal_compression");
    let (written, images) = activity::wal_written();
    if rows[0].fpi_images > 0 {
        return Ok(advisor::wal::from_whatif(&rows, &current_setting, written, activity::inserted()));
    }
    // No full-page image in the range (recycled, or quiet): pages of the most-written tables
    // stand for the images.
    let range = format!("{}..{}", rows[0].start_lsn, rows[0].end_lsn);
    let tables = sampling::most_written_readable_tables(FALLBACK_TABLES);
    if tables.is_empty() {
        return Err(format!("no full-page image in the WAL read ({range}) and no table to sample pages from"));
    }
    // As many of them as the deadline allows, at least one.
    let mut totals = FpiTotals::default();
    let mut names = Vec::new();
    for (oid, name) in tables {
        if !names.is_empty() && Instant::now() >= deadline {
            break;
        }
        // SAFETY: AccessShareLock is taken; one relation is open at a time.
        let rel = unsafe { PgRelation::with_lock(oid, pg_sys::AccessShareLock as _) };
        add_relation(&rel, Some(FALLBACK_PAGES), 0, &mut totals);
        names.push(name);
    }
    Ok(advisor::wal::from_pages(
        &totals.rows(),
        &names,
        &range,
        &current_setting,
        written,
        images,
        activity::inserted(),
    ))
}

/// What became of a column: its row, no value to advise on, or skipped (why, in words).
pub enum ColumnOutcome {
    Row(Box<AdviceRow>),
    Empty,
    Skipped(String),
}

/// A column's `toast` row from up to `sample` of its rows, each toasted anew under pglz and
/// lz4, holding at most `byte_cap` bytes of values and sampling no row after `deadline` (then
/// the row says it is partial; with no value measured the column is skipped). Past the
/// deadline once sampled, the speeds are timed once instead of [`TOAST_ITERATIONS`] times.
pub fn column_row(
    column: &ToastColumn,
    default_method: &str,
    sample: i32,
    byte_cap: usize,
    deadline: Instant,
) -> ColumnOutcome {
    // SAFETY: AccessShareLock is taken; one relation is open at a time.
    let rel = unsafe { PgRelation::with_lock(column.table, pg_sys::AccessShareLock as _) };
    let sampled = sampling::column_rows(&rel, &column.column_name, sample, 0, byte_cap, deadline);
    let (values, rows) = (sampled.values, sampled.rows);
    if values.is_empty() {
        return match sampled.stopped {
            Some(why) => ColumnOutcome::Skipped(why),
            None => ColumnOutcome::Empty,
        };
    }
    let now: Vec<(Option<String>, usize)> =
        rows.iter().map(|r| r.attributes.get(r.column).map_or((None, 0), |a| (a.method.clone(), a.size))).collect();
    let values = Payload::new(column.target.clone(), values);
    let mut codecs: Vec<(&str, Box<dyn Codec>)> =
        TOAST_METHODS.iter().map(|(name, method)| (*name, codec_of(method))).collect();
    let stored = toast::stored_per_row(&values, &rows, &mut codecs).or_raise();
    let iterations = if Instant::now() >= deadline { 1 } else { TOAST_ITERATIONS };
    let mut speeds = codecs.iter_mut().map(|(name, codec)| {
        toast::estimate(&values, sampled.overhead, name, codec.as_mut(), iterations, &mut PgHooks).or_raise()
    });
    let (Some(pglz), Some(lz4)) = (speeds.next(), speeds.next()) else { return ColumnOutcome::Empty };
    let (written, read) = activity::table_rows(column.table);
    ColumnOutcome::Row(Box::new(advisor::toast::column_row(&ColumnMeasurement {
        target: &column.target,
        table_name: &column.table_name,
        column: &column.column,
        configured: &column.compression,
        default_method,
        now: &now,
        pglz: &pglz,
        lz4: &lz4,
        pglz_bytes: stored[0],
        lz4_bytes: stored[1],
        table_rows: sampled.table_rows,
        written,
        read,
        partitions: &column.partitions,
        partial: sampled.stopped.as_deref(),
    })))
}

/// Spill files of logical decoding (informational: PostgreSQL cannot compress them): what LZ4
/// streaming would save, simulated on rows of the most-written table the caller may read.
pub fn spill_row() -> Result<AdviceRow, String> {
    let (slots, txns, spilled) = activity::spilled();
    if spilled.amount <= 0.0 {
        return Err(format!("no logical-decoding spill recorded ({slots} replication slot(s))"));
    }
    let (_, table) =
        sampling::most_written_readable_tables(1).pop().ok_or("no table you may read to sample change records from")?;
    let records = sampling::query_records(&format!("SELECT t FROM {table} t LIMIT {SPILL_SAMPLE_ROWS}"));
    let specs = [
        SpillSpec { strategy: SpillStrategy::Raw, level: None },
        SpillSpec { strategy: SpillStrategy::Lz4Stream, level: None },
    ];
    let result = spill::simulate(&records, &specs, &mut check_interrupts).or_raise();
    Ok(advisor::spill::spill_row(&result[0], &result[1], &table, slots, txns, spilled))
}
