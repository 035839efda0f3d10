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
//! Shorter inputs and what is left after the blocks (under 24 bytes, or under
//! [`THREE_WAY_MIN`]) go through one stream: 8 bytes at a time, then 4, 2 and 1.
//!
//! Registers here are the raw (not inverted) CRC registers, reflected: bit `j` of a 32-bit value
//! is the coefficient of `x^(31-j)`.

use std::arch::x86_64::{
    _mm_clmulepi64_si128, _mm_crc32_u16, _mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8, _mm_cvtsi128_si64,
    _mm_cvtsi64_si128,
};
use std::sync::atomic::{AtomicU8, Ordering};

/// Inputs of at least this many bytes run in three streams.
pub(crate) const THREE_WAY_MIN: usize = 128;

/// The longest stream, in 8-byte words: blocks of up to 3 × 4 KB; an 8 KB page is one block.
pub(crate) const N_MAX: usize = 512;

/// CRC-32C, reflected.
const POLY: u32 = 0x82F6_3B78;

/// 0: not yet detected; 1: SSE4.2 and PCLMULQDQ present; 2: absent.
static FEATURES: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU has SSE4.2 and PCLMULQDQ (one relaxed load once detected).
#[inline(always)]
pub(crate) fn available() -> bool {
    match FEATURES.load(Ordering::Relaxed) {
        1 => true,
        0 => detect(),
        _ => false,
    }
}

#[cold]
#[inline(never)]
fn detect() -> bool {
    let present = std::arch::is_x86_feature_detected!("sse4.2") && std::arch::is_x86_feature_detected!("pclmulqdq");
    FEATURES.store(if present { 1 } else { 2 }, Ordering::Relaxed);
    present
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
    let mut crc = u64::from(!previous);
    let mut p = data.as_ptr();
    let mut len = data.len();
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

/// One stream over `len` bytes at `p`: 8 bytes at a time, then 4, 2, 1.
///
/// # Safety
/// `len` bytes must be readable at `p`; the CPU must support SSE4.2.
#[inline]
#[target_feature(enable = "sse4.2")]
unsafe fn one_way(mut crc: u64, mut p: *const u8, len: usize) -> u64 {
    // SAFETY: one past the last whole word, within (or one past) the input.
    let words_end = unsafe { p.add(len & !7) };
    while p != words_end {
        // SAFETY: a whole word remains at p; read_unaligned accepts any alignment.
        crc = _mm_crc32_u64(crc, unsafe { p.cast::<u64>().read_unaligned() });
        // SAFETY: at most words_end.
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
