//! What the server's statistics say about activity, for the advisor: WAL written since the
//! statistics were reset (`pg_stat_wal`), rows written and read per table
//! (`pg_stat_user_tables`), logical-decoding spill (`pg_stat_replication_slots`), and the
//! columns TOAST may compress. Every query names its operators, functions and types with their
//! schema, so a hostile `search_path` runs nobody's code: that includes the `=` that `CASE x WHEN`,
//! `IN`, `NULLIF` and `IS DISTINCT FROM` look up, which this file spells out as
//! `OPERATOR(pg_catalog.=)` (pgrx-tests/sql/search_path.sql shadows every built-in operator,
//! function, aggregate and type name to prove it).

use compresslab_core::advisor::wal::WalStatistics;
use compresslab_core::advisor::{Inserted, Rate};
use compresslab_core::pg_compression::ToastCompression;
use pgrx::prelude::*;

use super::catalog::names::{qualified_name, quote_identifier, relation_name};
use super::catalog::spi;
use super::catalog::spi::spi_failed;
use super::subtransaction;

/// Seconds since `since` (a timestamptz expression), or since initdb when it is NULL: the
/// system identifier's high 32 bits are initdb's time.
fn period(since: &str) -> String {
    format!(
        "(pg_catalog.date_part('epoch', pg_catalog.now()) OPERATOR(pg_catalog.-) \
          COALESCE(pg_catalog.date_part('epoch', {since}), \
                   ((SELECT system_identifier FROM pg_catalog.pg_control_system()) \
                    OPERATOR(pg_catalog.>>) 32)::pg_catalog.float8))"
    )
}

/// WAL bytes, full-page images and (from PostgreSQL 19, `wal_fpi_bytes`) their bytes as written
/// since the statistics were reset.
pub fn wal_written() -> WalStatistics {
    let image_bytes =
        if cfg!(feature = "pg19") { "wal_fpi_bytes::pg_catalog.float8" } else { "NULL::pg_catalog.float8" };
    let query = format!(
        "SELECT wal_bytes::pg_catalog.float8, wal_fpi::pg_catalog.float8, {image_bytes}, {} FROM pg_catalog.pg_stat_wal",
        period("stats_reset")
    );
    let row = spi::select_floats(&query, 4).unwrap_or_else(|e| spi_failed(e));
    let seconds = row[3].unwrap_or(0.0);
    WalStatistics {
        written: Rate { amount: row[0].unwrap_or(0.0), seconds },
        images: Rate { amount: row[1].unwrap_or(0.0), seconds },
        image_bytes: row[2],
    }
}

/// Seconds within which pg_stat_database's resets count as pg_stat_wal's.
const SAME_RESET_SECONDS: f64 = 2.0;

/// Rows inserted into the cluster's tables since the statistics were reset, and the rows they
/// hold now (for [`compresslab_core::advisor::bulk_load`]): cluster-wide, like the WAL it is
/// held against. Inserted: `tup_inserted` of `pg_stat_database`, summed over every database,
/// and only when every database's counters were reset when pg_stat_wal's were (None
/// otherwise: they would count over another period than the WAL's). Held: no view counts
/// other databases' rows, so this database's (`n_live_tup` of every table, catalogs and
/// TOAST tables included as `tup_inserted` includes them) scaled by the size of the databases
/// the caller may measure against this one's.
pub fn inserted() -> Option<Inserted> {
    let query = format!(
        "SELECT (SELECT COALESCE(pg_catalog.sum(tup_inserted), 0)::pg_catalog.float8 FROM pg_catalog.pg_stat_database), \
                (SELECT COALESCE(pg_catalog.sum(n_live_tup), 0)::pg_catalog.float8 FROM pg_catalog.pg_stat_all_tables) \
                OPERATOR(pg_catalog.*) \
                ((SELECT pg_catalog.sum(pg_catalog.pg_database_size(oid))::pg_catalog.float8 FROM pg_catalog.pg_database \
                   WHERE pg_catalog.has_database_privilege(oid, 'CONNECT') \
                      OR pg_catalog.pg_has_role('pg_read_all_stats', 'MEMBER')) \
                 OPERATOR(pg_catalog./) \
                 pg_catalog.pg_database_size(pg_catalog.current_database())::pg_catalog.float8), \
                (SELECT COALESCE(pg_catalog.max(pg_catalog.abs({} OPERATOR(pg_catalog.-) {})), 0)::pg_catalog.float8 \
                   FROM pg_catalog.pg_stat_database d, pg_catalog.pg_stat_wal w)",
        period("d.stats_reset"),
        period("w.stats_reset")
    );
    let (rows, held, apart) = spi::select_three::<f64, f64, f64>(&query, &[]).unwrap_or_else(|e| spi_failed(e));
    (apart.unwrap_or(0.0) <= SAME_RESET_SECONDS)
        .then(|| Inserted { rows: rows.unwrap_or(0.0), held: held.unwrap_or(0.0) })
}

/// Rows written (inserted and updated) and rows read (sequential and index fetches) of a table,
/// or of a partitioned table's partitions, since the statistics were reset.
pub fn table_rows(table: pg_sys::Oid) -> (Rate, Rate) {
    let query = format!(
        "SELECT pg_catalog.sum(n_tup_ins OPERATOR(pg_catalog.+) n_tup_upd)::pg_catalog.float8, \
                pg_catalog.sum(COALESCE(seq_tup_read, 0) OPERATOR(pg_catalog.+) COALESCE(idx_tup_fetch, 0))::pg_catalog.float8, \
                pg_catalog.max({}) FROM pg_catalog.pg_stat_user_tables \
          WHERE relid OPERATOR(pg_catalog.=) $1 \
             OR relid OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT relid::pg_catalog.oid FROM pg_catalog.pg_partition_tree($1)))",
        period("(SELECT stats_reset FROM pg_catalog.pg_stat_database WHERE datname OPERATOR(pg_catalog.=) pg_catalog.current_database())")
    );
    Spi::connect(|client| {
        let table = client.select(&query, Some(1), &[table.into()]).unwrap_or_else(|e| spi_failed(e));
        match table.first().get_three::<f64, f64, f64>() {
            Ok((Some(written), Some(read), Some(seconds))) => {
                (Rate { amount: written, seconds }, Rate { amount: read, seconds })
            }
            _ => (Rate::default(), Rate::default()),
        }
    })
}

/// Logical-decoding spill of every replication slot: (slots, transactions spilled, bytes
/// spilled over the period).
pub fn spilled() -> (i64, i64, Rate) {
    let query = format!(
        "SELECT pg_catalog.count(*), COALESCE(pg_catalog.sum(spill_txns), 0)::pg_catalog.int8, \
                COALESCE(pg_catalog.sum(spill_bytes), 0)::pg_catalog.float8, \
                COALESCE(pg_catalog.max({}), 0) FROM pg_catalog.pg_stat_replication_slots",
        period("stats_reset")
    );
    Spi::connect(|client| {
        let table = client.select(&query, Some(1), &[]).unwrap_or_else(|e| spi_failed(e));
        let row = table.first();
        let slots = row.get::<i64>(1).ok().flatten().unwrap_or(0);
        let txns = row.get::<i64>(2).ok().flatten().unwrap_or(0);
        let bytes = row.get::<f64>(3).ok().flatten().unwrap_or(0.0);
        let seconds = row.get::<f64>(4).ok().flatten().unwrap_or(0.0);
        (slots, txns, Rate { amount: bytes, seconds })
    })
}

/// A column TOAST may compress (variable length, storage `extended` or `main`) of a table of
/// the user's.
#[derive(Debug, Clone)]
pub struct ToastColumn {
    pub table: pg_sys::Oid,
    /// `schema.table.column`, each part quoted as needed.
    pub target: String,
    /// `schema.table` and the column, quoted as needed.
    pub table_name: String,
    pub column: String,
    pub column_name: String,
    /// The column's method, None for `default_toast_compression`.
    pub compression: Option<ToastCompression>,
    /// Whether the caller may read the column (SELECT on it or its table).
    pub readable: bool,
    /// A partitioned table's partitions at every level, `schema.table` quoted as needed
    /// (empty for a plain table).
    pub partitions: Vec<String>,
}

/// Every compressible column of every ordinary table, partitioned table and materialized view
/// with data, outside the system schemas, largest first: a partitioned table stands for its
/// partitions (their sizes summed; a partition is not listed on its own).
pub fn toast_columns() -> Vec<ToastColumn> {
    // The candidate tables from the catalogue alone, which locks none of them; then their
    // sizes a few tables at a time, each batch in a subtransaction rolled back once its rows
    // are copied out: pg_partition_tree locks every partition until the transaction ends (a
    // database of 10,000 partitions would hold them all, and exhaust the lock table, 53200),
    // and pg_relation_size waits for a table's lock, which lock_timeout ends with an ERROR
    // that must cost that table alone.
    let candidates = "SELECT c.oid FROM pg_catalog.pg_class c \
           JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace \
          WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m,p}'::pg_catalog.\"char\"[]) AND NOT c.relispartition \
            AND c.relpersistence OPERATOR(pg_catalog.<>) 't'::pg_catalog.\"char\" \
            AND n.nspname OPERATOR(pg_catalog.<>) ALL ('{pg_catalog,information_schema,compresslab}'::pg_catalog.name[]) \
            AND n.nspname OPERATOR(pg_catalog.!~) '^pg_toast' \
            AND EXISTS (SELECT FROM pg_catalog.pg_attribute a WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid \
                          AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped AND a.attlen OPERATOR(pg_catalog.=) -1 \
                          AND a.attstorage OPERATOR(pg_catalog.=) ANY ('{x,m}'::pg_catalog.\"char\"[])) \
          ORDER BY c.oid";
    let tables: Vec<pg_sys::Oid> = Spi::connect(|client| {
        client
            .select(candidates, None, &[])
            .unwrap_or_else(|e| spi_failed(e))
            .filter_map(|row| row.get::<pg_sys::Oid>(1).ok().flatten())
            .collect()
    });
    let mut sized = Vec::new();
    for batch in tables.chunks(SIZE_BATCH) {
        match subtransaction::rolled_back(|| sized_columns(batch)) {
            Ok(columns) => sized.extend(columns),
            // again one table at a time, to leave out only the table that fails (a table
            // dropped meanwhile has no size and is left out without an ERROR)
            Err(_) => {
                for &table in batch {
                    match subtransaction::rolled_back(|| sized_columns(&[table])) {
                        Ok(columns) => sized.extend(columns),
                        Err(why) => notice!(
                            "compresslab: advise: {} left out: {why}",
                            relation_name(table).unwrap_or_else(|| format!("relation with OID {table}"))
                        ),
                    }
                }
            }
        }
    }
    // largest first, then in the catalogue's order
    sized.sort_by(|a, b| b.total.cmp(&a.total).then(a.table_oid.cmp(&b.table_oid)).then(a.attnum.cmp(&b.attnum)));
    sized.into_iter().map(|s| s.column).collect()
}

/// Tables whose sizes one subtransaction of [`toast_columns`] reads (each locks the table,
/// its TOAST table and their indexes, or a partitioned table's every partition).
const SIZE_BATCH: usize = 50;

/// A column of [`toast_columns`] with what orders it.
struct SizedColumn {
    total: i64,
    table_oid: u32,
    attnum: i32,
    column: ToastColumn,
}

/// The compressible columns of `tables` that store data, with their tables' total sizes.
fn sized_columns(tables: &[pg_sys::Oid]) -> Vec<SizedColumn> {
    // The relations holding a table's rows: itself, or a partitioned table's leaves (which
    // pg_partition_tree lists; it lists nothing for a plain table).
    let stored = "(SELECT c.oid AS relid WHERE c.relkind OPERATOR(pg_catalog.<>) 'p'::pg_catalog.\"char\" \
                   UNION ALL SELECT t.relid::pg_catalog.oid FROM pg_catalog.pg_partition_tree(c.oid) t WHERE t.isleaf)";
    let query = format!(
        "SELECT c.oid, n.nspname::pg_catalog.text, c.relname::pg_catalog.text, a.attname::pg_catalog.text, \
                pg_catalog.ascii(a.attcompression::pg_catalog.text), \
                pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT'), \
                ARRAY(SELECT t.relid::pg_catalog.oid FROM pg_catalog.pg_partition_tree(c.oid) t \
                       WHERE t.relid::pg_catalog.oid OPERATOR(pg_catalog.<>) c.oid ORDER BY t.level, t.relid), \
                size.total::pg_catalog.int8, a.attnum::pg_catalog.int4 \
           FROM pg_catalog.pg_class c \
           JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace \
           JOIN pg_catalog.pg_attribute a ON a.attrelid OPERATOR(pg_catalog.=) c.oid \
           CROSS JOIN LATERAL (SELECT pg_catalog.sum(pg_catalog.pg_relation_size(s.relid)) AS heap, \
                                      pg_catalog.sum(pg_catalog.pg_total_relation_size(s.relid)) AS total \
                                 FROM {stored} s) size \
          WHERE c.oid OPERATOR(pg_catalog.=) ANY ($1) \
            AND c.relkind OPERATOR(pg_catalog.=) ANY ('{{r,m,p}}'::pg_catalog.\"char\"[]) AND NOT c.relispartition \
            AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped AND a.attlen OPERATOR(pg_catalog.=) -1 \
            AND a.attstorage OPERATOR(pg_catalog.=) ANY ('{{x,m}}'::pg_catalog.\"char\"[]) \
            AND size.heap OPERATOR(pg_catalog.>) 0"
    );
    Spi::connect(|client| {
        client
            .select(&query, None, &[tables.to_vec().into()])
            .unwrap_or_else(|e| spi_failed(e))
            .map(|row| {
                let text = |i: usize| row.get::<String>(i).ok().flatten().unwrap_or_default();
                let table_name = qualified_name(&text(2), &text(3));
                let column_name = text(4);
                let column = quote_identifier(&column_name);
                let partitions = row.get::<Vec<pg_sys::Oid>>(7).ok().flatten().unwrap_or_default();
                let table = row.get::<pg_sys::Oid>(1).ok().flatten().unwrap_or(pg_sys::InvalidOid);
                SizedColumn {
                    total: row.get::<i64>(8).ok().flatten().unwrap_or(0),
                    table_oid: table.to_u32(),
                    attnum: row.get::<i32>(9).ok().flatten().unwrap_or(0),
                    column: ToastColumn {
                        table,
                        target: format!("{table_name}.{column}"),
                        table_name,
                        column,
                        column_name,
                        compression: row
                            .get::<i32>(5)
                            .ok()
                            .flatten()
                            .and_then(|code| ToastCompression::from_attcompression(code as u8)),
                        readable: row.get::<bool>(6).ok().flatten().unwrap_or(false),
                        // a partition dropped since the query above is left out
                        partitions: partitions.into_iter().filter_map(relation_name).collect(),
                    },
                }
            })
            .collect()
    })
}

/// The current value of a setting.
pub fn setting(name: &str) -> String {
    spi::select_one::<String>("SELECT pg_catalog.current_setting($1)", &[name.into()])
        .unwrap_or_else(|e| spi_failed(e))
        .unwrap_or_default()
}
