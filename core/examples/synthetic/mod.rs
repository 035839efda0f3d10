//! The deterministic payloads the speed examples use when no file is given (page-like,
//! WAL-like and text, 2 MB each), and their command line, shared by `pglz_speed` and
//! `lz4_speed`.

use compresslab_core::lab::payload::{self, SyntheticKind};
use compresslab_core::registry::parse_named;
use compresslab_core::rng::SeededRng;

/// What a speed example's command line asks for.
pub enum Command {
    /// `cg ARGS...`: instruction-count passes (`scripts/bench/callgrind.sh`).
    Passes(Vec<String>),
    /// No arguments: every synthetic payload, each at the example's slice sizes.
    Synthetic(Vec<(String, Vec<u8>)>),
    /// `FILE [SLICE [REPETITIONS [EXTRA...]]]` (defaults 8192 and 5): the file's name and
    /// bytes, the slice size, the repetitions and what follows.
    File { name: String, data: Vec<u8>, slice: usize, reps: usize, extra: Vec<String> },
}

/// The command line of a speed example.
pub fn command() -> Command {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "cg") {
        return Command::Passes(args[1..].to_vec());
    }
    if args.is_empty() {
        return Command::Synthetic(synthetic());
    }
    let data = std::fs::read(&args[0]).expect("read input file");
    let slice: usize = args.get(1).map_or(8192, |s| s.parse().expect("slice size"));
    let reps: usize = args.get(2).map_or(5, |s| s.parse().expect("repetitions"));
    let name = std::path::Path::new(&args[0])
        .file_name()
        .map_or_else(|| args[0].clone(), |n| n.to_string_lossy().into_owned());
    Command::File { name, data, slice, reps, extra: args.get(3..).unwrap_or_default().to_vec() }
}

/// The payload of the examples' `cg` mode: `pages`, `wal` or `text` (below), or 2 MB of a
/// lab kind (`payload::synthetic`, seed 1), such as the repeated-pattern family `period1` ..
/// `period64` and `runs` (the every-shape goals).
/// A name with a `/` is a file, read whole (`scripts/bench/against_c.sh` hands the C harness and the
/// examples the same bytes that way).
pub fn named(name: &str) -> Vec<u8> {
    if name.contains('/') {
        return std::fs::read(name).expect("read the payload file");
    }
    if let Some((_, data)) = synthetic().into_iter().find(|(n, _)| n == name) {
        return data;
    }
    let kind: SyntheticKind = parse_named(name).expect("payload: pages, wal, text or a synthetic kind");
    payload::synthetic(kind, 2 << 20, 1).expect("synthetic payload")
}

/// Deterministic stand-ins when no files are given: page-like, WAL-like and text.
pub fn synthetic() -> Vec<(String, Vec<u8>)> {
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

/// Runs `pass` `passes` times: silently for instruction counts, or, with `PASS_CLOCK` set in
/// the environment (`scripts/bench/against_c.sh`), after one untimed warm-up pass, each pass timed by
/// the thread's CPU clock, printing the best and the median nanoseconds per byte of `bytes`.
pub fn each_pass(passes: usize, bytes: usize, mut pass: impl FnMut()) {
    if std::env::var_os("PASS_CLOCK").is_none() {
        (0..passes).for_each(|_| pass());
        return;
    }
    pass();
    let mut ns: Vec<f64> = (0..passes.max(1))
        .map(|_| {
            let t0 = compresslab_core::clock::thread_cpu_seconds();
            pass();
            (compresslab_core::clock::thread_cpu_seconds() - t0) * 1e9 / bytes as f64
        })
        .collect();
    ns.sort_by(f64::total_cmp);
    println!("{:.4} {:.4}", ns[0], ns[ns.len() / 2]);
}
