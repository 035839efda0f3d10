//! Which rows a batch rewrites: the values of its blocks a new write would store differently
//! ([`compresslab_core::rewrite::decide`]), read by a heap scan under the statement's snapshot.
//! No query is planned, so none of the owner's code runs (the caller's privileges were
//! checked). The rewrite and the dry run pick alike.

use compresslab_core::rewrite::{self, Decision, Digest, StoredValue};
use compresslab_core::scenarios::toast::TOAST_POINTER_SIZE;
use pgrx::prelude::*;
use pgrx::PgRelation;

use super::images::DryRunWal;
use super::{examine, row_threshold, BatchDone, BatchSpec, Examined, Values};
use crate::server::heap;
use crate::server::toast::{compression_method, stored_form};

/// A row the batch rewrites: its version's TID, the digest of its value and the value's stored
/// size (its fresh copy, which writing compresses anew with the column's method, is the same
/// place of the batch's [`Values`]).
pub struct Picked {
    pub tid: pg_sys::ItemPointerData,
    pub digest: Digest,
    pub stored: i64,
}

/// The rows of blocks `spec.first_block..end` whose value a new write would change, in physical
/// order, up to the batch's rows and bytes (the block where a limit is reached is read to its
/// end), counted into `done` (rows read; a dry run: what rewriting them would store too, and
/// into `wal` what it would write), and the block the next batch starts at. The rewrite gathers
/// their values in `values`.
pub(super) fn pick(
    rel: &PgRelation,
    spec: &BatchSpec,
    attnum: i32,
    end: u64,
    done: &mut BatchDone,
    mut values: Option<&mut Values>,
    mut wal: Option<&mut DryRunWal>,
) -> (Vec<Picked>, u64) {
    let threshold = row_threshold(rel);
    let (mut picked, mut bytes, mut stop_at) = (Vec::new(), 0i64, None::<u32>);
    let mut next_block = end;
    heap::scan_blocks(rel.as_ptr(), spec.first_block as u32, (end - spec.first_block) as u32, |tuple| {
        // SAFETY: a tuple of the scan: its header and its TID are read, and its column as
        // stored (pointing into the pinned page) is measured, and copied, before the next tuple.
        let (tid, row_length, datum, xmin) = unsafe {
            let mut isnull = false;
            let datum = pg_sys::heap_getattr(tuple, attnum, (*rel.as_ptr()).rd_att, &mut isnull);
            let header = &*(*tuple).t_data;
            let frozen = header.t_infomask as u32 & pg_sys::HEAP_XMIN_FROZEN == pg_sys::HEAP_XMIN_FROZEN;
            let xmin = (!frozen).then_some(header.t_choice.t_heap.t_xmin);
            ((*tuple).t_self, (*tuple).t_len as usize, (!isnull).then_some(datum), xmin)
        };
        let block = (u32::from(tid.ip_blkid.bi_hi) << 16) | u32::from(tid.ip_blkid.bi_lo);
        if stop_at.is_some_and(|last| block > last) {
            next_block = u64::from(block);
            return false;
        }
        let Some(datum) = datum else { return true };
        let method = compression_method(datum);
        let (external, size) = stored_form(datum);
        let row_len = (method.is_none() && !external && size > rewrite::SMALLEST_TOASTED).then_some(row_length);
        let value = StoredValue { method, external, size, row_len };
        let decision = rewrite::decide(value, spec.method, threshold);
        if decision == Decision::Keep {
            // a version written since the run began (its own, moved on in the pass) is no row read
            // SAFETY: comparing two transaction IDs.
            let since = |run: u32| xmin.is_some_and(|x| unsafe { pg_sys::TransactionIdFollowsOrEquals(x, run.into()) });
            done.examined += i64::from(!spec.run_xid.is_some_and(since));
            return true;
        }
        done.examined += 1;
        let Some(Examined { digest, after }) =
            examine(datum, spec.method, decision, spec.dry_run, values.as_deref_mut())
        else {
            return true;
        };
        if spec.dry_run {
            done.bytes_before += size as i64;
            done.bytes_after += after as i64;
            done.rewritten += 1;
            if let Some(wal) = wal.as_deref_mut() {
                // the rest of the row is written again too: its length but this value's
                let rest = row_length.saturating_sub(if external { TOAST_POINTER_SIZE } else { size });
                wal.row(rel, block, datum, rest, after);
            }
        }
        bytes += digest.len as i64;
        picked.push(Picked { tid, digest, stored: size as i64 });
        if stop_at.is_none() && (picked.len() as u64 >= u64::from(spec.batch_rows) || bytes >= spec.batch_bytes) {
            stop_at = Some(block);
        }
        true
    });
    (picked, next_block)
}
