//! The advisor's decision rules: from measured figures to "change this setting, to this value".
//!
//! The extension measures (the WAL what-if over `pg_wal`, the TOAST estimate over sampled
//! values, the spill simulation) and hands the figures here; the rules are plain functions so
//! that they are written, tested and documented once. They are deliberately simple:
//!
//! **`wal_compression`.** Savings are of WAL bytes against `off`.
//! 1. If no setting saves at least [`MIN_SAVING_PERCENT`], recommend `off`: compressing full-page
//!    images would cost CPU on every write for almost nothing.
//! 2. Otherwise `lz4` when it saves at least [`LZ4_SHARE`] of what `zstd` saves: most of the
//!    gain at a fraction of the CPU (and `pglz` is never better than both: slower than `lz4`,
//!    smaller output than neither in PostgreSQL's own measurements).
//! 3. Otherwise `zstd`: WAL volume, not CPU, is then the constraint worth paying for.
//! 4. A server built without lz4 or zstd (the what-if then leaves them out): the setting of
//!    those it has that saves the most, `pglz` when it has neither.
//!
//! **TOAST compression of a column.** Savings are of stored bytes against the raw values.
//! 1. If neither method saves [`MIN_SAVING_PERCENT`] of the raw bytes, no change: the values do
//!    not compress (random, already compressed, or too short to be compressed).
//! 2. `pglz` when it stores at least [`PGLZ_EDGE_PERCENT`] fewer bytes than `lz4`: space wins.
//! 3. Otherwise `lz4`: about the same size, decompressed several times faster on every read.
//!
//! A recommendation equal to what is in force is "keep": no `apply_sql` and no CPU figures.
//!
//! The arithmetic of each row (what was measured, scaled to a column or a day, priced in CPU)
//! is here too, one module per area, so that `advise()` only gathers the measurements.

use serde::Serialize;

use crate::pg_compression::{ToastCompression, WalCompression};
use crate::registry::Named;

pub mod budget;
pub mod spill;
pub mod toast;
pub mod wal;
pub mod words;

pub use words::{seconds_per_gb, Rate};

/// Below this saving (percent) a change is not worth making.
pub const MIN_SAVING_PERCENT: f64 = 5.0;
/// lz4 is chosen when it saves at least this share of zstd's saving.
pub const LZ4_SHARE: f64 = 0.8;
/// pglz is chosen for a column when it stores at least this many percent fewer bytes than lz4.
pub const PGLZ_EDGE_PERCENT: f64 = 10.0;

/// One row of `advise()`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AdviceRow {
    /// `wal_compression`, `toast` or `spill`.
    pub area: String,
    /// The setting, `schema.table.column`, or the spill files.
    pub target: String,
    pub current: String,
    pub recommended: String,
    /// Bytes now and under the recommendation. A column: its stored bytes in total (None when
    /// the table has no statistics to scale a sample by). WAL and spill: the bytes over
    /// `observed_period`, as measured (written now) and as they would be.
    pub bytes_now: Option<i64>,
    pub bytes_recommended: Option<i64>,
    /// A column: the 95% intervals of `bytes_now` and `bytes_recommended` from the block sample
    /// (equal to them when the table was read whole). WAL: `bytes_now`'s is the figure itself
    /// (counted), `bytes_recommended`'s from the spread of what an image saves along the WAL
    /// read. None where no interval is known.
    pub bytes_now_low: Option<i64>,
    pub bytes_now_high: Option<i64>,
    pub bytes_recommended_low: Option<i64>,
    pub bytes_recommended_high: Option<i64>,
    /// WAL and spill: the seconds `bytes_now` covers (an `interval` in SQL); None for a column.
    pub observed_period: Option<f64>,
    /// WAL and spill: the bytes scaled to a day (None for a column, or without a period).
    pub bytes_per_day_now: Option<i64>,
    pub bytes_per_day_recommended: Option<i64>,
    pub saving_percent: f64,
    /// CPU seconds per day at the observed rate (NULL when no rate is known).
    pub compress_cpu_seconds_per_day: Option<f64>,
    pub decompress_cpu_seconds_per_day: Option<f64>,
    /// CPU seconds per GB of data compressed / decompressed.
    pub compress_cpu_seconds_per_gb: Option<f64>,
    pub decompress_cpu_seconds_per_gb: Option<f64>,
    /// What was measured: sample sizes, WAL range, statistics period.
    pub basis: String,
    pub confidence: Confidence,
    /// The statements that apply the recommendation, one a line, each runnable alone; NULL to keep.
    pub apply_sql: Option<String>,
    pub note: String,
}

impl AdviceRow {
    /// A WAL or spill row's bytes: `now` as measured and `then` as predicted over `seconds` of
    /// observation, each also scaled to a day (none when the period is unknown), and the
    /// saving between them.
    pub fn over_period(self, now: f64, then: f64, seconds: f64) -> AdviceRow {
        let known = seconds > 0.0;
        let per_day = |bytes: f64| known.then(|| (bytes * 86400.0 / seconds).round() as i64);
        let (now_bytes, then_bytes) = (now.round() as i64, then.round() as i64);
        AdviceRow {
            bytes_now: Some(now_bytes),
            bytes_recommended: Some(then_bytes),
            observed_period: known.then_some(seconds),
            bytes_per_day_now: per_day(now),
            bytes_per_day_recommended: per_day(then),
            saving_percent: saving_percent(now_bytes, then_bytes),
            ..self
        }
    }
}

impl AdviceRow {
    /// The 95% intervals of `bytes_now` and `bytes_recommended` (None: not known).
    pub fn with_intervals(self, now: Option<(f64, f64)>, then: Option<(f64, f64)>) -> AdviceRow {
        let round = |b: f64| b.round() as i64;
        AdviceRow {
            bytes_now_low: now.map(|(lo, _)| round(lo)),
            bytes_now_high: now.map(|(_, hi)| round(hi)),
            bytes_recommended_low: then.map(|(lo, _)| round(lo)),
            bytes_recommended_high: then.map(|(_, hi)| round(hi)),
            ..self
        }
    }
}

/// One `wal_compression` setting as the WAL what-if measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct WalOption {
    pub setting: WalCompression,
    /// Percent of WAL bytes saved against `off`.
    pub saving_percent: f64,
}

/// A recommendation (a setting, or a method; `None`: no change) and the reason, in words for
/// `note`.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision<M> {
    pub recommended: M,
    pub reason: String,
}

fn saving_of(options: &[WalOption], setting: WalCompression) -> f64 {
    options.iter().find(|o| o.setting == setting).map_or(0.0, |o| o.saving_percent)
}

/// The `wal_compression` rule (module comment).
pub fn choose_wal(options: &[WalOption]) -> Decision<WalCompression> {
    use WalCompression::{Lz4, Off, Zstd};
    let (lz4, zstd) = (saving_of(options, Lz4), saving_of(options, Zstd));
    let best = options.iter().map(|o| o.saving_percent).fold(0.0, f64::max);
    if best < MIN_SAVING_PERCENT {
        return Decision {
            recommended: Off,
            reason: format!(
                "no setting saves {MIN_SAVING_PERCENT}% of WAL (best {best:.1}%): compressing would cost CPU for almost nothing"
            ),
        };
    }
    let offered = |setting: WalCompression| options.iter().any(|o| o.setting == setting);
    // A server built without lz4 or zstd offers only what it has (the what-if leaves the rest
    // out): the best of those, pglz when neither is there.
    if !offered(Lz4) || !offered(Zstd) {
        let choice = options.iter().filter(|o| o.setting != Off).fold(None::<&WalOption>, |best, o| match best {
            Some(b) if b.saving_percent >= o.saving_percent => Some(b),
            _ => Some(o),
        });
        let (setting, saving) = choice.map_or((Off, 0.0), |o| (o.setting, o.saving_percent));
        let offered_names: Vec<&str> = options.iter().filter(|o| o.setting != Off).map(|o| o.setting.name()).collect();
        return Decision {
            recommended: setting,
            reason: format!(
                "{setting} saves {saving:.1}% of WAL, the most of the settings this server was built with ({})",
                offered_names.join(", ")
            ),
        };
    }
    if lz4 >= LZ4_SHARE * zstd {
        Decision {
            recommended: Lz4,
            reason: format!(
                "lz4 saves {lz4:.1}% of WAL, at least {:.0}% of zstd's {zstd:.1}%, at a fraction of its CPU",
                LZ4_SHARE * 100.0
            ),
        }
    } else {
        Decision {
            recommended: Zstd,
            reason: format!(
                "zstd saves {zstd:.1}% of WAL against lz4's {lz4:.1}%: worth its CPU where WAL volume is the constraint"
            ),
        }
    }
}

/// The TOAST rule (module comment), from the stored bytes under each method and the raw bytes.
pub fn choose_toast(raw_bytes: i64, pglz_bytes: i64, lz4_bytes: i64) -> Decision<Option<ToastCompression>> {
    let saving = |stored: i64| if raw_bytes > 0 { 100.0 * (raw_bytes - stored) as f64 / raw_bytes as f64 } else { 0.0 };
    let (pglz, lz4) = (saving(pglz_bytes), saving(lz4_bytes));
    // Both methods store more than the raw bytes: the values keep their varlena headers in
    // line, uncompressed, which only a row under the threshold does (a value tried and refused
    // moves out of line, raw). A negative "saving" would read as if compressing cost bytes.
    if pglz < 0.0 && lz4 < 0.0 {
        return Decision {
            recommended: None,
            reason: format!(
                "not compressed: under the 2 kB threshold (TOAST compresses a value only in a row wider than {} \
                 bytes; these are stored as they are under either method): no change",
                crate::scenarios::toast::TOAST_TUPLE_THRESHOLD
            ),
        };
    }
    if pglz.max(lz4) < MIN_SAVING_PERCENT {
        return Decision {
            recommended: None,
            reason: format!(
                "the values do not compress (pglz saves {pglz:.1}%, lz4 {lz4:.1}% of their raw bytes): no change"
            ),
        };
    }
    // The rule and its words from one figure: how many percent fewer bytes pglz stores than lz4
    // (negative: more).
    let edge = if lz4_bytes > 0 { 100.0 * (lz4_bytes - pglz_bytes) as f64 / lz4_bytes as f64 } else { 0.0 };
    if edge >= PGLZ_EDGE_PERCENT {
        Decision {
            recommended: Some(ToastCompression::Pglz),
            reason: format!(
                "pglz stores {edge:.1}% fewer bytes than lz4 ({PGLZ_EDGE_PERCENT}% or more): space wins over decompression speed"
            ),
        }
    } else if edge >= 0.0 {
        Decision {
            recommended: Some(ToastCompression::Lz4),
            reason: format!(
                "pglz stores {:.1}% fewer bytes than lz4 (under {PGLZ_EDGE_PERCENT}%): about the same size, and lz4 decompresses several times faster",
                tenths_down(edge)
            ),
        }
    } else {
        Decision {
            recommended: Some(ToastCompression::Lz4),
            reason: format!(
                "pglz stores {:.1}% more bytes than lz4: lz4 is smaller and decompresses several times faster",
                -edge
            ),
        }
    }
}

/// `x` rounded down to tenths, so that a figure under a threshold never prints as the threshold.
fn tenths_down(x: f64) -> f64 {
    (x * 10.0).floor() / 10.0
}

crate::named_choices! {
    /// How sure a row's figures and recommendation are (lowest first).
    #[derive(PartialOrd, Ord, Default)]
    pub enum Confidence: "confidence", "confidences" {
        #[default]
        Low = "low",
        Medium = "medium",
        High = "high",
    }
}

impl Confidence {
    /// One step lower (`high` to `medium`, `medium` to `low`).
    pub fn step_down(self) -> Confidence {
        match self {
            Confidence::High => Confidence::Medium,
            Confidence::Medium | Confidence::Low => Confidence::Low,
        }
    }
}

/// Confidence from how much was measured: `high` with at least 1,000 items over a period of
/// an hour or more, `medium` with at least 100, else `low`.
pub fn confidence(items: u64, period_seconds: f64) -> Confidence {
    if items >= 1000 && period_seconds >= 3600.0 {
        Confidence::High
    } else if items >= 100 {
        Confidence::Medium
    } else {
        Confidence::Low
    }
}

/// Confidence in a figure extrapolated to a day: as [`confidence`], but `low` whatever was
/// measured when the statistics cover less than an hour.
pub fn per_day_confidence(items: u64, period_seconds: f64) -> Confidence {
    if period_seconds < 3600.0 {
        Confidence::Low
    } else {
        confidence(items, period_seconds)
    }
}

/// Rows inserted into the cluster's tables over the statistics' period, and the rows they hold
/// now (`tup_inserted` of every database summed; the rows held estimated from this database's
/// `n_live_tup` scaled by the cluster's size): cluster-wide, like the WAL.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Inserted {
    pub rows: f64,
    pub held: f64,
}

/// Whether a period of statistics is dominated by a bulk load: under a day long, and the rows
/// inserted over it are at least half the rows the tables hold now (the period includes
/// loading most of the data, so its WAL rate is a load's, not a steady day's). A workload
/// that has inserted its rows steadily for a day or more is not flagged.
pub fn bulk_load(inserted: Inserted, period_seconds: f64) -> bool {
    period_seconds < 86400.0 && inserted.held > 0.0 && inserted.rows >= 0.5 * inserted.held
}

/// The words the basis adds, and confidence `low`, for a period dominated by a bulk load.
pub fn bulk_load_words(inserted: Inserted, period_seconds: f64) -> Option<String> {
    bulk_load(inserted, period_seconds).then(|| {
        format!(
            "; the period is dominated by a bulk load ({:.0} rows inserted over it in every database, {:.0} held now \
             in the cluster's tables, estimated from this database's rows per byte): a steady day writes less",
            inserted.rows, inserted.held
        )
    })
}

/// Percent saved going from `now` to `then`.
pub fn saving_percent(now: i64, then: i64) -> f64 {
    if now > 0 {
        100.0 * (now - then) as f64 / now as f64
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests;
