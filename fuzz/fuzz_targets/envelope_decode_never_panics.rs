//! Property: `envelope::info` and `envelope::decompress` never panic or touch memory out of
//! bounds; a decoded value is exactly the header's raw size, which is within the limit.
//!
//! Input: bytes 0-1 the limit, the rest the envelope (10-byte header `CLZ\xC1`, version,
//! method, raw size; payload).
#![no_main]

use compresslab_core::envelope;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let max_raw = r.u16() as usize * 4;
    let src = r.rest;
    let info = envelope::info(src);
    if let Ok(out) = envelope::decompress(src, max_raw) {
        let info = info.expect("decompress accepted a header info refuses");
        assert_eq!(out.len(), info.raw_size);
        assert!(out.len() <= max_raw, "{} bytes out, limit {max_raw}", out.len());
        assert_eq!(info.compressed_size, src.len());
    }
});
