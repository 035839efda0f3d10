//! `CALL compresslab.recompress(...)`: recompresses a column's existing values in place,
//! online. The procedure itself is plpgsql (`rewrite.sql`: it COMMITs between batches, which a
//! Rust function cannot); it calls these functions, each of which works in the caller's
//! transaction: [`recompress_prepare`] checks the call and plans it, [`recompress_batch`]
//! rewrites one batch (`crate::server::rewrite`) with an UPDATE whose WHERE calls
//! [`recompress_wanted`], which writes [`recompress_copy`] and returns [`recompress_copied`];
//! [`fresh_copy`] is a fresh copy of any value, [`recompress_pause`] and [`recompress_estimate`] the throttle and the cost.

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::rewrite;
use compresslab_core::CodecError;
use pgrx::datum::Interval;
use pgrx::prelude::*;
use pgrx::{AnyElement, FromDatum, IntoDatum, PgSqlErrorCode};

use crate::errors::{raise, report, required, OrRaise};
use crate::server::names::{quote_identifier, relation_name};
use crate::server::privileges::permission_denied;
use crate::server::relations::RegClass;
use crate::server::rewrite::{check_caller, execute, kept_plan, run_batch, text_column, typed_column, BatchSpec};
use crate::server::sampling::spi_failed;
use crate::server::spi;

extension_sql_file!(
    "rewrite.sql",
    name = "recompress",
    requires = [
        fresh_copy,
        recompress_wanted,
        recompress_copy,
        recompress_copied,
        recompress_next_xid,
        recompress_prepare,
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
    // SAFETY: a catalog lookup of the argument's type.
    if unsafe { pg_sys::get_typlen(value.oid()) } != -1 {
        return value;
    }
    // SAFETY: a varlena datum (typlen -1); the copy is palloc'd in the caller's context, and a
    // non-NULL datum of the same type is what from_polymorphic_datum wraps.
    unsafe {
        let copy = pg_sys::pg_detoast_datum_copy(value.datum().cast_mut_ptr());
        AnyElement::from_polymorphic_datum(pg_sys::Datum::from(copy), false, value.oid()).unwrap_or(value)
    }
}

/// Whether the UPDATE of a `recompress` batch rewrites `value`, of the row version at `ctid`
/// (its WHERE): a new write would store it differently, and the batch has room for it. False
/// outside `CALL compresslab.recompress`.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn recompress_wanted(value: AnyElement, ctid: pg_sys::ItemPointerData) -> bool {
    is_varlena(value.oid()) && crate::server::rewrite::wanted(value.datum(), ctid)
}

/// The value the UPDATE of a `recompress` batch writes: a fresh copy of `value`, whose digest
/// the batch keeps to check the value read back (outside `CALL compresslab.recompress`, the
/// copy alone, as [`fresh_copy`]).
#[pg_extern(volatile, strict, parallel_unsafe)]
fn recompress_copy(value: AnyElement) -> AnyElement {
    if !is_varlena(value.oid()) {
        return value;
    }
    let copy = crate::server::rewrite::copy(value.datum());
    // SAFETY: a non-NULL varlena of the argument's type (the batch checked the column).
    unsafe { AnyElement::from_polymorphic_datum(copy, false, value.oid()) }.unwrap_or(value)
}

/// Called by the RETURNING of a `recompress` batch's UPDATE for each row version it wrote: the
/// number of the digest of its value; NULL outside `CALL compresslab.recompress`.
#[pg_extern(volatile, parallel_unsafe)]
fn recompress_copied() -> Option<i64> {
    crate::server::rewrite::copied()
}

/// The next transaction ID PostgreSQL will assign (as a number); with `only_if_idle`, NULL
/// unless every ID assigned so far belongs to a finished transaction. `recompress` reads it
/// when a pass begins (idle) and when it ends: if no ID was assigned in between but one per
/// batch of its own, no other session wrote the table (a write needs one), so no row moved
/// behind the pass and no further pass is needed.
#[pg_extern(volatile, strict, parallel_unsafe)]
fn recompress_next_xid(only_if_idle: bool) -> Option<i64> {
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

/// Whether values of type `oid` are variable-length (remembered for the last type asked: an
/// UPDATE asks for one type each row).
fn is_varlena(oid: pg_sys::Oid) -> bool {
    thread_local! {
        static LAST: std::cell::Cell<Option<(pg_sys::Oid, bool)>> = const { std::cell::Cell::new(None) };
    }
    LAST.with(|last| match last.get() {
        Some((known, varlena)) if known == oid => varlena,
        _ => {
            // SAFETY: a catalog lookup of the argument's type.
            let varlena = unsafe { pg_sys::get_typlen(oid) } == -1;
            last.set(Some((oid, varlena)));
            varlena
        }
    })
}

/// A column of a table as `recompress` needs it.
struct Column {
    relkind: String,
    attnum: i16,
    attlen: i32,
    storage: String,
    generated: String,
    compression: String,
    type_name: String,
}

/// The column `name` of table `relid`, refused (with the SQLSTATE a DBA acts on) unless its
/// values are ones TOAST compresses and an UPDATE may write.
fn checked_column(relid: pg_sys::Oid, name: &str) -> Column {
    let query = "SELECT c.relkind::pg_catalog.text, a.attnum, a.attlen::pg_catalog.int4, a.attstorage::pg_catalog.text, \
                        a.attgenerated::pg_catalog.text, a.attcompression::pg_catalog.text, \
                        pg_catalog.format_type(a.atttypid, a.atttypmod) \
                   FROM pg_catalog.pg_class c LEFT JOIN pg_catalog.pg_attribute a \
                     ON a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) $2::pg_catalog.name \
                    AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped \
                  WHERE c.oid OPERATOR(pg_catalog.=) $1";
    // a kept plan: each batch checks the column again (it may have changed between batches)
    let found = Spi::connect(|_| {
        let plan = kept_plan(query, &[pg_sys::OIDOID, pg_sys::TEXTOID]);
        if execute(plan, &[relid.into_datum(), name.into_datum()], true) == 0 {
            return None;
        }
        let text = |i: i32| text_column(0, i).unwrap_or_default();
        Some(Column {
            relkind: text(1),
            attnum: typed_column::<i16>(0, 2).unwrap_or(0),
            attlen: typed_column::<i32>(0, 3).unwrap_or(0),
            storage: text(4),
            generated: text(5),
            compression: text(6),
            type_name: text(7),
        })
    });
    let Some(column) = found else {
        report(
            PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE,
            format!("relation with OID {} does not exist", relid.to_u32()),
            None,
        )
    };
    let table = relation_name(relid).unwrap_or_default();
    let refuse = |code, message: String, hint: &str| -> ! { report(code, message, Some(hint)) };
    if !matches!(column.relkind.as_str(), "r" | "p") {
        refuse(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("{table} is not a table"),
            "recompress rewrites the rows of a table or a partitioned table.",
        );
    }
    if column.attnum == 0 {
        refuse(
            PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
            format!("column {} of {table} does not exist", quote_identifier(name)),
            "Name the column as it is spelled, without quotes.",
        );
    }
    let named = format!("column {} of {table}", quote_identifier(name));
    if column.attlen != -1 || column.storage == "p" {
        refuse(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("{named} is of type {}, whose values TOAST never compresses", column.type_name),
            "Only variable-length types (text, bytea, jsonb, arrays, ...) are compressed.",
        );
    }
    if !column.generated.is_empty() {
        refuse(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("{named} is a generated column: an UPDATE cannot write it"),
            "Its values are computed anew when a row's other columns change; SET COMPRESSION alone applies to those.",
        );
    }
    if column.storage == "e" {
        refuse(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("{named} has STORAGE EXTERNAL: TOAST stores its values uncompressed"),
            "ALTER TABLE ... ALTER COLUMN ... SET STORAGE EXTENDED (or MAIN) first if its values should be compressed.",
        );
    }
    column
}

/// The method to recompress with: `method`, or the column's own, or `default_toast_compression`.
fn target_method(method: Option<&str>, column: &Column) -> String {
    let column_method = column.compression.bytes().next().and_then(ToastCompression::from_attcompression);
    let method = match (method, column_method) {
        (Some(m), _) => m.to_string(),
        (None, Some(m)) => m.setting().to_string(),
        (None, None) => {
            spi::select_one::<String>("SELECT pg_catalog.current_setting('default_toast_compression')", &[])
                .unwrap_or_else(|e| spi_failed(e))
                .unwrap_or_default()
        }
    };
    match ToastCompression::from_setting(&method) {
        Some(m) => m.setting().to_string(),
        None => raise(CodecError::invalid(format!("method must be 'pglz' or 'lz4' (TOAST's methods), got {method:?}"))),
    }
}

/// Every check `recompress` makes before it changes anything, and its plan: the method, the
/// `ALTER TABLE ... SET COMPRESSION` statements still needed (the table and each partition:
/// the statement does not recurse), the tables whose rows it rewrites (the table, or each leaf
/// partition), the bytes a batch may hold and `max_wal_rate` in bytes a second.
#[pg_extern(volatile, parallel_unsafe)]
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
    let relid = required(relation, "relation").oid();
    let column_name = required(column_name, "column_name");
    let triggers = required(triggers, "triggers");
    let dry_run = required(dry_run, "dry_run");
    let batch_rows = required(batch_rows, "batch_rows");
    if batch_rows < 1 {
        raise(CodecError::invalid(format!("batch_rows must be at least 1, got {batch_rows}")));
    }
    let column = checked_column(relid, column_name);
    let method = target_method(method, &column);
    let wal_rate = max_wal_rate.map(|r| rewrite::parse_rate(r).or_raise());
    if !matches!(triggers, "refuse" | "fire" | "skip") {
        raise(CodecError::invalid(format!("triggers must be 'refuse', 'fire' or 'skip', got {triggers:?}")));
    }
    // SAFETY: catalog lookups on the current user.
    let superuser = unsafe { pg_sys::superuser() };
    if triggers == "skip" && !superuser {
        permission_denied(
            "permission denied to skip triggers (triggers => 'skip')".into(),
            "Skipping triggers sets session_replication_role, which only a superuser may; triggers => 'fire' runs them.",
        );
    }
    if max_replay_lag.is_some()
        && !spi::select_one::<bool>("SELECT pg_catalog.pg_has_role('pg_read_all_stats', 'USAGE')", &[])
            .ok()
            .flatten()
            .unwrap_or(false)
    {
        permission_denied(
            "permission denied to watch the standbys' replay_lag (max_replay_lag)".into(),
            "pg_stat_replication shows replay_lag only to members of pg_read_all_stats: GRANT it, or leave max_replay_lag NULL.",
        );
    }
    let tree = relation_tree(relid, column_name);
    let method_char = ToastCompression::from_setting(&method).map_or('p', |m| m.attcompression() as char).to_string();
    let col = quote_identifier(column_name);
    let mut alters = Vec::new();
    let mut leaves = Vec::new();
    for (oid, relkind, compression) in tree {
        let name = relation_name(oid).unwrap_or_default();
        // a foreign table among the partitions compresses nothing here: no statement
        if compression != method_char && matches!(relkind.as_str(), "r" | "p") {
            alters.push(format!("ALTER TABLE {name} ALTER COLUMN {col} SET COMPRESSION {method}"));
        }
        if relkind != "r" {
            continue;
        }
        // SAFETY: a table of the tree just read; the lock is held to the transaction's end.
        let rel = unsafe { pgrx::PgRelation::with_lock(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE) };
        check_caller(&rel, &name, column_name, dry_run);
        leaves.push(oid);
    }
    if !dry_run {
        user_triggers(&leaves, triggers);
    }
    for cost in update_costs(relid, column.attnum) {
        notice!("compresslab.recompress: {cost}");
    }
    TableIterator::once((method, alters, leaves, rewrite::batch_bytes(wal_rate), wal_rate))
}

/// The table and every partition below it (parents first): OID, relkind and the column's
/// compression.
fn relation_tree(relid: pg_sys::Oid, column: &str) -> Vec<(pg_sys::Oid, String, String)> {
    let query = "SELECT r.relid, c.relkind::pg_catalog.text, a.attcompression::pg_catalog.text \
                   FROM (SELECT $1 AS relid, 0 AS level \
                         UNION SELECT t.relid::pg_catalog.oid, t.level FROM pg_catalog.pg_partition_tree($1) t) r \
                   JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.relid \
                   JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) r.relid \
                    AND a.attname OPERATOR(pg_catalog.=) $2::pg_catalog.name AND NOT a.attisdropped \
                  ORDER BY r.level, r.relid";
    Spi::connect(|client| {
        let rows = client.select(query, None, &[relid.into(), column.into()]).unwrap_or_else(|e| spi_failed(e));
        rows.map(|row| {
            let text = |i: usize| row.get::<String>(i).ok().flatten().unwrap_or_default();
            (row.get::<pg_sys::Oid>(1).ok().flatten().unwrap_or(relid), text(2), text(3))
        })
        .collect()
    })
}

/// What an UPDATE of the column costs beyond its own row, said before it runs: an indexed
/// column gets no HOT updates, a key column's rows are locked for keys, REPLICA IDENTITY FULL
/// logs each old row whole, a published table sends every row to its subscribers.
fn update_costs(relid: pg_sys::Oid, attnum: i16) -> Vec<String> {
    let query = "SELECT EXISTS (SELECT FROM pg_catalog.pg_index i WHERE i.indrelid OPERATOR(pg_catalog.=) $1 \
                                 AND $2 OPERATOR(pg_catalog.=) ANY (i.indkey::pg_catalog.int2[])), \
                        EXISTS (SELECT FROM pg_catalog.pg_constraint c WHERE c.conrelid OPERATOR(pg_catalog.=) $1 \
                                 AND c.contype OPERATOR(pg_catalog.=) ANY ('{p,u,f}'::pg_catalog.\"char\"[]) \
                                 AND $2 OPERATOR(pg_catalog.=) ANY (c.conkey)), \
                        (SELECT c.relreplident OPERATOR(pg_catalog.=) 'f' FROM pg_catalog.pg_class c \
                          WHERE c.oid OPERATOR(pg_catalog.=) $1), \
                        EXISTS (SELECT FROM pg_catalog.pg_publication p WHERE p.puballtables) \
                        OR EXISTS (SELECT FROM pg_catalog.pg_publication_rel r WHERE r.prrelid OPERATOR(pg_catalog.=) $1)";
    let flags: Vec<bool> = Spi::connect(|client| {
        let rows = client.select(query, Some(1), &[relid.into(), attnum.into()]).unwrap_or_else(|e| spi_failed(e));
        let row = rows.first();
        (1..=4).map(|i| row.get::<bool>(i).ok().flatten().unwrap_or(false)).collect()
    });
    let said = [
        "the column is indexed: no rewrite is a HOT update, every index of the table gains an entry per row (until VACUUM)",
        "the column is in a primary, unique or foreign key: each rewrite locks its row as a key update does, and checks the key",
        "the table has REPLICA IDENTITY FULL: the WAL of each rewrite holds the old row whole, its values detoasted",
        "the table is published: logical subscribers receive every row rewritten",
    ];
    flags.iter().zip(said).filter(|(on, _)| **on).map(|(_, s)| s.to_string()).collect()
}

/// Refuses a table with user row triggers on UPDATE unless `triggers` says what to do: an
/// UPDATE fires them (audit rows, `updated_at`), though no value changes.
fn user_triggers(leaves: &[pg_sys::Oid], triggers: &str) {
    let query =
        "SELECT pg_catalog.string_agg(pg_catalog.format('%I on %s', g.tgname, g.tgrelid::pg_catalog.regclass), ', ' \
                                              ORDER BY g.tgrelid, g.tgname) \
                   FROM pg_catalog.pg_trigger g \
                  WHERE g.tgrelid OPERATOR(pg_catalog.=) ANY ($1) AND NOT g.tgisinternal \
                    AND g.tgenabled OPERATOR(pg_catalog.<>) 'D' \
                    AND (g.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 17) OPERATOR(pg_catalog.=) 17";
    let found = spi::select_one::<String>(query, &[leaves.to_vec().into()]).unwrap_or_else(|e| spi_failed(e));
    let Some(found) = found else { return };
    match triggers {
        "refuse" => report(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("recompress rewrites rows with UPDATE, which fires the row triggers {found}"),
            Some("Say what to do: triggers => 'fire' runs them for every row rewritten (audit rows, updated_at), triggers => 'skip' (superuser) sets session_replication_role = replica for each batch, which also skips rules and foreign-key checks, but not triggers enabled ALWAYS or REPLICA."),
        ),
        "fire" => notice!("compresslab.recompress: the row triggers {found} fire for every row rewritten"),
        _ => notice!("compresslab.recompress: the row triggers {found} are skipped (session_replication_role = replica in each batch)"),
    }
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
    let column = checked_column(relid, column_name);
    if column.relkind != "r" {
        report(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!(
                "{} is a partitioned table: its partitions hold its rows",
                relation_name(relid).unwrap_or_default()
            ),
            Some("CALL compresslab.recompress on it rewrites each partition in turn."),
        );
    }
    if ToastCompression::from_setting(method).is_none() || first_block < 0 || batch_rows < 1 || batch_bytes < 1 {
        raise(CodecError::invalid(
            "method must be 'pglz' or 'lz4', first_block at least 0, batch_rows and batch_bytes at least 1",
        ));
    }
    // SAFETY: a counter of this backend, read in its own (single) thread.
    let wal_before = unsafe { pg_sys::pgWalUsage.wal_bytes as i64 };
    let dry_run = required(dry_run, "dry_run");
    let done = run_batch(&BatchSpec {
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
        if dry_run { done.wal_estimate } else { done.wal_total - wal_before },
    ))
}

/// Seconds to pause after writing `wal_bytes` of WAL in `seconds` so the average stays at or
/// under `wal_rate` bytes a second.
#[pg_extern(immutable, strict, parallel_safe)]
fn recompress_pause(wal_bytes: i64, seconds: f64, wal_rate: f64) -> f64 {
    rewrite::pause_seconds(wal_bytes as f64, seconds, wal_rate)
}

/// What rewriting `rows` values that store `bytes_after` bytes once recompressed costs: the
/// WAL it writes, and the seconds it takes at `wal_rate` bytes a second (NULL: full speed).
#[pg_extern(immutable, parallel_safe)]
fn recompress_estimate(
    rows: i64,
    bytes_after: i64,
    wal_rate: Option<f64>,
) -> TableIterator<'static, (name!(wal_bytes, i64), name!(seconds, f64))> {
    let e = rewrite::estimate(rows as f64, bytes_after as f64, wal_rate);
    TableIterator::once((e.wal_bytes.round() as i64, e.seconds))
}
