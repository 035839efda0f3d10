//! Logical-decoding spill files: what compressing them would save, per record or streamed.
//!
//! This module is the spill file's format (record headers, writing and reading back, the
//! verification) and the [`simulate`] driver; `strategies` holds each strategy's encoder
//! and decoder.
//!
//! # The scenario
//!
//! While a walsender decodes WAL, the changes of each open transaction are queued in memory
//! by the ReorderBuffer. Once a transaction (with its subtransactions) outgrows
//! `logical_decoding_work_mem`, `ReorderBufferSerializeTXN` writes its changes, one
//! `ReorderBufferDiskChange` after the other (`ReorderBufferSerializeChange`), to temporary
//! files under `pg_replslot/<slot>/`, and `ReorderBufferRestoreChanges` reads them back, in the
//! same order, when the transaction commits. Several slots decoding the same huge transaction
//! multiply that disk usage and I/O. The 2024 thread "Compress ReorderBuffer spill files using
//! LZ4" proposed compressing each change as it is written; this module replays that idea on
//! the caller's own records (one record = one change, in order) and reports, per strategy,
//! the bytes written, the ratio, and the wall and CPU time of writing and reading all of it.
//!
//! # Record layout
//!
//! Each change already carries its own size (`ReorderBufferDiskChange.size`), so the reader
//! always knows a record's raw length; that size is part of the change and is counted in the
//! raw bytes. A compressed strategy must also record how the change was stored and how many
//! bytes were stored, so every compressed strategy writes, before each record, a header of
//! [`RECORD_HEADER_BYTES`] = 5 bytes:
//!
//! ```text
//! +--------+-------------------------------+--------------------------------+
//! | flag   | stored length (u32, LE)       | payload: stored-length bytes   |
//! | 1 byte | 4 bytes                       | (compressed, or the raw change)|
//! +--------+-------------------------------+--------------------------------+
//! ```
//!
//! The flag says how the payload was stored: 0 raw, 1 pglz, 2 LZ4 block without context,
//! 3 LZ4 block with the stream's history as context, 4 a flushed piece of the zstd stream.
//! The `raw` strategy (today's PostgreSQL) writes the changes back to back and pays no header.
//! Stored bytes are the whole simulated file: headers plus payloads. Every compressed strategy
//! thus pays 5 bytes per record even when it stores the record raw, which is what a format
//! with a "stored raw" flag costs on incompressible data.
//!
//! # Strategies
//!
//! * `raw`: each change as is, no header. The baseline (`logical_decoding_spill_compression =
//!   off`).
//! * `pglz`: each change compressed alone by pglz with the DEFAULT strategy (inputs of 32
//!   bytes or more, 25% saving required, give up after 1024 output bytes without a match).
//!   pglz refusing (`pglz_compress` returning -1, a normal outcome, see Tomas's bug report in
//!   the thread) stores the change raw. No context between changes: a row repeated in the
//!   next change is invisible to it.
//! * `lz4`: each change compressed alone into one LZ4 block; a block that is not smaller than
//!   the change is replaced by the raw change. No context either.
//! * `lz4_stream`: LZ4 streaming across changes, as in the patch's ring buffer with
//!   `LZ4_compress_fast_continue`: each change is compressed with the previous ≤ 64 KB of *raw*
//!   history (exactly what the reader will have produced by then) as dictionary, so a small
//!   change can copy bytes from earlier ones. The compressor keeps its hash table across
//!   changes (like an `LZ4_stream_t`), so a change costs time in proportion to its own size,
//!   not to the window. A change larger than the 64 KB ring buffer is compressed in plain block
//!   mode without context (flag 2), as the patch does; a change whose compressed form is not
//!   smaller than itself is stored raw (flag 0). Either way the change still enters the
//!   history, because the reader produces it too. The codec is [`crate::lz4::stream`].
//! * `zstd_stream`: one zstd stream at level `zstd_level`, flushed (`ZSTD_e_flush`) after every
//!   change so that the change's bytes can be written out at once; the payload is what the
//!   flush emitted (the first one includes the frame header). The window spans all earlier
//!   changes (up to zstd's window size at that level). One streaming decoder reads the pieces
//!   in order. There is no raw fallback: the stream's state already holds the change, so the
//!   reader must see its compressed piece; zstd itself stores incompressible blocks as raw
//!   blocks (3-byte block header), which bounds the loss.
//!
//! # Verification and timing
//!
//! Every strategy writes all records into one in-memory "spill file", then reads the file back
//! from the start with a fresh decoder, record by record, and compares each decoded record
//! byte for byte with the original. A malformed header or payload, a decoder error, trailing
//! bytes or a record that decodes to different bytes is [`CodecError::Corrupt`]; a wrong
//! number is never reported. `wall_seconds` and `cpu_seconds` (this thread's CPU
//! clock) cover writing plus reading all records, including the copy and the comparison,
//! which cost every strategy the same.
//!
//! The caller's `tick` runs every [`TICK_EVERY`] records while writing and while reading (the
//! extension checks for query cancel there).

use serde::Serialize;

use crate::clock::Timer;
use crate::error::{try_reserve, try_resize, CodecError, Result};
use crate::registry::{parse_named, split_level, Named};
use crate::zstd_codec;

mod records;
mod strategies;

pub use records::Records;

/// One strategy's outcome over all records.
#[derive(Debug, Clone, Serialize)]
pub struct SpillRow {
    pub strategy: String,
    /// The zstd level of `zstd_stream`; none for the others.
    pub level: Option<i32>,
    /// Number of records (changes) written.
    pub records: i64,
    /// Sum of the records' lengths.
    pub raw_bytes: i64,
    /// Bytes of the simulated spill file: per-record headers plus payloads.
    pub stored_bytes: i64,
    /// `raw_bytes / stored_bytes`; 1.0 when nothing was stored.
    pub ratio: f64,
    /// Wall seconds to write (compress) and read back (decompress and verify) all records.
    pub wall_seconds: f64,
    /// CPU seconds (user + system, this thread) of the same work.
    pub cpu_seconds: f64,
    /// Records stored uncompressed (all of them for `raw`; never any for `zstd_stream`).
    pub raw_records: i64,
}

crate::named_choices! {
    /// The strategies [`simulate`] knows, in the order it reports them by default.
    pub enum SpillStrategy: "spill strategy", "strategies" {
        Raw = "raw",
        Pglz = "pglz",
        Lz4 = "lz4",
        Lz4Stream = "lz4_stream",
        ZstdStream = "zstd_stream",
    }
}

impl SpillStrategy {
    /// Whether records carry the 5-byte header: every strategy but `raw`.
    fn headers(self) -> bool {
        self != SpillStrategy::Raw
    }
}

/// A strategy at a setting, parsed from `name` or `zstd_stream:level` (the lab's method
/// syntax); only `zstd_stream` has a level, filled in from the default when not written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpillSpec {
    pub strategy: SpillStrategy,
    pub level: Option<i32>,
}

impl SpillSpec {
    pub fn parse(text: &str, default_level: i32) -> Result<SpillSpec> {
        let (name, level) = split_level(text)?;
        let strategy: SpillStrategy = parse_named(name)?;
        let level = match (strategy, level) {
            (SpillStrategy::ZstdStream, level) => Some(zstd_codec::check_level(level.unwrap_or(default_level))?),
            (_, None) => None,
            (other, Some(l)) => {
                return Err(CodecError::invalid(format!(
                    "spill strategy {} has no levels, but level {l} was given",
                    other.name()
                )))
            }
        };
        Ok(SpillSpec { strategy, level })
    }

    /// Every strategy, zstd at `level`.
    pub fn all(level: i32) -> Vec<SpillSpec> {
        SpillStrategy::ALL
            .iter()
            .map(|&strategy| SpillSpec { strategy, level: (strategy == SpillStrategy::ZstdStream).then_some(level) })
            .collect()
    }
}

/// Bytes every compressed strategy writes before each record: a 1-byte "how stored" flag and
/// the 4-byte stored length. The `raw` strategy writes none (the change has its own size).
pub const RECORD_HEADER_BYTES: usize = 5;

/// `tick` is called once per this many records.
pub const TICK_EVERY: usize = 256;

/// How a record's payload is stored: the header's flag byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Flag {
    Raw = 0,
    Pglz = 1,
    Lz4Block = 2,
    Lz4Stream = 3,
    ZstdStream = 4,
}

impl Flag {
    fn from_byte(b: u8) -> Option<Flag> {
        Some(match b {
            0 => Flag::Raw,
            1 => Flag::Pglz,
            2 => Flag::Lz4Block,
            3 => Flag::Lz4Stream,
            4 => Flag::ZstdStream,
            _ => return None,
        })
    }
}

/// The writing side of a strategy: appends one record's payload to the file.
trait SpillEncoder {
    /// Append the payload for `record` to `out` and say how it was stored; `tick` may be
    /// called during a long record.
    fn encode(&mut self, record: &[u8], out: &mut Vec<u8>, tick: &mut dyn FnMut()) -> Result<Flag>;
}

/// The reading side: turns one payload back into the record, in the order written.
trait SpillDecoder {
    /// Fill `dst` (whose length is the record's raw length) from `payload` stored as `flag`.
    fn decode(&mut self, flag: Flag, payload: &[u8], dst: &mut [u8]) -> Result<()>;
}

/// Run `strategies` over `records` (in order) and report one row per strategy. A record that
/// does not read back identically is [`CodecError::Corrupt`].
pub fn simulate(records: &Records, strategies: &[SpillSpec], tick: &mut dyn FnMut()) -> Result<Vec<SpillRow>> {
    let raw_bytes = records.raw_bytes();
    let mut rows = Vec::with_capacity(strategies.len());
    for &SpillSpec { strategy, level } in strategies {
        let timer = Timer::start();
        let (mut enc, mut dec) = strategies::codec_pair(strategy, level.unwrap_or(zstd_codec::DEFAULT_LEVEL))?;
        let (file, raw_records) = write_spill(records, enc.as_mut(), strategy.headers(), tick)?;
        drop(enc);
        read_spill(strategy.name(), &file, records, dec.as_mut(), strategy.headers(), tick)?;
        let (wall_seconds, cpu_seconds) = timer.stop();
        rows.push(SpillRow {
            strategy: strategy.name().to_string(),
            level,
            records: records.len() as i64,
            raw_bytes: raw_bytes as i64,
            stored_bytes: file.len() as i64,
            ratio: if file.is_empty() { 1.0 } else { raw_bytes as f64 / file.len() as f64 },
            wall_seconds,
            cpu_seconds,
            raw_records: raw_records as i64,
        });
    }
    Ok(rows)
}

/// Write every record through `enc` into one spill file; returns the file and how many
/// records were stored raw. Without `headers` the payloads are simply concatenated.
fn write_spill(
    records: &Records,
    enc: &mut dyn SpillEncoder,
    headers: bool,
    tick: &mut dyn FnMut(),
) -> Result<(Vec<u8>, usize)> {
    let mut file = Vec::new();
    let mut raw_records = 0;
    for (i, record) in records.iter().enumerate() {
        if i % TICK_EVERY == 0 {
            tick();
        }
        // Room for the header and the record stored raw or a little larger (a zstd flush),
        // allocated fallibly so that a huge spill is an ERROR, not an abort.
        try_reserve(&mut file, RECORD_HEADER_BYTES + record.len() + record.len() / 128 + 64, "the spill file")?;
        if !headers {
            let flag = enc.encode(record, &mut file, tick)?;
            debug_assert_eq!(flag, Flag::Raw);
            raw_records += 1;
            continue;
        }
        let at = file.len();
        file.extend_from_slice(&[0u8; RECORD_HEADER_BYTES]);
        let flag = enc.encode(record, &mut file, tick)?;
        let stored = file.len() - at - RECORD_HEADER_BYTES;
        let stored = u32::try_from(stored)
            .map_err(|_| CodecError::too_large(format!("spill record {i} needs {stored} bytes, more than 4 GB")))?;
        file[at] = flag as u8;
        file[at + 1..at + RECORD_HEADER_BYTES].copy_from_slice(&stored.to_le_bytes());
        if flag == Flag::Raw {
            raw_records += 1;
        }
    }
    Ok((file, raw_records))
}

/// Read `file` back through `dec`, checking each record against `records`.
fn read_spill(
    strategy: &str,
    file: &[u8],
    records: &Records,
    dec: &mut dyn SpillDecoder,
    headers: bool,
    tick: &mut dyn FnMut(),
) -> Result<()> {
    let mut pos = 0usize;
    let mut out: Vec<u8> = Vec::new();
    for (i, record) in records.iter().enumerate() {
        if i % TICK_EVERY == 0 {
            tick();
        }
        let at = pos;
        let truncated = || CodecError::corrupt(format!("{strategy} spill file: record {i} at byte {at} is truncated"));
        let (flag, len) = if headers {
            let header = file.get(pos..pos + RECORD_HEADER_BYTES).ok_or_else(truncated)?;
            let flag = Flag::from_byte(header[0]).ok_or_else(|| {
                CodecError::corrupt(format!("{strategy} spill file: record {i} has unknown storage flag {}", header[0]))
            })?;
            let len = u32::from_le_bytes(header[1..5].try_into().unwrap()) as usize;
            pos += RECORD_HEADER_BYTES;
            (flag, len)
        } else {
            (Flag::Raw, record.len())
        };
        let payload = file.get(pos..pos.saturating_add(len)).ok_or_else(truncated)?;
        pos += len;
        out.clear();
        try_resize(&mut out, record.len(), "a record read back")?;
        dec.decode(flag, payload, &mut out)
            .map_err(|e| CodecError::corrupt(format!("{strategy} spill file: record {i}: {}", e.message())))?;
        if out.as_slice() != record {
            let at = out.iter().zip(record.iter()).position(|(a, b)| a != b).unwrap_or(0);
            return Err(CodecError::corrupt(format!(
                "{strategy} spill file: record {i} ({} bytes) read back differently from byte {at}",
                record.len()
            )));
        }
    }
    if pos != file.len() {
        return Err(CodecError::corrupt(format!(
            "{strategy} spill file: {} bytes left after the last record",
            file.len() - pos
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;

/// Read a spill `file` written by `strategy` back against `records`, with a fresh decoder:
/// the reading half of [`simulate`], for the fuzz target `spill_file_read_never_panics`.
/// Any damage is [`CodecError::Corrupt`]; nothing may panic.
#[doc(hidden)]
pub fn read_back(strategy: SpillStrategy, file: &[u8], records: &[Vec<u8>]) -> Result<()> {
    let records = Records::try_from_slices(records)?;
    let (_, mut dec) = strategies::codec_pair(strategy, 1)?;
    read_spill(strategy.name(), file, &records, dec.as_mut(), strategy.headers(), &mut || {})
}
