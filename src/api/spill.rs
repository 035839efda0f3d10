//! The logical-decoding spill-file simulation in SQL: the caller's query supplies the changes,
//! one record per row, and the core's `scenarios::spill` writes and reads them back under each
//! strategy (raw, pglz and LZ4 per record, LZ4 and zstd streaming across records).

use compresslab_core::registry::{parse_named, Named};
use compresslab_core::scenarios::spill::{self, SpillStrategy};
use compresslab_core::{zstd_codec, CodecError};
use pgrx::composite_type;
use pgrx::prelude::*;

use crate::errors::{raise, required, OrRaise};
use crate::rows::set_of;
use crate::server::{check_interrupts, sampling};

/// Simulate logical-decoding spill files for the rows of `query`: each row is one change,
/// written in order as `ReorderBufferSerializeChange` would, under each strategy (NULL: all of
/// raw, pglz, lz4, lz4_stream, zstd_stream), then read back and verified byte for byte.
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
    zstd_level: default!(i32, 1),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.spill_result")> {
    let query = required(query, "query");
    // Arguments are checked before the caller's query runs.
    let strategies: Vec<SpillStrategy> = match strategies {
        None => SpillStrategy::ALL.to_vec(),
        Some(s) if s.is_empty() => raise(CodecError::invalid("strategies must not be an empty array")),
        Some(s) => s.into_iter().map(|t| parse_named(&required(t, "an element of strategies")).or_raise()).collect(),
    };
    if strategies.contains(&SpillStrategy::ZstdStream) {
        zstd_codec::check_level(zstd_level).or_raise();
    }
    let records = sampling::query_records(query);
    let rows = spill::simulate(&records, &strategies, zstd_level, &mut check_interrupts).or_raise();
    set_of("compresslab.spill_result", &rows)
}
