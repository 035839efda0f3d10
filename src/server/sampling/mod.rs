//! Sampling a table's values: every row of blocks drawn at random (`blocks.rs`, read without
//! planning a query on the table), and rows as change records for the spill simulation
//! (`records.rs`). Every query we write names its operators, functions and types with their
//! schema (`OPERATOR(pg_catalog.=)`, `pg_catalog.sum`, `::pg_catalog.text`), so a hostile
//! `search_path` runs nobody's code.

mod blocks;
mod records;

use compresslab_core::rng::SeededRng;
use compresslab_core::sampling::BlockOrder;
use pgrx::prelude::*;
use pgrx::PgRelation;

pub use blocks::{BlockEnd, BlockSampler};
pub use records::{most_written_readable_tables, query_records, table_records};

use super::heap;

/// Blocks read by one query when a table is read whole.
pub const WHOLE_TABLE_BLOCKS: u64 = 1024;

/// The detoasted non-NULL values of a variable-length column: all of them (`limit` None), or a
/// sample of `limit` of them: every row of blocks drawn uniformly at random from the whole
/// table without replacement (seeded, [`BlockOrder`]), the last block's rows thinned at random
/// to the limit, so that every value is equally likely wherever it sits. Read with the
/// caller's privileges (column privileges and row-level security apply).
pub fn column_values(rel: &PgRelation, col: &str, limit: Option<i32>, seed: i32) -> Vec<Vec<u8>> {
    let sampler = BlockSampler::values(rel, col);
    let mut values = Vec::new();
    let Some(limit) = limit.map(|n| n.max(0) as usize) else {
        for (first, last) in sampler.ranges(WHOLE_TABLE_BLOCKS) {
            sampler.read_values(first, last, |value| values.push(value));
        }
        return values;
    };
    let mut rng = SeededRng::new(seed as u64 ^ THINNING_SEED);
    for block in BlockOrder::new(sampler.nblocks(), seed as u64) {
        let mut rows = Vec::new();
        sampler.read_values(block, block, |value| rows.push(value));
        let wanted = limit - values.len();
        if rows.len() > wanted {
            // a uniformly random `wanted` of the block's rows (a partial Fisher-Yates shuffle)
            for i in 0..wanted {
                let j = i + rng.below((rows.len() - i) as u64) as usize;
                rows.swap(i, j);
            }
            rows.truncate(wanted);
        }
        values.append(&mut rows);
        if values.len() >= limit {
            break;
        }
    }
    values
}

/// Mixed into the seed of the generator that thins the last block of [`column_values`], so it
/// does not repeat the block order's draws.
const THINNING_SEED: u64 = 0x5eed_0fb1_0c00;

/// Why `rel`'s blocks cannot be sampled by the caller, None when they can: a heap scan reads
/// them after the privilege checks a query would make, but where row-level security applies
/// only a query applies the policies, and a query naming `ctid` needs SELECT on the table.
pub fn unreadable_blocks(rel: &PgRelation) -> Option<String> {
    (!select_on_table(rel) && heap::row_security_applies(rel.oid())).then(|| {
        "row-level security applies and you may not SELECT the whole table: its rows are sampled by block only through \
         a query that names ctid, which needs SELECT on the table"
            .into()
    })
}

/// Whether the caller may learn the sizes of the table's pages (a page holds every column of
/// every row): SELECT on the whole table, and no row-level security hiding rows from it.
pub fn pages_readable(rel: &PgRelation) -> bool {
    select_on_table(rel) && !heap::row_security_applies(rel.oid())
}

/// Whether the caller has SELECT on the table itself (not only on some of its columns).
pub(super) fn select_on_table(rel: &PgRelation) -> bool {
    // SAFETY: a privilege lookup for an open relation.
    unsafe {
        pg_sys::pg_class_aclcheck(rel.oid(), pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
    }
}
