//! Payloads: named pieces of bytes (a bytea, page images, column values, a file) cut into
//! slices, and seeded synthetic generators.

use crate::error::{try_zeroed, Result};
use crate::rng::SeededRng;

/// A named list of pieces (values, pages, files) to be sliced and measured.
#[derive(Debug, Clone)]
pub struct Payload {
    pub name: String,
    pub pieces: Vec<Vec<u8>>,
}

impl Payload {
    pub fn new(name: impl Into<String>, pieces: Vec<Vec<u8>>) -> Payload {
        Payload { name: name.into(), pieces }
    }

    pub fn total_bytes(&self) -> usize {
        self.pieces.iter().map(Vec::len).sum()
    }

    /// Every piece cut into slices of `slice_size` bytes (the last one shorter), or each piece
    /// whole when `slice_size` is 0; in order, so the slices concatenated are the pieces
    /// concatenated. Empty pieces give no slices.
    pub fn slices(&self, slice_size: usize) -> impl Iterator<Item = &[u8]> + '_ {
        let size = if slice_size == 0 { usize::MAX } else { slice_size };
        self.pieces.iter().flat_map(move |piece| piece.chunks(size))
    }

    /// How many slices [`Payload::slices`] yields.
    pub fn slice_count(&self, slice_size: usize) -> usize {
        let size = if slice_size == 0 { usize::MAX } else { slice_size };
        self.pieces.iter().map(|p| p.len().div_ceil(size)).sum()
    }
}

crate::named_choices! {
    /// The kinds of synthetic payload.
    pub enum SyntheticKind: "synthetic payload kind", "kinds" {
        Zeros = "zeros",
        Random = "random",
        /// English-like prose (Zipf-distributed common words).
        Text = "text",
        /// pgbench_accounts rows as COPY text, with uuid-text filler.
        Pgbench = "pgbench",
        /// One byte repeated ('aaaa...'): a repeated pattern of period 1.
        Period1 = "period1",
        /// A pattern of 2 distinct random bytes, repeated.
        Period2 = "period2",
        /// A pattern of 4 distinct random bytes, repeated.
        Period4 = "period4",
        /// A pattern of 8 distinct random bytes, repeated.
        Period8 = "period8",
        /// A pattern of 16 distinct random bytes, repeated.
        Period16 = "period16",
        /// A pattern of 32 distinct random bytes, repeated.
        Period32 = "period32",
        /// A pattern of 64 distinct random bytes, repeated.
        Period64 = "period64",
        /// Runs of one byte (16..=271 long) between stretches of random bytes (16..=63).
        Runs = "runs",
    }
}

/// The kinds of the standard suite (`bench_suite`): the realistic shapes and the two
/// extremes; the repeated-pattern family is measured by `bench_synthetic` and the report.
pub const SUITE_KINDS: &[SyntheticKind] =
    &[SyntheticKind::Zeros, SyntheticKind::Random, SyntheticKind::Text, SyntheticKind::Pgbench];

/// The repeated-pattern family of the every-shape goals, where decoders copy overlapping matches with
/// short offsets: every period, then single-byte runs inside random data.
pub const REPEATED_KINDS: &[SyntheticKind] = &[
    SyntheticKind::Period1,
    SyntheticKind::Period2,
    SyntheticKind::Period4,
    SyntheticKind::Period8,
    SyntheticKind::Period16,
    SyntheticKind::Period32,
    SyntheticKind::Period64,
    SyntheticKind::Runs,
];

impl SyntheticKind {
    /// The period of a repeated-pattern kind, None for the others.
    pub fn period(self) -> Option<usize> {
        match self {
            SyntheticKind::Period1 => Some(1),
            SyntheticKind::Period2 => Some(2),
            SyntheticKind::Period4 => Some(4),
            SyntheticKind::Period8 => Some(8),
            SyntheticKind::Period16 => Some(16),
            SyntheticKind::Period32 => Some(32),
            SyntheticKind::Period64 => Some(64),
            _ => None,
        }
    }
}

/// `period` distinct bytes in a seeded order (a partial shuffle of 0..=255), so that the
/// pattern repeats with exactly that period and no shorter one.
fn distinct_pattern(rng: &mut SeededRng, period: usize) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..=255).collect();
    for i in 0..period {
        let j = i + rng.below((256 - i) as u64) as usize;
        bytes.swap(i, j);
    }
    bytes.truncate(period);
    bytes
}

/// Common English words by rough frequency class, for text that compresses like prose.
const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "a",
    "in",
    "is",
    "that",
    "for",
    "it",
    "as",
    "was",
    "with",
    "be",
    "by",
    "on",
    "not",
    "he",
    "this",
    "are",
    "or",
    "his",
    "from",
    "at",
    "which",
    "but",
    "have",
    "an",
    "had",
    "they",
    "you",
    "were",
    "their",
    "one",
    "all",
    "we",
    "can",
    "her",
    "has",
    "there",
    "been",
    "if",
    "more",
    "when",
    "will",
    "would",
    "who",
    "so",
    "no",
    "database",
    "page",
    "compression",
    "record",
    "value",
    "table",
    "server",
    "write",
    "transaction",
    "checkpoint",
    "buffer",
    "index",
    "query",
    "replica",
    "storage",
    "performance",
    "measure",
    "number",
    "people",
    "time",
    "year",
    "between",
    "through",
    "because",
    "important",
    "however",
    "without",
];

/// Generate `size` bytes of synthetic data of `kind`, reproducibly from `seed`.
pub fn synthetic(kind: SyntheticKind, size: usize, seed: u64) -> Result<Vec<u8>> {
    generate(kind, size, seed, &mut || ())
}

/// [`synthetic`], calling `tick` after every MB generated (the extension checks for cancel
/// there). The buffer is allocated fallibly.
pub fn generate(kind: SyntheticKind, size: usize, seed: u64, tick: &mut dyn FnMut()) -> Result<Vec<u8>> {
    let mut out = try_zeroed(size, "the synthetic payload")?;
    generate_into(kind, &mut out, seed, tick);
    Ok(out)
}

/// Fill `out` with the bytes [`generate`] gives for `out.len()` (the SQL function `synthetic`
/// writes its result this way, with no copy), calling `tick` after every MB.
pub fn generate_into(kind: SyntheticKind, out: &mut [u8], seed: u64, tick: &mut dyn FnMut()) {
    const TICK_BYTES: usize = 1 << 20;
    let size = out.len();
    let mut rng = SeededRng::new(seed);
    let mut at = 0;
    let mut next_tick = TICK_BYTES;
    let mut aid = 1u64;
    // A sentence or a row, of which only what fits is kept.
    let mut piece = Vec::with_capacity(512);
    let pattern = kind.period().map(|p| distinct_pattern(&mut rng, p)).unwrap_or_default();
    while at < size {
        at += match kind {
            SyntheticKind::Zeros | SyntheticKind::Random => {
                let chunk = &mut out[at..size.min(at + TICK_BYTES)];
                if kind == SyntheticKind::Random {
                    rng.fill(chunk);
                } else {
                    chunk.fill(0);
                }
                chunk.len()
            }
            SyntheticKind::Period1
            | SyntheticKind::Period2
            | SyntheticKind::Period4
            | SyntheticKind::Period8
            | SyntheticKind::Period16
            | SyntheticKind::Period32
            | SyntheticKind::Period64 => {
                let chunk = &mut out[at..size.min(at + TICK_BYTES)];
                let p = pattern.len();
                for (i, b) in chunk.iter_mut().enumerate() {
                    *b = pattern[(at + i) % p];
                }
                chunk.len()
            }
            SyntheticKind::Text | SyntheticKind::Pgbench | SyntheticKind::Runs => {
                piece.clear();
                if kind == SyntheticKind::Text {
                    push_sentence(&mut rng, &mut piece);
                } else if kind == SyntheticKind::Runs {
                    push_run(&mut rng, &mut piece);
                } else {
                    push_account_row(&mut rng, aid, &mut piece);
                    aid += 1;
                }
                let n = piece.len().min(size - at);
                out[at..at + n].copy_from_slice(&piece[..n]);
                n
            }
        };
        if at >= next_tick {
            tick();
            next_tick += TICK_BYTES;
        }
    }
}

/// One sentence of 7 or more words, most frequent words most often (Zipf-like).
fn push_sentence(rng: &mut SeededRng, out: &mut Vec<u8>) {
    let n = WORDS.len() as u64;
    let mut words = 0;
    loop {
        let word = WORDS[(rng.below(n) * rng.below(n) / n) as usize];
        if words == 0 {
            out.push(word.as_bytes()[0].to_ascii_uppercase());
            out.extend_from_slice(&word.as_bytes()[1..]);
        } else {
            out.extend_from_slice(word.as_bytes());
        }
        words += 1;
        if words > 6 && rng.below(8) == 0 {
            out.extend_from_slice(b". ");
            return;
        }
        out.push(b' ');
    }
}

/// 16..=63 random bytes, then a run of one random byte 16..=271 long (the longest pglz match
/// is 273 bytes): zero-filled fields, padding and sparse arrays among other data.
fn push_run(rng: &mut SeededRng, out: &mut Vec<u8>) {
    let stretch = 16 + rng.below(48) as usize;
    out.extend_from_slice(&rng.bytes(stretch));
    let byte = rng.below(256) as u8;
    let run = 16 + rng.below(256) as usize;
    out.resize(out.len() + run, byte);
}

/// One pgbench_accounts row as COPY text: aid, bid, abalance, filler (blank-padded char(84)),
/// with the uuid-text filler the full-page-writes thread used to defeat the padding.
fn push_account_row(rng: &mut SeededRng, aid: u64, out: &mut Vec<u8>) {
    let bid = (aid - 1) / 100_000 + 1;
    let abalance = rng.below(10_000) as i64 - 5_000;
    let filler = format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        rng.next_u64() as u32,
        rng.below(1 << 16),
        rng.below(1 << 12),
        0x8000 | rng.below(1 << 14),
        rng.next_u64() & 0xFFFF_FFFF_FFFF
    );
    out.extend_from_slice(format!("{aid}\t{bid}\t{abalance}\t{filler:<84}\n").as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CodecError;
    use crate::registry::{parse_named, Named};

    /// Bits of entropy per byte (order-0), to explain outliers as the pglz thread did.
    pub fn entropy_bits_per_byte(data: &[u8]) -> f64 {
        if data.is_empty() {
            return 0.0;
        }
        let mut counts = [0u64; 256];
        for &b in data {
            counts[b as usize] += 1;
        }
        let n = data.len() as f64;
        counts.iter().filter(|&&c| c > 0).map(|&c| -(c as f64 / n) * (c as f64 / n).log2()).sum()
    }

    #[test]
    fn slicing_keeps_the_tail_and_whole_pieces() {
        let p = Payload::new("p", vec![vec![1; 5000], vec![], vec![2; 100]]);
        assert_eq!(p.slices(2048).map(<[u8]>::len).collect::<Vec<_>>(), vec![2048, 2048, 904, 100]);
        assert_eq!(p.slice_count(2048), 4);
        assert_eq!((p.slices(0).count(), p.slice_count(0)), (2, 2));
        assert_eq!(p.slices(8192).map(<[u8]>::len).sum::<usize>(), p.total_bytes());
        assert_eq!(p.slices(1).count(), p.slice_count(1));
    }

    #[test]
    fn synthetic_is_reproducible_and_shaped() {
        for &kind in SyntheticKind::ALL {
            let a = synthetic(kind, 10_000, 42).unwrap();
            assert_eq!(a.len(), 10_000);
            assert_eq!(a, synthetic(kind, 10_000, 42).unwrap(), "{kind:?}");
            // Generated in pieces, the same bytes as generated at once.
            assert_eq!(synthetic(kind, 3_000_000, 1).unwrap()[..10_000], synthetic(kind, 10_000, 1).unwrap()[..]);
        }
        let random = |seed| synthetic(SyntheticKind::Random, 100, seed).unwrap();
        assert_ne!(random(1), random(2));
        assert!(entropy_bits_per_byte(&synthetic(SyntheticKind::Random, 65_536, 1).unwrap()) > 7.9);
        let text = entropy_bits_per_byte(&synthetic(SyntheticKind::Text, 65_536, 1).unwrap());
        assert!((3.0..5.0).contains(&text), "{text}");
        assert_eq!(entropy_bits_per_byte(&synthetic(SyntheticKind::Zeros, 100, 1).unwrap()), 0.0);
        // Each repeated pattern has exactly its period: no shorter shift matches.
        for &kind in REPEATED_KINDS {
            let data = synthetic(kind, 4096, 5).unwrap();
            let Some(period) = kind.period() else { continue };
            let repeats = |p: usize| data[p..] == data[..data.len() - p];
            assert!(repeats(period), "{kind:?}");
            assert!((1..period).all(|p| !repeats(p)), "{kind:?} has a shorter period");
        }
        // Runs: about two thirds of the bytes in runs of one byte of 16 or more.
        let runs = synthetic(SyntheticKind::Runs, 1 << 16, 5).unwrap();
        let in_runs: usize = runs.chunk_by(|a, b| a == b).filter(|r| r.len() >= 16).map(<[u8]>::len).sum();
        assert!((0.6..0.95).contains(&(in_runs as f64 / runs.len() as f64)), "{in_runs}");
        assert!(matches!(parse_named::<SyntheticKind>("noise"), Err(CodecError::InvalidParameter(_))));
        let mut ticks = 0;
        generate(SyntheticKind::Pgbench, 5 << 20, 0, &mut || ticks += 1).unwrap();
        assert!(ticks >= 5, "{ticks}");
    }

    #[test]
    fn generate_into_writes_every_byte_of_the_buffer() {
        for &kind in SyntheticKind::ALL {
            for size in [0, 1, 300, (2 << 20) + 77] {
                let mut out = vec![0xA5; size];
                let mut ticks = 0;
                generate_into(kind, &mut out, 3, &mut || ticks += 1);
                assert!(out == synthetic(kind, size, 3).unwrap(), "{kind:?} {size}");
                assert_eq!(ticks, size >> 20, "{kind:?} {size}");
            }
        }
    }
}
