//! How `advise()` spends its budget, in one place: the `wal_compression` row until
//! [`WAL_SHARE`] of it has passed, the TOAST columns until [`TOAST_UNTIL`] (each column an even
//! share of what is left, at least [`MIN_COLUMN_SECONDS`]), the spill row in the rest; a
//! column's sample holds at most what the time left can measure ([`sample_byte_cap`]) and its
//! speeds are timed on at most [`TIMING_BYTES`]. Time the columns leave over goes to the loose
//! ones ([`LOOSE_MARGIN`]), sampled again ([`resample_share`]).

use super::AdviceRow;
use crate::error::{CodecError, Result};

/// The WAL row reads and replays until this share of the budget has passed.
pub const WAL_SHARE: f64 = 0.4;
/// The TOAST columns are sampled until this share has passed; the spill row has the rest.
pub const TOAST_UNTIL: f64 = 0.9;
/// A column gets at least this many seconds (or all that is left), whatever its turn.
pub const MIN_COLUMN_SECONDS: f64 = 0.1;
/// A column's speeds are timed on at most this many bytes of its sampled values (the first
/// read: a random part of the sample), held beside the block being read.
pub const TIMING_BYTES: usize = 4 << 20;
/// What a column's measurement gets through a second: each sampled byte is detoasted, toasted
/// anew under pglz and lz4, and timed ([`crate::scenarios::toast::estimate`]) three times
/// each way; pglz compressing text at about 100 MB/s makes it about 15 MB/s, taken lower.
pub const SAMPLE_BYTES_PER_SECOND: f64 = 10e6;
/// At most this many bytes of a column's values are held at once, whatever the budget.
pub const SAMPLE_MEMORY_BYTES: usize = 64 << 20;
/// The longest budget `advise()` takes.
pub const MAX_SECONDS: f64 = 86400.0;

/// A budget of seconds, checked: more than 0, at most a day.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    seconds: f64,
}

impl Budget {
    pub fn new(seconds: f64) -> Result<Budget> {
        if seconds.is_nan() || seconds <= 0.0 {
            return Err(CodecError::invalid(format!("budget must be more than 0, got {seconds} s")));
        }
        if seconds > MAX_SECONDS {
            return Err(CodecError::invalid(format!("budget must be at most 1 day, got {seconds} s")));
        }
        Ok(Budget { seconds })
    }

    pub fn seconds(self) -> f64 {
        self.seconds
    }

    /// Seconds from the start at which the WAL row stops reading.
    pub fn wal_until(self) -> f64 {
        self.seconds * WAL_SHARE
    }

    /// Seconds from the start at which the TOAST columns stop.
    pub fn toast_until(self) -> f64 {
        self.seconds * TOAST_UNTIL
    }

    /// Seconds from the start at which the spill row stops reading rows.
    pub fn spill_until(self) -> f64 {
        self.seconds
    }
}

/// The seconds the next column gets with `left` seconds for `remaining` columns (itself
/// included): an even share, at least [`MIN_COLUMN_SECONDS`], never more than is left.
pub fn column_seconds(left: f64, remaining: usize) -> f64 {
    let left = left.max(0.0);
    (left / remaining.max(1) as f64).max(MIN_COLUMN_SECONDS.min(left))
}

/// The bytes of values a column's sample may hold with `seconds_left` of the budget: what the
/// measurement gets through in that time, at most [`SAMPLE_MEMORY_BYTES`]. A value that does
/// not fit in what is left ends the sample; a column whose first value does not fit is skipped.
pub fn sample_byte_cap(seconds_left: f64) -> usize {
    ((seconds_left.max(0.0) * SAMPLE_BYTES_PER_SECOND) as usize).min(SAMPLE_MEMORY_BYTES)
}

/// A column's row is loose while a 95% interval of its bytes (now, or under the method it
/// recommends) is wider than ± this share of the figure: it is sampled again while the TOAST
/// part of the budget lasts, and named in the NOTICE if it stays loose.
pub const LOOSE_MARGIN: f64 = 0.05;

/// The widest relative half-width of a row's intervals of bytes, now and recommended; 0 where
/// it has none (every value read, or no interval).
pub fn row_margin(row: &AdviceRow) -> f64 {
    let margin = |value: Option<i64>, low: Option<i64>, high: Option<i64>| match (value, low, high) {
        (Some(value), Some(low), Some(high)) if value > 0 => (high - low) as f64 / 2.0 / value as f64,
        _ => 0.0,
    };
    margin(row.bytes_now, row.bytes_now_low, row.bytes_now_high).max(margin(
        row.bytes_recommended,
        row.bytes_recommended_low,
        row.bytes_recommended_high,
    ))
}

/// The seconds a loose column is sampled again with, `left` seconds shared among `remaining`
/// loose columns (itself included), when its first sample took `used`: None when its share is
/// under twice that, since a new sample starts over from the same blocks and would end no
/// tighter.
pub fn resample_share(left: f64, remaining: usize, used: f64) -> Option<f64> {
    let share = left.max(0.0) / remaining.max(1) as f64;
    (share >= 2.0 * used.max(MIN_COLUMN_SECONDS)).then_some(share)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_as_loose_as_its_widest_interval() {
        let row = AdviceRow {
            bytes_now: Some(1000),
            bytes_now_low: Some(980),
            bytes_now_high: Some(1020),
            bytes_recommended: Some(500),
            bytes_recommended_low: Some(400),
            bytes_recommended_high: Some(600),
            ..AdviceRow::default()
        };
        assert!((row_margin(&row) - 0.2).abs() < 1e-12);
        assert!(row_margin(&row) > LOOSE_MARGIN);
        let whole = AdviceRow { bytes_recommended_low: Some(500), bytes_recommended_high: Some(500), ..row.clone() };
        assert!((row_margin(&whole) - 0.02).abs() < 1e-12);
        assert_eq!(row_margin(&AdviceRow::default()), 0.0);
    }

    #[test]
    fn a_loose_column_is_sampled_again_only_with_twice_its_time() {
        // 20 s left for 4 loose columns: 5 s each, worth it for one that took 2 s, not 3 s
        assert_eq!(resample_share(20.0, 4, 2.0), Some(5.0));
        assert_eq!(resample_share(20.0, 4, 3.0), None);
        // nothing left, or a column that took no time (at least MIN_COLUMN_SECONDS counted)
        assert_eq!(resample_share(0.0, 1, 0.0), None);
        assert_eq!(resample_share(0.15, 1, 0.0), None);
        assert_eq!(resample_share(0.2, 1, 0.0), Some(0.2));
    }

    #[test]
    fn a_budget_is_more_than_nothing_and_at_most_a_day() {
        assert!(Budget::new(0.0).is_err());
        assert!(Budget::new(-1.0).is_err());
        assert!(Budget::new(f64::NAN).is_err());
        assert!(Budget::new(86400.5).is_err());
        let budget = Budget::new(30.0).unwrap();
        assert_eq!((budget.wal_until(), budget.toast_until(), budget.spill_until()), (12.0, 27.0, 30.0));
    }

    #[test]
    fn each_column_gets_an_even_share_of_what_is_left_and_a_floor() {
        assert_eq!(column_seconds(10.0, 4), 2.5);
        assert_eq!(column_seconds(1.0, 100), MIN_COLUMN_SECONDS);
        assert_eq!(column_seconds(0.05, 100), 0.05, "never more than is left");
        assert_eq!(column_seconds(-1.0, 3), 0.0);
        assert_eq!(column_seconds(3.0, 0), 3.0);
    }

    #[test]
    fn the_byte_cap_follows_the_time_left_up_to_the_memory_cap() {
        assert_eq!(sample_byte_cap(0.5), 5_000_000);
        assert_eq!(sample_byte_cap(-1.0), 0);
        assert_eq!(sample_byte_cap(60.0), SAMPLE_MEMORY_BYTES);
        // a 2 s budget leaves about 1 s for the columns: a 60 MB value does not fit
        assert!(sample_byte_cap(1.0) < 60 << 20);
    }
}
