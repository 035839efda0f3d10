//! Property: `zstd_codec::decompress` with a dictionary never panics or touches memory out of
//! bounds and never returns more than the limit, whether the dictionary is arbitrary bytes
//! (raw-content or damaged trained dictionaries, wrong IDs) or the fixed trained dictionary
//! `fuzz/seeds/zstd.dict`, against which the seed frames were compressed.
//!
//! Input: byte 0 odd: fixed dictionary, the rest after bytes 1-3 (the limit) is the frame;
//! byte 0 even: bytes 4-5 give the dictionary length, taken from the front of the rest.
#![no_main]

use compresslab_core::zstd_codec;
use compresslab_fuzz::{Reader, FIXED_ZSTD_DICTIONARY};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let mode = r.u8();
    let max_raw = u32::from_le_bytes([r.u8(), r.u8(), r.u8(), 0]) as usize;
    let dictionary = if mode & 1 == 1 {
        FIXED_ZSTD_DICTIONARY
    } else {
        let n = r.u16() as usize;
        r.bytes(n)
    };
    if let Ok(out) = zstd_codec::decompress(r.rest, Some(dictionary), max_raw) {
        assert!(out.len() <= max_raw, "{} bytes out, limit {max_raw}", out.len());
    }
});
