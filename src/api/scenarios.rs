//! Scenario studies in SQL: what `wal_compression` and TOAST compression would store for the
//! user's relations, computed the way PostgreSQL 15 does (the core's `scenarios` modules).

use std::time::{Duration, Instant};

use compresslab_core::lab::{Codec, Hooks, Payload};
use compresslab_core::pg_compression::ToastCompression;
use compresslab_core::registry::Named;
use compresslab_core::sampling::{BlockOrder, BlockTotals, ColumnBlocks, Estimate};
use compresslab_core::scenarios::fpi::FpiTotals;
use compresslab_core::scenarios::toast;
use pgrx::prelude::*;
use pgrx::{composite_type, PgRelation};

use crate::errors::{required, OrRaise};
use crate::gucs;
use crate::measure::{add_relation, build_codec, sample_size};
use crate::rows::set_of;
use crate::server::catalog::privileges::{require_page_read, require_superuser};
use crate::server::catalog::relations::RegClass;
use crate::server::codecs::versions::toast_built_with;
use crate::server::sampling::WHOLE_TABLE_BLOCKS;
use crate::server::{check_interrupts, sampling, PgHooks};

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
            for oid in crate::server::catalog::relations::permanent_relations() {
                // SAFETY: AccessShareLock is taken here; one relation is open at a time.
                let rel = unsafe { PgRelation::with_lock(oid, pg_sys::AccessShareLock as _) };
                add_relation(&rel, sample_pages, seed, &mut totals);
            }
        }
    }
    set_of("compresslab.wal_compression_estimate", &totals.rows())
}

/// Values timed for the speeds, at most: the first read (a random part of the sample).
const TIMING_BYTES: usize = 16 << 20;
/// Far enough ahead never to come: the estimate has no budget but statement_timeout.
const NO_DEADLINE: Duration = Duration::from_secs(100 * 365 * 86400);

/// Estimate what TOAST would store for a column under each compression method (pglz, lz4),
/// each sampled row toasted anew as PostgreSQL 15 to 19 would (which values it tries to
/// compress and keeps compressed depends on the row), with compression and decompression
/// speed on the values. The sample is every row of blocks drawn at random from the whole
/// table until it holds `sample_values` values (NULL: the whole table), scaled up by blocks;
/// a NOTICE gives the blocks read and each figure's 95% interval.
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
    let sampler = sampling::BlockSampler::new(&rel, col);
    let methods: Vec<ToastCompression> = ToastCompression::ALL.iter().copied().filter(|&m| built_with(m)).collect();
    let mut codecs: Vec<(&str, Box<dyn Codec>)> =
        methods.iter().map(|m| (m.name(), build_codec(&m.server_method()))).collect();
    let (mut timing, mut timing_bytes) = (Vec::new(), 0usize);
    // Timed only on values every codec takes whole (the server's pglz_compress is bounded;
    // a longer value is still sized, by our encoder).
    let timing_max_value = codecs.iter().filter_map(|(_, codec)| codec.max_slice()).map(|(n, _)| n).min();
    let deadline = Instant::now() + NO_DEADLINE;
    let mut read = |first: u64, last: u64| {
        let mut totals = BlockTotals::default();
        sampler.read_range(first, last, usize::MAX, deadline, |value, row, _| {
            let toasted = toast::toasted_anew(&value, &row, &mut codecs, &mut check_interrupts).or_raise();
            let sizes: Vec<i64> = toasted.iter().map(|t| t.stored.size as i64).collect();
            let compressed: Vec<bool> = toasted.iter().map(|t| t.stored.compressed).collect();
            totals.add(value.len(), row.attributes.get(row.column).map_or(0, |a| a.size), &sizes);
            totals.add_compressed(&compressed);
            totals.add_spread(&toasted.iter().map(|t| (t.stored.size, t.low, t.high)).collect::<Vec<_>>());
            if timing_max_value.is_none_or(|max| value.len() <= max) && timing_bytes + value.len() <= TIMING_BYTES {
                timing_bytes += value.len();
                timing.push(value);
            }
        });
        totals
    };
    let blocks = match sample_values {
        // whole: each range is one unit of an exact sum
        None => {
            let ranges = sampler.ranges(WHOLE_TABLE_BLOCKS);
            let blocks = ranges.iter().map(|&(first, last)| read(first, last)).collect();
            ColumnBlocks { nblocks: ranges.len() as u64, blocks }
        }
        Some(wanted) => {
            let mut blocks = ColumnBlocks { nblocks: sampler.nblocks(), blocks: Vec::new() };
            let mut rows = 0u64;
            for block in BlockOrder::new(sampler.nblocks(), seed as u64) {
                let totals = read(block, block);
                rows += totals.rows;
                blocks.blocks.push(totals);
                if rows >= wanted as u64 {
                    break;
                }
            }
            blocks
        }
    };
    let timing = Payload::new(format!("{}.{col}", rel.name()), timing);
    let iterations = gucs::bench_iterations() as u32;
    let round = |e: Estimate| e.total.round() as i64;
    let (values, raw) = (round(blocks.rows()), round(blocks.raw()));
    let mut intervals = Vec::new();
    let whole = blocks.whole();
    let estimates: Vec<toast::ToastRow> = codecs
        .iter_mut()
        .enumerate()
        .map(|(i, (name, codec))| {
            let speed =
                toast::estimate(&timing, sampler.overhead, name, codec.as_mut(), iterations, &mut PgHooks).or_raise();
            let stored = blocks.method(i);
            // read whole: the sum, its interval the model's known error only
            let (low, high) = (stored.low.map(|b| b.round() as i64), stored.high.map(|b| b.round() as i64));
            if let (false, Some(low), Some(high)) = (whole, low, high) {
                intervals.push(format!("{name} {low}..{high}"));
            }
            toast::ToastRow {
                values,
                compressed_values: round(blocks.compressed(i)),
                raw_bytes: raw,
                stored_bytes: round(stored),
                ratio: if stored.total > 0.0 { raw as f64 / stored.total } else { 1.0 },
                stored_bytes_low: low,
                stored_bytes_high: high,
                ..speed
            }
        })
        .collect();
    if !blocks.whole() {
        PgHooks.progress(&format!(
            "estimate_toast_compression: every row of {} of the table's {} blocks, chosen at random (seed {seed}); \
             stored bytes, 95% interval: {}",
            blocks.blocks.len(),
            blocks.nblocks,
            if intervals.is_empty() { "none (a single block)".to_string() } else { intervals.join(", ") }
        ));
    }
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
