//! Property: records split from the input, encoded in order by one `Lz4StreamEncoder` and
//! decoded in order by one `Lz4StreamDecoder`, come back identical; a Linked or Independent
//! block is smaller than its record, a Raw one is the record.
//!
//! Input: records, each: 1 byte length (low 7 bits) of the record's own bytes; if the high bit
//! is set, a second byte `k` and the bytes are repeated until the record is at least
//! `k * 512` bytes long (so records over the 64 KiB window and over 1 MiB of history occur).
#![no_main]

use compresslab_core::lz4::stream::{Lz4StreamDecoder, Lz4StreamEncoder, StreamBlock};
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let records = r.records(200, 512);
    let mut enc = Lz4StreamEncoder::new();
    let encoded: Vec<(StreamBlock, Vec<u8>)> = records
        .iter()
        .map(|rec| {
            let mut out = vec![0xEE; 3]; // encode appends: earlier bytes must stay
            let block = enc.encode(rec, &mut out).expect("encoding into memory");
            assert_eq!(&out[..3], &[0xEE; 3]);
            out.drain(..3);
            match block {
                StreamBlock::Raw => assert_eq!(&out, rec),
                _ => assert!(out.len() < rec.len(), "{block:?} block of {} bytes for {} raw", out.len(), rec.len()),
            }
            (block, out)
        })
        .collect();
    let mut dec = Lz4StreamDecoder::new();
    for (i, (rec, (block, payload))) in records.iter().zip(&encoded).enumerate() {
        let mut out = vec![0u8; rec.len()];
        dec.decode(*block, payload, &mut out).unwrap_or_else(|e| panic!("record {i} ({block:?}): {e:?}"));
        assert!(out == *rec, "record {i} ({block:?}) differs");
    }
});
