//! Property: `pglz::compress` (PostgreSQL's exact encoder) output decodes back to the input,
//! is strictly smaller than it, fits `max_output`, and `compress_to` writes the same bytes;
//! for the DEFAULT and ALWAYS strategies.
#![no_main]

use compresslab_core::pglz::{self, Strategy};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for strategy in [Strategy::ALWAYS, Strategy::DEFAULT] {
        let Some(packed) = pglz::compress(data, &strategy) else { continue };
        assert!(packed.len() < data.len(), "accepted output must be smaller than the input");
        assert_eq!(pglz::decompress(&packed, data.len(), true).unwrap(), data);
        let mut dst = vec![0u8; pglz::max_output(data.len())];
        let n = pglz::compress_to(data, &mut dst, &strategy).expect("compress_to accepts what compress accepts");
        assert_eq!(&dst[..n], &packed[..]);
    }
});
