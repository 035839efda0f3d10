//! The logical-decoding spill-file simulation in SQL: the caller's query supplies the changes,
//! one record per row, and the core's `scenarios::spill` writes and reads them back under each
//! strategy (raw, pglz and LZ4 per record, LZ4 and zstd streaming across records).

use compresslab_core::scenarios::spill::{self, SpillSpec};
use compresslab_core::CodecError;
use pgrx::composite_type;
use pgrx::prelude::*;

use crate::errors::{raise, required, OrRaise};
use crate::gucs;
use crate::rows::set_of;
use crate::server::{check_interrupts, sampling};

/// Simulate logical-decoding spill files for the rows of `query`: each row is one change,
/// written in order as `ReorderBufferSerializeChange` would, under each strategy (NULL: all of
/// raw, pglz, lz4, lz4_stream, zstd_stream), then read back and verified byte for byte. The zstd
/// level is written as for the lab's methods, `zstd_stream:19`; without one,
/// `compresslab.zstd_level`.
///
/// A row of exactly one column contributes that value: a `bytea`'s bytes, or the UTF-8 bytes of
/// any other type's text form; a row of several columns contributes the row's text form (the
/// query runs as `SELECT r::text FROM (query) r`). NULL values are skipped. The query runs
/// with the caller's privileges.
///
/// Memory: all records are held in memory at once (plus one spill file per strategy while it
/// runs), so the caller bounds the work with the query itself, e.g. with LIMIT.
///
/// Reports per strategy: records, raw and stored bytes (stored includes a 5-byte header per
/// record for every compressed strategy), raw/stored ratio, wall and CPU seconds of writing
/// plus reading everything, and how many records were stored uncompressed.
#[pg_extern(volatile)]
fn simulate_spill(
    query: Option<&str>,
    strategies: default!(Option<Vec<Option<String>>>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.spill_result")> {
    let query = required(query, "query");
    // Arguments are checked before the caller's query runs.
    let level = gucs::zstd_level();
    let strategies: Vec<SpillSpec> = match strategies {
        None => SpillSpec::all(level),
        Some(s) if s.is_empty() => raise(CodecError::invalid("strategies must not be an empty array")),
        Some(s) => s
            .into_iter()
            .map(|t| SpillSpec::parse(&required(t, "an element of strategies"), level).or_raise())
            .collect(),
    };
    let records = sampling::query_records(query);
    let rows = spill::simulate(&records, &strategies, &mut check_interrupts).or_raise();
    set_of("compresslab.spill_result", &rows)
}
