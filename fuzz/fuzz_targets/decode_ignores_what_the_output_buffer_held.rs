//! Property: the decoders that write into uninitialised memory (the SQL functions' fresh
//! results) never read a byte of it they have not written: decoding an input into a buffer
//! filled with 0x00 and into one filled with 0xFF gives the same result, the same bytes
//! written or the same error. Covers pglz (with and without `check_complete`), the LZ4 block
//! decoder, compresslab's envelope (`decompress()`), LZ4 frames (`lz4_frame_decompress`) and
//! zstd frames (`zstd_decompress`), through their `_uninit` entry points, with ticks cutting
//! the fast loops' windows.
//!
//! Input: byte 0 the decoder (mod 6), bytes 1-2 the buffer's length, byte 3 the tick interval
//! in bytes (0: none; the block decoders only); the rest is the compressed data.
#![no_main]

use std::mem::MaybeUninit;

use compresslab_core::lz4::decode as lz4_decode;
use compresslab_core::{envelope, lz4, pglz, zstd_codec};
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

/// Bytes past the buffer, which no decoder may write.
const GUARD: usize = 64;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let which = r.u8() % 6;
    let cap = r.u16() as usize;
    let every = match r.u8() {
        0 => usize::MAX,
        n => n as usize,
    };
    let src = r.rest;
    // The envelope and the frames declare their size: decode only into that many bytes, as
    // the SQL functions do.
    let declared = match which {
        3 => envelope::decompressed_len(src, 1 << 16).ok().map(|len| len as u64),
        4 => lz4::frame::content_size(src),
        5 => zstd_codec::declared_size(src),
        _ => Some(cap as u64),
    };
    if declared != Some(cap as u64) {
        return;
    }
    let decode = |fill: u8| -> (Result<usize, String>, Vec<u8>) {
        let mut buf = vec![MaybeUninit::new(fill); cap + GUARD];
        let room = &mut buf[..cap];
        let result = match which {
            0 | 1 => pglz::decompress_uninit_ticking_every(src, room, which == 0, every, &mut || ())
                .map_err(|e| format!("{e:?}")),
            2 => {
                lz4_decode::decompress_uninit_ticking_every(src, room, every, &mut || ()).map_err(|e| format!("{e:?}"))
            }
            3 => envelope::decompress_uninit(src, room, &mut || ()).map(|()| cap).map_err(|e| format!("{e:?}")),
            4 => lz4::frame::decompress_to_uninit(src, room, &mut || ()).map(|()| cap).map_err(|e| format!("{e:?}")),
            _ => zstd_codec::decompress_to_uninit(src, None, room, &mut || ()).map(|()| cap).map_err(|e| format!("{e:?}")),
        };
        // SAFETY: every byte of buf was initialised (filled), and decoders write only
        // initialised bytes.
        let bytes: Vec<u8> = buf.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert!(bytes[cap..].iter().all(|&b| b == fill), "a decoder wrote past its buffer");
        let written = match &result {
            Ok(n) => {
                assert!(*n <= cap, "{n} bytes written into {cap}");
                bytes[..*n].to_vec()
            }
            Err(_) => Vec::new(),
        };
        (result, written)
    };
    let zeros = decode(0x00);
    let ones = decode(0xFF);
    assert_eq!(zeros, ones, "the result depends on what the output buffer held");
});
