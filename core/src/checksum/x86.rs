//! CRC-32C with the SSE4.2 `crc32` instruction and PCLMULQDQ (x86-64).
//!
//! The `crc32` instruction has a latency of 3 cycles and a throughput of one per cycle, so a
//! single stream of them uses a third of what the CPU can do. Inputs of [`THREE_WAY_MIN`] bytes
//! or more are cut into blocks of three equal streams of `n` 8-byte words each (at most
//! [`N_MAX`]), run side by side and then combined (Intel's "Fast CRC Computation for iSCSI
//! Polynomial Using CRC32 Instruction"): the register of a stream is moved past the `8n` or
//! `16n` bytes that follow it by a carry-less multiply with `x^(64n-33)` or `x^(128n-33)`
//! modulo the polynomial (a table by `n`), and the 64-bit products are XORed into the last word
//! of the third stream, whose `crc32` reduces them.
//!
//! On CPUs with AVX-512 and VPCLMULQDQ, inputs of [`FOLD_MIN`] bytes or more are instead folded
//! 64 bytes at a time with 512-bit carry-less multiplies ([`fold_512`]), which leaves the
//! `crc32` instructions for the last chunk and the tail under 64 bytes.
//!
//! Shorter inputs and what is left after the blocks (under 24 bytes, or under
//! [`THREE_WAY_MIN`]) go through one stream: 8 bytes at a time, then 4, 2 and 1. Independent
//! short CRCs (as the benchmarks run them) overlap in the CPU, so for them the number of `crc32`
//! instructions counts, not their latency: splitting does not pay below a few hundred bytes.
//!
//! Registers here are the raw (not inverted) CRC registers, reflected: bit `j` of a 32-bit value
//! is the coefficient of `x^(31-j)`.

use std::arch::x86_64::{
    _mm_clmulepi64_si128, _mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8, _mm_cvtsi128_si64,
    _mm_cvtsi64_si128,
};
use std::sync::atomic::{AtomicU8, Ordering};

/// Inputs of at least this many bytes run in three streams (without AVX-512; measured on
/// Zen 5 with the fold disabled, three streams lose to one at 128-256 bytes).
pub(crate) const THREE_WAY_MIN: usize = 512;

/// The longest stream, in 8-byte words: blocks of up to 3 × 4 KB; an 8 KB page is one block.
pub(crate) const N_MAX: usize = 512;

/// CRC-32C, reflected.
const POLY: u32 = 0x82F6_3B78;

/// Inputs of at least this many bytes are folded with 512-bit carry-less multiplies when the
/// CPU has AVX-512 and VPCLMULQDQ. Folding two vectors and reducing the last costs about what
/// 16 `crc32` instructions do: with this at 128, 128-byte inputs measured 0.98-1.16 times
/// PostgreSQL 15's loop against one stream's 1.04-1.06, so they stay on one stream. From 144
/// the fold gains, most at 192-255 bytes (one stream → folded, three runs of `cargo run
/// --release -p compresslab-core --example crc_speed -- wall 128 144 152 160 176 192`:
/// 144-176 bytes 1.06-1.12 → 1.08-1.53, 192 bytes 0.98-1.02 → 1.22-1.72).
pub(crate) const FOLD_MIN: usize = 144;

/// 0: not yet detected; otherwise `DETECTED` plus `SSE42` and `AVX512` for what is present.
static FEATURES: AtomicU8 = AtomicU8::new(0);
const DETECTED: u8 = 1;
/// SSE4.2 and PCLMULQDQ.
const SSE42: u8 = 2;
/// AVX-512F and VPCLMULQDQ (on top of `SSE42`).
const AVX512: u8 = 4;

/// The detected features, detecting them on first use: one relaxed load after that.
#[inline(always)]
fn features() -> u8 {
    match FEATURES.load(Ordering::Relaxed) {
        0 => detect(),
        features => features,
    }
}

/// Whether SSE4.2 and PCLMULQDQ were detected, without detecting: false before the first
/// detection, when the callers take their cold path, which detects ([`available`]). No call on
/// the way, so a short CRC's caller saves no registers (at 16 bytes a push and a pop of three
/// were a tenth of the call).
#[inline(always)]
pub(crate) fn seen() -> bool {
    FEATURES.load(Ordering::Relaxed) & SSE42 != 0
}

/// CRC-32C of `data` (shorter than [`FOLD_MIN`]) continuing from `previous`, if SSE4.2 was
/// [`seen`]: one stream, without the tests for folding and three streams on the way (at 16-32
/// bytes those tests are a good part of the call).
#[inline(always)]
pub(crate) fn crc32c_short(previous: u32, data: &[u8]) -> Option<u32> {
    debug_assert!(data.len() < FOLD_MIN);
    // SAFETY: SSE4.2 is present (tested just before); `data.len()` bytes are readable.
    seen().then(|| unsafe { one_way_inverted(previous, data) })
}

/// [`one_way`] over a whole slice, with the register inverted before and after.
///
/// # Safety
/// The CPU must support SSE4.2.
#[target_feature(enable = "sse4.2")]
unsafe fn one_way_inverted(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: `data.len()` bytes are readable at its start; SSE4.2 is the caller's promise.
    !(unsafe { one_way(u64::from(!previous), data.as_ptr(), data.len()) } as u32)
}

/// Whether the CPU has SSE4.2 and PCLMULQDQ (one relaxed load once detected).
#[inline(always)]
pub(crate) fn available() -> bool {
    features() & SSE42 != 0
}

#[cold]
#[inline(never)]
fn detect() -> u8 {
    use std::arch::is_x86_feature_detected as has;
    let mut features = DETECTED;
    if has!("sse4.2") && has!("pclmulqdq") {
        features |= SSE42;
        if has!("avx512f") && has!("vpclmulqdq") {
            features |= AVX512;
        }
    }
    FEATURES.store(features, Ordering::Relaxed);
    features
}

/// The register `r` multiplied by `x` modulo the polynomial.
const fn times_x(r: u32) -> u32 {
    (r >> 1) ^ if r & 1 != 0 { POLY } else { 0 }
}

const fn times_x_pow(mut r: u32, e: u32) -> u32 {
    let mut i = 0;
    while i < e {
        r = times_x(r);
        i += 1;
    }
    r
}

/// `SHIFT[n - 1] = [x^(128n-33), x^(64n-33)] mod P`: the multipliers that move the registers of
/// the first and second of three `n`-word streams to the end of the third.
static SHIFT: [[u32; 2]; N_MAX] = {
    let mut table = [[0u32; 2]; N_MAX];
    let mut first = times_x_pow(1 << 31, 128 - 33);
    let mut second = times_x_pow(1 << 31, 64 - 33);
    let mut n = 0;
    while n < N_MAX {
        table[n] = [first, second];
        first = times_x_pow(first, 128);
        second = times_x_pow(second, 64);
        n += 1;
    }
    table
};

/// CRC-32C of `data` continuing from the finished CRC `previous`, as [`super::crc32c`].
///
/// # Safety
/// The CPU must support SSE4.2 and PCLMULQDQ.
#[target_feature(enable = "sse4.2,pclmulqdq")]
pub(crate) unsafe fn crc32c(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: the caller's promise; AVX512 is set only when detected.
    unsafe { crc32c_with(previous, data, FEATURES.load(Ordering::Relaxed) & AVX512 != 0) }
}

/// [`crc32c`], folding with AVX-512 or not (the tests run both ways).
///
/// # Safety
/// The CPU must support SSE4.2 and PCLMULQDQ, and AVX-512F and VPCLMULQDQ if `avx512`.
#[inline]
#[target_feature(enable = "sse4.2,pclmulqdq")]
unsafe fn crc32c_with(previous: u32, data: &[u8], avx512: bool) -> u32 {
    let mut crc = u64::from(!previous);
    let mut p = data.as_ptr();
    let mut len = data.len();
    if len >= FOLD_MIN && avx512 {
        let whole = len & !63;
        // SAFETY: `whole` >= 64 bytes are readable at p; AVX-512 is the caller's promise.
        crc = unsafe { fold_512(crc as u32, p, whole) };
        // SAFETY: stays within `data`.
        p = unsafe { p.add(whole) };
        len -= whole;
    }
    if len >= THREE_WAY_MIN {
        while len >= 24 * N_MAX {
            // SAFETY: 24 * N_MAX bytes remain at p; the features are the caller's promise.
            crc = unsafe { three_way(crc, p, N_MAX) };
            // SAFETY: stays within `data`.
            p = unsafe { p.add(24 * N_MAX) };
            len -= 24 * N_MAX;
        }
        if len >= THREE_WAY_MIN {
            let n = len / 24;
            // SAFETY: 24 * n <= len bytes remain at p, and 1 <= n < N_MAX.
            crc = unsafe { three_way(crc, p, n) };
            // SAFETY: stays within `data`.
            p = unsafe { p.add(24 * n) };
            len -= 24 * n;
        }
    }
    // SAFETY: `len` bytes remain at p.
    !(unsafe { one_way(crc, p, len) } as u32)
}

/// One stream over `len` bytes at `p`: 32 bytes at a time, then 16, 8, 4, 2 and 1 as `len`'s
/// bits say. No loop set-up for short inputs: at 16 bytes the compiler's unrolled 8-byte loop
/// spent more instructions on its trip count than on the CRC.
///
/// # Safety
/// `len` bytes must be readable at `p`; the CPU must support SSE4.2.
#[inline]
#[target_feature(enable = "sse4.2")]
unsafe fn one_way(mut crc: u64, mut p: *const u8, len: usize) -> u64 {
    let word = |p: *const u8, i: usize| {
        // SAFETY: the callers read words inside the `len` bytes at p; any alignment.
        unsafe { p.cast::<u64>().add(i).read_unaligned() }
    };
    // SAFETY: one past the last whole 32-byte block, within (or one past) the input.
    let blocks_end = unsafe { p.add(len & !31) };
    while p != blocks_end {
        crc = _mm_crc32_u64(crc, word(p, 0));
        crc = _mm_crc32_u64(crc, word(p, 1));
        crc = _mm_crc32_u64(crc, word(p, 2));
        crc = _mm_crc32_u64(crc, word(p, 3));
        // SAFETY: at most blocks_end.
        p = unsafe { p.add(32) };
    }
    if len & 16 != 0 {
        crc = _mm_crc32_u64(crc, word(p, 0));
        crc = _mm_crc32_u64(crc, word(p, 1));
        // SAFETY: within the input.
        p = unsafe { p.add(16) };
    }
    if len & 8 != 0 {
        crc = _mm_crc32_u64(crc, word(p, 0));
        // SAFETY: within the input.
        p = unsafe { p.add(8) };
    }
    let mut crc = crc as u32;
    if len & 4 != 0 {
        // SAFETY: len & 7 bytes remain at p, at least 4 of them.
        crc = _mm_crc32_u32(crc, unsafe { p.cast::<u32>().read_unaligned() });
        // SAFETY: within the input.
        p = unsafe { p.add(4) };
    }
    if len & 2 != 0 {
        // SAFETY: at least 2 bytes remain at p.
        crc = _mm_crc32_u16(crc, unsafe { p.cast::<u16>().read_unaligned() });
        // SAFETY: within the input.
        p = unsafe { p.add(2) };
    }
    if len & 1 != 0 {
        // SAFETY: the last byte is at p.
        crc = _mm_crc32_u8(crc, unsafe { *p });
    }
    u64::from(crc)
}

/// Three streams of `n` words over the `24 * n` bytes at `p`, the first continuing from `crc`,
/// combined into the register after all of them.
///
/// # Safety
/// `24 * n` bytes must be readable at `p`, `1 <= n <= N_MAX`; the CPU must support SSE4.2 and
/// PCLMULQDQ.
#[inline]
#[target_feature(enable = "sse4.2,pclmulqdq")]
unsafe fn three_way(crc: u64, p: *const u8, n: usize) -> u64 {
    debug_assert!((1..=N_MAX).contains(&n));
    let word = |i: usize| {
        // SAFETY: the callers pass i < 3 * n, inside the 24 * n bytes; any alignment.
        unsafe { p.cast::<u64>().add(i).read_unaligned() }
    };
    let (mut c0, mut c1, mut c2) = (crc, 0u64, 0u64);
    for i in 0..n - 1 {
        c0 = _mm_crc32_u64(c0, word(i));
        c1 = _mm_crc32_u64(c1, word(n + i));
        c2 = _mm_crc32_u64(c2, word(2 * n + i));
    }
    c0 = _mm_crc32_u64(c0, word(n - 1));
    c1 = _mm_crc32_u64(c1, word(2 * n - 1));
    let [k0, k1] = SHIFT[n - 1];
    let moved0 = _mm_clmulepi64_si128(_mm_cvtsi64_si128(c0 as i64), _mm_cvtsi64_si128(i64::from(k0)), 0);
    let moved1 = _mm_clmulepi64_si128(_mm_cvtsi64_si128(c1 as i64), _mm_cvtsi64_si128(i64::from(k1)), 0);
    let moved = (_mm_cvtsi128_si64(moved0) ^ _mm_cvtsi128_si64(moved1)) as u64;
    _mm_crc32_u64(c2, word(3 * n - 1) ^ moved)
}

/// `[x^(d+31), x^(d-33)] mod P` in each 128-bit lane: folds a 16-byte chunk forward over `d`
/// bits (see [`fold_512`]).
const fn fold_constants(d: u32) -> [u64; 8] {
    let high = times_x_pow(1 << 31, d + 31) as u64;
    let low = times_x_pow(1 << 31, d - 33) as u64;
    [high, low, high, low, high, low, high, low]
}

const FOLD_2048: [u64; 8] = fold_constants(2048);
const FOLD_1536: [u64; 8] = fold_constants(1536);
const FOLD_1024: [u64; 8] = fold_constants(1024);
const FOLD_512: [u64; 8] = fold_constants(512);
/// Per lane: the first three 16-byte chunks of a 64-byte vector to its last one (over 384, 256
/// and 128 bits); the last lane is multiplied by nothing (it is XORed in as it is).
const FOLD_LANES: [u64; 8] = {
    let (a, b, c) = (fold_constants(384), fold_constants(256), fold_constants(128));
    [a[0], a[1], b[0], b[1], c[0], c[1], 0, 0]
};

/// The raw register after `crc` and the `len` bytes at `p`, folding 64-byte vectors with
/// VPCLMULQDQ.
///
/// A 16-byte chunk read as a little-endian 128-bit number has bit `i` as the coefficient of
/// `x^(127-i)`; its low 8 bytes `H` (bit `i` is `x^(63-i)`) are the high half: chunk = `H·x^64 +
/// L`. A carry-less product of `H` with a 32-bit reflected `K`, read as such a chunk, is
/// `H·K·x^33`; so moving the chunk over `d` more bits of message (`·x^d`) modulo P is
/// `H·x^(d+31) ⊕ L·x^(d-33)` as two products, XORed into the chunk `d` bits further on. The
/// register starts as XORed into the first 4 bytes; at the end the one chunk left has the same
/// CRC as all the bytes, which two `crc32` instructions compute.
///
/// # Safety
/// `len` must be a non-zero multiple of 64, with `len` bytes readable at `p`; the CPU must
/// support AVX-512F, VPCLMULQDQ and SSE4.2.
#[target_feature(enable = "avx512f,vpclmulqdq,sse4.2")]
unsafe fn fold_512(crc: u32, p: *const u8, len: usize) -> u64 {
    use std::arch::x86_64::{
        __m512i, _mm512_castsi512_si128, _mm512_clmulepi64_epi128, _mm512_extracti32x4_epi32, _mm512_loadu_si512,
        _mm512_ternarylogic_epi64, _mm512_xor_si512, _mm512_zextsi128_si512, _mm_cvtsi32_si128, _mm_extract_epi64,
        _mm_xor_si128,
    };
    debug_assert!(len >= 64 && len.is_multiple_of(64));
    let load = |offset: usize| {
        // SAFETY: every call below reads 64 bytes at p + offset with offset + 64 <= len, which
        // the caller promises readable; loadu accepts any alignment.
        unsafe { _mm512_loadu_si512(p.add(offset).cast::<__m512i>()) }
    };
    let constants = |k: &[u64; 8]| {
        // SAFETY: 64 readable bytes.
        unsafe { _mm512_loadu_si512(k.as_ptr().cast::<__m512i>()) }
    };
    // a moved over the constant's distance, XORed into b.
    let fold = |a: __m512i, k: __m512i, b: __m512i| {
        _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00), _mm512_clmulepi64_epi128(a, k, 0x11), b, 0x96)
    };
    let first = _mm512_xor_si512(load(0), _mm512_zextsi128_si512(_mm_cvtsi32_si128(crc as i32)));
    let (mut v, mut offset) = (first, 64);
    if len >= 256 {
        // Four vectors side by side, each folded over the 256 bytes to the next of its own.
        let mut acc = [first, load(64), load(128), load(192)];
        offset = 256;
        let k2048 = constants(&FOLD_2048);
        while len - offset >= 256 {
            for (j, a) in acc.iter_mut().enumerate() {
                *a = fold(*a, k2048, load(offset + 64 * j));
            }
            offset += 256;
        }
        v = fold(acc[0], constants(&FOLD_1536), acc[3]);
        v = fold(acc[1], constants(&FOLD_1024), v);
        v = fold(acc[2], constants(&FOLD_512), v);
    }
    let k512 = constants(&FOLD_512);
    while offset < len {
        v = fold(v, k512, load(offset));
        offset += 64;
    }
    // The four chunks onto the last one: the products of the first three, the last as it is.
    let lanes = constants(&FOLD_LANES);
    let last = _mm512_extracti32x4_epi32::<3>(v);
    let moved = _mm512_xor_si512(_mm512_clmulepi64_epi128(v, lanes, 0x00), _mm512_clmulepi64_epi128(v, lanes, 0x11));
    let mut x = _mm_xor_si128(last, _mm512_castsi512_si128(moved));
    x = _mm_xor_si128(x, _mm512_extracti32x4_epi32::<1>(moved));
    x = _mm_xor_si128(x, _mm512_extracti32x4_epi32::<2>(moved));
    let register = _mm_crc32_u64(0, _mm_extract_epi64::<0>(x) as u64);
    _mm_crc32_u64(register, _mm_extract_epi64::<1>(x) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::slicing8;

    fn bytes(len: usize, seed: u32) -> Vec<u8> {
        crate::rng::SeededRng::new(seed as u64).bytes(len)
    }

    /// Every path (one stream, three streams with every table entry, the fold with and without
    /// its four-vector loop) against the reference, with and without AVX-512.
    #[test]
    fn every_path_equals_the_reference() {
        // Every x86-64 CPU PostgreSQL 15 builds for since 2011 has both; a machine without them
        // would not test these paths at all, so say so instead of passing.
        assert!(available(), "this CPU lacks SSE4.2 or PCLMULQDQ: the hardware paths cannot be tested here");
        let avx512 = FEATURES.load(Ordering::Relaxed) & AVX512 != 0;
        let data = bytes(24 * N_MAX * 2 + 104, 7);
        let mut lens: Vec<usize> = (0..=1100).collect();
        lens.extend((1..=N_MAX).flat_map(|n| [24 * n, 24 * n + 23]));
        lens.extend([24 * N_MAX * 2, 24 * N_MAX * 2 + 100, 24 * N_MAX + 511]);
        for len in lens {
            for (start, previous) in [(0, 0), (3, 0xDEAD_BEEF)] {
                let d = &data[start..start + len];
                let expected = slicing8::crc32c(previous, d);
                for with_avx512 in [false, avx512] {
                    // SAFETY: available() checked SSE4.2 and PCLMULQDQ; AVX-512 only if detected.
                    let got = unsafe { crc32c_with(previous, d, with_avx512) };
                    assert_eq!(got, expected, "len {len} start {start} avx512 {with_avx512}");
                }
            }
        }
    }
}
