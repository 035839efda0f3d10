//! What one batch of `compresslab.recompress` does to the server: reads a block range of a
//! table, picks the values a new write would store differently
//! ([`compresslab_core::rewrite::decide`]), rewrites each as a fresh copy of itself with an
//! UPDATE that touches only the row version it read (its `ctid` and `xmin`: a row another
//! session changed meanwhile is skipped, never overwritten), and reads each new version back to
//! compare its digest, all in the caller's transaction. Row locks only.

use std::ffi::c_char;

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::rewrite::{self, Decision, Digest, StoredValue};
use compresslab_core::scenarios::toast::TOAST_TUPLE_THRESHOLD;
use pgrx::pg_sys::PgBuiltInOids;
use pgrx::prelude::*;
use pgrx::{PgOid, PgRelation, PgSqlErrorCode};

use super::names::{quote_identifier, relation_name};
use super::pages::relation_blocks;
use super::sampling::spi_failed;
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

/// A value picked for rewriting: where its row version is, and what it holds.
struct Picked {
    ctid: String,
    xmin: String,
    digest: Digest,
    stored: i64,
}

pub fn run_batch(spec: &BatchSpec) -> BatchDone {
    let lock = if spec.dry_run { pg_sys::AccessShareLock } else { pg_sys::RowExclusiveLock };
    // SAFETY: the caller checked the OID names a table; the lock is held to the transaction's end.
    let rel = unsafe { PgRelation::with_lock(spec.relid, lock as pg_sys::LOCKMODE) };
    let table = relation_name(spec.relid)
        .unwrap_or_else(|| report(PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE, "the table was dropped".into(), None));
    let total = relation_blocks(&rel) as u64;
    let mut done = BatchDone { total_blocks: total, next_block: spec.first_block.min(total), ..BatchDone::default() };
    if spec.first_block >= total {
        done.wal_total = wal_written();
        return done;
    }
    let end = rewrite::scan_end(spec.first_block, total, rows_per_block(&rel), spec.batch_rows);
    let cmethod = ToastCompression::from_setting(spec.method).map_or(b'p', ToastCompression::attcompression) as c_char;
    let (picked, next_block) = pick(&rel, &table, spec, end, cmethod, &mut done);
    done.next_block = next_block;
    if !spec.dry_run && !picked.is_empty() {
        // SAFETY: rd_rel is valid for an open relation.
        let owner = unsafe { (*rel.rd_rel).relowner };
        rewrite_picked(&table, spec.column, owner, &picked, &mut done);
    }
    done.wal_total = wal_written();
    done
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

/// The values of blocks `spec.first_block..end` a new write would change, in physical order,
/// up to the batch's rows and bytes (the block where a limit is reached is read to its end),
/// and the block the next batch starts at. Counts what it read into `done`.
fn pick(
    rel: &PgRelation,
    table: &str,
    spec: &BatchSpec,
    end: u64,
    cmethod: c_char,
    done: &mut BatchDone,
) -> (Vec<Picked>, u64) {
    let col = quote_identifier(spec.column);
    let query = format!(
        "SELECT t.ctid::pg_catalog.text, t.xmin::pg_catalog.text, t.{col}, pg_catalog.pg_column_compression(t.{col}) \
           FROM ONLY {table} t \
          WHERE t.ctid OPERATOR(pg_catalog.>=) '({first},0)'::pg_catalog.tid \
            AND t.ctid OPERATOR(pg_catalog.<) '({end},0)'::pg_catalog.tid AND t.{col} IS NOT NULL \
          ORDER BY t.ctid",
        first = spec.first_block
    );
    let threshold = row_threshold(rel);
    let (mut picked, mut bytes, mut stop_at) = (Vec::new(), 0i64, None::<u64>);
    let mut next_block = end;
    Spi::connect(|client| {
        let mut rows = client.select(&query, None, &[]).unwrap_or_else(|e| spi_failed(e));
        while rows.next().is_some() {
            check_for_interrupts!();
            let ctid: String = rows.get(1).ok().flatten().unwrap_or_default();
            let block = rewrite::ctid_block(&ctid).unwrap_or(end);
            if let Some(last) = stop_at {
                if block > last {
                    next_block = block;
                    break;
                }
            }
            let Ok(Some(datum)) = rows.get_datum_by_ordinal(3) else { continue };
            let method: Option<String> = rows.get(4).ok().flatten();
            done.examined += 1;
            let (external, size) = stored_form(datum);
            let row_len = (method.is_none() && !external && size > rewrite::SMALLEST_TOASTED)
                .then(|| tuple_length(rel, &ctid))
                .flatten();
            let value = StoredValue { method: method.as_deref(), external, size, row_len };
            let decision = rewrite::decide(value, spec.method, threshold);
            if decision == Decision::Keep {
                continue;
            }
            let Some((digest, after)) = examine(datum, cmethod, decision, spec.dry_run) else { continue };
            if spec.dry_run {
                done.bytes_before += size as i64;
                done.bytes_after += after as i64;
                done.rewritten += 1;
                // the rest of the row is written again too: its length but this value's
                let row = tuple_length(rel, &ctid).unwrap_or(0);
                let rest = row.saturating_sub(if external { TOAST_POINTER_BYTES } else { size });
                done.wal_estimate += (rest + after) as i64 + rewrite::WAL_BYTES_PER_ROW as i64;
            }
            bytes += digest.len as i64;
            let xmin: String = rows.get(2).ok().flatten().unwrap_or_default();
            picked.push(Picked { ctid, xmin, digest, stored: size as i64 });
            if stop_at.is_none() && (picked.len() as u32 >= spec.batch_rows || bytes >= spec.batch_bytes) {
                stop_at = Some(block);
            }
        }
    });
    (picked, next_block)
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

/// The length of the row version at `ctid` as stored (its line pointer's length), None if the
/// slot holds no row now.
fn tuple_length(rel: &PgRelation, ctid: &str) -> Option<usize> {
    let inner = ctid.strip_prefix('(')?.strip_suffix(')')?;
    let (block, offset) = inner.split_once(',')?;
    let (block, offset): (u32, usize) = (block.parse().ok()?, offset.parse().ok()?);
    // SAFETY: the relation is open and locked and the block below its size (a row was just
    // read from it); the buffer is pinned and share-locked while the page is read, then
    // released.
    unsafe {
        let buffer = pg_sys::ReadBufferExtended(
            rel.as_ptr(),
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

/// Rewrites the picked values as fresh copies of themselves in one UPDATE, each only in the
/// row version it was read from (a row another session changed meanwhile fails the `ctid` and
/// `xmin` test and is skipped), then reads the new versions back: each must hold the digest
/// of a value picked (a multiset: values are matched, not rows, since RETURNING names only
/// the new row versions).
///
/// A superuser rewriting another role's table runs the UPDATE as that role, in a
/// security-restricted operation (as PostgreSQL runs VACUUM and ANALYZE): the table's index
/// expressions, constraints and triggers are its owner's code, which must not run with a
/// superuser's rights when the advice's CALL is pasted. The statement is prepared first, as
/// the caller (names are looked up then).
fn rewrite_picked(table: &str, column: &str, owner: pg_sys::Oid, picked: &[Picked], done: &mut BatchDone) {
    let col = quote_identifier(column);
    let update = format!(
        "UPDATE ONLY {table} t SET {col} = compresslab.fresh_copy(t.{col}) \
          WHERE t.ctid OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.text[]::pg_catalog.tid[]) \
            AND t.xmin OPERATOR(pg_catalog.=) ($2::pg_catalog.text[]::pg_catalog.xid[])[pg_catalog.array_position( \
                $1::pg_catalog.text[]::pg_catalog.tid[], t.ctid)] \
         RETURNING t.ctid::pg_catalog.text"
    );
    let read_back =
        format!("SELECT t.{col} FROM ONLY {table} t WHERE t.ctid OPERATOR(pg_catalog.=) ANY ($1::pg_catalog.text[]::pg_catalog.tid[])");
    let ctids: Vec<String> = picked.iter().map(|p| p.ctid.clone()).collect();
    let xmins: Vec<String> = picked.iter().map(|p| p.xmin.clone()).collect();
    let mut unmatched: Vec<(Digest, i64)> = picked.iter().map(|p| (p.digest, p.stored)).collect();
    let text_array = PgOid::BuiltIn(PgBuiltInOids::TEXTARRAYOID);
    Spi::connect_mut(|client| {
        let update = client.prepare_mut(update.as_str(), &[text_array, text_array]).unwrap_or_else(|e| spi_failed(e));
        let as_owner = AsOwner::enter(owner);
        let new_ctids: Vec<String> = client
            .update(&update, None, &[ctids.into(), xmins.into()])
            .unwrap_or_else(|e| spi_failed(e))
            .filter_map(|row| row.get::<String>(1).ok().flatten())
            .collect();
        drop(as_owner);
        done.skipped += (picked.len() - new_ctids.len()) as i64;
        let expected = new_ctids.len();
        let mut rows = client.select(read_back.as_str(), None, &[new_ctids.into()]).unwrap_or_else(|e| spi_failed(e));
        let mut seen = 0;
        while rows.next().is_some() {
            check_for_interrupts!();
            let Some(datum) = rows.get_datum_by_ordinal(1).ok().flatten() else {
                corrupted(table, "reads back as NULL")
            };
            let (_, size) = stored_form(datum);
            let Some((digest, _)) = examine(datum, 0, Decision::Rewrite, false) else {
                corrupted(table, "cannot be read")
            };
            let Some(at) = unmatched.iter().position(|(d, _)| *d == digest) else {
                corrupted(table, "reads back different bytes")
            };
            let (_, stored) = unmatched.swap_remove(at);
            done.rewritten += 1;
            done.bytes_before += stored;
            done.bytes_after += size as i64;
            seen += 1;
        }
        if seen != expected {
            corrupted(table, "is missing")
        }
    });
}

/// The table's owner as the current user, in a security-restricted operation, while a
/// superuser who is not the owner rewrites; the caller again on drop (an ERROR in between is
/// undone by the transaction's abort, which restores the user).
struct AsOwner(Option<(pg_sys::Oid, i32)>);

impl AsOwner {
    fn enter(owner: pg_sys::Oid) -> AsOwner {
        // SAFETY: reads and sets the backend's current user and security context, restored
        // by Drop (or by the transaction's abort).
        unsafe {
            let (mut user, mut context) = (pg_sys::InvalidOid, 0);
            pg_sys::GetUserIdAndSecContext(&mut user, &mut context);
            if user == owner || !pg_sys::superuser() {
                return AsOwner(None);
            }
            let restricted = (pg_sys::SECURITY_LOCAL_USERID_CHANGE | pg_sys::SECURITY_RESTRICTED_OPERATION) as i32;
            pg_sys::SetUserIdAndSecContext(owner, context | restricted);
            AsOwner(Some((user, context)))
        }
    }
}

impl Drop for AsOwner {
    fn drop(&mut self) {
        if let Some((user, context)) = self.0 {
            // SAFETY: restores what enter() read.
            unsafe { pg_sys::SetUserIdAndSecContext(user, context) }
        }
    }
}

fn corrupted(table: &str, what: &str) -> ! {
    report(
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        format!("recompress: a value of {table} {what} after its rewrite; the batch is rolled back"),
        Some("Nothing of this batch is kept. Check the server's log and hardware before running recompress again."),
    )
}
