//! A batch's rewrite: the rows [`super::pick`] picked, updated in one statement with fresh
//! copies of their values (an array of the column's type joined by TID; a statement a row for
//! a column of an array type: writing a copy compresses it anew with the column's method), then
//! each new row version read back as stored, its value checked against the digest of the value
//! it replaced. A row another session changed since it was picked is not updated (its
//! version's TID no longer matches under EvalPlanQual): it is skipped, never overwritten with a
//! value read earlier, and a later pass finds it. The statement names only the table and its
//! column, so the owner it runs as needs nothing of compresslab's.

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::rewrite::{Decision, Digest};
use pgrx::prelude::*;
use pgrx::PgRelation;

use super::pick::Picked;
use super::{corrupted, examine, BatchDone, BatchSpec, Examined, Values};
use crate::server::catalog::names::quote_identifier;
use crate::server::catalog::spi::{column, execute, kept_plan};
use crate::server::owner::{as_owner, owner_of};
use crate::server::toast::stored_form;

/// Rewrites the `picked` rows of column `attnum` of `rel` and checks each new row version,
/// counting into `done` the rows rewritten and skipped and their stored bytes before and after.
///
/// A caller who is not the table's owner runs the UPDATE as the owner ([`as_owner`]: a
/// security-restricted operation in a GUC nest level of its own, as PostgreSQL runs VACUUM):
/// its planning and the table's index expressions, constraints, triggers and rules are the
/// owner's code, which must not run with the caller's rights. The statement is prepared
/// (parsed, its names looked up) first, as the caller; the planner sees it only inside the
/// switch.
pub(super) fn rewrite(
    rel: &PgRelation,
    table: &str,
    spec: &BatchSpec,
    attnum: i32,
    picked: &[Picked],
    values: &mut Values,
    done: &mut BatchDone,
) {
    let col = quote_identifier(spec.column);
    // (the picked row, its new version)
    let mut written: Vec<(usize, pg_sys::ItemPointerData)> = Vec::with_capacity(picked.len());
    Spi::connect(|_| {
        if let Some((array, array_type)) = values.array() {
            // One statement for the batch: the TIDs and their copies as two arrays, joined by a
            // TID scan a row (the plan kept is generic), unnested in a select list (a function
            // in FROM would store every copy again); RETURNING names the version replaced.
            let update = format!(
                "UPDATE ONLY {table} t SET {col} = v.value \
                   FROM (SELECT pg_catalog.unnest($1) AS tid, pg_catalog.unnest($2) AS value) AS v \
                  WHERE t.ctid OPERATOR(pg_catalog.=) v.tid RETURNING t.ctid, v.tid"
            );
            let args = [Some(tid_array(picked)), Some(array)];
            let rows = as_owner(
                owner_of(rel),
                || kept_plan(&update, &[pg_sys::TIDARRAYOID, array_type]),
                |plan| execute(plan, &args, false),
            );
            for row in 0..rows {
                let (Some(new), Some(old)) = (tid_column(row, 1), tid_column(row, 2)) else {
                    corrupted(table, "is missing")
                };
                let Ok(at) = picked.binary_search_by_key(&tid_order(old), |p| tid_order(p.tid)) else {
                    corrupted(table, "is missing")
                };
                written.push((at, new));
            }
        } else {
            // A column of an array type, whose values no array holds: a statement a row.
            let update =
                format!("UPDATE ONLY {table} SET {col} = $1 WHERE ctid OPERATOR(pg_catalog.=) $2 RETURNING ctid");
            let type_oid = super::column_type(rel, attnum as i16);
            as_owner(
                owner_of(rel),
                || kept_plan(&update, &[type_oid, pg_sys::TIDOID]),
                |plan| {
                    for (at, row) in picked.iter().enumerate() {
                        check_for_interrupts!();
                        let tid = pg_sys::Datum::from(&row.tid as *const pg_sys::ItemPointerData);
                        if execute(plan, &[values.copy(at), Some(tid)], false) == 1 {
                            let Some(new) = tid_column(0, 1) else { corrupted(table, "is missing") };
                            written.push((at, new));
                        }
                        // SAFETY: the statement's result, read above.
                        unsafe { pg_sys::SPI_freetuptable(pg_sys::SPI_tuptable) };
                    }
                },
            );
        }
    });
    if written.iter().map(|&(at, _)| at).collect::<std::collections::HashSet<_>>().len() != written.len() {
        corrupted(table, "is read back twice")
    }
    for &(at, tid) in &written {
        check_for_interrupts!();
        let (digest, size) = stored_digest(rel, tid, attnum).unwrap_or_else(|what| corrupted(table, what));
        if digest != picked[at].digest {
            corrupted(table, "reads back different bytes")
        }
        done.rewritten += 1;
        done.bytes_before += picked[at].stored;
        done.bytes_after += size as i64;
    }
    done.skipped += (picked.len() - written.len()) as i64;
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
                examine(datum, ToastCompression::Pglz, Decision::Rewrite, false, None)
                    .map(|Examined { digest, .. }| (digest, size))
                    .ok_or("cannot be read")
            }
        };
        if buffer != pg_sys::InvalidBuffer as pg_sys::Buffer {
            pg_sys::ReleaseBuffer(buffer);
        }
        result
    }
}

/// A TID's place in a heap's physical order: the order a batch picks its rows in.
fn tid_order(tid: pg_sys::ItemPointerData) -> (u32, u16) {
    ((u32::from(tid.ip_blkid.bi_hi) << 16) | u32::from(tid.ip_blkid.bi_lo), tid.ip_posid)
}

/// Column `n` of row `row` of the last statement's result, a tid.
fn tid_column(row: u64, n: i32) -> Option<pg_sys::ItemPointerData> {
    // SAFETY: a non-NULL tid, passed by reference, copied out before the result is freed.
    column(row, n).map(|d| unsafe { *d.cast_mut_ptr::<pg_sys::ItemPointerData>() })
}

/// The picked rows' TIDs as a `tid[]`.
fn tid_array(picked: &[Picked]) -> pg_sys::Datum {
    let mut elems: Vec<pg_sys::Datum> =
        picked.iter().map(|p| pg_sys::Datum::from(&p.tid as *const pg_sys::ItemPointerData)).collect();
    // SAFETY: tids passed by reference (6 bytes, short-aligned), copied into a palloc'd array.
    pg_sys::Datum::from(unsafe {
        pg_sys::construct_array(elems.as_mut_ptr(), elems.len() as i32, pg_sys::TIDOID, 6, false, b's' as _)
    })
}
