//! Property: `lz4::frame::compress` output decodes back to the input with the input's length
//! as limit, is refused with one byte less, declares the content size, and fits compress_bound.
#![no_main]

use compresslab_core::lz4::frame;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let packed = frame::compress(data);
    assert!(packed.len() <= frame::compress_bound(data.len()));
    assert_eq!(frame::declared_content_size(&packed), Some(data.len() as u64));
    assert_eq!(frame::decompress(&packed, data.len()).unwrap(), data);
    if !data.is_empty() {
        assert!(frame::decompress(&packed, data.len() - 1).is_err());
    }
});
