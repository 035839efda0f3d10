//! A relation's pages, read through the buffer manager: each buffer pinned and share-locked
//! by a guard that releases it when dropped — also when an ERROR unwinds through it — and a
//! bulk-read ring so that a scan does not flush shared buffers.

use compresslab_core::page::{Hole, BLCKSZ};
use pgrx::prelude::*;
use pgrx::{PgRelation, PgSqlErrorCode};

use crate::errors::report;

/// Pages read and measured per batch when a whole relation is measured: memory stays at 8 MB
/// plus buffers.
pub const PAGES_PER_BATCH: usize = 1024;

/// A `BAS_BULKREAD` buffer access strategy, freed on drop.
struct BulkRead(pg_sys::BufferAccessStrategy);

impl BulkRead {
    fn new() -> BulkRead {
        // SAFETY: allocates a strategy in the current memory context.
        BulkRead(unsafe { pg_sys::GetAccessStrategy(pg_sys::BufferAccessStrategyType::BAS_BULKREAD) })
    }
}

impl Drop for BulkRead {
    fn drop(&mut self) {
        // SAFETY: the strategy was allocated by GetAccessStrategy and is freed once.
        unsafe { pg_sys::FreeAccessStrategy(self.0) }
    }
}

/// A pinned, share-locked buffer of the main fork; unlocked and unpinned on drop.
struct SharedBuffer(pg_sys::Buffer);

impl SharedBuffer {
    fn read(rel: &PgRelation, blkno: u32, strategy: pg_sys::BufferAccessStrategy) -> SharedBuffer {
        // SAFETY: the relation is open and locked by the caller; blkno is below its size.
        let buffer = unsafe {
            pg_sys::ReadBufferExtended(
                rel.as_ptr(),
                pg_sys::ForkNumber::MAIN_FORKNUM,
                blkno,
                pg_sys::ReadBufferMode::RBM_NORMAL,
                strategy,
            )
        };
        let guard = SharedBuffer(buffer);
        // SAFETY: the buffer is pinned (by ReadBufferExtended); the guard releases the lock.
        unsafe { pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_SHARE as _) };
        guard
    }

    fn page(&self) -> &[u8] {
        // SAFETY: a pinned, share-locked buffer's page is BLCKSZ valid bytes that nobody
        // modifies while the lock is held, which outlives the borrow of self.
        unsafe { std::slice::from_raw_parts(pg_sys::BufferGetPage(self.0) as *const u8, BLCKSZ) }
    }
}

impl Drop for SharedBuffer {
    fn drop(&mut self) {
        // SAFETY: the buffer is pinned and share-locked by this guard, released once.
        unsafe { pg_sys::UnlockReleaseBuffer(self.0) }
    }
}

/// The images of `blocks` of the main fork, each copied under its share lock, presented with
/// the hole removed or zero-filled. Checks for interrupts between pages.
pub fn read_pages(rel: &PgRelation, blocks: &[u32], hole: Hole) -> Vec<Vec<u8>> {
    let strategy = BulkRead::new();
    blocks
        .iter()
        .map(|&blkno| {
            check_for_interrupts!();
            hole.apply(SharedBuffer::read(rel, blkno, strategy.0).page())
        })
        .collect()
}

/// `f` on block `blkno` of the main fork (below the relation's size), under its share lock.
pub fn with_page<T>(rel: &PgRelation, blkno: u32, f: impl FnOnce(&[u8]) -> T) -> T {
    f(SharedBuffer::read(rel, blkno, std::ptr::null_mut()).page())
}

/// The number of blocks of the main fork; an ERROR for relations without storage.
pub fn relation_blocks(rel: &PgRelation) -> u32 {
    // SAFETY: rd_rel is valid for an open relation.
    let relkind = unsafe { (*rel.rd_rel).relkind } as u8;
    if !matches!(relkind, b'r' | b'i' | b'S' | b't' | b'm') {
        report(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("\"{}\" has no pages of its own (relkind '{}')", rel.name(), relkind as char),
            Some("Benchmark a table, index, materialized view, sequence or TOAST table; for a partitioned table, one of its partitions."),
        );
    }
    // SAFETY: the relation is open and locked.
    unsafe { pg_sys::RelationGetNumberOfBlocksInFork(rel.as_ptr(), pg_sys::ForkNumber::MAIN_FORKNUM) }
}

/// Whether the relation writes WAL (not unlogged or temporary).
pub fn is_permanent(rel: &PgRelation) -> bool {
    // SAFETY: rd_rel is valid for an open relation.
    unsafe { (*rel.rd_rel).relpersistence as u8 == b'p' }
}
