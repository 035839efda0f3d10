//! Property: `zstd_codec::compress` at any level in -5..=19 (mostly small ones, for speed),
//! with no dictionary or the fixed trained one, decodes back to the input with its length as
//! limit, and is refused with one byte less.
//!
//! Input: byte 0 the level (values below 224 map to -5..=3, the rest to 4..=19), byte 1 odd:
//! use the fixed dictionary; the rest is the input.
#![no_main]

use compresslab_core::zstd_codec;
use compresslab_fuzz::{Reader, FIXED_ZSTD_DICTIONARY};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let l = r.u8();
    let level = if l < 224 { i32::from(l % 9) - 5 } else { i32::from(l % 16) + 4 };
    let dictionary = (r.u8() & 1 == 1).then_some(FIXED_ZSTD_DICTIONARY);
    let src = r.rest;
    let packed = zstd_codec::compress(src, level, dictionary).unwrap();
    assert!(packed.len() <= zstd_codec::compress_bound(src.len()) + 32);
    assert_eq!(zstd_codec::decompress(&packed, dictionary, src.len()).unwrap(), src, "level {level}");
    if !src.is_empty() {
        assert!(zstd_codec::decompress(&packed, dictionary, src.len() - 1).is_err());
    }
});
