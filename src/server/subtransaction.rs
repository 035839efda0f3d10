//! Read-only work whose ERROR must not end the statement, run as PL/pgSQL runs a block with an
//! EXCEPTION clause: in an internal subtransaction, rolled back once its value is copied out,
//! which frees what the work held (locks, buffer pins, files, memory of the subtransaction).

use std::panic::AssertUnwindSafe;

use pgrx::pg_sys::panic::CaughtError;
use pgrx::prelude::*;

/// Whether an ERROR must end the statement however it was caught: a cancel, a timeout or a
/// shutdown (class 57, operator intervention), or a Rust panic (a bug, not a condition).
fn must_end_statement(error: &CaughtError) -> bool {
    match error {
        CaughtError::PostgresError(report) | CaughtError::ErrorReport(report) => {
            (report.sql_error_code() as i32 & 0xfff) == (pgrx::PgSqlErrorCode::ERRCODE_QUERY_CANCELED as i32 & 0xfff)
        }
        CaughtError::RustPanic { .. } => true,
    }
}

/// `f` in an internal subtransaction, rolled back when `f` returns as when it raises an ERROR:
/// its value (copied out; for read-only work), or the message (and hint) of its ERROR. The
/// rollback frees what `f` held (each relation's AccessShareLock) now rather than at the end of
/// the transaction. A cancel, a timeout, a shutdown or a Rust panic is raised again, after the
/// rollback.
pub fn rolled_back<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    // SAFETY: as PL/pgSQL's exec_stmt_block: the memory context and resource owner of the
    // caller are saved before the subtransaction starts and restored after it ends, either
    // way; the caller's allocations stay in the caller's context.
    let (context, owner) = unsafe { (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner) };
    // SAFETY: as above; a NULL name is an unnamed subtransaction.
    unsafe {
        pg_sys::BeginInternalSubTransaction(std::ptr::null());
        pg_sys::MemoryContextSwitchTo(context);
    }
    // SAFETY: the context and owner saved above outlive the subtransaction.
    let restore = move || unsafe {
        pg_sys::MemoryContextSwitchTo(context);
        pg_sys::CurrentResourceOwner = owner;
    };
    PgTryBuilder::new(AssertUnwindSafe(|| {
        let value = f();
        // SAFETY: the subtransaction begun above is the current one.
        unsafe { pg_sys::RollbackAndReleaseCurrentSubTransaction() };
        restore();
        Ok(value)
    }))
    .catch_others(move |error| {
        // SAFETY: the caller's context, saved above.
        unsafe { pg_sys::MemoryContextSwitchTo(context) };
        // SAFETY: the ERROR's state was copied and flushed when it was caught; the
        // subtransaction begun above is the current one.
        unsafe { pg_sys::RollbackAndReleaseCurrentSubTransaction() };
        restore();
        if must_end_statement(&error) {
            error.rethrow()
        }
        let (CaughtError::PostgresError(report) | CaughtError::ErrorReport(report)) = &error else {
            unreachable!("a Rust panic was raised again")
        };
        Err(match report.hint() {
            Some(hint) => format!("{} (HINT: {hint})", report.message()),
            None => report.message().to_string(),
        })
    })
    .execute()
}
