//! Property: `envelope::compress` with every method (zstd at a level from the input, small for
//! speed) decodes back to the input with its length as limit, its header reports the method
//! (or `none` when compression did not pay) and raw size, and it never costs more than the
//! 10-byte header.
#![no_main]

use compresslab_core::envelope::{self, EnvelopeMethod, HEADER_LEN};
use compresslab_core::registry::Named;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let selector = r.u8();
    let method = EnvelopeMethod::ALL[selector as usize % EnvelopeMethod::ALL.len()];
    let level = (method == EnvelopeMethod::Zstd && selector & 0x80 != 0).then(|| i32::from(selector % 9) - 5);
    let src = r.rest;
    let packed = envelope::compress(src, method, level).unwrap();
    assert!(packed.len() <= src.len() + HEADER_LEN);
    let info = envelope::info(&packed).unwrap();
    assert!(info.method == method || info.method == EnvelopeMethod::None, "{:?} stored as {:?}", method, info.method);
    assert_eq!(info.raw_size, src.len());
    assert_eq!(envelope::decompress(&packed, src.len()).unwrap(), src);
    if !src.is_empty() {
        assert!(envelope::decompress(&packed, src.len() - 1).is_err());
    }
});
