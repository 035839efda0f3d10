//! The pglz compressors: [`compress`], byte for byte PostgreSQL 15's `pglz_compress`, and
//! [`compress_fast`], the same format and rules with a cheaper match finder (the `pglz`
//! module documentation describes both).
//!
//! This file holds the API, the per-thread tables and the dispatch by input size; the encoders are in their own files:
//!
//! * [`chain`]: the exact encoder (hash chains made ahead of the items), which with
//!   `FAST` is also [`compress_fast`]'s encoder for inputs over 8192 bytes;
//! * [`fast_small`]: [`compress_fast`]'s loop for inputs up to 8192 bytes;
//! * [`emitter`]: the output side both write through (control bytes, literals, tags);
//! * [`params`]: the format's limits, the strategy as one input size sees it ([`Params`])
//!   and the multiplicative hash of the fast paths, shared by the encoders.

use std::cell::RefCell;

pub use self::params::{max_output, TICK_BYTES};

use self::chain::{compress_core, Tables, HASH_BLOCK, SMALL_INPUT};
use self::fast_small::{
    compress_fast_core, FastSmall, ALL_UP_TO_4K, ALL_UP_TO_8K, EDGE_UP_TO_4K, EDGE_UP_TO_8K, FAST_SHORT_INPUT,
    FAST_SMALL_BITS,
};
use self::params::Params;
use super::strategy::Strategy;

mod chain;
mod emitter;
mod fast_small;
mod params;
#[cfg(test)]
mod tests;

/// Scratch tables, kept per thread so repeated calls pay neither allocation nor
/// clearing beyond the part of `head` the input size uses (as PostgreSQL does).
struct Workspace {
    small: Tables<u16>,
    /// The small `pglz_fast` loop's buckets; its links are in `small.chain`.
    fast_small: FastSmall,
    large: Tables<u32>,
    /// The exact encoder's precomputed buckets ([`HASH_BLOCK`] entries).
    hashes: Box<[u16]>,
}

impl Workspace {
    fn new() -> Box<Workspace> {
        Box::new(Workspace {
            small: Tables::new(),
            large: Tables::new(),
            hashes: vec![0; HASH_BLOCK].into_boxed_slice(),
            fast_small: FastSmall::new(),
        })
    }
}

thread_local! {
    static WORKSPACE: RefCell<Box<Workspace>> = RefCell::new(Workspace::new());
}

/// Compresses `src` with `strategy`.
///
/// Returns `None` exactly when PostgreSQL 15's `pglz_compress` returns -1: the
/// strategy refuses the input size, `match_size_good <= 0`, the data did not
/// shrink by `min_comp_rate` percent (and at least by one byte), or no match was
/// found within the first `first_success_by` output bytes. An empty input always
/// yields `None`. On success the bytes are identical to the C implementation's on
/// x86-64.
pub fn compress(src: &[u8], strategy: &Strategy) -> Option<Vec<u8>> {
    new_vec(src, |src, out| compress_to(src, out, strategy))
}

/// Like [`compress`], but writes into `dst` (cleared first, its allocation reused)
/// and returns the compressed length. On `None` the contents of `dst` are
/// unspecified.
pub fn compress_into(src: &[u8], dst: &mut Vec<u8>, strategy: &Strategy) -> Option<usize> {
    into_vec(src, dst, |src, out| compress_to(src, out, strategy))
}

/// Like [`compress`], but writes into the front of `dst`, which must hold at least
/// [`max_output`]`(src.len())` bytes, and returns the compressed length.
pub fn compress_to(src: &[u8], dst: &mut [u8], strategy: &Strategy) -> Option<usize> {
    compress_with::<false>(src, dst, strategy, &mut || ())
}

/// Like [`compress`] but faster and not byte-identical to PostgreSQL: buckets
/// come from a multiplicative hash of the next four bytes, and the history walk
/// stops after 256 candidates for inputs up to 8192 bytes (where positions
/// inside long matches are only partly entered into the history) and 64 above
/// (see the `pglz` module documentation). Same format (PostgreSQL
/// decodes it), same strategy semantics and accept/refuse rules, same walk
/// order, good-match decay and 4094-byte reach.
pub fn compress_fast(src: &[u8], strategy: &Strategy) -> Option<Vec<u8>> {
    new_vec(src, |src, out| compress_fast_to(src, out, strategy))
}

/// [`compress_fast`] into a reused vector; see [`compress_into`].
pub fn compress_fast_into(src: &[u8], dst: &mut Vec<u8>, strategy: &Strategy) -> Option<usize> {
    into_vec(src, dst, |src, out| compress_fast_to(src, out, strategy))
}

/// [`compress_fast`] into the front of a slice; see [`compress_to`].
pub fn compress_fast_to(src: &[u8], dst: &mut [u8], strategy: &Strategy) -> Option<usize> {
    compress_with::<true>(src, dst, strategy, &mut || ())
}

/// [`compress_to`] (or with `fast`, [`compress_fast_to`]) calling `tick` after every
/// [`TICK_BYTES`] of input (checked at the start of each block of 4096 positions,
/// so a little later; `compress_fast` on up to 8192 bytes, microseconds of work,
/// never calls it), so that a caller can stop a long
/// run (the extension checks for query cancel there; a panic or ERROR raised in
/// `tick` unwinds out cleanly).
pub fn compress_to_ticking(
    src: &[u8],
    dst: &mut [u8],
    strategy: &Strategy,
    fast: bool,
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    if fast {
        compress_with::<true>(src, dst, strategy, tick)
    } else {
        compress_with::<false>(src, dst, strategy, tick)
    }
}

fn new_vec(src: &[u8], to: impl FnOnce(&[u8], &mut [u8]) -> Option<usize>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    into_vec(src, &mut out, to)?;
    Some(out)
}

fn into_vec(src: &[u8], dst: &mut Vec<u8>, to: impl FnOnce(&[u8], &mut [u8]) -> Option<usize>) -> Option<usize> {
    dst.clear();
    dst.resize(max_output(src.len()), 0);
    let n = to(src, dst);
    dst.truncate(n.unwrap_or(0));
    n
}

fn compress_with<const FAST: bool>(
    src: &[u8],
    dst: &mut [u8],
    strategy: &Strategy,
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    let params = Params::new(src.len(), strategy)?;
    let dst = &mut dst[..max_output(src.len())];
    WORKSPACE.with(|ws| match ws.try_borrow_mut() {
        Ok(mut ws) => compress_sized::<FAST>(src, dst, &params, &mut ws, tick),
        // Not reachable today (nothing re-enters the compressor), but stay correct.
        Err(_) => compress_sized::<FAST>(src, dst, &params, &mut Workspace::new(), tick),
    })
}

fn compress_sized<const FAST: bool>(
    src: &[u8],
    dst: &mut [u8],
    params: &Params,
    ws: &mut Workspace,
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    // Inputs up to 8192 bytes take microseconds in the small `pglz_fast` loop: it
    // does not tick.
    let (fs, chain) = (&mut ws.fast_small, &mut ws.small.chain);
    match (FAST, src.len()) {
        (true, 0..=511) => compress_fast_core::<10, EDGE_UP_TO_4K, ALL_UP_TO_4K>(src, dst, params, fs, chain),
        (true, 512..=1023) => compress_fast_core::<12, EDGE_UP_TO_4K, ALL_UP_TO_4K>(src, dst, params, fs, chain),
        (true, 1024..=4096) => {
            compress_fast_core::<FAST_SMALL_BITS, EDGE_UP_TO_4K, ALL_UP_TO_4K>(src, dst, params, fs, chain)
        }
        (true, 4097..=FAST_SHORT_INPUT) => {
            compress_fast_core::<FAST_SMALL_BITS, EDGE_UP_TO_8K, ALL_UP_TO_8K>(src, dst, params, fs, chain)
        }
        (_, 0..=SMALL_INPUT) => compress_core::<u16, FAST>(src, dst, params, &mut ws.small, &mut ws.hashes, tick),
        _ => compress_core::<u32, FAST>(src, dst, params, &mut ws.large, &mut ws.hashes, tick),
    }
}
