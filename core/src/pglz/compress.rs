//! The pglz compressor, producing exactly the bytes of PostgreSQL 15's `pglz_compress`.
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
//! [`compress_fast`] runs the same loop on inputs over 4096 bytes, with buckets
//! from a multiplicative hash and a walk cut after a few dozen candidates; up to
//! 4096 bytes it has a loop of its own (see the `pglz` module documentation).

use std::cell::RefCell;

use super::strategy::Strategy;
use crate::bytes::{common_prefix, common_prefix_unchecked, load_u32, load_u32_unchecked, load_u64_unchecked};

/// Longest match a tag can express.
const MAX_MATCH: usize = 273;
/// Number of input positions remembered (PostgreSQL's `PGLZ_HISTORY_SIZE`).
const HISTORY_SIZE: usize = 4096;
/// Links in the ring of the `u32` chain: the history and a block of links made
/// ahead of the items (see the module header).
const RING_LEN: usize = HISTORY_SIZE + HASH_BLOCK;
/// Largest hash table (PostgreSQL's `PGLZ_MAX_HISTORY_LISTS`).
const MAX_HASH_SIZE: usize = 8192;
/// The search stops at a candidate this far back or farther.
const MAX_DISTANCE: usize = 0x0fff;
/// Size of the output buffer the compressor needs for `slen` input bytes
/// (PostgreSQL's `PGLZ_MAX_OUTPUT`): the size check runs once per item and one
/// item writes up to four bytes (a control byte and a three-byte tag).
pub const fn max_output(slen: usize) -> usize {
    slen + 4
}

/// A stored position. Bucket heads and chain links hold positions encoded in a
/// `Slot`; the empty value decodes to a "position" whose distance from any real
/// one (computed with wrapping subtraction) is at least 0x0fff, so the distance
/// test that ends a chain walk also ends it at an empty link.
trait Slot: Copy + PartialEq {
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
const SMALL_INPUT: usize = u16::MAX as usize + 1 - HISTORY_SIZE;

/// Hash chains over the history window.
struct Tables<T: Slot> {
    /// Per hash bucket: the newest position with that hash.
    head: [T; MAX_HASH_SIZE],
    /// Indexed by [`Slot::link`] of a position: the previous position with the
    /// same hash. Only read for positions inside the live window, which were all
    /// written during the current call, so stale values are never seen.
    /// `T::CHAIN_LEN` entries.
    chain: Box<[T]>,
    /// For [`compress_fast`]: the decaying "good" length after each candidate
    /// of a walk, for the (match_size_good, match_size_drop) pair in `good_key`.
    good_after: [i32; FAST_MAX_CHAIN],
    good_key: (i32, i32),
    /// For [`compress_fast_core`] (`u16` tables only): the base of its last call's
    /// slots, or 0 when `head` must be cleared before its next call.
    fast_base: u16,
    /// For [`find_match`]: the decaying "good" length (17..=273, then down to 0)
    /// after each candidate of a walk, for the pair in `good_walk_key`.
    good_walk: [u16; GOOD_STEPS],
    good_walk_key: (i32, i32),
    /// For [`compress_fast`] in [`compress_core`]: the same, cut after
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
    /// Links position `pos` to `prev`, the previous position with the same hash.
    #[inline(always)]
    fn set_link(&mut self, pos: usize, prev: T) {
        debug_assert_eq!(self.chain.len(), T::CHAIN_LEN);
        // SAFETY: link_of() < T::CHAIN_LEN = chain.len() (Workspace::new).
        unsafe { *self.chain.get_unchecked_mut(T::link_of(pos)) = prev };
    }

    /// The slot linked from `slot`: the previous position with the same hash.
    #[inline(always)]
    fn next(&self, slot: T) -> T {
        debug_assert_eq!(self.chain.len(), T::CHAIN_LEN);
        // SAFETY: link() < T::CHAIN_LEN = chain.len() (Workspace::new).
        unsafe { *self.chain.get_unchecked(slot.link()) }
    }

    /// Fills `good_walk` for the strategy of `p` unless it is already there.
    fn prepare_good_walk(&mut self, p: &Params) {
        if self.good_walk_key == (p.good_match, p.good_drop) {
            return;
        }
        let mut good = p.good_match; // 17..=273 (clamped), and the decay keeps it >= 0
        for g in self.good_walk.iter_mut() {
            *g = good as u16;
            good -= good * p.good_drop / 100;
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

/// Scratch tables, kept per thread so repeated calls pay neither allocation nor
/// clearing beyond the part of `head` the input size uses (as PostgreSQL does).
struct Workspace {
    small: Tables<u16>,
    large: Tables<u32>,
    /// The exact encoder's precomputed buckets ([`HASH_BLOCK`] entries).
    hashes: Box<[u16]>,
}

impl Workspace {
    fn new() -> Box<Workspace> {
        Box::new(Workspace {
            small: Tables {
                head: [u16::EMPTY; MAX_HASH_SIZE],
                chain: vec![u16::EMPTY; u16::CHAIN_LEN].into_boxed_slice(),
                good_after: [0; FAST_MAX_CHAIN],
                good_key: (0, 0),
                fast_base: 0,
                good_walk: [0; GOOD_STEPS],
                good_walk_key: (0, 0),
                good_fast: [0; GOOD_STEPS],
                good_fast_key: (0, 0),
            },
            large: Tables {
                head: [u32::EMPTY; MAX_HASH_SIZE],
                chain: vec![u32::EMPTY; u32::CHAIN_LEN].into_boxed_slice(),
                good_after: [0; FAST_MAX_CHAIN],
                good_key: (0, 0),
                fast_base: 0,
                good_walk: [0; GOOD_STEPS],
                good_walk_key: (0, 0),
                good_fast: [0; GOOD_STEPS],
                good_fast_key: (0, 0),
            },
            hashes: vec![0; HASH_BLOCK].into_boxed_slice(),
        })
    }
}

thread_local! {
    static WORKSPACE: RefCell<Box<Workspace>> = RefCell::new(Workspace::new());
}

/// Compresses `src` with `strategy`.
///
/// Returns `None` exactly when PostgreSQL 15's `pglz_compress` returns -1: the
/// strategy refuses the input size, `match_size_good <= 0`, the data did not
/// shrink by `min_comp_rate` percent (and at least by one byte), or no match was
/// found within the first `first_success_by` output bytes. An empty input always
/// yields `None`. On success the bytes are identical to the C implementation's on
/// x86-64.
pub fn compress(src: &[u8], strategy: &Strategy) -> Option<Vec<u8>> {
    new_vec(src, |src, out| compress_to(src, out, strategy))
}

/// Like [`compress`], but writes into `dst` (cleared first, its allocation reused)
/// and returns the compressed length. On `None` the contents of `dst` are
/// unspecified.
pub fn compress_into(src: &[u8], dst: &mut Vec<u8>, strategy: &Strategy) -> Option<usize> {
    into_vec(src, dst, |src, out| compress_to(src, out, strategy))
}

/// Like [`compress`], but writes into the front of `dst`, which must hold at least
/// [`max_output`]`(src.len())` bytes, and returns the compressed length.
pub fn compress_to(src: &[u8], dst: &mut [u8], strategy: &Strategy) -> Option<usize> {
    compress_with::<false>(src, dst, strategy, &mut || ())
}

/// Like [`compress`] but faster and not byte-identical to PostgreSQL: buckets
/// come from a multiplicative hash of the next four bytes, and the history walk
/// stops after 96 candidates for inputs up to 4096 bytes (where positions
/// inside matches longer than 8 bytes are only partly entered into the history)
/// and 64 above (see the `pglz` module documentation). Same format (PostgreSQL
/// decodes it), same strategy semantics and accept/refuse rules, same walk
/// order, good-match decay and 4094-byte reach.
pub fn compress_fast(src: &[u8], strategy: &Strategy) -> Option<Vec<u8>> {
    new_vec(src, |src, out| compress_fast_to(src, out, strategy))
}

/// [`compress_fast`] into a reused vector; see [`compress_into`].
pub fn compress_fast_into(src: &[u8], dst: &mut Vec<u8>, strategy: &Strategy) -> Option<usize> {
    into_vec(src, dst, |src, out| compress_fast_to(src, out, strategy))
}

/// [`compress_fast`] into the front of a slice; see [`compress_to`].
pub fn compress_fast_to(src: &[u8], dst: &mut [u8], strategy: &Strategy) -> Option<usize> {
    compress_with::<true>(src, dst, strategy, &mut || ())
}

/// [`compress_to`] (or with `fast`, [`compress_fast_to`]) calling `tick` after every
/// [`TICK_BYTES`] of input (inputs over 4096 bytes are checked at the start of each
/// block of 4096 positions, so a little later), so that a caller can stop a long
/// run (the extension checks for query cancel there; a panic or ERROR raised in
/// `tick` unwinds out cleanly).
pub fn compress_to_ticking(
    src: &[u8],
    dst: &mut [u8],
    strategy: &Strategy,
    fast: bool,
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    if fast {
        compress_with::<true>(src, dst, strategy, tick)
    } else {
        compress_with::<false>(src, dst, strategy, tick)
    }
}

/// Input bytes between two calls of the tick of [`compress_to_ticking`].
pub const TICK_BYTES: usize = 1 << 20;

fn new_vec(src: &[u8], to: impl FnOnce(&[u8], &mut [u8]) -> Option<usize>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    into_vec(src, &mut out, to)?;
    Some(out)
}

fn into_vec(src: &[u8], dst: &mut Vec<u8>, to: impl FnOnce(&[u8], &mut [u8]) -> Option<usize>) -> Option<usize> {
    dst.clear();
    dst.resize(max_output(src.len()), 0);
    let n = to(src, dst);
    dst.truncate(n.unwrap_or(0));
    n
}

fn compress_with<const FAST: bool>(
    src: &[u8],
    dst: &mut [u8],
    strategy: &Strategy,
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    let params = Params::new(src.len(), strategy)?;
    let dst = &mut dst[..max_output(src.len())];
    WORKSPACE.with(|ws| match ws.try_borrow_mut() {
        Ok(mut ws) => compress_sized::<FAST>(src, dst, &params, &mut ws, tick),
        // Not reachable today (nothing re-enters the compressor), but stay correct.
        Err(_) => compress_sized::<FAST>(src, dst, &params, &mut Workspace::new(), tick),
    })
}

fn compress_sized<const FAST: bool>(
    src: &[u8],
    dst: &mut [u8],
    params: &Params,
    ws: &mut Workspace,
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    // Inputs up to 4096 bytes take microseconds in the small `pglz_fast` loop: it
    // does not tick.
    match (FAST, src.len()) {
        (true, 0..=511) => compress_fast_core::<10>(src, dst, params, &mut ws.small),
        (true, 512..=1023) => compress_fast_core::<12>(src, dst, params, &mut ws.small),
        (true, 1024..=FAST_SHORT_INPUT) => compress_fast_core::<13>(src, dst, params, &mut ws.small),
        (_, 0..=SMALL_INPUT) => {
            // The bucket table holds this encoder's slots afterwards: the small
            // `pglz_fast` loop must clear it before its next call.
            ws.small.fast_base = 0;
            compress_core::<u16, FAST>(src, dst, params, &mut ws.small, &mut ws.hashes, tick)
        }
        _ => compress_core::<u32, FAST>(src, dst, params, &mut ws.large, &mut ws.hashes, tick),
    }
}

/// The strategy after PostgreSQL's validation and clamping, for one input size.
struct Params {
    good_match: i32,
    good_drop: i32,
    /// The result must be strictly smaller than this.
    result_max: usize,
    /// Fail when this many bytes were written before the first match (may be <= 0).
    first_success_by: i64,
    /// Hash table size minus one.
    mask: u32,
}

impl Params {
    fn new(slen: usize, s: &Strategy) -> Option<Params> {
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

/// The `W` (8 or 16) bytes at `at` as one little-endian integer.
///
/// # Safety
///
/// `at + W <= src.len()`.
#[inline(always)]
unsafe fn load_word<const W: usize>(src: &[u8], at: usize) -> u128 {
    // SAFETY: both loads lie in [at, at + W), inside src by the caller's guarantee.
    unsafe {
        let low = u128::from(load_u64_unchecked(src, at));
        if W == 16 {
            low | (u128::from(load_u64_unchecked(src, at + 8)) << 64)
        } else {
            low
        }
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

/// [`common_prefix`] of `src` at `a` and `b`, at most `limit`, `W` (8 or 16) bytes a step.
#[inline(always)]
fn common_prefix_by<const W: usize>(src: &[u8], a: usize, b: usize, limit: usize) -> usize {
    assert!(a.max(b) + limit <= src.len());
    let mut n = 0;
    while n + W <= limit {
        // SAFETY: a + n + W and b + n + W are at most max(a, b) + limit <= src.len().
        let diff = unsafe { load_word::<W>(src, a + n) ^ load_word::<W>(src, b + n) };
        if diff != 0 {
            return n + (diff.trailing_zeros() / 8) as usize;
        }
        n += W;
    }
    n + common_prefix(src, a + n, b + n, limit - n)
}

/// [`walk`] when at least `W` (8 or 16) bytes are left at `ip`: the first `W`
/// bytes of every candidate are compared with one XOR.
#[inline(always)]
fn walk_by_words<T: Slot, const FAST: bool, const W: usize>(
    src: &[u8],
    ip: usize,
    head: T,
    ws: &Tables<T>,
) -> (usize, usize) {
    let limit = (src.len() - ip).min(MAX_MATCH);
    assert!(src.len() - ip >= W);
    // SAFETY: ip + W <= src.len(), just asserted.
    let cur = unsafe { load_word::<W>(src, ip) };
    if W == 16 {
        walk::<T, FAST>(ip, head, ws, |cand| {
            // SAFETY: `walk` passes candidates 1..=0x0ffe bytes before ip, so
            // cand + W <= ip + W <= src.len().
            unsafe { word_match_len::<W>(src, cand, ip, cur, limit) }
        })
    } else {
        walk::<T, FAST>(ip, head, ws, |cand| {
            // SAFETY: as above.
            unsafe { word_match_len_outlined::<W>(src, cand, ip, cur, limit) }
        })
    }
}

/// The match length at `cand` for [`walk_by_words`]: `cur` holds the `W` bytes at
/// `ip`, `limit` caps the length.
///
/// # Safety
///
/// `cand + W <= ip + W <= src.len()`.
#[inline(always)]
unsafe fn word_match_len<const W: usize>(src: &[u8], cand: usize, ip: usize, cur: u128, limit: usize) -> usize {
    // SAFETY: cand + W <= src.len() by the caller's guarantee.
    let diff = unsafe { load_word::<W>(src, cand) } ^ cur;
    if diff != 0 {
        (diff.trailing_zeros() / 8) as usize
    } else {
        W + common_prefix_by::<W>(src, cand + W, ip + W, limit - W)
    }
}

/// [`word_match_len`] out of line, for the 8-byte walk of the last 15 positions.
/// The compiler used to leave this compare out of line on its own and began to
/// inline it when unrelated code changed, which changed how it built the whole
/// item loop; the attribute pins the decision.
///
/// # Safety
///
/// As for [`word_match_len`].
#[inline(never)]
unsafe fn word_match_len_outlined<const W: usize>(
    src: &[u8],
    cand: usize,
    ip: usize,
    cur: u128,
    limit: usize,
) -> usize {
    // SAFETY: the caller's guarantee.
    unsafe { word_match_len::<W>(src, cand, ip, cur, limit) }
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
        // Sixteen bytes of every candidate compared at once, and 16 a step beyond.
        walk_by_words::<T, FAST, 16>(src, ip, head, ws)
    } else if avail >= 8 {
        walk_by_words::<T, FAST, 8>(src, ip, head, ws)
    } else {
        // Fewer than eight bytes left: compare byte by byte.
        walk::<T, FAST>(ip, head, ws, |cand| common_prefix(src, cand, ip, avail))
    }
}

/// The exact encoder, and with `FAST` the one of [`compress_fast`] for inputs
/// over [`FAST_SHORT_INPUT`] bytes, which differs only in its buckets
/// ([`fill_hashes_fast`]) and in a walk cut after [`fast_cap`] candidates. The
/// match search compares 16 bytes of each candidate at once, and 16 a step
/// beyond them: matches on text are often longer than 8 bytes, and fewer steps
/// means fewer exits of the compare loop to mispredict.
///
/// Never inlined, so that each instance is a function of its own whose machine
/// code does not depend on what else its caller holds: inlined into one
/// function with the fast instances, the exact encoder measured 3-9% slower in
/// the server (with its source unchanged); on its own it measures as before.
#[inline(never)]
fn compress_core<T: Slot, const FAST: bool>(
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
const HASH_BLOCK: usize = 4096;
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

/// The output side of both encoders, as `pglz_out_ctrl`, `pglz_out_literal` and
/// `pglz_out_tag` write it: items grouped by eight behind a control byte whose
/// bits, least significant first, say literal (0) or tag (1).
///
/// The callers refuse an item once `op >= result_max` (`result_max <= slen`), so
/// an item starts below `slen` and its at most four bytes (control byte, three-byte
/// tag) end within `max_output(slen) = slen + 4`; each item checks that bound once.
struct Emitter<'a> {
    out: &'a mut [u8],
    /// The next output position.
    op: usize,
    ctrl_pos: usize,
    ctrl_byte: u8,
    /// The bit of the next item in `ctrl_byte`; 0 when a new control byte is due.
    ctrl_bit: u8,
    result_max: usize,
}

impl<'a> Emitter<'a> {
    fn new(out: &'a mut [u8], result_max: usize) -> Emitter<'a> {
        // The first item "flushes" a control byte to out[0] before reserving out[0]
        // itself, so no dummy location is needed.
        Emitter { out, op: 0, ctrl_pos: 0, ctrl_byte: 0, ctrl_bit: 0, result_max }
    }

    /// Room for one item: a control byte if one is due, then up to three bytes.
    #[inline(always)]
    fn item(&mut self) -> &mut [u8] {
        if self.ctrl_bit == 0 {
            self.out[self.ctrl_pos] = self.ctrl_byte;
            self.ctrl_pos = self.op;
            self.op += 1;
            self.ctrl_byte = 0;
            self.ctrl_bit = 1;
        }
        &mut self.out[self.op..self.op + 3]
    }

    #[inline(always)]
    fn literal(&mut self, byte: u8) {
        self.item()[0] = byte;
        self.op += 1;
        self.ctrl_bit <<= 1;
    }

    /// A tag: `len` (3..=273) bytes copied from `off` (1..=4095) bytes back.
    #[inline(always)]
    fn tag(&mut self, off: usize, len: usize) {
        let hi = ((off & 0xf00) >> 4) as u8;
        let room = self.item();
        room[1] = off as u8;
        let n = if len > 17 {
            room[0] = hi | 0x0f;
            room[2] = (len - 18) as u8;
            3
        } else {
            room[0] = hi | (len - 3) as u8;
            2
        };
        self.op += n;
        self.ctrl_byte |= self.ctrl_bit;
        self.ctrl_bit <<= 1;
    }

    /// Write the pending control byte; fail as PostgreSQL does unless the result is
    /// below `result_max`.
    fn finish(self) -> Option<usize> {
        self.out[self.ctrl_pos] = self.ctrl_byte;
        (self.op < self.result_max).then_some(self.op)
    }
}

// ---------------------------------------------------------------------------
// compress_fast
// ---------------------------------------------------------------------------

/// Inputs up to this many bytes go to [`compress_fast_core`], longer ones to
/// [`compress_core`] (see the `pglz` module documentation for why).
const FAST_SHORT_INPUT: usize = 4096;
/// Most history candidates [`compress_fast_core`] examines per position.
const FAST_MAX_CHAIN: usize = 96;
/// Matches longer than this enter only their first and last
/// [`FAST_INSERT_EDGE`] positions into [`compress_fast_core`]'s history.
const FAST_INSERT_ALL: usize = 8;
const FAST_INSERT_EDGE: usize = 4;

/// Bucket of the four bytes `w` in a table of `1 << BITS` entries.
#[inline(always)]
fn hash_mul<const BITS: u32>(w: u32) -> usize {
    (w.wrapping_mul(0x9E37_79B1) >> (32 - BITS)) as usize
}

/// Width of the windows of slot values [`compress_fast_core`] cycles through: a
/// call enters position `pos` as `base + pos`, with `base` the next of the eight
/// values `4096 + k * FAST_WINDOW` after the previous call's. The bucket table is
/// cleared when the cycle starts again (and when another encoder has used it), so
/// whatever a call finds there from earlier calls lies in another window, and
/// decodes, like the empty value 0, to a position at least 4096 past any of this
/// call's, which the walk's distance test rejects like an empty bucket. The
/// table (16 KB) is then cleared once every eight calls instead of every call.
const FAST_WINDOW: u16 = 8192;
const _: () = assert!(
    FAST_SHORT_INPUT <= HISTORY_SIZE
        && HISTORY_SIZE + 7 * FAST_WINDOW as usize + FAST_SHORT_INPUT <= 1 << 16
        && (1 << 16) % FAST_WINDOW as usize == 0
);

/// The slot of position `pos` in [`compress_fast_core`]'s call with `base`.
#[inline(always)]
fn fast_slot(base: u16, pos: usize) -> u16 {
    base.wrapping_add(pos as u16)
}

/// The position in slot `slot` for [`compress_fast_core`]'s call with `base`.
#[inline(always)]
fn fast_pos(base: u16, slot: u16) -> usize {
    usize::from(slot.wrapping_sub(base))
}

impl Tables<u16> {
    /// The base of [`compress_fast_core`]'s next call (see [`FAST_WINDOW`]), after
    /// clearing the bucket table when the windows wrap around or when another
    /// encoder has used it since (`fast_base` 0).
    fn next_fast_base(&mut self) -> u16 {
        let next = self.fast_base.wrapping_add(FAST_WINDOW);
        let base = if self.fast_base == 0 || next == HISTORY_SIZE as u16 {
            self.head.fill(u16::EMPTY);
            HISTORY_SIZE as u16
        } else {
            next
        };
        self.fast_base = base;
        base
    }

    /// Links the position held in `slot` to `prev`.
    #[inline(always)]
    fn set_link_slot(&mut self, slot: u16, prev: u16) {
        debug_assert_eq!(self.chain.len(), u16::CHAIN_LEN);
        // SAFETY: slot < 2^16 = u16::CHAIN_LEN = chain.len() (Workspace::new).
        unsafe { *self.chain.get_unchecked_mut(usize::from(slot)) = prev };
    }
}

/// The compressor behind [`compress_fast`] for inputs up to [`FAST_SHORT_INPUT`]
/// bytes: same output format, item order, size checks and accept/refuse rules
/// as [`compress_core`], with a cheaper match finder over a table of `1 << BITS`
/// buckets that enters positions into the history as the items pass them (see
/// the module documentation of `pglz`), and slots that need no clearing of that
/// table at most calls (see [`FAST_WINDOW`]). Never inlined, for the reason given at
/// [`compress_core`] (here it measured 1-2% faster in the server, a new backend
/// per build, three alternations: text 2 KB 2.33 → 2.35-2.37, WAL 2 KB 2.63-2.69 →
/// 2.69-2.71).
#[inline(never)]
fn compress_fast_core<const BITS: u32>(src: &[u8], out: &mut [u8], p: &Params, ws: &mut Tables<u16>) -> Option<usize> {
    let slen = src.len();
    assert!(slen <= FAST_SHORT_INPUT);
    let out = &mut out[..max_output(slen)];
    let base = ws.next_fast_base();
    let slot_of = |pos: usize| fast_slot(base, pos);
    let pos_of = |slot: u16| fast_pos(base, slot);

    // The decaying "good" length after each candidate, kept from the previous call with
    // the same strategy (good_match >= 17, so (0, 0) never matches). After the
    // last allowed candidate the walk stops whatever the length.
    if ws.good_key != (p.good_match, p.good_drop) {
        let mut good = p.good_match;
        for g in ws.good_after.iter_mut() {
            *g = good;
            good -= good * p.good_drop / 100;
        }
        ws.good_after[FAST_MAX_CHAIN - 1] = i32::MIN;
        ws.good_key = (p.good_match, p.good_drop);
    }
    let good_after = ws.good_after;

    // Refuse once the output holds `limit` bytes: result_max, or before the
    // first match also first_success_by (see `Emitter` for why that bounds the
    // output). result_max <= slen since the rate is clamped to 0..=99.
    let fsb = p.first_success_by.max(0) as u64;
    let mut limit = (p.result_max as u64).min(fsb) as usize;
    assert!(p.result_max <= slen);

    let mut ip = 0usize;
    let mut emit = Emitter::new(out, p.result_max);
    // Positions with four bytes left can be hashed; with sixteen, compared by word.
    let hash_end = slen.saturating_sub(3);
    let word_end = slen.saturating_sub(15);

    while ip < slen {
        if emit.op >= limit {
            return None;
        }
        let (len, off) = if ip < word_end {
            // SAFETY: ip < word_end, so ip + 16 <= slen.
            let cur = unsafe { load_word::<16>(src, ip) };
            let h = hash_mul::<BITS>(cur as u32);
            let prev = ws.head[h];
            ws.set_link_slot(slot_of(ip), prev);
            ws.head[h] = slot_of(ip);
            // Candidates are accepted at distances 1..=reach only, so they lie in
            // [0, ip) whatever the tables hold.
            let reach = (MAX_DISTANCE - 1).min(ip);
            let mut slot = prev;
            let mut cand = pos_of(slot);
            let mut off = ip.wrapping_sub(cand);
            let mut best_len = 0usize;
            let mut best_off = 0usize;
            if off.wrapping_sub(1) < reach {
                let max_len = (slen - ip).min(MAX_MATCH);
                let mut i = 0;
                loop {
                    // SAFETY: cand = ip - off with 1 <= off <= ip (checked above or at
                    // the end of the previous iteration), so cand + 16 <= ip + 16 <= slen.
                    let diff = unsafe { load_word::<16>(src, cand) } ^ cur;
                    let len = if diff != 0 {
                        (diff.trailing_zeros() / 8) as usize
                    } else {
                        // SAFETY: cand < ip and ip + max_len <= slen.
                        16 + unsafe { common_prefix_unchecked(src, cand + 16, ip + 16, max_len - 16) }
                    };
                    if len > best_len {
                        best_len = len;
                        best_off = off;
                    }
                    if best_len as i32 >= good_after[i] {
                        break;
                    }
                    i += 1;
                    slot = ws.next(slot);
                    cand = pos_of(slot);
                    off = ip.wrapping_sub(cand);
                    if off.wrapping_sub(1) >= reach {
                        break;
                    }
                }
            }
            (best_len, best_off)
        } else if ip < hash_end {
            // The last positions: compared byte by byte, the same walk otherwise.
            let h = hash_mul::<BITS>(load_u32(src, ip));
            let prev = ws.head[h];
            ws.set_link_slot(slot_of(ip), prev);
            ws.head[h] = slot_of(ip);
            let reach = (MAX_DISTANCE - 1).min(ip);
            let (mut best_len, mut best_off) = (0usize, 0usize);
            let mut slot = prev;
            for &good in &good_after {
                let off = ip.wrapping_sub(pos_of(slot));
                if off.wrapping_sub(1) >= reach {
                    break;
                }
                let len = common_prefix(src, ip - off, ip, slen - ip);
                if len > best_len {
                    best_len = len;
                    best_off = off;
                }
                if best_len as i32 >= good {
                    break;
                }
                slot = ws.next(slot);
            }
            (best_len, best_off)
        } else {
            (0, 0)
        };

        if len > 2 {
            emit.tag(off, len);
            let stop = ip + len;
            let ins_end = stop.min(hash_end);
            let (head, tail) = if len > FAST_INSERT_ALL { (FAST_INSERT_EDGE, FAST_INSERT_EDGE) } else { (len, 0) };
            for q in ip + 1..(ip + head).min(ins_end) {
                insert_fast::<BITS>(src, q, slot_of(q), ws);
            }
            for q in (stop - tail).max(ip + head)..ins_end {
                insert_fast::<BITS>(src, q, slot_of(q), ws);
            }
            ip = stop;
            limit = p.result_max;
        } else {
            emit.literal(src[ip]);
            ip += 1;
        }
    }

    emit.finish()
}

/// Enters position `q` (with `q + 4 <= src.len()`), held in `slot`, into the history.
#[inline(always)]
fn insert_fast<const BITS: u32>(src: &[u8], q: usize, slot: u16, ws: &mut Tables<u16>) {
    // SAFETY: callers pass q < slen - 3.
    let h = hash_mul::<BITS>(unsafe { load_u32_unchecked(src, q) });
    ws.set_link_slot(slot, ws.head[h]);
    ws.head[h] = slot;
}

/// Most candidates the walk of [`compress_fast`] compares in [`compress_core`]
/// (inputs over [`FAST_SHORT_INPUT`] bytes) with the default strategy's
/// `match_size_good` of 128 (see [`fast_cap`]).
const FAST_CAP: usize = 64;
/// log2 of the bucket count of [`compress_fast`] in [`compress_core`].
const FAST_HASH_BITS: u32 = 13;

/// Most candidates [`compress_fast`]'s walk compares in [`compress_core`], for a
/// strategy whose (clamped) `match_size_good` is `good_match`: [`FAST_CAP`]
/// scaled by how long a match the strategy asks the walk to look for, against
/// the default's 128.
fn fast_cap(good_match: i32) -> usize {
    (FAST_CAP * good_match as usize).div_ceil(128)
}

/// [`fill_hashes`] for [`compress_fast`] in [`compress_core`]: the bucket of every position
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

    /// The slots of [`compress_fast_core`] (see [`FAST_WINDOW`]): in every window,
    /// a position's slot reads back as that position; the empty value, and every
    /// slot another window can hold, read as at least [`FAST_SHORT_INPUT`], past any
    /// position of the call, so the walk's distance test rejects them.
    #[test]
    fn fast_slots_of_other_windows_read_as_too_far() {
        // The bases next_fast_base() cycles through, from a cleared table.
        let mut tables = Workspace::new();
        let mut windows = vec![tables.small.next_fast_base()];
        for _ in 0..64 {
            let base = tables.small.next_fast_base();
            if base == windows[0] {
                break;
            }
            windows.push(base);
        }
        assert_eq!(windows.len(), 8);
        for &base in &windows {
            assert!(fast_pos(base, u16::EMPTY) >= FAST_SHORT_INPUT);
            for pos in 0..FAST_SHORT_INPUT {
                assert_eq!(fast_pos(base, fast_slot(base, pos)), pos);
                for &other in windows.iter().filter(|&&w| w != base) {
                    assert!(fast_pos(base, fast_slot(other, pos)) >= FAST_SHORT_INPUT, "{base} {other} {pos}");
                }
            }
        }
    }

    /// When the small `pglz_fast` loop clears its bucket table: on its first call, after
    /// the other encoders used the `u16` tables, and when its windows wrap around.
    #[test]
    fn fast_small_loop_clears_when_it_must() {
        let mut ws = Workspace::new();
        let p_small = Params::new(2048, &Strategy::ALWAYS).unwrap();
        let small = vec![b'x'; 2048];
        let mut out = vec![0u8; max_output(20_000)];
        let mut fast_small = |ws: &mut Workspace| {
            compress_sized::<true>(&small, &mut out, &p_small, ws, &mut || {});
        };
        fast_small(&mut ws);
        assert_eq!(ws.small.fast_base, HISTORY_SIZE as u16);
        for (fast, len) in [(false, 2048), (false, 20_000), (true, 5000)] {
            fast_small(&mut ws);
            assert_ne!(ws.small.fast_base, 0);
            let big = vec![b'y'; len];
            let p = Params::new(len, &Strategy::ALWAYS).unwrap();
            let mut out = vec![0u8; max_output(len)];
            if fast {
                compress_sized::<true>(&big, &mut out, &p, &mut ws, &mut || {});
            } else {
                compress_sized::<false>(&big, &mut out, &p, &mut ws, &mut || {});
            }
            assert_eq!(ws.small.fast_base, 0, "after fast = {fast}, {len} bytes");
        }
        // Cleared (and back to the first window) when the last base was 0 or the
        // last window; kept otherwise.
        for (last, cleared, base) in
            [(0u16, true, 4096u16), (61440, true, 4096), (4096, false, 12288), (53248, false, 61440)]
        {
            ws.small.fast_base = last;
            ws.small.head.fill(7);
            assert_eq!(ws.small.next_fast_base(), base);
            assert_eq!(ws.small.head.iter().all(|&h| h == u16::EMPTY), cleared, "after {last}");
        }
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
