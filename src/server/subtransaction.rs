//! Work whose ERROR must not end the statement, run as PL/pgSQL runs a block with an EXCEPTION
//! clause: in an internal subtransaction. Read-only work ([`rolled_back`]) is rolled back once
//! its value is copied out, which frees what it held (locks, buffer pins, files, memory of the
//! subtransaction); work that writes ([`retried`]) keeps what it did when it succeeds, and is
//! rolled back whole (the owner switch and GUC nest level it opened with it) when it fails.

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

/// `f` in an internal subtransaction, kept when it returns, rolled back and run again (at most
/// `tries` times in all) when its ERROR has SQLSTATE `again`; `on_retry` is told each failed
/// try's number and message first. Any other ERROR, and the last try's, is raised again after
/// the rollback, as are a cancel, a timeout, a shutdown and a Rust panic. Nothing of a failed
/// try is kept: the caller's state must be what `f` returns, not what it changed on the way.
pub fn retried<T>(
    tries: u32,
    again: pgrx::PgSqlErrorCode,
    mut on_retry: impl FnMut(u32, &str),
    mut f: impl FnMut() -> T,
) -> T {
    for attempt in 1.. {
        // SAFETY: as in rolled_back.
        let (context, owner) = unsafe { (pg_sys::CurrentMemoryContext, pg_sys::CurrentResourceOwner) };
        // SAFETY: as in rolled_back.
        unsafe {
            pg_sys::BeginInternalSubTransaction(std::ptr::null());
            pg_sys::MemoryContextSwitchTo(context);
        }
        // SAFETY: the context and owner saved above outlive the subtransaction.
        let restore = move || unsafe {
            pg_sys::MemoryContextSwitchTo(context);
            pg_sys::CurrentResourceOwner = owner;
        };
        let outcome = PgTryBuilder::new(AssertUnwindSafe(|| {
            let value = f();
            // SAFETY: the subtransaction begun above is the current one; its work is kept.
            unsafe { pg_sys::ReleaseCurrentSubTransaction() };
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
            Err(Box::new(error))
        })
        .execute();
        match outcome {
            Ok(value) => return value,
            Err(error) => {
                let retry = match error.as_ref() {
                    CaughtError::PostgresError(report) | CaughtError::ErrorReport(report) => {
                        (report.sql_error_code() == again && attempt < tries).then(|| report.message().to_string())
                    }
                    CaughtError::RustPanic { .. } => None,
                };
                match retry {
                    Some(message) => on_retry(attempt, &message),
                    None => error.rethrow(),
                }
            }
        }
    }
    unreachable!("the loop returns or raises")
}
