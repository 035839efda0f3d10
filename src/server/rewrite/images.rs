//! What a dry run counts of the rewrite's WAL ([`compresslab_core::rewrite::wal`]): each picked
//! row's records, and each page the rewrite would change, once: the heap page holding the row
//! and the TOAST pages holding its old chunks (found through the TOAST index), with its LSN
//! against the redo pointer of the last checkpoint and its image as the server would store it
//! under the `wal_compression` in force.

use std::collections::HashSet;

use compresslab_core::lab::codecs::Codec;
use compresslab_core::page::{page_lsn, BLCKSZ};
use compresslab_core::pg_compression::WalCompression;
use compresslab_core::rewrite::wal::{chunks, RowRewrite, WalCount};
use compresslab_core::scenarios::fpi::stored_image;
use pgrx::prelude::*;
use pgrx::PgRelation;

use crate::errors::OrRaise;
use crate::measure::build_codec;
use crate::server::activity;
use crate::server::pages::{relation_blocks, with_page};

/// A TOAST pointer's fields (`varatt_external`): the value's bytes in the TOAST table, its ID
/// and the TOAST table.
struct ToastPointer {
    extsize: usize,
    valueid: pg_sys::Oid,
    toastrelid: pg_sys::Oid,
}

impl ToastPointer {
    /// The pointer a stored datum is (its first byte 0x01, then the tag and the fields).
    fn of(datum: pg_sys::Datum) -> ToastPointer {
        // SAFETY: a non-NULL on-disk TOAST pointer of a tuple as stored: 2 header bytes, then an
        // unaligned varatt_external (four 4-byte fields), read byte by byte.
        let field = |n: usize| unsafe {
            let p = datum.cast_mut_ptr::<u8>().add(2 + 4 * n);
            u32::from_ne_bytes([*p, *p.add(1), *p.add(2), *p.add(3)])
        };
        ToastPointer {
            extsize: (field(1) & ((1 << 30) - 1)) as usize,
            valueid: pg_sys::Oid::from(field(2)),
            toastrelid: pg_sys::Oid::from(field(3)),
        }
    }
}

/// The counting of one dry run (over all its batches and tables).
pub(super) struct DryRunWal {
    redo: u64,
    /// None: `full_page_writes` is off, no image is written.
    images: Option<Option<Box<dyn Codec>>>,
    scratch: Vec<u8>,
    seen: HashSet<(pg_sys::Oid, u32)>,
    toast: Option<PgRelation>,
    /// A table and its number of indexes.
    indexes: (pg_sys::Oid, usize),
    pub count: WalCount,
}

impl DryRunWal {
    pub fn new() -> DryRunWal {
        let setting =
            WalCompression::from_setting(&activity::setting("wal_compression")).unwrap_or(WalCompression::Off);
        let images =
            (activity::setting("full_page_writes") == "on").then(|| setting.server_method().map(|m| build_codec(&m)));
        // SAFETY: reads the shared redo pointer under its lock.
        let redo = unsafe { pg_sys::GetRedoRecPtr() };
        DryRunWal {
            redo,
            images,
            scratch: Vec::new(),
            seen: HashSet::new(),
            toast: None,
            indexes: (pg_sys::InvalidOid, 0),
            count: WalCount::default(),
        }
    }

    /// A row the rewrite would change: its new version `new_row_len` bytes with its new value of
    /// `after` bytes (out of line when the row would not fit), the old value `datum` as stored
    /// (a TOAST pointer when `external`), on block `block` of `rel`.
    pub fn row(
        &mut self,
        rel: &PgRelation,
        block: u32,
        datum: pg_sys::Datum,
        external: bool,
        rest: usize,
        after: usize,
    ) {
        let in_row = rest + after;
        let (new_row_len, new_external) = if in_row > super::row_threshold(rel) {
            (rest + super::TOAST_POINTER_BYTES, Some(after.saturating_sub(4)))
        } else {
            (in_row, None)
        };
        let mut old_chunks = 0;
        if external {
            let pointer = ToastPointer::of(datum);
            old_chunks = chunks(pointer.extsize);
            self.toast_pages(&pointer);
        }
        if self.indexes.0 != rel.oid() {
            self.indexes = (rel.oid(), rel.indices(pg_sys::AccessShareLock as _).count());
        }
        self.count.add_row(&RowRewrite { new_row_len, new_external, old_chunks, indexes: self.indexes.1 });
        self.page(rel, block);
    }

    /// The pages holding the chunks of the value `pointer` names.
    fn toast_pages(&mut self, pointer: &ToastPointer) {
        let toast = match self.toast.take() {
            Some(toast) if toast.oid() == pointer.toastrelid => toast,
            // SAFETY: the TOAST table of a table this transaction holds locked.
            _ => unsafe { PgRelation::with_lock(pointer.toastrelid, pg_sys::AccessShareLock as _) },
        };
        for block in chunk_blocks(&toast, pointer.valueid) {
            self.page(&toast, block);
        }
        self.toast = Some(toast);
    }

    /// Block `block` of `rel`, counted the first time it is reached.
    fn page(&mut self, rel: &PgRelation, block: u32) {
        let Some(codec) = &mut self.images else { return };
        if !self.seen.insert((rel.oid(), block)) {
            return;
        }
        let (scratch, redo) = (&mut self.scratch, self.redo);
        let (image, due) = with_page(rel, block, |page| {
            (stored_image(page, codec.as_deref_mut(), scratch).or_raise().0, page_lsn(page) <= redo)
        });
        self.count.add_page(image, due);
    }

    /// After a table's batches: the images of its index pages that the new entries of
    /// `rewritten` of its `rows` rows may go to, at most a whole page each (the high end only).
    pub fn indexes(&mut self, rel: &PgRelation, rewritten: i64, rows: i64) {
        if self.images.is_none() || rows <= 0 {
            return;
        }
        let share = (rewritten as f64 / rows as f64).clamp(0.0, 1.0);
        for index in rel.indices(pg_sys::AccessShareLock as _) {
            self.count.index_images += f64::from(relation_blocks(&index)) * BLCKSZ as f64 * share;
        }
    }
}

/// The blocks of the TOAST table `toast` holding the chunks of value `valueid`, through its
/// index (chunk IDs are unique among live and dead chunks alike: any snapshot finds the value's).
fn chunk_blocks(toast: &PgRelation, valueid: pg_sys::Oid) -> Vec<u32> {
    let mut blocks = Vec::new();
    // SAFETY: the TOAST table is open and locked; its valid index is opened and closed here;
    // the scan key compares the first index column (chunk_id) with valueid; each returned
    // tuple's TID is read before the next call; the scan ends before the indexes close.
    unsafe {
        let lock = pg_sys::AccessShareLock as pg_sys::LOCKMODE;
        let mut indexes: *mut pg_sys::Relation = std::ptr::null_mut();
        let mut count = 0;
        let valid = pg_sys::toast_open_indexes(toast.as_ptr(), lock, &mut indexes, &mut count);
        let mut key = pg_sys::ScanKeyData::default();
        pg_sys::ScanKeyInit(
            &mut key,
            1,
            pg_sys::BTEqualStrategyNumber as u16,
            pg_sys::Oid::from(pg_sys::F_OIDEQ),
            pg_sys::Datum::from(valueid),
        );
        let scan = pg_sys::systable_beginscan_ordered(
            toast.as_ptr(),
            *indexes.add(valid as usize),
            &raw mut pg_sys::SnapshotAnyData,
            1,
            &mut key,
        );
        loop {
            let tuple = pg_sys::systable_getnext_ordered(scan, pg_sys::ScanDirection::ForwardScanDirection);
            if tuple.is_null() {
                break;
            }
            let tid = (*tuple).t_self;
            let block = (u32::from(tid.ip_blkid.bi_hi) << 16) | u32::from(tid.ip_blkid.bi_lo);
            if blocks.last() != Some(&block) {
                blocks.push(block);
            }
        }
        pg_sys::systable_endscan_ordered(scan);
        pg_sys::toast_close_indexes(indexes, count, lock);
    }
    blocks
}
