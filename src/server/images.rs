//! The full-page images a change to a page would write now: whether the page was last changed
//! before the last checkpoint began (its LSN not past `GetRedoRecPtr()`: the next change writes
//! an image of it), and the image's bytes as the server would store them under the
//! `wal_compression` in force (hole removed, compressed with the server's routine, kept only
//! if smaller: [`compresslab_core::scenarios::fpi::stored_image`]). A value's TOAST pages are
//! found through the TOAST index.

use std::collections::HashMap;

use compresslab_core::lab::codecs::Codec;
use compresslab_core::page::{normal_items, page_lsn};
use compresslab_core::pg_compression::WalCompression;
use compresslab_core::scenarios::fpi::stored_image;
use pgrx::prelude::*;
use pgrx::PgRelation;

use super::activity;
use super::codecs;
use super::pages::with_page;
use crate::errors::OrRaise;

/// A TOAST pointer's fields (`varatt_external`): the value's bytes in the TOAST table, its ID
/// and the TOAST table.
#[derive(Debug, Clone, Copy)]
pub struct ToastPointer {
    pub extsize: usize,
    valueid: pg_sys::Oid,
    toastrelid: pg_sys::Oid,
}

impl ToastPointer {
    /// The pointer a stored datum is, None when it is not one.
    pub fn of(datum: pg_sys::Datum) -> Option<ToastPointer> {
        let p = datum.cast_mut_ptr::<u8>();
        // SAFETY: a non-NULL varlena of a tuple as stored: its first byte says whether it is an
        // on-disk TOAST pointer (0x01, then the tag 18), whose unaligned varatt_external (four
        // 4-byte fields) follows the 2 header bytes; read byte by byte.
        unsafe {
            if *p != 0x01 || *p.add(1) != 18 {
                return None;
            }
            let field = |n: usize| {
                let f = p.add(2 + 4 * n);
                u32::from_ne_bytes([*f, *f.add(1), *f.add(2), *f.add(3)])
            };
            Some(ToastPointer {
                extsize: (field(1) & ((1 << 30) - 1)) as usize,
                valueid: pg_sys::Oid::from(field(2)),
                toastrelid: pg_sys::Oid::from(field(3)),
            })
        }
    }
}

/// Reads pages' LSNs and sizes their images (see the module).
pub struct PageImages {
    redo: u64,
    /// None: `full_page_writes` is off, no image is written. Else the setting's codec (None: off).
    codec: Option<Option<Box<dyn Codec>>>,
    scratch: Vec<u8>,
    toast: Option<PgRelation>,
}

impl PageImages {
    /// Images of the pages a rewrite changes, sized as the server stores them now.
    pub fn new() -> PageImages {
        let setting =
            WalCompression::from_setting(&activity::setting("wal_compression")).unwrap_or(WalCompression::Off);
        let codec = (activity::setting("full_page_writes") == "on")
            .then(|| setting.server_method().map(|m| codecs::build(&m).or_raise()));
        // SAFETY: reads the shared redo pointer under its lock.
        let redo = unsafe { pg_sys::GetRedoRecPtr() };
        PageImages { redo, codec, scratch: Vec::new(), toast: None }
    }

    /// None counted: for a role that may not learn the table's pages' sizes (a page's image, and
    /// its size under a codec, holds every column of every row).
    pub fn none() -> PageImages {
        PageImages { redo: 0, codec: None, scratch: Vec::new(), toast: None }
    }

    /// Whether any image is written (`full_page_writes` on).
    pub fn written(&self) -> bool {
        self.codec.is_some()
    }

    /// The image block `block` of `rel` (below its size) would write if changed now; None when
    /// no image is written.
    pub fn image(&mut self, rel: &PgRelation, block: u32) -> Option<Image> {
        let codec = self.codec.as_mut()?;
        let (scratch, redo) = (&mut self.scratch, self.redo);
        Some(with_page(rel, block, |page| Image {
            bytes: stored_image(page, codec.as_deref_mut(), scratch).or_raise().0,
            due: page_lsn(page) <= redo,
            tuples: normal_items(page),
        }))
    }

    /// `each` on the TOAST table of `pointer` and every block holding chunks of its value (with
    /// how many).
    pub fn chunk_blocks(
        &mut self,
        pointer: &ToastPointer,
        mut each: impl FnMut(&mut PageImages, &PgRelation, u32, usize),
    ) {
        let toast = match self.toast.take() {
            Some(toast) if toast.oid() == pointer.toastrelid => toast,
            // SAFETY: the TOAST table of a table this transaction holds locked.
            _ => unsafe { PgRelation::with_lock(pointer.toastrelid, pg_sys::AccessShareLock as _) },
        };
        for (block, chunks) in chunk_blocks(&toast, pointer.valueid) {
            each(self, &toast, block, chunks);
        }
        self.toast = Some(toast);
    }
}

/// A page's image if changed now: its bytes as stored, whether it is due (its LSN not past the
/// redo pointer), and the tuples it holds.
#[derive(Debug, Clone, Copy)]
pub struct Image {
    pub bytes: usize,
    pub due: bool,
    pub tuples: usize,
}

/// Pages already counted, a bit per block of each relation.
#[derive(Default)]
pub struct SeenPages(HashMap<pg_sys::Oid, Vec<u64>>);

impl SeenPages {
    /// Whether block `block` of `relid` is new to the set (it is in it afterwards).
    pub fn insert(&mut self, relid: pg_sys::Oid, block: u32) -> bool {
        let bits = self.0.entry(relid).or_default();
        let (word, bit) = (block as usize / 64, 1u64 << (block % 64));
        if bits.len() <= word {
            bits.resize(word + 1, 0);
        }
        let new = bits[word] & bit == 0;
        bits[word] |= bit;
        new
    }
}

/// The blocks of the TOAST table `toast` holding the chunks of value `valueid`, and how many
/// each, through its index (chunk IDs are unique among live and dead chunks alike: any
/// snapshot finds the value's).
fn chunk_blocks(toast: &PgRelation, valueid: pg_sys::Oid) -> Vec<(u32, usize)> {
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
            check_for_interrupts!();
            let tuple = pg_sys::systable_getnext_ordered(scan, pg_sys::ScanDirection::ForwardScanDirection);
            if tuple.is_null() {
                break;
            }
            let tid = (*tuple).t_self;
            let block = (u32::from(tid.ip_blkid.bi_hi) << 16) | u32::from(tid.ip_blkid.bi_lo);
            match blocks.last_mut() {
                Some((last, chunks)) if *last == block => *chunks += 1,
                _ => blocks.push((block, 1)),
            }
        }
        pg_sys::systable_endscan_ordered(scan);
        pg_sys::toast_close_indexes(indexes, count, lock);
    }
    blocks
}
