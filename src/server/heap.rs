//! A table's rows read straight from its heap, under the statement's snapshot: no query, so no
//! planner, and none of the table owner's code — index expressions and predicates, statistics
//! expressions, policies, rules — is evaluated, whoever calls. The callers check first what a
//! query would have checked (SELECT on the columns read; row-level security, which only a query
//! applies, not applying to the caller).

use pgrx::pg_sys;
use pgrx::prelude::*;

/// `each` on every row version of blocks `first..first + count` of the heap `rel` (open and
/// locked) that the statement's snapshot sees, in physical order, until it returns false. The
/// tuple's datums point into its pinned buffer: `each` copies or measures them before it returns.
/// Blocks past the relation's end (it was truncated since its size was read) are none.
pub fn scan_blocks(rel: pg_sys::Relation, first: u32, count: u32, mut each: impl FnMut(pg_sys::HeapTuple) -> bool) {
    let count = count.min(nblocks(rel).saturating_sub(first));
    if count == 0 {
        return;
    }
    // SAFETY: the caller holds the relation open and locked; the scan reads the blocks asked
    // for under the active snapshot; each tuple stays valid until the next heap_getnext; the
    // scan ends here (an ERROR in between leaves its pin to the resource owner, as any aborted
    // scan).
    unsafe {
        let flags = pg_sys::ScanOptions::SO_TYPE_SEQSCAN | pg_sys::ScanOptions::SO_ALLOW_PAGEMODE;
        let scan = pg_sys::heap_beginscan(
            rel,
            pg_sys::GetActiveSnapshot(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            flags,
        );
        pg_sys::heap_setscanlimits(scan, first, count);
        loop {
            check_for_interrupts!();
            let tuple = pg_sys::heap_getnext(scan, pg_sys::ScanDirection::ForwardScanDirection);
            if tuple.is_null() || !each(tuple) {
                break;
            }
        }
        pg_sys::heap_endscan(scan);
    }
}

/// The heap `relid` opened with AccessShareLock, or None when it was dropped meanwhile (a leaf
/// of a partitioned table detached and dropped since its tree was read). Closed by the caller
/// with [`close`]; the lock is held to the transaction's end.
pub fn open(relid: pg_sys::Oid) -> Option<pg_sys::Relation> {
    // SAFETY: try_relation_open takes the lock, then returns NULL if the relation is gone.
    let rel = unsafe { pg_sys::try_relation_open(relid, pg_sys::AccessShareLock as pg_sys::LOCKMODE) };
    (!rel.is_null()).then_some(rel)
}

pub fn close(rel: pg_sys::Relation) {
    // SAFETY: a relation [`open`] returned; its lock is kept.
    unsafe { pg_sys::relation_close(rel, pg_sys::NoLock as pg_sys::LOCKMODE) }
}

/// The relation's size in blocks of its main fork.
pub fn nblocks(rel: pg_sys::Relation) -> u32 {
    // SAFETY: an open relation with storage.
    unsafe { pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM) }
}

/// The attribute indexes (attnum - 1) of `names` in `rel`'s tuple descriptor, matched by name
/// (a partition's columns may stand at other numbers than its parent's); None for a name it
/// lacks.
pub fn attribute_indexes(rel: pg_sys::Relation, names: &[String]) -> Vec<Option<usize>> {
    // SAFETY: rd_att of an open relation; its attributes are read, not kept.
    let attributes: Vec<(String, bool)> = unsafe {
        let desc = pgrx::PgTupleDesc::from_pg_unchecked((*rel).rd_att);
        desc.iter().map(|a| (a.name().to_string(), a.is_dropped())).collect()
    };
    names.iter().map(|name| attributes.iter().position(|(n, dropped)| !dropped && n == name)).collect()
}

/// Whether row-level security applies to the current user on `relid` (as a query of it would
/// apply policies).
pub fn row_security_applies(relid: pg_sys::Oid) -> bool {
    // SAFETY: a catalog lookup on the current user.
    let rls = unsafe { pg_sys::check_enable_rls(relid, pg_sys::InvalidOid, true) };
    rls as u32 == pg_sys::CheckEnableRlsResult::RLS_ENABLED
}
