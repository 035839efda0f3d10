//! Zstandard, through the `zstd` crate (the reference C library, statically built).
//!
//! A zstd *frame* is: magic 0xFD2FB528 (little-endian), a frame header (descriptor byte, an
//! optional window descriptor, an optional dictionary id, an optional frame content size), then
//! blocks (raw, RLE or compressed: Huffman-coded literals plus FSE-coded sequences of literal
//! length, match length and offset against a window of up to 128 MB at the levels used here)
//! and an optional xxHash64-based checksum. Levels run from the library's negative "fast"
//! levels (trading ratio for speed) to 22; 0 means the library default (3). A dictionary
//! (raw content or one trained by `zstd --train`) primes the window for small inputs; the same
//! dictionary is needed to decode.
//!
//! The output of [`compress`] is a standard frame with the content size and a checksum, readable
//! by `zstd -d`; [`decompress`] reads any sequence of frames (skippable ones included), refusing
//! a declared content size above the caller's limit before allocating, and bounding output for
//! frames that declare none.

use std::ops::RangeInclusive;

use crate::error::{CodecError, Result};
use crate::lz4::frame::read_bounded;

/// The levels this build accepts: the library's minimum (negative) through 22.
pub fn level_range() -> RangeInclusive<i32> {
    zstd::compression_level_range()
}

/// The level used when none is given (the library default).
pub const DEFAULT_LEVEL: i32 = zstd::DEFAULT_COMPRESSION_LEVEL;

pub fn check_level(level: i32) -> Result<i32> {
    let range = level_range();
    if range.contains(&level) {
        Ok(level)
    } else {
        Err(CodecError::invalid(format!(
            "zstd compression level {level} is out of range; valid levels are {} to {}",
            range.start(),
            range.end()
        )))
    }
}

/// The largest frame [`compress`] can produce for `len` input bytes (`ZSTD_compressBound`).
pub fn compress_bound(len: usize) -> usize {
    zstd::zstd_safe::compress_bound(len)
}

/// Compress `src` into one zstd frame at `level`, optionally with a dictionary.
pub fn compress(src: &[u8], level: i32, dictionary: Option<&[u8]>) -> Result<Vec<u8>> {
    let level = check_level(level)?;
    let mut compressor = match dictionary {
        Some(dict) => zstd::bulk::Compressor::with_dictionary(level, dict),
        None => zstd::bulk::Compressor::new(level),
    }
    .map_err(|e| CodecError::invalid(format!("zstd cannot use this dictionary: {e}")))?;
    compressor
        .include_checksum(true)
        .and_then(|_| compressor.include_contentsize(true))
        .map_err(|e| CodecError::invalid(format!("zstd: {e}")))?;
    compressor.compress(src).map_err(|e| match dictionary {
        // The library reports a malformed dictionary only when it is first used.
        Some(_) => CodecError::invalid(format!("zstd cannot use this dictionary: {e}")),
        None => CodecError::invalid(format!("zstd compression failed: {e}")),
    })
}

/// Decompress zstd frame data, producing at most `max_raw` bytes.
pub fn decompress(src: &[u8], dictionary: Option<&[u8]>, max_raw: usize) -> Result<Vec<u8>> {
    match zstd::zstd_safe::get_frame_content_size(src) {
        Ok(Some(declared)) if declared > max_raw as u64 => {
            return Err(CodecError::too_large(format!(
                "zstd frame declares {declared} decompressed bytes, more than the limit of {max_raw}"
            )));
        }
        Ok(_) => {}
        Err(_) => return Err(CodecError::corrupt("input is not a zstd frame (bad magic number or frame header)")),
    }
    let decoder = match dictionary {
        Some(dict) => zstd::stream::read::Decoder::with_dictionary(src, dict),
        None => zstd::stream::read::Decoder::with_buffer(src),
    }
    .map_err(|e| CodecError::invalid(format!("zstd cannot use this dictionary: {e}")))?;
    read_bounded(decoder, max_raw, "zstd frame")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_fast_default_and_max_levels() {
        let data = b"zstd likes repetition; zstd likes repetition. ".repeat(500);
        for level in [*level_range().start(), -5, 0, 1, 3, 19, 22] {
            let frame = compress(&data, level, None).unwrap();
            if level > 0 {
                assert!(frame.len() < data.len() / 10, "level {level}: {} bytes", frame.len());
            }
            assert_eq!(decompress(&frame, None, data.len()).unwrap(), data);
        }
    }

    #[test]
    fn out_of_range_level_is_invalid_parameter() {
        assert!(matches!(compress(b"x", 23, None), Err(CodecError::InvalidParameter(_))));
        assert!(matches!(compress(b"x", *level_range().start() - 1, None), Err(CodecError::InvalidParameter(_))));
    }

    #[test]
    fn dictionary_is_needed_to_decode() {
        let dict = b"common prefix of every record: customer_id=, order_id=, status=shipped".to_vec();
        let data = b"common prefix of every record: customer_id=42, order_id=7, status=shipped".to_vec();
        let with = compress(&data, 3, Some(&dict)).unwrap();
        let without = compress(&data, 3, None).unwrap();
        assert!(with.len() < without.len());
        assert_eq!(decompress(&with, Some(&dict), 1000).unwrap(), data);
        assert!(decompress(&with, None, 1000).is_err());
    }

    #[test]
    fn limits_and_garbage() {
        let data = vec![0u8; 100_000];
        let frame = compress(&data, 3, None).unwrap();
        assert!(matches!(decompress(&frame, None, 99_999), Err(CodecError::TooLarge(_))));
        assert!(matches!(decompress(b"garbage!", None, 10), Err(CodecError::Corrupt(_))));
        for cut in [4, 8, frame.len() - 1] {
            assert!(decompress(&frame[..cut], None, 1 << 20).is_err(), "cut {cut}");
        }
    }
}
