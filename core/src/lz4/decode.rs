//! Our own LZ4 block decoder: a raw-pointer fast loop, a bounds-checked careful path.
//!
//! ```text
//! decode.rs -
//!
//!     Decoding of the LZ4 block format.
//!
//!     The LZ4 block format
//!     --------------------
//!
//!     A block is a series of sequences. Every sequence starts with a token
//!     byte: its high nibble is the number of literal bytes that follow, its
//!     low nibble the length of the match after them, minus 4 (the shortest
//!     match, MINMATCH). A nibble of 15 means the length goes on: each next
//!     byte is added to it, and a byte of 255 says yet another byte follows
//!     (so 15 + 255 + 255 + 7 is written F, FF, FF, 07).
//!
//!         token | [literal length bytes] | literals |
//!               offset (2 bytes, little-endian) | [match length bytes]
//!
//!     The match copies `length` bytes starting `offset` bytes back from the
//!     current end of the output (1 <= offset <= 65535). A match may overlap
//!     its own output (offset < length): it is then a copy made one byte after
//!     the other, so offset 1 repeats the last byte, offset 2 the last two, and
//!     so on - run-length encoding falls out of the format for free.
//!
//!     The last sequence has literals only and no offset: the block ends
//!     right after its literals. The block carries no length of its own; the
//!     caller knows how large the output is (PostgreSQL keeps the raw size in
//!     its TOAST header) and gives us a buffer of that size.
//!
//!     The specification adds rules for encoders (the last 5 bytes are
//!     literals, the last match starts at least 12 bytes before the end) so
//!     that decoders may copy in wide chunks; like lz4_flex, the decoder we
//!     replace, we do not require them of the input: any block made of
//!     complete sequences and ending with a literal section decodes.
//!
//!     What is an error
//!     ----------------
//!
//!     Input that ends inside a sequence (in a length, in the literals, in
//!     an offset), an offset of 0, an offset reaching before the start of
//!     the output (and of the dictionary, when there is one), and output
//!     that would not fit in the caller's buffer. The error reported is the
//!     one lz4_flex's safe decoder reports for the same input, found in the
//!     same order (literal length, literals, offset, match length, room for
//!     the match, where the match starts): the frame decoder tells a block
//!     that outgrows its buffer from a damaged one. (One difference, out of
//!     reach in practice: lz4_flex adds a length's bytes in 32 bits, so a
//!     length written with more than 16 million 255 bytes wraps there; here
//!     it does not, and such a length runs past the end of the input.)
//!
//!     The decoder: a fast loop and a careful path
//!     -------------------------------------------
//!
//!     The output is written straight into the caller's slice. Decoding
//!     alternates between two loops.
//!
//!     The fast loop (`fast_loop`) works on raw pointers and copies in wide,
//!     fixed-size chunks that may run past the end of a literal run or a
//!     match ("wild" copies, as liblz4 does; the copies are the ones of
//!     `wild_copy`, shared with the pglz decoder). It runs only while there
//!     is room for them at both ends, which it checks before every step:
//!
//!       - at the top of every sequence, at least FAST_IN (19) input bytes
//!         are left: the token, 16 bytes of literal copy and the 2-byte
//!         offset after at most 14 literals all lie inside the input;
//!
//!       - at the top of every sequence, at least FAST_OUT (64) output bytes
//!         are left. This is an invariant: it holds on entry, and a sequence
//!         is only completed in the fast loop if FAST_OUT bytes are still
//!         left after its match, which is also what every chunked match copy
//!         needs (none writes more than 31 bytes past the match).
//!
//!     A short literal run (0..14) is then copied as 16 bytes whatever its
//!     count. A long one (length nibble 15, the length read with every byte
//!     checked) is copied in 32-byte steps if 32 bytes more than the run are
//!     left in both buffers. The offset is checked once for both 0 and
//!     reaching before the start of the output. The match is copied:
//!
//!       - up to 18 bytes (match nibble under 15): three 8-byte moves when
//!         the offset is 8 or more; for offsets 1..7, which repeat the last
//!         `offset` bytes, their pattern is built in a register (a multiply)
//!         and stored three times, 8 bytes every largest multiple of the
//!         offset up to 8 bytes;
//!       - longer, without overlap (offset >= length): 16-byte moves from
//!         both of its ends up to 128 bytes (no loop: the branch is on the
//!         length class only, as in a memcpy), one memcpy beyond;
//!       - longer, overlapping: 32-byte steps for offsets of 16 or more,
//!         8-byte steps for offsets 8..15, the register pattern for 1..7.
//!
//!     A move never reads output bytes that an earlier move of the same
//!     match has still to write (it reads from at least its own size back),
//!     so overlapping matches come out as the byte-by-byte copy the format
//!     defines.
//!
//!     Whenever a check fails - no room for a wild copy, an offset of 0 or
//!     one reaching before the start of the output (into the dictionary, or
//!     an error), too few bytes left at either end - the fast loop puts both
//!     positions back to the start of the sequence and hands it to the
//!     careful path, which decodes it again and reports the error, if any.
//!     The only error the fast loop reports itself is a length running off
//!     the end of the input, after everything the careful path would check
//!     first for that sequence has passed.
//!
//!     The careful path is safe Rust: it decodes one sequence with every
//!     length checked against what is left of both buffers and exact copies
//!     (bounds-checked slice operations); it handles long literal runs near
//!     the end, the end of the block (the last sequence has no match and
//!     always ends up here), the last bytes of the output, the dictionary
//!     and every error but one, and then hands back to the fast loop.
//!
//!     With a dictionary (the previous block of a linked LZ4 frame, or the
//!     history of an LZ4 stream), an offset reaching before the start of the
//!     output continues into the end of the dictionary; a match may start in
//!     the dictionary and run on into the output.
//! ```
//!
//! # Why the unsafe code is sound
//!
//! Every raw-pointer access in the fast loop lies inside `src` or `dst`, proven by a check
//! made before it (its `// SAFETY:` comment names it), and every pointer made by arithmetic
//! stays inside its slice or one past its end. Reads of `dst` beyond the decoded bytes (the
//! tail of a wild chunk) read initialized memory, `dst` being a `&mut [u8]`. The fast loop is
//! fuzzed under AddressSanitizer against lz4_flex's safe decoder
//! (`lz4_block_decode_matches_reference`, RELIABILITY.md), and the unit tests below
//! cross-check it on every sequence shape near both ends of both buffers.
//!
//! The bytes past the end of the decoded data (when the caller's buffer is larger than the
//! result) may hold copies of decoded bytes or of input bytes, left by wild copies: never
//! anything else.

use std::ptr;

use crate::bytes::repeating;
use crate::wild_copy::{copy16, copy16_pairs, copy8};

/// Why a block does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The block ends in the middle of a sequence (a length, or an offset).
    Truncated,
    /// A literal run is longer than what is left of the block.
    LiteralOutOfBounds,
    /// A match has offset 0.
    OffsetZero,
    /// A match refers to bytes before the start of the output (and of the dictionary).
    OffsetOutOfBounds,
    /// The block decodes to more bytes than the output buffer holds.
    OutputTooSmall,
}

/// The shortest match; a token's match nibble is the match length minus this.
const MIN_MATCH: usize = 4;
/// Input left (from the token) for a sequence of the fast loop: the token, a 16-byte literal
/// copy and the 2-byte offset after at most 14 literals all lie inside.
const FAST_IN: usize = 1 + 16 + 2;
/// Output left at the top of every sequence of the fast loop: 16 bytes of literal copy, and
/// after the match at least this much again, which covers the overshoot of every chunked
/// match copy (at most 31 bytes) and keeps the invariant for the next sequence.
const FAST_OUT: usize = 64;
/// Inputs longer than this are decoded by the careful path alone: up to it no length read in
/// the fast loop (at most 255 per input byte, plus 19) can overflow a usize in the room
/// checks (`len + FAST_OUT`), on any target (2^55 bytes on 64-bit ones, 8 MB on 32-bit).
const MAX_FAST_INPUT: usize = usize::MAX / 512;
/// Room left past a long literal run (in both buffers) for its copy in 32-byte steps in the
/// fast loop: the copy overshoots by at most 31 bytes; the offset lies inside it too.
const LONG_LIT_ROOM: usize = 32;
/// Room that must be left past a match for its chunked copy in the careful path, which may
/// overshoot by up to 15 bytes.
const WILD_ROOM: usize = 16;
/// Matches without overlap up to this long are copied in inline chunks in the careful path;
/// longer ones by one exact copy (a memcpy call).
const INLINE_COPY: usize = 32;

/// Decode the LZ4 block `src` into the front of `dst`; returns the number of bytes written.
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<usize, DecodeError> {
    decode::<false>(src, dst, &[])
}

/// [`decompress_into`] with `dict` as the bytes just before the output: matches may reach
/// back into its last 64 KB.
pub fn decompress_into_with_dict(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<usize, DecodeError> {
    decode::<true>(src, dst, dict)
}

/// Read the bytes extending a length nibble of 15 and return what they add.
#[inline(always)]
fn read_length(src: &[u8], ip: &mut usize) -> Result<usize, DecodeError> {
    let mut n = 0usize;
    loop {
        let b = *src.get(*ip).ok_or(DecodeError::Truncated)?;
        *ip += 1;
        n += b as usize;
        if b != 255 {
            return Ok(n);
        }
    }
}

/// For a match at `m` with an offset of 1..7 (it repeats the `offset` bytes at m): the 8 bytes
/// of that repetition, and the largest multiple of the offset up to 8, at which intervals they
/// can be stored in phase.
///
/// # Safety
///
/// `m..m + 8` must be readable (the bytes from `m + offset` on are read but not used).
#[inline(always)]
unsafe fn repeat_pattern(m: *const u8, offset: usize) -> ([u8; 8], usize) {
    // SAFETY: the caller's contract.
    let seed = u64::from_le_bytes(unsafe { ptr::read_unaligned(m as *const [u8; 8]) });
    repeating(seed, offset)
}

/// [`read_length`] for the fast loop's cursor `ip`, a pointer into `src` (which starts at
/// `istart`).
#[inline(always)]
fn read_length_at(src: &[u8], istart: *const u8, ip: &mut *const u8) -> Result<usize, DecodeError> {
    let mut at = *ip as usize - istart as usize;
    let n = read_length(src, &mut at)?;
    // SAFETY: read_length leaves `at` at most src.len() (it reads only bytes it checked).
    *ip = unsafe { istart.add(at) };
    Ok(n)
}

/// The fast loop (see the module header): decode whole sequences from `*ip_at` in `src` to
/// `*op_at` in `dst` while both have room for wild copies; on return both positions are at the
/// start of a sequence for the careful path (the block's last sequence, which has no match,
/// always goes there: the fast loop stops FAST_IN bytes before the end of the input).
#[inline(always)]
fn fast_loop(src: &[u8], dst: &mut [u8], ip_at: &mut usize, op_at: &mut usize) -> Result<(), DecodeError> {
    // Invariants on entry: *ip_at <= src.len() and *op_at <= dst.len().
    if dst.len() - *op_at < FAST_OUT || src.len() - *ip_at < FAST_IN || src.len() > MAX_FAST_INPUT {
        return Ok(());
    }
    let ostart = dst.as_mut_ptr();
    // SAFETY: every pointer made here is inside its slice or one past its end: *ip_at <=
    // src.len(), *op_at <= dst.len(), and src.len() - FAST_IN + 1 <= src.len() (src.len() >=
    // FAST_IN, checked above).
    let (istart, iend, in_limit, oend, mut ip, mut op) = unsafe {
        let istart = src.as_ptr();
        (
            istart,
            istart.add(src.len()),
            // ip < in_limit <=> at least FAST_IN input bytes left at ip.
            istart.add(src.len() - FAST_IN + 1),
            ostart.add(dst.len()),
            istart.add(*ip_at),
            ostart.add(*op_at),
        )
    };
    // Loop invariants at the top: istart <= ip <= iend, ostart <= op <= oend, and
    // oend - op >= FAST_OUT.
    while ip < in_limit {
        let (seq_ip, seq_op) = (ip, op);
        // SAFETY: ip < in_limit: FAST_IN bytes are left at ip, so the token at ip and the 16
        // bytes after it (ip + 17 <= iend) are inside src; oend - op >= FAST_OUT >= 16, so
        // op + 16 is inside dst. For a short run, lit <= 14 keeps ip + 1 + lit + 2 <= ip + 17
        // and op + lit <= op + 14 inside.
        let (token, lit_nibble) = unsafe {
            let token = *ip;
            ip = ip.add(1);
            (token, (token >> 4) as usize)
        };
        if lit_nibble < 15 {
            // SAFETY: see above (16 bytes readable at ip and writable at op; lit <= 14); src
            // and dst are distinct slices, so they do not overlap.
            unsafe {
                copy16(ip, op);
                ip = ip.add(lit_nibble);
                op = op.add(lit_nibble);
            }
        } else {
            // Long runs are not rare (a fifth of the sequences in page images), but marked
            // cold, with the length bytes of long matches and every hand-back to the careful
            // path, they let LLVM lay the common sequence (a short run, a short match) out
            // as one straight stretch of code with a single taken branch instead of four:
            // 1-3% faster (BENCHMARKS.md, "the fast loop's rare paths marked cold").
            std::hint::cold_path();
            // SAFETY: ip <= seq_ip + 1 and FAST_IN bytes are left at seq_ip: the first length
            // byte is inside src. Only a byte of 255 needs the next ones (checked).
            let first = unsafe {
                let b = *ip;
                ip = ip.add(1);
                b
            };
            let mut lit = lit_nibble + first as usize;
            if first == 255 {
                lit += read_length_at(src, istart, &mut ip)?;
            }
            if lit + LONG_LIT_ROOM > iend as usize - ip as usize || lit + LONG_LIT_ROOM > oend as usize - op as usize {
                // Near an end (or the run does not fit at all): the careful path decides.
                std::hint::cold_path();
                ip = seq_ip;
                op = seq_op;
                break;
            }
            // SAFETY: lit + 32 <= iend - ip and lit + 32 <= oend - op (just checked): the
            // copy's reach of lit + 31 bytes is inside both, and src, dst do not overlap. The
            // offset's two bytes at ip + lit are inside src too.
            unsafe {
                copy16_pairs(ip, op, lit);
                ip = ip.add(lit);
                op = op.add(lit);
            }
        }
        // SAFETY: ip + 2 <= iend: after a short run ip <= seq_ip + 15 and seq_ip + FAST_IN <=
        // iend; after a long run LONG_LIT_ROOM bytes are left at ip.
        let offset = unsafe {
            let o = u16::from_le_bytes(ptr::read_unaligned(ip as *const [u8; 2])) as usize;
            ip = ip.add(2);
            o
        };
        // One test for an offset of 0 and for one reaching before the start of the output
        // (into the dictionary, or an error): the careful path tells them apart.
        if offset.wrapping_sub(1) >= op as usize - ostart as usize {
            std::hint::cold_path();
            ip = seq_ip;
            op = seq_op;
            break;
        }
        let mut len = (token & 15) as usize;
        if len == 15 {
            std::hint::cold_path();
            // SAFETY: after a short run ip <= seq_ip + 17 < seq_ip + FAST_IN; after a long one
            // LONG_LIT_ROOM - 2 bytes are left at ip: the first length byte is inside src.
            let first = unsafe {
                let b = *ip;
                ip = ip.add(1);
                b
            };
            len += first as usize;
            if first == 255 {
                len += read_length_at(src, istart, &mut ip)?;
            }
        }
        len += MIN_MATCH;
        if len + FAST_OUT > oend as usize - op as usize {
            // The output is too near its end for chunked copies: the careful path decides.
            std::hint::cold_path();
            ip = seq_ip;
            op = seq_op;
            break;
        }
        // From here: ostart <= op - offset, and op + len + FAST_OUT <= oend, so every copy
        // below (reaching at most 31 bytes past op + len) writes inside dst and reads inside
        // dst (reads start offset bytes before the writes), and the loop invariant holds for
        // the next sequence.
        // SAFETY: offset <= op - ostart.
        let m = unsafe { op.sub(offset) };
        if len <= 18 {
            if offset >= 8 {
                // SAFETY: writes op..op + 24 and reads m..m + 24, both inside dst (24 < len +
                // FAST_OUT). With offset >= 8 each 8-byte chunk reads bytes before its own
                // destination (no overlap), finished by the chunks before it.
                unsafe {
                    copy8(m, op);
                    copy8(m.add(8), op.add(8));
                    copy8(m.add(16), op.add(16));
                }
            } else {
                // The three stores at op + k * step (5 <= step <= 8) cover at least op..op +
                // 2 * 5 + 8 = op + 18 >= op + len.
                // SAFETY: m + 8 <= op + 7 and op + 24 are inside dst (24 < len + FAST_OUT).
                unsafe {
                    let (v, step) = repeat_pattern(m, offset);
                    for k in 0..3 {
                        ptr::write_unaligned(op.add(k * step) as *mut [u8; 8], v);
                    }
                }
            }
            // SAFETY: op + len + FAST_OUT <= oend (checked above).
            op = unsafe { op.add(len) };
            continue;
        }
        if offset >= len {
            // No overlap: the whole source is final before op. Up to 128 bytes it is copied
            // in 16-byte moves from both of its ends (the moves from the front and from the
            // back meet or overlap in the middle, writing the same bytes twice), so the only
            // branch is on the length class, as in a memcpy, and nothing is written past the
            // match; longer matches are one memcpy.
            // SAFETY: len >= 19 (shorter ones are done above). Every move reads inside m..m +
            // max(len, 32) and writes inside op..op + max(len, 32): for len <= 32 the 32
            // bytes end 13 past op + len at most, inside dst (len + FAST_OUT is), and read
            // up to m + 32 <= op + 13, inside dst too; the two-ended moves for 33..128 stay
            // inside m..m + len and op..op + len. Source and destination of every move are
            // offset >= 19 bytes apart, so no move overlaps itself.
            unsafe {
                if len <= 32 {
                    copy16(m, op);
                    copy16(m.add(16), op.add(16));
                } else if len <= 64 {
                    copy16(m, op);
                    copy16(m.add(16), op.add(16));
                    copy16(m.add(len - 32), op.add(len - 32));
                    copy16(m.add(len - 16), op.add(len - 16));
                } else if len <= 128 {
                    for k in [0, 16, 32, 48] {
                        copy16(m.add(k), op.add(k));
                    }
                    for k in [64, 48, 32, 16] {
                        copy16(m.add(len - k), op.add(len - k));
                    }
                } else {
                    ptr::copy_nonoverlapping(m, op, len);
                }
            }
        } else if offset >= 16 {
            // An overlapping match from 16..len - 1 bytes back: 32-byte steps in order.
            // SAFETY: reach len + 31 < len + FAST_OUT at op and at m < op; m + 16 <= op.
            unsafe { copy16_pairs(m, op, len) };
        } else if offset >= 8 {
            // SAFETY: 8-byte steps from op while below op + len: writes reach op + len + 7 and
            // reads m + len + 7 < op + len + 7, inside dst; each step reads bytes at least 8
            // back (no overlap), already final.
            unsafe {
                let end = op.add(len);
                let (mut d, mut s) = (op, m as *const u8);
                while d < end {
                    copy8(s, d);
                    d = d.add(8);
                    s = s.add(8);
                }
            }
        } else {
            // Offsets 1..7: the pattern stored every `step` bytes, two stores a step.
            // SAFETY: see repeat_pattern; the stores start below op + len and reach at most
            // op + len - 1 + 8 + 8 (two stores of a step of at most 8), inside dst.
            unsafe {
                let (v, step) = repeat_pattern(m, offset);
                let end = op.add(len);
                let mut d = op;
                while d < end {
                    ptr::write_unaligned(d as *mut [u8; 8], v);
                    ptr::write_unaligned(d.add(step) as *mut [u8; 8], v);
                    d = d.add(2 * step);
                }
            }
        }
        // SAFETY: op + len + FAST_OUT <= oend (checked above).
        op = unsafe { op.add(len) };
    }
    *ip_at = ip as usize - istart as usize;
    *op_at = op as usize - ostart as usize;
    Ok(())
}

#[inline(always)]
fn decode<const DICT: bool>(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<usize, DecodeError> {
    let mut ip = 0usize;
    let mut op = 0usize;
    loop {
        // Invariants: ip <= src.len(), op <= dst.len(), both at the start of a sequence.
        fast_loop(src, dst, &mut ip, &mut op)?;

        // Careful path: one sequence, every length checked.
        let token = *src.get(ip).ok_or(DecodeError::Truncated)?;
        ip += 1;
        let mut lit = (token >> 4) as usize;
        if lit == 15 {
            lit += read_length(src, &mut ip)?;
        }
        if lit > src.len() - ip {
            return Err(DecodeError::LiteralOutOfBounds);
        }
        if lit > dst.len() - op {
            return Err(DecodeError::OutputTooSmall);
        }
        dst[op..op + lit].copy_from_slice(&src[ip..ip + lit]);
        ip += lit;
        op += lit;
        if ip == src.len() {
            return Ok(op);
        }
        let Some(&[lo, hi]) = src.get(ip..ip + 2).and_then(|s| <&[u8; 2]>::try_from(s).ok()) else {
            return Err(DecodeError::Truncated);
        };
        ip += 2;
        let offset = u16::from_le_bytes([lo, hi]) as usize;
        if offset == 0 {
            return Err(DecodeError::OffsetZero);
        }
        let mut len = (token & 15) as usize + MIN_MATCH;
        if len == 15 + MIN_MATCH {
            len += read_length(src, &mut ip)?;
        }
        op = copy_match::<DICT>(dst, op, offset, len, dict)?;
    }
}

/// Append the match (`offset` >= 1 back, `len` bytes) at `op`; returns the new end of the
/// output. Checks that it fits and that it starts inside the output (or the dictionary).
#[inline(always)]
fn copy_match<const DICT: bool>(
    dst: &mut [u8],
    mut op: usize,
    offset: usize,
    mut len: usize,
    dict: &[u8],
) -> Result<usize, DecodeError> {
    if len > dst.len() - op {
        return Err(DecodeError::OutputTooSmall);
    }
    if offset > op {
        if !DICT {
            return Err(DecodeError::OffsetOutOfBounds);
        }
        // The match starts `offset - op` bytes before the end of the dictionary.
        let back = offset - op;
        if back > dict.len() {
            return Err(DecodeError::OffsetOutOfBounds);
        }
        let from_dict = len.min(back);
        let start = dict.len() - back;
        dst[op..op + from_dict].copy_from_slice(&dict[start..start + from_dict]);
        op += from_dict;
        len -= from_dict;
        if len == 0 {
            return Ok(op);
        }
        // Now op == offset: the rest starts at the beginning of the output.
    }
    let start = op - offset;
    let end = op + len;
    if dst.len() - end < WILD_ROOM {
        // Near the end of the output: exact copies only.
        if offset >= len {
            dst.copy_within(start..start + len, op);
        } else {
            for i in 0..len {
                dst[op + i] = dst[start + i];
            }
        }
        return Ok(end);
    }
    if offset >= len && len > INLINE_COPY {
        // A long match without overlap: one exact copy (memcpy) from the output before op.
        let (done, rest) = dst.split_at_mut(op);
        rest[..len].copy_from_slice(&done[start..start + len]);
    } else if offset >= 32 {
        let (mut s, mut d) = (start, op);
        // 32 bytes while that overshoots the match by less than 16, then 16.
        while d + 16 < end {
            dst.copy_within(s..s + 16, d);
            dst.copy_within(s + 16..s + 32, d + 16);
            s += 32;
            d += 32;
        }
        if d < end {
            dst.copy_within(s..s + 16, d);
        }
    } else if offset >= 16 {
        copy_within_chunks::<16>(dst, start, op, end);
    } else if offset >= 8 {
        copy_within_chunks::<8>(dst, start, op, end);
    } else if offset == 1 {
        // A run of one byte (zeros, mostly): memset.
        let byte = dst[start];
        dst[op..end].fill(byte);
    } else {
        // Offsets 2..7: the match repeats the last `offset` bytes. Build its first 8 bytes
        // from them, then copy 8-byte chunks from `period` back, the smallest multiple of
        // `offset` that is 8 or more (each chunk then reads bytes already final).
        let seed: [u8; 8] = dst[start..start + 8].try_into().unwrap_or([0; 8]);
        dst[op..op + 8].copy_from_slice(&repeating(u64::from_le_bytes(seed), offset).0);
        let period = [8, 8, 8, 9, 8, 10, 12, 14][offset];
        copy_within_chunks::<8>(dst, op + 8 - period, op + 8, end);
    }
    Ok(end)
}

/// Copy `dst[s..]` to `dst[d..end]` in `N`-byte chunks, in order; the last chunk may run up to
/// `N - 1` bytes past `end` (the careful path leaves `WILD_ROOM` for it). With `d - s >= N`
/// every chunk reads bytes earlier chunks have finished, as a match's byte-by-byte copy would.
#[inline(always)]
fn copy_within_chunks<const N: usize>(dst: &mut [u8], mut s: usize, mut d: usize, end: usize) {
    while d < end {
        dst.copy_within(s..s + N, d);
        s += N;
        d += N;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// One sequence of a test block: its literals and its match (offset, length), if any.
    type Part<'a> = (&'a [u8], Option<(u16, usize)>);

    /// Append a length nibble's extension bytes for `n` (the part above 15).
    fn push_length(out: &mut Vec<u8>, mut n: usize) {
        while n >= 255 {
            out.push(255);
            n -= 255;
        }
        out.push(n as u8);
    }

    /// Append one sequence: `lits`, then (if `m` is given) a match of (offset, length).
    fn seq(out: &mut Vec<u8>, lits: &[u8], m: Option<(u16, usize)>) {
        let ln = lits.len().min(15) as u8;
        let mn = m.map_or(0, |(_, len)| (len - MIN_MATCH).min(15) as u8);
        out.push(ln << 4 | mn);
        if lits.len() >= 15 {
            push_length(out, lits.len() - 15);
        }
        out.extend_from_slice(lits);
        if let Some((offset, len)) = m {
            out.extend_from_slice(&offset.to_le_bytes());
            if len - MIN_MATCH >= 15 {
                push_length(out, len - MIN_MATCH - 15);
            }
        }
    }

    /// What the block should decode to, made one byte at a time.
    fn naive(lits_and_matches: &[Part]) -> Vec<u8> {
        let mut out = Vec::new();
        for (lits, m) in lits_and_matches {
            out.extend_from_slice(lits);
            if let Some((offset, len)) = *m {
                for _ in 0..len {
                    out.push(out[out.len() - offset as usize]);
                }
            }
        }
        out
    }

    fn block(parts: &[Part]) -> Vec<u8> {
        let mut b = Vec::new();
        for (lits, m) in parts {
            seq(&mut b, lits, *m);
        }
        b
    }

    /// lz4_flex's error as ours.
    fn same_kind(e: &lz4_flex::block::DecompressError) -> DecodeError {
        use lz4_flex::block::DecompressError as E;
        match e {
            E::OutputTooSmall { .. } => DecodeError::OutputTooSmall,
            E::LiteralOutOfBounds => DecodeError::LiteralOutOfBounds,
            E::ExpectedAnotherByte => DecodeError::Truncated,
            E::OffsetZero => DecodeError::OffsetZero,
            E::OffsetOutOfBounds => DecodeError::OffsetOutOfBounds,
            other => panic!("lz4_flex error {other:?} has no counterpart"),
        }
    }

    /// Decode with ours and with lz4_flex into buffers of `cap` bytes; both must agree.
    fn agree(src: &[u8], cap: usize, dict: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let mut ours = vec![0xA5; cap];
        let mut theirs = vec![0xA5; cap];
        let (a, b) = if dict.is_empty() {
            (decompress_into(src, &mut ours), lz4_flex::block::decompress_into(src, &mut theirs))
        } else {
            (
                decompress_into_with_dict(src, &mut ours, dict),
                lz4_flex::block::decompress_into_with_dict(src, &mut theirs, dict),
            )
        };
        match (a, b) {
            (Ok(n), Ok(m)) => {
                assert_eq!(n, m, "lengths differ for {src:02x?}");
                assert_eq!(ours[..n], theirs[..m], "bytes differ for {src:02x?}");
                Ok(ours[..n].to_vec())
            }
            (Err(e), Err(f)) => {
                assert_eq!(e, same_kind(&f), "errors differ for {src:02x?} into {cap}");
                Err(e)
            }
            (a, b) => panic!("ours {a:?}, lz4_flex {b:?} for {src:02x?} into {cap}"),
        }
    }

    fn check(parts: &[Part]) {
        let b = block(parts);
        let want = naive(parts);
        for slack in [0, 1, 17, 100] {
            assert_eq!(agree(&b, want.len() + slack, &[]).unwrap(), want, "{parts:?}");
        }
        if !want.is_empty() {
            assert_eq!(agree(&b, want.len() - 1, &[]), Err(DecodeError::OutputTooSmall), "{parts:?}");
        }
        // Every strict prefix is an error or decodes to fewer bytes.
        for cut in 0..b.len() {
            if let Ok(got) = agree(&b[..cut], want.len() + 64, &[]) {
                assert!(got.len() < want.len() || want.is_empty(), "prefix {cut} of {parts:?}");
            }
        }
    }

    #[test]
    fn literals_only() {
        check(&[(b"", None)]);
        check(&[(b"a", None)]);
        check(&[(b"hello, world", None)]);
        check(&[(&[7; 15], None)]);
        check(&[(&[7; 16], None)]);
        for n in [269, 270, 271, 524, 525, 1000, 5000] {
            let lits: Vec<u8> = (0..n).map(|i| i as u8).collect();
            check(&[(&lits, None)]);
        }
    }

    #[test]
    fn every_offset_and_length_shape() {
        let text: Vec<u8> = (0..300u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for offset in [1u16, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 18, 31, 32, 33, 64, 100, 255, 300] {
            for len in [4usize, 5, 7, 8, 15, 16, 17, 18, 19, 20, 33, 64, 100, 273, 274, 529, 2000] {
                let lead = &text[..offset as usize];
                check(&[(lead, Some((offset, len))), (b"tail!", None)]);
                check(&[(lead, Some((offset, len))), (b"", None)]);
                // Short literals between matches, as the fast path sees them.
                check(&[
                    (&text, Some((offset, len))),
                    (b"xy", Some((offset, len))),
                    (&text[..14], Some((offset, len))),
                    (b"end of block", None),
                ]);
            }
        }
    }

    /// Blocks of random sequences of every shape (literal runs 0..40 and a few long ones,
    /// offsets 1..300 and some past the output's start, matches 4..300 bytes), decoded into
    /// buffers from 70 bytes short to 70 bytes larger than the result: every room check of the
    /// fast loop meets every shape near both ends of the output.
    #[test]
    fn random_sequences_near_both_ends() {
        let mut rng = SeededRng::new(15);
        let dict = rng.printable(400);
        // Under Miri (which checks the raw-pointer code for undefined behaviour) a few rounds.
        let rounds = if cfg!(miri) { 6 } else { 400 };
        for round in 0..rounds {
            let mut lits: Vec<Vec<u8>> = Vec::new();
            let mut matches: Vec<Option<(u16, usize)>> = Vec::new();
            let mut produced = 0usize;
            for _ in 0..rng.below(40) {
                let n = match rng.below(10) {
                    0 => 15 + rng.below(300) as usize,
                    1..=3 => 0,
                    _ => rng.below(15) as usize,
                };
                let l = rng.bytes(n);
                produced += l.len();
                let room = produced + if round % 2 == 1 { dict.len() } else { 0 };
                let offset = match rng.below(8) {
                    0 => 1 + rng.below(7),
                    1 => 8 + rng.below(8),
                    2 => 1 + rng.below(300),
                    _ => 16 + rng.below(120),
                } as usize;
                let offset = if rng.below(50) == 0 { room + 1 } else { offset.min(room) };
                let len = match rng.below(4) {
                    0 => 19 + rng.below(300) as usize,
                    _ => 4 + rng.below(15) as usize,
                };
                // (An offset of 0 here, with nothing before it, is an error case too.)
                lits.push(l);
                produced += len;
                matches.push(Some((offset as u16, len)));
            }
            let n = rng.below(20) as usize;
            lits.push(rng.bytes(n));
            matches.push(None);
            let parts: Vec<Part> = lits.iter().map(|l| &l[..]).zip(matches.iter().copied()).collect();
            let b = block(&parts);
            let d: &[u8] = if round % 2 == 1 { &dict } else { &[] };
            for cap in produced.saturating_sub(70)..produced + 70 {
                let _ = agree(&b, cap, d);
            }
            for cut in b.len().saturating_sub(40)..b.len() {
                let _ = agree(&b[..cut], produced + 64, d);
            }
        }
    }

    #[test]
    fn bad_offsets() {
        let ok = block(&[(b"abcdefgh", Some((8, 10))), (b"z", None)]);
        assert!(decompress_into(&ok, &mut [0; 64]).is_ok());
        let zero = block(&[(b"abcdefgh", Some((0, 10))), (b"z", None)]);
        assert_eq!(agree(&zero, 64, &[]), Err(DecodeError::OffsetZero));
        let beyond = block(&[(b"abcdefgh", Some((9, 10))), (b"z", None)]);
        assert_eq!(agree(&beyond, 64, &[]), Err(DecodeError::OffsetOutOfBounds));
        // The same with room for the fast path.
        let lits = [3u8; 40];
        let zero = block(&[(&lits, Some((0, 10))), (&lits, Some((0, 10))), (&lits, None)]);
        assert_eq!(agree(&zero, 1000, &[]), Err(DecodeError::OffsetZero));
        let beyond = block(&[(&lits[..10], Some((11, 10))), (&lits, Some((1, 10))), (&lits, None)]);
        assert_eq!(agree(&beyond, 1000, &[]), Err(DecodeError::OffsetOutOfBounds));
        // A block ending after a match (no last literal section) is truncated.
        let no_tail = block(&[(b"abcdefgh", Some((8, 10)))]);
        assert_eq!(agree(&no_tail, 64, &[]), Err(DecodeError::Truncated));
        assert_eq!(agree(&[], 64, &[]), Err(DecodeError::Truncated));
        // Literals running past the end of the block.
        assert_eq!(agree(&[0x50, 1, 2, 3], 64, &[]), Err(DecodeError::LiteralOutOfBounds));
    }

    #[test]
    fn dictionary_matches() {
        let dict: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 251) as u8).collect();
        for (offset, len) in [(1u16, 4usize), (5, 20), (16, 16), (16, 40), (100, 90), (1000, 4), (1000, 1200)] {
            for lits in [&b""[..], b"0123456789", &[9u8; 40]] {
                let b = block(&[(lits, Some((offset, len))), (b"tail", None)]);
                let mut history = dict.clone();
                history.extend_from_slice(lits);
                for _ in 0..len {
                    history.push(history[history.len() - offset as usize]);
                }
                history.extend_from_slice(b"tail");
                let want = &history[dict.len()..];
                assert_eq!(agree(&b, want.len() + 64, &dict).unwrap(), want, "offset {offset} len {len}");
            }
        }
        let too_far = block(&[(b"abc", Some((1004, 4))), (b"t", None)]);
        assert_eq!(agree(&too_far, 64, &dict), Err(DecodeError::OffsetOutOfBounds));
    }

    #[test]
    fn same_as_lz4_flex_on_compressed_data() {
        let mut rng = SeededRng::new(13);
        for round in 0..300 {
            let len = rng.below(if round % 3 == 0 { 70_000 } else { 2000 }) as usize;
            let data: Vec<u8> = match round % 4 {
                0 => rng.bytes(len),
                1 => rng.printable(len),
                2 => (0..len).map(|i| if rng.below(8) == 0 { rng.next_u64() as u8 } else { (i % 7) as u8 }).collect(),
                _ => (0..len).map(|_| [0u8, 0, 0, b' ', 1][rng.below(5) as usize]).collect(),
            };
            for block in [lz4_flex::block::compress(&data), super::super::block::compress(&data).unwrap()] {
                assert_eq!(agree(&block, data.len(), &[]).unwrap(), data);
                assert_eq!(agree(&block, data.len() + 33, &[]).unwrap(), data);
            }
            let n = rng.below(3000) as usize;
            let dict = rng.printable(n);
            let linked = lz4_flex::block::compress_with_dict(&data, &dict);
            assert_eq!(agree(&linked, data.len(), &dict).unwrap(), data);
        }
    }

    #[test]
    fn same_as_lz4_flex_on_garbage_and_damaged_blocks() {
        let mut rng = SeededRng::new(14);
        let dict = rng.printable(500);
        for round in 0..20_000 {
            let src = if round % 2 == 0 {
                {
                    let n = rng.below(200) as usize;
                    rng.bytes(n)
                }
            } else {
                let n = rng.below(400) as usize;
                let data = rng.printable(n).repeat(2);
                let mut b = lz4_flex::block::compress(&data);
                for _ in 0..=rng.below(3) {
                    if !b.is_empty() {
                        let at = rng.below(b.len() as u64) as usize;
                        b[at] = rng.next_u64() as u8;
                    }
                }
                b
            };
            let cap = rng.below(1200) as usize;
            let _ = agree(&src, cap, &[]);
            let _ = agree(&src, cap, &dict);
        }
    }
}
