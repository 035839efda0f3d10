//! Property: reading a spill file back (`scenarios::spill::read_back`, the reader of
//! `simulate`) never panics or touches memory out of bounds for any strategy, file and record
//! lengths; damage is an error.
//!
//! Input: byte 0 the strategy, byte 1 the number of records (% 17), then per record 2 bytes
//! of length (% 4 KiB) whose bytes are all the record's index (so a matching file can exist),
//! then the file.
#![no_main]

use compresslab_core::registry::Named;
use compresslab_core::scenarios::spill::{read_back, SpillStrategy};
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let strategy = SpillStrategy::ALL[r.u8() as usize % SpillStrategy::ALL.len()];
    let count = r.u8() as usize % 17;
    let records: Vec<Vec<u8>> = (0..count).map(|i| vec![i as u8; r.u16() as usize % 4096]).collect();
    let _ = read_back(strategy, r.rest, &records);
});
