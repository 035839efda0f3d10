//! A dry run's batch: what a batch would rewrite, store and write, read by a heap scan.

use compresslab_core::rewrite::{self, Decision, StoredValue};
use pgrx::prelude::*;
use pgrx::PgRelation;

use super::{examine, row_threshold, BatchDone, BatchSpec, TOAST_POINTER_BYTES};
use crate::server::heap;
use crate::server::toast::{compression_method, stored_form};

/// A dry run's batch: counts into `done` the values of blocks `spec.first_block..end` a new
/// write would change, in physical order, up to the batch's rows and bytes (the block where a
/// limit is reached is read to its end), and what rewriting them would store and write. Returns
/// the block the next batch starts at. The rows are read by a heap scan: no query is planned,
/// so none of the owner's code runs (the caller's privileges were checked).
pub(super) fn pick(rel: &PgRelation, spec: &BatchSpec, attnum: i32, end: u64, done: &mut BatchDone) -> u64 {
    let threshold = row_threshold(rel);
    let (mut picked, mut bytes, mut stop_at) = (0u32, 0i64, None::<u32>);
    let mut next_block = end;
    let first = spec.first_block as u32;
    heap::scan_blocks(rel.as_ptr(), first, (end - spec.first_block) as u32, |tuple| {
        // SAFETY: a tuple of the scan: its header and its TID are read, and its column as
        // stored (pointing into the pinned page) is measured before the next tuple.
        let (block, row_length, datum) = unsafe {
            let tid = (*tuple).t_self;
            let block = (u32::from(tid.ip_blkid.bi_hi) << 16) | u32::from(tid.ip_blkid.bi_lo);
            let mut isnull = false;
            let datum = pg_sys::heap_getattr(tuple, attnum, (*rel.as_ptr()).rd_att, &mut isnull);
            (block, (*tuple).t_len as usize, (!isnull).then_some(datum))
        };
        if stop_at.is_some_and(|last| block > last) {
            next_block = u64::from(block);
            return false;
        }
        let Some(datum) = datum else { return true };
        let method = compression_method(datum);
        done.examined += 1;
        let (external, size) = stored_form(datum);
        let row_len = (method.is_none() && !external && size > rewrite::SMALLEST_TOASTED).then_some(row_length);
        let value = StoredValue { method, external, size, row_len };
        let decision = rewrite::decide(value, spec.method, threshold);
        if decision == Decision::Keep {
            return true;
        }
        let Some((digest, after)) = examine(datum, spec.method, decision, true) else { return true };
        done.bytes_before += size as i64;
        done.bytes_after += after as i64;
        done.rewritten += 1;
        // the rest of the row is written again too: its length but this value's
        let rest = row_length.saturating_sub(if external { TOAST_POINTER_BYTES } else { size });
        done.wal_estimate += (rest + after) as i64 + rewrite::WAL_BYTES_PER_ROW as i64;
        bytes += digest.len as i64;
        picked += 1;
        if stop_at.is_none() && (picked >= spec.batch_rows || bytes >= spec.batch_bytes) {
            stop_at = Some(block);
        }
        true
    });
    next_block
}
