//! Property tests of the LZ4, zstd and envelope layers (pglz has its own in pglz.rs): random
//! inputs round-trip; random truncations, bit flips and garbage never panic and never produce
//! more than the limit they are given.

use compresslab_core::registry::Named;
use compresslab_core::{envelope, lz4, zstd_codec, CodecError, EnvelopeMethod};
use proptest::prelude::*;

/// Inputs with structure (runs, repeats) as well as noise.
fn inputs() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..5000),
        prop::collection::vec(prop::sample::select(vec![b'a', b'b', b' ', b'\n']), 0..20000),
        (prop::collection::vec(any::<u8>(), 1..64), 1usize..400).prop_map(|(unit, n)| unit.repeat(n)),
    ]
}

/// Damage a valid encoding: cut it, flip a bit, or both.
fn damage(mut bytes: Vec<u8>, cut: usize, flip: usize, bit: u8) -> Vec<u8> {
    if !bytes.is_empty() {
        let i = flip % bytes.len();
        bytes[i] ^= 1 << (bit % 8);
        bytes.truncate(cut % (bytes.len() + 1));
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn lz4_block_and_frame_round_trip(data in inputs()) {
        prop_assert_eq!(lz4::block::decompress(&lz4::block::compress(&data).unwrap(), data.len()).unwrap(), data.clone());
        prop_assert_eq!(lz4::block::decompress_size_prepended(&lz4::block::compress_size_prepended(&data).unwrap(), data.len()).unwrap(), data.clone());
        prop_assert_eq!(lz4::frame::decompress(&lz4::frame::compress(&data), data.len()).unwrap(), data);
    }

    #[test]
    fn zstd_round_trips_at_any_level(data in inputs(), level in -20i32..=19) {
        let frame = zstd_codec::compress(&data, level, None).unwrap();
        prop_assert_eq!(zstd_codec::decompress(&frame, None, data.len()).unwrap(), data);
    }

    #[test]
    fn envelope_round_trips_with_every_method(data in inputs(), m in 0usize..4) {
        let packed = envelope::compress(&data, EnvelopeMethod::ALL[m], None).unwrap();
        prop_assert!(packed.len() <= data.len() + envelope::HEADER_LEN);
        prop_assert_eq!(envelope::decompress(&packed, data.len()).unwrap(), data);
    }

    #[test]
    fn damaged_lz4_never_panics_or_overproduces(data in inputs(), cut in any::<usize>(), flip in any::<usize>(), bit in any::<u8>()) {
        let block = damage(lz4::block::compress(&data).unwrap(), cut, flip, bit);
        let _ = lz4::block::decompress(&block, data.len());
        let prefixed = damage(lz4::block::compress_size_prepended(&data).unwrap(), cut, flip, bit);
        if let Ok(out) = lz4::block::decompress_size_prepended(&prefixed, data.len() + 16) {
            prop_assert!(out.len() <= data.len() + 16);
        }
        let frame = damage(lz4::frame::compress(&data), cut, flip, bit);
        if let Ok(out) = lz4::frame::decompress(&frame, data.len()) {
            prop_assert!(out.len() <= data.len());
        }
    }

    #[test]
    fn damaged_zstd_never_panics_or_overproduces(data in inputs(), cut in any::<usize>(), flip in any::<usize>(), bit in any::<u8>()) {
        let frame = damage(zstd_codec::compress(&data, 3, None).unwrap(), cut, flip, bit);
        if let Ok(out) = zstd_codec::decompress(&frame, None, data.len()) {
            prop_assert!(out.len() <= data.len());
        }
    }

    #[test]
    fn damaged_envelopes_are_errors_not_panics(data in inputs(), m in 0usize..4, cut in any::<usize>(), flip in any::<usize>(), bit in any::<u8>()) {
        let packed = damage(envelope::compress(&data, EnvelopeMethod::ALL[m], None).unwrap(), cut, flip, bit);
        match envelope::decompress(&packed, data.len() + 64) {
            Ok(out) => prop_assert!(out.len() <= data.len() + 64),
            Err(CodecError::Corrupt(_)) | Err(CodecError::TooLarge(_)) => {}
            Err(e) => prop_assert!(false, "unexpected error kind {e:?}"),
        }
    }

    #[test]
    fn garbage_is_never_a_panic(garbage in prop::collection::vec(any::<u8>(), 0..2000), raw in 0usize..5000) {
        let _ = lz4::block::decompress(&garbage, raw);
        let _ = lz4::block::decompress_size_prepended(&garbage, raw);
        let _ = lz4::frame::decompress(&garbage, raw);
        let _ = zstd_codec::decompress(&garbage, None, raw);
        let _ = envelope::decompress(&garbage, raw);
        let mut forged = envelope::MAGIC.to_vec();
        forged.push(envelope::FORMAT_VERSION);
        forged.extend_from_slice(&garbage);
        let _ = envelope::decompress(&forged, raw);
    }
}
