//! Scenario studies in SQL: what `wal_compression` and TOAST compression would store for the
//! user's relations, computed the way PostgreSQL 15 does (the core's `scenarios` modules).

use compresslab_core::lab::{Hooks, Payload};
use compresslab_core::page::Hole;
use compresslab_core::registry::MethodSpec;
use compresslab_core::scenarios::fpi::{FpiEstimator, FpiTotals, WAL_SETTINGS};
use compresslab_core::scenarios::toast::{self, TOAST_METHODS};
use pgrx::prelude::*;
use pgrx::{composite_type, PgRelation};

use super::lab::{build_codec, sample_size, sampled_blocks};
use crate::errors::{required, OrRaise};
use crate::gucs;
use crate::rows::set_of;
use crate::server::pages::{is_permanent, read_pages, relation_blocks};
use crate::server::privileges::{require_page_read, require_superuser};
use crate::server::relations::RegClass;
use crate::server::{sampling, PgHooks};

/// Pages read and measured per batch.
const PAGES_PER_BATCH: usize = 1024;

pub(super) fn codec_of(method: &str) -> Box<dyn compresslab_core::lab::Codec> {
    build_codec(&MethodSpec::parse(method, gucs::zstd_level()).or_raise())
}

/// Add one relation's full-page images (all pages, or a seeded sample scaled up) to `totals`.
pub(super) fn add_relation(rel: &PgRelation, sample_pages: Option<i32>, seed: i32, totals: &mut FpiTotals) {
    if !is_permanent(rel) {
        return; // unlogged and temporary relations write no WAL
    }
    let nblocks = relation_blocks(rel);
    let blocks = sampled_blocks(nblocks, sample_pages, seed);
    PgHooks.progress(&format!("estimating full-page images of {} ({} of {nblocks} pages)", rel.name(), blocks.len()));
    let settings = WAL_SETTINGS.iter().map(|(name, method)| (name.to_string(), method.map(codec_of))).collect();
    let mut estimator = FpiEstimator::new(settings);
    for batch in blocks.chunks(PAGES_PER_BATCH) {
        for page in read_pages(rel, batch, Hole::ZeroFilled) {
            estimator.add_page(&page).or_raise();
        }
    }
    let scale = if blocks.is_empty() { 0.0 } else { nblocks as f64 / blocks.len() as f64 };
    totals.add_scaled(estimator.finish(), scale);
}

/// Estimate the WAL bytes of full-page images of a relation's pages (NULL: every permanent
/// relation of this database; superuser only) under each wal_compression setting: hole
/// removed, compressed image kept only if it beats its extra header, CPU time per image.
/// With `sample_pages`, a seeded sample of each relation is measured and scaled up.
#[pg_extern(volatile, parallel_restricted)]
fn estimate_wal_compression(
    rel: default!(Option<RegClass>, "NULL"),
    sample_pages: default!(Option<i32>, "1000"),
    seed: default!(i32, 0),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.wal_compression_estimate")> {
    let sample_pages = sample_size(sample_pages, "sample_pages");
    let mut totals = FpiTotals::default();
    match rel {
        Some(rel) => {
            let rel = rel.open();
            require_page_read(&rel);
            add_relation(&rel, sample_pages, seed, &mut totals);
        }
        None => {
            require_superuser(
                "estimate WAL compression for the whole database",
                "Like wal_compression itself, a database-wide estimate is for superusers; name a relation you may read.",
            );
            for oid in sampling::permanent_relations() {
                // SAFETY: AccessShareLock is taken here; one relation is open at a time.
                let rel = unsafe { PgRelation::with_lock(oid, pg_sys::AccessShareLock as _) };
                add_relation(&rel, sample_pages, seed, &mut totals);
            }
        }
    }
    set_of("compresslab.wal_compression_estimate", &totals.rows())
}

/// Estimate what TOAST would store for a column under each compression method (pglz, lz4),
/// following PostgreSQL 15's rules for which values it tries to compress and keeps compressed,
/// with compression and decompression speed on the same values.
#[pg_extern(volatile, parallel_restricted)]
fn estimate_toast_compression(
    rel: Option<RegClass>,
    col: Option<&str>,
    sample_values: default!(Option<i32>, "1000"),
    seed: default!(i32, 0),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.toast_compression_estimate")> {
    let (rel, col) = (required(rel, "rel").open(), required(col, "col"));
    let sample_values = sample_size(sample_values, "sample_values");
    let estimate = toast_estimate(&rel, col, sample_values, seed, gucs::bench_iterations() as u32);
    set_of("compresslab.toast_compression_estimate", &estimate.rows)
}

/// A column's TOAST estimate under each method, scaled from the sample to the column.
pub(super) struct ToastEstimate {
    pub rows: Vec<toast::ToastRow>,
    /// Values sampled, and the factor from the sample to the column.
    pub sampled: usize,
    pub scale: f64,
    /// The values read.
    pub values: Payload,
}

pub(super) fn toast_estimate(
    rel: &PgRelation,
    col: &str,
    sample_values: Option<i32>,
    seed: i32,
    iterations: u32,
) -> ToastEstimate {
    let values = sampling::column_values(rel, col, sample_values, seed);
    toast_estimate_of(rel, col, values, sample_values.is_some(), iterations)
}

/// [`toast_estimate`] of values already read (`is_sample`: a sample, not the whole column).
pub(super) fn toast_estimate_of(
    rel: &PgRelation,
    col: &str,
    values: Vec<Vec<u8>>,
    is_sample: bool,
    iterations: u32,
) -> ToastEstimate {
    let values = Payload::new(format!("{}.{col}", rel.name()), values);
    // A sample stands for the whole column, as a page sample does for the relation.
    let rows = sampling::estimated_rows(rel);
    let sampled = values.pieces.len();
    let scale = if is_sample && sampled > 0 && rows > sampled as f64 { rows / sampled as f64 } else { 1.0 };
    let overhead = sampling::row_overhead(rel, col);
    let rows = TOAST_METHODS
        .iter()
        .map(|(name, method)| {
            toast::estimate(&values, overhead, name, codec_of(method).as_mut(), iterations, &mut PgHooks)
                .or_raise()
                .scaled(scale)
        })
        .collect();
    ToastEstimate { rows, sampled, scale, values }
}
