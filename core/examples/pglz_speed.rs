//! Throughput of the pglz codec on sliced payloads (the "sliced time" of the
//! 2019 test_pglz benchmark): each slice is compressed with the DEFAULT strategy
//! and the accepted ones are decompressed with `check_complete`, best of N runs.
//!
//! ```text
//! cargo run --release -p compresslab-core --example pglz_speed -- FILE SLICE [REPS] [fast]
//! cargo run --release -p compresslab-core --example pglz_speed          # synthetic data
//! ```
//!
//! The output line has the same shape as the C harness used to measure
//! PostgreSQL's own `pglz_compress` on the same files, so the two can be compared.

use std::time::Instant;

use compresslab_core::pglz::{compress_fast_into, compress_into, decompress_into, max_output, Strategy};
use compresslab_core::rng::SeededRng;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        for (name, data) in synthetic() {
            for slice in [8192, 2048] {
                run(&name, &data, slice, 5, false);
            }
        }
        return;
    }
    let data = std::fs::read(&args[0]).expect("read input file");
    let slice: usize = args.get(1).map_or(8192, |s| s.parse().expect("slice size"));
    let reps: usize = args.get(2).map_or(5, |s| s.parse().expect("repetitions"));
    let name = std::path::Path::new(&args[0])
        .file_name()
        .map_or_else(|| args[0].clone(), |n| n.to_string_lossy().into_owned());
    let fast = args.get(3).is_some_and(|a| a == "fast");
    run(&name, &data, slice, reps, fast);
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

/// Deterministic stand-ins when no files are given: page-like, WAL-like and text.
fn synthetic() -> Vec<(String, Vec<u8>)> {
    // Seed 1 starts from the state these stand-ins were first generated with.
    let mut rng = SeededRng::new(1);
    let mut rnd = move || rng.next_u64();
    const WORDS: [&str; 16] = [
        "the",
        "tuple",
        "page",
        "buffer",
        "of",
        "and",
        "PostgreSQL",
        "index",
        "heap",
        "vacuum",
        "toast",
        "a",
        "to",
        "checkpoint",
        "WAL",
        "record",
    ];
    let size = 2 << 20;

    let mut pages = vec![0u8; size];
    for page in pages.chunks_exact_mut(8192) {
        let mut top = 8192;
        let mut id = (rnd() % 100_000) as u32;
        let mut lp = 24;
        while top > lp + 200 {
            top -= 120;
            let t = &mut page[top..top + 120];
            t[0..4].copy_from_slice(&(id / 16).to_le_bytes());
            t[24..28].copy_from_slice(&id.to_le_bytes());
            t[28..32].copy_from_slice(&((rnd() % 10) as u32).to_le_bytes());
            t[32..116].fill(b' ');
            page[lp..lp + 4].copy_from_slice(&(top as u32 | (120 << 17)).to_le_bytes());
            lp += 4;
            id += 1;
        }
    }

    let mut wal = Vec::with_capacity(size + 64);
    let mut lsn = 0x1000_0000u64;
    while wal.len() < size {
        let len = 24 + (rnd() % 40) as u32;
        wal.extend_from_slice(&len.to_le_bytes());
        wal.extend_from_slice(&(rnd() as u32 & 0x0f0f).to_le_bytes());
        wal.extend_from_slice(&lsn.to_le_bytes());
        wal.extend_from_slice(&[0x10, 0, 0, 0]);
        wal.extend_from_slice(&(rnd() as u32).to_le_bytes());
        for _ in 0..len - 24 {
            wal.push(if rnd() % 4 == 0 { rnd() as u8 } else { 0 });
        }
        lsn += u64::from(len);
    }
    wal.truncate(size);

    let mut text = Vec::with_capacity(size + 16);
    while text.len() < size {
        text.extend_from_slice(WORDS[(rnd() % WORDS.len() as u64) as usize].as_bytes());
        text.push(if rnd() % 12 == 0 { b'\n' } else { b' ' });
    }
    text.truncate(size);

    vec![("pages".to_string(), pages), ("wal".to_string(), wal), ("text".to_string(), text)]
}
