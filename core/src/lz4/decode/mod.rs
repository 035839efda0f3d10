//! Our own LZ4 block decoder: a raw-pointer fast loop, a bounds-checked careful path.
//!
//! ```text
//! decode/mod.rs -
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
//!       - at the top of every sequence, at least FAST_OUT (32) output bytes
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
//!       - longer, overlapping: 32-byte steps for offsets of 32 or more; for
//!         offsets 1..31 the first 16 or 32 bytes of the match written, then
//!         loaded once into registers and stored again every largest multiple
//!         of the offset up to 16 or 32 bytes (`wild_copy::repeat_tail`).
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
//!     and every error but one, and then hands back to the fast loop. A
//!     match there that overlaps itself is copied by doubling (memmoves of
//!     the period, twice as long each time; a memset for offset 1), not byte
//!     by byte: a block's last match, often its longest, ends there.
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
//! stays inside its slice or one past its end. `dst` may be uninitialised memory
//! (`&mut [MaybeUninit<u8>]`): a load of output bytes into a register reads written bytes only
//! (before the match, or written by it); the tail of a wild chunk past them is moved only by
//! untyped copies (`copy16`, `copy_within`), which carry uninitialised bytes along soundly to
//! where they are rewritten. The fast loop is
//! fuzzed under AddressSanitizer against lz4_flex's safe decoder
//! (`lz4_block_decode_matches_reference`, RELIABILITY.md), and the unit tests below
//! cross-check it on every sequence shape near both ends of both buffers.
//!
//! The bytes past the end of the decoded data (when the caller's buffer is larger than the
//! result) may hold copies of decoded bytes or of input bytes, left by wild copies: never
//! anything else.

pub use self::sequence::DecodeError;

use std::mem::MaybeUninit;

use self::fast::fast_loop;
use self::sequence::{read_length, MIN_MATCH};
use crate::bytes::repeating;
use crate::uninit::{as_uninit, as_uninit_mut};
use crate::wild_copy::{forward_copy_exact, period_before8};

mod fast;
mod sequence;
#[cfg(test)]
mod tests;

/// Room that must be left past a match for its chunked copy in the careful path, which may
/// overshoot by up to 15 bytes.
const WILD_ROOM: usize = 16;
/// Matches without overlap up to this long are copied in inline chunks in the careful path;
/// longer ones by one exact copy (a memcpy call).
const INLINE_COPY: usize = 32;

/// Output between two `tick()` calls of [`decompress_into_ticking`]: some 1-2 ms of decoding.
pub const TICK_BYTES: usize = 4 << 20;

/// Decode the LZ4 block `src` into the front of `dst`; returns the number of bytes written.
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<usize, DecodeError> {
    // SAFETY: the decoder writes only initialised bytes.
    decode::<false>(src, unsafe { as_uninit_mut(dst) }, &[], usize::MAX, &mut || ())
}

/// [`decompress_into`], calling `tick` each time about [`TICK_BYTES`] more bytes have been
/// written (the extension checks for cancel there). The same bytes and the same errors.
pub fn decompress_into_ticking(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<usize, DecodeError> {
    // SAFETY: the decoder writes only initialised bytes.
    decode::<false>(src, unsafe { as_uninit_mut(dst) }, &[], TICK_BYTES, tick)
}

/// [`decompress_into_ticking`] into memory that need not be initialised: the first `n` bytes
/// of the `Ok(n)` returned are written, nothing of `dst` is read before it is written, and the
/// result and errors do not depend on what `dst` held.
pub fn decompress_uninit_ticking(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    tick: &mut dyn FnMut(),
) -> Result<usize, DecodeError> {
    decode::<false>(src, dst, &[], TICK_BYTES, tick)
}

/// [`decompress_uninit_ticking`] with a tick every `every` (at least 1) bytes.
#[doc(hidden)]
pub fn decompress_uninit_ticking_every(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    every: usize,
    tick: &mut dyn FnMut(),
) -> Result<usize, DecodeError> {
    decode::<false>(src, dst, &[], every.max(1), tick)
}

/// [`decompress_into_ticking`] with a tick every `every` (at least 1) bytes: for the tests
/// and the fuzz target `lz4_block_decode_matches_reference`, which must reach the window
/// boundaries with small outputs.
#[doc(hidden)]
pub fn decompress_into_ticking_every(
    src: &[u8],
    dst: &mut [u8],
    every: usize,
    tick: &mut dyn FnMut(),
) -> Result<usize, DecodeError> {
    // SAFETY: the decoder writes only initialised bytes.
    decode::<false>(src, unsafe { as_uninit_mut(dst) }, &[], every.max(1), tick)
}

/// [`decompress_into`] with `dict` as the bytes just before the output: matches may reach
/// back into its last 64 KB.
pub fn decompress_into_with_dict(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<usize, DecodeError> {
    // SAFETY: the decoder writes only initialised bytes.
    decode::<true>(src, unsafe { as_uninit_mut(dst) }, dict, usize::MAX, &mut || ())
}

/// The decoder. The fast loop runs on `dst` cut at the next tick point (`every` bytes after
/// the last one): it is handed a shorter slice, which only makes it leave earlier to the
/// careful path, so the result and the errors do not depend on `every`. Once the output has
/// passed the tick point, `tick` runs and the next point is set. `dst[..op]` is written
/// throughout; nothing at or past `op` is read into a register.
#[inline(always)]
fn decode<const DICT: bool>(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    dict: &[u8],
    every: usize,
    tick: &mut dyn FnMut(),
) -> Result<usize, DecodeError> {
    let mut ip = 0usize;
    let mut op = 0usize;
    let mut next_tick = every;
    loop {
        // Invariants: ip <= src.len(), op <= dst.len(), both at the start of a sequence.
        if op >= next_tick {
            tick();
            next_tick = op.saturating_add(every);
        }
        let window = dst.len().min(next_tick);
        fast_loop(src, &mut dst[..window], &mut ip, &mut op)?;

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
        dst[op..op + lit].copy_from_slice(as_uninit(&src[ip..ip + lit]));
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
    dst: &mut [MaybeUninit<u8>],
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
        dst[op..op + from_dict].copy_from_slice(as_uninit(&dict[start..start + from_dict]));
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
        // Near the end of the output: exact copies only, by doubling when the match
        // overlaps (a block's last match, often its longest, ends here).
        forward_copy_exact(dst, op, offset, len);
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
        // SAFETY: dst[..op] is written and 2 <= offset <= op; op + 8 <= end + WILD_ROOM is
        // inside dst (the check above).
        let seed = unsafe { period_before8(dst.as_ptr().add(op).cast::<u8>(), offset, op) };
        dst[op..op + 8].copy_from_slice(as_uninit(&repeating(seed, offset).0));
        let period = [8, 8, 8, 9, 8, 10, 12, 14][offset];
        copy_within_chunks::<8>(dst, op + 8 - period, op + 8, end);
    }
    Ok(end)
}

/// Copy `dst[s..]` to `dst[d..end]` in `N`-byte chunks, in order; the last chunk may run up to
/// `N - 1` bytes past `end` (the careful path leaves `WILD_ROOM` for it). With `d - s >= N`
/// every chunk reads bytes earlier chunks have finished, as a match's byte-by-byte copy would.
#[inline(always)]
fn copy_within_chunks<const N: usize>(dst: &mut [MaybeUninit<u8>], mut s: usize, mut d: usize, end: usize) {
    while d < end {
        dst.copy_within(s..s + N, d);
        s += N;
        d += N;
    }
}
