//! Checksum throughput: every implementation of a checksum family on the same slices, timed
//! like the codecs (warm-up, fixed iterations, wall and CPU time) and checked to agree.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::harness::{best, mbps, median, ns_per_byte, Hooks};
use super::payload::Payload;
use crate::checksum;
use crate::clock::Timer;
use crate::error::{CodecError, Result};

/// A checksum function: the finished CRC of one slice.
pub type ChecksumFn<'a> = Box<dyn Fn(&[u8]) -> u32 + 'a>;

/// A checksum implementation under test: its name, the checksum family it computes (all
/// implementations of one family must agree), and the function.
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
    pub slice_size: i32,
    pub slices: i64,
    pub raw_bytes: i64,
    /// Median and best MB/s, median ns per byte.
    pub mbps: f64,
    pub mbps_best: f64,
    pub ns_per_byte: f64,
    pub wall_seconds: f64,
    pub cpu_seconds: f64,
    pub iterations: i32,
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

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
    let raw_bytes = payload.total_bytes();
    let slices = payload.slice_count(slice_size);
    // Each run's values folded into one digest (FNV-1a over the 32-bit values, in order):
    // implementations agree on every slice when their digests agree, and memory stays
    // independent of the number of slices (a value per 1-byte slice was 4x the input, a copy
    // per family as much again).
    let mut reference: HashMap<&str, u64> = HashMap::new();
    // Interleaved, as the codecs are: every iteration runs each implementation in turn, so a
    // machine that speeds up or slows down during the run affects them alike (at 16-32 bytes
    // the ratio ours / server swung from 0.81 to 1.43 between runs measured one after the other).
    let mut secs = vec![Vec::with_capacity(iterations as usize); checksums.len()];
    let mut cpu_total = vec![0.0; checksums.len()];
    for iteration in 0..=iterations {
        for (k, checksum) in checksums.iter().enumerate() {
            let timer = Timer::start();
            let mut digest = FNV_OFFSET;
            for (i, slice) in payload.slices(slice_size).enumerate() {
                digest = (digest ^ u64::from((checksum.compute)(slice))).wrapping_mul(FNV_PRIME);
                if i % 1024 == 1023 {
                    hooks.tick();
                }
            }
            let (wall, cpu) = timer.stop();
            if iteration > 0 {
                secs[k].push(wall);
                cpu_total[k] += cpu;
            }
            if *reference.entry(checksum.family).or_insert(digest) != digest {
                return Err(CodecError::corrupt(format!(
                    "checksum {} disagrees with the first {} implementation on {}",
                    checksum.name, checksum.family, payload.name
                )));
            }
            hooks.tick();
        }
    }
    let rows = checksums
        .iter()
        .zip(secs.iter().zip(cpu_total))
        .map(|(checksum, (secs, cpu_seconds))| {
            let med = median(secs);
            ChecksumRow {
                source: payload.name.clone(),
                implementation: checksum.name.clone(),
                family: checksum.family.to_string(),
                slice_size: slice_size as i32,
                slices: slices as i64,
                raw_bytes: raw_bytes as i64,
                mbps: mbps(raw_bytes, med),
                mbps_best: mbps(raw_bytes, best(secs)),
                ns_per_byte: ns_per_byte(med, raw_bytes),
                wall_seconds: secs.iter().sum(),
                cpu_seconds,
                iterations: iterations as i32,
            }
        })
        .collect();
    Ok(rows)
}

/// The Rust checksum implementations: the crc32c crate (hardware), slicing-by-8 CRC-32C, the
/// standard CRC-32 and the legacy CRC-32.
pub fn rust_checksums() -> Vec<Checksum<'static>> {
    // One closure per implementation calling it directly (not through a `fn` pointer), so that
    // ours are reached through one indirect call, as the server's are through `pg_comp_crc32c`:
    // at 16 bytes an extra call is a good part of the time measured.
    fn entry(name: &str, family: &'static str, compute: impl Fn(&[u8]) -> u32 + 'static) -> Checksum<'static> {
        Checksum { name: name.to_string(), family, compute: Box::new(compute) }
    }
    vec![
        entry("crc32c", "crc32c", |d| checksum::crc32c(0, d)),
        entry("crc32c_sb8", "crc32c", |d| checksum::slicing8::crc32c(0, d)),
        entry("crc32", "crc32", |d| checksum::crc32(0, d)),
        entry("crc32_legacy", "crc32_legacy", |d| checksum::crc32_legacy(0, d)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::harness::NoHooks;
    use crate::lab::payload::{synthetic, SyntheticKind};

    #[test]
    fn checksums_agree_and_disagreement_is_an_error() {
        let p = Payload::new("text", vec![synthetic(SyntheticKind::Text, 20_000, 1).unwrap(), vec![0; 9000]]);
        let rows = bench_checksums(&p, 8192, &rust_checksums(), 2, &mut NoHooks).unwrap();
        assert_eq!(rows.len(), 4);
        assert!(rows.iter().all(|r| r.slices == 5 && r.raw_bytes == 29_000 && r.iterations == 2));
        let wrong = vec![
            Checksum { name: "a".into(), family: "crc32c", compute: Box::new(|d| checksum::crc32c(0, d)) },
            Checksum { name: "b".into(), family: "crc32c", compute: Box::new(|d| checksum::crc32(0, d)) },
        ];
        assert!(bench_checksums(&p, 8192, &wrong, 1, &mut NoHooks).is_err());
    }
}
