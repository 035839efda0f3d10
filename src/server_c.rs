//! PostgreSQL's own C routines, exported by the postgres binary, exposed for interop tests and
//! as reference rows in benchmarks: the server's pglz and its CRC-32C.

use std::ffi::{c_char, c_void};

use compresslab_core::pglz::Strategy;
use pgrx::prelude::*;

use crate::errors::{checked_raw_size, OrRaise};

/// `PGLZ_Strategy` from `common/pg_lzcompress.h`: six int32 fields, same order as ours.
#[repr(C)]
struct PglzStrategy {
    min_input_size: i32,
    max_input_size: i32,
    min_comp_rate: i32,
    first_success_by: i32,
    match_size_good: i32,
    match_size_drop: i32,
}

impl From<&Strategy> for PglzStrategy {
    fn from(s: &Strategy) -> Self {
        PglzStrategy {
            min_input_size: s.min_input_size,
            max_input_size: s.max_input_size,
            min_comp_rate: s.min_comp_rate,
            first_success_by: s.first_success_by,
            match_size_good: s.match_size_good,
            match_size_drop: s.match_size_drop,
        }
    }
}

type Crc32cFn = unsafe extern "C" fn(crc: u32, data: *const c_void, len: usize) -> u32;

unsafe extern "C" {
    fn pglz_compress(source: *const c_char, slen: i32, dest: *mut c_char, strategy: *const PglzStrategy) -> i32;
    fn pglz_decompress(source: *const c_char, slen: i32, dest: *mut c_char, rawsize: i32, check_complete: bool) -> i32;
    /// Chosen at start-up: the SSE4.2 routine when the CPU has it, else slicing-by-8.
    static pg_comp_crc32c: Crc32cFn;
    fn pg_comp_crc32c_sb8(crc: u32, data: *const c_void, len: usize) -> u32;
}

/// The server's `pglz_compress`; None where it returns -1.
pub fn c_pglz_compress_into(src: &[u8], dst: &mut Vec<u8>, strategy: &Strategy) -> Option<usize> {
    let slen = i32::try_from(src.len()).ok()?;
    dst.clear();
    dst.resize(src.len() + 4, 0); // PGLZ_MAX_OUTPUT
    let c_strategy = PglzStrategy::from(strategy);
    // SAFETY: dest has PGLZ_MAX_OUTPUT(slen) bytes, the bound pglz_compress writes within.
    let n = unsafe { pglz_compress(src.as_ptr().cast(), slen, dst.as_mut_ptr().cast(), &c_strategy) };
    if n < 0 {
        return None;
    }
    dst.truncate(n as usize);
    Some(n as usize)
}

/// The server's `pglz_decompress` into `dst` (whose length is the raw size); None where it
/// returns -1. `padded_src` must end with 4 spare bytes, because the C decoder checks for a
/// truncated tag only after reading it.
pub fn c_pglz_decompress_padded(padded_src: &[u8], dst: &mut [u8], check_complete: bool) -> Option<usize> {
    let slen = padded_src.len().checked_sub(4)?;
    // SAFETY: dst has rawsize bytes; the source over-read stays within the 4 padding bytes.
    let n = unsafe {
        pglz_decompress(
            padded_src.as_ptr().cast(),
            slen as i32,
            dst.as_mut_ptr().cast(),
            dst.len() as i32,
            check_complete,
        )
    };
    (n >= 0).then_some(n as usize)
}

/// The server's CRC-32C (`pg_comp_crc32c`, hardware where available) of `data`, as a finished
/// CRC continuing from the finished CRC `previous`.
pub fn c_crc32c(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: pg_comp_crc32c is set before any backend runs; data is a valid slice.
    unsafe { !pg_comp_crc32c(!previous, data.as_ptr().cast(), data.len()) }
}

/// The server's portable slicing-by-8 CRC-32C.
#[cfg_attr(not(feature = "pg_test"), allow(dead_code))]
pub fn c_crc32c_sb8(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: data is a valid slice.
    unsafe { !pg_comp_crc32c_sb8(!previous, data.as_ptr().cast(), data.len()) }
}

/// PostgreSQL's own C `pglz_compress` (reference for interop and benchmarks).
#[pg_extern(immutable, strict, parallel_safe)]
fn server_pglz_compress(data: &[u8], strategy: default!(&str, "'default'")) -> Option<Vec<u8>> {
    let strategy = Strategy::parse(strategy).or_raise();
    let mut out = Vec::new();
    c_pglz_compress_into(data, &mut out, &strategy).map(|_| out)
}

/// PostgreSQL's own C `pglz_decompress` (reference for interop and benchmarks).
#[pg_extern(stable, strict, parallel_safe)]
fn server_pglz_decompress(data: &[u8], raw_size: i32, check_complete: default!(bool, true)) -> Vec<u8> {
    let mut out = vec![0u8; checked_raw_size(raw_size)];
    let mut padded = Vec::with_capacity(data.len() + 4);
    padded.extend_from_slice(data);
    padded.extend_from_slice(&[0; 4]);
    match c_pglz_decompress_padded(&padded, &mut out, check_complete) {
        Some(n) => {
            out.truncate(n);
            out
        }
        None => crate::errors::raise(compresslab_core::CodecError::corrupt(
            "PostgreSQL's pglz_decompress rejected the data as corrupt",
        )),
    }
}

/// PostgreSQL's own CRC-32C (`pg_comp_crc32c`).
#[pg_extern(immutable, strict, parallel_safe)]
fn server_crc32c(data: &[u8]) -> i64 {
    c_crc32c(0, data) as i64
}
