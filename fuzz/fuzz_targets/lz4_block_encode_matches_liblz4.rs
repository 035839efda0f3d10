//! Property: `lz4::encode` is liblz4's `LZ4_compress_default` (the system's liblz4.so.1, the
//! library PostgreSQL links): for every input and output room, both refuse (liblz4 returns 0),
//! or both write the same block, byte for byte; and the block decodes back to the input. Our
//! encoder reads its input and writes its output through raw pointers in places: under
//! AddressSanitizer this target also checks that it stays inside both.
//!
//! Input: byte 0 picks the case: bit 0 set, the rest repeated (rotated, poked) to 65,000 +
//! 256 * byte 1 bytes, across the switch from the 16-bit to the 32-bit hash table at 65,547
//! bytes; bit 1 set, an output room of the block's bound times byte 2 / 256 (mostly too small)
//! instead of the full bound. The rest is the input.
#![no_main]

use compresslab_core::lz4::encode;
use compresslab_fuzz::{c_lz4_compress, repeat_rotated, Reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let (case, long, room) = (r.u8(), r.u8(), r.u8());
    let rest = r.rest;
    let input = if case & 1 != 0 && !rest.is_empty() {
        repeat_rotated(rest, 65_000 + 256 * usize::from(long))
    } else {
        rest.to_vec()
    };
    let bound = encode::compress_bound(input.len());
    let capacity = if case & 2 != 0 { bound * usize::from(room) / 256 } else { bound };
    let theirs = c_lz4_compress(&input, capacity);
    let mut ours = vec![0u8; capacity];
    let n = encode::compress_to(&input, &mut ours);
    match (n, theirs) {
        (None, None) => {}
        (Some(n), Some(theirs)) => {
            assert!(ours[..n] == theirs[..], "{} bytes: ours {n} bytes, liblz4's {}", input.len(), theirs.len());
            let back = lz4_flex::block::decompress(&ours[..n], input.len()).expect("the block decodes");
            assert!(back == input);
        }
        (n, theirs) => {
            panic!("{} bytes into {capacity}: ours {n:?}, liblz4's {:?}", input.len(), theirs.map(|t| t.len()))
        }
    }
});
