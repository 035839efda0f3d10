//! Rows read through SPI: sampled column values, the relations of the database, a row's fixed
//! width, the caller's query for the spill simulation. Every query we write names its
//! operators, functions and types with their schema (`OPERATOR(pg_catalog.=)`,
//! `pg_catalog.sum`, `::pg_catalog.text`), so a hostile `search_path` runs nobody's code.

use std::ffi::CString;
use std::time::Instant;

use compresslab_core::advisor::words;
use compresslab_core::rng::SeededRng;
use compresslab_core::sampling::BlockOrder;
use compresslab_core::scenarios::spill::Records;
use compresslab_core::scenarios::toast;
use compresslab_core::ticking;
use compresslab_core::CodecError;
use pgrx::prelude::*;
use pgrx::{PgRelation, PgSqlErrorCode};

use crate::errors::{raise, report, OrRaise};

use super::heap;
use super::names::{qualified_name, quote_identifier};

/// Rows fetched from a cursor per batch; each batch's SPI tuple table is freed once copied.
const FETCH_BATCH: i64 = 1000;

/// A failed internal query, as an ERROR.
pub(crate) fn spi_failed(e: pgrx::spi::SpiError) -> ! {
    raise(CodecError::invalid(format!("query failed: {e}")))
}

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

/// Whether the caller has SELECT on the table itself (not only on some of its columns).
fn select_on_table(rel: &PgRelation) -> bool {
    // SAFETY: a privilege lookup for an open relation.
    unsafe {
        pg_sys::pg_class_aclcheck(rel.oid(), pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
    }
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

// The server's reading of a stored varlena's compression method (what pg_column_compression
// returns), declared here: pgrx does not bind it. It reads only the datum's header, or its
// TOAST pointer.
unsafe extern "C-unwind" {
    fn toast_get_compression_id(attr: *mut pg_sys::varlena) -> u32;
}

/// `ToastCompressionId`'s values (toast_compression.h).
const TOAST_PGLZ_COMPRESSION_ID: u32 = 0;
const TOAST_LZ4_COMPRESSION_ID: u32 = 1;

/// The compression method of a stored varlena (`pglz`, `lz4`), None when it is not compressed.
pub(crate) fn compression_method(datum: pg_sys::Datum) -> Option<&'static str> {
    // SAFETY: a non-NULL varlena of a tuple as stored; the server reads its header (and, for a
    // TOAST pointer, the pointer) only.
    match unsafe { toast_get_compression_id(datum.cast_mut_ptr()) } {
        TOAST_PGLZ_COMPRESSION_ID => Some("pglz"),
        TOAST_LZ4_COMPRESSION_ID => Some("lz4"),
        _ => None,
    }
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
        // SAFETY: rd_options of an open table or materialized view is NULL or its StdRdOptions (a
        // partitioned table has none: its partitions' rows are sampled at the default target).
        let target = unsafe {
            let options = rel.rd_options as *const pg_sys::StdRdOptions;
            if options.is_null() || partitioned {
                toast::TOAST_TUPLE_THRESHOLD
            } else {
                (*options).toast_tuple_target.max(128) as usize
            }
        };
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
        let at = self.leaves.partition_point(|(_, start)| *start <= first).saturating_sub(1);
        let (leaf, start) = self.leaves[at];
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

    /// Every row of block `block` (of the sampler's numbering) with a non-NULL value: see
    /// [`BlockSampler::read_range`].
    pub fn read_block(
        &self,
        block: u64,
        value_cap: usize,
        deadline: Instant,
        row: impl FnMut(Vec<u8>, toast::SampledRow),
    ) -> BlockEnd {
        self.read_range(block, block, value_cap, deadline, row)
    }

    /// Every row of blocks `first..=last` (of the sampler's numbering, within one leaf) with a
    /// non-NULL value: `row` gets the value detoasted and its row as stored. A value larger
    /// than `value_cap` bytes (its size read from its header first) or the `deadline` ends the
    /// reading early.
    pub fn read_range(
        &self,
        first: u64,
        last: u64,
        value_cap: usize,
        deadline: Instant,
        mut row: impl FnMut(Vec<u8>, toast::SampledRow),
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
                    method: compression_method(datum).map(String::from),
                    external,
                });
            }
            // t_hoff: the header, with a null bitmap when a value is NULL, MAXALIGNed.
            let header = if has_nulls { (23 + self.natts.div_ceil(8)).next_multiple_of(8) } else { TUPLE_HEADER };
            row(value, toast::SampledRow { header, fixed: self.fixed, target: self.target, attributes, column: at });
            None
        })
    }
}

/// A varlena datum as stored: its data bytes once detoasted, `pg_column_size`, and whether it
/// is a pointer to the TOAST table.
fn stored_varlena(datum: pg_sys::Datum) -> (usize, usize, bool) {
    // SAFETY: the datum is a non-NULL varlena of the tuple as stored (SPI returns the column's
    // value untouched: a TOAST pointer stays a pointer); the size functions read only its
    // header and, for a pointer, the pointer.
    unsafe {
        let first = *(datum.cast_mut_ptr::<u8>());
        let raw = pg_sys::toast_raw_datum_size(datum);
        let size = pg_sys::toast_datum_size(datum);
        // 0x01: an external pointer (raw size counts a 4-byte header); another odd first byte:
        // a 1-byte header; else a 4-byte one (little-endian varlena headers).
        let external = first == 0x01;
        let header = if !external && first & 0x01 == 0x01 { 1 } else { 4 };
        (raw.saturating_sub(header), size, external)
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

/// The bytes of a varlena datum after detoasting (decompressed, fetched out of line), copied
/// into a buffer allocated fallibly (a huge value is an ERROR, never an abort), a piece at a
/// time with a cancel check between pieces.
fn varlena_bytes(datum: pg_sys::Datum) -> Vec<u8> {
    with_varlena_bytes(datum, |bytes| ticking::try_copy(bytes, "a value read", &mut super::check_interrupts)).or_raise()
}

/// `f` on the payload of a varlena datum (bytea, text or any other variable-length type),
/// detoasted if need be; a detoasted copy is freed once `f` returns.
fn with_varlena_bytes<T>(datum: pg_sys::Datum, f: impl FnOnce(&[u8]) -> T) -> T {
    let original = datum.cast_mut_ptr::<pg_sys::varlena>();
    // SAFETY: the datum is a varlena; pg_detoast_datum_packed returns it unchanged, or a plain
    // (possibly short-header) copy in palloc'd memory that we own and free after `f` (which
    // cannot keep the borrowed slice).
    unsafe {
        let plain = pg_sys::pg_detoast_datum_packed(original);
        let result = f(pgrx::varlena::varlena_to_byte_slice(plain));
        if plain != original {
            pg_sys::pfree(plain.cast());
        }
        result
    }
}

/// Every relation of this database that has storage and writes WAL.
pub fn permanent_relations() -> Vec<pg_sys::Oid> {
    Spi::connect(|client| {
        client
            .select(
                "SELECT oid FROM pg_catalog.pg_class \
                 WHERE relkind OPERATOR(pg_catalog.=) ANY ('{r,i,t,m,S}'::pg_catalog.\"char\"[]) \
                   AND relpersistence OPERATOR(pg_catalog.=) 'p'::pg_catalog.\"char\" \
                 ORDER BY oid",
                None,
                &[],
            )
            .unwrap_or_else(|e| spi_failed(e))
            .filter_map(|row| row.get::<pg_sys::Oid>(1).ok().flatten())
            .collect()
    })
}

/// Bytes of the other columns of a row that every tuple carries: the heap tuple header plus
/// the fixed-length columns (variable-length ones vary and are not counted).
pub fn row_overhead(rel: &PgRelation, col: &str) -> usize {
    let fixed = super::spi::select_one::<i64>(
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

/// Run the caller's `query` and return one record per non-NULL row: the bytes of a single
/// bytea column, the text of a single column of another type, or the text form of a wider
/// row. The query runs with the caller's privileges; only our wrapping is qualified. The
/// records go into one fallibly grown buffer ([`Records`]): running out of memory is ERROR
/// 53200, and memory stays near the records' bytes plus one length byte each.
pub fn query_records(query: &str) -> Records {
    let query = query.trim().trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    if query.is_empty() {
        raise(CodecError::invalid("query must not be empty"));
    }
    Spi::connect(|client| {
        // Find the result's shape without running it: LIMIT 0 never pulls a row from the query.
        let probe = format!("SELECT * FROM ({query}\n) t LIMIT 0");
        let (single_column, single_bytea) = {
            let table = client.select(probe.as_str(), None, &[]).unwrap_or_else(|e| spi_failed(e));
            let single = table.columns().unwrap_or(0) == 1;
            (single, single && table.column_type_oid(1).map(|oid| oid.value() == pg_sys::BYTEAOID).unwrap_or(false))
        };
        let sql = if single_bytea {
            format!("SELECT * FROM ({query}\n) spill_change")
        } else if single_column {
            format!("SELECT spill_change.value::pg_catalog.text FROM ({query}\n) spill_change(value)")
        } else {
            // An alias no query is likely to use as a column name: a column of that name would
            // win over the whole-row reference.
            format!("SELECT compresslab_spill_row::pg_catalog.text FROM ({query}\n) compresslab_spill_row")
        };
        let mut cursor = client.try_open_cursor(sql.as_str(), &[]).unwrap_or_else(|e| spi_failed(e));
        let mut records = Records::new();
        loop {
            check_for_interrupts!();
            let mut batch = cursor.fetch(FETCH_BATCH).unwrap_or_else(|e| spi_failed(e));
            if batch.is_empty() {
                break;
            }
            while batch.next().is_some() {
                // A bytea's bytes, or the text's UTF-8 bytes: both are varlenas.
                if let Some(datum) = batch.get_datum_by_ordinal(1).unwrap_or_else(|e| spi_failed(e)) {
                    with_varlena_bytes(datum, |bytes| records.try_push(bytes)).or_raise();
                }
            }
            // SAFETY: the batch was consumed and dropped above; SPI_tuptable still points at
            // its table, which nothing else references, so freeing it keeps memory to one batch.
            unsafe { pg_sys::SPI_freetuptable(pg_sys::SPI_tuptable) };
        }
        records
    })
}

/// The `limit` tables with the most rows written (pg_stat_user_tables) that the caller may
/// read whole and whose rows [`table_records`] reads (a heap: no partitioned table; no
/// row-level security applying to the caller): their OIDs and `schema.table` quoted as needed,
/// most written first.
pub fn most_written_readable_tables(limit: i64) -> Vec<(pg_sys::Oid, String)> {
    Spi::connect(|client| {
        client
            .select(
                "SELECT s.relid, pg_catalog.quote_ident(s.schemaname) OPERATOR(pg_catalog.||) '.' \
                        OPERATOR(pg_catalog.||) pg_catalog.quote_ident(s.relname) \
                   FROM pg_catalog.pg_stat_user_tables s \
                   JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) s.relid \
                  WHERE c.relkind OPERATOR(pg_catalog.=) ANY ('{r,m}'::pg_catalog.\"char\"[]) \
                    AND pg_catalog.has_table_privilege(s.relid, 'SELECT') \
                    AND NOT pg_catalog.row_security_active(s.relid) \
                  ORDER BY s.n_tup_ins OPERATOR(pg_catalog.+) s.n_tup_upd OPERATOR(pg_catalog.+) s.n_tup_del DESC, s.relid \
                  LIMIT $1",
                None,
                &[limit.into()],
            )
            .unwrap_or_else(|e| spi_failed(e))
            .filter_map(|row| Some((row.get::<pg_sys::Oid>(1).ok()??, row.get::<String>(2).ok()??)))
            .collect()
    })
}

/// The text form of the first `limit` rows of table `relid` in physical order (what `SELECT t
/// FROM table t LIMIT limit` returns without an ORDER BY), one record each, read by a heap scan
/// ([`heap::scan_blocks`]: no query planned, none of the owner's code run). The caller checked
/// that it may read the whole table and that no row-level security applies to it. A table
/// dropped meanwhile gives no records.
pub fn table_records(relid: pg_sys::Oid, limit: usize) -> Records {
    let mut records = Records::new();
    let Some(rel) = heap::open(relid) else { return records };
    heap::scan_blocks(rel, 0, u32::MAX, |tuple| {
        // SAFETY: a tuple of the scan and its relation's descriptor (whose type is the table's
        // row type): the copy is a composite datum, printed by record_out (the columns' own
        // output functions) into a palloc'd string, both freed here.
        let text = unsafe {
            let row = pg_sys::heap_copy_tuple_as_datum(tuple, (*rel).rd_att);
            let text = pg_sys::OidOutputFunctionCall(pg_sys::Oid::from(pg_sys::F_RECORD_OUT), row);
            let bytes = std::ffi::CStr::from_ptr(text).to_bytes().to_vec();
            pg_sys::pfree(text.cast());
            pg_sys::pfree(row.cast_mut_ptr());
            bytes
        };
        records.try_push(&text).or_raise();
        records.len() < limit
    });
    heap::close(rel);
    records
}
