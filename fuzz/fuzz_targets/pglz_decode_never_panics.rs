//! Property: the pglz decoder never panics, never reads or writes out of bounds (ASan), and
//! never produces more than the raw size it is given, whatever the input; `decompress`,
//! `decompress_into` and `decompress_into_ticking_every` (a tick every 1-128 bytes, from the
//! mode byte: the fast loop cut at every tick point) agree.
//!
//! Input: byte 0 picks the raw size's range, bytes 1-2 its value, the rest is the compressed
//! stream. Sizes up to 64 KiB keep >= 32 bytes of room for long stretches (the unchecked fast
//! loop), sizes below 48 force the checked tail loop from the start.
#![no_main]

use compresslab_core::pglz;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

const GUARD: usize = 64;
const FILL: u8 = 0xA5;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let mode = r.u8();
    let n = r.u16() as usize;
    let raw_size = if mode & 1 == 0 { n } else { n % 48 };
    let src = r.rest;
    for check_complete in [false, true] {
        let vec_result = pglz::decompress(src, raw_size, check_complete);
        if let Ok(out) = &vec_result {
            assert!(out.len() <= raw_size, "decoded {} bytes, raw size {raw_size}", out.len());
            if check_complete {
                assert_eq!(out.len(), raw_size);
            }
        }
        // The destination is a slice of a larger buffer: bytes past it must stay untouched.
        let mut buf = vec![FILL; raw_size + GUARD];
        let into_result = pglz::decompress_into(src, &mut buf[..raw_size], check_complete);
        assert!(buf[raw_size..].iter().all(|&b| b == FILL), "decompress_into wrote past its destination");
        match (&vec_result, &into_result) {
            (Ok(out), Ok(n)) => {
                assert!(*n <= raw_size);
                assert_eq!(&buf[..*n], &out[..]);
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!("decompress {a:?} and decompress_into {b:?} disagree"),
        }
        let mut ticked = vec![FILL; raw_size + GUARD];
        let every = usize::from(mode >> 1) + 1;
        let ticked_result =
            pglz::decompress_into_ticking_every(src, &mut ticked[..raw_size], check_complete, every, &mut || ());
        assert!(ticked[raw_size..].iter().all(|&b| b == FILL), "the ticking decoder wrote past its destination");
        assert_eq!(ticked_result, into_result, "the ticking decoder disagrees");
        if let Ok(n) = ticked_result {
            assert_eq!(ticked[..n], buf[..n], "the ticking decoder's bytes differ");
        }
    }
});
