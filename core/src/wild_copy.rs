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
            let v = ptr::read_unaligned(src.add(i) as *const [u8; N]);
            ptr::write_unaligned(dst.add(i) as *mut [u8; N], v);
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
