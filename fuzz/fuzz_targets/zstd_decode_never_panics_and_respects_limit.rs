//! Property: `zstd_codec::decompress` without a dictionary never panics or touches memory out
//! of bounds (the C library runs under the fuzzer's AddressSanitizer-instrumented Rust, its own
//! code is not instrumented), and never returns more than the caller's limit.
//!
//! Input: bytes 0-2 the limit (0..16 MiB), the rest the frame data.
#![no_main]

use compresslab_core::zstd_codec;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let max_raw = u32::from_le_bytes([r.u8(), r.u8(), r.u8(), 0]) as usize;
    if let Ok(out) = zstd_codec::decompress(r.rest, None, max_raw) {
        assert!(out.len() <= max_raw, "{} bytes out, limit {max_raw}", out.len());
    }
});
