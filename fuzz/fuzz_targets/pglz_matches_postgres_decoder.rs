//! Property: the Rust pglz decoder gives exactly what PostgreSQL 15's C `pglz_decompress`
//! (linked from libpgcommon.a) gives, for every input, raw size and `check_complete`: the same
//! bytes, or both fail (C returns -1).
//!
//! Input layout as in `pglz_decode_never_panics`. The C decoder gets its input followed by
//! spare zero bytes, since it reads up to 2 bytes past `slen` on a truncated tag before
//! returning -1 (the Rust one checks first; both then fail).
#![no_main]

use compresslab_core::pglz;
use compresslab_fuzz::{c_pglz_decompress, Reader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let mode = r.u8();
    let n = r.u16() as usize;
    let raw_size = if mode & 1 == 0 { n } else { n % 48 };
    let src = r.rest;
    for check_complete in [false, true] {
        let c = c_pglz_decompress(src, raw_size, check_complete);
        let rust = pglz::decompress(src, raw_size, check_complete);
        match (&c, &rust) {
            (Some(c), Ok(rust)) => {
                assert!(rust.len() <= raw_size);
                assert_eq!(c, rust, "same length and bytes (check_complete {check_complete})");
            }
            (None, Err(_)) => {}
            (c, rust) => panic!(
                "C and Rust disagree (raw size {raw_size}, check_complete {check_complete}): C {:?}, Rust {:?}",
                c.as_ref().map(|v| v.len()),
                rust.as_ref().map(|v| v.len())
            ),
        }
        let mut dst = vec![0u8; raw_size];
        match (&c, pglz::decompress_into(src, &mut dst, check_complete)) {
            (Some(c), Ok(n)) => assert_eq!(&c[..], &dst[..n]),
            (None, Err(_)) => {}
            (c, rust) => panic!("C {:?} and decompress_into {rust:?} disagree", c.as_ref().map(|v| v.len())),
        }
    }
});
