//! Property: `zstd_codec::decompress` with a dictionary never panics or touches memory out of
//! bounds and never returns more than the limit, whether the dictionary is arbitrary bytes
//! (raw-content or damaged trained dictionaries, wrong IDs) or the fixed trained dictionary
//! `fuzz/seeds/zstd.dict`, against which the seed frames were compressed; frames that declare
//! their sizes decode the same in place (`decompress_to`).
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
    let grown = zstd_codec::decompress(r.rest, Some(dictionary), max_raw);
    if let Ok(out) = &grown {
        assert!(out.len() <= max_raw, "{} bytes out, limit {max_raw}", out.len());
    }
    // Frames that declare their sizes also decode straight into a buffer of the total (as
    // zstd_decompress() does): whatever decodes growing decodes there too, to the same bytes.
    if let Some(total) = zstd_codec::declared_size(r.rest).filter(|&n| n <= max_raw as u64) {
        let mut dst = vec![0xA5; total as usize];
        let in_place = zstd_codec::decompress_to(r.rest, Some(dictionary), &mut dst, &mut || ());
        if let Ok(out) = &grown {
            assert!(in_place.is_ok(), "decodes growing but not in place: {in_place:?}");
            assert_eq!(out, &dst, "the two decodings differ");
        }
    }
});
