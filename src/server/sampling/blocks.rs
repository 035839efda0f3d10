//! A table's blocks as a sample of a column's values and rows: [`BlockSampler`].

use std::ffi::CString;
use std::time::Instant;

use compresslab_core::advisor::words;
use compresslab_core::scenarios::toast;
use compresslab_core::CodecError;
use pgrx::prelude::*;
use pgrx::{PgRelation, PgSqlErrorCode};

use super::{select_on_table, unreadable_blocks};
use crate::errors::{raise, report};
use crate::server::catalog::names::{qualified_name, quote_identifier};
use crate::server::catalog::spi::{self, spi_failed};
use crate::server::heap;
use crate::server::images::ToastPointer;
use crate::server::toast::{compression_method, stored_varlena, tuple_target, varlena_bytes};

/// How the rows of a range of blocks are read.
enum Reader {
    /// Row-level security applies to the caller, and only a query applies policies: a TID
    /// range scan in SQL, planned and run as the caller (as any query of its on the table):
    /// the query, `{leaf}`, `{first}` and `{last}` to fill in; the selected columns are its
    /// ordinals 1, 2, ...
    Sql(String),
    /// Every other case: a heap scan of the blocks (`heap::scan_blocks`: no planner, none of
    /// the owner's code), of the leaf itself; the selected columns by name, found in each
    /// leaf's own descriptor.
    Heap { columns: Vec<String> },
}

/// How a block's reading ended.
pub enum BlockEnd {
    /// Every row of the block was read.
    Read,
    /// The deadline passed within the block: its rows are to be dropped.
    OutOfTime,
    /// A value was larger than the bytes allowed a value (why, in words): the block is to be
    /// dropped, and the sample misses its largest values.
    TooLarge(String),
}

/// A table's blocks, to sample a column from them: every row of a chosen block is read (what
/// the caller may read: column privileges and row-level security hold), its value detoasted
/// and its row described as the table stores it (every variable-length attribute's storage,
/// raw size, stored size and method, the tuple header, the fixed-length bytes, the table's
/// `toast_tuple_target`), for replaying TOAST on each row. A partitioned table's blocks are
/// its leaves' blocks end to end.
///
/// The blocks are read by a heap scan ([`Reader::Heap`]): no query is planned, so none of the
/// table owner's code runs (the planner folds the immutable functions of index expressions,
/// partial-index predicates and statistics expressions, as whoever plans). The same rows
/// `SELECT` would return (the statement's snapshot), the columns the caller may read and no
/// other. Only where row-level security applies to the caller does a query read them
/// ([`Reader::Sql`], planned as the caller, as any query of its on the table): only a query
/// applies policies. Each variable-length column the caller may read is selected once, as
/// stored (the method read from the datum), so a table of 1,600 columns stays within the 1,664
/// entries of a target list. A variable-length column the caller may not read is left out of
/// the row's model: its value is neither read nor measured, and the row is modelled without it
/// (a NOTICE names it).
pub struct BlockSampler {
    reader: Reader,
    /// The table sampled.
    table: pg_sys::Oid,
    /// Each leaf (the table itself for a plain table, with no filter) and the first block of
    /// the sampler's numbering that is its.
    leaves: Vec<(Option<pg_sys::Oid>, u64)>,
    nblocks: u64,
    /// The storage of each variable-length column selected, in the query's order.
    varlena: Vec<toast::Storage>,
    /// The sampled column's place among them (its ordinal is one more).
    column: usize,
    natts: usize,
    fixed: usize,
    /// The most alignment padding a row may hold: each column's alignment less one.
    padding: usize,
    target: usize,
    /// The rest of a row every tuple carries: the tuple header and the fixed-length columns.
    pub overhead: usize,
}

impl BlockSampler {
    /// A sampler of `col`'s values and rows (see the type).
    pub fn new(rel: &PgRelation, col: &str) -> BlockSampler {
        Self::make(rel, col, true)
    }

    /// A sampler of `col`'s values alone ([`BlockSampler::read_values`]): no other column is
    /// read.
    pub fn values(rel: &PgRelation, col: &str) -> BlockSampler {
        Self::make(rel, col, false)
    }

    fn make(rel: &PgRelation, col: &str, rows: bool) -> BlockSampler {
        check_sampled_column(rel, col);
        let tupdesc = rel.tuple_desc();
        let all_varlena: Vec<(String, i16, toast::Storage)> = tupdesc
            .iter()
            .filter(|a| !a.is_dropped() && a.attlen == -1)
            .map(|a| (a.name().to_string(), a.attnum, toast::Storage::from_attstorage(a.attstorage as u8)))
            .filter(|(name, _, _)| rows || name == col)
            .collect();
        let natts = tupdesc.len();
        let padding = tupdesc
            .iter()
            .filter(|a| !a.is_dropped())
            .map(|a| match a.attalign as u8 {
                b's' => 1,
                b'i' => 3,
                b'd' => 7,
                _ => 0,
            })
            .sum();
        drop(tupdesc);
        if let Some(why) = unreadable_blocks(rel) {
            report(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!("cannot sample \"{}\": {why}", rel.name()),
                None,
            );
        }
        let whole_table = select_on_table(rel);
        let may_read = |attnum: i16| {
            whole_table
                // SAFETY: a privilege lookup for an open relation's attribute.
                || unsafe {
                    pg_sys::pg_attribute_aclcheck(rel.oid(), attnum, pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode)
                        == pg_sys::AclResult::ACLCHECK_OK
                }
        };
        if !whole_table && !all_varlena.iter().any(|(name, attnum, _)| name == col && may_read(*attnum)) {
            report(
                PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
                format!("permission denied for column \"{col}\" of relation \"{}\"", rel.name()),
                None,
            );
        }
        // The sampled column itself is always selected: without the right to read it, the
        // query's own 42501 is the answer.
        let (varlena, left_out): (Vec<_>, Vec<_>) =
            all_varlena.into_iter().partition(|(name, attnum, _)| name == col || may_read(*attnum));
        let left_out: Vec<String> = left_out.into_iter().map(|(name, _, _)| name).collect();
        if !left_out.is_empty() {
            let names: Vec<String> = left_out.iter().map(|name| quote_identifier(name)).collect();
            notice!(
                "compresslab: {}.{}: its row is modelled without the variable-length column(s) you may not read ({}): \
                 they count as empty, so where they widen a row TOAST may compress or move values this model keeps",
                qualified_name(rel.namespace(), rel.name()),
                quote_identifier(col),
                names.join(", ")
            );
        }
        let column = varlena.iter().position(|(name, _, _)| name == col).unwrap_or(usize::MAX);
        let overhead = row_overhead(rel, col);
        let partitioned = relkind(rel) == pg_sys::RELKIND_PARTITIONED_TABLE;
        // a partitioned table has no options: its partitions' rows are sampled at the default
        let target = if partitioned { toast::TOAST_TUPLE_THRESHOLD } else { tuple_target(rel) };
        let selected: Vec<String> = varlena.iter().map(|(name, _, _)| quote_identifier(name)).collect();
        let quoted = quote_identifier(col);
        let table = qualified_name(rel.namespace(), rel.name());
        let reader = if heap::row_security_applies(rel.oid()) {
            // A TID range scan reads only the blocks asked for (PostgreSQL 14 and later).
            Reader::Sql(format!(
                "SELECT {} FROM {table} \
                  WHERE ctid OPERATOR(pg_catalog.>=) '({{first}},0)'::pg_catalog.tid \
                    AND ctid OPERATOR(pg_catalog.<=) '({{last}},65535)'::pg_catalog.tid{{leaf}} AND {quoted} IS NOT NULL",
                selected.join(", ")
            ))
        } else {
            Reader::Heap { columns: varlena.iter().map(|(name, _, _)| name.clone()).collect() }
        };
        let sizes: Vec<(Option<pg_sys::Oid>, u64)> = if partitioned {
            Spi::connect(|client| {
                client
                    .select(
                        "SELECT t.relid::pg_catalog.oid, pg_catalog.pg_relation_size(t.relid) \
                                OPERATOR(pg_catalog./) pg_catalog.current_setting('block_size')::pg_catalog.int8 \
                           FROM pg_catalog.pg_partition_tree($1) t WHERE t.isleaf ORDER BY 1",
                        None,
                        &[rel.oid().into()],
                    )
                    .unwrap_or_else(|e| spi_failed(e))
                    .filter_map(|row| {
                        Some((Some(row.get::<pg_sys::Oid>(1).ok()??), row.get::<i64>(2).ok()??.max(0) as u64))
                    })
                    .collect()
            })
        } else {
            // SAFETY: an open relation with storage.
            let blocks =
                unsafe { pg_sys::RelationGetNumberOfBlocksInFork(rel.as_ptr(), pg_sys::ForkNumber::MAIN_FORKNUM) };
            vec![(None, blocks as u64)]
        };
        let (mut leaves, mut nblocks) = (Vec::new(), 0u64);
        for (leaf, blocks) in sizes {
            leaves.push((leaf, nblocks));
            nblocks += blocks;
        }
        BlockSampler {
            reader,
            table: rel.oid(),
            leaves,
            nblocks,
            varlena: varlena.into_iter().map(|(_, _, storage)| storage).collect(),
            column,
            natts,
            fixed: overhead - TUPLE_HEADER,
            padding,
            target,
            overhead,
        }
    }

    /// The table's blocks (its leaves' summed), when the sampler was made.
    pub fn nblocks(&self) -> u64 {
        self.nblocks
    }

    /// The whole table as ranges of at most `chunk` blocks (first and last, of the sampler's
    /// numbering), none across two leaves.
    pub fn ranges(&self, chunk: u64) -> Vec<(u64, u64)> {
        let mut ranges = Vec::new();
        for (i, &(_, first)) in self.leaves.iter().enumerate() {
            let end = self.leaves.get(i + 1).map_or(self.nblocks, |&(_, next)| next);
            let mut at = first;
            while at < end {
                let last = (at + chunk.max(1)).min(end) - 1;
                ranges.push((at, last));
                at = last + 1;
            }
        }
        ranges
    }

    /// `each` on every row of blocks `first..=last` (of the sampler's numbering, within one
    /// leaf) whose sampled column is not NULL, given the row's selected columns (by their
    /// place, NULL as None) as stored; `each` may end the reading with its answer.
    fn each_row(
        &self,
        first: u64,
        last: u64,
        mut each: impl FnMut(&dyn Fn(usize) -> Option<pg_sys::Datum>) -> Option<BlockEnd>,
    ) -> BlockEnd {
        let (leaf, start) = self.leaf(first);
        let (first, last) = (first - start, last - start);
        match &self.reader {
            Reader::Sql(query) => {
                let leaf = leaf.map_or_else(String::new, |oid| {
                    format!(" AND tableoid OPERATOR(pg_catalog.=) {}::pg_catalog.oid", oid.to_u32())
                });
                let query = query
                    .replace("{first}", &first.to_string())
                    .replace("{last}", &last.to_string())
                    .replace("{leaf}", &leaf);
                Spi::connect(|client| {
                    let mut table = client.select(&query, None, &[]).unwrap_or_else(|e| spi_failed(e));
                    while table.next().is_some() {
                        check_for_interrupts!();
                        let get = |i: usize| table.get_datum_by_ordinal(1 + i).ok().flatten();
                        if let Some(end) = each(&get) {
                            return end;
                        }
                    }
                    BlockEnd::Read
                })
            }
            Reader::Heap { columns } => {
                let Some(heap) = heap::open(leaf.unwrap_or(self.table)) else { return BlockEnd::Read };
                let attributes = heap::attribute_indexes(heap, columns);
                // SAFETY: the descriptor of the relation open above.
                let natts = unsafe { (*(*heap).rd_att).natts } as usize;
                let mut values = vec![pg_sys::Datum::from(0usize); natts];
                let mut nulls = vec![true; natts];
                let mut end = BlockEnd::Read;
                heap::scan_blocks(heap, first as u32, (last - first + 1) as u32, |tuple| {
                    // SAFETY: a tuple of the scan, deformed with its relation's descriptor into
                    // arrays of its width; the datums are used by `each` before the next tuple.
                    unsafe {
                        pg_sys::heap_deform_tuple(tuple, (*heap).rd_att, values.as_mut_ptr(), nulls.as_mut_ptr())
                    };
                    let get = |i: usize| attributes.get(i).copied().flatten().filter(|&a| !nulls[a]).map(|a| values[a]);
                    if get(self.column).is_none() {
                        return true;
                    }
                    match each(&get) {
                        Some(answer) => {
                            end = answer;
                            false
                        }
                        None => true,
                    }
                });
                heap::close(heap);
                end
            }
        }
    }

    /// Every non-NULL value of the column in blocks `first..=last` (within one leaf), detoasted.
    pub fn read_values(&self, first: u64, last: u64, mut value: impl FnMut(Vec<u8>)) {
        self.each_row(first, last, |get| {
            if let Some(datum) = get(self.column) {
                value(varlena_bytes(datum));
            }
            None
        });
    }

    /// Block `block` of the sampler's numbering: its leaf (the table itself for a plain table)
    /// and its number there.
    pub fn locate(&self, block: u64) -> (pg_sys::Oid, u32) {
        let (leaf, start) = self.leaf(block);
        (leaf.unwrap_or(self.table), (block - start) as u32)
    }

    /// The table's leaves (the table itself for a plain table).
    pub fn leaf_oids(&self) -> Vec<pg_sys::Oid> {
        self.leaves.iter().map(|(leaf, _)| leaf.unwrap_or(self.table)).collect()
    }

    /// The leaf holding block `block` of the sampler's numbering (None: the table itself), and
    /// its first block there.
    fn leaf(&self, block: u64) -> (Option<pg_sys::Oid>, u64) {
        self.leaves[self.leaves.partition_point(|(_, start)| *start <= block).saturating_sub(1)]
    }

    /// Every row of block `block` (of the sampler's numbering) with a non-NULL value: see
    /// [`BlockSampler::read_range`].
    pub fn read_block(
        &self,
        block: u64,
        value_cap: usize,
        deadline: Instant,
        row: impl FnMut(Vec<u8>, toast::SampledRow, Option<ToastPointer>),
    ) -> BlockEnd {
        self.read_range(block, block, value_cap, deadline, row)
    }

    /// Every row of blocks `first..=last` (of the sampler's numbering, within one leaf) with a
    /// non-NULL value: `row` gets the value detoasted, its row as stored and the value's TOAST
    /// pointer if it is stored out of line. A value larger
    /// than `value_cap` bytes (its size read from its header first) or the `deadline` ends the
    /// reading early.
    pub fn read_range(
        &self,
        first: u64,
        last: u64,
        value_cap: usize,
        deadline: Instant,
        mut row: impl FnMut(Vec<u8>, toast::SampledRow, Option<ToastPointer>),
    ) -> BlockEnd {
        self.each_row(first, last, |get| {
            let datum = get(self.column)?;
            // SAFETY: a non-NULL varlena of the tuple as stored; only its header is read.
            let size = unsafe { pg_sys::toast_raw_datum_size(datum) };
            if size > value_cap {
                return Some(BlockEnd::TooLarge(format!(
                    "the next value ({}) did not fit in the {} left of what this budget allows a value",
                    words::size(size as f64),
                    words::size(value_cap as f64)
                )));
            }
            if Instant::now() >= deadline {
                return Some(BlockEnd::OutOfTime);
            }
            let pointer = ToastPointer::of(datum);
            let value = varlena_bytes(datum);
            let mut attributes = Vec::new();
            let mut has_nulls = false;
            let mut at = usize::MAX;
            for (i, storage) in self.varlena.iter().enumerate() {
                let Some(datum) = get(i) else {
                    has_nulls = true;
                    continue;
                };
                if i == self.column {
                    at = attributes.len();
                }
                let (raw, size, external) = stored_varlena(datum);
                attributes.push(toast::StoredAttribute {
                    storage: *storage,
                    raw,
                    size,
                    method: compression_method(datum),
                    external,
                });
            }
            // t_hoff: the header, with a null bitmap when a value is NULL, MAXALIGNed.
            let header = if has_nulls { (23 + self.natts.div_ceil(8)).next_multiple_of(8) } else { TUPLE_HEADER };
            let sampled = toast::SampledRow {
                header,
                fixed: self.fixed,
                target: self.target,
                attributes,
                column: at,
                padding: self.padding,
            };
            row(value, sampled, pointer);
            None
        })
    }
}

fn relkind(rel: &PgRelation) -> u8 {
    // SAFETY: rd_rel is valid for an open relation.
    unsafe { (*rel.rd_rel).relkind as u8 }
}

/// ERRORs unless `col` is a variable-length column of a table or materialized view.
fn check_sampled_column(rel: &PgRelation, col: &str) {
    if !matches!(relkind(rel), b'r' | b'm' | b'p') {
        report(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("\"{}\" is not a table or materialized view", rel.name()),
            Some("compresslab samples the values a table or materialized view stores; a view or foreign table stores none."),
        );
    }
    let col_c = CString::new(col).unwrap_or_else(|_| raise(CodecError::invalid("column name contains a NUL byte")));
    // SAFETY: catalog lookups on an open relation.
    let attnum = unsafe { pg_sys::get_attnum(rel.oid(), col_c.as_ptr()) };
    if attnum <= 0 {
        report(
            PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
            format!("column \"{col}\" of relation \"{}\" does not exist", rel.name()),
            None,
        );
    }
    // SAFETY: as above, for an existing attribute.
    let typlen = unsafe { pg_sys::get_typlen(pg_sys::get_atttype(rel.oid(), attnum)) };
    if typlen != -1 {
        raise(CodecError::invalid(format!(
            "column \"{col}\" has a fixed-length type; TOAST compression applies only to variable-length values"
        )));
    }
}

/// Bytes of the other columns of a row that every tuple carries: the heap tuple header plus
/// the fixed-length columns (variable-length ones vary and are not counted).
pub fn row_overhead(rel: &PgRelation, col: &str) -> usize {
    let fixed = spi::select_one::<i64>(
        "SELECT COALESCE(pg_catalog.sum(attlen), 0)::pg_catalog.int8 FROM pg_catalog.pg_attribute \
         WHERE attrelid OPERATOR(pg_catalog.=) $1 AND attnum OPERATOR(pg_catalog.>) 0 AND NOT attisdropped \
           AND attlen OPERATOR(pg_catalog.>) 0 AND attname OPERATOR(pg_catalog.<>) $2",
        &[rel.oid().into(), col.into()],
    )
    .unwrap_or_else(|e| spi_failed(e))
    .unwrap_or(0);
    TUPLE_HEADER + fixed as usize
}

/// A heap tuple's header without a null bitmap (`MAXALIGN(SizeofHeapTupleHeader)`).
const TUPLE_HEADER: usize = 24;
