//! The lab in SQL: benchmark functions per payload source, all with the same options and the
//! same result type (`compresslab.bench_result`), plus checksum rows, a standard suite, jsonb,
//! markdown and SVG output.

use compresslab_core::lab::batches::PROGRESS_EVERY;
use compresslab_core::lab::{self, payload, render, BenchRow, Hooks, Payload, RunOptions};
use compresslab_core::page::Hole;
use compresslab_core::registry::{self, parse_named, MethodSpec, Named};
use compresslab_core::ticking;
use compresslab_core::CodecError;
use pgrx::prelude::*;
use pgrx::{composite_type, JsonB, PgRelation};

use crate::bytea::ResultBytea;
use crate::errors::{raise, required, OrRaise};
use crate::gucs;
use crate::measure::{build_codec, sample_size, sampled_blocks};
use crate::rows::{set_of, Row};
use crate::server::catalog::privileges::{require_page_read, require_server_file_read};
use crate::server::catalog::relations::RegClass;
use crate::server::pages::{read_pages, relation_blocks, PAGES_PER_BATCH};
use crate::server::{check_interrupts, codecs, files, sampling, PgHooks};

const DEFAULT_SLICE_SIZES: &[usize] = &[2048, 8192, 0];
const BENCH_RESULT: &str = "compresslab.bench_result";

/// Slice sizes from SQL (NULL: `default`): non-negative, 0 meaning whole pieces.
pub(crate) fn slice_sizes(sizes: Option<Vec<Option<i32>>>, default: &[usize]) -> Vec<usize> {
    match sizes {
        None => default.to_vec(),
        Some(s) if s.is_empty() => raise(CodecError::invalid("slice_sizes must not be an empty array")),
        Some(s) => s
            .into_iter()
            .map(|n| {
                let n = required(n, "an element of slice_sizes");
                usize::try_from(n).unwrap_or_else(|_| {
                    raise(CodecError::invalid(format!("slice size {n} is negative; use 0 for whole pieces")))
                })
            })
            .collect(),
    }
}

/// Timed iterations from SQL (NULL: `compresslab.bench_iterations`).
pub(crate) fn iterations(iterations: Option<i32>) -> u32 {
    let n = iterations.unwrap_or_else(gucs::bench_iterations);
    if !(1..=gucs::MAX_BENCH_ITERATIONS).contains(&n) {
        raise(CodecError::invalid(format!("iterations must be between 1 and {}, got {n}", gucs::MAX_BENCH_ITERATIONS)));
    }
    n as u32
}

/// Methods from SQL (NULL: the registry's defaults), parsed and checked; nothing is built.
pub(crate) fn methods(methods: Option<Vec<Option<String>>>) -> Vec<MethodSpec> {
    let texts: Option<Vec<String>> =
        methods.map(|m| m.into_iter().map(|t| required(t, "an element of methods")).collect());
    registry::parse_methods(texts.as_deref(), gucs::zstd_level()).or_raise()
}

/// The options every bench function takes, parsed once.
fn run_options(methods: Option<Vec<Option<String>>>, sizes: Option<Vec<Option<i32>>>, n: Option<i32>) -> RunOptions {
    RunOptions {
        methods: self::methods(methods),
        slice_sizes: slice_sizes(sizes, DEFAULT_SLICE_SIZES),
        iterations: iterations(n),
    }
}

/// The lab's own copy of a value, made a piece at a time with checks for cancel between.
fn copy_value(data: &[u8]) -> compresslab_core::error::Result<Vec<u8>> {
    ticking::try_copy(data, "a copy of the value", &mut check_interrupts)
}

fn run_payload(opts: &RunOptions, payload: Payload) -> Vec<BenchRow> {
    lab::run_payload(opts, payload, &mut codecs::build, &mut PgHooks).or_raise()
}

fn bench_rows(rows: Vec<BenchRow>) -> SetOfIterator<'static, Row> {
    set_of(BENCH_RESULT, &rows)
}

/// Benchmark a bytea.
#[pg_extern(volatile, parallel_safe)]
fn bench(
    data: Option<&[u8]>,
    methods: default!(Option<Vec<Option<String>>>, "NULL"),
    slice_sizes: default!(Option<Vec<Option<i32>>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let opts = run_options(methods, slice_sizes, iterations);
    let data = copy_value(required(data, "data")).or_raise();
    bench_rows(run_payload(&opts, Payload::new("bytea", vec![data])))
}

/// Benchmark a relation's pages as full-page writes see them: all pages (read a batch at a
/// time) or a seeded uniform sample of `sample_pages`, hole removed or zero-filled.
#[pg_extern(volatile, parallel_restricted)]
fn bench_pages(
    rel: Option<RegClass>,
    methods: default!(Option<Vec<Option<String>>>, "NULL"),
    slice_sizes: default!(Option<Vec<Option<i32>>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
    sample_pages: default!(Option<i32>, "1000"),
    seed: default!(Option<i32>, "0"),
    hole: default!(Option<&str>, "'removed'"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let seed = required(seed, "seed");
    let hole = required(hole, "hole");
    let opts = run_options(methods, slice_sizes, iterations);
    let hole = Hole::parse(hole).or_raise();
    let rel = required(rel, "rel").open();
    require_page_read(&rel);
    let nblocks = relation_blocks(&rel);
    let blocks = sampled_blocks(nblocks, sample_size(sample_pages, "sample_pages"), seed);
    let source = format!("{} pages ({})", rel.name(), hole.label());
    let mut batches = blocks.chunks(PAGES_PER_BATCH);
    let next = || Ok(batches.next().map(|b| Payload::new(source.clone(), read_pages(&rel, b, hole))));
    bench_rows(lab::run_batches(&opts, &source, next, &mut codecs::build, &mut PgHooks, PROGRESS_EVERY).or_raise())
}

/// Benchmark a column's values (detoasted), a seeded sample of `sample_values` rows read with
/// the caller's privileges (column privileges and row-level security apply).
#[pg_extern(volatile, parallel_restricted)]
fn bench_column(
    rel: Option<RegClass>,
    col: Option<&str>,
    methods: default!(Option<Vec<Option<String>>>, "NULL"),
    slice_sizes: default!(Option<Vec<Option<i32>>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
    sample_values: default!(Option<i32>, "1000"),
    seed: default!(Option<i32>, "0"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let seed = required(seed, "seed");
    let opts = run_options(methods, slice_sizes, iterations);
    let (rel, col) = (required(rel, "rel").open(), required(col, "col"));
    let values = sampling::column_values(&rel, col, sample_size(sample_values, "sample_values"), seed);
    bench_rows(run_payload(&opts, Payload::new(format!("{}.{col} values", rel.name()), values)))
}

/// The harness's own cost: each method timed on `data`'s slices by the lab's loop (interleaving
/// aside, it runs alone here) and by a bare loop as lzbench times (all compression passes back
/// to back, then all decompression passes, one verification at the end), in this process, in
/// three alternating rounds; medians of `iterations` (rounded up to a multiple of 3) each.
/// `overhead_percent` is how much slower the lab's loop measured the method than the bare loop
/// did (negative: faster).
#[pg_extern(volatile, parallel_safe)]
#[allow(clippy::type_complexity)]
fn bench_overhead(
    data: Option<&[u8]>,
    methods: default!(Option<Vec<Option<String>>>, "NULL"),
    slice_size: default!(Option<i32>, "8192"),
    iterations: default!(Option<i32>, "NULL"),
) -> TableIterator<
    'static,
    (
        name!(method, String),
        name!(slice_size, i32),
        name!(lab_compress_mbps, f64),
        name!(bare_compress_mbps, f64),
        name!(compress_overhead_percent, f64),
        name!(lab_decompress_mbps, Option<f64>),
        name!(bare_decompress_mbps, Option<f64>),
        name!(decompress_overhead_percent, Option<f64>),
    ),
> {
    let slice_size = required(slice_size, "slice_size");
    let slice = self::slice_sizes(Some(vec![Some(slice_size)]), &[])[0];
    let opts = run_options(methods, None, iterations);
    let data = copy_value(required(data, "data")).or_raise();
    let payload = Payload::new("bytea", vec![data]);
    let mut hooks = PgHooks;
    let overhead = |lab: f64, bare: f64| 100.0 * (bare / lab - 1.0);
    // A method that does not take this value's slices (the server's pglz_compress, bounded) is
    // left out with a NOTICE, as the lab leaves it out.
    let longest = if slice == 0 { payload.total_bytes() } else { slice.min(payload.total_bytes()) };
    let methods: Vec<&MethodSpec> = opts
        .methods
        .iter()
        .filter(|spec| match build_codec(spec).max_slice() {
            Some((max, why)) if longest > max => {
                hooks.progress(&format!(
                    "bench_overhead: {} left out: a slice of {longest} bytes is more than the {max} bytes {why}",
                    spec.label()
                ));
                false
            }
            _ => true,
        })
        .collect();
    let rows: Vec<_> = methods
        .into_iter()
        .map(|spec| {
            hooks.progress(&format!("bench_overhead: {} on {slice}-byte slices", spec.label()));
            let (lab, bare) =
                lab::measure_overhead(&payload, slice, &mut || Ok(build_codec(spec)), opts.iterations, &mut hooks)
                    .or_raise();
            let (lab, bare) = (lab.row("lab", spec, slice), bare.row("bare", spec, slice));
            (
                spec.label(),
                slice as i32,
                lab.compress_mbps,
                bare.compress_mbps,
                overhead(lab.compress_mbps, bare.compress_mbps),
                lab.decompress_mbps,
                bare.decompress_mbps,
                lab.decompress_mbps.zip(bare.decompress_mbps).map(|(l, b)| overhead(l, b)),
            )
        })
        .collect();
    TableIterator::new(rows)
}

/// Benchmark a server file or WAL segment (path relative to the data directory, or absolute),
/// from `start_byte` for `byte_count` bytes (NULL: to the end); rows of a part of a file name
/// it `path[start+bytes]`. Superuser or pg_read_server_files.
#[pg_extern(volatile, parallel_safe)]
fn bench_file(
    path: Option<&str>,
    methods: default!(Option<Vec<Option<String>>>, "NULL"),
    slice_sizes: default!(Option<Vec<Option<i32>>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
    start_byte: default!(Option<i64>, "0"),
    byte_count: default!(Option<i64>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let start = required(start_byte, "start_byte");
    let path = required(path, "path");
    require_server_file_read(path);
    let opts = run_options(methods, slice_sizes, iterations);
    let data = files::read_server_file(path, start, byte_count, gucs::VARLENA_MAX as usize);
    // Part of a file: the range read, so that rows of different parts tell apart.
    let source =
        if start == 0 && byte_count.is_none() { path.to_string() } else { format!("{path}[{start}+{}]", data.len()) };
    bench_rows(run_payload(&opts, Payload::new(source, vec![data])))
}

/// Benchmark seeded synthetic data: zeros, random, text (English-like), pgbench (rows).
#[pg_extern(volatile, parallel_safe)]
fn bench_synthetic(
    kind: Option<&str>,
    size: default!(Option<i64>, "1048576"),
    seed: default!(Option<i32>, "0"),
    methods: default!(Option<Vec<Option<String>>>, "NULL"),
    slice_sizes: default!(Option<Vec<Option<i32>>>, "NULL"),
    iterations: default!(Option<i32>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    let size = required(size, "size");
    let seed = required(seed, "seed");
    let opts = run_options(methods, slice_sizes, iterations);
    let kind = parse_named(required(kind, "kind")).or_raise();
    bench_rows(run_payload(&opts, synthetic_payload(kind, size, seed)))
}

fn synthetic_payload(kind: payload::SyntheticKind, size: i64, seed: i32) -> Payload {
    let data = payload::generate(kind, synthetic_size(size), seed as u64, &mut || PgHooks.tick()).or_raise();
    Payload::new(format!("synthetic {}", kind.name()), vec![data])
}

fn synthetic_size(size: i64) -> usize {
    if !(0..=gucs::MAX_RESULT as i64).contains(&size) {
        raise(CodecError::invalid(format!("size must be between 0 and {} bytes, got {size}", gucs::MAX_RESULT)));
    }
    size as usize
}

/// Seeded synthetic bytes, the payloads of `bench_synthetic`: `zeros`, `random`, `text`
/// (English-like), `pgbench` (pgbench_accounts rows), a repeated pattern `period1` ..
/// `period64` or `runs` (runs of one byte in random data); the same bytes for the same arguments.
/// Generated straight into the result.
#[pg_extern(immutable, parallel_safe)]
fn synthetic(
    kind: Option<&str>,
    size: default!(Option<i64>, "1048576"),
    seed: default!(Option<i32>, "0"),
) -> ResultBytea {
    let size = required(size, "size");
    let seed = required(seed, "seed");
    let kind = parse_named(required(kind, "kind")).or_raise();
    let mut out = ResultBytea::zeroed(synthetic_size(size));
    payload::generate_into(kind, out.data_mut(), seed as u64, &mut || PgHooks.tick());
    out
}

/// Checksum throughput by slice size for every implementation: the crc32c crate, our
/// slicing-by-8, the server's pg_comp_crc32c (hardware) and its slicing-by-8, standard and
/// legacy CRC-32. Implementations of one family are checked to agree on every slice.
#[pg_extern(volatile, parallel_safe)]
fn bench_crc(
    data: default!(Option<&[u8]>, "NULL"),
    slice_sizes: default!(Option<Vec<Option<i32>>>, "ARRAY[16,64,256,1024,8192]"),
    iterations: default!(Option<i32>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.checksum_result")> {
    let slice_sizes = self::slice_sizes(slice_sizes, &[16, 64, 256, 1024, 8192]);
    let iterations = self::iterations(iterations);
    let payload = match data {
        Some(d) => Payload::new("bytea", vec![copy_value(d).or_raise()]),
        None => synthetic_payload(payload::SyntheticKind::Pgbench, 1 << 20, 0),
    };
    let mut checksums = lab::checksums::rust_checksums();
    checksums.push(lab::Checksum {
        name: "server_crc32c".into(),
        family: "crc32c",
        compute: Box::new(|d| codecs::c_crc32c(0, d)),
    });
    checksums.push(lab::Checksum {
        name: "server_crc32c_sb8".into(),
        family: "crc32c",
        compute: Box::new(|d| codecs::c_crc32c_sb8(0, d)),
    });
    let mut hooks = PgHooks;
    let mut rows = Vec::new();
    for &slice_size in &slice_sizes {
        hooks.progress(&format!("checksums on {slice_size}-byte slices"));
        rows.extend(lab::bench_checksums(&payload, slice_size, &checksums, iterations, &mut hooks).or_raise());
    }
    set_of("compresslab.checksum_result", &rows)
}

/// The standard suite in test_pglz's spirit: synthetic zeros, random, text and pgbench rows
/// (1 MB each) and the pages of pg_attribute and pg_proc (hole removed), each whole and in
/// 2 KB and 8 KB slices, with every default method.
fn suite_rows(iterations: Option<i32>) -> Vec<BenchRow> {
    let opts = run_options(None, None, iterations);
    let mut rows = Vec::new();
    for &kind in payload::SUITE_KINDS {
        rows.extend(run_payload(&opts, synthetic_payload(kind, 1 << 20, 0)));
    }
    for catalog in ["pg_catalog.pg_attribute", "pg_catalog.pg_proc"] {
        let rel = PgRelation::open_with_name_and_share_lock(catalog).expect("catalog exists");
        require_page_read(&rel);
        let blocks: Vec<u32> = (0..relation_blocks(&rel).min(PAGES_PER_BATCH as u32)).collect();
        let pages = read_pages(&rel, &blocks, Hole::Removed);
        rows.extend(run_payload(&opts, Payload::new(format!("{} pages (hole removed)", rel.name()), pages)));
    }
    rows
}

#[pg_extern(volatile, parallel_restricted)]
fn bench_suite(
    iterations: default!(Option<i32>, "NULL"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.bench_result")> {
    bench_rows(suite_rows(iterations))
}

/// The standard suite as jsonb (an array of bench_result objects), for machines.
#[pg_extern(volatile, parallel_restricted)]
fn bench_suite_json(iterations: default!(Option<i32>, "NULL")) -> JsonB {
    JsonB(serde_json::to_value(suite_rows(iterations)).expect("rows serialize"))
}

/// Rows of one of the lab's result types, from jsonb (`jsonb_agg(r)` over a bench function):
/// whichever type the rows' fields are (an empty array is bench rows).
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum LabRows {
    Bench(Vec<BenchRow>),
    Checksum(Vec<lab::ChecksumRow>),
}

/// A jsonb argument as its text (`jsonb_out`), parsed by the function: pgrx's `JsonB` parses
/// it on the way in and fails with an internal error (Rust debug text) on what serde_json
/// refuses, such as JSON nested deeper than 128 levels.
pub struct JsonbText(String);

impl FromDatum for JsonbText {
    unsafe fn from_polymorphic_datum(datum: pg_sys::Datum, is_null: bool, _: pg_sys::Oid) -> Option<JsonbText> {
        if is_null {
            return None;
        }
        // SAFETY: a non-null jsonb datum; jsonb_out detoasts it and returns a palloc'd C string.
        let text = unsafe {
            pgrx::direct_function_call::<&std::ffi::CStr>(pg_sys::jsonb_out, &[Some(datum)])
                .expect("jsonb_out returns text")
        };
        Some(JsonbText(text.to_string_lossy().into_owned()))
    }
}

// SAFETY: unboxed through FromDatum, as pgrx's own JsonB.
unsafe impl<'fcx> pgrx::callconv::ArgAbi<'fcx> for JsonbText {
    unsafe fn unbox_arg_unchecked(arg: pgrx::callconv::Arg<'_, 'fcx>) -> Self {
        let index = arg.index();
        // SAFETY: the caller's contract: a jsonb argument.
        unsafe { arg.unbox_arg_using_from_datum() }.unwrap_or_else(|| panic!("argument {index} must not be null"))
    }
}

// SAFETY: the SQL type is jsonb, whose datums FromDatum reads.
unsafe impl pgrx::pgrx_sql_entity_graph::metadata::SqlTranslatable for JsonbText {
    const TYPE_IDENT: &'static str = concat!(module_path!(), "::JsonbText");
    const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
        pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
    const ARGUMENT_SQL: Result<
        pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef,
        pgrx::pgrx_sql_entity_graph::metadata::ArgumentError,
    > = Ok(pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef::literal("jsonb"));
    const RETURN_SQL: Result<
        pgrx::pgrx_sql_entity_graph::metadata::ReturnsRef,
        pgrx::pgrx_sql_entity_graph::metadata::ReturnsError,
    > = Ok(pgrx::pgrx_sql_entity_graph::metadata::ReturnsRef::One(
        pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef::literal("jsonb"),
    ));
}

fn lab_rows_from_json(results: JsonbText) -> LabRows {
    // serde_json refuses JSON nested deeper than 128 levels, which no result row is.
    let results: serde_json::Value = serde_json::from_str(&results.0).unwrap_or_else(|e| {
        raise(CodecError::invalid(if e.to_string().starts_with("recursion limit exceeded") {
            "results are nested deeper than 128 levels: not an array of bench_result or checksum_result rows"
                .to_string()
        } else {
            format!("results are not JSON compresslab can read: {e}")
        }))
    });
    serde_json::from_value(results).unwrap_or_else(|_| {
        raise(CodecError::invalid(
            "results are not an array of bench_result or checksum_result rows (jsonb_agg over one bench function)",
        ))
    })
}

fn bench_rows_from_json(results: JsonbText) -> Vec<BenchRow> {
    match lab_rows_from_json(results) {
        LabRows::Bench(rows) => rows,
        LabRows::Checksum(_) => raise(CodecError::invalid(
            "svg_chart plots compression ratio against speed; checksum rows have no ratio: render them with markdown()",
        )),
    }
}

/// Render lab results (a jsonb array of bench_result or checksum_result rows, e.g.
/// `jsonb_agg(b)` over a bench function or bench_crc) as a markdown table like lzbench's.
#[pg_extern(immutable, strict, parallel_safe)]
fn markdown(results: JsonbText) -> String {
    match lab_rows_from_json(results) {
        LabRows::Bench(rows) => render::markdown(&rows),
        LabRows::Checksum(rows) => render::checksum_markdown(&rows),
    }
}

/// Render bench results (a jsonb array of bench_result objects) as an SVG chart of compression
/// ratio against compression speed, one point per row.
#[pg_extern(immutable, strict, parallel_safe)]
fn svg_chart(results: JsonbText, title: default!(&str, "'compression ratio vs speed'")) -> String {
    render::svg_chart(&bench_rows_from_json(results), title)
}

/// Render what columns store under each method (a jsonb array of objects with `column`,
/// `method`, `stored_bytes` and, if sampled, `stored_bytes_low` and `stored_bytes_high`: the
/// rows of estimate_toast_compression with the column named) as an SVG chart: a group of bars
/// per column, one per method, each with its 95% interval.
#[pg_extern(immutable, strict, parallel_safe)]
fn svg_stored_chart(results: JsonbText, title: default!(&str, "'stored bytes per column and method'")) -> String {
    let bars: Vec<render::StoredBar> = serde_json::from_str(&results.0).unwrap_or_else(|e| {
        raise(CodecError::invalid(format!(
            "results are not an array of objects with column, method and stored_bytes (numbers, the intervals optional): {e}"
        )))
    });
    render::svg_stored_chart(
        &bars,
        title,
        "Each bar: the bytes the column would store under the method, each value of its sampled rows toasted anew \
         (estimate_toast_compression); the whisker: its 95% interval where the table was sampled.",
    )
}
