//! Byte-level helpers the codec kernels share: little-endian loads, the common-prefix
//! length of two positions of one buffer (how far a match extends), the repeating pattern of
//! a short-offset match (how the decoders copy one), and the buffer of a known final size
//! that the frame decoders fill.

use crate::error::{CodecError, Result};

/// The caller's buffer of the content's final size (a SQL result), filled from the front by
/// a decoder, and how much of it is written.
pub(crate) struct Filled<'a> {
    pub(crate) buf: &'a mut [u8],
    pub(crate) len: usize,
}

impl<'a> Filled<'a> {
    /// Let `decode` fill `dst` from the front, with `dst.len()` as its limit; content of any
    /// other length is `Corrupt`, worded by `mismatch(decoded, expected)`.
    pub(crate) fn fill_exactly(
        dst: &'a mut [u8],
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
