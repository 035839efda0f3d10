//! The fast loop of the LZ4 block decoder (see the `decode` module header): whole sequences
//! decoded with raw pointers and wide copies while both buffers have room for them.

use std::mem::MaybeUninit;
use std::ptr;

use super::sequence::{read_length, DecodeError, MIN_MATCH};
use crate::bytes::repeating;
use crate::wild_copy::{
    copy16, copy16_pairs, copy8, pattern16, period_before16, period_before8_of8, repeat_tail, store_pattern16,
};

/// Input left (from the token) for a sequence of the fast loop: the token, a 16-byte literal
/// copy and the 2-byte offset after at most 14 literals all lie inside.
const FAST_IN: usize = 1 + 16 + 2;
/// Output left at the top of every sequence of the fast loop: 16 bytes of literal copy, and
/// after the match at least this much again, which covers the overshoot of every chunked
/// match copy (at most 31 bytes) and keeps the invariant for the next sequence. Not 64, as
/// liblz4's fast loop: the careful path would decode a block's last 64 bytes whole, a memcpy
/// call per literal run and match, where liblz4 copies short sequences wild down to 32 bytes
/// from the end (its "shortcut"; BENCHMARKS.md, "What made the difference").
const FAST_OUT: usize = 32;
/// Inputs longer than this are decoded by the careful path alone: up to it no length read in
/// the fast loop (at most 255 per input byte, plus 19) can overflow a usize in the room
/// checks (`len + FAST_OUT`), on any target (2^55 bytes on 64-bit ones, 8 MB on 32-bit).
const MAX_FAST_INPUT: usize = usize::MAX / 512;
/// Output the careful path writes before the fast loop starts: the bytes a short period is
/// read from ([`period_before8_of8`]).
const PERIOD_ROOM: usize = 8;
/// Room left past a long literal run (in both buffers) for its copy in 32-byte steps in the
/// fast loop: the copy overshoots by at most 31 bytes; the offset lies inside it too.
const LONG_LIT_ROOM: usize = 32;
/// For a match at `op` with an offset of 1..7 (it repeats the `offset` bytes before op): the
/// 8 bytes of that repetition, and the largest multiple of the offset up to 8, at which
/// intervals they can be stored in phase. Nothing at or past `op` is read.
///
/// # Safety
///
/// The 8 bytes before `op` are written (the fast loop runs from the 8th byte of the output
/// on), with `1 <= offset <= 7`.
#[inline(always)]
unsafe fn repeat_pattern(op: *const u8, offset: usize) -> ([u8; 8], usize) {
    // SAFETY: the caller's contract.
    repeating(unsafe { period_before8_of8(op, offset) }, offset)
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

/// A length whose nibble is 15: the nibble plus the bytes after it at `ip`, the first read
/// unchecked, the rest (after a byte of 255) by [`read_length_at`], which checks them.
///
/// # Safety
///
/// `*ip` is inside `src` (which starts at `istart`).
#[inline(always)]
unsafe fn long_length_at(
    src: &[u8],
    istart: *const u8,
    ip: &mut *const u8,
    nibble: usize,
) -> Result<usize, DecodeError> {
    // SAFETY: the caller's contract.
    let first = unsafe {
        let b = **ip;
        *ip = ip.add(1);
        b
    };
    let mut len = nibble + first as usize;
    if first == 255 {
        len += read_length_at(src, istart, ip)?;
    }
    Ok(len)
}

/// The fast loop (see the module header): decode whole sequences from `*ip_at` in `src` to
/// `*op_at` in `dst` while both have room for wild copies; on return both positions are at the
/// start of a sequence for the careful path (the block's last sequence, which has no match,
/// always goes there: the fast loop stops FAST_IN bytes before the end of the input).
#[inline(always)]
pub(super) fn fast_loop(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    ip_at: &mut usize,
    op_at: &mut usize,
) -> Result<(), DecodeError> {
    // Invariants on entry: *ip_at <= src.len() and *op_at <= dst.len(). The first 8 bytes of
    // the output are left to the careful path: past them a short period is read with one load
    // of the 8 bytes before a match (the output may be uninitialised memory, and nothing at or
    // past op is read).
    if dst.len() - *op_at < FAST_OUT
        || src.len() - *ip_at < FAST_IN
        || src.len() > MAX_FAST_INPUT
        || *op_at < PERIOD_ROOM
    {
        return Ok(());
    }
    let ostart = dst.as_mut_ptr().cast::<u8>();
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
    // Past this, fewer than FAST_OUT bytes of output are left (dst.len() >= FAST_OUT).
    let out_fast = oend.wrapping_sub(FAST_OUT);
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
            // Long runs are not rare (a fifth of the sequences in page images; every one in
            // text with runs between random stretches): unlike the length bytes of long
            // matches and the hand-backs to the careful path, they are not marked cold
            // (BENCHMARKS.md, "LZ4 decoder: long literal runs not marked cold").
            // SAFETY: ip <= seq_ip + 1 and FAST_IN bytes are left at seq_ip: the first length
            // byte is inside src.
            let lit = unsafe { long_length_at(src, istart, &mut ip, lit_nibble) }?;
            if lit + LONG_LIT_ROOM > iend as usize - ip as usize || lit + LONG_LIT_ROOM > oend as usize - op as usize {
                // Near an end (or the run does not fit at all): the careful path decides.
                std::hint::cold_path();
                ip = seq_ip;
                op = seq_op;
                break;
            }
            // SAFETY: lit + 32 <= iend - ip and lit + 32 <= oend - op (just checked): the
            // copy's reach of lit + 31 bytes is inside both, and src, dst do not overlap. The
            // offset's two bytes at ip + lit are inside src too. Up to 64 bytes (most long runs)
            // four moves whatever the length, with no loop to mispredict, when 64 bytes are
            // left in both (checked here).
            unsafe {
                if lit <= 64 && iend as usize - ip as usize >= 64 && oend as usize - op as usize >= 64 {
                    for k in [0, 16, 32, 48] {
                        copy16(ip.add(k), op.add(k));
                    }
                } else {
                    copy16_pairs(ip, op, lit);
                }
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
        let nibble = (token & 15) as usize;
        if nibble < 15 {
            // A match of 4 to 18 bytes, the commonest. After the literals at least 18 bytes
            // of output are left at op (14 at most after a short run from FAST_OUT, or
            // LONG_LIT_ROOM after a long one), so op + len is inside dst: compared with
            // out_fast, it tells whether FAST_OUT bytes are left after the match.
            let len = nibble + MIN_MATCH;
            if op.wrapping_add(len) > out_fast {
                std::hint::cold_path();
                ip = seq_ip;
                op = seq_op;
                break;
            }
            // SAFETY: offset <= op - ostart; op + len + FAST_OUT <= oend, the room
            // copy_short_match needs, and the loop invariant for the next sequence.
            unsafe {
                copy_short_match(op.sub(offset), op, offset);
                op = op.add(len);
            }
            continue;
        }
        // SAFETY: after a short run ip <= seq_ip + 17 < seq_ip + FAST_IN; after a long one
        // LONG_LIT_ROOM - 2 bytes are left at ip: the first length byte is inside src.
        let len = unsafe { long_length_at(src, istart, &mut ip, nibble) }? + MIN_MATCH;
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
        // SAFETY: offset <= op - ostart; len >= 19.
        unsafe {
            copy_long_match(op.sub(offset), op, offset, len);
            op = op.add(len);
        }
    }
    *ip_at = ip as usize - istart as usize;
    *op_at = op as usize - ostart as usize;
    Ok(())
}

/// A match of 4..=18 bytes at `op`, `offset` back (its source at `m`): moves of 8, 8 and 2
/// bytes, as liblz4's (three of 8 before 73ce233, slower on PostgreSQL's own WAL and pages:
/// BENCHMARKS.md, "What made the difference"), or for offsets 1..7 the repeated pattern
/// stored three times. Writes up to 24 bytes at op.
///
/// # Safety
///
/// `m = op - offset` with `1 <= offset`, everything up to op final and at least 8 bytes
/// before it, and at least 24 + 8 bytes of the output left at `op` (the fast loop's FAST_OUT).
#[inline(always)]
unsafe fn copy_short_match(m: *const u8, op: *mut u8, offset: usize) {
    if offset >= 8 {
        // SAFETY: writes op..op + 18 and reads m..m + 18, both inside dst (the caller
        // leaves 32 bytes at op). With offset >= 8 each move reads bytes before its own
        // destination (no overlap), finished by the moves before it.
        unsafe {
            copy8(m, op);
            copy8(m.add(8), op.add(8));
            ptr::copy_nonoverlapping(m.add(16), op.add(16), 2);
        }
    } else {
        // The three stores at op + k * step (5 <= step <= 8) cover at least op..op +
        // 2 * 5 + 8 = op + 18 >= op + len.
        // SAFETY: the 8 bytes before op are written; op + 24 is inside dst (the caller
        // leaves 32 bytes).
        unsafe {
            let (v, step) = repeat_pattern(op, offset);
            for k in 0..3 {
                ptr::write_unaligned(op.add(k * step) as *mut [u8; 8], v);
            }
        }
    }
}

/// A match of 19 bytes or more at `op`, `offset` back (its source at `m`), in chunks that may
/// write up to 31 bytes past it.
///
/// # Safety
///
/// `m = op - offset` with `1 <= offset`, everything up to op final and at least 8 bytes
/// before it, and at least `len + 32` bytes of the output left at `op` (the fast loop leaves
/// FAST_OUT).
#[inline(always)]
unsafe fn copy_long_match(m: *const u8, op: *mut u8, offset: usize, len: usize) {
    if offset >= len {
        // No overlap: the whole source is final before op. Up to 128 bytes it is copied
        // in 16-byte moves from both of its ends (the moves from the front and from the
        // back meet or overlap in the middle, writing the same bytes twice), so the only
        // branch is on the length class, as in a memcpy, and nothing is written past the
        // match; longer matches are one memcpy.
        // SAFETY: len >= 19 (shorter ones are copy_short_match's). Every move reads inside m..m +
        // max(len, 32) and writes inside op..op + max(len, 32): for len <= 32 the 32
        // bytes end 13 past op + len at most, inside dst (len + 32 is), and read
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
    } else if offset >= 32 {
        // An overlapping match from 32..len - 1 bytes back: 32-byte steps in order.
        // SAFETY: reach len + 31 < len + 32 at op and at m < op; m + 16 <= op.
        unsafe { copy16_pairs(m, op, len) };
    } else if offset >= 16 {
        // Offsets 16..31: the first 32 bytes of the match written, then stored
        // again from registers every multiple of the period (repeat_tail).
        // SAFETY: two 16-byte moves reading m..m + 32, which ends at op + 32 - offset <= op +
        // 16, written by the first move; both write below op + 32 <= op + len + 13.
        // repeat_tail then has its first 32 bytes, and writes below op + len + 31, inside the
        // len + 32 bytes left.
        unsafe {
            copy16(m, op);
            copy16(m.add(16), op.add(16));
            repeat_tail(op, offset, len);
        }
    } else {
        // SAFETY: the caller's contract, as for the offsets above.
        unsafe { copy_short_offset_match(m, op, offset, len) };
    }
}

/// A match of 19 bytes or more at `op` with an offset of 1..15 (its source at `m`): 16 bytes of
/// the repetition built in a register from one load of the bytes at m (pattern16), stored
/// every multiple of the period; no store waits on another (8-byte stores read back as 16
/// bytes cannot be forwarded). A run of one byte, the commonest (zero fill,
/// padding), is its byte in every lane at a stride of 16 known to the compiler: `runs` from
/// 1.0-1.3 to 1.7-2.3 times liblz4's speed (`bash scripts/bench/against_c.sh "lz4 decompress, runs"`).
/// Out of line: rare in most data, and inlined into the fast loop it took LZ4 decompression of
/// page images from 0.99 to 0.92-0.93 of liblz4 in the report (BENCHMARKS.md, "What made the
/// difference", d659339 and 943a9ab).
///
/// # Safety
///
/// `m = op - offset` with `1 <= offset <= 15`, everything up to op final and at least 8 bytes
/// before it, and at least `len + 32` bytes of the output left at `op`.
#[inline(never)]
unsafe fn copy_short_offset_match(m: *const u8, op: *mut u8, offset: usize, len: usize) {
    // SAFETY: the period is read from the offset written bytes before op (nothing at op);
    // the stores reach below op + max(len + 31, 32) = op + len + 31, inside the len + 32
    // bytes left.
    unsafe {
        if offset == 1 {
            store_pattern16(op, [*m; 16], 16, len);
        } else {
            let seed =
                if offset < 8 { u128::from(period_before8_of8(op, offset)) } else { period_before16(op, offset) };
            let (v, step) = pattern16(seed, offset);
            store_pattern16(op, v, step, len);
        }
    }
}
