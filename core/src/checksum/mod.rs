//! Checksums PostgreSQL uses, all with PostgreSQL's convention: the register starts at
//! 0xFFFFFFFF, bytes are fed in (any number of times, so a CRC can run over pieces), and the
//! result is XORed with 0xFFFFFFFF.
//!
//! * **CRC-32C** (Castagnoli, reflected polynomial 0x82F63B78): WAL records, the control file
//!   and other on-disk structures since 9.5 (`pg_comp_crc32c`, PostgreSQL 18's `crc32c()`).
//!   The fast path is `x86` on x86-64 (SSE4.2 `crc32`, PCLMULQDQ, AVX-512 VPCLMULQDQ) and the
//!   `crc32c` crate elsewhere; [`slicing8::crc32c`] is a plain slicing-by-8 reference, the
//!   same algorithm as PostgreSQL's portable `pg_comp_crc32c_sb8`, that the fast path is tested
//!   against.
//! * **CRC-32** (standard, zlib/Ethernet, reflected 0xEDB88320): PostgreSQL's "traditional"
//!   CRC-32 (`*_TRADITIONAL_CRC32`, used by ltree and hstore; PostgreSQL 18's `crc32()`).
//! * **Legacy CRC-32**: what WAL used before 9.5 and what some on-disk values (tsquery operand
//!   CRCs) still use (`*_LEGACY_CRC32`). It uses the *reflected* 0xEDB88320 table but shifts the
//!   register the *non-reflected* way (index by the top byte, shift left), so it is not the
//!   standard CRC-32: over "123456789" it gives 0xC40ED0B0 instead of 0xCBF43926.
//!
//! Check values over ASCII "123456789": CRC-32C 0xE3069283, CRC-32 0xCBF43926, legacy
//! 0xC40ED0B0. The empty input gives 0 for all three.
//!
//! Continuation: every function here takes the *finished* CRC of the bytes before (0 for "no
//! bytes yet") and returns the finished CRC of everything, so `crc(b, crc(a, 0)) == crc(a‖b, 0)`.

pub mod slicing8;

/// CRC-32C of `data`, continuing from `previous` (the finished CRC-32C of earlier bytes, or 0).
///
/// On x86-64 with SSE4.2 and PCLMULQDQ (every x86-64 CPU since 2011), `x86` does it: short
/// inputs in one stream of `crc32` instructions, longer ones in three independent streams
/// combined with carry-less multiplies. Elsewhere the `crc32c` crate (figures in BENCHMARKS.md).
#[inline]
pub fn crc32c(previous: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if data.len() < x86::FOLD_MIN {
        if let Some(crc) = x86::crc32c_short(previous, data) {
            return crc;
        }
    } else if x86::seen() {
        // SAFETY: the CPU supports SSE4.2 and PCLMULQDQ, checked just above.
        return unsafe { x86::crc32c(previous, data) };
    }
    crc32c_cold(previous, data)
}

/// The first call, which detects the CPU's features, and CPUs without SSE4.2 (the `crc32c`
/// crate): out of line, so that the fast path's caller saves no registers for it.
#[cold]
#[inline(never)]
fn crc32c_cold(previous: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        return crc32c(previous, data);
    }
    crc32c::crc32c_append(previous, data)
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

/// Standard (zlib) CRC-32 of `data`, continuing from `previous`.
#[inline]
pub fn crc32(previous: u32, data: &[u8]) -> u32 {
    slicing8::crc32(previous, data)
}

/// PostgreSQL's legacy (pre-9.5 WAL) CRC-32 of `data`, continuing from `previous`.
pub fn crc32_legacy(previous: u32, data: &[u8]) -> u32 {
    let mut register = !previous;
    for &byte in data {
        let index = ((register >> 24) as u8 ^ byte) as usize;
        register = slicing8::CRC32_TABLES[0][index] ^ (register << 8);
    }
    !register
}

#[cfg(test)]
mod tests;
