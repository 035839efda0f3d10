//! Property: `scenarios::spill::simulate` with every strategy writes and reads back the
//! records split from the input without error (it verifies every record itself), and reports
//! consistent byte counts.
//!
//! Input: byte 0 the zstd level (1..=3); then records, each: 1 byte length (low 7 bits) of its
//! own bytes, repeated up to `k * 256` bytes when the high bit is set (k the next byte).
#![no_main]

use compresslab_core::registry::Named;
use compresslab_core::scenarios::spill::{simulate, Records, SpillSpec, SpillStrategy};
use compresslab_fuzz::Reader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let level = i32::from(r.u8() % 3) + 1;
    let records = r.records(300, 256);
    let rows = simulate(&Records::try_from_slices(&records).unwrap(), &SpillSpec::all(level), &mut || {}).unwrap();
    let raw: usize = records.iter().map(|r| r.len()).sum();
    assert_eq!(rows.len(), SpillStrategy::ALL.len());
    for row in &rows {
        assert_eq!(row.records as usize, records.len());
        assert_eq!(row.raw_bytes as usize, raw);
        if row.strategy == "raw" {
            assert_eq!(row.stored_bytes as usize, raw);
        }
    }
});
