//! Property: the LZ4 stream decoder, fed any sequence of (block kind, payload, raw length),
//! never panics, never touches memory out of bounds, and writes only inside the record's
//! destination (whose length is the record's raw size); it keeps going after errors, as a
//! reader that skipped a bad record would, so damaged history is exercised too.
//!
//! Input: a sequence of records, each: 1 byte kind (0 Raw, 1 Independent, 2 Linked, by
//! value % 3), 2 bytes raw length (% 8 KiB, or x 32 when the kind byte's high bit is set so
//! the 64 KiB window and the 1 MiB history trim are reached), 2 bytes payload length, payload.
#![no_main]

use compresslab_core::lz4::stream::{Lz4StreamDecoder, StreamBlock};
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

const GUARD: usize = 64;
const FILL: u8 = 0xC3;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let mut dec = Lz4StreamDecoder::new();
    let mut records = 0;
    while !r.rest.is_empty() && records < 64 {
        records += 1;
        let kind = r.u8();
        let block = match kind % 3 {
            0 => StreamBlock::Raw,
            1 => StreamBlock::Independent,
            _ => StreamBlock::Linked,
        };
        let n = r.u16() as usize;
        let raw_len = if kind & 0x80 != 0 { (n % 4096) * 32 } else { n % 8192 };
        let payload_len = r.u16() as usize;
        let payload = r.bytes(payload_len);
        let mut buf = vec![FILL; raw_len + GUARD];
        let result = dec.decode(block, payload, &mut buf[..raw_len]);
        assert!(buf[raw_len..].iter().all(|&b| b == FILL), "decode wrote past the record");
        if result.is_ok() && block == StreamBlock::Raw {
            assert_eq!(&buf[..raw_len], payload);
        }
    }
});
