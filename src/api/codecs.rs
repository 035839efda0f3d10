//! SQL functions for the codecs: the self-describing `compress`/`decompress` pair, the raw
//! formats (pglz as PostgreSQL stores it, LZ4 block and frame, zstd frame), and PostgreSQL's
//! own C pglz for comparison.

use compresslab_core::error::{try_with_capacity, try_zeroed};
use compresslab_core::pglz::Strategy;
use compresslab_core::{envelope, lz4, pglz, zstd_codec, CodecError, Method};
use pgrx::prelude::*;

use crate::errors::{checked_raw_size, raise, OrRaise};
use crate::gucs;
use crate::server::c_codecs::{c_pglz_compress, c_pglz_decompress_padded};
use crate::server::check_interrupts;

/// Compress `data` into compresslab's self-describing format. `method` defaults to the
/// `compresslab.method` setting, `level` (zstd only) to `compresslab.zstd_level`.
#[pg_extern(stable, parallel_safe)]
fn compress(
    data: Option<&[u8]>,
    method: default!(Option<&str>, "NULL"),
    level: default!(Option<i32>, "NULL"),
) -> Option<Vec<u8>> {
    let data = data?;
    let method = method.map(|m| Method::parse(m).or_raise()).unwrap_or_else(gucs::method);
    let level = match (method, level) {
        (Method::Zstd, None) => Some(gucs::zstd_level()),
        (_, level) => level,
    };
    Some(fits(envelope::compress_with_tick(data, method, level, &mut check_interrupts).or_raise()))
}

/// A result a bytea can hold: longer is `program_limit_exceeded`, never a failed conversion.
fn fits(result: Vec<u8>) -> Vec<u8> {
    if result.len() > gucs::MAX_RESULT as usize {
        raise(CodecError::too_large(format!(
            "the result would be {} bytes, more than a bytea can hold ({} bytes)",
            result.len(),
            gucs::MAX_RESULT
        )));
    }
    result
}

/// A zero-filled output buffer of `len` bytes, allocated fallibly.
fn output(len: usize) -> Vec<u8> {
    try_zeroed(len, "the result").or_raise()
}

/// Decompress a value written by `compress()`; the method is read from its header.
#[pg_extern(stable, strict, parallel_safe)]
fn decompress(data: &[u8]) -> Vec<u8> {
    envelope::decompress_with_tick(data, gucs::max_decompressed_size(), &mut check_interrupts).or_raise()
}

/// What the header of a `compress()` value says.
#[pg_extern(immutable, strict, parallel_safe)]
fn compression_info(
    data: &[u8],
) -> TableIterator<'static, (name!(method, String), name!(raw_size, i64), name!(compressed_size, i64))> {
    let info = envelope::info(data).or_raise();
    TableIterator::once((
        compresslab_core::registry::Named::name(info.method).to_string(),
        info.raw_size as i64,
        info.compressed_size as i64,
    ))
}

/// PostgreSQL's raw pglz format (no header), as TOAST and WAL store it. NULL when the strategy
/// refuses to compress, as PostgreSQL's `pglz_compress` returns -1. `strategy` is `default`,
/// `always`, or `key=value` pairs of the six strategy fields.
#[pg_extern(immutable, strict, parallel_safe)]
fn pglz_compress(data: &[u8], strategy: default!(&str, "'default'")) -> Option<Vec<u8>> {
    let strategy = pglz::Strategy::parse(strategy).or_raise();
    let mut out = output(pglz::max_output(data.len()));
    let n = pglz::compress_to_ticking(data, &mut out, &strategy, false, &mut check_interrupts)?;
    out.truncate(n);
    Some(out)
}

/// Decompress raw pglz data into `raw_size` bytes. With `check_complete` (the default) the data
/// must produce exactly `raw_size` bytes and be consumed whole; without it, a prefix is fine
/// (as for TOAST slices).
#[pg_extern(stable, strict, parallel_safe)]
fn pglz_decompress(data: &[u8], raw_size: i32, check_complete: default!(bool, true)) -> Vec<u8> {
    pglz::decompress(data, checked_raw_size(raw_size), check_complete).or_raise()
}

/// One LZ4 block; with `size_prefix` the raw size is prepended as 4 bytes little-endian.
#[pg_extern(immutable, strict, parallel_safe)]
fn lz4_compress(data: &[u8], size_prefix: default!(bool, false)) -> Vec<u8> {
    let mut out = output(4 + lz4::block::compress_bound(data.len()));
    let n = if size_prefix {
        lz4::block::compress_prefixed_to(data, &mut out)
    } else {
        lz4::block::compress_to(data, &mut out)
    }
    .or_raise();
    out.truncate(n);
    fits(out)
}

/// Decompress one LZ4 block into exactly `raw_size` bytes; with `raw_size` NULL the block must
/// start with a 4-byte size prefix.
#[pg_extern(stable, parallel_safe)]
fn lz4_decompress(data: Option<&[u8]>, raw_size: default!(Option<i32>, "NULL")) -> Option<Vec<u8>> {
    let data = data?;
    Some(match raw_size {
        Some(size) => lz4::block::decompress(data, checked_raw_size(size)).or_raise(),
        None => lz4::block::decompress_size_prepended(data, gucs::max_decompressed_size()).or_raise(),
    })
}

/// One LZ4 frame, as the `lz4` command-line tool writes (content size and checksum included).
#[pg_extern(immutable, strict, parallel_safe)]
fn lz4_frame_compress(data: &[u8]) -> Vec<u8> {
    let mut out = try_with_capacity(lz4::frame::compress_bound(data.len()), "the result").or_raise();
    lz4::frame::compress_to_writer(data, &mut out).or_raise();
    fits(out)
}

/// Decompress LZ4 frames (from `lz4_frame_compress` or the `lz4` tool).
#[pg_extern(stable, strict, parallel_safe)]
fn lz4_frame_decompress(data: &[u8]) -> Vec<u8> {
    lz4::frame::decompress(data, gucs::max_decompressed_size()).or_raise()
}

/// One zstd frame at `level` (default `compresslab.zstd_level`), optionally with a dictionary.
#[pg_extern(stable, parallel_safe)]
fn zstd_compress(
    data: Option<&[u8]>,
    level: default!(Option<i32>, "NULL"),
    dictionary: default!(Option<&[u8]>, "NULL"),
) -> Option<Vec<u8>> {
    let level = level.unwrap_or_else(gucs::zstd_level);
    Some(fits(zstd_codec::compress_with_tick(data?, level, dictionary, &mut check_interrupts).or_raise()))
}

/// Decompress zstd frames (from `zstd_compress` or the `zstd` tool), with the dictionary they
/// were made with, if any.
#[pg_extern(stable, parallel_safe)]
fn zstd_decompress(data: Option<&[u8]>, dictionary: default!(Option<&[u8]>, "NULL")) -> Option<Vec<u8>> {
    Some(
        zstd_codec::decompress_with_tick(data?, dictionary, gucs::max_decompressed_size(), &mut check_interrupts)
            .or_raise(),
    )
}

/// PostgreSQL's own C `pglz_compress` (reference for interop and benchmarks).
#[pg_extern(immutable, strict, parallel_safe)]
fn server_pglz_compress(data: &[u8], strategy: default!(&str, "'default'")) -> Option<Vec<u8>> {
    let strategy = Strategy::parse(strategy).or_raise();
    let mut out = output(pglz::max_output(data.len()));
    let n = c_pglz_compress(data, &mut out, &strategy)?;
    out.truncate(n);
    Some(out)
}

/// PostgreSQL's own C `pglz_decompress` (reference for interop and benchmarks).
#[pg_extern(stable, strict, parallel_safe)]
fn server_pglz_decompress(data: &[u8], raw_size: i32, check_complete: default!(bool, true)) -> Vec<u8> {
    let mut out = output(checked_raw_size(raw_size));
    // The C decoder checks for a truncated tag only after reading it: give it 4 spare bytes.
    let mut padded = try_with_capacity(data.len() + 4, "a copy of the input").or_raise();
    padded.extend_from_slice(data);
    padded.extend_from_slice(&[0; 4]);
    match c_pglz_decompress_padded(&padded, &mut out, check_complete) {
        Some(n) => {
            out.truncate(n);
            out
        }
        None => raise(CodecError::corrupt("PostgreSQL's pglz_decompress rejected the data as corrupt")),
    }
}
