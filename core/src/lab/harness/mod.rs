//! The timing loop: warm-up, fixed iterations with the methods interleaved, verified round
//! trips, wall and CPU time — over slices kept in two contiguous arenas.
//!
//! Memory is bounded by the input, whatever the slice size: the decompressed slices live back
//! to back in one buffer of the input's size, the compressed ones back to back in another of
//! the input's size plus one slice's worst-case growth (at most 10% of the longest slice and
//! 64 bytes; a slice is kept compressed only if it shrank, so the packed bytes never outgrow
//! the input), plus 4 bytes per slice for where each one ends. Both buffers are allocated (fallibly) and touched once, before any timed region,
//! and shared by the methods of a run. Contiguous arenas also keep the decoder's working set
//! as compact as lzbench's, so large payloads are not measured through scattered allocations.

use serde::{Deserialize, Serialize};

use super::codecs::Codec;
use super::payload::Payload;
use crate::clock::Timer;
use crate::error::{try_zeroed, CodecError, Result};
use crate::registry::{MethodKind, MethodSpec};
use crate::ticking;

/// Callbacks into the host: `tick` runs between slices and during long ones (the extension
/// checks for interrupts there, so cancel and `statement_timeout` stop a run), `progress`
/// reports what runs.
pub trait Hooks {
    fn tick(&mut self) {}
    fn progress(&mut self, _what: &str) {}
    /// A timed iteration starts: `done` of `of` (0: the untimed warm-up).
    fn iteration(&mut self, _done: u32, _of: u32) {}
}

/// Hooks that do nothing (plain cargo tests and benches).
pub struct NoHooks;
impl Hooks for NoHooks {}

/// One result row: one payload, method, level and slice size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    pub source: String,
    pub method: String,
    pub level: Option<i32>,
    /// 0 = each piece whole.
    pub slice_size: i32,
    pub slices: i64,
    /// Slices stored raw: refused by the method or not smaller compressed.
    pub raw_slices: i64,
    pub raw_bytes: i64,
    pub stored_bytes: i64,
    /// raw_bytes / stored_bytes.
    pub ratio: f64,
    /// Medians over iterations, in MB/s (10^6 uncompressed bytes per second); decompression
    /// figures are None where every slice was stored raw (nothing was decompressed), except
    /// for memcpy, whose copy back is its point.
    pub compress_mbps: f64,
    pub decompress_mbps: Option<f64>,
    /// Best iteration.
    pub compress_mbps_best: f64,
    pub decompress_mbps_best: Option<f64>,
    /// Median nanoseconds per uncompressed byte.
    pub compress_ns_per_byte: f64,
    pub decompress_ns_per_byte: Option<f64>,
    /// Wall and CPU (user + system) seconds of all timed iterations.
    pub compress_wall_seconds: f64,
    pub compress_cpu_seconds: f64,
    pub decompress_wall_seconds: f64,
    pub decompress_cpu_seconds: f64,
    pub iterations: i32,
    /// The machine was busy: the timed regions took more than [`BUSY_RATIO`] times their CPU
    /// time in wall time, so the speeds (wall-clock) understate the CPU-time rate.
    #[serde(default)]
    pub busy: bool,
}

/// Wall time over CPU time above which a row is flagged `busy`.
pub const BUSY_RATIO: f64 = 1.5;

/// Whether `wall` seconds for `cpu` seconds of work mean the thread waited for the CPU.
pub fn busy(wall: f64, cpu: f64) -> bool {
    wall > BUSY_RATIO * cpu
}

pub(crate) fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

pub(crate) fn best(values: &[f64]) -> f64 {
    values.iter().copied().fold(f64::INFINITY, f64::min)
}

pub(crate) fn mbps(bytes: usize, seconds: f64) -> f64 {
    // A region too short for the clock counts as one nanosecond, so speeds stay finite (JSON
    // has no infinity).
    bytes as f64 / seconds.max(1e-9) / 1e6
}

pub(crate) fn ns_per_byte(seconds: f64, bytes: usize) -> f64 {
    if bytes > 0 {
        seconds * 1e9 / bytes as f64
    } else {
        0.0
    }
}

/// Raw measurements of one codec on one set of slices, before summarising: per-iteration
/// times, so that measurements of several batches (pages read a batch at a time) can be merged
/// into one row with [`Measurement::merge`].
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    pub slices: usize,
    pub raw_slices: usize,
    pub raw_bytes: usize,
    pub stored_bytes: usize,
    /// Wall seconds of each timed iteration.
    pub compress_secs: Vec<f64>,
    pub decompress_secs: Vec<f64>,
    pub compress_cpu: f64,
    pub decompress_cpu: f64,
}

impl Measurement {
    /// Add a measurement of more slices with the same iteration count: counts add up, and the
    /// times of iteration *k* add up across batches.
    pub fn merge(&mut self, other: &Measurement) {
        if self.compress_secs.is_empty() {
            self.compress_secs = vec![0.0; other.compress_secs.len()];
            self.decompress_secs = vec![0.0; other.decompress_secs.len()];
        }
        for (a, b) in self.compress_secs.iter_mut().zip(&other.compress_secs) {
            *a += b;
        }
        for (a, b) in self.decompress_secs.iter_mut().zip(&other.decompress_secs) {
            *a += b;
        }
        self.slices += other.slices;
        self.raw_slices += other.raw_slices;
        self.raw_bytes += other.raw_bytes;
        self.stored_bytes += other.stored_bytes;
        self.compress_cpu += other.compress_cpu;
        self.decompress_cpu += other.decompress_cpu;
    }

    /// Add the iterations of another run over the same slices (more iterations, as one
    /// measurement): times are appended, CPU seconds add up, the counts are the run's.
    pub fn append(&mut self, run: Measurement) {
        self.compress_secs.extend(run.compress_secs);
        self.decompress_secs.extend(run.decompress_secs);
        self.compress_cpu += run.compress_cpu;
        self.decompress_cpu += run.decompress_cpu;
        (self.slices, self.raw_bytes, self.stored_bytes, self.raw_slices) =
            (run.slices, run.raw_bytes, run.stored_bytes, run.raw_slices);
    }

    /// The median decompression pass in MB/s, even where every slice was stored raw (the pass
    /// then only copied them back), for models that need a read speed in every case.
    pub fn decompress_mbps_raw(&self) -> f64 {
        mbps(self.raw_bytes, median(&self.decompress_secs))
    }

    /// Summarise as a result row.
    pub fn row(&self, source: &str, spec: &MethodSpec, slice_size: usize) -> BenchRow {
        let compress_median = median(&self.compress_secs);
        let decompress_median = median(&self.decompress_secs);
        // Nothing was decompressed when every slice was stored raw: no speed to report. memcpy
        // stores every slice as is by design; its copy back is the speed limit it stands for.
        let decompressed = self.raw_slices < self.slices || spec.kind == MethodKind::Memcpy;
        let decompress = |v: f64| decompressed.then_some(v);
        let (wall, cpu) = (
            self.compress_secs.iter().chain(&self.decompress_secs).sum::<f64>(),
            self.compress_cpu + self.decompress_cpu,
        );
        BenchRow {
            source: source.to_string(),
            method: spec.name().to_string(),
            level: spec.level,
            slice_size: slice_size as i32,
            slices: self.slices as i64,
            raw_slices: self.raw_slices as i64,
            raw_bytes: self.raw_bytes as i64,
            stored_bytes: self.stored_bytes as i64,
            ratio: if self.stored_bytes > 0 { self.raw_bytes as f64 / self.stored_bytes as f64 } else { 1.0 },
            compress_mbps: mbps(self.raw_bytes, compress_median),
            decompress_mbps: decompress(mbps(self.raw_bytes, decompress_median)),
            compress_mbps_best: mbps(self.raw_bytes, best(&self.compress_secs)),
            decompress_mbps_best: decompress(mbps(self.raw_bytes, best(&self.decompress_secs))),
            compress_ns_per_byte: ns_per_byte(compress_median, self.raw_bytes),
            decompress_ns_per_byte: decompress(ns_per_byte(decompress_median, self.raw_bytes)),
            compress_wall_seconds: self.compress_secs.iter().sum(),
            compress_cpu_seconds: self.compress_cpu,
            decompress_wall_seconds: self.decompress_secs.iter().sum(),
            decompress_cpu_seconds: self.decompress_cpu,
            iterations: self.compress_secs.len() as i32,
            busy: busy(wall, cpu),
        }
    }
}

/// Measure `codec` on `payload` cut into `slice_size` slices and summarise as a row.
pub fn bench_codec(
    payload: &Payload,
    slice_size: usize,
    codec: &mut dyn Codec,
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<BenchRow> {
    let m = measure_codec(payload, slice_size, codec, iterations, hooks)?;
    Ok(m.row(&payload.name, &codec.spec(), slice_size))
}

/// Measure `codec` alone; see [`measure_codecs`].
pub fn measure_codec(
    payload: &Payload,
    slice_size: usize,
    codec: &mut dyn Codec,
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<Measurement> {
    let mut codecs = [codec];
    Ok(measure_codecs(payload, slice_size, &mut codecs, iterations, hooks)?.remove(0))
}

/// Measure several codecs on the same slices, interleaved: every iteration runs each codec in
/// turn, so that a machine that speeds up or slows down during the run (frequency scaling, a
/// noisy neighbour) affects all of them alike and their ratios stay fair. One untimed warm-up
/// iteration first; every iteration of every codec is verified byte for byte.
pub fn measure_codecs(
    payload: &Payload,
    slice_size: usize,
    codecs: &mut [&mut dyn Codec],
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<Vec<Measurement>> {
    let iterations = iterations.max(1);
    let mut arenas = Arenas::new(payload, slice_size, codecs)?;
    let mut measurements: Vec<Measurement> = codecs
        .iter()
        .map(|_| Measurement { slices: arenas.ends.len(), raw_bytes: arenas.unpacked.len(), ..Measurement::default() })
        .collect();
    for iteration in 0..=iterations {
        hooks.iteration(iteration, iterations);
        for (codec, m) in codecs.iter_mut().zip(&mut measurements) {
            let t = arenas.round_trip(payload, slice_size, &mut **codec, hooks)?;
            if iteration > 0 {
                m.compress_secs.push(t.compress_wall);
                m.compress_cpu += t.compress_cpu;
                m.decompress_secs.push(t.decompress_wall);
                m.decompress_cpu += t.decompress_cpu;
            }
            m.stored_bytes = t.stored_bytes;
            m.raw_slices = t.raw_slices;
        }
    }
    Ok(measurements)
}

/// `n` zeros, allocated fallibly (the slice index of a huge payload in tiny slices).
fn try_u32s(n: usize) -> Result<Vec<u32>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| CodecError::out_of_memory(format!("out of memory: could not allocate the index of {n} slices")))?;
    v.resize(n, 0);
    Ok(v)
}

/// Input (compressing) or output (decompressing) bytes after which a pass ticks, however few
/// slices they were: at most this plus one slice of a codec's work goes unchecked, whatever the
/// slice size (every 64 slices alone let 64 slices of 1 MB go by, seconds of the server's
/// `pglz_compress` on hostile data). At 4 KB slices and less, the 64 slices come first.
const TICK_BYTES: usize = 256 << 10;

/// In [`Arenas::ends`]: the slice is stored raw (refused, or not smaller compressed).
const RAW: u32 = 1 << 31;

/// The slices of one measurement, compressed and decompressed, each set back to back.
struct Arenas {
    /// Compressed slices back to back.
    packed: Vec<u8>,
    /// Per slice: where its compressed bytes end in `packed` (they start where the previous
    /// compressed slice ended), or [`RAW`] | that position for a slice stored raw.
    ends: Vec<u32>,
    /// Decompressed slices back to back: the payload's pieces, concatenated.
    unpacked: Vec<u8>,
}

struct RoundTrip {
    compress_wall: f64,
    compress_cpu: f64,
    decompress_wall: f64,
    decompress_cpu: f64,
    stored_bytes: usize,
    raw_slices: usize,
}

impl Arenas {
    fn new(payload: &Payload, slice_size: usize, codecs: &[&mut dyn Codec]) -> Result<Arenas> {
        let input = payload.total_bytes();
        if input >= RAW as usize / 2 {
            return Err(CodecError::too_large(format!("{input} bytes is more than the lab measures at once (1 GB)")));
        }
        let longest = payload.slices(slice_size).map(<[u8]>::len).max().unwrap_or(0);
        // Room for the input plus the worst growth of one slice: a kept slice is smaller than
        // its input, so the slices before the current one never take more than their input.
        let growth = codecs
            .iter()
            .map(|c| c.compress_bound(longest).saturating_sub(longest).max(c.compress_bound(0)))
            .max()
            .unwrap_or(0);
        Ok(Arenas {
            packed: try_zeroed(input + growth + 64, "the lab's compressed slices")?,
            ends: try_u32s(payload.slice_count(slice_size))?,
            unpacked: try_zeroed(input, "the lab's decompressed slices")?,
        })
    }

    /// Compress every slice (timed), decompress every stored-compressed one (timed; the others
    /// are copied back raw, as a reader of raw-stored data would), then verify every slice.
    fn round_trip(
        &mut self,
        payload: &Payload,
        slice_size: usize,
        codec: &mut dyn Codec,
        hooks: &mut dyn Hooks,
    ) -> Result<RoundTrip> {
        let timer = Timer::start();
        let (stored_bytes, raw_slices) = self.compress_pass(payload, slice_size, codec, hooks)?;
        let (compress_wall, compress_cpu) = with_time_elsewhere(timer.stop(), codec);
        // Poison the output so that a decoder that writes nothing cannot pass on bytes an
        // earlier method left there.
        ticking::fill(&mut self.unpacked, 0xA5, &mut || hooks.tick());
        hooks.tick();

        let timer = Timer::start();
        self.decompress_pass(payload, slice_size, codec, hooks)?;
        let (decompress_wall, decompress_cpu) = with_time_elsewhere(timer.stop(), codec);
        self.verify(payload, slice_size, codec, hooks)?;
        hooks.tick();
        Ok(RoundTrip { compress_wall, compress_cpu, decompress_wall, decompress_cpu, stored_bytes, raw_slices })
    }

    /// Compress every slice into `packed`; the bytes stored (compressed or raw) and the number
    /// of slices stored raw.
    fn compress_pass(
        &mut self,
        payload: &Payload,
        slice_size: usize,
        codec: &mut dyn Codec,
        hooks: &mut dyn Hooks,
    ) -> Result<(usize, usize)> {
        let mut tick = || hooks.tick();
        let mut used = 0usize;
        let mut raw_slices = 0usize;
        let mut raw_bytes = 0usize;
        let mut unticked = 0usize;
        for (i, slice) in payload.slices(slice_size).enumerate() {
            let room = codec.compress_bound(slice.len());
            if used + room > self.packed.len() {
                return Err(CodecError::too_large(format!(
                    "{}: compress_bound({}) is larger than the arena allows",
                    codec.spec().label(),
                    slice.len()
                )));
            }
            self.ends[i] = match codec.compress(slice, &mut self.packed[used..used + room], &mut tick)? {
                Some(n) if n < slice.len() => {
                    used += n;
                    used as u32
                }
                _ => {
                    raw_slices += 1;
                    raw_bytes += slice.len();
                    RAW | used as u32
                }
            };
            unticked += slice.len();
            if i % 64 == 63 || unticked >= TICK_BYTES {
                tick();
                unticked = 0;
            }
        }
        Ok((used + raw_bytes, raw_slices))
    }

    /// Decompress every stored-compressed slice of `packed` into `unpacked`, copying the raw
    /// ones from the payload.
    fn decompress_pass(
        &mut self,
        payload: &Payload,
        slice_size: usize,
        codec: &mut dyn Codec,
        hooks: &mut dyn Hooks,
    ) -> Result<()> {
        let mut tick = || hooks.tick();
        let (mut start, mut at, mut unticked) = (0usize, 0usize, 0usize);
        for (i, slice) in payload.slices(slice_size).enumerate() {
            let dst = &mut self.unpacked[at..at + slice.len()];
            let end = self.ends[i];
            if end & RAW != 0 {
                ticking::copy(dst, slice, &mut tick);
            } else {
                codec.decompress(&self.packed[start..end as usize], dst, &mut tick)?;
                start = end as usize;
            }
            at += slice.len();
            unticked += slice.len();
            if i % 64 == 63 || unticked >= TICK_BYTES {
                tick();
                unticked = 0;
            }
        }
        Ok(())
    }

    /// Check that `unpacked` holds the payload's slices again.
    fn verify(&self, payload: &Payload, slice_size: usize, codec: &dyn Codec, hooks: &mut dyn Hooks) -> Result<()> {
        let mut at = 0usize;
        for (i, slice) in payload.slices(slice_size).enumerate() {
            if !ticking::equal(&self.unpacked[at..at + slice.len()], slice, &mut || hooks.tick()) {
                return Err(CodecError::corrupt(format!(
                    "round trip broken: {} did not give back slice {i} ({} bytes) of {}",
                    codec.spec().label(),
                    slice.len(),
                    payload.name,
                )));
            }
            at += slice.len();
        }
        Ok(())
    }
}

/// A pass's (wall, CPU) seconds as this thread measured them, with what `codec` ran on other
/// threads meanwhile accounted for ([`Codec::take_time_elsewhere`]).
fn with_time_elsewhere((wall, cpu): (f64, f64), codec: &mut dyn Codec) -> (f64, f64) {
    let (more_wall, more_cpu) = codec.take_time_elsewhere();
    ((wall + more_wall).max(0.0), (cpu + more_cpu).max(0.0))
}

/// The same slices and arenas timed the way lzbench times them: `iterations` compression
/// passes back to back (after one untimed), then as many decompression passes, and one
/// verification at the end — no interleaving with other methods, no verification or poisoning
/// between passes. Set beside [`measure_codecs`]' figures for the same slices, the difference
/// is what the harness's fairness and checks cost (the ticks, every 64 slices, are in both).
pub fn measure_bare(
    payload: &Payload,
    slice_size: usize,
    codec: &mut dyn Codec,
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<Measurement> {
    let iterations = iterations.max(1);
    let mut arenas = Arenas::new(payload, slice_size, &[&mut *codec])?;
    let mut m = Measurement { slices: arenas.ends.len(), raw_bytes: arenas.unpacked.len(), ..Measurement::default() };
    for iteration in 0..=iterations {
        let timer = Timer::start();
        (m.stored_bytes, m.raw_slices) = arenas.compress_pass(payload, slice_size, codec, hooks)?;
        let (wall, cpu) = with_time_elsewhere(timer.stop(), codec);
        if iteration > 0 {
            m.compress_secs.push(wall);
            m.compress_cpu += cpu;
        }
    }
    ticking::fill(&mut arenas.unpacked, 0xA5, &mut || hooks.tick());
    for iteration in 0..=iterations {
        let timer = Timer::start();
        arenas.decompress_pass(payload, slice_size, codec, hooks)?;
        let (wall, cpu) = with_time_elsewhere(timer.stop(), codec);
        if iteration > 0 {
            m.decompress_secs.push(wall);
            m.decompress_cpu += cpu;
        }
    }
    arenas.verify(payload, slice_size, codec, hooks)?;
    Ok(m)
}

/// Rounds of [`measure_overhead`].
const OVERHEAD_ROUNDS: u32 = 3;

/// The harness's own cost for one codec: the lab's loop ([`measure_codec`]) and the bare loop
/// ([`measure_bare`]) on the same slices, in three alternating rounds with their iterations
/// pooled (`iterations` rounded up to a multiple of 3), so a burst of load on the machine falls
/// on both rather than on one. `build` makes the codec afresh for each round. (lab, bare).
pub fn measure_overhead(
    payload: &Payload,
    slice_size: usize,
    build: &mut dyn FnMut() -> Result<Box<dyn Codec>>,
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<(Measurement, Measurement)> {
    let per_round = iterations.div_ceil(OVERHEAD_ROUNDS);
    let (mut lab, mut bare) = (Measurement::default(), Measurement::default());
    for _ in 0..OVERHEAD_ROUNDS {
        let mut codec = build()?;
        lab.append(measure_codec(payload, slice_size, codec.as_mut(), per_round, hooks)?);
        bare.append(measure_bare(payload, slice_size, codec.as_mut(), per_round, hooks)?);
    }
    Ok((lab, bare))
}

#[cfg(test)]
mod tests;
