//! Byte-level helpers the codec kernels share: little-endian loads, the common-prefix
//! length of two positions of one buffer (how far a match extends), the repeating pattern of
//! a short-offset match (how the decoders copy one), and the buffer of a known final size
//! that the frame decoders fill.

use std::mem::MaybeUninit;

use crate::error::{CodecError, Result};
use crate::uninit::assume_written;

/// The caller's buffer of the content's final size (a SQL result, not initialised), filled
/// from the front by a decoder, and how much of it is written: `buf[..len]`, nothing after.
pub(crate) struct Filled<'a> {
    pub(crate) buf: &'a mut [MaybeUninit<u8>],
    pub(crate) len: usize,
}

impl<'a> Filled<'a> {
    /// Let `decode` fill `dst` from the front, with `dst.len()` as its limit; content of any
    /// other length is `Corrupt`, worded by `mismatch(decoded, expected)`. `Ok` means all of
    /// `dst` is written.
    pub(crate) fn fill_exactly(
        dst: &'a mut [MaybeUninit<u8>],
        decode: impl FnOnce(&mut Filled<'a>, usize) -> Result<()>,
        mismatch: impl FnOnce(usize, usize) -> String,
    ) -> Result<()> {
        let expected = dst.len();
        let mut out = Filled { buf: dst, len: 0 };
        decode(&mut out, expected)?;
        if out.len != expected {
            return Err(CodecError::corrupt(mismatch(out.len, expected)));
        }
        Ok(())
    }

    /// The bytes written so far.
    pub(crate) fn written(&self) -> &[u8] {
        // SAFETY: `buf[..len]` is written (the field's invariant).
        unsafe { assume_written(self.buf, self.len) }
    }
}

/// Four bytes at `at`, little-endian. Panics if fewer than four bytes remain.
#[inline(always)]
pub fn load_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(buf[at..at + 4].try_into().unwrap())
}

/// Eight bytes at `at`, little-endian. Panics if fewer than eight bytes remain.
#[inline(always)]
pub fn load_u64(buf: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(buf[at..at + 8].try_into().unwrap())
}

/// Eight bytes at `at`, little-endian, without a bounds check: for hot loops whose invariant
/// already bounds `at` (each call states it).
///
/// # Safety
///
/// `at + 8 <= buf.len()`.
#[inline(always)]
pub unsafe fn load_u64_unchecked(buf: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= buf.len());
    // SAFETY: the caller guarantees eight readable bytes at `at`.
    u64::from_le_bytes(unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at) as *const [u8; 8]) })
}

/// Four bytes at `at`, little-endian, without a bounds check (see [`load_u64_unchecked`]).
///
/// # Safety
///
/// `at + 4 <= buf.len()`.
#[inline(always)]
pub unsafe fn load_u32_unchecked(buf: &[u8], at: usize) -> u32 {
    debug_assert!(at + 4 <= buf.len());
    // SAFETY: the caller guarantees four readable bytes at `at`.
    u32::from_le_bytes(unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at) as *const [u8; 4]) })
}

/// Length of the common prefix of `buf[a..]` and `buf[b..]`, at most `limit`; compares eight
/// bytes at a time. Panics unless `a + limit <= buf.len()` and `b + limit <= buf.len()`.
#[inline(always)]
pub fn common_prefix(buf: &[u8], a: usize, b: usize, limit: usize) -> usize {
    assert!(a.max(b).checked_add(limit).is_some_and(|end| end <= buf.len()), "common_prefix out of bounds");
    // SAFETY: the bounds the function needs were asserted just above.
    unsafe { common_prefix_unchecked(buf, a, b, limit) }
}

/// [`common_prefix`] without its bounds assertion, for hot loops whose invariant already
/// bounds the positions.
///
/// # Safety
///
/// `a + limit <= buf.len()` and `b + limit <= buf.len()`.
#[inline(always)]
pub unsafe fn common_prefix_unchecked(buf: &[u8], a: usize, b: usize, limit: usize) -> usize {
    let word = |at: usize| {
        // SAFETY: every call below passes at = a + n or b + n with either n + 8 <= limit,
        // where a + limit, b + limit <= buf.len() (the caller's promise), or max(a, b) + n + 8
        // <= buf.len() (checked before that call): eight readable bytes.
        unsafe { load_u64_unchecked(buf, at) }
    };
    let mut n = 0;
    while n + 8 <= limit {
        let diff = word(a + n) ^ word(b + n);
        if diff != 0 {
            return n + (diff.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    if n < limit && a.max(b) + n + 8 <= buf.len() {
        // Fewer than eight bytes to go before the limit but eight readable: compare a whole
        // word and cap the result.
        let diff = word(a + n) ^ word(b + n);
        return (n + (diff.trailing_zeros() / 8) as usize).min(limit);
    }
    // SAFETY: n < limit, so a + n and b + n are below buf.len().
    while n < limit && unsafe { buf.get_unchecked(a + n) == buf.get_unchecked(b + n) } {
        n += 1;
    }
    n
}

/// Sixteen bytes of a buffer, held to be compared with other sixteen: how many of them lead
/// equal is one SSE2 compare of all sixteen, a mask of the equal ones and the count of its
/// trailing ones (on x86-64; a 128-bit XOR elsewhere). Against two 64-bit XORs and the
/// selection between their trailing zeros, the walk of a pglz encoder runs about 6 fewer
/// instructions a candidate and keeps the sixteen bytes at its position in a vector register
/// instead of two general ones (BENCHMARKS.md).
#[derive(Clone, Copy)]
pub struct Block16(Block16Repr);

#[cfg(target_arch = "x86_64")]
type Block16Repr = std::arch::x86_64::__m128i;
#[cfg(not(target_arch = "x86_64"))]
type Block16Repr = u128;

impl Block16 {
    /// The sixteen bytes at `at`.
    ///
    /// # Safety
    ///
    /// `at + 16 <= buf.len()`.
    #[inline(always)]
    pub unsafe fn load(buf: &[u8], at: usize) -> Block16 {
        debug_assert!(at + 16 <= buf.len());
        // SAFETY: the caller guarantees sixteen readable bytes at `at`; the load is unaligned.
        #[cfg(target_arch = "x86_64")]
        let repr = unsafe { std::arch::x86_64::_mm_loadu_si128(buf.as_ptr().add(at).cast()) };
        #[cfg(not(target_arch = "x86_64"))]
        let repr = u128::from_le_bytes(unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at).cast()) });
        Block16(repr)
    }

    /// How many leading bytes `self` and `other` have equal: 0..=16.
    #[inline(always)]
    pub fn common_prefix(self, other: Block16) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8};
            // One bit per equal byte; bit 16 stops the count at 16 when all are.
            // SAFETY: SSE2 is part of every x86-64 target (the intrinsics only ask for it).
            let equal = unsafe { _mm_movemask_epi8(_mm_cmpeq_epi8(self.0, other.0)) } as u32;
            (!equal | 1 << 16).trailing_zeros() as usize
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            common_prefix_of_words(self.0, other.0)
        }
    }
}

/// How many leading bytes two little-endian 16-byte words have equal: [`Block16`]'s
/// compare where SSE2 is not there.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
#[inline(always)]
fn common_prefix_of_words(a: u128, b: u128) -> usize {
    ((a ^ b).trailing_zeros() / 8) as usize
}

/// [`common_prefix_unchecked`] sixteen bytes a step ([`Block16`]), for matches that are
/// often longer than eight bytes: fewer steps, fewer loop exits to mispredict.
///
/// # Safety
///
/// `a + limit <= buf.len()` and `b + limit <= buf.len()`.
#[inline(always)]
pub unsafe fn common_prefix_by_blocks(buf: &[u8], a: usize, b: usize, limit: usize) -> usize {
    let mut n = 0;
    while n + 16 <= limit {
        // SAFETY: a + n + 16 and b + n + 16 are at most a + limit and b + limit, inside buf
        // by the caller's promise.
        let equal = unsafe { Block16::load(buf, a + n).common_prefix(Block16::load(buf, b + n)) };
        if equal < 16 {
            return n + equal;
        }
        n += 16;
    }
    // SAFETY: a + n + (limit - n) = a + limit, likewise for b: the caller's promise.
    n + unsafe { common_prefix_unchecked(buf, a + n, b + n, limit - n) }
}

/// Multipliers that repeat the first `period` bytes of a u64 (the rest zero) through all 8:
/// one 1 every `period` bytes (the copies occupy disjoint bytes, so the product is their OR).
const REPEAT: [u64; 8] = [
    0,
    0x0101_0101_0101_0101,
    0x0001_0001_0001_0001,
    0x0001_0000_0100_0001,
    0x0000_0001_0000_0001,
    0x0000_0100_0000_0001,
    0x0001_0000_0000_0001,
    0x0100_0000_0000_0001,
];

/// For a match with an offset (`period`) of 1..=7, whose bytes repeat the `period` bytes
/// before it: the 8 bytes of that repetition, built from `seed` (8 bytes read from the
/// match's source, little-endian; only its first `period` bytes are used), and the largest
/// multiple of `period` up to 8, the stride at which 8-byte stores of them stay in phase.
#[inline(always)]
pub fn repeating(seed: u64, period: usize) -> ([u8; 8], usize) {
    debug_assert!((1..8).contains(&period));
    let v = (seed & (u64::MAX >> (64 - 8 * period))).wrapping_mul(REPEAT[period & 7]);
    // The strides for periods 0..7 (8, 8, 8, 6, 8, 5, 6, 7), one byte each.
    let step = (0x0706_0508_0608_0808u64 >> (8 * period)) as usize & 0xff;
    (v.to_le_bytes(), step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_lengths() {
        let buf = b"abcdefghijklmnopabcdefghijklmnoXabc";
        assert_eq!(common_prefix(buf, 0, 16, 19), 15);
        assert_eq!(common_prefix(buf, 0, 16, 7), 7);
        assert_eq!(common_prefix(buf, 0, 32, 3), 3);
        assert_eq!(common_prefix(buf, 1, 2, 10), 0);
        assert_eq!(load_u32(b"\x01\x02\x03\x04", 0), 0x0403_0201);
        assert_eq!(load_u64(&[1, 0, 0, 0, 0, 0, 0, 0, 9], 0), 1);
    }

    /// [`Block16::common_prefix`] (SSE2 on x86-64) and the portable compare
    /// against byte by byte, for a first difference at every byte and none.
    #[test]
    fn block16_counts_the_equal_leading_bytes() {
        let a: Vec<u8> = (0..48u8).map(|i| i.wrapping_mul(37) ^ 0x5a).collect();
        for diff_at in 0..=16 {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut b = a.clone();
                if diff_at < 16 {
                    b[8 + diff_at] ^= flip;
                    // Later bytes differ too: only the first difference counts.
                    b[8 + 15] ^= 0x10;
                }
                // SAFETY: 8 + 16 <= 48.
                let (x, y) = unsafe { (Block16::load(&a, 8), Block16::load(&b, 8)) };
                let want = diff_at;
                assert_eq!(x.common_prefix(y), want, "difference at {diff_at}, flip {flip:#x}");
                assert_eq!(y.common_prefix(x), want);
                let word = |buf: &[u8]| u128::from_le_bytes(buf[8..24].try_into().unwrap());
                assert_eq!(common_prefix_of_words(word(&a), word(&b)), want);
            }
        }
    }

    /// [`common_prefix_by_blocks`] against [`common_prefix`] for every pair of
    /// positions and limit on data with long and short repeats.
    #[test]
    fn prefix_by_blocks_matches_prefix() {
        let mut buf = Vec::new();
        for k in 0..40usize {
            buf.extend(std::iter::repeat_n(b'a' + (k % 3) as u8, k % 23));
            buf.extend_from_slice(b"abcabcabcabcabcabcabcabcabc");
        }
        for a in (0..buf.len()).step_by(7) {
            for b in (a..buf.len()).step_by(5) {
                for limit in [0, 1, 15, 16, 17, 33, 64, 300] {
                    let limit = limit.min(buf.len() - b);
                    // SAFETY: a <= b and b + limit <= buf.len().
                    let got = unsafe { common_prefix_by_blocks(&buf, a, b, limit) };
                    assert_eq!(got, common_prefix(&buf, a, b, limit), "{a} {b} {limit}");
                }
            }
        }
    }

    #[test]
    fn repeating_repeats_the_period_and_strides_in_phase() {
        let seed = u64::from_le_bytes([11, 22, 33, 44, 55, 66, 77, 88]);
        for period in 1..8 {
            let (bytes, step) = repeating(seed, period);
            for (k, b) in bytes.iter().enumerate() {
                assert_eq!(*b, seed.to_le_bytes()[k % period], "period {period} byte {k}");
            }
            assert_eq!(step, 8 / period * period, "period {period}");
        }
    }
}
