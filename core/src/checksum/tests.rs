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
