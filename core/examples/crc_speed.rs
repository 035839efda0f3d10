//! Speed of our CRC-32C (`checksum::crc32c`) against a stand-in for the server's
//! `pg_comp_crc32c_sse42`, outside the server.
//!
//! ```text
//! cargo run --release -p compresslab-core --example crc_speed                 # wall clock, all sizes
//! cargo run --release -p compresslab-core --example crc_speed -- wall 16 1024  # chosen sizes
//! cargo run --release -p compresslab-core --example crc_speed -- calls SIZE N  # N calls on SIZE bytes
//! ```
//!
//! `wall`: each size cuts a 1 MB pseudo-random buffer into slices of that size and times one pass
//! over all slices with ours and with the stand-in, alternately, 51 times; it prints the median
//! and best throughputs and their ratio (ours / stand-in). The stand-in is PostgreSQL 15's
//! `pg_comp_crc32c_sse42` transcribed: 8 bytes at a time with `crc32q`, then 4 bytes with
//! `crc32l` if left, then single bytes; both are called through a function pointer, as the
//! server calls `pg_comp_crc32c`. It is a proxy: the server's copy is C compiled by the
//! distribution's compiler.
//!
//! `calls`: N calls of ours on SIZE-byte slices at every alignment offset 0..8 (for callgrind:
//! run with N and 2N, the difference divided by N is the instruction count of one call).
//!
//! `cg PAYLOAD SIZE PASSES`: PASSES passes of ours over every SIZE-byte slice of a payload (the
//! other examples' `cg`: a synthetic kind or a file's path; timed with `PASS_CLOCK` set), for
//! `scripts/bench/against_c.sh`, which runs PostgreSQL's own `pg_comp_crc32c_sse42` the same way.

use std::hint::black_box;
use std::time::Instant;

use compresslab_core::checksum::crc32c;

// Only the payloads and the pass loop are used here, not the other examples' command line.
#[allow(dead_code)]
mod synthetic;

const SIZES: &[usize] = &[16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = buffer(1 << 20);
    match args.first().map(String::as_str) {
        Some("cg") => {
            let [payload, size, passes] = &args[1..] else {
                panic!("usage: crc_speed cg PAYLOAD SIZE PASSES");
            };
            let size: usize = size.parse().expect("size");
            let data = synthetic::named(payload);
            let f: fn(u32, &[u8]) -> u32 = black_box(crc32c);
            synthetic::each_pass(passes.parse().expect("passes"), data.len(), || {
                let mut acc = 0u32;
                for slice in data.chunks(size) {
                    acc ^= f(0, slice);
                }
                black_box(acc);
            });
        }
        Some("calls") => {
            let size: usize = args.get(1).map_or(16, |s| s.parse().expect("size"));
            let n: usize = args.get(2).map_or(1_000_000, |s| s.parse().expect("calls"));
            let f: fn(u32, &[u8]) -> u32 = black_box(crc32c);
            let mut acc = 0u32;
            for i in 0..n {
                let start = (i * 4099) % (data.len() - size - 8) + i % 8;
                acc ^= f(0, &data[start..start + size]);
            }
            println!("{acc:08x}");
        }
        Some("wall") => {
            let sizes: Vec<usize> = args[1..].iter().map(|s| s.parse().expect("size")).collect();
            wall(&data, if sizes.is_empty() { SIZES } else { &sizes });
        }
        _ => wall(&data, SIZES),
    }
}

fn buffer(len: usize) -> Vec<u8> {
    compresslab_core::rng::SeededRng::new(0x9E37_79B9).bytes(len)
}

fn wall(data: &[u8], sizes: &[usize]) {
    let ours: fn(u32, &[u8]) -> u32 = black_box(crc32c);
    let server: fn(u32, &[u8]) -> u32 = black_box(pg_like);
    println!("{:>6} {:>12} {:>12} {:>8} {:>8}", "size", "ours_mbps", "pg_like_mbps", "median_x", "best_x");
    for &size in sizes {
        let mut times = [Vec::new(), Vec::new()];
        for rep in 0..=51 {
            for (k, f) in [ours, server].into_iter().enumerate() {
                let t = Instant::now();
                let mut acc = 0u32;
                for slice in data.chunks(size) {
                    acc ^= f(0, slice);
                }
                black_box(acc);
                if rep > 0 {
                    times[k].push(t.elapsed().as_secs_f64());
                }
            }
        }
        for t in &mut times {
            t.sort_by(f64::total_cmp);
        }
        let mbps = |s: f64| data.len() as f64 / s / 1e6;
        let (om, sm) = (times[0][times[0].len() / 2], times[1][times[1].len() / 2]);
        let (ob, sb) = (times[0][0], times[1][0]);
        println!("{size:>6} {:>12.1} {:>12.1} {:>8.2} {:>8.2}", mbps(om), mbps(sm), sm / om, sb / ob);
    }
}

/// PostgreSQL 15's `pg_comp_crc32c_sse42`, with the finished-CRC convention around it.
fn pg_like(previous: u32, data: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.2") {
        // SAFETY: the CPU supports SSE4.2, checked just above.
        return unsafe { !pg_comp_crc32c_sse42(!previous, data) };
    }
    compresslab_core::checksum::slicing8::crc32c(previous, data)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn pg_comp_crc32c_sse42(mut crc: u32, data: &[u8]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u32, _mm_crc32_u64, _mm_crc32_u8};
    let mut p = data.as_ptr();
    // SAFETY: one past the end of the slice.
    let pend = unsafe { p.add(data.len()) };
    while (pend as usize) - (p as usize) >= 8 {
        // SAFETY: at least 8 bytes remain at p; read_unaligned accepts any alignment.
        crc = _mm_crc32_u64(crc as u64, unsafe { p.cast::<u64>().read_unaligned() }) as u32;
        // SAFETY: stays within the slice (at most one past the end).
        p = unsafe { p.add(8) };
    }
    if (pend as usize) - (p as usize) >= 4 {
        // SAFETY: at least 4 bytes remain at p.
        crc = _mm_crc32_u32(crc, unsafe { p.cast::<u32>().read_unaligned() });
        // SAFETY: stays within the slice.
        p = unsafe { p.add(4) };
    }
    while p < pend {
        // SAFETY: p < pend, inside the slice.
        crc = _mm_crc32_u8(crc, unsafe { *p });
        // SAFETY: stays within the slice.
        p = unsafe { p.add(1) };
    }
    crc
}
