//! Throughput of the pglz codec on sliced payloads (the "sliced time" of the
//! 2019 test_pglz benchmark): each slice is compressed with the DEFAULT strategy
//! and the accepted ones are decompressed with `check_complete`, best of N runs.
//!
//! ```text
//! cargo run --release -p compresslab-core --example pglz_speed -- FILE SLICE [REPS] [fast]
//! cargo run --release -p compresslab-core --example pglz_speed          # synthetic data
//! target/release/examples/pglz_speed cg exact|fast|decompress|dump pages|wal|text|KIND|FILE SLICE PASSES
//! ```
//!
//! The output line has the same shape as the C harness used to measure
//! PostgreSQL's own `pglz_compress` on the same files, so the two can be compared.
//!
//! `cg` is for instruction counts (`scripts/callgrind.sh`): PASSES passes of one operation
//! over one synthetic payload cut into SLICE-byte slices, and nothing printed; the count of
//! one pass is the difference between two runs with different PASSES, divided. With
//! `PASS_CLOCK` set it times the passes instead (`synthetic::each_pass`). PAYLOAD may be a
//! file's path.

use std::time::Instant;

use compresslab_core::pglz::{compress_fast_into, compress_into, decompress_into, max_output, Strategy};
mod synthetic;

use std::hint::black_box;

use synthetic::{command, Command};

fn main() {
    match command() {
        Command::Passes(args) => passes(&args),
        Command::Synthetic(payloads) => {
            for (name, data) in payloads {
                for slice in [8192, 2048] {
                    run(&name, &data, slice, 5, false);
                }
            }
        }
        Command::File { name, data, slice, reps, extra } => {
            run(&name, &data, slice, reps, extra.first().is_some_and(|a| a == "fast"))
        }
    }
}

fn run(name: &str, data: &[u8], slice: usize, reps: usize, fast: bool) {
    let strategy = Strategy::DEFAULT;
    let slices: Vec<&[u8]> = data.chunks(slice).collect();
    let total_raw = data.len();
    let mut outs: Vec<Vec<u8>> = slices.iter().map(|_| Vec::with_capacity(max_output(slice))).collect();
    let mut lens: Vec<Option<usize>> = vec![None; slices.len()];
    let mut dbuf = vec![0u8; slice];

    let mut best_c = f64::MAX;
    let mut best_d = f64::MAX;
    for rep in 0..=reps {
        let t0 = Instant::now();
        for ((src, out), len) in slices.iter().zip(outs.iter_mut()).zip(lens.iter_mut()) {
            *len = if fast { compress_fast_into(src, out, &strategy) } else { compress_into(src, out, &strategy) };
        }
        let t1 = Instant::now();
        for ((src, out), len) in slices.iter().zip(&outs).zip(&lens) {
            if len.is_some() {
                let raw = &mut dbuf[..src.len()];
                let n = decompress_into(out, raw, true).expect("decompress");
                assert_eq!(n, src.len());
                if rep == 0 {
                    assert_eq!(&raw[..], *src, "round trip");
                }
            }
        }
        let t2 = Instant::now();
        if rep > 0 {
            // rep 0 is the warm-up
            best_c = best_c.min((t1 - t0).as_secs_f64());
            best_d = best_d.min((t2 - t1).as_secs_f64());
        }
    }
    let accepted = lens.iter().filter(|l| l.is_some()).count();
    // The tail slice counts like the others: a refused slice is stored raw.
    let total_c: usize = lens.iter().zip(&slices).map(|(l, s)| l.unwrap_or(s.len())).sum();
    let accepted_raw: usize = lens.iter().zip(&slices).filter(|(l, _)| l.is_some()).map(|(_, s)| s.len()).sum();
    println!(
        "Rust{} {name:<12} slice {slice:>5}: {:>5} slices, {accepted} accepted, size {total_raw} -> {total_c} \
         ({:.2}%); compress {:.1} MB/s; decompress {:.1} MB/s",
        if fast { " (fast)" } else { "" },
        slices.len(),
        100.0 * total_c as f64 / total_raw as f64,
        total_raw as f64 / best_c / 1e6,
        accepted_raw as f64 / best_d / 1e6,
    );
}

/// `cg OPERATION PAYLOAD SLICE PASSES`: see the module header.
fn passes(args: &[String]) {
    let [op, payload, slice, passes] = args else {
        panic!("usage: pglz_speed cg exact|fast|decompress|dump pages|wal|text|KIND|FILE SLICE PASSES");
    };
    let slice: usize = slice.parse().expect("slice size");
    let passes: usize = passes.parse().expect("passes");
    let data = synthetic::named(payload);
    let strategy = Strategy::DEFAULT;
    let mut out = Vec::with_capacity(max_output(slice));
    match op.as_str() {
        "exact" | "fast" => {
            let fast = op == "fast";
            synthetic::each_pass(passes, data.len(), || {
                for src in data.chunks(slice) {
                    let src = black_box(src);
                    black_box(if fast {
                        compress_fast_into(src, &mut out, &strategy)
                    } else {
                        compress_into(src, &mut out, &strategy)
                    });
                }
            });
        }
        "decompress" => {
            let blocks: Vec<(usize, Vec<u8>)> = data
                .chunks(slice)
                .filter_map(|src| compress_into(src, &mut out, &strategy).map(|_| (src.len(), out.clone())))
                .collect();
            let mut raw = vec![0u8; slice];
            let bytes = blocks.iter().map(|(len, _)| len).sum();
            synthetic::each_pass(passes, bytes, || {
                for (len, block) in &blocks {
                    black_box(decompress_into(black_box(block), &mut raw[..*len], true).expect("decompress"));
                }
            });
        }
        // The payload's bytes, for a harness in another language (scripts/against_c.sh).
        "dump" => std::io::Write::write_all(&mut std::io::stdout(), &data).expect("write the payload"),
        _ => panic!("operation: exact, fast, decompress or dump"),
    }
}
