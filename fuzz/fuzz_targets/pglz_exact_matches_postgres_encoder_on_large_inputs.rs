//! Property: on inputs over 61,440 bytes (the exact encoder's `u32` history and its 16-byte
//! candidate compares, the TOAST-sized path) `pglz::compress` is byte-identical to PostgreSQL
//! 15's C `pglz_compress` and refuses exactly what it refuses.
//!
//! Input: byte 0 picks `PGLZ_strategy_default` or `PGLZ_strategy_always`, bytes 1-2 the length
//! beyond 61,441 (up to 64 KB more); the rest, repeated, rotated by a step that changes per
//! copy and with one byte per copy overwritten, fills it, so that matches of every length and
//! distance meet the history wrap and the 4 KB reach. (`pglz_exact_matches_postgres_encoder`
//! covers short inputs and every strategy clamp.)
#![no_main]

use compresslab_core::pglz::Strategy;
use compresslab_fuzz::{assert_pglz_compress_matches_c, CStrategy, Reader};
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
    let mut src = Vec::with_capacity(len);
    let mut copy = 0usize;
    while src.len() < len {
        let start = src.len();
        let rotate = (copy * 13) % seed.len();
        src.extend(seed[rotate..].iter().chain(&seed[..rotate]).take(len - start));
        let poke = start + (copy * 7919) % (src.len() - start);
        src[poke] = copy as u8;
        copy += 1;
    }
    assert_pglz_compress_matches_c(&src, c_strategy, &rust_strategy);
});
