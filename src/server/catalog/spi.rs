//! Internal queries through SPI, with one failure path: a query that fails raises its own
//! ERROR (its SQLSTATE kept); SPI's own result codes and pgrx's SPI errors (a statement that
//! cannot be prepared, a result not of the expected type) are internal errors, XX000
//! ([`spi_failed`], [`spi_status`]).
//!
//! Read-only queries of one row ([`select_one`] ...): pgrx's `Spi::get_one*` run their query
//! as an update, which first assigns the transaction an ID: PostgreSQL refuses that on a
//! standby ("cannot assign TransactionIds during recovery") and in the leader of a parallel
//! query ("cannot assign XIDs during a parallel operation"), and elsewhere it spends an XID on
//! a read. These run the query read-only, as `Spi::connect`'s `select` does.
//!
//! Statements a batch of `recompress` runs again and again are kept planned ([`kept_plan`],
//! [`run_kept`]).

use std::ffi::{c_char, CStr, CString};

use pgrx::datum::{DatumWithOid, FromDatum, IntoDatum};
use pgrx::spi::{Spi, SpiResult};
use pgrx::{pg_sys, PgSqlErrorCode};

use crate::errors::report;

/// The first column of the query's first row.
pub fn select_one<A: FromDatum + IntoDatum>(query: &str, args: &[DatumWithOid<'_>]) -> SpiResult<Option<A>> {
    Spi::connect(|client| client.select(query, Some(1), args)?.first().get_one())
}

/// The first three columns of the query's first row.
pub fn select_three<A: FromDatum + IntoDatum, B: FromDatum + IntoDatum, C: FromDatum + IntoDatum>(
    query: &str,
    args: &[DatumWithOid<'_>],
) -> SpiResult<(Option<A>, Option<B>, Option<C>)> {
    Spi::connect(|client| client.select(query, Some(1), args)?.first().get_three())
}

/// The first `n` columns of the query's first row, each a float8 or NULL.
pub fn select_floats(query: &str, n: usize) -> SpiResult<Vec<Option<f64>>> {
    Spi::connect(|client| {
        let row = client.select(query, Some(1), &[])?.first();
        (1..=n).map(|i| row.get::<f64>(i)).collect()
    })
}

/// A failed internal query (pgrx's SPI error), as an ERROR: XX000.
pub fn spi_failed(e: pgrx::spi::SpiError) -> ! {
    report(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("internal query failed: {e}"), None)
}

/// An SPI result code that is an error, as an ERROR: XX000.
fn spi_status(status: i32) -> ! {
    // SAFETY: SPI_result_code_string returns a static string for any code.
    let text = unsafe { CStr::from_ptr(pg_sys::SPI_result_code_string(status)) };
    report(PgSqlErrorCode::ERRCODE_INTERNAL_ERROR, format!("internal query failed: {}", text.to_string_lossy()), None)
}

/// Statements planned once per backend, generically (for any value of their parameters), and
/// kept (`SPI_keepplan`): a batch runs the same four statements of a table, which custom
/// plans planned anew each time, and for which the planner, pricing a batch's thousand TIDs
/// as random reads, chose a sequential scan of the whole table for each batch (on tables of
/// up to a few thousand pages). The generic plans read by TID. Keyed by the statement's text
/// (the table's and column's names as they are now); the oldest is freed past `KEPT_PLANS`.
/// PostgreSQL's plan cache replans them after DDL on the table, and for another role when
/// row-level security applies.
const KEPT_PLANS: usize = 24;

thread_local! {
    static PLANS: std::cell::RefCell<Vec<(String, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

pub fn kept_plan(query: &str, argtypes: &[pg_sys::Oid]) -> pg_sys::SPIPlanPtr {
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
    let text = CString::new(query).unwrap_or_else(|_| spi_status(pg_sys::SPI_ERROR_ARGUMENT));
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
pub fn execute(plan: pg_sys::SPIPlanPtr, args: &[Option<pg_sys::Datum>], read_only: bool) -> u64 {
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

/// Runs `query` with `args` through its kept plan (typed by the arguments), read-write: the
/// rows it returns, read by [`column`] until the next statement. Within an SPI connection.
pub fn run_kept(query: &str, args: &[DatumWithOid<'_>]) -> u64 {
    let types: Vec<pg_sys::Oid> = args.iter().map(|a| a.oid()).collect();
    let values: Vec<Option<pg_sys::Datum>> = args.iter().map(|a| a.datum().map(|d| d.sans_lifetime())).collect();
    execute(kept_plan(query, &types), &values, false)
}

/// Column `n` (from 1) of row `row` of the last statement's result; None for NULL.
pub fn column(row: u64, n: i32) -> Option<pg_sys::Datum> {
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
pub fn typed_column<T: FromDatum>(row: u64, n: i32) -> Option<T> {
    // SAFETY: a non-NULL datum of the column, whose type the caller names with T.
    column(row, n).and_then(|d| unsafe { T::from_datum(d, false) })
}

pub fn text_column(row: u64, n: i32) -> Option<String> {
    typed_column(row, n)
}
