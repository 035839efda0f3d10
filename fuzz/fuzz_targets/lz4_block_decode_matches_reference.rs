//! Property: our LZ4 block decoder (`lz4::decode`) accepts exactly what lz4_flex's safe
//! decoder (the reference it replaced) accepts, and produces the same bytes: for any input,
//! output room and dictionary, both return the same decoded bytes or both the same error
//! (the frame decoder acts on OutputTooSmall). Our decoder's fast loop uses raw pointers:
//! under AddressSanitizer this target also checks that it never reads or writes outside the
//! input, the output buffer or the dictionary.
//!
//! The ticking decoder (`decompress_into_ticking_every`, the one the SQL functions use, which
//! cuts the fast loop's output at every tick point) gives exactly what the plain one gives,
//! with a tick every 1-97 bytes (from the dictionary length byte).
//!
//! Input: bytes 0-1 the output room (below 4096), byte 2 the dictionary length (the dictionary
//! is the next that many bytes); the rest is the block.
#![no_main]

use compresslab_core::lz4::decode;
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

const FILL: u8 = 0x5A;

/// lz4_flex's error as ours.
fn same_kind(e: &lz4_flex::block::DecompressError) -> decode::DecodeError {
    use decode::DecodeError as D;
    use lz4_flex::block::DecompressError as E;
    match e {
        E::OutputTooSmall { .. } => D::OutputTooSmall,
        E::LiteralOutOfBounds => D::LiteralOutOfBounds,
        E::ExpectedAnotherByte => D::Truncated,
        E::OffsetZero => D::OffsetZero,
        E::OffsetOutOfBounds => D::OffsetOutOfBounds,
        other => panic!("lz4_flex error {other:?} has no counterpart"),
    }
}

fn same(
    ours: Result<usize, decode::DecodeError>,
    theirs: Result<usize, lz4_flex::block::DecompressError>,
    a: &[u8],
    b: &[u8],
) {
    match (ours, theirs) {
        (Ok(n), Ok(m)) => {
            assert_eq!(n, m, "decoded lengths differ");
            assert_eq!(a[..n], b[..m], "decoded bytes differ");
        }
        (Err(e), Err(f)) => assert_eq!(e, same_kind(&f), "errors differ"),
        (ours, theirs) => panic!("ours {ours:?}, lz4_flex {theirs:?}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let cap = r.u16() as usize % 4096;
    let dict_len = r.u8() as usize;
    let dict = r.bytes(dict_len);
    let src = r.rest;

    let mut ours = vec![FILL; cap];
    let mut theirs = vec![FILL; cap];
    let a = decode::decompress_into(src, &mut ours);
    let b = lz4_flex::block::decompress_into(src, &mut theirs);
    same(a, b, &ours, &theirs);

    let mut ticked = vec![FILL; cap];
    let mut ticks = 0usize;
    let every = dict_len % 97 + 1;
    let t = decode::decompress_into_ticking_every(src, &mut ticked, every, &mut || ticks += 1);
    assert_eq!(t, a, "the ticking decoder's result differs");
    if let Ok(n) = t {
        assert_eq!(ticked[..n], ours[..n], "the ticking decoder's bytes differ");
        assert!(ticks <= n / every, "{ticks} ticks for {n} bytes, every {every}");
    }

    let a = decode::decompress_into_with_dict(src, &mut ours, dict);
    let b = lz4_flex::block::decompress_into_with_dict(src, &mut theirs, dict);
    same(a, b, &ours, &theirs);
});
