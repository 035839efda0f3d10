//! The exact encoder, producing exactly the bytes of PostgreSQL 15's `pglz_compress`.
//!
//! The C code keeps a hash table of list heads plus a pool of 4096 doubly linked
//! history entries that it recycles. We reach the same decisions with less
//! bookkeeping, relying on two facts:
//!
//! * every consumed input position `p` enters the history exactly once and in
//!   order, so the C entry it occupies is `p % 4096 + 1` and the live history is
//!   always the window `[ip - 4096, ip)`; and
//! * the C search gives up at the first entry whose distance is `>= 0x0fff`, so it
//!   never looks at the oldest one or two positions of that window.
//!
//! Hence a head table of absolute positions and a ring of "previous position with
//! the same hash" links (a hash chain, as in zlib) reproduces the C lists: while a
//! chain walk stays within distance 0x0ffe every link it follows still belongs to
//! the position it was written for, and the first link that left the window (where
//! C would have unlinked the entry and ended the list) has a distance above 4096,
//! which stops the walk exactly where C stops. Nothing else about the search
//! (order, good-match decay, tie-breaking on the newest entry) changes.
//!
//! Since every position enters the history whatever the items decide, a position's
//! link depends on the input alone. So the links are made ahead of the items, a
//! block of [`HASH_BLOCK`] positions at a time: the block's buckets in one
//! vectorized pass (`fill_hashes`), then its links in a pass with no branches; the
//! items only read the link of the position they start at. Entering a match's
//! positions is then no loop of its own (whose exit, at a length in no order, the
//! branch predictor misses). The ring has [`RING_LEN`] links, the history and one
//! block, so making a block's links overwrites none still in reach.
//!
//! For inputs up to [`SMALL_INPUT`] bytes the links are not a ring but one per
//! position (indexed by the stored slot itself), so a step of the walk is a single
//! load, as C's `hent->next` is; the decay of the "good" length is read from a
//! table per strategy instead of being computed (a division) per candidate.
//!
//! [`compress_fast`](super::compress_fast) runs the same loop on inputs over 8192 bytes, with buckets
//! from a multiplicative hash and a walk cut after a few dozen candidates; up to
//! 8192 bytes it has a loop of its own (see the `pglz` module documentation).

use super::emitter::Emitter;
use super::params::{hash_mul, Params, HISTORY_SIZE, MAX_DISTANCE, MAX_HASH_SIZE, MAX_MATCH, TICK_BYTES};
use crate::bytes::{common_prefix, common_prefix_by_blocks, load_u64_unchecked, Block16};

/// Links in the ring of the `u32` chain: the history and a block of links made
/// ahead of the items (see the module header).
const RING_LEN: usize = HISTORY_SIZE + HASH_BLOCK;
/// A stored position. Bucket heads and chain links hold positions encoded in a
/// `Slot`; the empty value decodes to a "position" whose distance from any real
/// one (computed with wrapping subtraction) is at least 0x0fff, so the distance
/// test that ends a chain walk also ends it at an empty link.
pub(super) trait Slot: Copy + PartialEq {
    const EMPTY: Self;
    /// Length of the chain table: indices from [`Slot::link`] are below it.
    const CHAIN_LEN: usize;
    fn encode(pos: usize) -> Self;
    fn decode(self) -> usize;
    /// The chain index of the position this slot holds (any value, EMPTY included,
    /// gives an index below `CHAIN_LEN`).
    fn link(self) -> usize;
    /// The chain index of position `pos`: `encode(pos).link()`.
    #[inline(always)]
    fn link_of(pos: usize) -> usize {
        Self::encode(pos).link()
    }
}

/// For inputs of any size (positions are below 2^31): the position itself, with
/// `u32::MAX` as the empty value.
impl Slot for u32 {
    const EMPTY: u32 = u32::MAX;
    /// A ring: the position modulo [`RING_LEN`].
    const CHAIN_LEN: usize = RING_LEN;
    #[inline(always)]
    fn encode(pos: usize) -> u32 {
        pos as u32
    }
    #[inline(always)]
    fn decode(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn link(self) -> usize {
        self as usize % RING_LEN
    }
}

/// For inputs up to [`SMALL_INPUT`] bytes: position + 4096, with 0 as the empty
/// value (decoding to 4096 before position 0). Halves the tables to clear and
/// to keep in cache for the common page- and chunk-sized inputs.
///
/// The chain is not a ring here but has one link per encoded value, indexed by
/// the slot itself: following a link is then one load, with no masking or
/// decoding on the walk's dependency chain (the C walk's `hent->next` is one load
/// too). Only the links of positions entered during the current call are ever
/// read (the walk stops before anything older), so the table, 128 KB, is never
/// cleared and a call touches only 2 bytes per input byte of it.
impl Slot for u16 {
    const EMPTY: u16 = 0;
    const CHAIN_LEN: usize = 1 << 16;
    #[inline(always)]
    fn encode(pos: usize) -> u16 {
        (pos + HISTORY_SIZE) as u16
    }
    #[inline(always)]
    fn decode(self) -> usize {
        (self as usize).wrapping_sub(HISTORY_SIZE)
    }
    #[inline(always)]
    fn link(self) -> usize {
        self as usize
    }
}

/// Largest input whose positions fit the `u16` encoding.
pub(super) const SMALL_INPUT: usize = u16::MAX as usize + 1 - HISTORY_SIZE;

/// Hash chains over the history window.
pub(super) struct Tables<T: Slot> {
    /// Per hash bucket: the newest position with that hash.
    head: [T; MAX_HASH_SIZE],
    /// Indexed by [`Slot::link`] of a position: the previous position with the
    /// same hash. Only read for positions inside the live window, which were all
    /// written during the current call, so stale values are never seen.
    /// `T::CHAIN_LEN` entries.
    pub(super) chain: Box<[T]>,
    /// For [`find_match`]: the decaying "good" length (17..=273, then down to 0)
    /// after each candidate of a walk, for the pair in `good_walk_key`.
    good_walk: [u16; GOOD_STEPS],
    good_walk_key: (i32, i32),
    /// For [`compress_fast`](super::compress_fast) in [`compress_core`]: the same, cut after
    /// [`fast_cap`] candidates.
    good_fast: [u16; GOOD_STEPS],
    good_fast_key: (i32, i32),
}

/// Length of the table of "good" lengths: one entry per candidate a walk can
/// visit. Candidates are distinct positions at distances 1..=0x0ffe (links always
/// lead to earlier positions), so a walk visits at most 4094 and the index never
/// wraps; `i % GOOD_STEPS` only lets the compiler drop the bounds check.
const GOOD_STEPS: usize = 4096;

impl<T: Slot> Tables<T> {
    pub(super) fn new() -> Tables<T> {
        Tables {
            head: [T::EMPTY; MAX_HASH_SIZE],
            chain: vec![T::EMPTY; T::CHAIN_LEN].into_boxed_slice(),
            good_walk: [0; GOOD_STEPS],
            good_walk_key: (0, 0),
            good_fast: [0; GOOD_STEPS],
            good_fast_key: (0, 0),
        }
    }

    /// Links position `pos` to `prev`, the previous position with the same hash.
    #[inline(always)]
    fn set_link(&mut self, pos: usize, prev: T) {
        debug_assert_eq!(self.chain.len(), T::CHAIN_LEN);
        // SAFETY: link_of() < T::CHAIN_LEN = chain.len() (Tables::new).
        unsafe { *self.chain.get_unchecked_mut(T::link_of(pos)) = prev };
    }

    /// The slot linked from `slot`: the previous position with the same hash.
    #[inline(always)]
    fn next(&self, slot: T) -> T {
        debug_assert_eq!(self.chain.len(), T::CHAIN_LEN);
        // SAFETY: link() < T::CHAIN_LEN = chain.len() (Tables::new).
        unsafe { *self.chain.get_unchecked(slot.link()) }
    }

    /// Fills `good_walk` for the strategy of `p` unless it is already there.
    fn prepare_good_walk(&mut self, p: &Params) {
        if self.good_walk_key == (p.good_match, p.good_drop) {
            return;
        }
        // 17..=273 (clamped), and the decay keeps them >= 0: they fit a u16.
        for (g, good) in self.good_walk.iter_mut().zip(p.good_lengths()) {
            *g = good as u16;
        }
        self.good_walk_key = (p.good_match, p.good_drop);
    }

    /// Fills `good_fast` for the strategy of `p` unless it is already there: the
    /// entries of `good_walk`, then 0 from the [`fast_cap`]-th candidate on.
    fn prepare_good_fast(&mut self, p: &Params) {
        if self.good_fast_key == (p.good_match, p.good_drop) {
            return;
        }
        self.prepare_good_walk(p);
        let cap = fast_cap(p.good_match);
        for (i, (g, &w)) in self.good_fast.iter_mut().zip(&self.good_walk).enumerate() {
            *g = if i + 1 >= cap { 0 } else { w };
        }
        self.good_fast_key = (p.good_match, p.good_drop);
    }
}

/// A byte as C's signed `char` promoted to `int`, as bits.
#[inline(always)]
fn sx(b: u8) -> u32 {
    b as i8 as i32 as u32
}

/// PostgreSQL's bucket function. The C macro reads plain `char`, which is signed on
/// x86-64, so each byte is sign-extended before shifting; only the bits under the
/// mask (at most 13) survive, but the sign bits of bytes 1..3 land inside them.
#[inline(always)]
fn hash4(src: &[u8], p: usize, mask: u32) -> usize {
    let b = &src[p..p + 4];
    (((sx(b[0]) << 6) ^ (sx(b[1]) << 4) ^ (sx(b[2]) << 2) ^ sx(b[3])) & mask) as usize
}

/// The bucket of position `p`, including the short form used for the last three
/// positions (only the first byte, still sign-extended).
#[inline(always)]
fn hash_at(src: &[u8], p: usize, mask: u32) -> usize {
    if src.len() - p >= 4 {
        hash4(src, p, mask)
    } else {
        (sx(src[p]) & mask) as usize
    }
}

/// The walk of [`find_match`]: candidates newest first until one is 0x0fff or
/// more back, the best updated with conditional moves (the newest wins ties),
/// stopping once the best reaches the decaying "good" length (from the table of
/// `prepare_good_walk`). `len_at(cand)` is the match length at a candidate at
/// most 0x0ffe bytes before `ip`. The walk follows slots (`next`), decoding each
/// to a position on the side, so a step is one load (see the u16 `Slot`).
#[inline(always)]
fn walk<T: Slot, const FAST: bool>(
    ip: usize,
    head: T,
    ws: &Tables<T>,
    len_at: impl Fn(usize) -> usize,
) -> (usize, usize) {
    let good = if FAST { &ws.good_fast } else { &ws.good_walk };
    let (mut best_len, mut best_off) = (0usize, 0usize);
    let mut i = 0usize;
    let mut slot = head;
    loop {
        let cand = slot.decode();
        let off = ip.wrapping_sub(cand);
        if off >= MAX_DISTANCE {
            break;
        }
        let len = len_at(cand);
        if len > best_len {
            best_len = len;
            best_off = off;
        }
        if best_len >= usize::from(good[i % GOOD_STEPS]) {
            break;
        }
        i += 1;
        slot = ws.next(slot);
    }
    (best_len, best_off)
}

/// [`walk`] when at least 16 bytes are left at `ip`: the first 16 bytes of
/// every candidate compared at once ([`Block16`]), and 16 a step beyond them
/// (see [`compress_core`] for why 16).
#[inline(always)]
fn walk_by_blocks<T: Slot, const FAST: bool>(src: &[u8], ip: usize, head: T, ws: &Tables<T>) -> (usize, usize) {
    let limit = (src.len() - ip).min(MAX_MATCH);
    assert!(src.len() - ip >= 16);
    // SAFETY: ip + 16 <= src.len(), just asserted.
    let cur = unsafe { Block16::load(src, ip) };
    walk::<T, FAST>(ip, head, ws, |cand| {
        // SAFETY: `walk` passes candidates 1..=0x0ffe bytes before ip, so
        // cand + 16 <= ip + 16 <= src.len() and cand + limit <= ip + limit <= src.len().
        unsafe {
            let len = Block16::load(src, cand).common_prefix(cur);
            if len < 16 {
                len
            } else {
                16 + common_prefix_by_blocks(src, cand + 16, ip + 16, limit - 16)
            }
        }
    })
}

/// [`walk`] when 8 to 15 bytes are left at `ip` (the last positions): the
/// first 8 bytes of every candidate compared with one XOR.
#[inline(always)]
fn walk_by_words<T: Slot, const FAST: bool>(src: &[u8], ip: usize, head: T, ws: &Tables<T>) -> (usize, usize) {
    let limit = src.len() - ip;
    assert!(limit >= 8);
    // SAFETY: ip + 8 <= src.len(), just asserted.
    let cur = unsafe { load_u64_unchecked(src, ip) };
    walk::<T, FAST>(ip, head, ws, |cand| {
        // SAFETY: `walk` passes candidates 1..=0x0ffe bytes before ip, so
        // cand + 8 <= ip + 8 <= src.len().
        unsafe { word_match_len(src, cand, ip, cur, limit) }
    })
}

/// The match length at `cand` for [`walk_by_words`]: `cur` holds the 8 bytes at
/// `ip`, `limit` caps the length. Never inlined: the compiler used to leave this
/// compare out of line on its own and began to inline it when unrelated code
/// changed, which changed how it built the whole item loop; the attribute pins
/// the decision.
///
/// # Safety
///
/// `cand + 8 <= ip + 8 <= src.len()`.
#[inline(never)]
unsafe fn word_match_len(src: &[u8], cand: usize, ip: usize, cur: u64, limit: usize) -> usize {
    // SAFETY: cand + 8 <= src.len() by the caller's guarantee.
    let diff = unsafe { load_u64_unchecked(src, cand) } ^ cur;
    if diff != 0 {
        (diff.trailing_zeros() / 8) as usize
    } else {
        8 + common_prefix(src, cand + 8, ip + 8, limit - 8)
    }
}

/// The history search of `pglz_find_match`: walk the bucket newest first, stop at
/// distance 0x0fff, keep the longest match (the newest wins ties), stop once the
/// best reaches the decaying "good" length. Returns (length, offset); a length
/// below 3 means "no match".
///
/// PostgreSQL tests "best >= good" only when another entry follows; testing it
/// after every entry is equivalent because without a next entry the walk ends
/// anyway, and `good` is not used afterwards.
#[inline(always)]
fn find_match<T: Slot, const FAST: bool>(src: &[u8], ip: usize, head: T, ws: &Tables<T>) -> (usize, usize) {
    let avail = src.len() - ip;
    if avail >= 16 {
        walk_by_blocks::<T, FAST>(src, ip, head, ws)
    } else if avail >= 8 {
        walk_by_words::<T, FAST>(src, ip, head, ws)
    } else {
        // Fewer than eight bytes left: compare byte by byte.
        walk::<T, FAST>(ip, head, ws, |cand| common_prefix(src, cand, ip, avail))
    }
}

/// The exact encoder, and with `FAST` the one of [`compress_fast`](super::compress_fast) for inputs
/// over [`FAST_SHORT_INPUT`](super::fast_small::FAST_SHORT_INPUT) bytes, which differs only in its buckets
/// ([`fill_hashes_fast`]) and in a walk cut after [`fast_cap`] candidates. The
/// match search compares 16 bytes of each candidate at once, and 16 a step
/// beyond them: matches on text are often longer than 8 bytes, and fewer steps
/// means fewer exits of the compare loop to mispredict.
///
/// Never inlined, so that each instance is a function of its own whose machine
/// code does not depend on what else its caller holds: inlined into one
/// function with the fast instances, the exact encoder measured slower in the
/// server with its source unchanged (BENCHMARKS.md).
#[inline(never)]
pub(super) fn compress_core<T: Slot, const FAST: bool>(
    src: &[u8],
    out: &mut [u8],
    p: &Params,
    ws: &mut Tables<T>,
    hashes: &mut [u16],
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    let slen = src.len();
    let mask = if FAST { (1 << FAST_HASH_BITS) - 1 } else { p.mask };
    ws.head[..=mask as usize].fill(T::EMPTY);
    if FAST {
        ws.prepare_good_fast(p);
    } else {
        ws.prepare_good_walk(p);
    }

    let mut ip = 0usize; // next input position
    let mut emit = Emitter::new(out, p.result_max);
    // Refuse once the output holds `limit` bytes: result_max, and before the first
    // match also first_success_by (C's two tests before every item, merged).
    let fsb = p.first_success_by.max(0) as u64;
    let mut limit = (p.result_max as u64).min(fsb) as usize;
    let mut next_tick = TICK_BYTES;
    // Positions below this have their links (and are in the history).
    let mut linked_to = 0usize;

    // A block at a time (see the module header): the block's buckets and links
    // first, then the items starting in it. The last of them may end in the next
    // block, whose links are made before the next item starts.
    while ip < slen {
        if ip >= next_tick {
            tick();
            next_tick += TICK_BYTES;
        }
        let base = linked_to;
        let end = slen.min(base + hashes.len());
        let hs = &mut hashes[..end - base];
        if FAST {
            fill_hashes_fast(src, base, hs);
        } else {
            fill_hashes(src, base, hs, mask);
        }
        for (q, &b) in (base..).zip(&*hs) {
            // (Buckets are at most `mask`; the & only lets the compiler drop the
            // bounds check on `head`.)
            let b = usize::from(b) & (MAX_HASH_SIZE - 1);
            ws.set_link(q, ws.head[b]);
            ws.head[b] = T::encode(q);
        }
        linked_to = end;

        while ip < end {
            if emit.op >= limit {
                return None;
            }
            // The walk starts from the previous position with ip's bucket, as C's
            // search does (C adds ip after searching).
            let head = ws.next(T::encode(ip));
            let (len, off) = if ip.wrapping_sub(head.decode()) >= MAX_DISTANCE {
                (0, 0)
            } else {
                find_match::<T, FAST>(src, ip, head, ws)
            };
            if len > 2 {
                emit.tag(off, len);
                ip += len;
                limit = p.result_max;
            } else {
                emit.literal(src[ip]);
                ip += 1;
            }
        }
    }

    emit.finish()
}

/// Positions per block of [`compress_core`]: their buckets are computed in one
/// vectorizable pass and their links made in another before the items starting
/// in the block run.
pub(super) const HASH_BLOCK: usize = 4096;
// An item (at most MAX_MATCH positions) that starts in a block ends in the next
// one at the latest, whose links are made before the next item starts.
const _: () = assert!(HASH_BLOCK > MAX_MATCH);

/// Writes the bucket of every position `start..start + out.len()` of `src` into
/// `out`, as [`hash_at`] computes it. In 16-bit lanes: every term is shifted left
/// by at most six and masked to at most 13 bits, so the low 16 bits of the sign
/// extended bytes give the same result as C's `int` arithmetic.
fn fill_hashes(src: &[u8], start: usize, out: &mut [u16], mask: u32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, just checked.
        return unsafe { fill_hashes_avx2(src, start, out, mask) };
    }
    fill_hashes_body(src, start, out, mask)
}

/// [`fill_hashes`] compiled for AVX2: 16 lanes a step instead of 8.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_hashes_avx2(src: &[u8], start: usize, out: &mut [u16], mask: u32) {
    fill_hashes_body(src, start, out, mask)
}

#[inline(always)]
fn fill_hashes_body(src: &[u8], start: usize, out: &mut [u16], mask: u32) {
    let n = out.len();
    let full = src.len().saturating_sub(3).saturating_sub(start).min(n);
    let m = mask as u16;
    let sx16 = |b: u8| b as i8 as i16 as u16;
    if full > 0 {
        let (b0, b1, b2, b3) =
            (&src[start..][..full], &src[start + 1..][..full], &src[start + 2..][..full], &src[start + 3..][..full]);
        let o = &mut out[..full];
        for i in 0..full {
            o[i] = ((sx16(b0[i]) << 6) ^ (sx16(b1[i]) << 4) ^ (sx16(b2[i]) << 2) ^ sx16(b3[i])) & m;
        }
    }
    for (i, o) in out.iter_mut().enumerate().skip(full) {
        *o = hash_at(src, start + i, mask) as u16;
    }
}

/// Most candidates the walk of [`compress_fast`](super::compress_fast) compares in [`compress_core`]
/// (inputs over [`FAST_SHORT_INPUT`](super::fast_small::FAST_SHORT_INPUT) bytes) with the default strategy's
/// `match_size_good` of 128 (see [`fast_cap`]).
const FAST_CAP: usize = 64;
/// log2 of the bucket count of [`compress_fast`](super::compress_fast) in [`compress_core`].
const FAST_HASH_BITS: u32 = 13;

/// Most candidates [`compress_fast`](super::compress_fast)'s walk compares in [`compress_core`], for a
/// strategy whose (clamped) `match_size_good` is `good_match`: [`FAST_CAP`]
/// scaled by how long a match the strategy asks the walk to look for, against
/// the default's 128.
fn fast_cap(good_match: i32) -> usize {
    (FAST_CAP * good_match as usize).div_ceil(128)
}

/// [`fill_hashes`] for [`compress_fast`](super::compress_fast) in [`compress_core`]: the bucket of every position
/// `start..start + out.len()` is [`hash_mul`] of its next four bytes (zeros past
/// the end of `src` for the last three positions).
fn fill_hashes_fast(src: &[u8], start: usize, out: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, just checked.
        return unsafe { fill_hashes_fast_avx2(src, start, out) };
    }
    fill_hashes_fast_body(src, start, out)
}

/// [`fill_hashes_fast`] compiled for AVX2 (eight 32-bit multiplications a step).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fill_hashes_fast_avx2(src: &[u8], start: usize, out: &mut [u16]) {
    fill_hashes_fast_body(src, start, out)
}

#[inline(always)]
fn fill_hashes_fast_body(src: &[u8], start: usize, out: &mut [u16]) {
    let n = out.len();
    let full = src.len().saturating_sub(3).saturating_sub(start).min(n);
    if full > 0 {
        let (b0, b1, b2, b3) =
            (&src[start..][..full], &src[start + 1..][..full], &src[start + 2..][..full], &src[start + 3..][..full]);
        let o = &mut out[..full];
        for i in 0..full {
            let w = u32::from(b0[i]) | (u32::from(b1[i]) << 8) | (u32::from(b2[i]) << 16) | (u32::from(b3[i]) << 24);
            o[i] = hash_mul::<FAST_HASH_BITS>(w) as u16;
        }
    }
    for (i, o) in out.iter_mut().enumerate().skip(full) {
        let mut word = [0u8; 4];
        let tail = &src[start + i..];
        word[..tail.len()].copy_from_slice(tail);
        *o = hash_mul::<FAST_HASH_BITS>(u32::from_le_bytes(word)) as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// 200 cases of (input, block start, block length): random and printable bytes up to
    /// 5000, the start anywhere in them, the block up to [`HASH_BLOCK`] long.
    fn random_blocks(seed: u64) -> impl Iterator<Item = (Vec<u8>, usize, usize)> {
        let mut rng = SeededRng::new(seed);
        (0..200).map(move |case| {
            let len = 1 + rng.below(5000) as usize;
            let src = if case % 2 == 0 { rng.bytes(len) } else { rng.printable(len) };
            let start = rng.below(len as u64) as usize;
            (src, start, (len - start).min(HASH_BLOCK))
        })
    }

    /// The fast encoder's vectorized buckets (AVX2 where this CPU has it, and the portable
    /// body) are the multiplicative hash of the next four bytes, zero-padded past the end,
    /// at every position and at block starts that are not aligned.
    #[test]
    fn fill_hashes_fast_matches_the_multiplicative_hash() {
        for (src, start, n) in random_blocks(8) {
            let len = src.len();
            let want: Vec<u16> = (start..start + n)
                .map(|p| {
                    let mut w = [0u8; 4];
                    for (k, b) in w.iter_mut().enumerate() {
                        *b = src.get(p + k).copied().unwrap_or(0);
                    }
                    hash_mul::<FAST_HASH_BITS>(u32::from_le_bytes(w)) as u16
                })
                .collect();
            let mut got = vec![0u16; n];
            fill_hashes_fast(&src, start, &mut got);
            assert_eq!(got, want, "len {len} start {start}");
            let mut portable = vec![0u16; n];
            fill_hashes_fast_body(&src, start, &mut portable);
            assert_eq!(portable, want, "len {len} start {start} (portable)");
        }
    }

    /// The vectorized buckets (AVX2 where this CPU has it, and the portable body) equal C's
    /// bucket function position by position, bytes over 127 (sign-extended) and the short
    /// form of the last three positions included, at every mask and at block starts that
    /// are not aligned.
    #[test]
    fn fill_hashes_matches_the_bucket_function() {
        for (src, start, n) in random_blocks(7) {
            let len = src.len();
            for mask in [511u32, 1023, 2047, 4095, 8191] {
                let want: Vec<u16> = (start..start + n).map(|p| hash_at(&src, p, mask) as u16).collect();
                let mut got = vec![0u16; n];
                fill_hashes(&src, start, &mut got, mask);
                assert_eq!(got, want, "len {len} start {start} mask {mask}");
                let mut portable = vec![0u16; n];
                fill_hashes_body(&src, start, &mut portable, mask);
                assert_eq!(portable, want, "len {len} start {start} mask {mask} (portable)");
            }
        }
    }
}
