//! Throughput of our LZ4 block codec (`lz4::block`: the encoder that writes liblz4's bytes,
//! the decoder with the fast loop) on sliced payloads, best of N runs.
//!
//! ```text
//! cargo run --release -p compresslab-core --example lz4_speed -- FILE SLICE [REPS]
//! cargo run --release -p compresslab-core --example lz4_speed          # synthetic data
//! target/release/examples/lz4_speed cg compress|decompress|decompress_lz4_flex pages|wal|text|KIND SLICE PASSES
//! ```
//!
//! `cg` is for instruction counts (`scripts/bench/callgrind.sh`): PASSES passes of one operation
//! over one synthetic payload cut into SLICE-byte slices, and nothing printed; the count of
//! one pass is the difference between two runs with different PASSES, divided. With
//! `PASS_CLOCK` set it times the passes instead (`synthetic::each_pass`). PAYLOAD may be a
//! file's path.

mod synthetic;

use std::hint::black_box;
use std::time::Instant;

use compresslab_core::lz4::block::{compress_bound, compress_to, decompress_into};
use synthetic::{command, Command};

fn main() {
    match command() {
        Command::Passes(args) => passes(&args),
        Command::Synthetic(payloads) => {
            for (name, data) in payloads {
                for slice in [8192, 65536] {
                    run(&name, &data, slice, 5);
                }
            }
        }
        Command::File { name, data, slice, reps, extra } => {
            assert!(extra.is_empty(), "lz4_speed takes FILE [SLICE [REPS]]");
            run(&name, &data, slice, reps)
        }
    }
}

/// Each slice compressed into a block of its own, then every block decoded.
fn compress_all(data: &[u8], slice: usize) -> Vec<(usize, Vec<u8>)> {
    let mut buf = vec![0u8; compress_bound(slice)];
    data.chunks(slice)
        .map(|src| {
            let n = compress_to(src, &mut buf).expect("compress");
            (src.len(), buf[..n].to_vec())
        })
        .collect()
}

fn run(name: &str, data: &[u8], slice: usize, reps: usize) {
    let mut buf = vec![0u8; compress_bound(slice)];
    let blocks = compress_all(data, slice);
    let mut raw = vec![0u8; slice];
    let (mut best_c, mut best_d) = (f64::MAX, f64::MAX);
    for rep in 0..=reps {
        let t0 = Instant::now();
        for src in data.chunks(slice) {
            black_box(compress_to(black_box(src), &mut buf).expect("compress"));
        }
        let t1 = Instant::now();
        for ((len, block), src) in blocks.iter().zip(data.chunks(slice)) {
            decompress_into(black_box(block), &mut raw[..*len]).expect("decompress");
            if rep == 0 {
                assert_eq!(&raw[..*len], src, "round trip");
            }
        }
        let t2 = Instant::now();
        if rep > 0 {
            // rep 0 is the warm-up
            best_c = best_c.min((t1 - t0).as_secs_f64());
            best_d = best_d.min((t2 - t1).as_secs_f64());
        }
    }
    let total_c: usize = blocks.iter().map(|(_, b)| b.len()).sum();
    println!(
        "Rust lz4 {name:<12} slice {slice:>6}: {:>5} slices, size {} -> {total_c} ({:.2}%); compress {:.1} MB/s; \
         decompress {:.1} MB/s",
        blocks.len(),
        data.len(),
        100.0 * total_c as f64 / data.len() as f64,
        data.len() as f64 / best_c / 1e6,
        data.len() as f64 / best_d / 1e6,
    );
}

/// `cg OPERATION PAYLOAD SLICE PASSES`: see the module header.
fn passes(args: &[String]) {
    let [op, payload, slice, passes] = args else {
        panic!("usage: lz4_speed cg compress|decompress|decompress_lz4_flex pages|wal|text|KIND SLICE PASSES");
    };
    let slice: usize = slice.parse().expect("slice size");
    let passes: usize = passes.parse().expect("passes");
    let data = synthetic::named(payload);
    match op.as_str() {
        "compress" => {
            let mut buf = vec![0u8; compress_bound(slice)];
            synthetic::each_pass(passes, data.len(), || {
                for src in data.chunks(slice) {
                    black_box(compress_to(black_box(src), &mut buf).expect("compress"));
                }
            });
        }
        "decompress" | "decompress_lz4_flex" => {
            // decompress_lz4_flex: the same blocks through lz4_flex's decoder (the
            // dependency's, bounds-checked: safe-decode), to compare shapes with ours.
            let flex = op == "decompress_lz4_flex";
            let blocks = compress_all(&data, slice);
            let mut raw = vec![0u8; slice];
            let bytes = blocks.iter().map(|(len, _)| len).sum();
            synthetic::each_pass(passes, bytes, || {
                for (len, block) in &blocks {
                    let out = &mut raw[..*len];
                    if flex {
                        lz4_flex::block::decompress_into(black_box(block), out).expect("decompress");
                    } else {
                        decompress_into(black_box(block), out).expect("decompress");
                    }
                }
            });
        }
        _ => panic!("operation: compress, decompress or decompress_lz4_flex"),
    }
}
