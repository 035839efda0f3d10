//! What `recompress` checks and plans before it changes anything: the column (one TOAST
//! compresses and an UPDATE may write), the method, the caller's privileges on every table
//! holding its rows, its triggers, and the statements still needed to set the column's method.

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::registry::Named;
use compresslab_core::rewrite::{self, Triggers};
use compresslab_core::CodecError;
use pgrx::prelude::*;
use pgrx::{IntoDatum, PgRelation, PgSqlErrorCode};

use super::owner_of;
use crate::errors::{raise, report, OrRaise};
use crate::server::catalog::names::{quote_identifier, relation_name};
use crate::server::catalog::privileges::permission_denied;
use crate::server::catalog::spi::{self, execute, kept_plan, spi_failed, text_column, typed_column};
use crate::server::heap;

/// A checked call's plan: the method, the `ALTER TABLE ... SET COMPRESSION` statements still
/// needed (the table and each table below it), the tables whose rows it rewrites (the table,
/// each leaf partition, each inheritance child) and each one's `table.column` as the NOTICEs
/// name it (quoted as the statements compresslab prints are: on one line), the bytes a batch
/// may hold, `max_wal_rate` in bytes a second and `lock_timeout` in milliseconds.
pub struct Plan {
    pub method: ToastCompression,
    pub alter_statements: Vec<String>,
    /// The table's `table.column`.
    pub target: String,
    pub leaves: Vec<pg_sys::Oid>,
    pub leaf_targets: Vec<String>,
    pub batch_bytes: i64,
    pub wal_rate: Option<f64>,
    pub lock_timeout_ms: i64,
}

/// What the caller asked `recompress` for.
pub struct Call<'a> {
    pub relid: pg_sys::Oid,
    pub column: &'a str,
    pub method: Option<&'a str>,
    pub batch_rows: i32,
    pub max_wal_rate: Option<&'a str>,
    /// `max_replay_lag` in seconds.
    pub max_replay_lag: Option<f64>,
    /// `lock_timeout` in seconds.
    pub lock_timeout: Option<f64>,
    pub triggers: Triggers,
    pub dry_run: bool,
}

/// Every check `recompress` makes before it changes anything, and its [`Plan`].
pub fn prepare(call: &Call) -> Plan {
    if call.batch_rows < 1 {
        raise(CodecError::invalid(format!("batch_rows must be at least 1, got {}", call.batch_rows)));
    }
    let lock_timeout_ms = rewrite::lock_timeout_ms(call.lock_timeout).or_raise();
    rewrite::check_replay_lag(call.max_replay_lag).or_raise();
    // SAFETY: reads the shared recovery state.
    if !call.dry_run && unsafe { pg_sys::RecoveryInProgress() } {
        report(
            PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
            "recompress rewrites rows, which a standby cannot: run it on the primary".into(),
            Some("The rewritten values reach the standbys through the WAL; dry_run => true runs here."),
        );
    }
    let column = checked_column(call.relid, call.column);
    let method = target_method(call.method, &column);
    let wal_rate = call.max_wal_rate.map(|r| rewrite::parse_rate(r).or_raise());
    // SAFETY: catalog lookups on the current user.
    let superuser = unsafe { pg_sys::superuser() };
    if call.triggers == Triggers::Skip && !superuser {
        permission_denied(
            "permission denied to skip triggers (triggers => 'skip')".into(),
            "Skipping triggers sets session_replication_role, which only a superuser may; triggers => 'fire' runs them.",
        );
    }
    if call.max_replay_lag.is_some()
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
    let col = quote_identifier(call.column);
    let mut alter_statements = Vec::new();
    let mut leaves = Vec::new();
    let mut leaf_targets = Vec::new();
    for (oid, relkind, compression) in relation_tree(call.relid, call.column) {
        let name = relation_name(oid).unwrap_or_default();
        // a foreign table among the partitions compresses nothing here: no statement
        if compression != Some(method) && matches!(relkind, b'r' | b'p') {
            alter_statements.push(format!("ALTER TABLE {name} ALTER COLUMN {col} SET COMPRESSION {}", method.name()));
        }
        if relkind != b'r' {
            continue;
        }
        // SAFETY: a table of the tree just read; the lock is held to the transaction's end.
        let rel = unsafe { PgRelation::with_lock(oid, pg_sys::AccessShareLock as pg_sys::LOCKMODE) };
        check_caller(&rel, &name, call.column, call.dry_run);
        leaves.push(oid);
        leaf_targets.push(format!("{name}.{col}"));
    }
    if !call.dry_run {
        user_triggers(&leaves, call.triggers);
    }
    for cost in update_costs(call.relid, column.attnum) {
        notice!("compresslab.recompress: {cost}");
    }
    Plan {
        method,
        alter_statements,
        target: format!("{}.{col}", relation_name(call.relid).unwrap_or_default()),
        leaves,
        leaf_targets,
        batch_bytes: rewrite::batch_bytes(wal_rate),
        wal_rate,
        lock_timeout_ms,
    }
}

/// A column of a table as `recompress` needs it.
pub struct Column {
    /// `pg_class.relkind` of its table.
    pub relkind: u8,
    pub attnum: i16,
    attlen: i32,
    /// `pg_attribute.attstorage`: `p`, `e`, `m` or `x`.
    storage: u8,
    generated: bool,
    /// Its own compression; None: it follows `default_toast_compression`.
    compression: Option<ToastCompression>,
    type_name: String,
}

/// The column `name` of table `relid`, refused (with the SQLSTATE a DBA acts on) unless its
/// values are ones TOAST compresses and an UPDATE may write.
pub fn checked_column(relid: pg_sys::Oid, name: &str) -> Column {
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
        let code = |i: i32| text(i).bytes().next().unwrap_or(0);
        Some(Column {
            relkind: code(1),
            attnum: typed_column::<i16>(0, 2).unwrap_or(0),
            attlen: typed_column::<i32>(0, 3).unwrap_or(0),
            storage: code(4),
            generated: code(5) != 0,
            compression: ToastCompression::from_attcompression(code(6)),
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
    if !matches!(column.relkind, b'r' | b'p') {
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
    if column.attlen != -1 || column.storage == b'p' {
        refuse(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("{named} is of type {}, whose values TOAST never compresses", column.type_name),
            "Only variable-length types (text, bytea, jsonb, arrays, ...) are compressed.",
        );
    }
    if column.generated {
        refuse(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("{named} is a generated column: an UPDATE cannot write it"),
            "Its values are computed anew when a row's other columns change; SET COMPRESSION alone applies to those.",
        );
    }
    if column.storage == b'e' {
        refuse(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("{named} has STORAGE EXTERNAL: TOAST stores its values uncompressed"),
            "ALTER TABLE ... ALTER COLUMN ... SET STORAGE EXTENDED (or MAIN) first if its values should be compressed.",
        );
    }
    column
}

/// The method to recompress with: `method`, or the column's own, or `default_toast_compression`.
fn target_method(method: Option<&str>, column: &Column) -> ToastCompression {
    let method = match (method, column.compression) {
        (Some(m), _) => m.to_string(),
        (None, Some(m)) => return m,
        (None, None) => {
            spi::select_one::<String>("SELECT pg_catalog.current_setting('default_toast_compression')", &[])
                .unwrap_or_else(|e| spi_failed(e))
                .unwrap_or_default()
        }
    };
    ToastCompression::from_setting(&method).unwrap_or_else(|| {
        raise(CodecError::invalid(format!("method must be 'pglz' or 'lz4' (TOAST's methods), got {method:?}")))
    })
}

/// The table and every table below it, partitions and inheritance children alike (parents
/// first; a child of two parents once): OID, relkind and the column's compression (None:
/// `default_toast_compression`).
fn relation_tree(relid: pg_sys::Oid, column: &str) -> Vec<(pg_sys::Oid, u8, Option<ToastCompression>)> {
    let query = "WITH RECURSIVE tree(relid, level) AS ( \
                     SELECT $1, 0 \
                     UNION ALL \
                     SELECT i.inhrelid, t.level OPERATOR(pg_catalog.+) 1 \
                       FROM tree t JOIN pg_catalog.pg_inherits i ON i.inhparent OPERATOR(pg_catalog.=) t.relid) \
                 SELECT r.relid, c.relkind::pg_catalog.text, a.attcompression::pg_catalog.text \
                   FROM (SELECT t.relid, pg_catalog.min(t.level) AS level FROM tree t GROUP BY t.relid) r \
                   JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.relid \
                   JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) r.relid \
                    AND a.attname OPERATOR(pg_catalog.=) $2::pg_catalog.name AND NOT a.attisdropped \
                  ORDER BY r.level, r.relid";
    Spi::connect(|client| {
        let rows = client.select(query, None, &[relid.into(), column.into()]).unwrap_or_else(|e| spi_failed(e));
        rows.map(|row| {
            let code = |i: usize| row.get::<String>(i).ok().flatten().and_then(|t| t.bytes().next()).unwrap_or(0);
            (
                row.get::<pg_sys::Oid>(1).ok().flatten().unwrap_or(relid),
                code(2),
                ToastCompression::from_attcompression(code(3)),
            )
        })
        .collect()
    })
}

/// What the caller must be allowed before a batch reads `column` of `rel` without a query (a
/// dry run's heap scan) or rewrites it as the table's owner: SELECT on the column, and UPDATE
/// unless it only reads; and no row-level security applying to it, since neither the heap
/// scan nor the owner's UPDATE would apply the caller's policies. Returns the column's number.
pub fn check_caller(rel: &PgRelation, table: &str, column: &str, dry_run: bool) -> i16 {
    let name = std::ffi::CString::new(column)
        .unwrap_or_else(|_| raise(CodecError::invalid("column name contains a NUL byte")));
    // SAFETY: a catalog lookup of an open relation's column.
    let attnum = unsafe { pg_sys::get_attnum(rel.oid(), name.as_ptr()) };
    if attnum <= 0 {
        report(
            PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
            format!("{table} has no column {}", quote_identifier(column)),
            None,
        )
    }
    let may = |mode: u32| {
        // SAFETY: privilege lookups of an open relation and its column, as the current user.
        unsafe {
            let user = pg_sys::GetUserId();
            pg_sys::pg_class_aclcheck(rel.oid(), user, mode as pg_sys::AclMode) == pg_sys::AclResult::ACLCHECK_OK
                || pg_sys::pg_attribute_aclcheck(rel.oid(), attnum, user, mode as pg_sys::AclMode)
                    == pg_sys::AclResult::ACLCHECK_OK
        }
    };
    if !may(pg_sys::ACL_SELECT) || !(dry_run || may(pg_sys::ACL_UPDATE)) {
        permission_denied(
            format!("permission denied for table {table}"),
            "recompress reads the column (SELECT) and rewrites it (UPDATE) in each table holding its rows: the table's owner, or a role granted both on the column.",
        );
    }
    refuse_row_security(rel, table);
    attnum
}

/// Refuses a caller to whom row-level security applies on `rel` and who is not its owner: as
/// the owner, the rewrite would reach rows the caller cannot see.
fn refuse_row_security(rel: &PgRelation, table: &str) {
    // SAFETY: the backend's current user.
    let user = unsafe { pg_sys::GetUserId() };
    if heap::row_security_applies(rel.oid()) && owner_of(rel) != user {
        permission_denied(
            format!("row-level security applies to you on table {table}"),
            "recompress reads and rewrites every row of the table, as its owner: run it as the table's owner, or as a role that bypasses row-level security (a superuser, or BYPASSRLS).",
        );
    }
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

/// Refuses a table whose UPDATE runs more than the UPDATE unless `triggers` says what to do:
/// its UPDATE triggers, row or statement level (audit rows, `updated_at`), and its rules on
/// UPDATE fire though no value changes. Refused whatever `triggers` says: an INSTEAD rule (the
/// UPDATE would not write the rows), and, for a caller who is not a table's owner, a deferrable
/// constraint trigger (the rewrite runs in a security-restricted operation, where PostgreSQL
/// refuses to fire a deferred trigger, after the batch has written).
fn user_triggers(leaves: &[pg_sys::Oid], triggers: Triggers) {
    let query = "SELECT 'trigger', g.tgname::pg_catalog.text, g.tgrelid, \
                        (g.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 1) OPERATOR(pg_catalog.=) 1, \
                        g.tgdeferrable, false, c.relowner OPERATOR(pg_catalog.=) $2 \
                   FROM pg_catalog.pg_trigger g JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) g.tgrelid \
                  WHERE g.tgrelid OPERATOR(pg_catalog.=) ANY ($1) AND NOT g.tgisinternal \
                    AND g.tgenabled OPERATOR(pg_catalog.<>) 'D' \
                    AND (g.tgtype::pg_catalog.int4 OPERATOR(pg_catalog.&) 16) OPERATOR(pg_catalog.=) 16 \
                 UNION ALL \
                 SELECT 'rule', r.rulename::pg_catalog.text, r.ev_class, false, false, r.is_instead, true \
                   FROM pg_catalog.pg_rewrite r \
                  WHERE r.ev_class OPERATOR(pg_catalog.=) ANY ($1) AND r.ev_type OPERATOR(pg_catalog.=) '2' \
                    AND r.ev_enabled OPERATOR(pg_catalog.<>) 'D' \
                  ORDER BY 3, 1, 2";
    struct Found {
        said: String,
        deferrable_not_owned: bool,
        instead: bool,
    }
    let found: Vec<Found> = Spi::connect(|client| {
        // SAFETY: the backend's current user.
        let user = unsafe { pg_sys::GetUserId() };
        let rows = client.select(query, None, &[leaves.to_vec().into(), user.into()]).unwrap_or_else(|e| spi_failed(e));
        rows.map(|row| {
            let text = |i: usize| row.get::<String>(i).ok().flatten().unwrap_or_default();
            let flag = |i: usize| row.get::<bool>(i).ok().flatten().unwrap_or(false);
            let table = row.get::<pg_sys::Oid>(3).ok().flatten().and_then(relation_name).unwrap_or_default();
            let kind = match (text(1).as_str(), flag(4)) {
                ("rule", _) => "rule",
                (_, true) => "row trigger",
                _ => "statement trigger",
            };
            Found {
                said: format!("{kind} {} on {table}", quote_identifier(&text(2))),
                deferrable_not_owned: flag(5) && !flag(7),
                instead: flag(6),
            }
        })
        .collect()
    });
    let list =
        |keep: &dyn Fn(&Found) -> bool| found.iter().filter(|f| keep(f)).map(|f| f.said.as_str()).collect::<Vec<_>>();
    let instead = list(&|f| f.instead);
    if !instead.is_empty() {
        report(
            PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
            format!("recompress cannot rewrite rows whose UPDATE a rule replaces: {}", instead.join(", ")),
            Some("An INSTEAD rule on UPDATE runs its own statement instead of the UPDATE; the table's values cannot be rewritten through it."),
        );
    }
    let deferrable = list(&|f| f.deferrable_not_owned);
    if !deferrable.is_empty() {
        report(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("recompress cannot fire the deferrable {} as the table's owner", deferrable.join(", ")),
            Some("A caller who is not the owner rewrites in a security-restricted operation, where PostgreSQL refuses to fire a deferred trigger: run recompress as the table's owner."),
        );
    }
    if found.is_empty() {
        return;
    }
    let all = list(&|_| true).join(", ");
    match triggers {
        Triggers::Refuse => report(
            PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
            format!("recompress rewrites rows with UPDATE, which fires the {all}"),
            Some("Say what to do: triggers => 'fire' runs them for every row rewritten (audit rows, updated_at), triggers => 'skip' (superuser) sets session_replication_role = replica for each batch, which also skips rules and foreign-key checks, but not triggers enabled ALWAYS or REPLICA."),
        ),
        Triggers::Fire => notice!("compresslab.recompress: the {all} fire for every row rewritten"),
        Triggers::Skip => {
            notice!("compresslab.recompress: the {all} are skipped (session_replication_role = replica in each batch)")
        }
    }
}
