//! The logical-decoding spill-file simulation in SQL: the caller's query supplies the changes,
//! one record per row, and the core's `scenarios::spill` writes and reads them back under each
//! strategy (raw, pglz and LZ4 per record, LZ4 and zstd streaming across records).

use compresslab_core::scenarios::spill;
use compresslab_core::CodecError;
use pgrx::prelude::*;

use crate::errors::{raise, OrRaise};

/// Rows fetched from the cursor per batch; each batch's SPI tuple table is freed once copied.
const FETCH_BATCH: i64 = 1000;

/// Simulate logical-decoding spill files for the rows of `query`: each row is one change,
/// written in order as `ReorderBufferSerializeChange` would, under each strategy (NULL: all of
/// raw, pglz, lz4, lz4_stream, zstd_stream), then read back and verified byte for byte.
///
/// A row of exactly one column contributes that value: a `bytea`'s bytes, or the UTF-8 bytes of
/// any other type's text form; a row of several columns contributes the row's text form (the
/// query runs as `SELECT r::text FROM (query) r`). NULL values are skipped. The query runs read-only, with the caller's privileges, and must be a plain
/// SELECT, VALUES or TABLE command (a trailing semicolon is allowed).
///
/// Memory: all records are held in memory at once (plus one spill file per strategy while it
/// runs), so the caller bounds the work with the query itself, e.g. with LIMIT.
///
/// Reports per strategy: records, raw and stored bytes (stored includes a 5-byte header per
/// record for every compressed strategy), raw/stored ratio, wall and CPU seconds of writing
/// plus reading everything, and how many records were stored uncompressed.
#[pg_extern(volatile)]
fn simulate_spill(
    query: &str,
    strategies: default!(Option<Vec<String>>, "NULL"),
    zstd_level: default!(i32, 1),
) -> TableIterator<
    'static,
    (
        name!(strategy, String),
        name!(records, i64),
        name!(raw_bytes, i64),
        name!(stored_bytes, i64),
        name!(ratio, f64),
        name!(seconds, f64),
        name!(cpu_seconds, f64),
        name!(raw_records, i64),
    ),
> {
    let strategies: Vec<String> = match strategies {
        Some(s) if s.is_empty() => raise(CodecError::invalid("strategies must not be an empty array")),
        Some(s) => s,
        None => spill::STRATEGIES.iter().map(|s| s.to_string()).collect(),
    };
    let names: Vec<&str> = strategies.iter().map(String::as_str).collect();
    // Reject bad strategies and levels before running the caller's query.
    spill::simulate(&[], &names, zstd_level, &mut || ()).or_raise();

    let records = collect_records(query);
    let rows = spill::simulate(&records, &names, zstd_level, &mut || {
        check_for_interrupts!();
    })
    .or_raise();
    TableIterator::new(rows.into_iter().map(|r| {
        (r.strategy, r.records, r.raw_bytes, r.stored_bytes, r.ratio, r.seconds, r.cpu_seconds, r.raw_records)
    }))
}

/// Run `query` and return one record per non-NULL row: the bytes of a single bytea column, the
/// text of a single column of another type, or the text form of a wider row.
fn collect_records(query: &str) -> Vec<Vec<u8>> {
    let query = query.trim().trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    if query.is_empty() {
        raise(CodecError::invalid("query must not be empty"));
    }
    let spi_error = |e: pgrx::spi::SpiError| -> ! { raise(CodecError::invalid(format!("query failed: {e}"))) };
    Spi::connect(|client| {
        // Find the result's shape without running it: LIMIT 0 never pulls a row from the query.
        let probe = format!("SELECT * FROM ({query}\n) t LIMIT 0");
        let (single_column, single_bytea) = {
            let table = client.select(probe.as_str(), None, &[]).unwrap_or_else(|e| spi_error(e));
            let single = table.columns().unwrap_or(0) == 1;
            (single, single && table.column_type_oid(1).map(|oid| oid.value() == pg_sys::BYTEAOID).unwrap_or(false))
        };
        let sql = if single_bytea {
            format!("SELECT * FROM ({query}\n) spill_change")
        } else if single_column {
            format!("SELECT spill_change.value::text FROM ({query}\n) spill_change(value)")
        } else {
            // An alias no query is likely to use as a column name: a column of that name would
            // win over the whole-row reference.
            format!("SELECT compresslab_spill_row::text FROM ({query}\n) compresslab_spill_row")
        };
        let mut cursor = client.try_open_cursor(sql.as_str(), &[]).unwrap_or_else(|e| spi_error(e));
        let mut records = Vec::new();
        loop {
            check_for_interrupts!();
            let batch = cursor.fetch(FETCH_BATCH).unwrap_or_else(|e| spi_error(e));
            if batch.is_empty() {
                break;
            }
            for row in batch {
                let value = if single_bytea {
                    row.get::<Vec<u8>>(1).unwrap_or_else(|e| spi_error(e))
                } else {
                    row.get::<String>(1).unwrap_or_else(|e| spi_error(e)).map(String::into_bytes)
                };
                if let Some(bytes) = value {
                    records.push(bytes);
                }
            }
            // SAFETY: the batch was consumed and dropped above; SPI_tuptable still points at
            // its table, which nothing else references, so freeing it keeps memory to one batch.
            unsafe { pg_sys::SPI_freetuptable(pg_sys::SPI_tuptable) };
        }
        records
    })
}
