//! Recompressing a column's stored values in place, batch by batch (`compresslab.recompress`):
//! the arithmetic, apart from the server. Which stored values a new write would change
//! ([`decide`]), how many blocks a batch reads ([`scan_end`]) and how many bytes it holds
//! ([`batch_bytes`]), the pause that keeps the WAL under `max_wal_rate` ([`pause_seconds`]),
//! the digest each value is checked with ([`Digest`]), the WAL and time said before a run
//! ([`wal`], [`seconds`]), and the arguments checked before any change ([`Triggers`],
//! [`lock_timeout_ms`], [`check_replay_lag`]).

pub mod run;
pub mod wal;

use crate::pg_compression::ToastCompression;
use crate::CodecError;

crate::named_choices! {
    /// What `recompress` does about the table's UPDATE triggers (its `triggers` argument).
    pub enum Triggers: "triggers choice", "choices" {
        /// Refuse a table that has any: an UPDATE fires them, though no value changes.
        Refuse = "refuse",
        /// Fire them for every row rewritten.
        Fire = "fire",
        /// Skip them: `session_replication_role = replica` in each batch (superuser).
        Skip = "skip",
    }
}

/// What a batch does with one stored value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// A new write would store it the same: left alone.
    Keep,
    /// Compressed with another method: a new write compresses it anew (or stores it raw).
    Rewrite,
    /// Stored uncompressed where TOAST would try to compress it: rewritten if the target
    /// method shrinks it enough for TOAST to keep the result (the caller tries).
    TryCompress,
}

/// How a value is stored now: its method (None: uncompressed), whether it is a pointer to the
/// TOAST table, `pg_column_size`, and the length of its row as stored (known for an
/// uncompressed value held in the row).
#[derive(Debug, Clone, Copy)]
pub struct StoredValue {
    pub method: Option<ToastCompression>,
    pub external: bool,
    pub size: usize,
    pub row_len: Option<usize>,
}

/// The smallest value TOAST picks for compression: `MAXALIGN(TOAST_POINTER_SIZE)`.
pub const SMALLEST_TOASTED: usize = 24;

/// Whether a new write of `value` under `target` would store it differently. TOAST compresses
/// a value only in a row longer than `TOAST_TUPLE_THRESHOLD` and the table's
/// `toast_tuple_target` (`row_threshold`, the larger of the two), and keeps a value already
/// compressed with the target method as it is.
pub fn decide(value: StoredValue, target: ToastCompression, row_threshold: usize) -> Decision {
    match value.method {
        Some(method) if method == target => Decision::Keep,
        Some(_) => Decision::Rewrite,
        None if value.external => Decision::TryCompress,
        None if value.size > SMALLEST_TOASTED && value.row_len.is_some_and(|len| len > row_threshold) => {
            Decision::TryCompress
        }
        None => Decision::Keep,
    }
}

/// At most this many bytes of values (as stored) in one batch, whatever `batch_rows` says.
pub const MAX_BATCH_BYTES: i64 = 64 << 20;
/// The fewest bytes a batch may be cut to: a batch rewrites at least one row anyway.
pub const MIN_BATCH_BYTES: i64 = 64 << 10;
/// Under `max_wal_rate`, a batch holds about this many seconds of WAL, so the pauses between
/// batches are short and the rate even.
pub const THROTTLED_BATCH_SECONDS: f64 = 0.25;

/// The bytes of values one batch may hold: [`MAX_BATCH_BYTES`], or under `max_wal_rate`
/// (bytes a second) about [`THROTTLED_BATCH_SECONDS`] of it, never under [`MIN_BATCH_BYTES`].
pub fn batch_bytes(max_wal_rate: Option<f64>) -> i64 {
    match max_wal_rate {
        Some(rate) => ((rate * THROTTLED_BATCH_SECONDS) as i64).clamp(MIN_BATCH_BYTES, MAX_BATCH_BYTES),
        None => MAX_BATCH_BYTES,
    }
}

/// The block a batch starting at `first` reads up to (exclusive): enough blocks for about
/// `batch_rows` rows at `rows_per_block` (the table's statistics; none: 1 a block), at least
/// one, at most 1,024 (8 MB) and never past `total`.
pub fn scan_end(first: u64, total: u64, rows_per_block: Option<f64>, batch_rows: u32) -> u64 {
    let per_block = rows_per_block.filter(|r| r.is_finite() && *r >= 1.0).unwrap_or(1.0);
    let blocks = ((batch_rows.max(1) as f64 / per_block).ceil() as u64).clamp(1, 1024);
    first.saturating_add(blocks).min(total).max(first.min(total))
}

/// `max_wal_rate` as bytes a second: a number and a unit of bytes (`B`, `kB`, `MB`, `GB`,
/// `TB`, powers of 1024 as in PostgreSQL's settings), then `/s`, e.g. `20 MB/s`.
pub fn parse_rate(text: &str) -> Result<f64, CodecError> {
    let bad = || {
        CodecError::invalid(format!(
            "max_wal_rate {text:?} is not a rate: give a number of bytes a second, e.g. '20 MB/s' (units B, kB, MB, GB, TB)"
        ))
    };
    let per_second = text.trim().strip_suffix("/s").ok_or_else(bad)?.trim_end();
    let split = per_second.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
    let (number, unit) = per_second.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let scale = match unit.trim() {
        "B" => 1.0,
        "kB" => 1024.0,
        "MB" => 1024.0 * 1024.0,
        "GB" => 1024.0 * 1024.0 * 1024.0,
        "TB" => 1024.0f64.powi(4),
        _ => return Err(bad()),
    };
    let rate = number * scale;
    if !(rate >= 1024.0 && rate.is_finite()) {
        return Err(CodecError::invalid(format!("max_wal_rate {text:?} is under 1 kB/s: give at least '1 kB/s'")));
    }
    Ok(rate)
}

/// The WAL `bytes` in `records` (as PostgreSQL's WAL usage counters count them: the records'
/// lengths) take as the LSN counts them, at most: each record padded to 8 bytes (7 more at
/// most) and each 8 KB page's 24-byte header. What `max_wal_rate` caps.
pub fn wal_lsn_bytes(bytes: f64, records: f64) -> f64 {
    const PAGE: f64 = 8192.0;
    const PAGE_HEADER: f64 = 24.0;
    (bytes.max(0.0) + 7.0 * records.max(0.0)) * PAGE / (PAGE - PAGE_HEADER)
}

/// How long to pause after writing `wal_bytes` in `elapsed` seconds so the average stays at
/// or under `rate` bytes a second: the time the WAL is due at that rate, minus the time spent.
pub fn pause_seconds(wal_bytes: f64, elapsed: f64, rate: f64) -> f64 {
    if rate <= 0.0 || !rate.is_finite() {
        return 0.0;
    }
    (wal_bytes / rate - elapsed).max(0.0)
}

/// The digest a value is checked with across its rewrite: its length, its CRC-32C and its
/// XXH3-64 (two unrelated functions, 96 bits), compared before and after in one transaction.
/// Both run at memory speed (CRC-32C folded with PCLMULQDQ); a software CRC-32 in their place
/// took 15% of a rewrite's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Digest {
    pub len: usize,
    pub crc32c: u32,
    pub xxh3: u64,
}

impl Digest {
    pub fn of(bytes: &[u8]) -> Digest {
        Digest {
            len: bytes.len(),
            crc32c: crate::checksum::crc32c(0, bytes),
            xxh3: twox_hash::XxHash3_64::oneshot(bytes),
        }
    }
}

/// The WAL a full-speed rewrite writes a second: `scripts/bench/recompress_speed.sh 20000` wrote
/// 9,416,752 bytes in 0.25 s (38 MB/s) on a shared 2-core machine (median of three), taken lower.
pub const WAL_BYTES_PER_SECOND: f64 = 35e6;

/// How long a rewrite writing `wal_bytes` takes at `max_wal_rate` (bytes a second), or at full
/// speed: never faster than full speed.
pub fn seconds(wal_bytes: f64, max_wal_rate: Option<f64>) -> f64 {
    wal_bytes.max(0.0) / max_wal_rate.map_or(WAL_BYTES_PER_SECOND, |r| r.min(WAL_BYTES_PER_SECOND))
}

/// `lock_timeout` (seconds) as the milliseconds the setting takes: from 0 (wait forever) to
/// PostgreSQL's largest, `INT_MAX` ms (about 24.8 days); checked before anything changes.
pub fn lock_timeout_ms(seconds: Option<f64>) -> Result<i64, CodecError> {
    let Some(seconds) = seconds else {
        return Err(CodecError::invalid("lock_timeout must not be NULL: give 0 to wait for the locks without a limit"));
    };
    let ms = (seconds * 1000.0).ceil();
    if !(0.0..=f64::from(i32::MAX)).contains(&ms) {
        return Err(CodecError::invalid(format!(
            "lock_timeout must be from 0 to {} ms (about 24.8 days), got {seconds} s",
            i32::MAX
        )));
    }
    Ok(ms as i64)
}

/// `max_replay_lag` (seconds), if given, is not negative.
pub fn check_replay_lag(seconds: Option<f64>) -> Result<(), CodecError> {
    match seconds {
        Some(s) if s.is_nan() || s < 0.0 => {
            Err(CodecError::invalid(format!("max_replay_lag must not be negative, got {s} s")))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
