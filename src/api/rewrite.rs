//! `CALL compresslab.recompress(...)`: recompresses a column's existing values in place,
//! online. The procedure itself is plpgsql (`rewrite.sql`: it COMMITs between batches, which a
//! Rust function cannot); it calls these functions, each of which works in the caller's
//! transaction: [`recompress_prepare`] checks the call and plans it, [`recompress_batch`]
//! rewrites one batch (`crate::server::rewrite`) with an UPDATE whose WHERE calls
//! [`recompress_wanted`], which writes [`recompress_copy`] and returns [`recompress_copied`];
//! [`fresh_copy`] is a fresh copy of any value, [`recompress_pause`] and [`recompress_estimate`] the throttle and the cost.

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::registry::{parse_named, Named};
use compresslab_core::rewrite::{self as plan, Triggers};
use compresslab_core::CodecError;
use pgrx::datum::Interval;
use pgrx::prelude::*;
use pgrx::{AnyElement, FromDatum, PgSqlErrorCode};

use crate::errors::{raise, report, required, OrRaise};
use crate::server::catalog::names::relation_name;
use crate::server::catalog::relations::RegClass;
use crate::server::rewrite;
use crate::server::toast::{self, is_varlena};

extension_sql_file!(
    "rewrite.sql",
    name = "recompress",
    requires = [
        fresh_copy,
        recompress_wanted,
        recompress_copy,
        recompress_copied,
        recompress_next_xid,
        recompress_prepare_checked,
        recompress_batch,
        recompress_pause,
        recompress_estimate
    ]
);

/// `value` as a fresh copy of itself: a variable-length value detoasted (decompressed, fetched
/// from the TOAST table), so that writing it compresses it anew with the column's method.
/// Written by each UPDATE of `recompress`; unlike `c || ''` it keeps any type's value as it is.
#[pg_extern(immutable, strict, parallel_safe)]
fn fresh_copy(value: AnyElement) -> AnyElement {
    if !is_varlena(value.oid()) {
        return value;
    }
    // SAFETY: a non-NULL varlena of the argument's type.
    unsafe { AnyElement::from_polymorphic_datum(toast::fresh_copy(value.datum()), false, value.oid()) }.unwrap_or(value)
}

/// Whether the UPDATE of a `recompress` batch rewrites `value`, of the row version at `ctid`
/// (its WHERE): a new write would store it differently, and the batch has room for it. False
/// outside `CALL compresslab.recompress`.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn recompress_wanted(value: AnyElement, ctid: pg_sys::ItemPointerData) -> bool {
    is_varlena(value.oid()) && rewrite::wanted(value.datum(), ctid)
}

/// The value the UPDATE of a `recompress` batch writes: a fresh copy of `value`, whose digest
/// the batch keeps to check the value read back (outside `CALL compresslab.recompress`, the
/// copy alone, as [`fresh_copy`]).
#[pg_extern(volatile, strict, parallel_unsafe)]
fn recompress_copy(value: AnyElement) -> AnyElement {
    if !is_varlena(value.oid()) {
        return value;
    }
    let copy = rewrite::copy(value.datum());
    // SAFETY: a non-NULL varlena of the argument's type (the batch checked the column).
    unsafe { AnyElement::from_polymorphic_datum(copy, false, value.oid()) }.unwrap_or(value)
}

/// Called by the RETURNING of a `recompress` batch's UPDATE for each row version it wrote: the
/// number of the digest of its value; NULL outside `CALL compresslab.recompress`.
#[pg_extern(volatile, parallel_unsafe)]
fn recompress_copied() -> Option<i64> {
    rewrite::copied()
}

/// The next transaction ID PostgreSQL will assign (as a number); with `only_if_idle`, NULL
/// unless every ID assigned so far belongs to a finished transaction. `recompress` reads it
/// when a pass begins (idle) and when it ends: if no ID was assigned in between but one per
/// batch of its own, no other session wrote the table (a write needs one), so no row moved
/// behind the pass and no further pass is needed.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn recompress_next_xid(only_if_idle: bool) -> Option<i64> {
    rewrite::next_xid(only_if_idle)
}

/// Every check `recompress` makes before it changes anything, and its plan: the method, the
/// `ALTER TABLE ... SET COMPRESSION` statements still needed (the table and each partition:
/// the statement does not recurse), the tables whose rows it rewrites (the table, or each leaf
/// partition), the bytes a batch may hold and `max_wal_rate` in bytes a second.
#[pg_extern(volatile, parallel_unsafe, name = "recompress_prepare")]
#[allow(clippy::too_many_arguments)]
fn recompress_prepare_checked(
    relation: Option<RegClass>,
    column_name: Option<&str>,
    method: Option<&str>,
    batch_rows: Option<i32>,
    max_wal_rate: Option<&str>,
    max_replay_lag: Option<Interval>,
    lock_timeout: Option<Interval>,
    triggers: Option<&str>,
    dry_run: Option<bool>,
) -> TableIterator<
    'static,
    (
        name!(method, String),
        name!(alter_statements, Vec<String>),
        name!(target, String),
        name!(leaves, Vec<pg_sys::Oid>),
        name!(leaf_targets, Vec<String>),
        name!(batch_bytes, i64),
        name!(wal_rate, Option<f64>),
        name!(lock_timeout_ms, i64),
    ),
> {
    let plan = prepare(
        relation,
        column_name,
        method,
        batch_rows,
        max_wal_rate,
        max_replay_lag,
        lock_timeout.map(seconds),
        triggers,
        dry_run,
    );
    TableIterator::once((
        plan.method.name().to_string(),
        plan.alter_statements,
        plan.target,
        plan.leaves,
        plan.leaf_targets,
        plan.batch_bytes,
        plan.wal_rate,
        plan.lock_timeout_ms,
    ))
}

/// 0.7.0's `recompress_prepare` (no `lock_timeout`, fewer columns), which its procedure calls
/// until `ALTER EXTENSION compresslab UPDATE` has run: the same checks, `lock_timeout` taken as
/// its 1 s default. No SQL of this release names it.
#[pg_extern(volatile, parallel_unsafe, sql = false)]
#[allow(clippy::too_many_arguments)]
fn recompress_prepare(
    relation: Option<RegClass>,
    column_name: Option<&str>,
    method: Option<&str>,
    batch_rows: Option<i32>,
    max_wal_rate: Option<&str>,
    max_replay_lag: Option<Interval>,
    triggers: Option<&str>,
    dry_run: Option<bool>,
) -> TableIterator<
    'static,
    (
        name!(method, String),
        name!(alter_statements, Vec<String>),
        name!(leaves, Vec<pg_sys::Oid>),
        name!(batch_bytes, i64),
        name!(wal_rate, Option<f64>),
    ),
> {
    let plan =
        prepare(relation, column_name, method, batch_rows, max_wal_rate, max_replay_lag, Some(1.0), triggers, dry_run);
    TableIterator::once((
        plan.method.name().to_string(),
        plan.alter_statements,
        plan.leaves,
        plan.batch_bytes,
        plan.wal_rate,
    ))
}

#[allow(clippy::too_many_arguments)]
fn prepare(
    relation: Option<RegClass>,
    column_name: Option<&str>,
    method: Option<&str>,
    batch_rows: Option<i32>,
    max_wal_rate: Option<&str>,
    max_replay_lag: Option<Interval>,
    lock_timeout: Option<f64>,
    triggers: Option<&str>,
    dry_run: Option<bool>,
) -> rewrite::Plan {
    rewrite::prepare(&rewrite::Call {
        relid: required(relation, "relation").oid(),
        column: required(column_name, "column_name"),
        method,
        batch_rows: required(batch_rows, "batch_rows"),
        max_wal_rate,
        max_replay_lag: max_replay_lag.map(seconds),
        lock_timeout,
        triggers: parse_named::<Triggers>(required(triggers, "triggers")).or_raise(),
        dry_run: required(dry_run, "dry_run"),
    })
}

fn seconds(interval: Interval) -> f64 {
    interval.as_micros() as f64 / 1e6
}

/// Rewrites one batch of `column_name` of the table `relation` (a leaf: not a partitioned
/// table) from `first_block`: at most `batch_rows` rows and `batch_bytes` bytes of values
/// (a block's rows all, once started). Only values a new write would store differently; each
/// checked byte for byte after its rewrite (a difference aborts the batch). `dry_run`: reads
/// and counts only, `bytes_after` being what TOAST's compression gives each value and
/// `wal_bytes` the WAL the rewrite would write (each new row version in full). Returns
/// where the next batch starts, the table's blocks, the rows read, rewritten and skipped
/// (changed by another session meanwhile), the stored bytes before and after, and the WAL
/// written.
#[pg_extern(volatile, parallel_unsafe)]
#[allow(clippy::too_many_arguments)]
fn recompress_batch(
    relation: Option<RegClass>,
    column_name: Option<&str>,
    method: Option<&str>,
    first_block: Option<i64>,
    batch_rows: Option<i32>,
    batch_bytes: Option<i64>,
    dry_run: Option<bool>,
) -> TableIterator<
    'static,
    (
        name!(next_block, i64),
        name!(total_blocks, i64),
        name!(rows_examined, i64),
        name!(rows_rewritten, i64),
        name!(rows_skipped, i64),
        name!(bytes_before, i64),
        name!(bytes_after, i64),
        name!(wal_bytes, i64),
    ),
> {
    let relid = required(relation, "relation").oid();
    let column_name = required(column_name, "column_name");
    let method = required(method, "method");
    let first_block = required(first_block, "first_block");
    let batch_rows = required(batch_rows, "batch_rows");
    let batch_bytes = required(batch_bytes, "batch_bytes");
    let column = rewrite::checked_column(relid, column_name);
    if column.relkind != b'r' {
        report(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!(
                "{} is a partitioned table: its partitions hold its rows",
                relation_name(relid).unwrap_or_default()
            ),
            Some("CALL compresslab.recompress on it rewrites each partition in turn."),
        );
    }
    let method = ToastCompression::from_setting(method);
    let (Some(method), true) = (method, first_block >= 0 && batch_rows >= 1 && batch_bytes >= 1) else {
        raise(CodecError::invalid(
            "method must be 'pglz' or 'lz4', first_block at least 0, batch_rows and batch_bytes at least 1",
        ))
    };
    let dry_run = required(dry_run, "dry_run");
    let done = rewrite::run_batch(&rewrite::BatchSpec {
        relid,
        column: column_name,
        method,
        first_block: first_block as u64,
        batch_rows: batch_rows as u32,
        batch_bytes,
        dry_run,
    });
    TableIterator::once((
        done.next_block as i64,
        done.total_blocks as i64,
        done.examined,
        done.rewritten,
        done.skipped,
        done.bytes_before,
        done.bytes_after,
        if dry_run { done.wal_estimate } else { done.wal_written },
    ))
}

/// Seconds to pause after writing `wal_bytes` of WAL in `seconds` so the average stays at or
/// under `wal_rate` bytes a second.
#[pg_extern(immutable, strict, parallel_safe)]
fn recompress_pause(wal_bytes: i64, seconds: f64, wal_rate: f64) -> f64 {
    plan::pause_seconds(wal_bytes as f64, seconds, wal_rate)
}

/// What rewriting `rows` values that store `bytes_after` bytes once recompressed costs: the
/// WAL it writes, and the seconds it takes at `wal_rate` bytes a second (NULL: full speed).
#[pg_extern(immutable, parallel_safe)]
fn recompress_estimate(
    rows: i64,
    bytes_after: i64,
    wal_rate: Option<f64>,
) -> TableIterator<'static, (name!(wal_bytes, i64), name!(seconds, f64))> {
    let e = plan::estimate(rows as f64, bytes_after as f64, wal_rate);
    TableIterator::once((e.wal_bytes.round() as i64, e.seconds))
}
