//! What one batch of `compresslab.recompress` does to the server: one UPDATE over a block
//! range of a table that rewrites, as a fresh copy of itself, each value a new write would store
//! differently ([`compresslab_core::rewrite::decide`], in its WHERE: [`wanted`]), then reads
//! each new row version back as stored to compare it with the digest of the very row version it
//! replaced (taken while copying it: [`copy`]), all in the caller's transaction. Row locks only.
//! A row another session changed meanwhile is decided on and copied again in its newest version
//! (PostgreSQL's EvalPlanQual), never overwritten with a value read earlier.

use std::ffi::{c_char, CString};

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::rewrite::{self, Decision, Digest, StoredValue};
use compresslab_core::scenarios::toast::TOAST_TUPLE_THRESHOLD;
use pgrx::prelude::*;
use pgrx::{FromDatum, IntoDatum, PgRelation, PgSqlErrorCode};

use super::heap;
use super::names::{quote_identifier, relation_name};
use super::owner::{as_owner, owner_of};
use super::pages::relation_blocks;
use super::privileges::permission_denied;
use super::sampling::{compression_method, spi_failed};
use super::spi;
use crate::errors::report;

unsafe extern "C-unwind" {
    /// TOAST's own compression of a plain value with a method ('p' pglz, 'l' lz4): the
    /// compressed copy, or a NULL pointer where TOAST would store the value raw. Exported by
    /// the server; called through `pg_guard_ffi_boundary`, as it may raise an ERROR.
    fn toast_compress_datum(value: pg_sys::Datum, cmethod: c_char) -> pg_sys::Datum;
}

/// What to do: one batch of `column` of the table `relid` from `first_block`, of at most
/// `batch_rows` rows and `batch_bytes` bytes of values (ending at a block boundary).
pub struct BatchSpec<'a> {
    pub relid: pg_sys::Oid,
    pub column: &'a str,
    pub method: &'a str,
    pub first_block: u64,
    pub batch_rows: u32,
    pub batch_bytes: i64,
    pub dry_run: bool,
}

/// What a batch did. `bytes_after` is what the rewritten values store (a dry run: what TOAST's
/// compression of each gives); `wal_total` the WAL this backend has written since it started.
#[derive(Debug, Default)]
pub struct BatchDone {
    pub next_block: u64,
    pub total_blocks: u64,
    pub examined: i64,
    pub rewritten: i64,
    pub skipped: i64,
    pub bytes_before: i64,
    pub bytes_after: i64,
    pub wal_total: i64,
    /// A dry run: the WAL the rewrite would write (each new row version in full, its new value
    /// compressed, and a row's records).
    pub wal_estimate: i64,
}

/// What a pointer to the TOAST table takes in its row.
const TOAST_POINTER_BYTES: usize = 18;

/// The batch this backend's UPDATE is rewriting: what [`wanted`] decides with and counts, and
/// the digests [`copy`] took, one per new row version (`RETURNING ... recompress_copied()`).
struct Rewriting {
    rel: pg_sys::Relation,
    method: String,
    cmethod: c_char,
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
        match rewrite::decide(value, &r.method, r.threshold) {
            Decision::Keep => return false,
            Decision::TryCompress if examine(datum, r.cmethod, Decision::TryCompress, false).is_none() => return false,
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
    // SAFETY: a non-NULL varlena; pg_detoast_datum_copy returns a palloc'd plain copy in the
    // caller's context, whose bytes are read here.
    let (copy, digest) = unsafe {
        let copy = pg_sys::pg_detoast_datum_copy(datum.cast_mut_ptr());
        let len = pgrx::varlena::varsize_any_exhdr(copy);
        let bytes = std::slice::from_raw_parts(pgrx::varlena::vardata_any(copy) as *const u8, len);
        (copy, Digest::of(bytes))
    };
    REWRITING.with_borrow_mut(|state| {
        if let Some(r) = state.as_mut() {
            r.pending = Some((digest, stored as i64));
        }
    });
    pg_sys::Datum::from(copy)
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

pub fn run_batch(spec: &BatchSpec) -> BatchDone {
    let lock = if spec.dry_run { pg_sys::AccessShareLock } else { pg_sys::RowExclusiveLock };
    // SAFETY: the caller checked the OID names a table; the lock is held to the transaction's end.
    let rel = unsafe { PgRelation::with_lock(spec.relid, lock as pg_sys::LOCKMODE) };
    let table = relation_name(spec.relid)
        .unwrap_or_else(|| report(PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE, "the table was dropped".into(), None));
    let attnum = check_caller(&rel, &table, spec.column, spec.dry_run);
    let total = relation_blocks(&rel) as u64;
    let mut done = BatchDone { total_blocks: total, next_block: spec.first_block.min(total), ..BatchDone::default() };
    if spec.first_block >= total {
        done.wal_total = wal_written();
        return done;
    }
    let end = rewrite::scan_end(spec.first_block, total, rows_per_block(&rel), spec.batch_rows);
    let cmethod = ToastCompression::from_setting(spec.method).map_or(b'p', ToastCompression::attcompression) as c_char;
    if spec.dry_run {
        done.next_block = pick(&rel, spec, i32::from(attnum), end, cmethod, &mut done);
    } else {
        rewrite_range(&rel, &table, spec, i32::from(attnum), end, cmethod, &mut done);
    }
    done.wal_total = wal_written();
    done
}

/// What the caller must be allowed before a batch reads `column` of `rel` without a query (a
/// dry run's heap scan) or rewrites it as the table's owner: SELECT on the column, and UPDATE
/// unless it only reads; and no row-level security applying to it, since neither the heap
/// scan nor the owner's UPDATE would apply the caller's policies. Returns the column's number.
pub fn check_caller(rel: &PgRelation, table: &str, column: &str, dry_run: bool) -> i16 {
    let name = CString::new(column).unwrap_or_else(|_| corrupted(table, "has a column name with a NUL byte"));
    // SAFETY: a catalog lookup of an open relation's column.
    let attnum = unsafe { pg_sys::get_attnum(rel.oid(), name.as_ptr()) };
    if attnum <= 0 {
        report(
            PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
            format!("{table} has no column {}", quote_identifier(column)),
            None,
        )
    }
    let may = |mode: u32| {
        // SAFETY: privilege lookups of an open relation and its column, as the current user.
        unsafe {
            let user = pg_sys::GetUserId();
            pg_sys::pg_class_aclcheck(rel.oid(), user, mode as pg_sys::AclMode) == pg_sys::AclResult::ACLCHECK_OK
                || pg_sys::pg_attribute_aclcheck(rel.oid(), attnum, user, mode as pg_sys::AclMode)
                    == pg_sys::AclResult::ACLCHECK_OK
        }
    };
    if !may(pg_sys::ACL_SELECT) || !(dry_run || may(pg_sys::ACL_UPDATE)) {
        permission_denied(
            format!("permission denied for table {table}"),
            "recompress reads the column (SELECT) and rewrites it (UPDATE) in each table holding its rows: the table's owner, or a role granted both on the column.",
        );
    }
    refuse_row_security(rel, table);
    if !dry_run {
        require_owner_usage(rel, table);
    }
    attnum
}

/// Refuses the rewrite of a table with row-level security enabled by a caller who is not its
/// owner while the owner may not use compresslab's schema: PostgreSQL's plan cache analyses the
/// UPDATE again for the role that runs it where policies might apply, and as the owner the
/// names of the UPDATE's functions (in compresslab's schema) would not be found.
fn require_owner_usage(rel: &PgRelation, table: &str) {
    let owner = owner_of(rel);
    // SAFETY: rd_rel is valid for an open relation; the backend's current user.
    let (row_security, user) = unsafe { ((*rel.rd_rel).relrowsecurity, pg_sys::GetUserId()) };
    if !row_security || owner == user {
        return;
    }
    // the schema the UPDATE names its functions with
    let found = spi::select_two::<bool, String>(
        "SELECT pg_catalog.has_schema_privilege($1, 'compresslab', 'USAGE'), \
                pg_catalog.format('GRANT USAGE ON SCHEMA compresslab TO %I', pg_catalog.pg_get_userbyid($1))",
        &[owner.into()],
    )
    .unwrap_or_else(|e| spi_failed(e));
    if let (Some(false), Some(grant)) = found {
        permission_denied(
            format!("the owner of table {table}, which has row-level security enabled, may not use compresslab's schema"),
            &format!("The rewrite runs as the table's owner, for whom PostgreSQL analyses the statement again where policies might apply: {grant}, or run recompress as the owner."),
        );
    }
}

/// Refuses a caller to whom row-level security applies on `rel` and who is not its owner: as
/// the owner, the rewrite would reach rows the caller cannot see.
fn refuse_row_security(rel: &PgRelation, table: &str) {
    // SAFETY: the backend's current user.
    let user = unsafe { pg_sys::GetUserId() };
    if heap::row_security_applies(rel.oid()) && owner_of(rel) != user {
        permission_denied(
            format!("row-level security applies to you on table {table}"),
            "recompress reads and rewrites every row of the table, as its owner: run it as the table's owner, or as a role that bypasses row-level security (a superuser, or BYPASSRLS).",
        );
    }
}

/// The WAL this backend has written since it started (PostgreSQL's `pgWalUsage`).
fn wal_written() -> i64 {
    // SAFETY: a counter of this backend, read in its own (single) thread.
    unsafe { pg_sys::pgWalUsage.wal_bytes as i64 }
}

fn rows_per_block(rel: &PgRelation) -> Option<f64> {
    // SAFETY: rd_rel is valid for an open relation.
    let (tuples, pages) = unsafe { ((*rel.rd_rel).reltuples as f64, (*rel.rd_rel).relpages as f64) };
    (tuples > 0.0 && pages > 0.0).then(|| tuples / pages)
}

/// The row length over which TOAST compresses a value: `TOAST_TUPLE_THRESHOLD`, or the
/// table's `toast_tuple_target` if larger.
fn row_threshold(rel: &PgRelation) -> usize {
    // SAFETY: rd_options of an open table is NULL or its StdRdOptions.
    let target = unsafe {
        let options = rel.rd_options as *const pg_sys::StdRdOptions;
        if options.is_null() {
            0
        } else {
            (*options).toast_tuple_target.max(0) as usize
        }
    };
    TOAST_TUPLE_THRESHOLD.max(target)
}

/// A dry run's batch: counts into `done` the values of blocks `spec.first_block..end` a new
/// write would change, in physical order, up to the batch's rows and bytes (the block where a
/// limit is reached is read to its end), and what rewriting them would store and write. Returns
/// the block the next batch starts at. The rows are read by a heap scan: no query is planned,
/// so none of the owner's code runs (the caller's privileges were checked).
fn pick(rel: &PgRelation, spec: &BatchSpec, attnum: i32, end: u64, cmethod: c_char, done: &mut BatchDone) -> u64 {
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
        let Some((digest, after)) = examine(datum, cmethod, decision, true) else { return true };
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
fn rewrite_range(
    rel: &PgRelation,
    table: &str,
    spec: &BatchSpec,
    attnum: i32,
    end: u64,
    cmethod: c_char,
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
            method: spec.method.to_string(),
            cmethod,
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
                examine(datum, 0, Decision::Rewrite, false).map(|(digest, _)| (digest, size)).ok_or("cannot be read")
            }
        };
        if buffer != pg_sys::InvalidBuffer as pg_sys::Buffer {
            pg_sys::ReleaseBuffer(buffer);
        }
        result
    }
}

/// Whether a stored value is a pointer to the TOAST table, and its `pg_column_size`.
fn stored_form(datum: pg_sys::Datum) -> (bool, usize) {
    // SAFETY: a non-NULL varlena as the table stores it; only its header (and, for a
    // pointer, the pointer) is read.
    unsafe { (*(datum.cast_mut_ptr::<u8>()) == 0x01, pg_sys::toast_datum_size(datum)) }
}

/// The digest of a value's bytes and what TOAST's compression with the target method stores
/// (its compressed size, or the raw size where TOAST would keep it raw); None for a value
/// stored raw that the method does not shrink (a new write stores it the same).
fn examine(datum: pg_sys::Datum, cmethod: c_char, decision: Decision, dry_run: bool) -> Option<(Digest, usize)> {
    // SAFETY: the datum is a varlena; pg_detoast_datum_packed returns it unchanged or a plain
    // palloc'd copy, freed here. toast_compress_datum takes a plain (possibly short-header)
    // value and returns NULL or a palloc'd compressed copy, freed here.
    unsafe {
        let original = datum.cast_mut_ptr::<pg_sys::varlena>();
        let plain = pg_sys::pg_detoast_datum_packed(original);
        let len = pgrx::varlena::varsize_any_exhdr(plain);
        let bytes = std::slice::from_raw_parts(pgrx::varlena::vardata_any(plain) as *const u8, len);
        let digest = Digest::of(bytes);
        let mut after = len + 4;
        if decision == Decision::TryCompress || dry_run {
            let compressed =
                pg_sys::ffi::pg_guard_ffi_boundary(|| toast_compress_datum(pg_sys::Datum::from(plain), cmethod));
            if compressed.is_null() {
                if decision == Decision::TryCompress {
                    if plain != original {
                        pg_sys::pfree(plain.cast());
                    }
                    return None;
                }
            } else {
                after = pgrx::varlena::varsize_any(compressed.cast_mut_ptr());
                pg_sys::pfree(compressed.cast_mut_ptr());
            }
        }
        if plain != original {
            pg_sys::pfree(plain.cast());
        }
        Some((digest, after))
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

/// Statements planned once per backend, generically (for any value of their parameters), and
/// kept (`SPI_keepplan`): a batch runs the same four statements of a table, which custom
/// plans planned anew each time, and for which the planner, pricing a batch's thousand TIDs
/// as random reads, chose a sequential scan of the whole table for each batch (on tables of
/// up to a few thousand pages). The generic plans read by TID. Keyed by the statement's text
/// (the table's and column's names as they are now); the oldest is freed past `KEPT_PLANS`.
/// PostgreSQL's plan cache replans them after DDL on the table, and for another role when
/// row-level security applies.
const KEPT_PLANS: usize = 12;

thread_local! {
    static PLANS: std::cell::RefCell<Vec<(String, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

pub(crate) fn kept_plan(query: &str, argtypes: &[pg_sys::Oid]) -> pg_sys::SPIPlanPtr {
    let found = PLANS.with_borrow(|plans| plans.iter().position(|(q, _)| q == query));
    if let Some(at) = found {
        let plan = PLANS.with_borrow(|plans| plans[at].1) as pg_sys::SPIPlanPtr;
        // SAFETY: a kept plan. One that DDL invalidated is prepared anew here, as the caller,
        // rather than analysed again when it runs (perhaps as the table's owner).
        if unsafe { pg_sys::SPI_plan_is_valid(plan) } {
            return plan;
        }
        PLANS.with_borrow_mut(|plans| plans.remove(at));
        // SAFETY: the plan was kept, and is no longer listed.
        unsafe { pg_sys::SPI_freeplan(plan) };
    }
    let text = CString::new(query).unwrap_or_else(|_| corrupted("a statement", "holds a NUL byte"));
    let mut types = argtypes.to_vec();
    // SAFETY: within an SPI connection; a NULL plan is an error reported by SPI_result. The
    // kept plan lives in its own context under CacheMemoryContext until SPI_freeplan.
    unsafe {
        let plan = pg_sys::SPI_prepare_cursor(
            text.as_ptr(),
            types.len() as i32,
            types.as_mut_ptr(),
            pg_sys::CURSOR_OPT_GENERIC_PLAN as i32,
        );
        if plan.is_null() || pg_sys::SPI_keepplan(plan) != 0 {
            spi_status(pg_sys::SPI_result)
        }
        PLANS.with_borrow_mut(|plans| {
            if plans.len() >= KEPT_PLANS {
                let (_, oldest) = plans.remove(0);
                pg_sys::SPI_freeplan(oldest as pg_sys::SPIPlanPtr);
            }
            plans.push((query.to_string(), plan as usize));
        });
        plan
    }
}

/// Runs a kept plan with `args` (none NULL): the rows it returns, in `SPI_tuptable`, read by
/// [`column`] until the next statement.
pub(crate) fn execute(plan: pg_sys::SPIPlanPtr, args: &[Option<pg_sys::Datum>], read_only: bool) -> u64 {
    let mut values: Vec<pg_sys::Datum> = args.iter().map(|a| a.unwrap_or(pg_sys::Datum::from(0usize))).collect();
    let nulls: Vec<c_char> = args.iter().map(|a| if a.is_some() { b' ' } else { b'n' } as c_char).collect();
    // SAFETY: a kept plan, with as many values as it has parameters, of its types.
    unsafe {
        let status = pg_sys::SPI_execute_plan(plan, values.as_mut_ptr(), nulls.as_ptr(), read_only, 0);
        if status < 0 {
            spi_status(status)
        }
        pg_sys::SPI_processed
    }
}

/// Column `n` (from 1) of row `row` of the last statement's result; None for NULL.
pub(crate) fn column(row: u64, n: i32) -> Option<pg_sys::Datum> {
    // SAFETY: `row` is below SPI_processed of the statement just run, whose SPI_tuptable holds it.
    unsafe {
        let table = pg_sys::SPI_tuptable;
        let tuple = *(*table).vals.add(row as usize);
        let mut null = false;
        let datum = pg_sys::SPI_getbinval(tuple, (*table).tupdesc, n, &mut null);
        (!null).then_some(datum)
    }
}

/// Column `n` of row `row` of the last statement's result as a `T`, the column's type (text:
/// String, int2: i16, int4: i32, int8: i64); None for NULL.
pub(crate) fn typed_column<T: FromDatum>(row: u64, n: i32) -> Option<T> {
    // SAFETY: a non-NULL datum of the column, whose type the caller names with T.
    column(row, n).and_then(|d| unsafe { T::from_datum(d, false) })
}

pub(crate) fn text_column(row: u64, n: i32) -> Option<String> {
    typed_column(row, n)
}

fn spi_status(status: i32) -> ! {
    // SAFETY: SPI_result_code_string returns a static string for any code.
    let text = unsafe { std::ffi::CStr::from_ptr(pg_sys::SPI_result_code_string(status)) };
    report(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("recompress: SPI failed: {}", text.to_string_lossy()), None)
}

fn corrupted(table: &str, what: &str) -> ! {
    report(
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        format!("recompress: a value of {table} {what} after its rewrite; the batch is rolled back"),
        Some("Nothing of this batch is kept. Check the server's log and hardware before running recompress again."),
    )
}
