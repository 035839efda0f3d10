//! The continuous WAL view's figures, apart from the server: what a background worker following
//! the WAL keeps per row — a relation's fork, a resource manager's records without a block, the
//! WAL's own overhead, or a database's evicted relations — under every `wal_compression`
//! setting ([`Counters`]), in a table of bounded size ([`Table`]), by hour for a week
//! ([`history`]), the file it is kept in across restarts ([`file`]), and its cost bound
//! ([`throttle`]).

pub mod file;
pub mod history;
pub mod throttle;

use std::collections::HashMap;

use crate::pg_compression::WalCompression;
use crate::registry::Named;
use crate::scenarios::wal::RelationKey;

/// The `wal_compression` settings a row counts, in [`WalCompression::ALL`]'s order.
pub const SETTINGS: usize = 4;

/// What a row counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Row {
    /// A relation file's fork: the records with a block reference to it.
    Relation(RelationKey),
    /// A resource manager's records without a block reference.
    ResourceManager(u8),
    /// The WAL's page headers and a segment switch's padding.
    Overhead,
    /// The relations of a database evicted from a full table, summed.
    Others(u32),
}

/// A row's figures: records, WAL bytes and full-page images as written, and under each
/// setting the bytes the images and the WAL would have taken; how many images were compressed
/// to size them (the rest scaled from them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub records: u64,
    pub wal_bytes: u64,
    pub images: u64,
    pub image_bytes: u64,
    pub image_bytes_under: [u64; SETTINGS],
    pub wal_bytes_under: [u64; SETTINGS],
    pub sampled_images: u64,
}

impl std::ops::AddAssign<&Counters> for Counters {
    fn add_assign(&mut self, b: &Counters) {
        self.records += b.records;
        self.wal_bytes += b.wal_bytes;
        self.images += b.images;
        self.image_bytes += b.image_bytes;
        self.sampled_images += b.sampled_images;
        for i in 0..SETTINGS {
            self.image_bytes_under[i] += b.image_bytes_under[i];
            self.wal_bytes_under[i] += b.wal_bytes_under[i];
        }
    }
}

impl Counters {
    /// The bytes under `setting`: its images' and the WAL's.
    pub fn under(&self, setting: WalCompression) -> (u64, u64) {
        let i = WalCompression::ALL.iter().position(|&s| s == setting).unwrap_or(0);
        (self.image_bytes_under[i], self.wal_bytes_under[i])
    }
}

/// The rows, at most `capacity` of them for relations: a relation that finds the table full
/// takes the place of the relation with the fewest WAL bytes if it has more, that one's figures
/// going to its database's [`Row::Others`], which counts the relations evicted into it.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    capacity: usize,
    rows: HashMap<Row, Counters>,
    relations: usize,
    evicted: HashMap<u32, u64>,
}

impl Table {
    pub fn new(capacity: usize) -> Table {
        Table { capacity: capacity.max(1), rows: HashMap::new(), relations: 0, evicted: HashMap::new() }
    }

    /// A table of `capacity` holding `rows` and the evictions counted per database (as a file
    /// kept them): relations past the capacity go to their database's others.
    pub fn from_parts(capacity: usize, rows: Vec<(Row, Counters)>, evicted: Vec<(u32, u64)>) -> Table {
        let mut table = Table::new(capacity);
        for (row, counters) in rows {
            table.add(row, &counters);
        }
        for (database, count) in evicted {
            *table.evicted.entry(database).or_default() += count;
        }
        table
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The evictions counted, per database.
    pub fn evictions(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.evicted.iter().map(|(&d, &n)| (d, n))
    }

    /// Adds `counters` to `row`.
    pub fn add(&mut self, row: Row, counters: &Counters) {
        if let Some(kept) = self.rows.get_mut(&row) {
            *kept += counters;
            return;
        }
        let Row::Relation(key) = row else {
            self.rows.insert(row, *counters);
            return;
        };
        if self.relations < self.capacity {
            self.relations += 1;
            self.rows.insert(row, *counters);
            return;
        }
        let smallest = (self.rows.iter())
            .filter(|(r, _)| matches!(r, Row::Relation(_)))
            .min_by_key(|(_, c)| c.wal_bytes)
            .map(|(r, c)| (*r, c.wal_bytes));
        match smallest {
            Some((Row::Relation(out), bytes)) if bytes < counters.wal_bytes => {
                let figures = self.rows.remove(&Row::Relation(out)).unwrap_or_default();
                self.evict(out.database, &figures);
                self.rows.insert(row, *counters);
            }
            _ => self.evict(key.database, counters),
        }
    }

    fn evict(&mut self, database: u32, counters: &Counters) {
        *self.rows.entry(Row::Others(database)).or_default() += counters;
        *self.evicted.entry(database).or_default() += 1;
    }

    /// The relations of `database` its [`Row::Others`] sums (each counted once per eviction).
    pub fn evicted(&self, database: u32) -> u64 {
        self.evicted.get(&database).copied().unwrap_or(0)
    }

    pub fn rows(&self) -> impl Iterator<Item = (&Row, &Counters)> {
        self.rows.iter()
    }

    /// The sum over every row.
    pub fn total(&self) -> Counters {
        let mut total = Counters::default();
        for counters in self.rows.values() {
            total += counters;
        }
        total
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.relations = 0;
        self.evicted.clear();
    }
}

#[cfg(test)]
mod tests;
