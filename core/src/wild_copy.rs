//! Raw-pointer copies in fixed-size chunks, for the fast loops of both decoders (pglz and
//! LZ4) and the LZ4 encoder's literal runs.
//!
//! A decoder's fast loop copies literal runs and matches in whole chunks that may run past
//! the end of the bytes it means to copy ("wild" copies): one unaligned load and store per
//! chunk instead of a memcpy call or a loop over bytes. The loop checks, before it copies,
//! that the overshoot stays inside both buffers; every function here states that room as its
//! safety contract.
//!
//! A match may overlap its own output: it then repeats bytes it has just written, as a copy
//! made one byte after the other does. A chunked copy gives that result only if no chunk reads
//! a byte that an earlier chunk of the same copy has still to write, that is if the
//! destination is at least one chunk past the source. Each function says which distance it
//! needs.
//!
//! Every function takes the source first and the destination second, as
//! `ptr::copy_nonoverlapping` does.

use std::ptr;

/// Copy 8 bytes from `src` to `dst` (one unaligned load and store).
///
/// # Safety
///
/// `src..src + 8` must be readable, `dst..dst + 8` writable, and the two must not overlap.
#[inline(always)]
pub unsafe fn copy8(src: *const u8, dst: *mut u8) {
    // SAFETY: the caller's contract is copy_nonoverlapping's.
    unsafe { ptr::copy_nonoverlapping(src, dst, 8) }
}

/// Copy 16 bytes from `src` to `dst` (one unaligned load and store).
///
/// # Safety
///
/// `src..src + 16` must be readable, `dst..dst + 16` writable, and the two must not overlap.
#[inline(always)]
pub unsafe fn copy16(src: *const u8, dst: *mut u8) {
    // SAFETY: the caller's contract is copy_nonoverlapping's.
    unsafe { ptr::copy_nonoverlapping(src, dst, 16) }
}

/// Copy `len` bytes (at least one chunk, whatever `len`) from `src` to `dst` in `N`-byte
/// chunks, each read whole before it is written, storing up to `N - 1` bytes past
/// `dst + len`. Chunk i reads `[src + i, src + i + N)`, which ends at or before `dst + i`
/// when `dst - src >= N`: only bytes already final, as a forward byte copy would read.
///
/// # Safety
///
/// `[src, src + max(len, 1) + N - 1)` is readable and `[dst, dst + max(len, 1) + N - 1)`
/// writable; if the ranges overlap, `dst >= src + N`.
#[inline(always)]
pub unsafe fn chunk_copy<const N: usize>(src: *const u8, dst: *mut u8, len: usize) {
    let mut i = 0;
    loop {
        // SAFETY: i < max(len, 1), so both chunks lie in the ranges the caller guarantees;
        // with dst >= src + N the chunk read does not overlap the one written.
        unsafe {
            // As MaybeUninit: a chunk may end in bytes of the output not written yet.
            let v = ptr::read_unaligned(src.add(i) as *const std::mem::MaybeUninit<[u8; N]>);
            ptr::write_unaligned(dst.add(i) as *mut std::mem::MaybeUninit<[u8; N]>, v);
        }
        i += N;
        if i >= len {
            break;
        }
    }
}

/// Copy `len` bytes (at least 32, whatever `len`) from `src` to `dst` in 32-byte steps of two
/// 16-byte moves, writing up to 31 bytes past `dst + len` and reading up to 31 past
/// `src + len`. Each 16-byte move is made before the next is read, so a match only 16 bytes
/// back (`dst - src >= 16`) still comes out as a forward byte copy, in steps of 32.
///
/// # Safety
///
/// `src..src + max(len, 1) + 31` must be readable and `dst..dst + max(len, 1) + 31` writable;
/// if the ranges overlap, `dst >= src + 16`.
#[inline(always)]
pub unsafe fn copy16_pairs(src: *const u8, dst: *mut u8, len: usize) {
    let (mut s, mut d) = (src, dst);
    // SAFETY: `end` and every `s`, `d` below stay within `len + 31` bytes of `src` and `dst`
    // (each step starts below `end`), inside the ranges of the caller's contract.
    unsafe {
        let end = dst.add(len);
        loop {
            copy16(s, d);
            copy16(s.add(16), d.add(16));
            d = d.add(32);
            s = s.add(32);
            if d >= end {
                break;
            }
        }
    }
}

/// The rest of a match with a short offset (`1 <= off < 32`), which repeats its first `off`
/// bytes, from a pattern held in registers: once its first bytes are written (16 of them for
/// `off < 16`, 32 for `16 <= off < 32`), they are loaded once and stored again every `step`
/// bytes, the largest multiple of `off` up to the register width, until `len` bytes are out.
/// Every store is independent of the others: no store waits for the load of the bytes the
/// store before it wrote, as a chunked copy from `off` bytes back does (the store-to-load
/// chain that made short periods slower than the C's memcpy doubling). This is how
/// liblz4 copies a match shorter than its chunk, widened to 16 and 32 bytes.
///
/// # Safety
///
/// `dst..dst + 16` (`off < 16`) or `dst..dst + 32` (`16 <= off < 32`) hold the first bytes of
/// the match (a forward copy from `off` back) and `dst..dst + max(len + 31, 32)` is writable
/// and readable; nothing is read or written beyond it.
#[inline(always)]
pub unsafe fn repeat_tail(dst: *mut u8, off: usize, len: usize) {
    debug_assert!((1..32).contains(&off));
    if off < 16 {
        let step = 16 - 16 % off;
        // SAFETY: dst..dst + 16 is readable (the caller's contract).
        let v = unsafe { ptr::read_unaligned(dst as *const [u8; 16]) };
        let mut i = step;
        // SAFETY: each store starts below dst + len and ends below dst + len + 16 <= the
        // writable dst + len + 31 (the caller's contract). Bytes i..i + 16 with i a multiple
        // of off are the first 16 bytes again: the match repeats with period off.
        unsafe {
            while i < len {
                ptr::write_unaligned(dst.add(i) as *mut [u8; 16], v);
                i += step;
            }
        }
    } else {
        let step = 32 - 32 % off;
        // SAFETY: dst..dst + 32 is readable (the caller's contract).
        let (v0, v1) = unsafe {
            (ptr::read_unaligned(dst as *const [u8; 16]), ptr::read_unaligned(dst.add(16) as *const [u8; 16]))
        };
        let mut i = step;
        // SAFETY: each pair of stores starts below dst + len and ends below dst + len + 32,
        // that is at most dst + len + 31 (the caller's contract); as above, bytes i..i + 32
        // with i a multiple of off are the first 32 again.
        unsafe {
            while i < len {
                ptr::write_unaligned(dst.add(i) as *mut [u8; 16], v0);
                ptr::write_unaligned(dst.add(i + 16) as *mut [u8; 16], v1);
                i += step;
            }
        }
    }
}

/// For a match with a short offset (`1 <= off < 16`): 16 bytes of its repetition (byte k is
/// byte `k % off` of `seed`, the 16 bytes read from `off` back, little-endian, before the
/// match is written; only its first `off` bytes are used) and the largest multiple of `off`
/// up to 16, the stride at which 16-byte stores of them stay in phase. Built in registers:
/// stores from it wait on no store of the match itself (a load spanning two fresh 8-byte
/// stores cannot be forwarded, which left period 8 slower than the C).
#[inline(always)]
pub fn pattern16(seed: u128, off: usize) -> ([u8; 16], usize) {
    debug_assert!((1..16).contains(&off));
    let v = if off < 8 {
        let (bytes, step8) = crate::bytes::repeating(seed as u64, off);
        let b = u128::from(u64::from_le_bytes(bytes));
        // Copies at 0, step8 and 2 * step8 (each in phase, so overlapping bytes agree) cover
        // 16 bytes: step8 is 8, or 5 to 7 with 2 * step8 + 8 >= 18.
        let v = b | (b << (8 * step8));
        if step8 < 8 {
            v | (b << (16 * step8))
        } else {
            v
        }
    } else {
        // The first `off` bytes, then the first 16 - off <= 8 < off of them again.
        (seed & (u128::MAX >> (128 - 8 * off))) | (seed << (8 * off))
    };
    // The stride 16 - 16 % off from a table, not a division (a `div` on the stores' path).
    const STRIDE: [u8; 16] = [16, 16, 16, 15, 16, 15, 12, 14, 16, 9, 10, 11, 12, 13, 14, 15];
    (v.to_le_bytes(), usize::from(STRIDE[off & 15]))
}

/// The `off` bytes just before `d` (`1 <= off <= 8`), as the low bytes of a little-endian
/// word whose other bytes are zero: the seed of [`crate::bytes::repeating`] and
/// [`pattern16`] for a match `off` back. Nothing at or after `d` is read: the output there is
/// not written yet and may be uninitialised memory. With at least 8 bytes before `d` (the
/// usual case), one load of the 8 bytes ending at `d`, shifted; else a copy of the `off` bytes.
///
/// # Safety
///
/// `d - written..d` is readable and initialised, with `1 <= off <= min(8, written)`.
#[inline(always)]
pub unsafe fn period_before8(d: *const u8, off: usize, written: usize) -> u64 {
    debug_assert!((1..=8).contains(&off) && off <= written);
    if written >= 8 {
        // SAFETY: d - 8..d is inside d - written..d.
        unsafe { period_before8_of8(d, off) }
    } else {
        let mut b = [0u8; 8];
        // SAFETY: d - off..d is inside d - written..d; b holds 8 >= off bytes.
        unsafe { ptr::copy_nonoverlapping(d.sub(off), b.as_mut_ptr(), off) };
        u64::from_le_bytes(b)
    }
}

/// [`period_before8`] where at least 8 bytes before `d` are written (a loop that only runs
/// past the first 8 bytes of its output): one load, no test.
///
/// # Safety
///
/// `d - 8..d` is readable and initialised, with `1 <= off <= 8`.
#[inline(always)]
pub unsafe fn period_before8_of8(d: *const u8, off: usize) -> u64 {
    debug_assert!((1..=8).contains(&off));
    // SAFETY: the caller's contract. The shift is 0..=56 bits.
    u64::from_le_bytes(unsafe { ptr::read_unaligned(d.sub(8) as *const [u8; 8]) }) >> (8 * (8 - off))
}

/// [`period_before8`] for `8 <= off <= 16`: the `off` bytes just before `d` as the low bytes of
/// a little-endian `u128` (the rest zero), from two 8-byte loads, `d - off..d - off + 8` and
/// `d - 8..d`, which agree where they overlap. Nothing at or after `d` is read.
///
/// # Safety
///
/// `d - off..d` is readable and initialised, with `8 <= off <= 16`.
#[inline(always)]
pub unsafe fn period_before16(d: *const u8, off: usize) -> u128 {
    debug_assert!((8..=16).contains(&off));
    // SAFETY: both loads lie in d - off..d (off >= 8).
    let (lo, hi) = unsafe {
        (
            u64::from_le_bytes(ptr::read_unaligned(d.sub(off) as *const [u8; 8])),
            u64::from_le_bytes(ptr::read_unaligned(d.sub(8) as *const [u8; 8])),
        )
    };
    // Byte j of `hi` is byte off - 8 + j of the period: shifted there, its bytes below 8 are
    // the same as `lo`'s, so the OR keeps them.
    u128::from(lo) | (u128::from(hi) << (8 * (off - 8)))
}

/// Write `len` bytes of a repetition at `dst` from its 16-byte pattern `v` and stride `step`
/// ([`pattern16`]): stores at 0 and `step` whatever `len` (most matches are short; one test of
/// the length instead of one per store), then every `step` bytes, two at a time, while below
/// `len`.
///
/// # Safety
///
/// `dst..dst + max(len + 31, 32)` must be writable; `9 <= step <= 16` (what
/// [`pattern16`] gives). Nothing is written at or past `dst + max(len + step + 15, step + 16)`
/// (at most `dst + max(len + 31, 32)`).
#[inline(always)]
pub unsafe fn store_pattern16(dst: *mut u8, v: [u8; 16], step: usize, len: usize) {
    // SAFETY: step + 16 <= 32, and every later store starts below dst + len + step.
    unsafe {
        ptr::write_unaligned(dst as *mut [u8; 16], v);
        ptr::write_unaligned(dst.add(step) as *mut [u8; 16], v);
        // Two stores a round: a round starting below len ends below len + step + 16.
        let mut i = 2 * step;
        while i < len {
            ptr::write_unaligned(dst.add(i) as *mut [u8; 16], v);
            ptr::write_unaligned(dst.add(i + step) as *mut [u8; 16], v);
            i += 2 * step;
        }
    }
}

/// `dst..dst + len` made the forward byte-by-byte copy of the bytes from `off` back, for a
/// match longer than its offset, by doubling, as PostgreSQL's `pglz_decompress` does: the
/// `off` bytes before `dst` repeat with period `off`, so one memcpy of them makes a clean
/// repetition twice as long, the next one of that a repetition four times as long, and so on;
/// a 273-byte match 32 back is four memcpy calls. Nothing is written past `dst + len`.
///
/// For offsets of 32 and more this beat every register pattern tried (period 32
/// decoded at 0.66-0.93 of the C with chunked copies or patterns stored from registers,
/// 1.00-1.05 with this); below 32 [`repeat_tail`] and [`store_pattern16`] are faster.
///
/// # Safety
///
/// `1 <= off <= len`; `dst - off..dst` is readable and `dst..dst + len` writable, in one
/// allocation.
#[inline(always)]
pub unsafe fn doubling_copy(dst: *mut u8, off: usize, len: usize) {
    let (mut dst, mut off, mut len) = (dst, off, len);
    // SAFETY: each copy moves the `off` bytes just before `dst` (written by the caller or by
    // the copy before) to `dst`, disjoint ranges, and stays inside dst..dst + len.
    unsafe {
        while off < len {
            ptr::copy_nonoverlapping(dst.sub(off), dst, off);
            dst = dst.add(off);
            len -= off;
            off *= 2;
        }
        ptr::copy_nonoverlapping(dst.sub(off), dst, len);
    }
}

/// `buf[op..op + len]` made the forward byte-by-byte copy of the bytes from `off` back (an LZ77
/// match, which may overlap its own output), with exact copies only: nothing is written past
/// `op + len`. For the ends of the output, where no wild copy fits. An overlapping match is
/// copied by doubling: `buf[op - off..op]` repeats with period `off`, so copying it forward
/// makes a clean repetition twice as long, and so on, a few memmoves in all (a run of one byte
/// is a memset), not a loop over bytes.
///
/// Panics unless `1 <= off <= op` and `op + len <= buf.len()`.
#[inline]
pub fn forward_copy_exact<T: Copy>(buf: &mut [T], op: usize, off: usize, len: usize) {
    let from = op - off;
    if off >= len {
        buf.copy_within(from..from + len, op);
    } else if off == 1 {
        let b = buf[from];
        buf[op..op + len].fill(b);
    } else {
        let (mut op, mut off, mut len) = (op, off, len);
        while off < len {
            buf.copy_within(op - off..op, op);
            op += off;
            len -= off;
            off *= 2;
        }
        buf.copy_within(op - off..op - off + len, op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `len` bytes copied one after the other from `from` to `to` in `buf`.
    fn forward(buf: &mut [u8], from: usize, to: usize, len: usize) {
        for i in 0..len {
            buf[to + i] = buf[from + i];
        }
    }

    fn seeded(n: usize) -> Vec<u8> {
        (0..n as u32).map(|i| (i.wrapping_mul(37) % 251) as u8).collect()
    }

    const GUARD: u8 = 0xA5;

    /// A match of `len` bytes `off` back at `op`, with `op + len + room` bytes in all: the
    /// forward copy's result (`GUARD` after the match) and the buffer before the match is
    /// copied (`GUARD` from `op` on).
    fn guarded(op: usize, off: usize, len: usize, room: usize) -> (Vec<u8>, Vec<u8>) {
        let mut want = seeded(op + len + room);
        want[op..].fill(GUARD);
        forward(&mut want, op - off, op, len);
        let mut got = want.clone();
        got[op..].fill(GUARD);
        (want, got)
    }

    /// `got` is the forward copy up to `op + len` and holds `GUARD` from `reach` on.
    fn assert_copied(got: &[u8], want: &[u8], op: usize, len: usize, reach: usize, what: &str) {
        assert_eq!(got[..op + len], want[..op + len], "{what}");
        assert!(got[reach..].iter().all(|&b| b == GUARD), "{what} writes past its room");
    }

    /// A chunked copy: source, destination, length.
    type ChunkCopy = unsafe fn(*const u8, *mut u8, usize);

    #[test]
    fn chunk_copies_equal_forward_copies_at_every_distance_they_allow() {
        for len in 1..100usize {
            for dist in 1..80usize {
                let mut want = seeded(300);
                forward(&mut want, 50, 50 + dist, len);
                let check = |got: &[u8], what: &str| {
                    assert_eq!(got[..50 + dist + len], want[..50 + dist + len], "{what} len {len} distance {dist}");
                };
                // Every copy below reaches at most 50 + dist + len + 31 < 300 bytes into its
                // buffer, at a distance at least what the function needs.
                let copies: [(&str, usize, ChunkCopy); 4] = [
                    ("chunk_copy::<8>", 8, chunk_copy::<8>),
                    ("chunk_copy::<16>", 16, chunk_copy::<16>),
                    ("copy16_pairs", 16, copy16_pairs),
                    ("chunk_copy::<32>", 32, chunk_copy::<32>),
                ];
                for (what, min_dist, copy) in copies {
                    if dist >= min_dist {
                        let mut got = seeded(300);
                        let p = got.as_mut_ptr();
                        // SAFETY: see above.
                        unsafe { copy(p.add(50), p.add(50 + dist), len) };
                        check(&got, what);
                    }
                }
            }
        }
    }

    /// The register pattern of every short offset, after the first 16 or 32 bytes a forward
    /// copy writes, gives the forward copy for every length up to 300, and writes nothing at
    /// or past `op + max(len + 31, 32)`.
    #[test]
    fn repeat_tail_equals_forward_copy_at_every_short_offset() {
        for off in 1..32usize {
            for len in 1..300usize {
                let op = 64;
                let (want, mut got) = guarded(op, off, len, 64);
                let head = if off < 16 { 16 } else { 32 };
                forward(&mut got, op - off, op, head);
                // SAFETY: op + max(len + 31, 32) < op + len + 64 = got.len(), and the first
                // `head` bytes of the match are written.
                unsafe { repeat_tail(got.as_mut_ptr().add(op), off, len) };
                assert_copied(&got, &want, op, len, op + (len + 31).max(32), &format!("off {off} len {len}"));
            }
        }
    }

    /// The 16-byte pattern of every offset below 16, built from the bytes before the match,
    /// stored by [`store_pattern16`], gives the forward copy for every length up to
    /// 300 and writes nothing at or past `op + max(len + step + 15, step + 16)`.
    #[test]
    fn pattern16_stores_equal_forward_copy_at_every_offset_below_16() {
        for off in 1..16usize {
            for len in 1..300usize {
                let op = 64;
                let (want, mut got) = guarded(op, off, len, 64);
                let seed = u128::from_le_bytes(got[op - off..op - off + 16].try_into().unwrap());
                let (v, step) = pattern16(seed, off);
                // SAFETY: the stores reach at most op + max(len + 31, 32) < got.len().
                unsafe { store_pattern16(got.as_mut_ptr().add(op), v, step, len) };
                assert_eq!(step, 16 - 16 % off, "off {off}: the largest multiple of the period up to 16");
                let reach = op + (len + step + 15).max(step + 16);
                assert_copied(&got, &want, op, len, reach, &format!("off {off} len {len}"));
            }
        }
    }

    /// Doubling gives the forward copy of every match longer than its offset, and writes
    /// nothing past it.
    #[test]
    fn doubling_copy_equals_forward_copy_and_stays_inside() {
        for off in 1..140usize {
            for len in off..300usize {
                let op = 150;
                let (want, mut got) = guarded(op, off, len, 8);
                // SAFETY: off <= op, op + len <= got.len().
                unsafe { doubling_copy(got.as_mut_ptr().add(op), off, len) };
                assert_copied(&got, &want, op, len, op + len, &format!("off {off} len {len}"));
            }
        }
    }

    /// The exact copy is the forward copy at every offset and length, and writes nothing past
    /// the match.
    #[test]
    fn forward_copy_exact_equals_forward_copy_and_stays_inside() {
        for off in 1..80usize {
            for len in 0..400usize {
                let op = 100;
                let mut want = seeded(op + len + 8);
                forward(&mut want, op - off, op, len);
                let mut got = seeded(op + len + 8);
                forward_copy_exact(&mut got, op, off, len);
                assert_eq!(got, want, "off {off} len {len}");
            }
        }
    }

    /// The period read from before `d` is the `off` bytes there, with no read at or past `d`
    /// (the bytes from `d` on are uninitialised here: Miri reports any read of them).
    #[test]
    fn periods_are_read_from_the_written_bytes_only() {
        use std::mem::MaybeUninit;
        let seed = seeded(16);
        for written in 1..=16usize {
            let mut buf: Vec<MaybeUninit<u8>> = vec![MaybeUninit::uninit(); written + 16];
            for (b, &s) in buf.iter_mut().zip(&seed[16 - written..]) {
                *b = MaybeUninit::new(s);
            }
            // SAFETY: `written` bytes before d are initialised.
            let d = unsafe { buf.as_ptr().add(written).cast::<u8>() };
            for off in 1..=written.min(16) {
                let mut want = [0u8; 16];
                want[..off].copy_from_slice(&seed[16 - off..]);
                if off <= 8 {
                    // SAFETY: 1 <= off <= min(8, written).
                    let got = unsafe { period_before8(d, off, written) };
                    assert_eq!(got.to_le_bytes(), want[..8], "period_before8 off {off} written {written}");
                }
                if off >= 8 {
                    // SAFETY: 8 <= off <= written bytes before d.
                    let got = unsafe { period_before16(d, off) };
                    assert_eq!(got.to_le_bytes(), want, "period_before16 off {off} written {written}");
                }
            }
        }
    }

    #[test]
    fn fixed_copies_move_their_bytes_only() {
        let src = seeded(16);
        let mut dst = [0u8; 24];
        // SAFETY: 16 readable bytes at src, 24 writable at dst, distinct buffers.
        unsafe {
            copy8(src.as_ptr(), dst.as_mut_ptr());
            copy16(src.as_ptr(), dst.as_mut_ptr().add(8));
        }
        assert_eq!(dst[..8], src[..8]);
        assert_eq!(dst[8..], src[..]);
    }
}
