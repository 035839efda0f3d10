//! What one batch of `compresslab.recompress` does to the server: reads a block range of a
//! table, picks the values a new write would store differently
//! ([`compresslab_core::rewrite::decide`]), rewrites each as a fresh copy of itself with an
//! UPDATE that touches only the row version it read (its `ctid` and `xmin`: a row another
//! session changed meanwhile is skipped, never overwritten), and reads each new version back to
//! compare its digest, all in the caller's transaction. Row locks only.

use std::ffi::{c_char, CString};

use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::rewrite::{self, Decision, Digest, StoredValue};
use compresslab_core::scenarios::toast::TOAST_TUPLE_THRESHOLD;
use pgrx::prelude::*;
use pgrx::{FromDatum, IntoDatum, PgRelation, PgSqlErrorCode};

use super::names::{quote_identifier, relation_name};
use super::pages::relation_blocks;
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
          WHERE t.ctid OPERATOR(pg_catalog.>=) $1::pg_catalog.tid AND t.ctid OPERATOR(pg_catalog.<) $2::pg_catalog.tid \
            AND t.{col} IS NOT NULL \
          ORDER BY t.ctid"
    );
    let threshold = row_threshold(rel);
    let (mut picked, mut bytes, mut stop_at) = (Vec::new(), 0i64, None::<u64>);
    let mut next_block = end;
    Spi::connect(|_| {
        let plan = kept_plan(&query, &[pg_sys::TEXTOID, pg_sys::TEXTOID]);
        let bounds = [format!("({},0)", spec.first_block), format!("({end},0)")];
        let rows = execute(plan, &bounds.map(|b| b.into_datum()), true);
        for row in 0..rows {
            check_for_interrupts!();
            let ctid = text_column(row, 1).unwrap_or_default();
            let block = rewrite::ctid_block(&ctid).unwrap_or(end);
            if let Some(last) = stop_at {
                if block > last {
                    next_block = block;
                    break;
                }
            }
            let Some(datum) = column(row, 3) else { continue };
            let method = text_column(row, 4);
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
            let xmin = text_column(row, 2).unwrap_or_default();
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
/// `xmin` test and is skipped), then reads each new version back: it must hold the digest of
/// the value picked from the version it replaced (RETURNING names the picked row of each).
///
/// A superuser rewriting another role's table runs the UPDATE as that role, in a
/// security-restricted operation (as PostgreSQL runs VACUUM and ANALYZE): the table's index
/// expressions, constraints and triggers are its owner's code, which must not run with a
/// superuser's rights when the advice's CALL is pasted. The statement is prepared first, as
/// the caller (names are looked up then).
fn rewrite_picked(table: &str, column_name: &str, owner: pg_sys::Oid, picked: &[Picked], done: &mut BatchDone) {
    let col = quote_identifier(column_name);
    // A join with the picked (ctid, xmin) pairs: a TID scan per pair (the generic plan), where
    // `ctid = ANY (...)` with the pair's xmin looked up by array_position() cost a batch of n
    // rows n²/2 comparisons. Under EvalPlanQual (a row updated meanwhile) the xmin test fails.
    let update = format!(
        "UPDATE ONLY {table} t SET {col} = compresslab.fresh_copy(t.{col}) \
           FROM ROWS FROM (pg_catalog.unnest($1::pg_catalog.text[]::pg_catalog.tid[]), \
                           pg_catalog.unnest($2::pg_catalog.text[]::pg_catalog.xid[])) WITH ORDINALITY AS p(ctid, xmin, n) \
          WHERE t.ctid OPERATOR(pg_catalog.=) p.ctid AND t.xmin OPERATOR(pg_catalog.=) p.xmin \
         RETURNING p.n, t.ctid::pg_catalog.text"
    );
    let read_back = format!(
        "SELECT p.n, t.{col} \
           FROM pg_catalog.unnest($1::pg_catalog.text[]::pg_catalog.tid[]) WITH ORDINALITY AS p(ctid, n) \
           JOIN ONLY {table} t ON t.ctid OPERATOR(pg_catalog.=) p.ctid"
    );
    let ctids: Vec<String> = picked.iter().map(|p| p.ctid.clone()).collect();
    let xmins: Vec<String> = picked.iter().map(|p| p.xmin.clone()).collect();
    Spi::connect(|_| {
        let update = kept_plan(&update, &[pg_sys::TEXTARRAYOID, pg_sys::TEXTARRAYOID]);
        let read_back = kept_plan(&read_back, &[pg_sys::TEXTARRAYOID]);
        let as_owner = AsOwner::enter(owner);
        let updated = execute(update, &[ctids.into_datum(), xmins.into_datum()], false);
        // (index into picked, its new row version)
        let mut rewritten: Vec<(usize, String)> = (0..updated)
            .filter_map(|row| {
                let n = typed_column::<i64>(row, 1)?;
                Some((usize::try_from(n - 1).ok().filter(|&i| i < picked.len())?, text_column(row, 2)?))
            })
            .collect();
        drop(as_owner);
        if rewritten.len() as u64 != updated {
            corrupted(table, "is missing")
        }
        done.skipped += (picked.len() - rewritten.len()) as i64;
        let new_ctids: Vec<String> = rewritten.iter_mut().map(|(_, ctid)| std::mem::take(ctid)).collect();
        let rows = execute(read_back, &[new_ctids.into_datum()], false);
        let mut seen = vec![false; rewritten.len()];
        for row in 0..rows {
            check_for_interrupts!();
            let Some(at) = typed_column::<i64>(row, 1)
                .and_then(|n| usize::try_from(n - 1).ok())
                .filter(|&i| i < rewritten.len() && !seen[i])
            else {
                corrupted(table, "is read back twice")
            };
            seen[at] = true;
            let Some(datum) = column(row, 2) else { corrupted(table, "reads back as NULL") };
            let (_, size) = stored_form(datum);
            let Some((digest, _)) = examine(datum, 0, Decision::Rewrite, false) else {
                corrupted(table, "cannot be read")
            };
            let was = &picked[rewritten[at].0];
            if digest != was.digest {
                corrupted(table, "reads back different bytes")
            }
            done.rewritten += 1;
            done.bytes_before += was.stored;
            done.bytes_after += size as i64;
        }
        if seen.iter().any(|s| !s) {
            corrupted(table, "is missing")
        }
    });
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
