//! Property: `zstd_codec::decompress` without a dictionary never panics or touches memory out
//! of bounds (the C library runs under the fuzzer's AddressSanitizer-instrumented Rust, its own
//! code is not instrumented), and never returns more than the caller's limit; frames that
//! declare their sizes decode the same in place (`decompress_to`).
//!
//! Input: bytes 0-2 the limit (0..16 MiB), the rest the frame data.
#![no_main]

use compresslab_core::zstd_codec;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let max_raw = u32::from_le_bytes([r.u8(), r.u8(), r.u8(), 0]) as usize;
    let grown = zstd_codec::decompress(r.rest, None, max_raw);
    if let Ok(out) = &grown {
        assert!(out.len() <= max_raw, "{} bytes out, limit {max_raw}", out.len());
    }
    // Frames that declare their sizes also decode straight into a buffer of the total (as
    // zstd_decompress() does): whatever decodes growing decodes there too, to the same bytes.
    if let Some(total) = zstd_codec::declared_size(r.rest).filter(|&n| n <= max_raw as u64) {
        let mut dst = vec![0xA5; total as usize];
        let in_place = zstd_codec::decompress_to(r.rest, None, &mut dst, &mut || ());
        if let Ok(out) = &grown {
            assert!(in_place.is_ok(), "decodes growing but not in place: {in_place:?}");
            assert_eq!(out, &dst, "the two decodings differ");
        }
    }
});
