//! What a full-page image is: PostgreSQL's block size, the standard page header, the "hole"
//! between `pd_lower` and `pd_upper` that WAL leaves out, and the seeded choice of which
//! blocks of a relation to sample.

use std::collections::BTreeSet;

use crate::error::{CodecError, Result};
use crate::rng::SeededRng;

/// PostgreSQL's block size and the size of a standard page header (`SizeOfPageHeaderData`).
pub const BLCKSZ: usize = 8192;
pub const PAGE_HEADER_SIZE: usize = 24;

/// The hole of a standard page as `XLogRecordAssemble` computes it: `(pd_lower, pd_upper -
/// pd_lower)` when `pd_lower >= SizeOfPageHeaderData`, `pd_upper > pd_lower` and `pd_upper <=
/// BLCKSZ`; otherwise no hole.
pub fn hole(page: &[u8]) -> (usize, usize) {
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

/// A page's LSN (`pd_lsn`: the high 32 bits, then the low, each in the machine's order).
pub fn page_lsn(page: &[u8]) -> u64 {
    let half = |at: usize| u64::from(u32::from_ne_bytes([page[at], page[at + 1], page[at + 2], page[at + 3]]));
    (half(0) << 32) | half(4)
}

/// The line pointers of a standard page in use for a tuple (`LP_NORMAL`).
pub fn normal_items(page: &[u8]) -> usize {
    let lower = (u16::from_le_bytes([page[12], page[13]]) as usize).clamp(PAGE_HEADER_SIZE, page.len());
    page[PAGE_HEADER_SIZE..lower]
        .chunks_exact(4)
        .filter(|item| (u32::from_ne_bytes([item[0], item[1], item[2], item[3]]) >> 15) & 3 == 1)
        .count()
}

/// How a page image is presented to a codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// Cut out, as full-page writes store pages.
    Removed,
    /// Kept, zero-filled: what compressing the whole page would see.
    ZeroFilled,
}

impl Hole {
    pub fn parse(text: &str) -> Result<Hole> {
        match text.trim().to_ascii_lowercase().as_str() {
            "removed" => Ok(Hole::Removed),
            "zero-filled" | "zero_filled" | "zeroed" => Ok(Hole::ZeroFilled),
            other => Err(CodecError::invalid(format!(
                "hole must be \"removed\" (as full-page writes store pages) or \"zero-filled\", got \"{other}\""
            ))),
        }
    }

    /// The image of `page` (BLCKSZ bytes as in shared buffers) under this treatment.
    pub fn apply(self, page: &[u8]) -> Vec<u8> {
        let (offset, length) = hole(page);
        match self {
            Hole::Removed => [&page[..offset], &page[offset + length..]].concat(),
            Hole::ZeroFilled => {
                let mut image = page.to_vec();
                image[offset..offset + length].fill(0);
                image
            }
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Hole::Removed => "hole removed",
            Hole::ZeroFilled => "hole zero-filled",
        }
    }
}

/// A uniform random sample of `n` distinct block numbers out of `0..total`, sorted, the same
/// for the same seed (Floyd's algorithm: O(n) memory, whatever `total`).
pub fn sample_blocks(total: u32, n: u32, seed: u64) -> Vec<u32> {
    if n >= total {
        return (0..total).collect();
    }
    let mut rng = SeededRng::new(seed);
    let mut chosen = BTreeSet::new();
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
    fn hole_follows_xlog_rules() {
        let mut page = vec![7u8; BLCKSZ];
        page[12..14].copy_from_slice(&100u16.to_le_bytes());
        page[14..16].copy_from_slice(&8000u16.to_le_bytes());
        assert_eq!(hole(&page), (100, 7900));
        assert_eq!(Hole::Removed.apply(&page).len(), 292);
        let zeroed = Hole::ZeroFilled.apply(&page);
        assert!(zeroed[100..8000].iter().all(|&b| b == 0) && zeroed[8000] == 7);
        // pd_lower inside the header, or upper before lower: no hole
        page[12..14].copy_from_slice(&10u16.to_le_bytes());
        assert_eq!(hole(&page), (0, 0));
        page[12..14].copy_from_slice(&9000u16.to_le_bytes());
        assert_eq!(hole(&page), (0, 0));
        assert_eq!(hole(&[0u8; BLCKSZ]), (0, 0));
        assert_eq!(Hole::parse(" Zero-Filled").unwrap(), Hole::ZeroFilled);
        assert!(matches!(Hole::parse("kept"), Err(CodecError::InvalidParameter(_))));
    }

    #[test]
    fn a_pages_lsn_and_its_tuples_in_use() {
        let mut page = vec![0u8; BLCKSZ];
        page[0..4].copy_from_slice(&2u32.to_ne_bytes());
        page[4..8].copy_from_slice(&0x1A2D_1AD8u32.to_ne_bytes());
        assert_eq!(page_lsn(&page), 0x2_1A2D_1AD8);
        // four line pointers: normal (offset 8000, length 100), unused, dead, normal
        let item = |off: u32, flags: u32, len: u32| (off | flags << 15 | len << 17).to_ne_bytes();
        for (i, (off, flags, len)) in [(8000, 1, 100), (0, 0, 0), (0, 3, 0), (7900, 1, 100)].into_iter().enumerate() {
            page[24 + 4 * i..28 + 4 * i].copy_from_slice(&item(off, flags, len));
        }
        page[12..14].copy_from_slice(&40u16.to_le_bytes());
        assert_eq!(normal_items(&page), 2);
        page[12..14].copy_from_slice(&0u16.to_le_bytes());
        assert_eq!(normal_items(&page), 0, "pd_lower inside the header: none");
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
        let mut seen = [false; 100];
        for seed in 0..200 {
            for b in sample_blocks(100, 5, seed) {
                seen[b as usize] = true;
            }
        }
        assert!(seen.iter().all(|&x| x));
    }
}
