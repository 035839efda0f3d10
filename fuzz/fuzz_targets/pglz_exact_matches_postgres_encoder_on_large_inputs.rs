//! Property: on inputs over 61,440 bytes (the exact encoder's `u32` history and its 16-byte
//! candidate compares, the TOAST-sized path) `pglz::compress` is byte-identical to PostgreSQL
//! 15's C `pglz_compress` and refuses exactly what it refuses.
//!
//! Input: byte 0 picks `PGLZ_strategy_default` or `PGLZ_strategy_always`, bytes 1-2 the length
//! beyond 61,441 (up to 64 KB more); the rest fills it through `repeat_rotated`, so that
//! matches of every length and distance meet the history wrap and the 4 KB reach.
//! (`pglz_exact_matches_postgres_encoder` covers short inputs and every strategy clamp.)
#![no_main]

use compresslab_core::pglz::Strategy;
use compresslab_fuzz::{assert_pglz_compress_matches_c, repeat_rotated, CStrategy, Reader};
use libfuzzer_sys::fuzz_target;

const SMALL_INPUT_MAX: usize = 61_440;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    let (rust_strategy, c_strategy) =
        if r.u8() & 1 == 0 { (Strategy::DEFAULT, CStrategy::Default) } else { (Strategy::ALWAYS, CStrategy::Always) };
    let len = SMALL_INPUT_MAX + 1 + usize::from(r.u16());
    let seed = r.rest;
    if seed.is_empty() {
        return;
    }
    assert_pglz_compress_matches_c(&repeat_rotated(seed, len), c_strategy, &rust_strategy);
});
