//! The WAL a rewrite will write, counted before it runs. Two parts:
//!
//! - **Records**, per rewritten row: the row locked, its new version, an entry in each of the
//!   table's indexes; for a value stored in the TOAST table, each new chunk and its entry in the
//!   TOAST index, and each old chunk's deletion. Lengths as `pg_walinspect` reports them on
//!   15 to 19, each record padded to 8 bytes, and the 24-byte header of each 8 KB WAL page.
//! - **Full-page images** of the pages the rewrite changes first after the last checkpoint
//!   began (a page whose LSN is not past the redo pointer): the heap pages holding the rows and
//!   the TOAST pages holding their old chunks, each sized as the server stores it under the
//!   `wal_compression` in force (the server measures the pages; this adds them up). The pages the
//!   new versions go to are new or recently written: no image.
//!
//! A checkpoint that begins during the rewrite, or between the count and the rewrite, gives each
//! page reached one image more at most: the interval's high end adds an image of every page
//! reached (and of the index pages the rows' new entries may go to). Its low end takes the
//! records [`RECORD_MARGIN`] shorter and only the images due now.

use crate::sampling::Estimate;
use crate::scenarios::toast::{SampledRow, Stored, TOAST_POINTER_SIZE};

/// The most bytes of a value one TOAST chunk holds (8 KB pages).
pub const TOAST_MAX_CHUNK_SIZE: usize = 1996;

/// `heap_lock_tuple`'s record, locking a row before its update.
const LOCK_RECORD: usize = 54;
/// A heap update's record beyond the new row version's length.
const UPDATE_BEYOND_ROW: usize = 47;
/// A btree leaf insert of a small key (an int or a TOAST chunk's key).
const INDEX_INSERT_RECORD: usize = 64;
/// A TOAST chunk's heap insert beyond the chunk's data.
const CHUNK_INSERT_BEYOND_DATA: usize = 70;
/// A TOAST chunk's heap delete.
const CHUNK_DELETE_RECORD: usize = 55;
/// How far the records may be off (keys longer than an int, updates that carry the whole old
/// key, alignment): the interval's share either side.
pub const RECORD_MARGIN: f64 = 0.05;

const WAL_PAGE: f64 = 8192.0;
const WAL_PAGE_HEADER: f64 = 24.0;

/// The TOAST chunks a value of `bytes` stored out of line takes.
pub fn chunks(bytes: usize) -> usize {
    bytes.div_ceil(TOAST_MAX_CHUNK_SIZE)
}

/// One row a rewrite changes: its new version's length in the heap, its new value's bytes in
/// the TOAST table (None: held in the row), the old value's chunks, and the table's indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRewrite {
    pub new_row_len: usize,
    pub new_external: Option<usize>,
    pub old_chunks: usize,
    pub indexes: usize,
}

fn aligned(record: usize) -> usize {
    record.next_multiple_of(8)
}

/// The WAL records of one row's rewrite, each padded to 8 bytes (WAL page headers apart).
pub fn row_records(row: &RowRewrite) -> usize {
    let mut bytes = aligned(LOCK_RECORD)
        + aligned(UPDATE_BEYOND_ROW + row.new_row_len)
        + row.indexes * aligned(INDEX_INSERT_RECORD)
        + row.old_chunks * aligned(CHUNK_DELETE_RECORD);
    if let Some(external) = row.new_external {
        let full = external / TOAST_MAX_CHUNK_SIZE;
        let last = external % TOAST_MAX_CHUNK_SIZE;
        bytes += full * aligned(CHUNK_INSERT_BEYOND_DATA + TOAST_MAX_CHUNK_SIZE);
        if last > 0 {
            bytes += aligned(CHUNK_INSERT_BEYOND_DATA + last);
        }
        bytes += chunks(external) * aligned(INDEX_INSERT_RECORD);
    }
    bytes
}

/// The rewrite of a sampled row (its other attributes as stored: a TOAST pointer for one out
/// of line) to the value `stored` (as a new write would store it), the old value being
/// `old_external` bytes out of line (None: in the row); the table has `indexes` indexes.
pub fn sampled_row(row: &SampledRow, stored: &Stored, old_external: Option<usize>, indexes: usize) -> RowRewrite {
    let others: usize = (row.attributes.iter().enumerate())
        .filter(|(i, _)| *i != row.column)
        .map(|(_, a)| if a.external { TOAST_POINTER_SIZE } else { a.size })
        .sum();
    let in_row = if stored.external { TOAST_POINTER_SIZE } else { stored.size };
    RowRewrite {
        new_row_len: row.header + row.fixed + others + in_row,
        new_external: stored.external.then_some(stored.size),
        old_chunks: old_external.map_or(0, chunks),
        indexes,
    }
}

/// A rewrite's WAL as counted: records, images due now (pages not changed since the last
/// checkpoint began), images of every page reached, and the images of index pages the new
/// entries may go to (the high end only).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WalCount {
    pub records: f64,
    pub images_due: f64,
    pub images_reached: f64,
    pub index_images: f64,
    pub pages_due: u64,
    pub pages_reached: u64,
}

/// A WAL figure and its interval, in bytes as the LSN counts them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WalInterval {
    pub low: f64,
    pub about: f64,
    pub high: f64,
}

impl WalCount {
    pub fn add_row(&mut self, row: &RowRewrite) {
        self.records += row_records(row) as f64;
    }

    /// A page the rewrite changes, its image `image_bytes` as stored, `due` when its LSN is not
    /// past the redo pointer.
    pub fn add_page(&mut self, image_bytes: usize, due: bool) {
        self.add_shared_page(image_bytes, due, 1.0);
    }

    /// A page whose image a sample counts in part: `share` of it is this sample's (the page's
    /// chunks that are its values'), the high end counting it whole.
    pub fn add_shared_page(&mut self, image_bytes: usize, due: bool, share: f64) {
        self.pages_reached += 1;
        self.images_reached += image_bytes as f64;
        if due {
            self.pages_due += 1;
            self.images_due += image_bytes as f64 * share.clamp(0.0, 1.0);
        }
    }

    pub fn interval(&self) -> WalInterval {
        let (records, due) = (self.records, self.images_due);
        combine((records, records, records), (due, due, due), self.images_reached + self.index_images)
    }
}

/// The interval of a rewrite's WAL from its parts, each a total with its 95% interval (from a
/// sample of blocks): the records, the images due now, the images of every page reached, and
/// the index pages' images (the high end only). None without an interval (one block of a
/// larger table read).
pub fn sampled_interval(
    records: &Estimate,
    due: &Estimate,
    reached: &Estimate,
    index_images: f64,
) -> Option<WalInterval> {
    Some(combine(
        (records.low?, records.total, records.high?),
        (due.low?, due.total, due.high?),
        reached.high? + index_images,
    ))
}

/// Records and images due (each low, about, high) and the images the high end adds, in bytes
/// as the LSN counts them (each WAL page's header added), the records [`RECORD_MARGIN`] either
/// side too.
fn combine(records: (f64, f64, f64), due: (f64, f64, f64), more_images: f64) -> WalInterval {
    let lsn = |bytes: f64| bytes * WAL_PAGE / (WAL_PAGE - WAL_PAGE_HEADER);
    WalInterval {
        low: lsn(records.0 * (1.0 - RECORD_MARGIN) + due.0),
        about: lsn(records.1 + due.1),
        high: lsn(records.2 * (1.0 + RECORD_MARGIN) + due.2 + more_images),
    }
}

impl std::ops::AddAssign for WalCount {
    fn add_assign(&mut self, b: WalCount) {
        self.records += b.records;
        self.images_due += b.images_due;
        self.images_reached += b.images_reached;
        self.index_images += b.index_images;
        self.pages_due += b.pages_due;
        self.pages_reached += b.pages_reached;
    }
}

impl WalInterval {
    /// "about N MB of WAL (95% interval A MB..B MB)", the dry run's and the advice's words.
    pub fn words(&self) -> String {
        use crate::advisor::words::size;
        format!("about {} of WAL (95% interval {}..{})", size(self.about), size(self.low), size(self.high))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(new_row_len: usize, new_external: Option<usize>, old_chunks: usize, indexes: usize) -> RowRewrite {
        RowRewrite { new_row_len, new_external, old_chunks, indexes }
    }

    #[test]
    fn a_value_out_of_line_takes_a_chunk_per_1996_bytes() {
        assert_eq!((chunks(0), chunks(1), chunks(1996), chunks(1997), chunks(11_000)), (0, 1, 1, 2, 6));
    }

    #[test]
    fn each_record_is_padded_to_8_bytes() {
        // lock 56, update of a 33-byte row 80, one index entry 64
        assert_eq!(row_records(&row(33, None, 0, 1)), 56 + 80 + 64);
        // out of line: 3,000 bytes are a full chunk (2,072) and one of 1,004 (1,080), two
        // TOAST index entries, and 6 old chunks deleted (56 each)
        assert_eq!(row_records(&row(40, Some(3000), 6, 0)), 56 + 88 + 2072 + 1080 + 2 * 64 + 6 * 56);
    }

    #[test]
    fn a_sampled_row_keeps_its_other_columns_as_stored() {
        use crate::scenarios::toast::{Storage, StoredAttribute};
        let attribute = |size: usize, external: bool| StoredAttribute {
            storage: Storage::Extended,
            raw: size,
            size,
            method: None,
            external,
        };
        let row = SampledRow {
            header: 24,
            fixed: 8,
            target: 2032,
            attributes: vec![attribute(9000, true), attribute(40, false), attribute(3000, true)],
            column: 2,
            padding: 0,
        };
        let external = Stored { size: 2500, compressed: true, external: true };
        let r = sampled_row(&row, &external, Some(3000), 2);
        assert_eq!(
            r,
            RowRewrite { new_row_len: 24 + 8 + 18 + 40 + 18, new_external: Some(2500), old_chunks: 2, indexes: 2 }
        );
        let in_row = Stored { size: 900, compressed: true, external: false };
        assert_eq!(sampled_row(&row, &in_row, None, 0).new_row_len, 24 + 8 + 18 + 40 + 900);
    }

    #[test]
    fn images_due_are_in_the_estimate_and_every_page_reached_in_the_high_end() {
        let mut count = WalCount::default();
        count.add_row(&row(33, None, 0, 1));
        count.add_page(8000, true);
        count.add_page(3000, false);
        count.index_images = 8192.0;
        let mut shared = WalCount::default();
        shared.add_shared_page(8000, true, 0.25);
        assert_eq!((shared.images_due, shared.images_reached), (2000.0, 8000.0));
        let lsn = |b: f64| b * 8192.0 / 8168.0;
        let i = count.interval();
        assert_eq!((count.pages_due, count.pages_reached), (1, 2));
        assert!((i.about - lsn(200.0 + 8000.0)).abs() < 1e-9);
        assert!((i.low - lsn(190.0 + 8000.0)).abs() < 1e-9);
        assert!((i.high - lsn(210.0 + 8000.0 + 11_000.0 + 8192.0)).abs() < 1e-9);
        assert!(i.low < i.about && i.about < i.high);
        let mut sum = count;
        sum += count;
        assert_eq!((sum.pages_due, sum.records, sum.images_reached), (2, 400.0, 22_000.0));
    }

    #[test]
    fn the_words_carry_the_interval() {
        let i = WalInterval { low: 40.0 * 1048576.0, about: 45.0 * 1048576.0, high: 70.0 * 1048576.0 };
        assert_eq!(i.words(), "about 45 MB of WAL (95% interval 40 MB..70 MB)");
    }
}

#[cfg(test)]
mod sampled {
    use super::*;

    #[test]
    fn a_sample_s_intervals_add_up_and_one_block_gives_none() {
        let e = |total: f64, low: f64, high: f64| Estimate { total, low: Some(low), high: Some(high) };
        let i = sampled_interval(&e(1000.0, 900.0, 1100.0), &e(500.0, 400.0, 600.0), &e(800.0, 700.0, 900.0), 100.0)
            .unwrap();
        let lsn = |b: f64| b * 8192.0 / 8168.0;
        assert!((i.low - lsn(900.0 * 0.95 + 400.0)).abs() < 1e-9);
        assert!((i.about - lsn(1500.0)).abs() < 1e-9);
        assert!((i.high - lsn(1100.0 * 1.05 + 600.0 + 900.0 + 100.0)).abs() < 1e-9);
        let none = Estimate { total: 1000.0, low: None, high: None };
        assert_eq!(sampled_interval(&none, &e(1.0, 1.0, 1.0), &e(1.0, 1.0, 1.0), 0.0), None);
    }
}
