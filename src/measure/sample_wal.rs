//! The WAL a rewrite of a column's sampled blocks to each method would write, counted as the
//! dry run counts it ([`compresslab_core::rewrite::wal`]): each row it changes, its records
//! from the row as sampled and its value as a new write would store it; each page it changes,
//! once a block — the block's heap page and the TOAST pages of the old values — with the image
//! it would write now ([`PageImages`]). Scaled from the blocks to the table with their interval
//! by [`compresslab_core::sampling::ColumnBlocks::rewrite_wal`].

use std::collections::HashMap;

use compresslab_core::page::BLCKSZ;
use compresslab_core::rewrite::wal::{sampled_row, WalCount};
use compresslab_core::scenarios::toast::{SampledRow, Stored};
use pgrx::prelude::*;
use pgrx::PgRelation;

use crate::server::images::{Image, PageImages, ToastPointer};
use crate::server::pages::relation_blocks;

type Page = (pg_sys::Oid, u32);

/// A column's counting, over its sampled blocks.
pub struct SampleWal {
    images: PageImages,
    pages: bool,
    /// Each page's image, read once: a TOAST page may hold values of several blocks.
    cache: HashMap<Page, Option<Image>>,
    indexes: usize,
    /// The bytes of the table's indexes (of its leaves, for a partitioned table).
    pub index_bytes: f64,
}

/// One block's counting: per method, the rows' WAL and the pages reached, each with the share
/// of its image that is the block's.
pub struct BlockWal {
    counts: Vec<WalCount>,
    pages: Vec<HashMap<Page, (Image, f64)>>,
}

impl SampleWal {
    /// The counting for a table of `leaves`; with `pages` false, records only (see
    /// [`PageImages::none`]).
    pub fn new(leaves: &[pg_sys::Oid], pages: bool) -> SampleWal {
        let mut index_bytes = 0.0;
        let mut indexes = 0;
        for &leaf in leaves {
            // SAFETY: a leaf of the table sampled (or the table), locked for its sample.
            let leaf = unsafe { PgRelation::with_lock(leaf, pg_sys::AccessShareLock as _) };
            let leaf_indexes: Vec<PgRelation> = leaf.indices(pg_sys::AccessShareLock as _).collect();
            indexes = indexes.max(leaf_indexes.len());
            index_bytes += leaf_indexes.iter().map(|i| f64::from(relation_blocks(i)) * BLCKSZ as f64).sum::<f64>();
        }
        let images = if pages { PageImages::new() } else { PageImages::none() };
        SampleWal { images, pages, cache: HashMap::new(), indexes, index_bytes }
    }

    /// Whether its pages are read ([`crate::server::sampling::pages_readable`]).
    pub fn pages(&self) -> bool {
        self.pages
    }

    pub fn block(&self, methods: usize) -> BlockWal {
        BlockWal { counts: vec![WalCount::default(); methods], pages: vec![HashMap::new(); methods] }
    }

    /// A sampled row: `stored` its value as a new write would store it under each method, and
    /// `rewritten` whether a rewrite to the method changes it; `pointer` its TOAST pointer now.
    pub fn row(
        &mut self,
        block: &mut BlockWal,
        row: &SampledRow,
        stored: &[Stored],
        rewritten: &[bool],
        pointer: Option<ToastPointer>,
    ) {
        let methods: Vec<usize> = (0..rewritten.len()).filter(|&i| rewritten[i]).collect();
        for &i in &methods {
            block.counts[i].add_row(&sampled_row(row, &stored[i], pointer.map(|p| p.extsize), self.indexes));
        }
        let (Some(pointer), false) = (pointer, methods.is_empty()) else { return };
        let cache = &mut self.cache;
        self.images.chunk_blocks(&pointer, |images, toast, blkno, chunks| {
            let image = *cache.entry((toast.oid(), blkno)).or_insert_with(|| images.image(toast, blkno));
            // a TOAST page holds chunks of values of other blocks too: this value's share of its
            // image is its chunks' (the high end counts it whole)
            let share = image.map_or(1.0, |i| chunks as f64 / i.tuples.max(chunks) as f64);
            for &i in &methods {
                count(block, i, (toast.oid(), blkno), image, share);
            }
        });
    }

    /// The block's heap page (block `blkno` of `leaf`), for each method rewriting a row of it;
    /// the block's counts.
    pub fn finish(&mut self, mut block: BlockWal, leaf: pg_sys::Oid, blkno: u32) -> Vec<WalCount> {
        // SAFETY: the leaf was locked when its block was read.
        let rel = unsafe { PgRelation::with_lock(leaf, pg_sys::AccessShareLock as _) };
        if blkno < relation_blocks(&rel) {
            let image = self.images.image(&rel, blkno);
            for i in 0..block.counts.len() {
                if block.counts[i].records > 0.0 {
                    count(&mut block, i, (leaf, blkno), image, 1.0);
                }
            }
        }
        for (counts, pages) in block.counts.iter_mut().zip(&block.pages) {
            for (image, share) in pages.values() {
                counts.add_shared_page(image.bytes, image.due, *share);
            }
        }
        block.counts
    }
}

/// `share` of page `page`'s image for method `i`.
fn count(block: &mut BlockWal, i: usize, page: Page, image: Option<Image>, share: f64) {
    if let Some(image) = image {
        block.pages[i].entry(page).or_insert((image, 0.0)).1 += share;
    }
}
