//! Property: the LZ4 block decoders never panic or touch memory out of bounds, and never
//! produce more than the raw size / limit they are given: `block::decompress` is exact or an
//! error, `decompress_into` writes only inside its destination, `decompress_size_prepended`
//! refuses declared sizes above its limit and otherwise yields exactly the declared size.
//!
//! Input: bytes 0-1 the raw size, byte 2 the limit for the size-prepended form (in 256-byte
//! steps); the rest is the block (for the size-prepended form, its first 4 bytes are the prefix).
#![no_main]

use compresslab_core::lz4::block;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

const GUARD: usize = 64;
const FILL: u8 = 0x5A;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let raw_size = r.u16() as usize;
    let max_raw = r.u8() as usize * 256;
    let src = r.rest;

    if let Ok(out) = block::decompress(src, raw_size) {
        assert_eq!(out.len(), raw_size);
    }
    let mut buf = vec![FILL; raw_size + GUARD];
    let _ = block::decompress_into(src, &mut buf[..raw_size]);
    assert!(buf[raw_size..].iter().all(|&b| b == FILL), "decompress_into wrote past its destination");

    if let Ok(out) = block::decompress_size_prepended(src, max_raw) {
        let declared = u32::from_le_bytes(src[..4].try_into().unwrap()) as usize;
        assert!(out.len() <= max_raw, "{} bytes out, limit {max_raw}", out.len());
        assert_eq!(out.len(), declared);
    }
});
