//! The cluster's WAL by hour for the last week, as written and under each setting: a ring of
//! [`HOURS`] hours and the current one.

use super::{Counters, SETTINGS};

/// The hours kept before the current one: seven days.
pub const HOURS: usize = 7 * 24;

/// One hour's WAL: when it starts (Unix seconds, on the hour), the bytes as written and under
/// each setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hour {
    pub start: i64,
    pub wal_bytes: u64,
    pub wal_bytes_under: [u64; SETTINGS],
}

/// The hours with WAL, at most [`HOURS`] + 1, each in the slot of its hour.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    slots: Vec<Hour>,
}

impl Default for History {
    fn default() -> History {
        History { slots: vec![Hour::default(); HOURS + 1] }
    }
}

fn hour_of(unix_seconds: i64) -> i64 {
    unix_seconds.div_euclid(3600) * 3600
}

impl History {
    /// Adds `counters` (WAL read at `unix_seconds`) to its hour, which takes the slot of the
    /// hour a week and an hour before it.
    pub fn add(&mut self, unix_seconds: i64, counters: &Counters) {
        let start = hour_of(unix_seconds);
        let slot = &mut self.slots[start.div_euclid(3600).rem_euclid(HOURS as i64 + 1) as usize];
        if slot.start != start {
            *slot = Hour { start, ..Hour::default() };
        }
        slot.wal_bytes += counters.wal_bytes;
        for (under, add) in slot.wal_bytes_under.iter_mut().zip(counters.wal_bytes_under) {
            *under += add;
        }
    }

    /// The hours of the week before `unix_seconds` and its own, oldest first, each that has WAL.
    pub fn rows(&self, unix_seconds: i64) -> Vec<Hour> {
        let now = hour_of(unix_seconds);
        let oldest = now - HOURS as i64 * 3600;
        let mut rows: Vec<Hour> =
            self.slots.iter().copied().filter(|h| h.wal_bytes > 0 && h.start >= oldest && h.start <= now).collect();
        rows.sort_by_key(|h| h.start);
        rows
    }

    /// Every slot, for the file.
    pub fn slots(&self) -> &[Hour] {
        &self.slots
    }

    /// From the slots a file kept (each put back in its hour's slot).
    pub fn from_hours(hours: &[Hour]) -> History {
        let mut history = History::default();
        for hour in hours.iter().filter(|h| h.wal_bytes > 0) {
            let counters =
                Counters { wal_bytes: hour.wal_bytes, wal_bytes_under: hour.wal_bytes_under, ..Counters::default() };
            history.add(hour.start, &counters);
        }
        history
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wal(bytes: u64) -> Counters {
        Counters { wal_bytes: bytes, wal_bytes_under: [bytes, bytes / 2, bytes / 3, bytes / 4], ..Counters::default() }
    }

    #[test]
    fn a_week_of_hours_and_the_current_one() {
        let t0 = 1_796_000_400; // on the hour
        let mut history = History::default();
        history.add(t0, &wal(100));
        history.add(t0 + 1800, &wal(100));
        history.add(t0 + 3600, &wal(50));
        let rows = history.rows(t0 + 3700);
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].start, rows[0].wal_bytes, rows[0].wal_bytes_under[1]), (t0, 200, 100));
        assert_eq!((rows[1].start, rows[1].wal_bytes), (t0 + 3600, 50));
        // a week and an hour later, the first hour's slot holds the new hour
        let later = t0 + (HOURS as i64 + 1) * 3600;
        history.add(later, &wal(7));
        let rows = history.rows(later);
        assert_eq!(rows.first().map(|h| h.start), Some(t0 + 3600), "the first hour fell out");
        assert_eq!(rows.last().map(|h| (h.start, h.wal_bytes)), Some((later, 7)));
        assert_eq!(History::from_hours(history.slots()), history);
    }
}
