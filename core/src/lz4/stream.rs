//! LZ4 streaming across records: each record is one standard LZ4 block whose matches may
//! reach back into the raw bytes of the records before it, as `LZ4_compress_fast_continue`
//! writes and `LZ4_decompress_safe_usingDict` reads — the scheme the "Compress ReorderBuffer
//! spill files using LZ4" patch used for logical-decoding spill files.
//!
//! # Format
//!
//! A stream is a sequence of records, each stored one of three ways ([`StreamBlock`]); the
//! container (how the reader learns each record's way, stored length and raw length) is the
//! caller's, e.g. the spill file's 5-byte record header:
//!
//! * [`StreamBlock::Linked`]: an LZ4 block (token, literals, 2-byte offset, length bytes;
//!   see [`super`]) decoded with the last ≤ [`WINDOW`] (64 KB) raw bytes of the stream as an
//!   external dictionary: an offset larger than the bytes produced so far in this block
//!   reaches into the dictionary.
//! * [`StreamBlock::Independent`]: a plain LZ4 block without context, for a record larger
//!   than the window (the patch's ring buffer), as the patch does.
//! * [`StreamBlock::Raw`]: the record as is, when its compressed form is not smaller.
//!
//! Whatever way a record is stored, it enters the history, because the reader produces it
//! too: writer and reader keep the same history and the reader must decode the records in
//! the order written.
//!
//! # Encoder
//!
//! The history buffer holds the raw bytes of the records so far (cut back to its last window
//! once it passes 1 MB), and a hash table of 2^12 positions of the history persists across
//! records (like an `LZ4_stream_t`), so a record costs time in proportion to its own size, not
//! to the window. Matching follows LZ4's fast compressor: hash the 5 bytes at the position
//! (`LZ4_hash5`), take the candidate if it is within 65535 bytes and inside the window and its
//! 4 bytes match, extend backwards over pending literals and forwards up to 5 bytes before
//! the end; after 64 misses the step grows (LZ4's acceleration). The last match starts at
//! least 12 bytes before the end of the record and the last 5 bytes are literals, LZ4's rules,
//! so liblz4's decoders read the blocks.
//!
//! # Decoder
//!
//! Our block decoder ([`super::decode`]) with the history's last window as dictionary (matches
//! reaching into it go through the decoder's bounds-checked careful path): any input is either
//! decoded to exactly the record's length or an error; nothing is read or written out of
//! bounds.

use crate::bytes::{common_prefix, load_u32, load_u64};
use crate::error::{try_reserve, try_resize, CodecError, Result};
use crate::lz4::block;

/// The streaming window and ring-buffer size: history kept as dictionary, and the largest
/// record compressed with context.
pub const WINDOW: usize = 64 * 1024;

/// The history buffer is cut back to its last window once it would grow past this.
const HISTORY_TRIM_AT: usize = 1 << 20;

/// How one record of the stream is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamBlock {
    /// The record as is.
    Raw,
    /// A plain LZ4 block, no context.
    Independent,
    /// An LZ4 block against the stream's history.
    Linked,
}

/// The raw bytes produced so far (kept from at least the last window on), shared in shape by
/// the writer and the reader.
#[derive(Default)]
struct History {
    buf: Vec<u8>,
}

impl History {
    /// The dictionary for the next record: the last ≤ 64 KB of history.
    fn dict(&self) -> &[u8] {
        &self.buf[self.buf.len().saturating_sub(WINDOW)..]
    }

    /// Before appending `incoming` bytes: if the buffer would grow past its limit, drop all but
    /// the last window. Returns the number of bytes dropped from the front.
    fn make_room(&mut self, incoming: usize) -> usize {
        if self.buf.len() + incoming > HISTORY_TRIM_AT && self.buf.len() > WINDOW {
            let dropped = self.buf.len() - WINDOW;
            self.buf.drain(..dropped);
            dropped
        } else {
            0
        }
    }
}

/// LZ4's default hash table: 2^12 entries of 4 bytes (`LZ4_MEMORY_USAGE` 14).
const LZ4_HASH_LOG: u32 = 12;
/// Shortest match.
const LZ4_MIN_MATCH: usize = 4;
/// The last match must start at least this many bytes before the end of the block.
const LZ4_MFLIMIT: usize = 12;
/// The last bytes of a block are always literals.
const LZ4_LAST_LITERALS: usize = 5;
/// Largest match offset.
const LZ4_MAX_DISTANCE: usize = 65_535;
/// An empty hash-table slot.
const EMPTY: u32 = u32::MAX;

/// LZ4's hash of the 5 bytes at `at` (`LZ4_hash5`, what 64-bit builds use for `byU32`
/// tables); needs 8 readable bytes.
#[inline(always)]
fn lz4_hash(buf: &[u8], at: usize) -> usize {
    let seq = load_u64(buf, at);
    ((seq << 24).wrapping_mul(889_523_592_379) >> (64 - LZ4_HASH_LOG)) as usize
}

/// Append an LZ4 length continuation (the part beyond the 4-bit token field).
fn put_length(out: &mut Vec<u8>, mut n: usize) {
    while n >= 255 {
        out.push(255);
        n -= 255;
    }
    out.push(n as u8);
}

/// Append one LZ4 sequence: `literals`, then a match of `match_len` bytes `offset` back.
fn put_sequence(out: &mut Vec<u8>, literals: &[u8], offset: usize, match_len: usize) {
    let ll = literals.len();
    let ml = match_len - LZ4_MIN_MATCH;
    out.push(((ll.min(15) as u8) << 4) | ml.min(15) as u8);
    if ll >= 15 {
        put_length(out, ll - 15);
    }
    out.extend_from_slice(literals);
    out.extend_from_slice(&(offset as u16).to_le_bytes());
    if ml >= 15 {
        put_length(out, ml - 15);
    }
}

/// Append the final, literals-only LZ4 sequence.
fn put_last_literals(out: &mut Vec<u8>, literals: &[u8]) {
    let ll = literals.len();
    out.push((ll.min(15) as u8) << 4);
    if ll >= 15 {
        put_length(out, ll - 15);
    }
    out.extend_from_slice(literals);
}

/// The writer of `lz4_stream`: history plus a hash table of history positions that persists
/// across records, like `LZ4_stream_t` fed by `LZ4_compress_fast_continue`.
pub struct Lz4StreamEncoder {
    history: History,
    /// Hash of 4 bytes → newest position in `history.buf` starting with them.
    table: Vec<u32>,
    scratch: Vec<u8>,
}

impl Lz4StreamEncoder {
    pub fn new() -> Self {
        Lz4StreamEncoder { history: History::default(), table: vec![EMPTY; 1 << LZ4_HASH_LOG], scratch: Vec::new() }
    }

    /// Shift table positions after `dropped` bytes left the front of the history.
    fn rebase(&mut self, dropped: usize) {
        for slot in self.table.iter_mut() {
            *slot = if *slot == EMPTY || (*slot as usize) < dropped { EMPTY } else { *slot - dropped as u32 };
        }
    }

    /// Compress `history.buf[start..end]` (the record just appended) as one LZ4 block whose
    /// matches may reach back up to 65535 bytes into the history; append it to `out`.
    fn compress_continue(&mut self, start: usize, end: usize, out: &mut Vec<u8>) {
        let buf = &self.history.buf;
        let table = &mut self.table;
        let len = end - start;
        if len < LZ4_MFLIMIT + 1 {
            put_last_literals(out, &buf[start..end]);
            return;
        }
        // Lowest position the reader's dictionary holds.
        let dict_low = start - start.min(WINDOW);
        let last_match_start = end - LZ4_MFLIMIT; // inclusive
        let match_limit = end - LZ4_LAST_LITERALS; // matches end at or before this
        let mut anchor = start;
        let mut ip = start;
        let mut misses = 0usize;
        while ip <= last_match_start {
            let seq = load_u32(buf, ip);
            let h = lz4_hash(buf, ip);
            let cand = table[h];
            table[h] = ip as u32;
            let usable = cand != EMPTY && {
                let c = cand as usize;
                c < ip && ip - c <= LZ4_MAX_DISTANCE && c >= dict_low && load_u32(buf, c) == seq
            };
            if !usable {
                ip += 1 + (misses >> 6);
                misses += 1;
                continue;
            }
            misses = 0;
            let mut c = cand as usize;
            // Extend backwards over pending literals.
            while ip > anchor && c > dict_low && buf[ip - 1] == buf[c - 1] {
                ip -= 1;
                c -= 1;
            }
            // Extend forwards.
            let from = ip + LZ4_MIN_MATCH;
            let m = from + common_prefix(buf, c + LZ4_MIN_MATCH, from, match_limit - from);
            put_sequence(out, &buf[anchor..ip], ip - c, m - ip);
            ip = m;
            anchor = ip;
            if ip >= 2 && ip - 2 <= last_match_start {
                table[lz4_hash(buf, ip - 2)] = (ip - 2) as u32;
            }
        }
        put_last_literals(out, &buf[anchor..end]);
    }
}

impl Default for Lz4StreamEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Lz4StreamEncoder {
    /// Append `record`'s stored form to `out` and say how it is stored. Buffers grow
    /// fallibly: running out of memory is an error, not an abort.
    pub fn encode(&mut self, record: &[u8], out: &mut Vec<u8>) -> Result<StreamBlock> {
        let dropped = self.history.make_room(record.len());
        if dropped > 0 {
            self.rebase(dropped);
        }
        let start = self.history.buf.len();
        try_reserve(&mut self.history.buf, record.len(), "the stream's history")?;
        try_reserve(out, record.len() + record.len() / 255 + 16, "the stream's output")?;
        self.history.buf.extend_from_slice(record);
        let end = self.history.buf.len();
        if record.len() > WINDOW {
            // Too large for the ring buffer: plain block mode, no context. Index the record's
            // last window so that later records can still refer to it.
            try_resize(&mut self.scratch, block::compress_bound(record.len()), "a compressed record")?;
            let n = block::compress_to(record, &mut self.scratch)?;
            let buf = &self.history.buf;
            for p in end - WINDOW..end - 7 {
                self.table[lz4_hash(buf, p)] = p as u32;
            }
            if n < record.len() {
                out.extend_from_slice(&self.scratch[..n]);
                return Ok(StreamBlock::Independent);
            }
            out.extend_from_slice(record);
            return Ok(StreamBlock::Raw);
        }
        let at = out.len();
        self.compress_continue(start, end, out);
        Ok(if out.len() - at < record.len() {
            StreamBlock::Linked
        } else {
            out.truncate(at);
            out.extend_from_slice(record);
            StreamBlock::Raw
        })
    }
}

/// The reader: decodes records in the order written, against the same history.
#[derive(Default)]
pub struct Lz4StreamDecoder {
    history: History,
}

impl Lz4StreamDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Decode one record stored as `block` from `payload` into `dst`, whose length is the
    /// record's raw length, which must come out exactly.
    pub fn decode(&mut self, block: StreamBlock, payload: &[u8], dst: &mut [u8]) -> Result<()> {
        match block {
            StreamBlock::Raw if payload.len() == dst.len() => dst.copy_from_slice(payload),
            StreamBlock::Raw => {
                return Err(CodecError::corrupt(format!(
                    "raw record is {} bytes, the record is {}",
                    payload.len(),
                    dst.len()
                )))
            }
            StreamBlock::Independent => block::decompress_into(payload, dst)?,
            StreamBlock::Linked => {
                let n = super::decode::decompress_into_with_dict(payload, dst, self.history.dict())
                    .map_err(|e| block::block_error(e, dst.len()))?;
                if n != dst.len() {
                    return Err(CodecError::corrupt(format!(
                        "lz4 stream block decoded to {n} bytes, expected {}",
                        dst.len()
                    )));
                }
            }
        }
        self.history.make_room(dst.len());
        try_reserve(&mut self.history.buf, dst.len(), "the stream's history")?;
        self.history.buf.extend_from_slice(dst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    fn encode_all(records: &[Vec<u8>]) -> Vec<(StreamBlock, Vec<u8>)> {
        let mut enc = Lz4StreamEncoder::new();
        records
            .iter()
            .map(|r| {
                let mut out = Vec::new();
                let block = enc.encode(r, &mut out).unwrap();
                (block, out)
            })
            .collect()
    }

    #[test]
    fn edges_round_trip() {
        let mut rng = SeededRng::new(99);
        let random = rng.printable(2000);
        let big: Vec<u8> = b"a large change ".iter().cycle().take(200_000).copied().collect();
        let mut records =
            vec![random.clone(), random.clone(), Vec::new(), b"x".to_vec(), big.clone(), big[..1000].to_vec()];
        records.extend((0..3000).map(|i| rng.printable(100 + i % 900)));
        records.push(random.clone());
        let encoded = encode_all(&records);
        // A raw-stored record still enters the history: the second copy is a tiny block.
        assert_eq!(encoded[0].0, StreamBlock::Raw);
        assert_eq!(encoded[1].0, StreamBlock::Linked);
        assert!(encoded[1].1.len() < 20, "copy of the previous record took {} bytes", encoded[1].1.len());
        assert_eq!(encoded[4].0, StreamBlock::Independent);
        let mut dec = Lz4StreamDecoder::new();
        for (record, (block, payload)) in records.iter().zip(&encoded) {
            let mut out = vec![0u8; record.len()];
            dec.decode(*block, payload, &mut out).unwrap();
            assert_eq!(&out, record);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// Any sequence of records round-trips, history trimming included.
        #[test]
        fn round_trip(seed: u64, n in 1usize..60, max_len in 1usize..9000, repeat in 0u64..4) {
            let mut rng = SeededRng::new(seed);
            let pool: Vec<Vec<u8>> = (0..8)
                .map(|_| {
                    let len = rng.below(max_len as u64) as usize;
                    rng.printable(len)
                })
                .collect();
            let records: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    if rng.below(4) < repeat {
                        pool[rng.below(8) as usize].clone()
                    } else {
                        let len = rng.below(max_len as u64) as usize;
                        rng.bytes(len)
                    }
                })
                .collect();
            let mut dec = Lz4StreamDecoder::new();
            for (record, (block, payload)) in records.iter().zip(encode_all(&records)) {
                let mut out = vec![0u8; record.len()];
                dec.decode(block, &payload, &mut out).unwrap();
                proptest::prop_assert_eq!(&out, record);
            }
        }

        /// Damaged payloads never panic or write past the record: decoded exactly, or an error.
        #[test]
        fn damaged_input_is_an_error_or_exact(seed: u64, flips in 1usize..4, cut in 0usize..64) {
            let mut rng = SeededRng::new(seed);
            let text = b"spill spill change record ".repeat(40);
            let records: Vec<Vec<u8>> = (0..20).map(|i| text[i * 7..i * 7 + 300].to_vec()).collect();
            let encoded = encode_all(&records);
            let mut dec = Lz4StreamDecoder::new();
            for (record, (block, mut payload)) in records.iter().zip(encoded) {
                for _ in 0..flips {
                    if !payload.is_empty() {
                        let at = rng.below(payload.len() as u64) as usize;
                        payload[at] ^= 1 << rng.below(8);
                    }
                }
                payload.truncate(payload.len().saturating_sub(cut % 3));
                let mut out = vec![0u8; record.len()];
                if dec.decode(block, &payload, &mut out).is_err() {
                    break; // the history is now out of step: a real reader stops here too
                }
            }
        }
    }
}
