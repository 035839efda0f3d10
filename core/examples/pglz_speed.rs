//! Throughput of the pglz codec on sliced payloads (the "sliced time" of the
//! 2019 test_pglz benchmark): each slice is compressed with the DEFAULT strategy
//! and the accepted ones are decompressed with `check_complete`, best of N runs.
//!
//! ```text
//! cargo run --release -p compresslab-core --example pglz_speed -- FILE SLICE [REPS] [fast]
//! cargo run --release -p compresslab-core --example pglz_speed          # synthetic data
//! target/release/examples/pglz_speed cg exact|fast|decompress|walk|walk_stores|dump pages|wal|text|KIND|FILE SLICE PASSES
//! ```
//!
//! The output line has the same shape as the C harness used to measure
//! PostgreSQL's own `pglz_compress` on the same files, so the two can be compared.
//!
//! `cg` is for instruction counts (`scripts/bench/callgrind.sh`): PASSES passes of one operation
//! over one synthetic payload cut into SLICE-byte slices, and nothing printed; the count of
//! one pass is the difference between two runs with different PASSES, divided. With
//! `PASS_CLOCK` set it times the passes instead (`synthetic::each_pass`). PAYLOAD may be a
//! file's path.

use std::time::Instant;

use compresslab_core::pglz::{compress_fast_into, compress_into, decompress_into, max_output, read_tag, Strategy};
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
        panic!(
            "usage: pglz_speed cg exact|fast|decompress|walk|walk_stores|dump pages|wal|text|KIND|FILE SLICE PASSES"
        );
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
            let blocks = accepted_blocks(&data, slice, 0);
            let mut raw = vec![0u8; slice];
            let bytes = blocks.iter().map(|(len, _)| len).sum();
            synthetic::each_pass(passes, bytes, || {
                for (len, block) in &blocks {
                    black_box(decompress_into(black_box(block), &mut raw[..*len], true).expect("decompress"));
                }
            });
        }
        // The decoder's walk over the items with nothing copied, or with its stores but no load
        // from the output (`walk_items`).
        "walk" | "walk_stores" => {
            let blocks = accepted_blocks(&data, slice, WALK_PADDING);
            let mut scratch = vec![0u8; slice + WALK_SCRATCH_ROOM];
            let walk = if op == "walk" { walk_items::<false> } else { walk_items::<true> };
            // Every item walked: the walk reaches the end of each block's output.
            for (len, block) in &blocks {
                assert!(walk(block, *len, &mut scratch) >= *len, "a walk stopped short");
            }
            let bytes = blocks.iter().map(|(len, _)| len).sum();
            synthetic::each_pass(passes, bytes, || {
                for (len, block) in &blocks {
                    black_box(walk(black_box(block), *len, &mut scratch));
                }
            });
        }
        // The payload's bytes, for a harness in another language (scripts/bench/against_c.sh).
        "dump" => std::io::Write::write_all(&mut std::io::stdout(), &data).expect("write the payload"),
        _ => panic!("operation: exact, fast, decompress, walk, walk_stores or dump"),
    }
}

/// The slices of `data` that pglz (DEFAULT strategy) compresses, each with its raw length and
/// its compressed block followed by `padding` zero bytes.
fn accepted_blocks(data: &[u8], slice: usize, padding: usize) -> Vec<(usize, Vec<u8>)> {
    let mut out = Vec::with_capacity(max_output(slice));
    data.chunks(slice)
        .filter_map(|src| {
            compress_into(src, &mut out, &Strategy::DEFAULT).map(|_| {
                let mut block = Vec::with_capacity(out.len() + padding);
                block.extend_from_slice(&out);
                block.resize(out.len() + padding, 0);
                (src.len(), block)
            })
        })
        .collect()
}

/// Zero bytes after each block that `walk_items` may read: a group's items start at most 25
/// bytes after its control byte (counting the empty run after a last tag), read 8 bytes at a
/// time.
const WALK_PADDING: usize = 32;
/// Output room `walk_items` needs past the raw size: a match stores 32 bytes.
const WALK_SCRATCH_ROOM: usize = 32;

/// The items of a pglz block walked as the decoder's fast loop walks them: the control byte, a
/// run of literals at once (its length from the control bits), a tag's offset, length and size
/// from one 4-byte load, the offset checked against the output so far, the cursors advanced.
/// Without `STORES` nothing is copied: what is left is the format's chain (where an item starts
/// depends on the items before it) and the decisions, the part of decoding no copy can take
/// away. With `STORES` the decoder's stores are made too, into `scratch` (8 bytes of literals
/// a run, 32 bytes a match), but a match stores its tag's bytes instead of loading its source
/// from the output, so the difference to the decoder is what the loads of bytes just written
/// cost (`scripts/bench/against_c.sh "pglz walk"`, BENCHMARKS.md). `block` ends in [`WALK_PADDING`]
/// zero bytes after the compressed data, which the walk may read as literals at its end.
/// Returns the output length walked.
fn walk_items<const STORES: bool>(block: &[u8], raw: usize, scratch: &mut [u8]) -> usize {
    assert!(scratch.len() >= raw + WALK_SCRATCH_ROOM);
    let end = block.len() - WALK_PADDING;
    let out = scratch.as_mut_ptr();
    let (mut ip, mut op) = (0usize, 0usize);
    while ip < end && op < raw {
        // SAFETY: ip < end here, and a group's reads end at most 1 + 3 * 8 + 8 = 33 bytes after
        // it (the empty run of literals after an eighth item that was a tag), inside the
        // padding. Every store starts at op.min(raw) and is at most 32 bytes long.
        unsafe {
            let at = |i: usize| block.as_ptr().add(i);
            let mut ctrl = u32::from(*at(ip)) | 0x100;
            ip += 1;
            loop {
                let n = ctrl.trailing_zeros() as usize;
                if STORES {
                    std::ptr::copy_nonoverlapping(at(ip), out.add(op.min(raw)), 8);
                }
                ip += n;
                op += n;
                ctrl >>= n;
                if ctrl == 1 {
                    break;
                }
                let t = u32::from_le_bytes(std::ptr::read_unaligned(at(ip) as *const [u8; 4]));
                let (off, len, size) = read_tag(t);
                if off.wrapping_sub(1) >= op {
                    bad_offset(off, ip);
                }
                if STORES {
                    let d = out.add(op.min(raw));
                    let v = [t as u8; 16];
                    std::ptr::write_unaligned(d as *mut [u8; 16], v);
                    std::ptr::write_unaligned(d.add(16) as *mut [u8; 16], v);
                }
                ip += size;
                op += len;
                ctrl >>= 1;
            }
        }
    }
    op
}

/// Out of line, as the decoder's: the walk's hot loop keeps its registers for the walk.
#[cold]
#[inline(never)]
fn bad_offset(off: usize, ip: usize) -> ! {
    panic!("bad offset {off} at input byte {ip}");
}
