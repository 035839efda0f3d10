//! A batch's rewrite: one UPDATE over a block range that rewrites, as a fresh copy of itself,
//! each value a new write would store differently (decided in its WHERE: [`wanted`]), then
//! reads each new row version back as stored to compare it with the digest of the very row
//! version it replaced (taken while copying it: [`copy`]). The SQL functions the UPDATE calls
//! reach this batch's state through a thread-local, set for the statement's run only.

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::rewrite::{self, Decision, Digest, StoredValue};
use pgrx::prelude::*;
use pgrx::{IntoDatum, PgRelation};

use super::{corrupted, examine, row_threshold, BatchDone, BatchSpec};
use crate::server::catalog::names::quote_identifier;
use crate::server::catalog::spi::{column, execute, kept_plan, typed_column};
use crate::server::owner::{as_owner, owner_of};
use crate::server::toast::{compression_method, fresh_copy, stored_form};

/// The batch this backend's UPDATE is rewriting: what [`wanted`] decides with and counts, and
/// the digests [`copy`] took, one per new row version (`RETURNING ... recompress_copied()`).
struct Rewriting {
    rel: pg_sys::Relation,
    method: ToastCompression,
    threshold: usize,
    batch_rows: u32,
    batch_bytes: i64,
    /// The batch's blocks, `first..end`: only rows in them count towards its limits (a newest
    /// version EvalPlanQual finds elsewhere is rewritten all the same).
    first: u32,
    end: u32,
    examined: i64,
    wanted: i64,
    bytes: i64,
    /// The block where the batch's rows or bytes were reached: rows after it are left to the
    /// next batch, which starts at `next_block`.
    stop_at: Option<u32>,
    next_block: Option<u32>,
    /// The digest of the value the last call of [`copy`] copied, and its stored size; taken by
    /// [`copied`] once its row version is written (a copy EvalPlanQual redid replaces it).
    pending: Option<(Digest, i64)>,
    copied: Vec<(Digest, i64)>,
}

thread_local! {
    static REWRITING: std::cell::RefCell<Option<Rewriting>> = const { std::cell::RefCell::new(None) };
}

/// Clears the batch's state when the batch ends, or fails (an ERROR unwinds through it).
struct RewritingGuard;

impl Drop for RewritingGuard {
    fn drop(&mut self) {
        REWRITING.with_borrow_mut(|r| *r = None);
    }
}

/// Whether the UPDATE of the batch rewrites the value `datum` of the row version at `ctid`:
/// it is stored as a new write would not store it, and the batch has room for it (once its
/// rows or bytes are reached, rows in later blocks wait for the next batch). Outside a batch:
/// false.
pub fn wanted(datum: pg_sys::Datum, ctid: pg_sys::ItemPointerData) -> bool {
    check_for_interrupts!();
    let block = (u32::from(ctid.ip_blkid.bi_hi) << 16) | u32::from(ctid.ip_blkid.bi_lo);
    REWRITING.with_borrow_mut(|state| {
        let Some(r) = state.as_mut() else { return false };
        let in_range = block >= r.first && block < r.end;
        if in_range && r.stop_at.is_some_and(|last| block > last) {
            r.next_block = Some(r.next_block.map_or(block, |b| b.min(block)));
            return false;
        }
        r.examined += 1;
        let (external, size) = stored_form(datum);
        let method = compression_method(datum);
        let row_len = (method.is_none() && !external && size > rewrite::SMALLEST_TOASTED)
            .then(|| tuple_length_at(r.rel, block, usize::from(ctid.ip_posid)))
            .flatten();
        let value = StoredValue { method, external, size, row_len };
        match rewrite::decide(value, r.method, r.threshold) {
            Decision::Keep => return false,
            Decision::TryCompress if examine(datum, r.method, Decision::TryCompress, false).is_none() => return false,
            _ => {}
        }
        r.wanted += 1;
        // SAFETY: a non-NULL varlena as stored; only its header (or pointer) is read.
        r.bytes += unsafe { pg_sys::toast_raw_datum_size(datum) }.saturating_sub(4) as i64;
        if in_range && r.stop_at.is_none() && (r.wanted >= i64::from(r.batch_rows) || r.bytes >= r.batch_bytes) {
            r.stop_at = Some(block);
        }
        true
    })
}

/// `datum` as a fresh copy of itself (detoasted: decompressed, fetched from the TOAST table),
/// the value the batch's UPDATE writes; the digest of its bytes is kept for [`copied`]. Called
/// on the very row version the UPDATE replaces (again on the newest one under EvalPlanQual).
/// Outside a batch: the copy alone.
pub fn copy(datum: pg_sys::Datum) -> pg_sys::Datum {
    let (_, stored) = stored_form(datum);
    let copy = fresh_copy(datum);
    // SAFETY: a plain varlena just copied in the caller's context, whose bytes are read here.
    let digest = unsafe {
        let copy = copy.cast_mut_ptr::<pg_sys::varlena>();
        let len = pgrx::varlena::varsize_any_exhdr(copy);
        Digest::of(std::slice::from_raw_parts(pgrx::varlena::vardata_any(copy) as *const u8, len))
    };
    REWRITING.with_borrow_mut(|state| {
        if let Some(r) = state.as_mut() {
            r.pending = Some((digest, stored as i64));
        }
    });
    copy
}

/// Called by RETURNING once a row version is written: the number (from 1) of the digest of
/// the value it holds, which the batch compares with the value read back as stored. Outside a
/// batch, or with no copy taken: None (the batch then fails).
pub fn copied() -> Option<i64> {
    REWRITING.with_borrow_mut(|state| {
        let r = state.as_mut()?;
        let taken = r.pending.take()?;
        r.copied.push(taken);
        Some(r.copied.len() as i64)
    })
}

/// A batch's rewrite: one UPDATE of blocks `spec.first_block..end` that writes a fresh copy of
/// each value [`wanted`] picks, then each new row version read back as stored: its value must
/// hold the digest [`copy`] took of the value of the version it replaced. Counts into `done`.
///
/// A caller who is not the table's owner runs the UPDATE as the owner ([`as_owner`]: a
/// security-restricted operation in a GUC nest level of its own, as PostgreSQL runs VACUUM):
/// its planning and the table's index expressions, constraints, triggers and rules are the
/// owner's code, which must not run with the caller's rights. The statement is prepared
/// (parsed, its names looked up) first, as the caller; the planner sees it only inside the
/// switch.
pub(super) fn rewrite_range(
    rel: &PgRelation,
    table: &str,
    spec: &BatchSpec,
    attnum: i32,
    end: u64,
    done: &mut BatchDone,
) {
    let col = quote_identifier(spec.column);
    // A TID range scan of the batch's blocks; under EvalPlanQual (a row updated meanwhile) the
    // WHERE and the copy are evaluated again on the row's newest version.
    let update = format!(
        "UPDATE ONLY {table} t SET {col} = compresslab.recompress_copy(t.{col}) \
          WHERE t.ctid OPERATOR(pg_catalog.>=) $1::pg_catalog.tid AND t.ctid OPERATOR(pg_catalog.<) $2::pg_catalog.tid \
            AND compresslab.recompress_wanted(t.{col}, t.ctid) \
         RETURNING t.ctid, compresslab.recompress_copied()"
    );
    REWRITING.with_borrow_mut(|state| {
        *state = Some(Rewriting {
            rel: rel.as_ptr(),
            method: spec.method,
            threshold: row_threshold(rel),
            batch_rows: spec.batch_rows,
            batch_bytes: spec.batch_bytes,
            first: spec.first_block.min(u64::from(u32::MAX)) as u32,
            end: end.min(u64::from(u32::MAX)) as u32,
            examined: 0,
            wanted: 0,
            bytes: 0,
            stop_at: None,
            next_block: None,
            pending: None,
            copied: Vec::new(),
        })
    });
    let _clear = RewritingGuard;
    // (the new row version, the number of its copy's digest)
    let mut written: Vec<(pg_sys::ItemPointerData, i64)> = Vec::new();
    Spi::connect(|_| {
        let bounds = [format!("({},0)", spec.first_block), format!("({end},0)")];
        // prepared as the caller; planned (folding the owner's immutable functions) and run as
        // the owner
        let rows = as_owner(
            owner_of(rel),
            || kept_plan(&update, &[pg_sys::TEXTOID, pg_sys::TEXTOID]),
            |plan| execute(plan, &bounds.map(|b| b.into_datum()), false),
        );
        for row in 0..rows {
            let Some(tid) = column(row, 1) else { corrupted(table, "is missing") };
            // SAFETY: a non-NULL tid, passed by reference.
            let tid = unsafe { *tid.cast_mut_ptr::<pg_sys::ItemPointerData>() };
            let Some(n) = typed_column::<i64>(row, 2) else { corrupted(table, "is missing") };
            written.push((tid, n));
        }
    });
    let Some(state) = REWRITING.with_borrow_mut(|state| state.take()) else { corrupted(table, "is missing") };
    if state.copied.len() != written.len() {
        corrupted(table, "is missing")
    }
    let mut seen = vec![false; written.len()];
    for (tid, n) in written {
        check_for_interrupts!();
        let Some(at) = usize::try_from(n - 1).ok().filter(|&i| i < seen.len() && !seen[i]) else {
            corrupted(table, "is read back twice")
        };
        seen[at] = true;
        let (digest, size) = stored_digest(rel, tid, attnum).unwrap_or_else(|what| corrupted(table, what));
        let (was, stored) = &state.copied[at];
        if digest != *was {
            corrupted(table, "reads back different bytes")
        }
        done.rewritten += 1;
        done.bytes_before += stored;
        done.bytes_after += size as i64;
    }
    done.examined += state.examined;
    done.skipped += (state.wanted - done.rewritten).max(0);
    done.next_block = state.next_block.map_or(end, |b| u64::from(b).min(end));
}

/// The digest and `pg_column_size` of column `attnum` of the row version at `tid` as stored,
/// read as this transaction sees it (it wrote it).
fn stored_digest(rel: &PgRelation, tid: pg_sys::ItemPointerData, attnum: i32) -> Result<(Digest, usize), &'static str> {
    // SAFETY: heap_fetch reads the tuple at `tid` of an open, locked relation; with keep_buf
    // its buffer stays pinned (if it found a tuple) while the value, which may point into the
    // page, is read, then is released. An ERROR in between releases it at the abort.
    unsafe {
        let mut tuple: pg_sys::HeapTupleData = std::mem::zeroed();
        tuple.t_self = tid;
        let mut buffer: pg_sys::Buffer = pg_sys::InvalidBuffer as pg_sys::Buffer;
        let found = pg_sys::heap_fetch(
            rel.as_ptr(),
            std::ptr::addr_of_mut!(pg_sys::SnapshotSelfData),
            &mut tuple,
            &mut buffer,
            true,
        );
        let result = if !found {
            Err("is missing")
        } else {
            let mut isnull = false;
            let datum = pg_sys::heap_getattr(&mut tuple, attnum, (*rel.as_ptr()).rd_att, &mut isnull);
            if isnull {
                Err("reads back as NULL")
            } else {
                let (_, size) = stored_form(datum);
                examine(datum, ToastCompression::Pglz, Decision::Rewrite, false)
                    .map(|(digest, _)| (digest, size))
                    .ok_or("cannot be read")
            }
        };
        if buffer != pg_sys::InvalidBuffer as pg_sys::Buffer {
            pg_sys::ReleaseBuffer(buffer);
        }
        result
    }
}

/// The length of the row version at (`block`, `offset`) of `rel` as stored (its line pointer's
/// length), None if the slot holds no row now.
fn tuple_length_at(rel: pg_sys::Relation, block: u32, offset: usize) -> Option<usize> {
    // SAFETY: the relation is open and locked and the block below its size (a row was just
    // read from it); the buffer is pinned and share-locked while the page is read, then
    // released.
    unsafe {
        let buffer = pg_sys::ReadBufferExtended(
            rel,
            pg_sys::ForkNumber::MAIN_FORKNUM,
            block,
            pg_sys::ReadBufferMode::RBM_NORMAL,
            std::ptr::null_mut(),
        );
        pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_SHARE as i32);
        let page = pg_sys::BufferGetPage(buffer) as *const u8;
        // pd_lower (offset 12) ends the line pointer array, which starts after the 24-byte
        // header; each ItemIdData is lp_off:15, lp_flags:2, lp_len:15.
        let lower = u16::from_ne_bytes([*page.add(12), *page.add(13)]) as usize;
        let at = 24 + (offset.max(1) - 1) * 4;
        let item = (offset >= 1 && at + 4 <= lower)
            .then(|| u32::from_ne_bytes([*page.add(at), *page.add(at + 1), *page.add(at + 2), *page.add(at + 3)]));
        pg_sys::UnlockReleaseBuffer(buffer);
        let item = item?;
        ((item >> 15) & 0x3 == pg_sys::LP_NORMAL).then_some((item >> 17) as usize)
    }
}
