//! Payloads: pieces of bytes cut into slices, page images as full-page writes see them, and
//! seeded synthetic generators.

use crate::error::{CodecError, Result};

/// PostgreSQL's block size and the size of a standard page header (`SizeOfPageHeaderData`).
pub const BLCKSZ: usize = 8192;
pub const PAGE_HEADER_SIZE: usize = 24;

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

    /// Cut every piece into slices of `slice_size` bytes (the last one shorter), or keep each
    /// piece whole when `slice_size` is 0. Empty pieces give no slices.
    pub fn slices(&self, slice_size: usize) -> Vec<&[u8]> {
        let mut out = Vec::new();
        for piece in &self.pieces {
            if slice_size == 0 {
                if !piece.is_empty() {
                    out.push(&piece[..]);
                }
            } else {
                out.extend(piece.chunks(slice_size));
            }
        }
        out
    }
}

/// The hole of a standard page as `XLogRecordAssemble` computes it: `(pd_lower, pd_upper -
/// pd_lower)` when `pd_lower >= SizeOfPageHeaderData`, `pd_upper > pd_lower` and `pd_upper <=
/// BLCKSZ`; otherwise no hole.
pub fn page_hole(page: &[u8]) -> (usize, usize) {
    if page.len() != BLCKSZ {
        return (0, 0);
    }
    let lower = u16::from_le_bytes([page[12], page[13]]) as usize;
    let upper = u16::from_le_bytes([page[14], page[15]]) as usize;
    if lower >= PAGE_HEADER_SIZE && upper > lower && upper <= BLCKSZ {
        (lower, upper - lower)
    } else {
        (0, 0)
    }
}

/// The bytes a full-page image stores for `page`: everything but the hole.
pub fn page_image_without_hole(page: &[u8]) -> Vec<u8> {
    let (offset, length) = page_hole(page);
    [&page[..offset], &page[offset + length..]].concat()
}

/// The page with its hole zero-filled (what compressing the whole page would see).
pub fn page_image_zero_filled_hole(page: &[u8]) -> Vec<u8> {
    let (offset, length) = page_hole(page);
    let mut image = page.to_vec();
    image[offset..offset + length].fill(0);
    image
}

/// A small, fast, seedable generator (xorshift64*), so that synthetic payloads are the same on
/// every run and machine.
#[derive(Debug, Clone)]
pub struct SeededRng(u64);

impl SeededRng {
    pub fn new(seed: u64) -> SeededRng {
        SeededRng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let x = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&x[..chunk.len()]);
        }
    }
}

/// The kinds of synthetic payload.
pub const SYNTHETIC_KINDS: &[&str] = &["zeros", "random", "text", "pgbench"];

/// Common English words by rough frequency class, for text that compresses like prose.
const WORDS: &[&str] = &[
    "the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by", "on", "not",
    "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an", "had", "they", "you", "were",
    "their", "one", "all", "we", "can", "her", "has", "there", "been", "if", "more", "when", "will", "would",
    "who", "so", "no", "database", "page", "compression", "record", "value", "table", "server", "write",
    "transaction", "checkpoint", "buffer", "index", "query", "replica", "storage", "performance", "measure",
    "number", "people", "time", "year", "between", "through", "because", "important", "however", "without",
];

/// Generate `size` bytes of synthetic data of `kind`, reproducibly from `seed`.
pub fn synthetic(kind: &str, size: usize, seed: u64) -> Result<Vec<u8>> {
    let mut rng = SeededRng::new(seed);
    let mut out = Vec::with_capacity(size + 256);
    match kind {
        "zeros" => out.resize(size, 0),
        "random" => {
            out.resize(size, 0);
            rng.fill(&mut out);
        }
        "text" => {
            let mut sentence_len = 0;
            while out.len() < size {
                // Zipf-like choice: low indexes are far more frequent.
                let r = rng.below(WORDS.len() as u64) * rng.below(WORDS.len() as u64) / WORDS.len() as u64;
                let word = WORDS[r as usize];
                if sentence_len == 0 {
                    let mut chars = word.chars();
                    let first = chars.next().unwrap().to_ascii_uppercase();
                    out.push(first as u8);
                    out.extend_from_slice(chars.as_str().as_bytes());
                } else {
                    out.extend_from_slice(word.as_bytes());
                }
                sentence_len += 1;
                if sentence_len > 6 && rng.below(8) == 0 {
                    out.extend_from_slice(b". ");
                    sentence_len = 0;
                } else {
                    out.push(b' ');
                }
            }
        }
        "pgbench" => {
            // pgbench_accounts rows as COPY text: aid, bid, abalance, filler (blank-padded char(84)),
            // with the uuid-text filler the full-page-writes thread used to defeat the padding.
            let mut aid = 1u64;
            while out.len() < size {
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
                aid += 1;
            }
        }
        other => {
            return Err(CodecError::invalid(format!(
                "unknown synthetic payload kind \"{other}\"; valid kinds are {}",
                SYNTHETIC_KINDS.join(", ")
            )))
        }
    }
    out.truncate(size);
    Ok(out)
}

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

/// A uniform random sample of `n` distinct block numbers out of `0..total`, sorted, the same
/// for the same seed (Floyd's algorithm: O(n) memory, whatever `total`).
pub fn sample_blocks(total: u32, n: u32, seed: u64) -> Vec<u32> {
    if n >= total {
        return (0..total).collect();
    }
    let mut rng = SeededRng::new(seed);
    let mut chosen = std::collections::BTreeSet::new();
    for j in (total - n)..total {
        let t = rng.below(j as u64 + 1) as u32;
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slicing_keeps_the_tail_and_whole_pieces() {
        let p = Payload::new("p", vec![vec![1; 5000], vec![], vec![2; 100]]);
        let s = p.slices(2048);
        assert_eq!(s.iter().map(|s| s.len()).collect::<Vec<_>>(), vec![2048, 2048, 904, 100]);
        assert_eq!(p.slices(0).len(), 2);
        assert_eq!(p.slices(8192).iter().map(|s| s.len()).sum::<usize>(), p.total_bytes());
    }

    #[test]
    fn page_hole_follows_xlog_rules() {
        let mut page = vec![7u8; BLCKSZ];
        page[12..14].copy_from_slice(&100u16.to_le_bytes());
        page[14..16].copy_from_slice(&8000u16.to_le_bytes());
        assert_eq!(page_hole(&page), (100, 7900));
        assert_eq!(page_image_without_hole(&page).len(), 292);
        let zeroed = page_image_zero_filled_hole(&page);
        assert!(zeroed[100..8000].iter().all(|&b| b == 0) && zeroed[8000] == 7);
        // pd_lower inside the header, or upper before lower: no hole
        page[12..14].copy_from_slice(&10u16.to_le_bytes());
        assert_eq!(page_hole(&page), (0, 0));
        page[12..14].copy_from_slice(&9000u16.to_le_bytes());
        assert_eq!(page_hole(&page), (0, 0));
        assert_eq!(page_hole(&[0u8; BLCKSZ]), (0, 0));
    }

    #[test]
    fn synthetic_is_reproducible_and_shaped() {
        for kind in SYNTHETIC_KINDS {
            let a = synthetic(kind, 10_000, 42).unwrap();
            assert_eq!(a.len(), 10_000);
            assert_eq!(a, synthetic(kind, 10_000, 42).unwrap(), "{kind}");
        }
        assert_ne!(synthetic("random", 100, 1).unwrap(), synthetic("random", 100, 2).unwrap());
        assert!(entropy_bits_per_byte(&synthetic("random", 65_536, 1).unwrap()) > 7.9);
        let text = entropy_bits_per_byte(&synthetic("text", 65_536, 1).unwrap());
        assert!((3.0..5.0).contains(&text), "{text}");
        assert_eq!(entropy_bits_per_byte(&synthetic("zeros", 100, 1).unwrap()), 0.0);
        assert!(matches!(synthetic("noise", 1, 1), Err(CodecError::InvalidParameter(_))));
    }

    #[test]
    fn block_sample_is_uniform_distinct_sorted_and_seeded() {
        let s = sample_blocks(1000, 50, 7);
        assert_eq!(s.len(), 50);
        assert!(s.windows(2).all(|w| w[0] < w[1]) && *s.last().unwrap() < 1000);
        assert_eq!(s, sample_blocks(1000, 50, 7));
        assert_ne!(s, sample_blocks(1000, 50, 8));
        assert_eq!(sample_blocks(10, 50, 1), (0..10).collect::<Vec<_>>());
        // every block is reachable: over many seeds the sample covers the range
        let mut seen = vec![false; 100];
        for seed in 0..200 {
            for b in sample_blocks(100, 5, seed) {
                seen[b as usize] = true;
            }
        }
        assert!(seen.iter().all(|&x| x));
    }
}
