//! Property: our CRC-32C (one `crc32` stream for short inputs, three streams combined with
//! carry-less multiplies or AVX-512 folding for long ones, all through raw pointer reads) gives
//! the slicing-by-8 reference's value for any bytes at any alignment, and continues correctly
//! across any split point.
//!
//! Input: byte 0 the alignment offset (0-7) and bytes 1-2 the split point; the rest is the data.
#![no_main]

use compresslab_core::checksum::{crc32c, slicing8};
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let offset = (r.u8() % 8) as usize;
    let split = r.u16() as usize;
    // Copy behind `offset` bytes so every alignment of the start is reached.
    let mut buf = vec![0u8; offset + r.rest.len()];
    buf[offset..].copy_from_slice(r.rest);
    let bytes = &buf[offset..];
    let expected = slicing8::crc32c(0, bytes);
    assert_eq!(crc32c(0, bytes), expected);
    let split = split.min(bytes.len());
    assert_eq!(crc32c(crc32c(0, &bytes[..split]), &bytes[split..]), expected);
});
