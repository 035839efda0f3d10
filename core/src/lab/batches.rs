//! A lab run over payload batches: every method and slice size measured on each batch as it
//! comes (only one batch is in memory at a time), the measurements of one method and slice
//! size merged across batches, and the rows ordered by method, then slice size, as the options
//! list them. Progress is reported at the start of each slice size and, through [`Paced`], at
//! least every [`PROGRESS_EVERY`] within one.

use std::time::{Duration, Instant};

use super::codecs::Codec;
use super::harness::{measure_codecs, BenchRow, Hooks, Measurement};
use super::payload::Payload;
use crate::error::Result;
use crate::registry::MethodSpec;

/// The longest a run goes without a progress report.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// What a run measures: methods, slice sizes (0: whole pieces), timed iterations.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub methods: Vec<MethodSpec>,
    pub slice_sizes: Vec<usize>,
    pub iterations: u32,
}

/// Measurements of every (slice size, method) cell, merged across batches.
#[derive(Debug, Clone)]
pub struct Merged {
    methods: Vec<MethodSpec>,
    slice_sizes: Vec<usize>,
    /// Slice size major: cell `k * methods + i` is slice size `k`, method `i`.
    cells: Vec<Measurement>,
    /// Cells left out ([`Merged::leave_out`]): no row.
    left_out: Vec<bool>,
}

impl Merged {
    pub fn new(methods: &[MethodSpec], slice_sizes: &[usize]) -> Merged {
        Merged {
            methods: methods.to_vec(),
            slice_sizes: slice_sizes.to_vec(),
            cells: vec![Measurement::default(); methods.len() * slice_sizes.len()],
            left_out: vec![false; methods.len() * slice_sizes.len()],
        }
    }

    /// Leave out method `i` at slice size number `k` (a batch it could not measure): that
    /// cell gives no row. Whether it was left out already.
    pub fn leave_out(&mut self, k: usize, i: usize) -> bool {
        std::mem::replace(&mut self.left_out[k * self.methods.len() + i], true)
    }

    /// Merge one batch's measurements of slice size number `k`, one per method in order.
    pub fn add(&mut self, k: usize, measurements: &[Measurement]) {
        assert_eq!(measurements.len(), self.methods.len(), "one measurement per method");
        let cells = &mut self.cells[k * self.methods.len()..(k + 1) * self.methods.len()];
        for (cell, m) in cells.iter_mut().zip(measurements) {
            cell.merge(m);
        }
    }

    /// One row per method and slice size: by method, then slice size, as the options list them.
    pub fn rows(&self, source: &str) -> Vec<BenchRow> {
        let mut rows = Vec::with_capacity(self.cells.len());
        for (i, spec) in self.methods.iter().enumerate() {
            for (k, &slice_size) in self.slice_sizes.iter().enumerate() {
                let cell = k * self.methods.len() + i;
                if !self.left_out[cell] {
                    rows.push(self.cells[cell].row(source, spec, slice_size));
                }
            }
        }
        rows
    }
}

/// The words of a progress report for one slice size.
fn slice_words(slice_size: usize) -> String {
    if slice_size == 0 {
        "whole".to_string()
    } else {
        format!("{slice_size}-byte")
    }
}

/// Hooks that pass ticks on and, on a tick when `every` has passed since the last report,
/// report where the run is (`what`, the iteration, seconds so far) — so that a slice size that
/// takes minutes is not silent.
pub struct Paced<'a> {
    inner: &'a mut dyn Hooks,
    what: String,
    every: Duration,
    started: Instant,
    last: Instant,
    iteration: (u32, u32),
}

impl<'a> Paced<'a> {
    pub fn new(inner: &'a mut dyn Hooks, what: String, every: Duration) -> Paced<'a> {
        let now = Instant::now();
        Paced { inner, what, every, started: now, last: now, iteration: (0, 0) }
    }
}

impl Hooks for Paced<'_> {
    fn tick(&mut self) {
        self.inner.tick();
        if self.last.elapsed() >= self.every {
            self.last = Instant::now();
            let (done, of) = self.iteration;
            let at = if done == 0 { "warm-up".to_string() } else { format!("iteration {done} of {of}") };
            let message = format!("{}: {at}, {:.0} s", self.what, self.started.elapsed().as_secs_f64());
            self.inner.progress(&message);
        }
    }
    fn progress(&mut self, what: &str) {
        self.inner.progress(what);
    }
    fn iteration(&mut self, done: u32, of: u32) {
        self.iteration = (done, of);
    }
}

/// Measure every method and slice size over the batches `next_batch` yields, merging batch
/// measurements, with codecs from `build` (fresh for each batch and slice size). The methods
/// take turns within each iteration (see [`measure_codecs`]), so their ratios are fair even
/// when the machine's speed drifts. Rows by method, then slice size.
pub fn run_batches(
    opts: &RunOptions,
    source: &str,
    mut next_batch: impl FnMut() -> Result<Option<Payload>>,
    build: &mut dyn FnMut(&MethodSpec) -> Result<Box<dyn Codec>>,
    hooks: &mut dyn Hooks,
    every: Duration,
) -> Result<Vec<BenchRow>> {
    let mut merged = Merged::new(&opts.methods, &opts.slice_sizes);
    let labels = opts.methods.iter().map(MethodSpec::label).collect::<Vec<_>>().join(", ");
    let mut batch_no = 0;
    while let Some(batch) = next_batch()? {
        batch_no += 1;
        for (k, &slice_size) in opts.slice_sizes.iter().enumerate() {
            let what = format!(
                "{source}{}: {labels} on {} slices",
                if batch_no > 1 { format!(" batch {batch_no}") } else { String::new() },
                slice_words(slice_size),
            );
            hooks.progress(&format!("{what} ({}%)", k * 100 / opts.slice_sizes.len()));
            let mut codecs = opts.methods.iter().map(&mut *build).collect::<Result<Vec<_>>>()?;
            let mut measurements = vec![Measurement::default(); codecs.len()];
            let longest = batch.pieces.iter().map(|p| if slice_size == 0 { p.len() } else { p.len().min(slice_size) });
            let longest = longest.max().unwrap_or(0);
            // A codec that cannot take this batch's longest slice is left out of this slice
            // size, once, with a note; the others are measured.
            let mut measured = Vec::with_capacity(codecs.len());
            for (i, codec) in codecs.iter().enumerate() {
                match codec.max_slice() {
                    Some((max, why)) if longest > max => {
                        if !merged.leave_out(k, i) {
                            hooks.progress(&format!(
                                "{source}: {} left out on {} slices: a slice of {longest} bytes is more than \
                                 the {max} bytes {why}",
                                codec.spec().label(),
                                slice_words(slice_size),
                            ));
                        }
                    }
                    _ => measured.push(i),
                }
            }
            let mut refs: Vec<&mut dyn Codec> = codecs
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| measured.contains(i))
                .map(|(_, c)| c.as_mut() as &mut dyn Codec)
                .collect();
            let mut paced = Paced::new(hooks, what, every);
            if !refs.is_empty() {
                let done = measure_codecs(&batch, slice_size, &mut refs, opts.iterations, &mut paced)?;
                for (i, m) in measured.into_iter().zip(done) {
                    measurements[i] = m;
                }
            }
            merged.add(k, &measurements);
        }
    }
    // No batch (an empty relation): no rows, rather than rows of nothing.
    Ok(if batch_no == 0 { Vec::new() } else { merged.rows(source) })
}

/// [`run_batches`] over one payload, named after it.
pub fn run_payload(
    opts: &RunOptions,
    payload: Payload,
    build: &mut dyn FnMut(&MethodSpec) -> Result<Box<dyn Codec>>,
    hooks: &mut dyn Hooks,
) -> Result<Vec<BenchRow>> {
    let name = payload.name.clone();
    let mut once = Some(payload);
    run_batches(opts, &name, || Ok(once.take()), build, hooks, PROGRESS_EVERY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::codecs::build;
    use crate::lab::harness::NoHooks;
    use crate::lab::measure_codec;
    use crate::lab::payload::{synthetic, SyntheticKind};

    fn specs(names: &[&str]) -> Vec<MethodSpec> {
        names.iter().map(|n| MethodSpec::parse(n, 3).unwrap()).collect()
    }

    fn opts(methods: &[&str], slice_sizes: &[usize]) -> RunOptions {
        RunOptions { methods: specs(methods), slice_sizes: slice_sizes.to_vec(), iterations: 2 }
    }

    fn pieces() -> Vec<Vec<u8>> {
        vec![
            synthetic(SyntheticKind::Text, 12_000, 1).unwrap(),
            synthetic(SyntheticKind::Random, 3_000, 2).unwrap(),
            synthetic(SyntheticKind::Pgbench, 9_000, 3).unwrap(),
        ]
    }

    #[test]
    fn rows_by_method_then_slice_size_as_listed() {
        let o = opts(&["zstd:1", "pglz", "lz4"], &[8192, 0, 2048]);
        let rows = run_payload(&o, Payload::new("p", pieces()), &mut build, &mut NoHooks).unwrap();
        let order: Vec<(String, i32)> = rows.iter().map(|r| (r.method.clone(), r.slice_size)).collect();
        let mut expected = Vec::new();
        for m in ["zstd", "pglz", "lz4"] {
            for s in [8192, 0, 2048] {
                expected.push((m.to_string(), s));
            }
        }
        assert_eq!(order, expected);
        assert_eq!(rows[0].level, Some(1));
        assert!(rows.iter().all(|r| r.source == "p" && r.raw_bytes == 24_000 && r.iterations == 2));
    }

    #[test]
    fn batches_merge_into_the_counts_of_one_run() {
        let o = opts(&["pglz", "lz4"], &[2048, 0]);
        let mut batches = pieces().into_iter().map(|p| Payload::new("b", vec![p]));
        let merged = run_batches(&o, "b", || Ok(batches.next()), &mut build, &mut NoHooks, PROGRESS_EVERY).unwrap();
        let whole = run_payload(&o, Payload::new("b", pieces()), &mut build, &mut NoHooks).unwrap();
        assert_eq!(merged.len(), 4);
        for (m, w) in merged.iter().zip(&whole) {
            assert_eq!(
                (&m.method, m.slice_size, m.slices, m.raw_slices, m.raw_bytes, m.stored_bytes, m.iterations),
                (&w.method, w.slice_size, w.slices, w.raw_slices, w.raw_bytes, w.stored_bytes, w.iterations)
            );
        }
        // Whole pieces: one slice per batch's piece, summed.
        assert_eq!(merged[1].slices, 3);
    }

    #[test]
    fn merged_cells_sum_their_batches() {
        let specs = specs(&["lz4"]);
        let p = Payload::new("x", pieces());
        let a = measure_codec(&p, 2048, build(&specs[0]).unwrap().as_mut(), 3, &mut NoHooks).unwrap();
        let mut merged = Merged::new(&specs, &[2048]);
        merged.add(0, std::slice::from_ref(&a));
        merged.add(0, std::slice::from_ref(&a));
        let row = &merged.rows("x")[0];
        assert_eq!(
            (row.slices, row.raw_bytes, row.stored_bytes),
            (2 * a.slices as i64, 48_000, 2 * a.stored_bytes as i64)
        );
        assert!((row.compress_wall_seconds - 2.0 * a.compress_secs.iter().sum::<f64>()).abs() < 1e-9);
    }

    #[test]
    fn a_batch_error_or_a_build_error_stops_the_run() {
        let o = opts(&["lz4"], &[0]);
        let err = run_batches(
            &o,
            "e",
            || Err(crate::CodecError::invalid("unreadable")),
            &mut build,
            &mut NoHooks,
            PROGRESS_EVERY,
        );
        assert!(err.is_err());
        let o = opts(&["server_lz4"], &[0]);
        let err = run_payload(&o, Payload::new("e", pieces()), &mut build, &mut NoHooks).unwrap_err();
        assert!(err.message().contains("server"), "{err}");
    }

    /// lz4 as a codec that takes slices of at most 5,000 bytes.
    struct Limited(Box<dyn Codec>);
    impl Codec for Limited {
        fn spec(&self) -> MethodSpec {
            self.0.spec()
        }
        fn compress_bound(&self, len: usize) -> usize {
            self.0.compress_bound(len)
        }
        fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
            assert!(src.len() <= 5000, "a slice longer than max_slice reached the codec");
            self.0.compress(src, dst, tick)
        }
        fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
            self.0.decompress(src, dst, tick)
        }
        fn max_slice(&self) -> Option<(usize, &'static str)> {
            Some((5000, "it takes"))
        }
    }

    #[test]
    fn a_codec_is_left_out_of_a_slice_size_longer_than_it_takes_with_a_note() {
        let o = opts(&["lz4", "pglz"], &[2048, 0]);
        let mut build_limited = |spec: &MethodSpec| -> Result<Box<dyn Codec>> {
            let codec = build(spec)?;
            Ok(if spec.kind == crate::registry::MethodKind::Lz4 { Box::new(Limited(codec)) } else { codec })
        };
        let mut log = Log::default();
        // Pieces of 12,000, 3,000 and 9,000 bytes, in two batches: lz4 on whole pieces is left
        // out (once, at the first batch whose longest piece is too long), pglz measured.
        let mut batches = [pieces()[..2].to_vec(), pieces()[2..].to_vec()].into_iter().map(|p| Payload::new("l", p));
        let rows = run_batches(&o, "l", || Ok(batches.next()), &mut build_limited, &mut log, Duration::from_secs(3600))
            .unwrap();
        let cells: Vec<(&str, i32)> = rows.iter().map(|r| (r.method.as_str(), r.slice_size)).collect();
        assert_eq!(cells, [("lz4", 2048), ("pglz", 2048), ("pglz", 0)]);
        assert!(rows.iter().all(|r| r.raw_bytes == 24_000), "{rows:?}");
        let notes: Vec<&String> = log.0.iter().filter(|m| m.contains("left out")).collect();
        assert_eq!(
            notes,
            ["l: lz4 left out on whole slices: a slice of 12000 bytes is more than the 5000 bytes it takes"]
        );
    }

    #[derive(Default)]
    struct Log(Vec<String>);
    impl Hooks for Log {
        fn progress(&mut self, what: &str) {
            self.0.push(what.to_string());
        }
    }

    #[test]
    fn progress_at_each_slice_size_and_paced_within_one() {
        let o = opts(&["pglz", "lz4"], &[2048, 0]);
        let mut log = Log::default();
        let mut batches = pieces().into_iter().take(2).map(|p| Payload::new("f", vec![p]));
        run_batches(&o, "f", || Ok(batches.next()), &mut build, &mut log, Duration::from_secs(3600)).unwrap();
        assert_eq!(
            log.0,
            [
                "f: pglz, lz4 on 2048-byte slices (0%)",
                "f: pglz, lz4 on whole slices (50%)",
                "f batch 2: pglz, lz4 on 2048-byte slices (0%)",
                "f batch 2: pglz, lz4 on whole slices (50%)",
            ]
        );
        // With no time between reports, every tick reports where the run is.
        let mut log = Log::default();
        let none = run_batches(&opts(&["lz4"], &[64]), "g", || Ok(None), &mut build, &mut log, Duration::ZERO);
        assert!(none.unwrap().is_empty() && log.0.is_empty(), "no batch, no rows");
        let mut once = Some(Payload::new("g", pieces()));
        run_batches(&opts(&["lz4"], &[64]), "g", || Ok(once.take()), &mut build, &mut log, Duration::ZERO).unwrap();
        assert_eq!(log.0[0], "g: lz4 on 64-byte slices (0%)");
        assert!(log.0.iter().any(|m| m.starts_with("g: lz4 on 64-byte slices: warm-up, ")), "{:?}", log.0);
        assert!(log.0.iter().any(|m| m.starts_with("g: lz4 on 64-byte slices: iteration 2 of 2, ")), "{:?}", log.0);
    }
}
