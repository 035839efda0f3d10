//! The timing loop: warm-up, fixed iterations, verified round trips, wall and CPU time.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::codecs::Codec;
use super::payload::Payload;
use crate::error::{CodecError, Result};

/// Callbacks into the host: `tick` runs between slices (the extension checks for interrupts
/// there, so cancel and `statement_timeout` stop a run), `progress` reports what runs.
pub trait Hooks {
    fn tick(&mut self) {}
    fn progress(&mut self, _what: &str) {}
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
    pub slice_size: i64,
    pub slices: i64,
    /// Slices stored raw: refused by the method or not smaller compressed.
    pub raw_slices: i64,
    pub input_bytes: i64,
    pub output_bytes: i64,
    /// input_bytes / output_bytes.
    pub ratio: f64,
    /// Medians over iterations, in MB/s (10^6 uncompressed bytes per second).
    pub compress_mbps: f64,
    pub decompress_mbps: f64,
    /// Best iteration.
    pub compress_mbps_best: f64,
    pub decompress_mbps_best: f64,
    /// Median nanoseconds per uncompressed byte.
    pub compress_ns_per_byte: f64,
    pub decompress_ns_per_byte: f64,
    /// Wall and CPU (user + system) seconds of all timed iterations.
    pub compress_wall_s: f64,
    pub compress_cpu_s: f64,
    pub decompress_wall_s: f64,
    pub decompress_cpu_s: f64,
    pub iterations: i32,
}

/// CPU time (user + system) this thread has used, from `getrusage(RUSAGE_THREAD)`.
pub fn thread_cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete rusage into the buffer we own.
    let usage = unsafe {
        libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr());
        usage.assume_init()
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// A timer over one region: wall and CPU seconds.
struct Timer {
    wall: Instant,
    cpu: f64,
}

impl Timer {
    fn start() -> Timer {
        Timer { cpu: thread_cpu_seconds(), wall: Instant::now() }
    }
    fn stop(self) -> (f64, f64) {
        (self.wall.elapsed().as_secs_f64(), thread_cpu_seconds() - self.cpu)
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn mbps(bytes: usize, seconds: f64) -> f64 {
    // A region too short for the clock counts as one nanosecond, so speeds stay finite (JSON
    // has no infinity).
    bytes as f64 / seconds.max(1e-9) / 1e6
}

/// Raw measurements of one codec on one set of slices, before summarising: per-iteration
/// times, so that measurements of several batches (pages read a batch at a time) can be merged
/// into one row with [`Measurement::merge`].
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    pub slices: usize,
    pub raw_slices: usize,
    pub input_bytes: usize,
    pub output_bytes: usize,
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
        self.input_bytes += other.input_bytes;
        self.output_bytes += other.output_bytes;
        self.compress_cpu += other.compress_cpu;
        self.decompress_cpu += other.decompress_cpu;
    }

    /// Summarise as a result row.
    pub fn row(&self, source: &str, method: &str, level: Option<i32>, slice_size: usize) -> BenchRow {
        let best = |secs: &[f64]| secs.iter().copied().fold(f64::INFINITY, f64::min);
        let per_byte = |s: f64| if self.input_bytes > 0 { s * 1e9 / self.input_bytes as f64 } else { 0.0 };
        let compress_median = median(&mut self.compress_secs.clone());
        let decompress_median = median(&mut self.decompress_secs.clone());
        BenchRow {
            source: source.to_string(),
            method: method.to_string(),
            level,
            slice_size: slice_size as i64,
            slices: self.slices as i64,
            raw_slices: self.raw_slices as i64,
            input_bytes: self.input_bytes as i64,
            output_bytes: self.output_bytes as i64,
            ratio: if self.output_bytes > 0 { self.input_bytes as f64 / self.output_bytes as f64 } else { 1.0 },
            compress_mbps: mbps(self.input_bytes, compress_median),
            decompress_mbps: mbps(self.input_bytes, decompress_median),
            compress_mbps_best: mbps(self.input_bytes, best(&self.compress_secs)),
            decompress_mbps_best: mbps(self.input_bytes, best(&self.decompress_secs)),
            compress_ns_per_byte: per_byte(compress_median),
            decompress_ns_per_byte: per_byte(decompress_median),
            compress_wall_s: self.compress_secs.iter().sum(),
            compress_cpu_s: self.compress_cpu,
            decompress_wall_s: self.decompress_secs.iter().sum(),
            decompress_cpu_s: self.decompress_cpu,
            iterations: self.compress_secs.len() as i32,
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
    Ok(m.row(&payload.name, &codec.name(), codec.level(), slice_size))
}

/// Measure `codec` on `payload` cut into `slice_size` slices: one warm-up iteration, then
/// `iterations` timed ones, each verified byte for byte.
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
/// iteration first; every iteration of every codec is verified byte for byte. Buffers are
/// allocated once, before any timed region, and shared by the codecs.
pub fn measure_codecs(
    payload: &Payload,
    slice_size: usize,
    codecs: &mut [&mut dyn Codec],
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<Vec<Measurement>> {
    let iterations = iterations.max(1);
    let slices = payload.slices(slice_size);
    let mut buffers = SliceBuffers {
        packed: slices.iter().map(|s| Vec::with_capacity(s.len() * 2 + 1024)).collect(),
        stored_compressed: vec![false; slices.len()],
        unpacked: slices.iter().map(|s| vec![0u8; s.len()]).collect(),
    };
    let input_bytes = slices.iter().map(|s| s.len()).sum();
    let mut measurements: Vec<Measurement> =
        codecs.iter().map(|_| Measurement { slices: slices.len(), input_bytes, ..Measurement::default() }).collect();

    for iteration in 0..=iterations {
        for (codec, m) in codecs.iter_mut().zip(&mut measurements) {
            let t = buffers.round_trip(&slices, &mut **codec, hooks, &payload.name)?;
            if iteration > 0 {
                m.compress_secs.push(t.compress_wall);
                m.compress_cpu += t.compress_cpu;
                m.decompress_secs.push(t.decompress_wall);
                m.decompress_cpu += t.decompress_cpu;
            }
            m.output_bytes = buffers.output_bytes(&slices);
            m.raw_slices = buffers.stored_compressed.iter().filter(|&&c| !c).count();
        }
    }
    Ok(measurements)
}

/// Per-slice buffers, allocated once per measurement.
struct SliceBuffers {
    packed: Vec<Vec<u8>>,
    /// Whether the slice is stored compressed (the method accepted it and it shrank).
    stored_compressed: Vec<bool>,
    unpacked: Vec<Vec<u8>>,
}

struct RoundTripTimes {
    compress_wall: f64,
    compress_cpu: f64,
    decompress_wall: f64,
    decompress_cpu: f64,
}

impl SliceBuffers {
    /// Compress every slice (timed), decompress every stored-compressed one (timed; the others
    /// are copied back raw, as a reader of raw-stored data would), then verify every slice.
    fn round_trip(&mut self, slices: &[&[u8]], codec: &mut dyn Codec, hooks: &mut dyn Hooks, source: &str) -> Result<RoundTripTimes> {
        let timer = Timer::start();
        for (i, slice) in slices.iter().enumerate() {
            self.stored_compressed[i] = matches!(codec.compress(slice, &mut self.packed[i]), Some(n) if n < slice.len());
            if i % 64 == 63 {
                hooks.tick();
            }
        }
        let (compress_wall, compress_cpu) = timer.stop();
        hooks.tick();

        let timer = Timer::start();
        for (i, slice) in slices.iter().enumerate() {
            if self.stored_compressed[i] {
                codec.decompress(&self.packed[i], &mut self.unpacked[i])?;
            } else {
                self.unpacked[i].copy_from_slice(slice);
            }
            if i % 64 == 63 {
                hooks.tick();
            }
        }
        let (decompress_wall, decompress_cpu) = timer.stop();

        for (i, slice) in slices.iter().enumerate() {
            if self.unpacked[i] != *slice {
                return Err(CodecError::corrupt(format!(
                    "round trip broken: {} did not give back slice {i} ({} bytes) of {source}",
                    codec.name(),
                    slice.len(),
                )));
            }
        }
        hooks.tick();
        Ok(RoundTripTimes { compress_wall, compress_cpu, decompress_wall, decompress_cpu })
    }

    fn output_bytes(&self, slices: &[&[u8]]) -> usize {
        slices.iter().enumerate().map(|(i, s)| if self.stored_compressed[i] { self.packed[i].len() } else { s.len() }).sum()
    }
}

/// A checksum function: the finished CRC of one slice.
pub type ChecksumFn<'a> = Box<dyn Fn(&[u8]) -> u32 + 'a>;

/// A checksum implementation under test: its name, the checksum family it computes (all
/// implementations of one family must agree), and the function (finished CRC of a slice).
pub struct Checksum<'a> {
    pub name: String,
    pub family: &'static str,
    pub compute: ChecksumFn<'a>,
}

/// One checksum result row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChecksumRow {
    pub source: String,
    pub implementation: String,
    pub family: String,
    pub slice_size: i64,
    pub slices: i64,
    pub input_bytes: i64,
    /// Median and best MB/s, median ns per byte.
    pub mbps: f64,
    pub mbps_best: f64,
    pub ns_per_byte: f64,
    pub wall_s: f64,
    pub cpu_s: f64,
    pub iterations: i32,
}

/// Measure every checksum on `payload` cut into `slice_size` slices; implementations of the
/// same family must give the same value for every slice (checked every iteration).
pub fn bench_checksums(
    payload: &Payload,
    slice_size: usize,
    checksums: &[Checksum<'_>],
    iterations: u32,
    hooks: &mut dyn Hooks,
) -> Result<Vec<ChecksumRow>> {
    let iterations = iterations.max(1);
    let slices = payload.slices(slice_size);
    let input_bytes: usize = slices.iter().map(|s| s.len()).sum();
    let mut reference: std::collections::HashMap<&str, Vec<u32>> = Default::default();
    let mut rows = Vec::new();
    let mut values = vec![0u32; slices.len()];
    for checksum in checksums {
        let mut secs = Vec::new();
        let (mut wall_total, mut cpu_total) = (0.0, 0.0);
        for iteration in 0..=iterations {
            let timer = Timer::start();
            for (i, slice) in slices.iter().enumerate() {
                values[i] = (checksum.compute)(slice);
                if i % 1024 == 1023 {
                    hooks.tick();
                }
            }
            let (wall, cpu) = timer.stop();
            if iteration > 0 {
                secs.push(wall);
                wall_total += wall;
                cpu_total += cpu;
            }
            let expected = reference.entry(checksum.family).or_insert_with(|| values.clone());
            if *expected != values {
                return Err(CodecError::corrupt(format!(
                    "checksum {} disagrees with the first {} implementation on {}",
                    checksum.name, checksum.family, payload.name
                )));
            }
            hooks.tick();
        }
        let best = secs.iter().copied().fold(f64::INFINITY, f64::min);
        let med = median(&mut secs);
        rows.push(ChecksumRow {
            source: payload.name.clone(),
            implementation: checksum.name.clone(),
            family: checksum.family.to_string(),
            slice_size: slice_size as i64,
            slices: slices.len() as i64,
            input_bytes: input_bytes as i64,
            mbps: mbps(input_bytes, med),
            mbps_best: mbps(input_bytes, best),
            ns_per_byte: if input_bytes > 0 { med * 1e9 / input_bytes as f64 } else { 0.0 },
            wall_s: wall_total,
            cpu_s: cpu_total,
            iterations: iterations as i32,
        });
    }
    Ok(rows)
}

/// The Rust checksum implementations: the crc32c crate (hardware), slicing-by-8 CRC-32C, the
/// standard CRC-32 and the legacy CRC-32.
pub fn rust_checksums() -> Vec<Checksum<'static>> {
    use crate::checksum;
    vec![
        Checksum { name: "crc32c".into(), family: "crc32c", compute: Box::new(|d| checksum::crc32c(0, d)) },
        Checksum {
            name: "crc32c_sb8".into(),
            family: "crc32c",
            compute: Box::new(|d| checksum::slicing8::crc32c(0, d)),
        },
        Checksum { name: "crc32".into(), family: "crc32", compute: Box::new(|d| checksum::crc32(0, d)) },
        Checksum {
            name: "crc32_legacy".into(),
            family: "crc32_legacy",
            compute: Box::new(|d| checksum::crc32_legacy(0, d)),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::codecs::{rust_codec, CodecSpec, RUST_METHODS};
    use crate::lab::payload::synthetic;

    fn payload() -> Payload {
        Payload::new(
            "mixed",
            vec![synthetic("text", 20_000, 1).unwrap(), synthetic("random", 5_000, 2).unwrap(), vec![0; 9000]],
        )
    }

    #[test]
    fn rows_count_bytes_slices_and_raw_fallback() {
        let p = payload();
        for name in RUST_METHODS {
            let mut codec = rust_codec(&CodecSpec::parse(name).unwrap(), 3).unwrap().unwrap();
            let row = bench_codec(&p, 2048, codec.as_mut(), 2, &mut NoHooks).unwrap();
            assert_eq!(row.input_bytes, 34_000, "{name}");
            assert_eq!(row.slices, 10 + 3 + 5, "{name}");
            assert!(row.output_bytes <= row.input_bytes, "{name}");
            // the random piece never shrinks, so at least its three slices are stored raw
            assert!(row.raw_slices >= 3, "{name}: {}", row.raw_slices);
            assert!(row.compress_mbps > 0.0 && row.decompress_mbps_best >= row.decompress_mbps, "{name}");
            assert_eq!(row.iterations, 2);
        }
        let mut memcpy = rust_codec(&CodecSpec::parse("memcpy").unwrap(), 3).unwrap().unwrap();
        let row = bench_codec(&p, 0, memcpy.as_mut(), 1, &mut NoHooks).unwrap();
        assert_eq!((row.slices, row.raw_slices, row.ratio), (3, 3, 1.0));
    }

    /// A codec whose decoder is wrong: the verifier must catch it.
    struct BrokenDecoder;
    impl Codec for BrokenDecoder {
        fn name(&self) -> String {
            "broken".into()
        }
        fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
            dst.clear();
            dst.extend_from_slice(&src[..src.len() / 2]);
            Some(dst.len())
        }
        fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<()> {
            dst[..src.len()].copy_from_slice(src);
            dst[src.len()..].fill(b'?');
            Ok(())
        }
    }

    #[test]
    fn a_broken_round_trip_is_an_error_not_a_number() {
        let err = bench_codec(&payload(), 8192, &mut BrokenDecoder, 1, &mut NoHooks).unwrap_err();
        assert!(err.message().contains("round trip broken: broken"), "{err}");
    }

    #[test]
    fn hooks_are_called_and_checksums_agree() {
        struct Count(usize);
        impl Hooks for Count {
            fn tick(&mut self) {
                self.0 += 1;
            }
        }
        let mut count = Count(0);
        let mut codec = rust_codec(&CodecSpec::parse("lz4").unwrap(), 3).unwrap().unwrap();
        bench_codec(&payload(), 64, codec.as_mut(), 1, &mut count).unwrap();
        assert!(count.0 > 10);
        let rows = bench_checksums(&payload(), 8192, &rust_checksums(), 2, &mut NoHooks).unwrap();
        assert_eq!(rows.len(), 4);
        let wrong = vec![Checksum { name: "a".into(), family: "crc32c", compute: Box::new(|d| crate::checksum::crc32c(0, d)) },
            Checksum { name: "b".into(), family: "crc32c", compute: Box::new(|d| crate::checksum::crc32(0, d)) }];
        assert!(bench_checksums(&payload(), 8192, &wrong, 1, &mut NoHooks).is_err());
    }

    #[test]
    fn interleaved_codecs_measure_like_separate_runs_and_still_verify() {
        let p = payload();
        let mut lz4 = rust_codec(&CodecSpec::parse("lz4").unwrap(), 3).unwrap().unwrap();
        let mut pglz = rust_codec(&CodecSpec::parse("pglz").unwrap(), 3).unwrap().unwrap();
        let together = {
            let mut codecs: [&mut dyn Codec; 2] = [lz4.as_mut(), pglz.as_mut()];
            measure_codecs(&p, 2048, &mut codecs, 3, &mut NoHooks).unwrap()
        };
        let alone = measure_codec(&p, 2048, pglz.as_mut(), 3, &mut NoHooks).unwrap();
        assert_eq!((together[1].output_bytes, together[1].raw_slices), (alone.output_bytes, alone.raw_slices));
        assert_ne!(together[0].output_bytes, together[1].output_bytes);
        assert!(together.iter().all(|m| m.compress_secs.len() == 3 && m.decompress_secs.len() == 3));
        let mut broken = BrokenDecoder;
        let mut codecs: [&mut dyn Codec; 2] = [lz4.as_mut(), &mut broken];
        assert!(measure_codecs(&p, 2048, &mut codecs, 1, &mut NoHooks).is_err());
    }

    #[test]
    fn merged_batches_equal_one_run_in_bytes() {
        let p = payload();
        let halves = [
            Payload::new("mixed", p.pieces[..1].to_vec()),
            Payload::new("mixed", p.pieces[1..].to_vec()),
        ];
        let mut codec = rust_codec(&CodecSpec::parse("pglz").unwrap(), 3).unwrap().unwrap();
        let whole = measure_codec(&p, 2048, codec.as_mut(), 3, &mut NoHooks).unwrap();
        let mut merged = Measurement::default();
        for half in &halves {
            merged.merge(&measure_codec(half, 2048, codec.as_mut(), 3, &mut NoHooks).unwrap());
        }
        assert_eq!(
            (merged.slices, merged.raw_slices, merged.input_bytes, merged.output_bytes),
            (whole.slices, whole.raw_slices, whole.input_bytes, whole.output_bytes)
        );
        assert_eq!(merged.compress_secs.len(), 3);
        assert_eq!(merged.row("mixed", "pglz", None, 2048).iterations, 3);
    }

    #[test]
    fn cpu_time_advances_with_work() {
        let before = thread_cpu_seconds();
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_seconds() > before);
    }
}
