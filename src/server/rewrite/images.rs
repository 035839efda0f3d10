//! What a dry run counts of the rewrite's WAL ([`compresslab_core::rewrite::wal`]): each picked
//! row's records, and each page the rewrite would change, once — the heap page holding the row
//! and the TOAST pages holding its old chunks — with the image it would write now
//! ([`PageImages`]), where the caller may learn the table's pages' sizes
//! ([`pages_readable`]: a page holds every column of every row).

use compresslab_core::page::BLCKSZ;
use compresslab_core::rewrite::wal::{chunks, RowRewrite, WalCount};
use compresslab_core::scenarios::toast::TOAST_POINTER_SIZE;
use pgrx::prelude::*;
use pgrx::PgRelation;

use crate::server::images::{PageImages, SeenPages, ToastPointer};
use crate::server::pages::relation_blocks;
use crate::server::sampling::pages_readable;

/// The counting of one dry run (over all its batches and tables).
pub(super) struct DryRunWal {
    images: PageImages,
    seen: SeenPages,
    /// A table, its number of indexes, and whether the caller may learn its pages' sizes.
    table: (pg_sys::Oid, usize, bool),
    pub count: WalCount,
    /// Rows of a table whose pages the caller may not read were counted without their images.
    pub unread: bool,
}

impl DryRunWal {
    pub fn new() -> DryRunWal {
        DryRunWal {
            images: PageImages::new(),
            seen: SeenPages::default(),
            table: (pg_sys::InvalidOid, 0, false),
            count: WalCount::default(),
            unread: false,
        }
    }

    /// A row the rewrite would change: its new version holds `rest` bytes besides its new value
    /// of `after` bytes (out of line when the row would not fit), the old value `datum` as
    /// stored, on block `block` of `rel`.
    pub fn row(&mut self, rel: &PgRelation, block: u32, datum: pg_sys::Datum, rest: usize, after: usize) {
        let in_row = rest + after;
        let (new_row_len, new_external) = if in_row > super::row_threshold(rel) {
            (rest + TOAST_POINTER_SIZE, Some(after.saturating_sub(4)))
        } else {
            (in_row, None)
        };
        let pointer = ToastPointer::of(datum);
        if self.table.0 != rel.oid() {
            self.table = (rel.oid(), rel.indices(pg_sys::AccessShareLock as _).count(), pages_readable(rel));
        }
        let old_chunks = pointer.map_or(0, |p| chunks(p.extsize));
        self.count.add_row(&RowRewrite { new_row_len, new_external, old_chunks, indexes: self.table.1 });
        if !self.table.2 {
            self.unread = true;
            return;
        }
        self.page(rel, block);
        if let Some(pointer) = pointer {
            let (seen, count) = (&mut self.seen, &mut self.count);
            self.images.chunk_blocks(&pointer, |images, toast, block, _| page(images, seen, count, toast, block));
        }
    }

    fn page(&mut self, rel: &PgRelation, block: u32) {
        page(&mut self.images, &mut self.seen, &mut self.count, rel, block);
    }

    /// After a table's batches: the images of its index pages that the new entries of
    /// `rewritten` of its `rows` rows may go to, a whole page each (the high end only).
    pub fn indexes(&mut self, rel: &PgRelation, rewritten: i64, rows: i64) {
        if !self.images.written() || rows <= 0 {
            return;
        }
        let share = (rewritten as f64 / rows as f64).clamp(0.0, 1.0);
        for index in rel.indices(pg_sys::AccessShareLock as _) {
            self.count.index_images += f64::from(relation_blocks(&index)) * BLCKSZ as f64 * share;
        }
    }
}

/// Block `block` of `rel`, counted the first time it is reached.
fn page(images: &mut PageImages, seen: &mut SeenPages, count: &mut WalCount, rel: &PgRelation, block: u32) {
    if seen.insert(rel.oid(), block) {
        if let Some(image) = images.image(rel, block) {
            count.add_page(image.bytes, image.due);
        }
    }
}
