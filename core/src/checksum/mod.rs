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
    } else if x86::available() {
        // SAFETY: the CPU supports SSE4.2 and PCLMULQDQ, checked just above.
        return unsafe { x86::crc32c(previous, data) };
    }
    crc32c_portable(previous, data)
}

/// The `crc32c` crate, out of line so that the fast path's caller saves no registers for it.
#[cold]
#[inline(never)]
fn crc32c_portable(previous: u32, data: &[u8]) -> u32 {
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
mod tests {
    use super::*;

    const CHECK: &[u8] = b"123456789";

    #[test]
    fn check_values() {
        assert_eq!(crc32c(0, CHECK), 0xE306_9283);
        assert_eq!(crc32(0, CHECK), 0xCBF4_3926);
        assert_eq!(crc32_legacy(0, CHECK), 0xC40E_D0B0);
        assert_eq!(slicing8::crc32c(0, CHECK), 0xE306_9283);
    }

    #[test]
    fn empty_input_is_zero() {
        for f in [crc32c, crc32, crc32_legacy, slicing8::crc32c] {
            assert_eq!(f(0, b""), 0);
        }
    }

    #[test]
    fn rfc3720_vectors() {
        assert_eq!(crc32c(0, &[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(0, &[0xFFu8; 32]), 0x62A8_AB43);
        let ascending: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(0, &ascending), 0x46DD_794E);
    }

    #[test]
    fn postgres18_crc32c_of_abc() {
        // SELECT crc32c('abc'::bytea) on PostgreSQL 18
        assert_eq!(crc32c(0, b"abc"), 910_901_175);
    }

    #[test]
    fn every_crc_continues_over_pieces() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for f in [crc32c, crc32, crc32_legacy, slicing8::crc32c] {
            let whole = f(0, &data);
            for cut in [0, 1, 7, 8, 9, 4095, 9999, 10_000] {
                let (a, b) = data.split_at(cut);
                assert_eq!(f(f(0, a), b), whole, "cut at {cut}");
            }
        }
    }

    #[test]
    fn fast_crc32c_equals_slicing_by_8_reference() {
        let mut state = 0x1234_5678_u32;
        for len in (0..300).chain([1000, 4096, 8192, 8193, 65_536]) {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 17;
                    state ^= state << 5;
                    state as u8
                })
                .collect();
            for start in 0..4.min(len) {
                assert_eq!(crc32c(0, &data[start..]), slicing8::crc32c(0, &data[start..]), "len {len} start {start}");
            }
        }
    }

    #[test]
    fn legacy_is_not_standard() {
        assert_ne!(crc32_legacy(0, b"a"), crc32(0, b"a"));
    }
}
