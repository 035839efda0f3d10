//! Samples that stand for a whole table: its blocks chosen uniformly without replacement
//! (seeded), every row of a chosen block read, and a column's total estimated from the
//! blocks' totals with its 95% interval (a cluster sample, expansion estimator).
//!
//! Every row is equally likely to be sampled wherever it sits: a block is the unit, so rows per
//! block may vary (wide values, free space, deleted rows) without biasing the estimate. The
//! estimate of a total over `N` blocks from `n` sampled ones with totals `y_i` is
//! `N / n * sum(y_i)`; its variance `N^2 (1 - n/N) s^2 / n` (`s^2` the sample variance of the
//! `y_i`, `1 - n/N` the finite population correction), so a table read whole has an exact
//! figure (interval of width 0). The interval is the estimate plus or minus Student's t
//! (`n - 1` degrees of freedom) times the standard error, never below what the sampled blocks
//! hold.

use std::collections::HashMap;

use crate::rewrite::wal::{sampled_interval, WalCount, WalInterval};
use crate::rng::SeededRng;

/// Blocks read before the sample may stop for being precise enough.
pub const MIN_BLOCKS: u64 = 30;
/// The sample stops growing once every figure's 95% margin is under this share of it.
pub const TARGET_MARGIN: f64 = 0.01;

/// The blocks `0..nblocks` in a uniformly random order (a Fisher-Yates shuffle drawn lazily:
/// memory grows with the blocks drawn, not with the table), the same for the same seed. Any
/// prefix is a uniform sample without replacement, so a sample grows by drawing more.
#[derive(Debug, Clone)]
pub struct BlockOrder {
    nblocks: u64,
    drawn: u64,
    moved: HashMap<u64, u64>,
    rng: SeededRng,
}

impl BlockOrder {
    /// `nblocks` at most 2^32 (PostgreSQL's block numbers are 32 bits).
    pub fn new(nblocks: u64, seed: u64) -> BlockOrder {
        BlockOrder { nblocks: nblocks.min(1 << 32), drawn: 0, moved: HashMap::new(), rng: SeededRng::new(seed) }
    }

    pub fn nblocks(&self) -> u64 {
        self.nblocks
    }
}

impl Iterator for BlockOrder {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.drawn >= self.nblocks {
            return None;
        }
        let at = |moved: &HashMap<u64, u64>, i: u64| moved.get(&i).copied().unwrap_or(i);
        let j = self.drawn + below(&mut self.rng, self.nblocks - self.drawn);
        let chosen = at(&self.moved, j);
        let first = at(&self.moved, self.drawn);
        self.moved.insert(j, first);
        self.moved.remove(&self.drawn);
        self.drawn += 1;
        Some(chosen)
    }
}

/// Uniform in `0..n` for any `n` up to 2^32 (the generator's `below` wants `n < 2^32`).
fn below(rng: &mut SeededRng, n: u64) -> u64 {
    if n < 1 << 32 {
        rng.below(n)
    } else {
        rng.next_u64() % n
    }
}

/// A figure estimated from a sample: the point estimate and its 95% interval (None when it
/// cannot be estimated: a single block of a larger table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub total: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl Estimate {
    /// Half the interval's width as a share of the estimate (0 for an exact figure, infinite
    /// when there is no interval).
    pub fn relative_margin(&self) -> f64 {
        match (self.low, self.high) {
            (Some(low), Some(high)) if self.total > 0.0 => (high - low) / 2.0 / self.total,
            (Some(low), Some(high)) if high <= low => 0.0,
            _ => f64::INFINITY,
        }
    }

    /// Whether the two intervals have a value in common.
    pub fn overlaps(&self, other: &Estimate) -> bool {
        match (self.low, self.high, other.low, other.high) {
            (Some(a_low), Some(a_high), Some(b_low), Some(b_high)) => a_low <= b_high && b_low <= a_high,
            _ => true,
        }
    }

    /// The estimate and interval rounded to whole units (bytes).
    pub fn rounded(&self) -> (i64, Option<i64>, Option<i64>) {
        let round = |x: f64| x.round() as i64;
        (round(self.total), self.low.map(round), self.high.map(round))
    }
}

/// The total over `nblocks` blocks estimated from the totals of the blocks sampled (drawn
/// uniformly without replacement), with its 95% interval.
pub fn estimate_total(nblocks: u64, sampled: &[f64]) -> Estimate {
    let n = sampled.len() as f64;
    let sum: f64 = sampled.iter().sum();
    if sampled.len() as u64 >= nblocks {
        return Estimate { total: sum, low: Some(sum), high: Some(sum) };
    }
    let big_n = nblocks as f64;
    let total = big_n / n * sum;
    if sampled.len() < 2 {
        return Estimate { total, low: None, high: None };
    }
    let mean = sum / n;
    let variance = sampled.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let standard_error = (big_n * big_n * (1.0 - n / big_n) * variance / n).sqrt();
    let margin = t_975(sampled.len() as u64 - 1) * standard_error;
    // The total is at least what the sampled blocks hold.
    Estimate { total, low: Some((total - margin).max(sum)), high: Some(total + margin) }
}

/// Student's t 0.975 quantile for `df` degrees of freedom (a table, rounded down to the
/// nearest row, so never smaller than the true quantile).
pub fn t_975(df: u64) -> f64 {
    const TABLE: &[(u64, f64)] = &[
        (1, 12.706),
        (2, 4.303),
        (3, 3.182),
        (4, 2.776),
        (5, 2.571),
        (6, 2.447),
        (7, 2.365),
        (8, 2.306),
        (9, 2.262),
        (10, 2.228),
        (12, 2.179),
        (15, 2.131),
        (20, 2.086),
        (25, 2.060),
        (30, 2.042),
        (40, 2.021),
        (60, 2.000),
        (120, 1.980),
    ];
    TABLE
        .iter()
        .rev()
        .find(|(d, _)| *d <= df.max(1))
        .map_or(1.96, |(d, t)| if df > 240 && *d == 120 { 1.96 } else { *t })
}

/// Whether a sample of `n` of `nblocks` blocks may stop growing: it is the whole table, or it
/// has at least [`MIN_BLOCKS`], `n` is a point where it is looked at (MIN_BLOCKS times a power
/// of two: looking after every block would stop on a lucky streak more often than the interval
/// allows), and every figure's margin is under [`TARGET_MARGIN`].
pub fn precise_enough(n: u64, nblocks: u64, figures: &[Estimate]) -> bool {
    if n >= nblocks {
        return true;
    }
    let checkpoint = n >= MIN_BLOCKS && n.is_multiple_of(MIN_BLOCKS) && (n / MIN_BLOCKS).is_power_of_two();
    checkpoint && figures.iter().all(|f| f.relative_margin() < TARGET_MARGIN)
}

/// One sampled block's totals for a column: rows, raw bytes of the values, stored bytes now
/// (`pg_column_size`) and under each of the methods tried, in order, and (where counted) the
/// values each method would keep compressed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockTotals {
    pub rows: u64,
    pub raw: u64,
    pub now: u64,
    pub methods: Vec<u64>,
    pub compressed: Vec<u64>,
    /// The values a rewrite to each method would change (`recompress`'s choice: compressed
    /// with another method, or stored raw where the method would compress it).
    pub rewrites: Vec<u64>,
    /// The WAL a rewrite to each method would write for the block's rows.
    pub wal: Vec<WalCount>,
    /// The model's known error under each method: the bytes the stored figure may be over and
    /// under what is stored (see `scenarios::toast::toasted_anew`).
    pub spread: Vec<(u64, u64)>,
}

impl BlockTotals {
    /// Adds one row's figures.
    pub fn add(&mut self, raw: usize, now: usize, methods: &[i64]) {
        self.rows += 1;
        self.raw += raw as u64;
        self.now += now as u64;
        if self.methods.len() < methods.len() {
            self.methods.resize(methods.len(), 0);
        }
        for (total, bytes) in self.methods.iter_mut().zip(methods) {
            *total += (*bytes).max(0) as u64;
        }
    }

    /// Adds, for the row just added, the model's known error under each method: its stored
    /// figure, and the least and most it may be.
    pub fn add_spread(&mut self, figures: &[(usize, usize, usize)]) {
        if self.spread.len() < figures.len() {
            self.spread.resize(figures.len(), (0, 0));
        }
        for (spread, &(figure, low, high)) in self.spread.iter_mut().zip(figures) {
            spread.0 += figure.saturating_sub(low) as u64;
            spread.1 += high.saturating_sub(figure) as u64;
        }
    }

    /// Counts, for the row just added, which methods a rewrite to would change its value.
    pub fn add_rewrites(&mut self, rewritten: &[bool]) {
        if self.rewrites.len() < rewritten.len() {
            self.rewrites.resize(rewritten.len(), 0);
        }
        for (count, &was) in self.rewrites.iter_mut().zip(rewritten) {
            *count += was as u64;
        }
    }

    /// Counts, for the row just added, which methods would keep its value compressed.
    pub fn add_compressed(&mut self, compressed: &[bool]) {
        if self.compressed.len() < compressed.len() {
            self.compressed.resize(compressed.len(), 0);
        }
        for (count, &was) in self.compressed.iter_mut().zip(compressed) {
            *count += was as u64;
        }
    }
}

/// A column's cluster sample: the blocks of the table and the totals of those read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnBlocks {
    pub nblocks: u64,
    pub blocks: Vec<BlockTotals>,
}

impl ColumnBlocks {
    fn estimate(&self, f: impl Fn(&BlockTotals) -> u64) -> Estimate {
        let totals: Vec<f64> = self.blocks.iter().map(|b| f(b) as f64).collect();
        estimate_total(self.nblocks, &totals)
    }

    pub fn rows(&self) -> Estimate {
        self.estimate(|b| b.rows)
    }

    pub fn raw(&self) -> Estimate {
        self.estimate(|b| b.raw)
    }

    pub fn now(&self) -> Estimate {
        self.estimate(|b| b.now)
    }

    /// The stored bytes under the `i`th method tried, the interval widened by the model's known
    /// error (the sample's interval of the figure less, and plus, its spread).
    pub fn method(&self, i: usize) -> Estimate {
        let bytes = |b: &BlockTotals| b.methods.get(i).copied().unwrap_or(0);
        let spread = |b: &BlockTotals| b.spread.get(i).copied().unwrap_or((0, 0));
        let estimate = self.estimate(bytes);
        if self.blocks.iter().all(|b| spread(b) == (0, 0)) {
            return estimate;
        }
        Estimate {
            total: estimate.total,
            low: self.estimate(|b| bytes(b).saturating_sub(spread(b).0)).low,
            high: self.estimate(|b| bytes(b) + spread(b).1).high,
        }
    }

    /// The values the `i`th method would keep compressed.
    pub fn compressed(&self, i: usize) -> Estimate {
        self.estimate(|b| b.compressed.get(i).copied().unwrap_or(0))
    }

    /// The values a rewrite to the `i`th method would change.
    pub fn rewrites(&self, i: usize) -> Estimate {
        self.estimate(|b| b.rewrites.get(i).copied().unwrap_or(0))
    }

    /// The WAL a rewrite to the `i`th method would write, with the images of the index pages
    /// its new entries may go to (the high end only); None with one block of several read.
    pub fn rewrite_wal(&self, i: usize, index_images: f64) -> Option<WalInterval> {
        let part = |f: fn(&WalCount) -> f64| self.estimate(|b| b.wal.get(i).map_or(0, |w| f(w).round() as u64));
        let (records, due, reached) = (part(|w| w.records), part(|w| w.images_due), part(|w| w.images_reached));
        sampled_interval(&records, &due, &reached, index_images)
    }

    /// The figures the sample grows for: the bytes now and under each method.
    pub fn figures(&self) -> Vec<Estimate> {
        let methods = self.blocks.iter().map(|b| b.methods.len()).max().unwrap_or(0);
        std::iter::once(self.now()).chain((0..methods).map(|i| self.method(i))).collect()
    }

    /// The sums over the sampled blocks (unscaled).
    pub fn sampled(&self) -> BlockTotals {
        let mut sum = BlockTotals::default();
        for b in &self.blocks {
            sum.rows += b.rows;
            sum.raw += b.raw;
            sum.now += b.now;
            if sum.methods.len() < b.methods.len() {
                sum.methods.resize(b.methods.len(), 0);
            }
            for (total, bytes) in sum.methods.iter_mut().zip(&b.methods) {
                *total += bytes;
            }
            if sum.compressed.len() < b.compressed.len() {
                sum.compressed.resize(b.compressed.len(), 0);
            }
            for (total, count) in sum.compressed.iter_mut().zip(&b.compressed) {
                *total += count;
            }
        }
        sum
    }

    /// Whether every block of the table was read.
    pub fn whole(&self) -> bool {
        self.blocks.len() as u64 >= self.nblocks
    }

    pub fn precise_enough(&self) -> bool {
        precise_enough(self.blocks.len() as u64, self.nblocks, &self.figures())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_models_known_error_widens_a_methods_interval() {
        let mut block = BlockTotals::default();
        block.add(5000, 3000, &[2000]);
        block.add_spread(&[(2000, 1900, 2600)]);
        let whole = ColumnBlocks { nblocks: 2, blocks: vec![block.clone(), block.clone()] };
        assert_eq!(whole.method(0), Estimate { total: 4000.0, low: Some(3800.0), high: Some(5200.0) });
        // no error: the sum alone
        block.spread = vec![(0, 0)];
        let exact = ColumnBlocks { nblocks: 2, blocks: vec![block.clone(), block] };
        assert_eq!(exact.method(0), Estimate { total: 4000.0, low: Some(4000.0), high: Some(4000.0) });
    }

    #[test]
    fn the_order_is_a_permutation_and_the_same_for_a_seed() {
        for nblocks in [0u64, 1, 2, 7, 100, 1000] {
            let mut seen: Vec<u64> = BlockOrder::new(nblocks, 3).collect();
            assert_eq!(seen, BlockOrder::new(nblocks, 3).collect::<Vec<_>>());
            seen.sort_unstable();
            assert_eq!(seen, (0..nblocks).collect::<Vec<_>>());
        }
        let a: Vec<u64> = BlockOrder::new(1000, 1).take(20).collect();
        let b: Vec<u64> = BlockOrder::new(1000, 2).take(20).collect();
        assert_ne!(a, b, "another seed, another sample");
    }

    #[test]
    fn every_block_is_equally_likely_first_and_in_a_prefix() {
        // 10 blocks, 3 drawn, 20,000 seeds: each block in about 30% of the samples, wherever it is
        let mut counts = [0u32; 10];
        for seed in 0..20_000 {
            for b in BlockOrder::new(10, seed).take(3) {
                counts[b as usize] += 1;
            }
        }
        for (block, &count) in counts.iter().enumerate() {
            let share = count as f64 / 20_000.0;
            assert!((share - 0.3).abs() < 0.02, "block {block} drawn in {share} of the samples");
        }
    }

    #[test]
    fn a_huge_table_draws_without_holding_its_blocks() {
        let order = BlockOrder::new(1 << 32, 9);
        let drawn: Vec<u64> = order.clone().take(1000).collect();
        assert!(drawn.iter().all(|&b| b < 1 << 32));
        let mut unique = drawn.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 1000);
        assert!(drawn.iter().any(|&b| b > 3 << 30), "the last quarter is reachable");
    }

    #[test]
    fn the_whole_table_is_exact_and_one_block_has_no_interval() {
        let all = estimate_total(3, &[10.0, 20.0, 30.0]);
        assert_eq!(all, Estimate { total: 60.0, low: Some(60.0), high: Some(60.0) });
        assert_eq!(all.relative_margin(), 0.0);
        let one = estimate_total(10, &[5.0]);
        assert_eq!((one.total, one.low, one.high), (50.0, None, None));
        assert!(one.relative_margin().is_infinite());
    }

    #[test]
    fn the_estimate_scales_and_the_interval_follows_the_spread() {
        // equal blocks: no spread, an exact interval
        let same = estimate_total(100, &[7.0; 10]);
        assert_eq!((same.total, same.low, same.high), (700.0, Some(700.0), Some(700.0)));
        // N = 100, n = 4, y = 1, 2, 3, 4: mean 2.5, s^2 = 5/3, total 250,
        // se = sqrt(100^2 * 0.96 * (5/3) / 4) = 63.25, t(3) = 3.182
        let e = estimate_total(100, &[1.0, 2.0, 3.0, 4.0]);
        let se = (100.0f64 * 100.0 * 0.96 * (5.0 / 3.0) / 4.0).sqrt();
        assert!((e.total - 250.0).abs() < 1e-9);
        assert!((e.high.unwrap() - (250.0 + 3.182 * se)).abs() < 1e-9);
        assert!((e.low.unwrap() - (250.0 - 3.182 * se)).abs() < 1e-9);
        // one large block among empty ones: the interval would reach below zero
        let skewed = estimate_total(1000, &[0.0, 0.0, 0.0, 100.0]);
        assert_eq!(skewed.low, Some(100.0), "never below what the sample holds");
    }

    #[test]
    fn t_quantiles_fall_to_the_normal_one() {
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(11), 2.228, "rounded down to the row of 10: larger, so conservative");
        assert_eq!(t_975(29), 2.060);
        assert_eq!(t_975(500), 1.96);
        assert!((1..300).all(|df| t_975(df) >= t_975(df + 1)));
    }

    #[test]
    fn precision_is_judged_at_doublings_only() {
        let tight = Estimate { total: 1000.0, low: Some(999.0), high: Some(1001.0) };
        let loose = Estimate { total: 1000.0, low: Some(900.0), high: Some(1100.0) };
        assert!(precise_enough(30, 1000, &[tight]));
        assert!(precise_enough(120, 1000, &[tight, tight]));
        assert!(!precise_enough(31, 1000, &[tight]), "not a checkpoint");
        assert!(!precise_enough(10, 1000, &[tight]), "too few blocks");
        assert!(!precise_enough(60, 1000, &[tight, loose]));
        assert!(precise_enough(7, 7, &[loose]), "the whole table");
    }

    /// A synthetic table: blocks of rows of random stored sizes; the newest third's rows (the
    /// last blocks) `shift` times larger, as an events table whose payload changed.
    fn table(seed: u64, nblocks: u64, shift: f64) -> Vec<f64> {
        let mut rng = SeededRng::new(seed);
        (0..nblocks)
            .map(|b| {
                let rows = 1 + rng.below(8);
                let scale = if b >= nblocks * 2 / 3 { shift } else { 1.0 };
                (0..rows).map(|_| scale * (200 + rng.below(2000) + rng.below(4) * 3000) as f64).sum()
            })
            .collect()
    }

    fn coverage(blocks: &[f64], draw: impl Fn(u64) -> Vec<u64>) -> (f64, f64) {
        let truth: f64 = blocks.iter().sum();
        let (mut covered, mut worst) = (0, 0.0f64);
        for seed in 0..200 {
            let sampled: Vec<f64> = draw(seed).iter().map(|&b| blocks[b as usize]).collect();
            let e = estimate_total(blocks.len() as u64, &sampled);
            if e.low.unwrap() <= truth && truth <= e.high.unwrap() {
                covered += 1;
            }
            worst = worst.max((e.total - truth).abs() / truth);
        }
        (covered as f64 / 200.0, worst)
    }

    #[test]
    fn the_intervals_cover_the_truth_95_percent_of_the_time() {
        for (name, blocks) in [
            ("uniform", table(1, 2000, 1.0)),
            ("newest third 3x larger", table(2, 2000, 3.0)),
            ("newest third 10x smaller", table(3, 600, 0.1)),
        ] {
            for n in [30u64, 100, 400] {
                let (cover, _) =
                    coverage(&blocks, |seed| BlockOrder::new(blocks.len() as u64, seed).take(n as usize).collect());
                assert!(cover >= 0.93, "{name}, {n} blocks: the 95% intervals covered the truth {cover} of the time");
            }
            // grown until precise (or half the table), as the server does
            let (cover, _) = coverage(&blocks, |seed| {
                let nblocks = blocks.len() as u64;
                let mut drawn = Vec::new();
                for b in BlockOrder::new(nblocks, seed) {
                    drawn.push(b);
                    let sampled: Vec<f64> = drawn.iter().map(|&d| blocks[d as usize]).collect();
                    let e = estimate_total(nblocks, &sampled);
                    if drawn.len() as u64 >= nblocks / 2 || precise_enough(drawn.len() as u64, nblocks, &[e]) {
                        break;
                    }
                }
                drawn
            });
            assert!(cover >= 0.93, "{name}, grown: covered {cover} of the time");
        }
    }

    #[test]
    fn the_first_blocks_alone_would_miss_a_changed_newest_third() {
        // what a sample of the first rows in physical order gives on the changed table: far
        // outside the interval the block sample gives
        let blocks = table(2, 2000, 3.0);
        let truth: f64 = blocks.iter().sum();
        let first = estimate_total(2000, &blocks[..100]);
        assert!(first.high.unwrap() < truth, "the first 100 blocks say at most {:?}, truth {truth}", first.high);
        let (cover, worst) = coverage(&blocks, |seed| BlockOrder::new(2000, seed).take(100).collect());
        assert!(cover >= 0.93 && worst < 0.25, "covered {cover}, worst miss {worst}");
    }

    #[test]
    fn column_blocks_estimate_each_figure() {
        let mut blocks = ColumnBlocks { nblocks: 4, blocks: Vec::new() };
        for (raw, now, pglz, lz4) in [(100, 50, 40, 45), (200, 90, 80, 85)] {
            let mut b = BlockTotals::default();
            b.add(raw, now, &[pglz, lz4]);
            b.add_compressed(&[true, raw > 150]);
            blocks.blocks.push(b);
        }
        assert_eq!(blocks.now().total, 280.0);
        assert_eq!(blocks.method(0).total, 240.0);
        assert_eq!(blocks.method(1).total, 260.0);
        assert_eq!(blocks.rows().total, 4.0);
        assert_eq!(blocks.figures().len(), 3);
        assert_eq!(blocks.sampled().methods, vec![120, 130]);
        assert_eq!(blocks.sampled().compressed, vec![2, 1]);
        assert_eq!((blocks.compressed(0).total, blocks.compressed(1).total), (4.0, 2.0));
        assert!(!blocks.whole());
    }
}
