//! Scenario studies in SQL: what `wal_compression` and TOAST compression would store for the
//! user's relations, computed the way PostgreSQL 15 does (see the core's `scenarios` modules).

use compresslab_core::lab::{self, CodecSpec, Payload};
use compresslab_core::scenarios::{fpi, toast};
use compresslab_core::CodecError;
use pgrx::prelude::*;
use pgrx::PgRelation;

use crate::errors::{raise, OrRaise};
use crate::gucs;
use crate::lab::{build_codec, column_values, permission_denied, read_pages, relation_blocks, require_page_read_privilege, Hole, PgHooks};

fn codec(spec: &str) -> Box<dyn lab::Codec> {
    build_codec(&CodecSpec::parse(spec).unwrap())
}

/// The `wal_compression` settings of PostgreSQL 15 and the code each runs: our pglz is
/// byte-identical to the server's; lz4 and zstd run the server's own liblz4 and libzstd at the
/// settings xloginsert.c uses.
fn wal_settings() -> Vec<(String, Option<Box<dyn lab::Codec>>)> {
    vec![
        ("off".into(), None),
        ("pglz".into(), Some(codec("pglz"))),
        ("lz4".into(), Some(codec("server_lz4"))),
        ("zstd".into(), Some(codec("server_zstd:3"))),
    ]
}

/// Add one relation's full-page images (all pages, or a seeded sample scaled up) to `totals`.
fn add_relation_estimate(rel: &PgRelation, sample_pages: Option<i32>, seed: i32, totals: &mut Vec<fpi::FpiEstimate>) {
    // SAFETY: rd_rel is valid for an open relation.
    if unsafe { (*rel.rd_rel).relpersistence } as u8 != b'p' {
        return; // unlogged and temporary relations write no WAL
    }
    let nblocks = relation_blocks(rel);
    let blocks: Vec<u32> = match sample_pages {
        Some(n) => lab::payload::sample_blocks(nblocks, n as u32, seed as u64),
        None => (0..nblocks).collect(),
    };
    let scale = if blocks.is_empty() { 0.0 } else { nblocks as f64 / blocks.len() as f64 };
    lab::Hooks::progress(
        &mut PgHooks,
        &format!("estimating full-page images of {} ({} of {nblocks} pages)", rel.name(), blocks.len()),
    );
    let mut estimator = fpi::FpiEstimator::new(wal_settings());
    for batch in blocks.chunks(1024) {
        for page in read_pages(rel, batch, Hole::ZeroFilled) {
            estimator.add_page(&page);
        }
    }
    for (i, e) in estimator.finish().into_iter().enumerate() {
        let scaled = |v: u64| (v as f64 * scale).round() as u64;
        if totals.len() <= i {
            totals.push(fpi::FpiEstimate { images: 0, compressed_images: 0, fpi_bytes: 0, cpu_seconds: 0.0, ..e.clone() });
        }
        let t = &mut totals[i];
        t.images += scaled(e.images);
        t.compressed_images += scaled(e.compressed_images);
        t.fpi_bytes += scaled(e.fpi_bytes);
        t.cpu_seconds += e.cpu_seconds * scale;
    }
}

fn permanent_relations() -> Vec<pg_sys::Oid> {
    Spi::connect(|client| {
        client
            .select(
                "SELECT oid FROM pg_catalog.pg_class WHERE relkind IN ('r','i','t','m','S') AND relpersistence = 'p' ORDER BY oid",
                None,
                &[],
            )
            .unwrap_or_else(|e| raise(CodecError::invalid(format!("{e}"))))
            .filter_map(|row| row.get::<pg_sys::Oid>(1).ok().flatten())
            .collect()
    })
}

/// Estimate the WAL bytes of full-page images of a relation's pages (NULL: every permanent
/// relation of this database; superuser only) under each wal_compression setting: hole
/// removed, compressed image kept only if it beats its extra header, CPU time per image.
/// With `sample_pages`, a seeded sample of each relation is measured and scaled up.
#[pg_extern(volatile)]
fn estimate_wal_compression(
    rel: default!(Option<PgRelation>, "NULL"),
    sample_pages: default!(Option<i32>, "NULL"),
    seed: default!(i32, 0),
) -> TableIterator<
    'static,
    (
        name!(wal_compression, String),
        name!(images, i64),
        name!(compressed_images, i64),
        name!(fpi_bytes, i64),
        name!(ratio, f64),
        name!(cpu_ns_per_image, f64),
    ),
> {
    if sample_pages.is_some_and(|n| n < 1) {
        raise(CodecError::invalid("sample_pages must be at least 1"));
    }
    let mut totals: Vec<fpi::FpiEstimate> = Vec::new();
    match rel {
        Some(rel) => {
            require_page_read_privilege(&rel);
            add_relation_estimate(&rel, sample_pages, seed, &mut totals);
        }
        None => {
            // SAFETY: a catalog lookup on the current user.
            if !unsafe { pg_sys::superuser() } {
                permission_denied(
                    "permission denied to estimate WAL compression for the whole database".into(),
                    "Like wal_compression itself, a database-wide estimate is for superusers; name a relation you may read.",
                );
            }
            for oid in permanent_relations() {
                // SAFETY: AccessShareLock is taken here; one relation is open at a time.
                let rel = unsafe { PgRelation::with_lock(oid, pg_sys::AccessShareLock as _) };
                add_relation_estimate(&rel, sample_pages, seed, &mut totals);
            }
        }
    }
    if totals.is_empty() {
        totals = wal_settings()
            .into_iter()
            .map(|(name, _)| fpi::FpiEstimate { wal_compression: name, images: 0, compressed_images: 0, fpi_bytes: 0, cpu_seconds: 0.0 })
            .collect();
    }
    let off_bytes = totals[0].fpi_bytes as f64;
    TableIterator::new(totals.into_iter().map(move |e| {
        let ratio = if e.fpi_bytes > 0 { off_bytes / e.fpi_bytes as f64 } else { 1.0 };
        let ns = e.cpu_ns_per_image();
        (e.wal_compression, e.images as i64, e.compressed_images as i64, e.fpi_bytes as i64, ratio, ns)
    }))
}

/// Bytes of the other columns of a row that every tuple carries: the heap tuple header plus
/// the fixed-length columns (variable-length ones vary and are not counted).
fn row_overhead(rel: &PgRelation, col: &str) -> usize {
    let fixed = Spi::get_one_with_args::<i64>(
        "SELECT coalesce(sum(attlen), 0)::bigint FROM pg_catalog.pg_attribute \
         WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped AND attlen > 0 AND attname <> $2",
        &[rel.oid().into(), col.into()],
    )
    .ok()
    .flatten()
    .unwrap_or(0);
    24 + fixed as usize
}

/// Estimate what TOAST would store for a column under each compression method (pglz, lz4),
/// following PostgreSQL 15's rules for which values it tries to compress and keeps compressed,
/// with compression and decompression speed on the same values.
#[pg_extern(volatile)]
fn estimate_toast_compression(
    rel: PgRelation,
    col: &str,
    sample_values: default!(i32, 1000),
    seed: default!(i32, 0),
) -> TableIterator<
    'static,
    (
        name!(method, String),
        name!(values, i64),
        name!(compressed_values, i64),
        name!(raw_bytes, i64),
        name!(stored_bytes, i64),
        name!(ratio, f64),
        name!(compress_mbps, f64),
        name!(decompress_mbps, f64),
    ),
> {
    if sample_values < 1 {
        raise(CodecError::invalid(format!("sample_values must be at least 1, got {sample_values}")));
    }
    let values = column_values(&rel, col, sample_values, seed);
    let overhead = row_overhead(&rel, col);
    let payload = Payload::new(format!("{}.{col}", rel.name()), values);
    let mut rows = Vec::new();
    // TOAST's pglz is the server's own code, ours is byte-identical; its lz4 is the system liblz4.
    for (method, spec) in [("pglz", "pglz"), ("lz4", "server_lz4")] {
        let mut codec = codec(spec);
        let mut scratch = Vec::new();
        let (mut stored, mut compressed, mut raw) = (0usize, 0i64, 0usize);
        for value in &payload.pieces {
            check_for_interrupts!();
            let len = codec.compress(value, &mut scratch);
            let (size, was_compressed) = toast::stored_value_size(value.len(), overhead, len);
            stored += size;
            raw += value.len();
            compressed += was_compressed as i64;
        }
        let speed = lab::measure_codec(&payload, 0, codec.as_mut(), gucs::bench_iterations() as u32, &mut PgHooks).or_raise();
        let row = speed.row(&payload.name, method, None, 0);
        let ratio = if stored > 0 { raw as f64 / stored as f64 } else { 1.0 };
        rows.push((
            method.to_string(),
            payload.pieces.len() as i64,
            compressed,
            raw as i64,
            stored as i64,
            ratio,
            row.compress_mbps,
            row.decompress_mbps,
        ));
    }
    TableIterator::new(rows)
}
