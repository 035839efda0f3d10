//! Property: `pglz::compress` is PostgreSQL 15's `pglz_compress` (linked from libpgcommon.a):
//! for every input and strategy, both refuse, or both accept with byte-identical output.
//!
//! Input: byte 0 picks the strategy: the exported `PGLZ_strategy_default` or
//! `PGLZ_strategy_always` (checked field by field against `Strategy::DEFAULT` / `ALWAYS`), or
//! a struct built from the next 6 bytes, whose fields reach below and above every clamp
//! (negative and over-range rates, drops and good lengths, small minimum and maximum sizes,
//! tiny first_success_by). The rest is the input to compress; run with a -max_len above 4096
//! so that the 4096-entry history wraps.
#![no_main]

use compresslab_core::pglz::Strategy;
use compresslab_fuzz::{assert_pglz_compress_matches_c, c_strategy_fields, CStrategy, Reader};
use libfuzzer_sys::fuzz_target;

/// A strategy whose fields reach below and above every clamp.
fn custom(r: &mut Reader) -> Strategy {
    let b = [r.u8(), r.u8(), r.u8(), r.u8(), r.u8(), r.u8()];
    Strategy {
        min_input_size: i32::from(b[0] % 64) - 4,
        max_input_size: if b[1] < 128 { i32::MAX } else { i32::from(b[1]) * 32 },
        min_comp_rate: i32::from(b[2] as i8), // -128..=127: below 0, 0..=99, above 99
        first_success_by: if b[3] < 32 { i32::MAX } else { i32::from(b[3]) * 8 - 512 },
        match_size_good: i32::from(b[4]) + i32::from(b[4] >> 7) * 600 - 32, // -32..=223, 727..=823
        match_size_drop: i32::from(b[5] as i8),                             // -128..=127: below 0, 0..=100, above 100
    }
}

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let selector = r.u8();
    let (rust_strategy, c_strategy) = match selector % 4 {
        0 => (Strategy::DEFAULT, CStrategy::Default),
        1 => (Strategy::ALWAYS, CStrategy::Always),
        _ => {
            // The same struct goes to C (Strategy has PGLZ_Strategy's layout).
            let s = custom(&mut r);
            (s, CStrategy::Custom(s))
        }
    };
    assert_eq!(rust_strategy, c_strategy_fields(c_strategy), "strategy fields differ");
    let src = r.rest;
    assert_pglz_compress_matches_c(src, c_strategy, &rust_strategy);
});
