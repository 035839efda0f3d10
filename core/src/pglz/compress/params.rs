//! What the pglz encoders share: the format's limits, the strategy after PostgreSQL's
//! validation for one input size ([`Params`]), and the multiplicative hash of the fast paths.

use crate::pglz::strategy::Strategy;

/// Longest match a tag can express.
pub(super) const MAX_MATCH: usize = 273;
/// Number of input positions remembered (PostgreSQL's `PGLZ_HISTORY_SIZE`).
pub(super) const HISTORY_SIZE: usize = 4096;
/// Largest hash table (PostgreSQL's `PGLZ_MAX_HISTORY_LISTS`).
pub(super) const MAX_HASH_SIZE: usize = 8192;
/// The search stops at a candidate this far back or farther.
pub(super) const MAX_DISTANCE: usize = 0x0fff;
/// Size of the output buffer the compressor needs for `slen` input bytes
/// (PostgreSQL's `PGLZ_MAX_OUTPUT`): the size check runs once per item and one
/// item writes up to four bytes (a control byte and a three-byte tag).
pub const fn max_output(slen: usize) -> usize {
    slen + 4
}

/// Input bytes between two calls of the tick of [`compress_to_ticking`](super::compress_to_ticking).
pub const TICK_BYTES: usize = 1 << 20;

/// The strategy after PostgreSQL's validation and clamping, for one input size.
pub(super) struct Params {
    pub(super) good_match: i32,
    pub(super) good_drop: i32,
    /// The result must be strictly smaller than this.
    pub(super) result_max: usize,
    /// Fail when this many bytes were written before the first match (may be <= 0).
    pub(super) first_success_by: i64,
    /// Hash table size minus one.
    pub(super) mask: u32,
}

impl Params {
    /// The "good" length a walk asks for at each candidate, first to last: `good_match`,
    /// lowered by `good_drop` percent (integer arithmetic) after every candidate, as
    /// `pglz_find_match` does. Endless; never negative.
    pub(super) fn good_lengths(&self) -> impl Iterator<Item = i32> {
        let drop = self.good_drop;
        std::iter::successors(Some(self.good_match), move |good| Some(good - good * drop / 100))
    }

    pub(super) fn new(slen: usize, s: &Strategy) -> Option<Params> {
        // C's slen is an int32; longer inputs are above any max_input_size.
        let slen_i64 = slen as i64;
        if s.match_size_good <= 0 || slen_i64 < i64::from(s.min_input_size) || slen_i64 > i64::from(s.max_input_size) {
            return None;
        }
        let slen = slen as i32; // fits: slen <= max_input_size <= i32::MAX
        let good_match = s.match_size_good.clamp(17, MAX_MATCH as i32);
        let good_drop = s.match_size_drop.clamp(0, 100);
        let need_rate = s.min_comp_rate.clamp(0, 99);
        let result_max =
            if slen > i32::MAX / 100 { (slen / 100) * (100 - need_rate) } else { (slen * (100 - need_rate)) / 100 };
        let hash_size: u32 = match slen {
            0..=127 => 512,
            128..=255 => 1024,
            256..=511 => 2048,
            512..=1023 => 4096,
            _ => 8192,
        };
        Some(Params {
            good_match,
            good_drop,
            result_max: result_max as usize,
            first_success_by: i64::from(s.first_success_by),
            mask: hash_size - 1,
        })
    }
}

/// Bucket of the four bytes `w` in a table of `1 << BITS` entries.
#[inline(always)]
pub(super) fn hash_mul<const BITS: u32>(w: u32) -> usize {
    (w.wrapping_mul(0x9E37_79B1) >> (32 - BITS)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PostgreSQL's size checks and clamping: too short and `match_size_good <= 0` refused,
    /// the hash table by input size, `result_max` in its overflow-safe form for long inputs,
    /// and the good length lowered by `good_drop` percent per candidate.
    #[test]
    fn params_refuse_and_clamp_as_postgres_does() {
        let s = Strategy::DEFAULT;
        assert!(Params::new(31, &s).is_none());
        assert!(Params::new(1000, &Strategy { match_size_good: 0, ..s }).is_none());
        let p = Params::new(1000, &s).unwrap();
        assert_eq!((p.good_match, p.good_drop, p.result_max, p.mask), (128, 10, 750, 4095));
        assert_eq!(p.good_lengths().take(4).collect::<Vec<_>>(), [128, 116, 105, 95]);
        let p = Params::new(1000, &Strategy { match_size_good: 1000, match_size_drop: 200, ..s }).unwrap();
        assert_eq!((p.good_match, p.good_drop), (MAX_MATCH as i32, 100));
        assert_eq!(p.good_lengths().take(3).collect::<Vec<_>>(), [273, 0, 0]);
        let long = i32::MAX as usize / 100 + 1;
        assert_eq!(Params::new(long, &s).unwrap().result_max, long / 100 * 75);
        assert_eq!(Params::new(100, &s).unwrap().mask, 511);
    }
}
