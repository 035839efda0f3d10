//! Property: on inputs over 4096 bytes (`pglz::compress_fast` on its small loop up to 8192 bytes,
//! then on the exact encoder's loop, with its `u16` history up to 61,440 bytes and its `u32` one
//! beyond) the output decodes back to the
//! input, is strictly smaller than it, and `compress_fast_to` writes the same bytes; for the
//! DEFAULT and ALWAYS strategies. (`pglz_roundtrip_fast` covers inputs up to 20,000 bytes.)
//!
//! Input: byte 0 picks the strategy and the size class (4097 or 61,441 bytes and up), bytes 1-2
//! the length beyond it (up to 64 KB more); the rest fills it through `repeat_rotated`.
#![no_main]

use compresslab_core::pglz::{self, Strategy};
use compresslab_fuzz::{repeat_rotated, Reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let pick = r.u8();
    let strategy = if pick & 1 == 0 { Strategy::DEFAULT } else { Strategy::ALWAYS };
    let base = if pick & 2 == 0 { 4097 } else { 61_441 };
    let len = base + usize::from(r.u16());
    if r.rest.is_empty() {
        return;
    }
    let src = repeat_rotated(r.rest, len);
    let Some(packed) = pglz::compress_fast(&src, &strategy) else { return };
    assert!(packed.len() < src.len(), "accepted output must be smaller than the input");
    assert_eq!(pglz::decompress(&packed, src.len(), true).unwrap(), src);
    let mut dst = vec![0u8; pglz::max_output(src.len())];
    let n =
        pglz::compress_fast_to(&src, &mut dst, &strategy).expect("compress_fast_to accepts what compress_fast accepts");
    assert_eq!(&dst[..n], &packed[..]);
});
