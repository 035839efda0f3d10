//! SQL functions for the checksums. Each continues over pieces: pass the previous piece's
//! result as `previous`.

use compresslab_core::{checksum, CodecError};
use pgrx::prelude::*;

use crate::errors::raise;
use crate::server::c_codecs::c_crc32c;

fn continue_from(previous: Option<i64>) -> u32 {
    match previous {
        None => 0,
        Some(p) => u32::try_from(p).unwrap_or_else(|_| {
            raise(CodecError::invalid(format!("previous must be a CRC between 0 and 4294967295, got {p}")))
        }),
    }
}

/// CRC-32C (Castagnoli), as PostgreSQL's WAL and PostgreSQL 18's `crc32c()` compute it.
#[pg_extern(immutable, parallel_safe)]
fn crc32c(data: Option<&[u8]>, previous: default!(Option<i64>, "NULL")) -> Option<i64> {
    Some(checksum::crc32c(continue_from(previous), data?) as i64)
}

/// The standard (zlib) CRC-32, PostgreSQL's "traditional" CRC-32 and PostgreSQL 18's `crc32()`.
#[pg_extern(immutable, parallel_safe)]
fn crc32(data: Option<&[u8]>, previous: default!(Option<i64>, "NULL")) -> Option<i64> {
    Some(checksum::crc32(continue_from(previous), data?) as i64)
}

/// PostgreSQL's legacy CRC-32 (pre-9.5 WAL, tsquery operands): not the standard CRC-32.
#[pg_extern(immutable, parallel_safe)]
fn crc32_legacy(data: Option<&[u8]>, previous: default!(Option<i64>, "NULL")) -> Option<i64> {
    Some(checksum::crc32_legacy(continue_from(previous), data?) as i64)
}

/// PostgreSQL's own CRC-32C (`pg_comp_crc32c`), for comparison.
#[pg_extern(immutable, strict, parallel_safe)]
fn server_crc32c(data: &[u8]) -> i64 {
    c_crc32c(0, data) as i64
}
