//! Property: where `content_size` says how much LZ4 frame data holds, decoding it straight into
//! a buffer of that size (`decompress_to`, what `lz4_frame_decompress` does for such data) gives
//! exactly what the growing decoder gives under the same limit: the same bytes, or the same
//! error; and neither panics.
//!
//! Input: bytes 0-2 the largest content size tried (0..16 MiB), the rest the frame data.
#![no_main]

use compresslab_core::lz4::frame;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let max_raw = u32::from_le_bytes([r.u8(), r.u8(), r.u8(), 0]) as u64;
    let src = r.rest;
    let Some(size) = frame::content_size(src).filter(|&size| size <= max_raw) else { return };
    let mut dst = vec![0u8; size as usize];
    let into = frame::decompress_to(src, &mut dst, &mut || {}).map(|()| dst);
    assert_eq!(into, frame::decompress(src, size as usize));
});
