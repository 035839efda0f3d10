//! Scenario studies in SQL: what `wal_compression` and TOAST compression would store for the
//! user's relations, computed the way PostgreSQL 15 does (the core's `scenarios` modules).

use compresslab_core::lab::{Hooks, Payload};
use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::registry::Named;
use compresslab_core::scenarios::fpi::FpiTotals;
use compresslab_core::scenarios::toast;
use pgrx::prelude::*;
use pgrx::{composite_type, PgRelation};

use crate::errors::{required, OrRaise};
use crate::gucs;
use crate::measure::{add_relation, build_codec, sample_size};
use crate::rows::set_of;
use crate::server::privileges::{require_page_read, require_superuser};
use crate::server::relations::RegClass;
use crate::server::versions::toast_built_with;
use crate::server::{sampling, PgHooks};

/// Estimate the WAL bytes of full-page images of a relation's pages (NULL: every permanent
/// relation of this database; superuser only) under each wal_compression setting: hole
/// removed, compressed image kept only if it beats its extra header, CPU time per image.
/// With `sample_pages`, a seeded sample of each relation is measured and scaled up.
#[pg_extern(volatile, parallel_restricted)]
fn estimate_wal_compression(
    rel: default!(Option<RegClass>, "NULL"),
    sample_pages: default!(Option<i32>, "1000"),
    seed: default!(Option<i32>, "0"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.wal_compression_estimate")> {
    let seed = required(seed, "seed");
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
    seed: default!(Option<i32>, "0"),
) -> SetOfIterator<'static, composite_type!('static, "compresslab.toast_compression_estimate")> {
    let seed = required(seed, "seed");
    let (rel, col) = (required(rel, "rel").open(), required(col, "col"));
    let sample_values = sample_size(sample_values, "sample_values");
    let values = Payload::new(format!("{}.{col}", rel.name()), sampling::column_values(&rel, col, sample_values, seed));
    // A sample stands for the whole column, as a page sample does for the relation.
    let rows = sampling::estimated_rows(&rel);
    let sampled = values.pieces.len();
    let scale =
        if sample_values.is_some() && sampled > 0 && rows > sampled as f64 { rows / sampled as f64 } else { 1.0 };
    let overhead = sampling::row_overhead(&rel, col);
    let iterations = gucs::bench_iterations() as u32;
    let estimates: Vec<toast::ToastRow> = ToastCompression::ALL
        .iter()
        .filter(|&&method| built_with(method))
        .map(|method| {
            let mut codec = build_codec(&method.server_method());
            toast::estimate(&values, overhead, method.name(), codec.as_mut(), iterations, &mut PgHooks)
                .or_raise()
                .scaled(scale)
        })
        .collect();
    set_of("compresslab.toast_compression_estimate", &estimates)
}

/// Whether the server was built with TOAST compression `method` (lz4 needs its liblz4); a
/// NOTICE says when it was not.
fn built_with(method: ToastCompression) -> bool {
    let built = toast_built_with(method);
    if !built {
        PgHooks.progress(&format!("{method} left out: this server was built without it"));
    }
    built
}
