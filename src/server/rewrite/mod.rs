//! The rewrite of `CALL compresslab.recompress` in the server: what is checked before anything
//! changes (`plan.rs`), the steps of a run (`step.rs`, driving the state machine of
//! [`compresslab_core::rewrite::run`]) and one batch (here): a heap scan of a block range picks
//! the values a new write would store differently ([`compresslab_core::rewrite::decide`],
//! `pick.rs`), then each picked row is updated with a fresh copy of its value and read back as
//! stored, checked against the digest of the value it replaced (`update.rs`), in the caller's
//! transaction, as the table's owner (`crate::server::owner`). Row locks only. A dry run picks
//! alike and counts.

mod images;
mod pick;
mod plan;
mod step;
mod update;
mod values;

use std::ffi::c_char;

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::rewrite::{self, Decision, Digest};
use compresslab_core::scenarios::toast::TOAST_TUPLE_THRESHOLD;
use pgrx::prelude::*;
use pgrx::{PgRelation, PgSqlErrorCode};

use images::DryRunWal;
pub use plan::Call;
pub use step::step;
use values::Values;

use super::catalog::names::relation_name;
use super::owner::owner_of;
use super::pages::relation_blocks;
use super::subtransaction;
use super::toast::tuple_target;
use crate::errors::report;

/// What to do: one batch of `column` of the table `relid` from `first_block`, of at most
/// `batch_rows` rows and `batch_bytes` bytes of values (ending at a block boundary).
struct BatchSpec<'a> {
    pub relid: pg_sys::Oid,
    pub column: &'a str,
    pub method: ToastCompression,
    pub first_block: u64,
    pub batch_rows: u32,
    pub batch_bytes: i64,
    pub dry_run: bool,
    /// The first transaction ID of the run: row versions it wrote, left alone, are not rows read.
    pub run_xid: Option<u32>,
}

/// What a batch did. `bytes_after` is what the rewritten values store (a dry run: what TOAST's
/// compression of each gives); `wal_written` the WAL the batch's call wrote, as this backend's
/// `pgWalUsage` counts it (a dry run's too: hint bits it sets may write page images).
#[derive(Debug, Default, Clone)]
struct BatchDone {
    pub next_block: u64,
    pub total_blocks: u64,
    pub examined: i64,
    pub rewritten: i64,
    pub skipped: i64,
    pub bytes_before: i64,
    pub bytes_after: i64,
    pub wal_written: i64,
}

/// How many times a batch runs when rows it waited for moved to another partition each time.
const MOVED_ROW_TRIES: u32 = 5;

/// One batch (see the module), after the caller's privileges are checked again; a dry run
/// counts the WAL it would write into `wal`.
fn run_batch(spec: &BatchSpec, wal: Option<&mut DryRunWal>) -> BatchDone {
    let wal_before = wal_written();
    let lock = if spec.dry_run { pg_sys::AccessShareLock } else { pg_sys::RowExclusiveLock };
    // SAFETY: the caller checked the OID names a table; the lock is held to the transaction's end.
    let rel = unsafe { PgRelation::with_lock(spec.relid, lock as pg_sys::LOCKMODE) };
    let table = relation_name(spec.relid)
        .unwrap_or_else(|| report(PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE, "the table was dropped".into(), None));
    // the column may have changed since the last batch
    plan::checked_column(spec.relid, spec.column);
    let attnum = plan::check_caller(&rel, &table, spec.column, spec.dry_run);
    let total = relation_blocks(&rel) as u64;
    let mut done = BatchDone { total_blocks: total, next_block: spec.first_block.min(total), ..BatchDone::default() };
    if spec.first_block >= total {
        done.wal_written = wal_written() - wal_before;
        return done;
    }
    let end = rewrite::scan_end(spec.first_block, total, rows_per_block(&rel), spec.batch_rows);
    let mut values = (!spec.dry_run).then(|| Values::for_column(column_type(&rel, attnum)));
    let (picked, next_block) = pick::pick(&rel, spec, i32::from(attnum), end, &mut done, values.as_mut(), wal);
    let mut values = values.unwrap_or(Values::Copies(Vec::new()));
    done.next_block = next_block;
    if spec.dry_run || picked.is_empty() {
        // counted
    } else if !is_partition(&rel) {
        update::rewrite(&rel, &table, spec, i32::from(attnum), &picked, &mut values, &mut done);
    } else {
        // A row another session moved to another partition while the UPDATE waited for its
        // lock is an ERROR (40001) the UPDATE cannot step past: the batch's updates are rolled
        // back and run again, the moved row then gone from this partition (a later round over
        // every partition finds it where it went). Only a partition's rows can move so; the
        // subtransaction takes a transaction ID of its own, which makes the run's check that no
        // other session wrote during a pass fail: a partition gets a second pass.
        let start = done.clone();
        done = subtransaction::retried(
            MOVED_ROW_TRIES,
            PgSqlErrorCode::ERRCODE_T_R_SERIALIZATION_FAILURE,
            |attempt, why| {
                notice!(
                    "compresslab.recompress: {table}: {why}; the batch runs again (try {} of {MOVED_ROW_TRIES})",
                    attempt + 1
                )
            },
            || {
                let mut attempt = start.clone();
                update::rewrite(&rel, &table, spec, i32::from(attnum), &picked, &mut values, &mut attempt);
                attempt
            },
        );
    }
    done.wal_written = wal_written() - wal_before;
    done
}

/// The type of column `attnum` of `rel`.
fn column_type(rel: &PgRelation, attnum: i16) -> pg_sys::Oid {
    // SAFETY: rd_att of an open relation, whose attribute `attnum` (checked) is the column.
    unsafe { pgrx::PgTupleDesc::from_pg_unchecked(rel.rd_att) }
        .get(attnum as usize - 1)
        .map_or(pg_sys::InvalidOid, |a| a.atttypid)
}

fn is_partition(rel: &PgRelation) -> bool {
    // SAFETY: rd_rel is valid for an open relation.
    unsafe { (*rel.rd_rel).relispartition }
}

/// The WAL this backend has written since it started (PostgreSQL's `pgWalUsage`).
fn wal_written() -> i64 {
    wal_usage().0
}

/// This backend's WAL bytes and records since it started (`pgWalUsage`).
fn wal_usage() -> (i64, i64) {
    // SAFETY: counters of this backend, read in its own (single) thread.
    unsafe { (pg_sys::pgWalUsage.wal_bytes as i64, pg_sys::pgWalUsage.wal_records) }
}

fn rows_per_block(rel: &PgRelation) -> Option<f64> {
    // SAFETY: rd_rel is valid for an open relation.
    let (tuples, pages) = unsafe { ((*rel.rd_rel).reltuples as f64, (*rel.rd_rel).relpages as f64) };
    (tuples > 0.0 && pages > 0.0).then(|| tuples / pages)
}

/// The row length over which TOAST compresses a value: `TOAST_TUPLE_THRESHOLD` (under it TOAST
/// is not called), or the table's `toast_tuple_target` if larger (TOAST stops there).
fn row_threshold(rel: &PgRelation) -> usize {
    TOAST_TUPLE_THRESHOLD.max(tuple_target(rel))
}

/// What a batch reads of one value: the digest of its bytes and what TOAST's compression with
/// `method` stores (its compressed size, or the raw size where TOAST would keep it raw); its
/// bytes are added to `keep` (the values the rewrite writes). None for a value stored raw that
/// the method does not shrink (a new write stores it the same). Only a dry run, or a value
/// stored raw, is compressed.
struct Examined {
    digest: Digest,
    after: usize,
}

fn examine(
    datum: pg_sys::Datum,
    method: ToastCompression,
    decision: Decision,
    dry_run: bool,
    keep: Option<&mut Values>,
) -> Option<Examined> {
    let cmethod = method.attcompression() as c_char;
    // SAFETY: the datum is a varlena; pg_detoast_datum_packed returns it unchanged or a plain
    // palloc'd copy, freed here. toast_compress_datum takes a plain (possibly short-header)
    // value and returns NULL or a palloc'd compressed copy, freed here.
    unsafe {
        let original = datum.cast_mut_ptr::<pg_sys::varlena>();
        let plain = pg_sys::pg_detoast_datum_packed(original);
        let len = pgrx::varlena::varsize_any_exhdr(plain);
        let bytes = std::slice::from_raw_parts(pgrx::varlena::vardata_any(plain) as *const u8, len);
        let mut after = Some(len + 4);
        if decision == Decision::TryCompress || dry_run {
            let compressed = pg_sys::ffi::pg_guard_ffi_boundary(|| {
                pg_sys::toast_compress_datum(pg_sys::Datum::from(plain), cmethod)
            });
            if compressed.is_null() {
                if decision == Decision::TryCompress {
                    after = None;
                }
            } else {
                after = Some(pgrx::varlena::varsize_any(compressed.cast_mut_ptr()));
                pg_sys::pfree(compressed.cast_mut_ptr());
            }
        }
        let examined = after.map(|after| {
            if let Some(keep) = keep {
                keep.push(bytes);
            }
            Examined { digest: Digest::of(bytes), after }
        });
        if plain != original {
            pg_sys::pfree(plain.cast());
        }
        examined
    }
}

fn corrupted(table: &str, what: &str) -> ! {
    report(
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        format!("recompress: a value of {table} {what} after its rewrite; the batch is rolled back"),
        Some("Nothing of this batch is kept. Check the server's log and hardware before running recompress again."),
    )
}

/// The next transaction ID PostgreSQL will assign (as a number); with `only_if_idle`, None
/// unless every ID assigned so far belongs to a finished transaction. `recompress` reads it
/// when a pass begins (idle) and when it ends: if no ID was assigned in between but one per
/// batch of its own, no other session wrote the table (a write needs one), so no row moved
/// behind the pass and no further pass is needed.
fn next_xid(only_if_idle: bool) -> Option<i64> {
    // SAFETY: inside a transaction; GetLatestSnapshot returns a static snapshot valid until the
    // next call, whose counts and xmax are read at once.
    unsafe {
        let snapshot = &*pg_sys::GetLatestSnapshot();
        let next = pg_sys::ReadNextFullTransactionId().value;
        // no transaction in progress below xmax, and none assigned from xmax on
        let idle = snapshot.xcnt == 0
            && snapshot.subxcnt == 0
            && !snapshot.suboverflowed
            && snapshot.xmax.into_inner() == next as u32;
        (idle || !only_if_idle).then_some(next as i64)
    }
}
