//! The lab in SQL: benchmark functions per payload source, all with the same options and the
//! same result type (`compresslab.bench_result`), plus checksum rows, a standard suite, jsonb
//! and markdown output.

use std::ffi::CStr;

use compresslab_core::lab::{self, payload, BenchRow, Codec, CodecSpec, Hooks, Measurement, Payload};
use compresslab_core::CodecError;
use pgrx::prelude::*;
use pgrx::{composite_type, JsonB, PgRelation, PgSqlErrorCode};

use crate::errors::{raise, report, OrRaise};
use crate::{gucs, server_c};

extension_sql!(
    r#"
CREATE TYPE compresslab.bench_result AS (
    source text, method text, level int, slice_size int, slices bigint, raw_slices bigint,
    input_bytes bigint, output_bytes bigint, ratio float8,
    compress_mbps float8, decompress_mbps float8, compress_mbps_best float8, decompress_mbps_best float8,
    compress_ns_per_byte float8, decompress_ns_per_byte float8,
    compress_wall_s float8, compress_cpu_s float8, decompress_wall_s float8, decompress_cpu_s float8,
    iterations int
);
COMMENT ON TYPE compresslab.bench_result IS 'One benchmark row: payload source, method and level, slice size; bytes in and out; median and best MB/s and median ns per uncompressed byte; wall and CPU (getrusage) seconds of the timed iterations';
"#,
    name = "bench_result_type",
    bootstrap
);

/// A `compresslab.bench_result` row. (SQL signatures spell the type out: pgrx reads them
/// before aliases are resolved.)
type BenchTuple = composite_type!('static, "compresslab.bench_result");

/// The methods measured when none are given: every Rust codec, the server's C references at
/// comparable settings, and memcpy as the speed limit.
const DEFAULT_METHODS: &[&str] = &[
    "memcpy", "pglz", "pglz_fast", "pglz_always", "server_pglz", "lz4", "lz4_frame", "server_lz4", "zstd:-5",
    "zstd:1", "zstd:3", "server_zstd:3", "zstd:9",
];
const DEFAULT_SLICE_SIZES: &[usize] = &[2048, 8192, 0];
/// Pages read per batch when a whole relation is measured: memory stays at 8 MB plus buffers.
const PAGES_PER_BATCH: u32 = 1024;

/// The options every bench function takes.
struct BenchOptions {
    methods: Vec<CodecSpec>,
    slice_sizes: Vec<usize>,
    iterations: u32,
}

impl BenchOptions {
    fn from_sql(methods: Option<Vec<String>>, slice_sizes: Option<Vec<i32>>, iterations: Option<i32>) -> BenchOptions {
        let methods: Vec<CodecSpec> = match methods {
            Some(m) if m.is_empty() => raise(CodecError::invalid("methods must not be an empty array")),
            Some(m) => m.iter().map(|s| CodecSpec::parse(s).or_raise()).collect(),
            None => DEFAULT_METHODS.iter().map(|s| CodecSpec::parse(s).unwrap()).collect(),
        };
        for spec in &methods {
            build_codec(spec); // reject unknown methods and bad levels before any work
        }
        let slice_sizes = match slice_sizes {
            Some(s) if s.is_empty() => raise(CodecError::invalid("slice_sizes must not be an empty array")),
            Some(s) => s
                .into_iter()
                .map(|n| {
                    usize::try_from(n).unwrap_or_else(|_| {
                        raise(CodecError::invalid(format!("slice size {n} is negative; use 0 for whole pieces")))
                    })
                })
                .collect(),
            None => DEFAULT_SLICE_SIZES.to_vec(),
        };
        let iterations = iterations.unwrap_or_else(gucs::bench_iterations);
        if !(1..=gucs::MAX_BENCH_ITERATIONS).contains(&iterations) {
            raise(CodecError::invalid(format!(
                "iterations must be between 1 and {}, got {iterations}",
                gucs::MAX_BENCH_ITERATIONS
            )));
        }
        BenchOptions { methods, slice_sizes, iterations: iterations as u32 }
    }
}

/// A Rust or server codec by name; unknown names are an ERROR listing the valid ones.
pub(crate) fn build_codec(spec: &CodecSpec) -> Box<dyn Codec> {
    let level = gucs::zstd_level();
    if let Some(codec) = lab::codecs::rust_codec(spec, level).or_raise() {
        return codec;
    }
    if let Some(codec) = server_c::server_codec(spec, level).or_raise() {
        return codec;
    }
    raise(CodecError::invalid(format!(
        "unknown benchmark method \"{}\"; valid methods are {}, {} (zstd methods take a level: zstd:19)",
        spec.name,
        lab::codecs::RUST_METHODS.join(", "),
        server_c::SERVER_METHODS.join(", ")
    )))
}

/// Interrupt checks between slices (cancel, statement_timeout) and progress NOTICEs.
pub(crate) struct PgHooks;

impl Hooks for PgHooks {
    fn tick(&mut self) {
        check_for_interrupts!();
    }
    fn progress(&mut self, what: &str) {
        notice!("compresslab: {what}");
    }
}

/// Measure every method and slice size over payload batches, merging batch measurements so
/// that only one batch is in memory at a time. The methods take turns within each iteration
/// (see `measure_codecs`), so their ratios are fair even when the machine's speed drifts.
fn run_batches(opts: &BenchOptions, source: &str, mut next_batch: impl FnMut(&mut PgHooks) -> Option<Payload>) -> Vec<BenchRow> {
    let mut hooks = PgHooks;
    let mut merged: Vec<(String, Option<i32>, usize, Measurement)> = Vec::new();
    let mut batch_no = 0;
    while let Some(batch) = next_batch(&mut hooks) {
        batch_no += 1;
        for (k, &slice_size) in opts.slice_sizes.iter().enumerate() {
            hooks.progress(&format!(
                "{source}{}: {} on {} slices ({}%)",
                if batch_no > 1 { format!(" batch {batch_no}") } else { String::new() },
                opts.methods.iter().map(spec_label).collect::<Vec<_>>().join(", "),
                if slice_size == 0 { "whole".to_string() } else { format!("{slice_size}-byte") },
                k * 100 / opts.slice_sizes.len()
            ));
            let mut codecs: Vec<Box<dyn Codec>> = opts.methods.iter().map(build_codec).collect();
            let mut refs: Vec<&mut dyn Codec> = codecs.iter_mut().map(|c| c.as_mut() as &mut dyn Codec).collect();
            let measurements = lab::measure_codecs(&batch, slice_size, &mut refs, opts.iterations, &mut hooks).or_raise();
            for (i, (codec, m)) in codecs.iter().zip(measurements).enumerate() {
                let at = k * opts.methods.len() + i;
                if batch_no == 1 {
                    merged.push((codec.name(), codec.level(), slice_size, m));
                } else {
                    merged[at].3.merge(&m);
                }
            }
        }
    }
    // Rows by method, then slice size, as the options list them.
    let methods = opts.methods.len();
    let mut order: Vec<usize> = (0..merged.len()).collect();
    order.sort_by_key(|&at| (at % methods, at / methods));
    order.iter().map(|&at| { let (method, level, slice, m) = &merged[at]; m.row(source, method, *level, *slice) }).collect()
}

fn spec_label(spec: &CodecSpec) -> String {
    match spec.level {
        Some(l) => format!("{}:{l}", spec.name),
        None => spec.name.clone(),
    }
}

fn run_payload(opts: &BenchOptions, payload: Payload) -> Vec<BenchRow> {
    let name = payload.name.clone();
    let mut once = Some(payload);
    run_batches(opts, &name, |_| once.take())
}

fn to_tuple(row: &BenchRow) -> BenchTuple {
    let mut t = PgHeapTuple::new_composite_type("compresslab.bench_result").expect("type compresslab.bench_result");
    let set = |t: &mut BenchTuple, name: &str, value: f64| t.set_by_name(name, value).expect(name);
    t.set_by_name("source", row.source.clone()).unwrap();
    t.set_by_name("method", row.method.clone()).unwrap();
    t.set_by_name("level", row.level).unwrap();
    t.set_by_name("slice_size", row.slice_size as i32).unwrap();
    t.set_by_name("slices", row.slices).unwrap();
    t.set_by_name("raw_slices", row.raw_slices).unwrap();
    t.set_by_name("input_bytes", row.input_bytes).unwrap();
    t.set_by_name("output_bytes", row.output_bytes).unwrap();
    set(&mut t, "ratio", row.ratio);
    set(&mut t, "compress_mbps", row.compress_mbps);
    set(&mut t, "decompress_mbps", row.decompress_mbps);
    set(&mut t, "compress_mbps_best", row.compress_mbps_best);
    set(&mut t, "decompress_mbps_best", row.decompress_mbps_best);
    set(&mut t, "compress_ns_per_byte", row.compress_ns_per_byte);
    set(&mut t, "decompress_ns_per_byte", row.decompress_ns_per_byte);
    set(&mut t, "compress_wall_s", row.compress_wall_s);
    set(&mut t, "compress_cpu_s", row.compress_cpu_s);
    set(&mut t, "decompress_wall_s", row.decompress_wall_s);
    set(&mut t, "decompress_cpu_s", row.decompress_cpu_s);
    t.set_by_name("iterations", row.iterations).unwrap();
    t
}

fn rows_out(rows: Vec<BenchRow>) -> SetOfIterator<'static, BenchTuple> {
    SetOfIterator::new(rows.iter().map(to_tuple).collect::<Vec<_>>())
}

pub(crate) fn permission_denied(message: String, hint: &str) -> ! {
    report(PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE, message, Some(hint))
}

pub(crate) fn user_has_role(role: u32) -> bool {
    // SAFETY: plain catalog lookups on the current user.
    unsafe { pg_sys::has_privs_of_role(pg_sys::GetUserId(), pg_sys::Oid::from(role)) }
}

/// Reading a relation's pages needs what reading its rows needs: SELECT on the table (or
/// pg_read_all_data), and no row-level security hiding rows from this user — page images
/// contain every row, and their compressed size leaks how alike rows are.
pub(crate) fn require_page_read_privilege(rel: &PgRelation) {
    // SAFETY: catalog lookups on a relation we hold AccessShareLock on.
    unsafe {
        let user = pg_sys::GetUserId();
        let may_select = pg_sys::pg_class_aclcheck(rel.oid(), user, pg_sys::ACL_SELECT as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
            || user_has_role(pg_sys::ROLE_PG_READ_ALL_DATA);
        if !may_select {
            permission_denied(
                format!("permission denied for table {}", rel.name()),
                "Benchmarking a relation's pages needs SELECT on it, or membership in pg_read_all_data.",
            );
        }
        if !pg_sys::superuser()
            && pg_sys::check_enable_rls(rel.oid(), pg_sys::InvalidOid, false) == pg_sys::CheckEnableRlsResult::RLS_ENABLED as i32
        {
            permission_denied(
                format!("table {} has row-level security enabled for this user", rel.name()),
                "Page images contain rows the policies hide; only a superuser may benchmark its pages.",
            );
        }
    }
}

/// Server files and WAL: superuser or pg_read_server_files, as for pg_read_binary_file().
fn require_server_file_privilege(path: &str) {
    // SAFETY: catalog lookups on the current user.
    let allowed = unsafe { pg_sys::superuser() } || user_has_role(pg_sys::ROLE_PG_READ_SERVER_FILES);
    if !allowed {
        permission_denied(
            format!("permission denied to read server file \"{path}\""),
            "Only superusers and members of pg_read_server_files may benchmark server files and WAL.",
        );
    }
}

/// How a page image is presented to the codecs.
#[derive(Clone, Copy)]
pub(crate) enum Hole {
    Removed,
    ZeroFilled,
}

impl Hole {
    fn parse(text: &str) -> Hole {
        match text.trim().to_ascii_lowercase().as_str() {
            "removed" => Hole::Removed,
            "zero-filled" | "zero_filled" | "zeroed" => Hole::ZeroFilled,
            other => raise(CodecError::invalid(format!(
                "hole must be \"removed\" (as full-page writes store pages) or \"zero-filled\", got \"{other}\""
            ))),
        }
    }
    fn apply(self, page: &[u8]) -> Vec<u8> {
        match self {
            Hole::Removed => payload::page_image_without_hole(page),
            Hole::ZeroFilled => payload::page_image_zero_filled_hole(page),
        }
    }
    fn label(self) -> &'static str {
        match self {
            Hole::Removed => "hole removed",
            Hole::ZeroFilled => "hole zero-filled",
        }
    }
}

/// Read `blocks` of the main fork through the buffer manager with a bulk-read strategy
/// (the ring buffer keeps a scan from flushing shared buffers), copying each page under a
/// share lock.
pub(crate) fn read_pages(rel: &PgRelation, blocks: &[u32], hole: Hole) -> Vec<Vec<u8>> {
    let mut pages = Vec::with_capacity(blocks.len());
    // SAFETY: the relation is open and locked; each buffer is pinned and share-locked while
    // its BLCKSZ bytes are copied, then released.
    unsafe {
        let strategy = pg_sys::GetAccessStrategy(pg_sys::BufferAccessStrategyType::BAS_BULKREAD);
        for &blkno in blocks {
            check_for_interrupts!();
            let buffer = pg_sys::ReadBufferExtended(
                rel.as_ptr(),
                pg_sys::ForkNumber::MAIN_FORKNUM,
                blkno,
                pg_sys::ReadBufferMode::RBM_NORMAL,
                strategy,
            );
            pg_sys::LockBuffer(buffer, pg_sys::BUFFER_LOCK_SHARE as i32);
            let page = std::slice::from_raw_parts(pg_sys::BufferGetPage(buffer) as *const u8, payload::BLCKSZ);
            pages.push(hole.apply(page));
            pg_sys::UnlockReleaseBuffer(buffer);
        }
        pg_sys::FreeAccessStrategy(strategy);
    }
    pages
}

pub(crate) fn relation_blocks(rel: &PgRelation) -> u32 {
    // SAFETY: rd_rel is valid for an open relation.
    let relkind = unsafe { (*rel.rd_rel).relkind } as u8;
    if !matches!(relkind, b'r' | b'i' | b'S' | b't' | b'm') {
        report(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("\"{}\" has no pages of its own (relkind '{}')", rel.name(), relkind as char),
            Some("Benchmark a table, index, materialized view, sequence or TOAST table; for a partitioned table, one of its partitions."),
        );
    }
    // SAFETY: the relation is open and locked.
    unsafe { pg_sys::RelationGetNumberOfBlocksInFork(rel.as_ptr(), pg_sys::ForkNumber::MAIN_FORKNUM) }
}

/// Benchmark a bytea.
#[pg_extern(volatile)]
fn bench(
    data: &[u8],
    methods: default!(Option<Vec<String>>, "NULL"),
    slice_sizes: default!(Option<Vec<i32>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let opts = BenchOptions::from_sql(methods, slice_sizes, iterations);
    rows_out(run_payload(&opts, Payload::new("bytea", vec![data.to_vec()])))
}

/// Benchmark a relation's pages as full-page writes see them: all pages (read a batch at a
/// time) or a seeded uniform sample of `sample_pages`, hole removed or zero-filled.
#[pg_extern(volatile)]
fn bench_pages(
    rel: PgRelation,
    methods: default!(Option<Vec<String>>, "NULL"),
    slice_sizes: default!(Option<Vec<i32>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
    sample_pages: default!(Option<i32>, "NULL"),
    seed: default!(i32, 0),
    hole: default!(&str, "'removed'"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let opts = BenchOptions::from_sql(methods, slice_sizes, iterations);
    require_page_read_privilege(&rel);
    let hole = Hole::parse(hole);
    let nblocks = relation_blocks(&rel);
    let blocks: Vec<u32> = match sample_pages {
        None => (0..nblocks).collect(),
        Some(n) if n < 0 => raise(CodecError::invalid(format!("sample_pages must not be negative, got {n}"))),
        Some(n) => payload::sample_blocks(nblocks, n as u32, seed as u64),
    };
    let source = format!("{} pages ({})", rel.name(), hole.label());
    let mut batches = blocks.chunks(PAGES_PER_BATCH as usize);
    rows_out(run_batches(&opts, &source, |_| batches.next().map(|b| Payload::new(source.clone(), read_pages(&rel, b, hole)))))
}

/// Benchmark a column's values (detoasted), a seeded sample of `sample_values` rows read with
/// the caller's privileges (column privileges and row-level security apply).
#[pg_extern(volatile)]
fn bench_column(
    rel: PgRelation,
    col: &str,
    methods: default!(Option<Vec<String>>, "NULL"),
    slice_sizes: default!(Option<Vec<i32>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
    sample_values: default!(i32, 1000),
    seed: default!(i32, 0),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let opts = BenchOptions::from_sql(methods, slice_sizes, iterations);
    if sample_values < 1 {
        raise(CodecError::invalid(format!("sample_values must be at least 1, got {sample_values}")));
    }
    let values = column_values(&rel, col, sample_values, seed);
    rows_out(run_payload(&opts, Payload::new(format!("{}.{col} values", rel.name()), values)))
}

/// Up to `limit` detoasted values of a variable-length column, sampled with TABLESAMPLE
/// BERNOULLI ... REPEATABLE(seed) sized from the planner's row estimate.
pub(crate) fn column_values(rel: &PgRelation, col: &str, limit: i32, seed: i32) -> Vec<Vec<u8>> {
    let col_c = std::ffi::CString::new(col).unwrap_or_else(|_| raise(CodecError::invalid("column name contains a NUL byte")));
    // SAFETY: catalog lookups on an open relation.
    let typlen = unsafe {
        let attnum = pg_sys::get_attnum(rel.oid(), col_c.as_ptr());
        if attnum <= 0 {
            report(
                PgSqlErrorCode::ERRCODE_UNDEFINED_COLUMN,
                format!("column \"{col}\" of relation \"{}\" does not exist", rel.name()),
                None,
            );
        }
        pg_sys::get_typlen(pg_sys::get_atttype(rel.oid(), attnum))
    };
    if typlen != -1 {
        raise(CodecError::invalid(format!(
            "column \"{col}\" has a fixed-length type; TOAST compression applies only to variable-length values"
        )));
    }
    // SAFETY: rd_rel is valid for an open relation.
    let reltuples = unsafe { (*rel.rd_rel).reltuples } as f64;
    let percent = if reltuples > 0.0 { (limit as f64 * 150.0 / reltuples).clamp(0.0001, 100.0) } else { 100.0 };
    // SAFETY: quote_identifier returns a palloc'd or static C string.
    let quoted = unsafe { CStr::from_ptr(pg_sys::quote_identifier(col_c.as_ptr())) }.to_string_lossy().into_owned();
    let query = format!(
        "SELECT {quoted} FROM {}.{} TABLESAMPLE BERNOULLI ({percent}) REPEATABLE ({seed}) WHERE {quoted} IS NOT NULL LIMIT {limit}",
        quote(rel.namespace()),
        quote(rel.name())
    );
    Spi::connect(|client| {
        let mut table = client.select(&query, None, &[]).unwrap_or_else(|e| raise(CodecError::invalid(format!("{e}"))));
        let mut values = Vec::new();
        while table.next().is_some() {
            check_for_interrupts!();
            if let Ok(Some(datum)) = table.get_datum_by_ordinal(1) {
                values.push(varlena_bytes(datum));
            }
        }
        values
    })
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// The bytes of a varlena datum after detoasting (decompressed, fetched out of line).
fn varlena_bytes(datum: pg_sys::Datum) -> Vec<u8> {
    // SAFETY: the datum is a varlena of the column's type; pg_detoast_datum_packed returns a
    // plain (possibly short-header) varlena whose payload we copy.
    unsafe {
        let v = pg_sys::pg_detoast_datum_packed(datum.cast_mut_ptr());
        pgrx::varlena::varlena_to_byte_slice(v).to_vec()
    }
}

/// Benchmark a server file or WAL segment (path relative to the data directory, or absolute),
/// from `offset` for `length` bytes (NULL: to the end). Superuser or pg_read_server_files.
#[pg_extern(volatile)]
fn bench_file(
    path: &str,
    methods: default!(Option<Vec<String>>, "NULL"),
    slice_sizes: default!(Option<Vec<i32>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
    offset: default!(i64, 0),
    length: default!(Option<i64>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    require_server_file_privilege(path);
    let opts = BenchOptions::from_sql(methods, slice_sizes, iterations);
    let data = read_server_file(path, offset, length);
    rows_out(run_payload(&opts, Payload::new(path.to_string(), vec![data])))
}

fn read_server_file(path: &str, offset: i64, length: Option<i64>) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let io_error =
        |e: std::io::Error| -> ! { report(PgSqlErrorCode::ERRCODE_IO_ERROR, format!("could not read file \"{path}\": {e}"), None) };
    if offset < 0 || length.is_some_and(|l| l < 0) {
        raise(CodecError::invalid("offset and length must not be negative"));
    }
    let limit = gucs::VARLENA_MAX as u64;
    let mut file = std::fs::File::open(path).unwrap_or_else(|e| io_error(e));
    let size = file.metadata().unwrap_or_else(|e| io_error(e)).len();
    let wanted = length.map(|l| l as u64).unwrap_or(size.saturating_sub(offset as u64));
    if wanted > limit {
        raise(CodecError::too_large(format!("{wanted} bytes requested from \"{path}\"; give length (at most {limit})")));
    }
    file.seek(SeekFrom::Start(offset as u64)).unwrap_or_else(|e| io_error(e));
    let mut data = Vec::with_capacity(wanted as usize);
    file.take(wanted).read_to_end(&mut data).unwrap_or_else(|e| io_error(e));
    data
}

/// Benchmark seeded synthetic data: zeros, random, text (English-like), pgbench (rows).
#[pg_extern(volatile)]
fn bench_synthetic(
    kind: &str,
    size: default!(i64, 1048576),
    seed: default!(i32, 0),
    methods: default!(Option<Vec<String>>, "NULL"),
    slice_sizes: default!(Option<Vec<i32>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let opts = BenchOptions::from_sql(methods, slice_sizes, iterations);
    rows_out(run_payload(&opts, synthetic_payload(kind, size, seed)))
}

fn synthetic_payload(kind: &str, size: i64, seed: i32) -> Payload {
    if !(0..=gucs::VARLENA_MAX as i64).contains(&size) {
        raise(CodecError::too_large(format!("size must be between 0 and {} bytes, got {size}", gucs::VARLENA_MAX)));
    }
    let data = payload::synthetic(kind, size as usize, seed as u64).or_raise();
    Payload::new(format!("synthetic {kind}"), vec![data])
}

/// Checksum throughput by slice size for every implementation: the crc32c crate, our
/// slicing-by-8, the server's pg_comp_crc32c (hardware) and its slicing-by-8, standard and
/// legacy CRC-32. Implementations of one family are checked to agree on every slice.
#[pg_extern(volatile)]
fn bench_crc(
    data: default!(Option<&[u8]>, "NULL"),
    slice_sizes: default!(Option<Vec<i32>>, "ARRAY[16,64,256,1024,8192]"),
    iterations: default!(Option<i32>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(source, String),
        name!(implementation, String),
        name!(family, String),
        name!(slice_size, i32),
        name!(slices, i64),
        name!(input_bytes, i64),
        name!(mbps, f64),
        name!(mbps_best, f64),
        name!(ns_per_byte, f64),
        name!(wall_s, f64),
        name!(cpu_s, f64),
        name!(iterations, i32),
    ),
> {
    let opts = BenchOptions::from_sql(Some(vec!["memcpy".into()]), slice_sizes, iterations);
    let payload = match data {
        Some(d) => Payload::new("bytea", vec![d.to_vec()]),
        None => synthetic_payload("pgbench", 1 << 20, 0),
    };
    let mut checksums = lab::harness::rust_checksums();
    checksums.push(lab::Checksum {
        name: "server_crc32c".into(),
        family: "crc32c",
        compute: Box::new(|d| server_c::c_crc32c(0, d)),
    });
    checksums.push(lab::Checksum {
        name: "server_crc32c_sb8".into(),
        family: "crc32c",
        compute: Box::new(|d| server_c::c_crc32c_sb8(0, d)),
    });
    let mut hooks = PgHooks;
    let mut rows = Vec::new();
    for &slice_size in &opts.slice_sizes {
        hooks.progress(&format!("checksums on {slice_size}-byte slices"));
        for r in lab::bench_checksums(&payload, slice_size, &checksums, opts.iterations, &mut hooks).or_raise() {
            rows.push((
                r.source,
                r.implementation,
                r.family,
                r.slice_size as i32,
                r.slices,
                r.input_bytes,
                r.mbps,
                r.mbps_best,
                r.ns_per_byte,
                r.wall_s,
                r.cpu_s,
                r.iterations,
            ));
        }
    }
    TableIterator::new(rows)
}

/// The standard suite in test_pglz's spirit: synthetic zeros, random, text and pgbench rows
/// (1 MB each) and the pages of pg_attribute and pg_proc (hole removed), each whole and in
/// 2 KB and 8 KB slices, with every default method.
fn suite_rows(iterations: Option<i32>) -> Vec<BenchRow> {
    let opts = BenchOptions::from_sql(None, None, iterations);
    let mut rows = Vec::new();
    for kind in payload::SYNTHETIC_KINDS {
        rows.extend(run_payload(&opts, synthetic_payload(kind, 1 << 20, 0)));
    }
    for catalog in ["pg_catalog.pg_attribute", "pg_catalog.pg_proc"] {
        let rel = PgRelation::open_with_name_and_share_lock(catalog).expect("catalog exists");
        require_page_read_privilege(&rel);
        let blocks: Vec<u32> = (0..relation_blocks(&rel).min(PAGES_PER_BATCH)).collect();
        let pages = read_pages(&rel, &blocks, Hole::Removed);
        rows.extend(run_payload(&opts, Payload::new(format!("{} pages (hole removed)", rel.name()), pages)));
    }
    rows
}

#[pg_extern(volatile)]
fn bench_suite(iterations: default!(Option<i32>, "NULL")) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    rows_out(suite_rows(iterations))
}

/// The standard suite as jsonb (an array of bench_result objects), for machines.
#[pg_extern(volatile)]
fn bench_suite_json(iterations: default!(Option<i32>, "NULL")) -> JsonB {
    JsonB(serde_json::to_value(suite_rows(iterations)).expect("rows serialize"))
}

/// Render bench results (a jsonb array of bench_result objects, e.g. `jsonb_agg(b)` over a
/// bench function) as a markdown table like lzbench's.
#[pg_extern(immutable, strict, parallel_safe)]
fn markdown(results: JsonB) -> String {
    lab::report::markdown(&bench_rows_from_json(results))
}

fn bench_rows_from_json(results: JsonB) -> Vec<BenchRow> {
    serde_json::from_value(results.0)
        .unwrap_or_else(|e| raise(CodecError::invalid(format!("results are not an array of bench_result rows: {e}"))))
}

/// Render bench results (a jsonb array of bench_result objects) as an SVG chart of compression
/// ratio against compression speed, one point per row.
#[pg_extern(immutable, strict, parallel_safe)]
fn svg_chart(results: JsonB, title: default!(&str, "'compression ratio vs speed'")) -> String {
    lab::report::svg_chart(&bench_rows_from_json(results), title)
}
