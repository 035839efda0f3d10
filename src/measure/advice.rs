//! What `advise()` measures for each row: reads the server (WAL, sampled rows, statistics,
//! settings) and runs the measurements, then leaves the arithmetic and the decision to the
//! core's advisor.

use std::ops::ControlFlow;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

use compresslab_core::advisor::budget::{self, column_seconds, sample_byte_cap, TIMING_BYTES};
use compresslab_core::advisor::toast::ColumnMeasurement;
use compresslab_core::advisor::wal::pieces::{self, Piece, PieceLog, RecordSeen};
use compresslab_core::advisor::wal::WalPeriod;
use compresslab_core::advisor::{self, AdviceRow};
use compresslab_core::lab::{Codec, Hooks, Payload};
use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::registry::Named;
use compresslab_core::sampling::{BlockOrder, BlockTotals, ColumnBlocks};
use compresslab_core::scenarios::fpi::FpiTotals;
use compresslab_core::scenarios::spill::{self, SpillSpec, SpillStrategy};
use compresslab_core::scenarios::toast;
use compresslab_core::scenarios::wal::{lsn_text, WalWhatIfRow};
use pgrx::pg_sys::panic::CaughtError;
use pgrx::prelude::*;
use pgrx::{PgRelation, PgSqlErrorCode};

use super::sample_wal::SampleWal;
use super::{add_relation, build_codec, finish_whatif, replay_range};
use crate::errors::OrRaise;
use crate::server::activity::{self, ToastColumn};
use crate::server::sampling::BlockEnd;
use crate::server::wal::WalSource;
use crate::server::{catalog::names, check_interrupts, sampling, subtransaction, wal, PgHooks};

/// Rows of a table turned into change records for the spill simulation.
const SPILL_SAMPLE_ROWS: usize = 2000;
/// Without images in pg_wal: pages sampled from this many of the most-written tables.
const FALLBACK_TABLES: i64 = 5;
const FALLBACK_PAGES: i32 = 200;
/// Timed iterations of each method on a column's timing sample.
const TOAST_ITERATIONS: u32 = 3;
/// The seed of the blocks' order: the same sample for the same table from one call to the next.
const BLOCK_SEED: u64 = 0;

/// Whether an ERROR is the reader's "requested WAL segment ... has already been removed"
/// (`undefined_file`: the segment file does not exist).
fn gone_segment(error: &CaughtError) -> bool {
    matches!(error, CaughtError::PostgresError(report)
        if report.sql_error_code() == PgSqlErrorCode::ERRCODE_UNDEFINED_FILE)
}

/// The newest WAL of `source` read back from its end (pg_wal: the flush LSN) in parts
/// ([`advisor::wal::pieces::next_part`]): the newest part first, sized to a share of the time,
/// then each earlier part sized and sampled from the speed measured so far, back to `since`
/// (default the oldest segment, after the last one missing) or until `deadline`. A part the
/// deadline cuts short keeps the pieces it read (its oldest): the WAL between them and the
/// newer parts is neither counted nor timed, and the steady ranges the basis names show the
/// gap; a segment removed by a checkpoint before its part is read ends the read at the newer
/// WAL read already.
fn read_wal(source: &WalSource, since: Option<u64>, deadline: Instant) -> Result<WalRead, String> {
    let (oldest, end, now) = match source {
        WalSource::PgWal => {
            wal::require_readable_pg_wal();
            let oldest = wal::oldest_contiguous_segment().ok_or("no WAL segment in pg_wal")?.0;
            // SAFETY: reads the clock.
            let now = unsafe { pg_sys::GetCurrentTimestamp() };
            (oldest, wal::flush_lsn(), Some(now))
        }
        WalSource::Archive(archive) => {
            let (oldest, newest) = (archive.oldest().0, archive.newest().0);
            archive.require_contiguous(since.unwrap_or(oldest).clamp(oldest, newest), newest);
            (oldest, newest, None)
        }
    };
    let floor = since.unwrap_or(oldest).clamp(oldest, end);
    let seconds_left = || deadline.saturating_duration_since(Instant::now()).as_secs_f64();
    if seconds_left() <= 0.0 {
        return Err("no time left in its share of the budget (a larger budget reads WAL)".into());
    }
    // newest first
    let mut parts: Vec<(Vec<WalWhatIfRow>, Vec<Piece>)> = Vec::new();
    let (mut part_end, mut factor) = (end, None);
    while let Some((start, sample)) = pieces::next_part(part_end, floor, seconds_left(), factor) {
        let clock = Instant::now();
        let mut log = PieceLog::default();
        let mut cut = false;
        let first = parts.is_empty();
        let read = PgTryBuilder::new(AssertUnwindSafe(|| {
            let mut after_record = |seen: &RecordSeen| {
                log.observe(seen);
                if Instant::now() >= deadline {
                    cut = true;
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            };
            let mut whatif = replay_range(source, start, part_end, sample, &mut after_record);
            let rows = finish_whatif(&mut whatif);
            Some((rows, whatif.chunks().to_vec(), whatif.bytes_as_written() as i64))
        }))
        .catch_when(PgSqlErrorCode::ERRCODE_UNDEFINED_FILE, move |error| {
            if !first && gone_segment(&error) {
                None
            } else {
                error.rethrow()
            }
        })
        .execute();
        let Some((rows, chunks, as_written)) = read else {
            PgHooks.progress(&format!(
                "advise: the WAL before {} was removed (by a checkpoint) as the WAL was read back; the read stops there",
                lsn_text(part_end)
            ));
            break;
        };
        let model = pieces::model_seconds(part_end - start, sample);
        factor = Some(clock.elapsed().as_secs_f64() / model.max(1e-6));
        let part_pieces = pieces::pieces_of_part(&rows, as_written, &chunks, log);
        parts.push((rows, part_pieces));
        if cut {
            break;
        }
        part_end = start;
    }
    if parts.is_empty() && floor < end {
        return Err("no time left in its share of the budget (a larger budget reads WAL)".into());
    }
    parts.reverse();
    let start = parts.iter().flat_map(|(_, p)| p.first()).map(|p| p.start).next().unwrap_or(end);
    let last = parts.iter().rev().flat_map(|(_, p)| p.last()).map(|p| p.end).next().unwrap_or(start);
    let rows_of: Vec<Vec<WalWhatIfRow>> = parts.iter().map(|(r, _)| r.clone()).collect();
    let rows = pieces::combine_rows(&rows_of, start, last);
    let pieces = parts.into_iter().flat_map(|(_, p)| p).collect();
    Ok(WalRead { rows, pieces, now, range: format!("{}..{}", lsn_text(start), lsn_text(last)) })
}

/// What [`read_wal`] read: the what-if's rows over the whole read, its pieces oldest first,
/// and the time the flush LSN it reads back from was taken (pg_wal).
struct WalRead {
    rows: Vec<WalWhatIfRow>,
    pieces: Vec<Piece>,
    now: Option<i64>,
    /// The LSN range read, in words.
    range: String,
}

/// The `wal_compression` row from the newest WAL in pg_wal or in the archived segments of
/// `wal_dir` (back to `since`, default the oldest), read back from its end and sampled to fit
/// before `deadline`: over the steady part of the read, a one-off load set apart, with the
/// times its records carry (pg_stat_wal's period when they are too few).
pub fn wal_row(since: Option<u64>, deadline: Instant, wal_dir: Option<&str>) -> Result<AdviceRow, String> {
    let source = WalSource::open(wal_dir);
    let WalRead { rows, pieces, now, range } = read_wal(&source, since, deadline)?;
    let current_setting = activity::setting("wal_compression");
    let statistics = activity::wal_written();
    if rows.first().is_some_and(|r| r.fpi_images > 0) {
        let period = match source {
            WalSource::PgWal => WalPeriod::PgWal { now: now.unwrap_or_default(), statistics },
            WalSource::Archive(_) => WalPeriod::Archive { statistics },
        };
        return Ok(advisor::wal::from_whatif(&rows, &pieces, &current_setting, period, activity::inserted()));
    }
    // No full-page image in the range (recycled, or quiet): pages of the most-written tables
    // stand for the images.
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
        statistics.written,
        statistics.images,
        activity::inserted(),
    ))
}

/// The `toast` rows of `columns` (largest table first), each sampled with its share of the
/// time left before `until` (the time left over the columns left, so what a small table does
/// not use goes to the next), then the loose ones sampled again with what is left (loosest
/// first, [`budget::resample_share`]), and the notes for the NOTICE: what was left out, what
/// stayed loose, and why.
pub fn toast_rows(
    columns: &[ToastColumn],
    default_method: ToastCompression,
    until: Instant,
) -> (Vec<AdviceRow>, Vec<String>) {
    let (mut rows, mut notes) = (Vec::new(), Vec::new());
    let (mut unreadable, mut over_budget, mut looked) = (0, 0, 0);
    let (mut skipped, mut partial, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    // (row index, column, seconds its sample took) of the rows whose intervals are loose
    let mut loose: Vec<(usize, &ToastColumn, f64)> = Vec::new();
    let mut remaining = columns.iter().filter(|c| c.readable).count();
    for column in columns {
        check_interrupts();
        let left = until.saturating_duration_since(Instant::now());
        if !column.readable {
            unreadable += 1;
            continue;
        }
        if left.is_zero() {
            over_budget += 1;
            continue;
        }
        let share = column_seconds(left.as_secs_f64(), remaining);
        remaining -= 1;
        looked += 1;
        let started = Instant::now();
        let outcome = match measured_column(column, default_method, started + Duration::from_secs_f64(share)) {
            Ok(outcome) => outcome,
            Err(()) => {
                failed.push(column.target.clone());
                continue;
            }
        };
        match outcome {
            ColumnOutcome::Row { row, partial: was_partial } => {
                if was_partial {
                    partial.push(column.target.clone());
                } else if budget::row_margin(&row) > budget::LOOSE_MARGIN {
                    loose.push((rows.len(), column, started.elapsed().as_secs_f64()));
                }
                rows.push(*row);
            }
            ColumnOutcome::Skipped(why) => {
                PgHooks.progress(&format!("advise: {} skipped, no value measured: {why}", column.target));
                skipped.push(column.target.clone());
            }
            ColumnOutcome::Empty => {}
        }
    }
    // The loose columns again, loosest first, each with its share of what is left: a sample that
    // starts over from the same blocks and reads further. The tighter row is kept.
    loose.sort_by(|a, b| budget::row_margin(&rows[b.0]).total_cmp(&budget::row_margin(&rows[a.0])));
    let mut resampled = 0;
    for (k, &(index, column, used)) in loose.iter().enumerate() {
        check_interrupts();
        let left = until.saturating_duration_since(Instant::now()).as_secs_f64();
        let Some(share) = budget::resample_share(left, loose.len() - k, used) else { continue };
        if let Ok(ColumnOutcome::Row { row, partial: false }) =
            measured_column(column, default_method, Instant::now() + Duration::from_secs_f64(share))
        {
            resampled += 1;
            if budget::row_margin(&row) < budget::row_margin(&rows[index]) {
                rows[index] = *row;
            }
        }
    }
    let still_loose: Vec<String> = loose
        .iter()
        .map(|&(index, _, _)| &rows[index])
        .filter(|row| budget::row_margin(row) > budget::LOOSE_MARGIN)
        .map(|row| format!("{} ±{:.0}%", row.target, 100.0 * budget::row_margin(row)))
        .collect();
    if looked > 0 {
        PgHooks.progress(&format!(
            "advise: {looked} column(s) of {} measured, {resampled} of them sampled again with the time left",
            columns.len()
        ));
    }
    if !still_loose.is_empty() {
        notes.push(format!(
            "sampled within the budget to an interval wider than ±{:.0}% (a larger budget narrows it): {}",
            100.0 * budget::LOOSE_MARGIN,
            still_loose.join(", ")
        ));
    }
    if unreadable > 0 {
        notes.push(format!("{unreadable} column(s) of tables you may not read left out"));
    }
    if over_budget > 0 {
        notes.push(format!("{over_budget} column(s) not looked at within the budget (smallest tables)"));
    }
    if !skipped.is_empty() {
        notes.push(format!(
            "skipped, no value measured within the budget (a larger budget measures them): {}",
            skipped.join(", ")
        ));
    }
    if !failed.is_empty() {
        notes.push(format!("left out on an ERROR (each in a NOTICE above): {}", failed.join(", ")));
    }
    if !partial.is_empty() {
        notes.push(format!(
            "partially sampled within the budget, their largest values left out (confidence low): {}",
            partial.join(", ")
        ));
    }
    (rows, notes)
}

/// [`column_row`] in a subtransaction rolled back once the row is out: the table's locks go
/// with it (not one per table until advise() returns), and its ERROR (a table dropped
/// meanwhile, a damaged value) leaves out this column, in a NOTICE, not the rows already
/// measured.
fn measured_column(
    column: &ToastColumn,
    default_method: ToastCompression,
    deadline: Instant,
) -> Result<ColumnOutcome, ()> {
    subtransaction::rolled_back(|| column_row(column, default_method, deadline)).map_err(|why| {
        let table = names::relation_name(column.table)
            .unwrap_or_else(|| format!("relation with OID {} (dropped while advise() ran)", column.table));
        PgHooks.progress(&format!("advise: column {} of {table} left out: {why}", column.column));
    })
}

/// What became of a column: its row (and whether a value too large for the budget was left out
/// of its sample), no value to advise on, or skipped (why, in words).
pub enum ColumnOutcome {
    Row { row: Box<AdviceRow>, partial: bool },
    Empty,
    Skipped(String),
}

/// A column's `toast` row from a sample of the table's blocks (every row of each, chosen
/// uniformly at random from the whole table), each value toasted anew under pglz and lz4 as
/// its row would be. The sample grows until its figures are precise
/// ([`ColumnBlocks::precise_enough`]), the table is read whole, or `deadline` passes; a value
/// larger than what the time left may read ([`sample_byte_cap`], at most 64 MB) ends it (the
/// row then says it is partial; with no block read, the column is skipped). Memory holds one
/// block's rows, one value and the timing sample. Past the deadline once sampled, the speeds
/// are timed once instead of [`TOAST_ITERATIONS`] times.
pub fn column_row(column: &ToastColumn, default_method: ToastCompression, deadline: Instant) -> ColumnOutcome {
    // SAFETY: AccessShareLock is taken; one relation is open at a time.
    let rel = unsafe { PgRelation::with_lock(column.table, pg_sys::AccessShareLock as _) };
    if let Some(why) = sampling::unreadable_blocks(&rel) {
        return ColumnOutcome::Skipped(why);
    }
    let sampler = sampling::BlockSampler::new(&rel, &column.column_name);
    let mut codecs: Vec<(&str, Box<dyn Codec>)> =
        ToastCompression::ALL.iter().map(|m| (m.name(), build_codec(&m.server_method()))).collect();
    let mut blocks = ColumnBlocks { nblocks: sampler.nblocks(), blocks: Vec::new() };
    let mut wal = SampleWal::new(&sampler.leaf_oids(), sampling::pages_readable(&rel));
    let (mut timing, mut timing_bytes) = (Vec::new(), 0usize);
    let mut methods_now: Vec<(String, u64)> = Vec::new();
    let (mut partial, mut out_of_time) = (None, false);
    for block in BlockOrder::new(sampler.nblocks(), BLOCK_SEED) {
        check_interrupts();
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            out_of_time = true;
            break;
        }
        let value_cap = sample_byte_cap(left.as_secs_f64());
        let mut totals = BlockTotals::default();
        let mut block_methods: Vec<Option<ToastCompression>> = Vec::new();
        let mut block_wal = wal.block(codecs.len());
        let end = sampler.read_block(block, value_cap, deadline, |value, row, pointer| {
            let toasted = toast::toasted_anew(&value, &row, &mut codecs, &mut check_interrupts).or_raise();
            let anew: Vec<toast::Stored> = toasted.iter().map(|t| t.stored).collect();
            let stored: Vec<i64> = anew.iter().map(|s| s.size as i64).collect();
            let now = row.attributes.get(row.column);
            totals.add(value.len(), now.map_or(0, |a| a.size), &stored);
            totals.add_spread(&toasted.iter().map(|t| (t.stored.size, t.low, t.high)).collect::<Vec<_>>());
            // what a rewrite to each method changes: another method's value, or a raw one the
            // method stores smaller
            let rewritten: Vec<bool> = ToastCompression::ALL
                .iter()
                .zip(&stored)
                .map(|(method, &bytes)| match now.and_then(|a| a.method) {
                    Some(current) => current != *method,
                    None => now.is_some_and(|a| bytes < a.size as i64),
                })
                .collect();
            totals.add_rewrites(&rewritten);
            wal.row(&mut block_wal, &row, &anew, &rewritten, pointer);
            block_methods.push(now.and_then(|a| a.method));
            if timing_bytes + value.len() <= TIMING_BYTES {
                timing_bytes += value.len();
                timing.push(value);
            }
        });
        match end {
            BlockEnd::Read => {}
            BlockEnd::OutOfTime => {
                out_of_time = true;
                break;
            }
            BlockEnd::TooLarge(why) => {
                partial = Some(why);
                break;
            }
        }
        for method in block_methods {
            let name = method.map_or("uncompressed", |m| m.name()).to_string();
            match methods_now.iter_mut().find(|(n, _)| *n == name) {
                Some((_, count)) => *count += 1,
                None => methods_now.push((name, 1)),
            }
        }
        let (leaf, blkno) = sampler.locate(block);
        totals.wal = wal.finish(block_wal, leaf, blkno);
        blocks.blocks.push(totals);
        if blocks.precise_enough() {
            break;
        }
    }
    if blocks.blocks.is_empty() {
        return match (partial, out_of_time) {
            (Some(why), _) => ColumnOutcome::Skipped(why),
            (None, true) => ColumnOutcome::Skipped("the budget ran out before a block was read".into()),
            (None, false) => ColumnOutcome::Empty,
        };
    }
    if blocks.sampled().rows == 0 {
        return if blocks.whole() {
            ColumnOutcome::Empty
        } else {
            ColumnOutcome::Skipped(format!(
                "no value in the {} block(s) sampled of {}",
                blocks.blocks.len(),
                blocks.nblocks
            ))
        };
    }
    let timing = Payload::new(column.target.clone(), timing);
    let iterations = if Instant::now() >= deadline { 1 } else { TOAST_ITERATIONS };
    // codecs are in ToastCompression::ALL's order, so are the speeds
    let speeds: Vec<toast::ToastRow> = codecs
        .iter_mut()
        .map(|(name, codec)| {
            toast::estimate(&timing, sampler.overhead, name, codec.as_mut(), iterations, &mut PgHooks).or_raise()
        })
        .collect();
    let speed = |method: ToastCompression| &speeds[method as usize];
    let (pglz, lz4) = (speed(ToastCompression::Pglz), speed(ToastCompression::Lz4));
    let (written, read) = activity::table_rows(column.table);
    let row = advisor::toast::column_row(&ColumnMeasurement {
        target: &column.target,
        table_name: &column.table_name,
        column: &column.column,
        table_literal: &names::regclass_literal(column.table).unwrap_or_default(),
        column_name: &column.column_name,
        configured: column.compression,
        default_method,
        methods_now: &methods_now,
        pglz,
        lz4,
        blocks: &blocks,
        written,
        read,
        partitions: &column.partitions,
        partial: partial.as_deref(),
        index_bytes: wal.index_bytes,
        page_images: wal.pages(),
    });
    ColumnOutcome::Row { row: Box::new(row), partial: partial.is_some() }
}

/// Spill files of logical decoding (informational: PostgreSQL cannot compress them): what LZ4
/// streaming would save, simulated on rows of the most-written table the caller may read.
pub fn spill_row(deadline: Instant) -> Result<AdviceRow, String> {
    let (slots, txns, spilled) = activity::spilled();
    if spilled.amount <= 0.0 {
        return Err(format!("no logical-decoding spill recorded ({slots} replication slot(s))"));
    }
    let (relid, table) =
        sampling::most_written_readable_tables(1).pop().ok_or("no table you may read to sample change records from")?;
    let records = sampling::table_records(relid, SPILL_SAMPLE_ROWS, deadline);
    let specs = [
        SpillSpec { strategy: SpillStrategy::Raw, level: None },
        SpillSpec { strategy: SpillStrategy::Lz4Stream, level: None },
    ];
    let result = spill::simulate(&records, &specs, &mut check_interrupts).or_raise();
    Ok(advisor::spill::spill_row(&result[0], &result[1], &table, slots, txns, spilled))
}
