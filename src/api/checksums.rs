//! SQL functions for the checksums, IMMUTABLE STRICT PARALLEL SAFE (usable in indexes and
//! generated columns). Each continues over pieces: pass the previous piece's result as
//! `previous`. Each also works through its value in pieces of [`PIECE`] bytes, checking for
//! cancel between them, so a 1 GB value stops within milliseconds of a cancel.

use compresslab_core::{checksum, CodecError};
use pgrx::prelude::*;

use crate::errors::raise;
use crate::server::check_interrupts;
use crate::server::codecs::c_crc32c;

// Bytes checksummed between two checks for cancel (the cancel piece of every long call): a
// few ms at the slowest CRC here (the legacy one, byte at a time).
use compresslab_core::ticking::PIECE;

/// `crc` (continuing from `previous`) over `data` a [`PIECE`] at a time, with a check for
/// cancel after each piece.
fn in_pieces(previous: u32, data: &[u8], crc: fn(u32, &[u8]) -> u32) -> i64 {
    let mut value = previous;
    for piece in data.chunks(PIECE) {
        value = crc(value, piece);
        check_interrupts();
    }
    value as i64
}

fn continue_from(previous: i64) -> u32 {
    u32::try_from(previous).unwrap_or_else(|_| {
        raise(CodecError::invalid(format!("previous must be a CRC between 0 and 4294967295, got {previous}")))
    })
}

/// CRC-32C (Castagnoli), as PostgreSQL's WAL and PostgreSQL 18's `crc32c()` compute it.
#[pg_extern(immutable, strict, parallel_safe)]
fn crc32c(data: &[u8]) -> i64 {
    in_pieces(0, data, checksum::crc32c)
}

/// CRC-32C of `data` continuing from `previous`, the CRC of the bytes before it.
#[pg_extern(immutable, strict, parallel_safe, name = "crc32c")]
fn crc32c_continued(data: &[u8], previous: i64) -> i64 {
    in_pieces(continue_from(previous), data, checksum::crc32c)
}

/// The standard (zlib) CRC-32, PostgreSQL's "traditional" CRC-32 and PostgreSQL 18's `crc32()`.
#[pg_extern(immutable, strict, parallel_safe)]
fn crc32(data: &[u8]) -> i64 {
    in_pieces(0, data, checksum::crc32)
}

/// CRC-32 of `data` continuing from `previous`.
#[pg_extern(immutable, strict, parallel_safe, name = "crc32")]
fn crc32_continued(data: &[u8], previous: i64) -> i64 {
    in_pieces(continue_from(previous), data, checksum::crc32)
}

/// PostgreSQL's legacy CRC-32 (pre-9.5 WAL, tsquery operands): not the standard CRC-32.
#[pg_extern(immutable, strict, parallel_safe)]
fn crc32_legacy(data: &[u8]) -> i64 {
    in_pieces(0, data, checksum::crc32_legacy)
}

/// The legacy CRC-32 of `data` continuing from `previous`.
#[pg_extern(immutable, strict, parallel_safe, name = "crc32_legacy")]
fn crc32_legacy_continued(data: &[u8], previous: i64) -> i64 {
    in_pieces(continue_from(previous), data, checksum::crc32_legacy)
}

/// PostgreSQL's own CRC-32C (`pg_comp_crc32c`), for comparison.
#[pg_extern(immutable, strict, parallel_safe)]
fn server_crc32c(data: &[u8]) -> i64 {
    in_pieces(0, data, c_crc32c)
}
