//! `checksum::crc32c` (hardware paths) against the slicing-by-8 reference and the crc32c crate:
//! random lengths, offsets and split points, and every length 0..=300 at every offset 0..8.

use compresslab_core::checksum::{crc32c, slicing8};
use proptest::prelude::*;

fn bytes(len: usize, seed: u32) -> Vec<u8> {
    compresslab_core::rng::SeededRng::new(seed as u64).bytes(len)
}

#[test]
fn every_short_length_at_every_offset() {
    let data = bytes(300 + 8, 99);
    for offset in 0..8 {
        for len in 0..=300 {
            let d = &data[offset..offset + len];
            let expected = slicing8::crc32c(0, d);
            assert_eq!(crc32c(0, d), expected, "len {len} offset {offset}");
            assert_eq!(crc32c(0, d), crc32c::crc32c(d), "len {len} offset {offset}");
            assert_eq!(crc32c(0x1234_5678, d), slicing8::crc32c(0x1234_5678, d), "len {len} offset {offset}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn random_lengths_offsets_and_splits(len in 0usize..20_000, offset in 0usize..8, seed in any::<u32>(), cut in any::<prop::sample::Index>(), previous in any::<u32>()) {
        let data = bytes(len + offset, seed);
        let d = &data[offset..];
        let whole = crc32c(0, d);
        prop_assert_eq!(whole, slicing8::crc32c(0, d));
        prop_assert_eq!(whole, crc32c::crc32c(d));
        prop_assert_eq!(crc32c(previous, d), crc32c::crc32c_append(previous, d));
        let cut = if d.is_empty() { 0 } else { cut.index(d.len() + 1) };
        let (a, b) = d.split_at(cut);
        prop_assert_eq!(crc32c(crc32c(0, a), b), whole, "cut at {}", cut);
    }
}
