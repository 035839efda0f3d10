//! Rows as records for the spill simulation: the caller's own query, or a table's first rows
//! read without planning a query on it.

use std::time::Instant;

use compresslab_core::scenarios::spill::Records;
use compresslab_core::CodecError;
use pgrx::prelude::*;

use crate::errors::{raise, OrRaise};
use crate::server::catalog::spi::spi_failed;
use crate::server::heap;
use crate::server::toast::with_varlena_bytes;

/// Rows fetched from a cursor per batch; each batch's SPI tuple table is freed once copied.
const FETCH_BATCH: i64 = 1000;

/// Run the caller's `query` and return one record per non-NULL row: the bytes of a single
/// bytea column, the text of a single column of another type, or the text form of a wider
/// row. The query runs with the caller's privileges; only our wrapping is qualified. The
/// records go into one fallibly grown buffer ([`Records`]): running out of memory is ERROR
/// 53200, and memory stays near the records' bytes plus one length byte each.
pub fn query_records(query: &str) -> Records {
    let query = query.trim().trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    if query.is_empty() {
        raise(CodecError::invalid("query must not be empty"));
    }
    Spi::connect(|client| {
        // Find the result's shape without running it: LIMIT 0 never pulls a row from the query.
        let probe = format!("SELECT * FROM ({query}\n) t LIMIT 0");
        let (single_column, single_bytea) = {
            let table = client.select(probe.as_str(), None, &[]).unwrap_or_else(|e| spi_failed(e));
            let single = table.columns().unwrap_or(0) == 1;
            (single, single && table.column_type_oid(1).map(|oid| oid.value() == pg_sys::BYTEAOID).unwrap_or(false))
        };
        let sql = if single_bytea {
            format!("SELECT * FROM ({query}\n) spill_change")
        } else if single_column {
            format!("SELECT spill_change.value::pg_catalog.text FROM ({query}\n) spill_change(value)")
        } else {
            // An alias no query is likely to use as a column name: a column of that name would
            // win over the whole-row reference.
            format!("SELECT compresslab_spill_row::pg_catalog.text FROM ({query}\n) compresslab_spill_row")
        };
        let mut cursor = client.try_open_cursor(sql.as_str(), &[]).unwrap_or_else(|e| spi_failed(e));
        let mut records = Records::new();
        loop {
            check_for_interrupts!();
            let mut batch = cursor.fetch(FETCH_BATCH).unwrap_or_else(|e| spi_failed(e));
            if batch.is_empty() {
                break;
            }
            while batch.next().is_some() {
                // A bytea's bytes, or the text's UTF-8 bytes: both are varlenas.
                if let Some(datum) = batch.get_datum_by_ordinal(1).unwrap_or_else(|e| spi_failed(e)) {
                    with_varlena_bytes(datum, |bytes| records.try_push(bytes)).or_raise();
                }
            }
            // SAFETY: the batch was consumed and dropped above; SPI_tuptable still points at
            // its table, which nothing else references, so freeing it keeps memory to one batch.
            unsafe { pg_sys::SPI_freetuptable(pg_sys::SPI_tuptable) };
        }
        records
    })
}

/// The `limit` tables with the most rows written (pg_stat_user_tables) that the caller may
/// read whole and whose rows [`table_records`] reads (a heap: no partitioned table; no
/// row-level security applying to the caller): their OIDs and `schema.table` quoted as needed,
/// most written first.
pub fn most_written_readable_tables(limit: i64) -> Vec<(pg_sys::Oid, String)> {
    Spi::connect(|client| {
        client
            .select(
                "SELECT s.relid, pg_catalog.quote_ident(s.schemaname) OPERATOR(pg_catalog.||) '.' \
                        OPERATOR(pg_catalog.||) pg_catalog.quote_ident(s.relname) \
                   FROM pg_catalog.pg_stat_user_tables s \
                   JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.relid \
                  WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog.\"char\"[]) \
                    AND pg_catalog.has_table_privilege(s.relid, 'SELECT') \
                    AND NOT pg_catalog.row_security_active(s.relid) \
                  ORDER BY s.n_tup_ins OPERATOR(pg_catalog.+) s.n_tup_upd OPERATOR(pg_catalog.+) s.n_tup_del DESC, s.relid \
                  LIMIT $1",
                None,
                &[limit.into()],
            )
            .unwrap_or_else(|e| spi_failed(e))
            .filter_map(|row| Some((row.get::<pg_sys::Oid>(1).ok()??, row.get::<String>(2).ok()??)))
            .collect()
    })
}

/// The text form of the first `limit` rows of table `relid` in physical order (what `SELECT t
/// FROM table t LIMIT limit` returns without an ORDER BY), one record each, read by a heap scan
/// ([`heap::scan_blocks`]: no query planned, none of the owner's code run), fewer once
/// `deadline` has passed (one at least). The caller checked that it may read the whole table
/// and that no row-level security applies to it. A table dropped meanwhile gives no records.
pub fn table_records(relid: pg_sys::Oid, limit: usize, deadline: Instant) -> Records {
    let mut records = Records::new();
    let Some(rel) = heap::open(relid) else { return records };
    heap::scan_blocks(rel, 0, u32::MAX, |tuple| {
        // SAFETY: a tuple of the scan and its relation's descriptor (whose type is the table's
        // row type): the copy is a composite datum, printed by record_out (the columns' own
        // output functions) into a palloc'd string, both freed here.
        let text = unsafe {
            let row = pg_sys::heap_copy_tuple_as_datum(tuple, (*rel).rd_att);
            let text = pg_sys::OidOutputFunctionCall(pg_sys::Oid::from(pg_sys::F_RECORD_OUT), row);
            let bytes = std::ffi::CStr::from_ptr(text).to_bytes().to_vec();
            pg_sys::pfree(text.cast());
            pg_sys::pfree(row.cast_mut_ptr());
            bytes
        };
        records.try_push(&text).or_raise();
        records.len() < limit && Instant::now() < deadline
    });
    heap::close(rel);
    records
}
