//! The one way compresslab runs code of a table's owner (the rewrite's UPDATE: its index
//! expressions and predicates, constraints, domain checks, triggers and rules, and the planning
//! that folds its immutable functions): as that owner, in a security-restricted operation, in a
//! GUC nest level of its own with `search_path` set to `pg_catalog, pg_temp`, as PostgreSQL's
//! VACUUM, ANALYZE and REINDEX run it (vacuum.c's `vacuum_rel`; 17's `RestrictSearchPath`,
//! applied here on every major). What the owner's code sets, even with `set_config(..., false)`,
//! is rolled back with the nest level before the caller's user returns.
//!
//! On ERROR nothing is done here: the (sub)transaction's abort pops the nest level and restores
//! the user and security context, as it does for VACUUM; so the switch is never undone in an
//! unwind or a `Drop`. A nest level cannot outlive a COMMIT: each switch lies within one call.

use std::ffi::CStr;

use pgrx::pg_sys;

/// What `search_path` is while the owner's code runs (`GUC_SAFE_SEARCH_PATH` of 17).
const SAFE_SEARCH_PATH: &CStr = c"pg_catalog, pg_temp";

/// `prepare` as the caller, then `run` with what it returned as `owner`, restricted (see the
/// module), when the current user is not `owner`; both as they are when it is. `prepare` runs
/// in the nest level already, under the restricted `search_path`: a statement it prepares (its
/// names looked up as the caller, who may use compresslab's schema) is planned in `run` under
/// the same `search_path`, so PostgreSQL's plan cache does not analyse it again as the owner.
/// The caller has checked its own privileges first: as the owner, `run` has all of the
/// owner's, and row-level security only where the owner is subject to it.
pub fn as_owner<P, T>(owner: pg_sys::Oid, prepare: impl FnOnce() -> P, run: impl FnOnce(P) -> T) -> T {
    let (mut user, mut context) = (pg_sys::InvalidOid, 0);
    // SAFETY: reads the backend's current user and security context.
    unsafe { pg_sys::GetUserIdAndSecContext(&mut user, &mut context) };
    if user == owner {
        return run(prepare());
    }
    // SAFETY: as vacuum_rel: a GUC nest level opened and search_path set in it (GUC_ACTION_SAVE:
    // undone when the level is popped). Undone below on return, or by the abort of the
    // (sub)transaction on ERROR.
    let level = unsafe {
        let level = pg_sys::NewGUCNestLevel();
        pg_sys::set_config_option(
            c"search_path".as_ptr(),
            SAFE_SEARCH_PATH.as_ptr(),
            pg_sys::GucContext::PGC_USERSET,
            pg_sys::GucSource::PGC_S_SESSION,
            pg_sys::GucAction::GUC_ACTION_SAVE,
            true,
            0,
            false,
        );
        level
    };
    let prepared = prepare();
    // SAFETY: the user and context switched as vacuum_rel does; restored below on return, or by
    // the abort of the (sub)transaction on ERROR.
    unsafe { pg_sys::SetUserIdAndSecContext(owner, context | pg_sys::SECURITY_RESTRICTED_OPERATION as i32) };
    let value = run(prepared);
    // SAFETY: pops the nest level opened above, rolling back every setting changed in it
    // (isCommit false), then restores what was read above: AtEOXact_GUC before the user, as
    // vacuum_rel does.
    unsafe {
        pg_sys::AtEOXact_GUC(false, level);
        pg_sys::SetUserIdAndSecContext(user, context);
    }
    value
}

/// The owner of relation `relid`, read from its open relation.
pub fn owner_of(rel: &pgrx::PgRelation) -> pg_sys::Oid {
    // SAFETY: rd_rel is valid for an open relation.
    unsafe { (*rel.rd_rel).relowner }
}
