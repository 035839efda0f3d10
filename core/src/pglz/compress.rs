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
//! [`compress_fast`] runs the same loop on inputs over 8192 bytes, with buckets
//! from a multiplicative hash and a walk cut after a few dozen candidates; up to
//! 8192 bytes it has a loop of its own (see the `pglz` module documentation).

use std::cell::RefCell;

use super::strategy::Strategy;
use crate::bytes::{
    common_prefix, common_prefix_by_blocks, common_prefix_unchecked, load_u32, load_u32_unchecked, load_u64_unchecked,
    Block16,
};

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
    /// The small `pglz_fast` loop's buckets; its links are in `small.chain`.
    fast_small: FastSmall,
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
                good_walk: [0; GOOD_STEPS],
                good_walk_key: (0, 0),
                good_fast: [0; GOOD_STEPS],
                good_fast_key: (0, 0),
            },
            large: Tables {
                head: [u32::EMPTY; MAX_HASH_SIZE],
                chain: vec![u32::EMPTY; u32::CHAIN_LEN].into_boxed_slice(),
                good_walk: [0; GOOD_STEPS],
                good_walk_key: (0, 0),
                good_fast: [0; GOOD_STEPS],
                good_fast_key: (0, 0),
            },
            hashes: vec![0; HASH_BLOCK].into_boxed_slice(),
            fast_small: FastSmall {
                head: vec![0; FAST_SMALL_BUCKETS].into_boxed_slice().try_into().unwrap(),
                used: 0,
                last_base: FAST_SLOTS,
                good_after: [0; FAST_MAX_CHAIN],
                good_key: (0, 0),
            },
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
/// stops after 256 candidates for inputs up to 8192 bytes (where positions
/// inside long matches are only partly entered into the history) and 64 above
/// (see the `pglz` module documentation). Same format (PostgreSQL
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
/// [`TICK_BYTES`] of input (checked at the start of each block of 4096 positions,
/// so a little later; `compress_fast` on up to 8192 bytes, microseconds of work,
/// never calls it), so that a caller can stop a long
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
    // Inputs up to 8192 bytes take microseconds in the small `pglz_fast` loop: it
    // does not tick.
    let (fs, chain) = (&mut ws.fast_small, &mut ws.small.chain);
    match (FAST, src.len()) {
        (true, 0..=511) => compress_fast_core::<10, EDGE_UP_TO_4K, ALL_UP_TO_4K>(src, dst, params, fs, chain),
        (true, 512..=1023) => compress_fast_core::<12, EDGE_UP_TO_4K, ALL_UP_TO_4K>(src, dst, params, fs, chain),
        (true, 1024..=4096) => {
            compress_fast_core::<FAST_SMALL_BITS, EDGE_UP_TO_4K, ALL_UP_TO_4K>(src, dst, params, fs, chain)
        }
        (true, 4097..=FAST_SHORT_INPUT) => {
            compress_fast_core::<FAST_SMALL_BITS, EDGE_UP_TO_8K, ALL_UP_TO_8K>(src, dst, params, fs, chain)
        }
        (_, 0..=SMALL_INPUT) => compress_core::<u16, FAST>(src, dst, params, &mut ws.small, &mut ws.hashes, tick),
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
/// The callers refuse an item once `op >= result_max` (their size check, with
/// `limit <= result_max`), so an item starts below `result_max` and its at most
/// four bytes (control byte, three-byte tag) end within `result_max + 4`. The
/// output holds that much: both callers slice it to `max_output(slen) = slen + 4`
/// (`compress_with`, and again `compress_fast_core`), and `result_max <= slen`
/// (`Params::new` clamps the rate to 0..=99). [`Emitter::item`] relies on this
/// instead of checking each item's room again: that check cost the exact encoder
/// 7-9% of its instructions (callgrind, catalog text in 2 KB and 8 KB slices;
/// harness ratios to C 2.05 → 2.15 on 2 KB, 2.38 → 2.43 on 8 KB, WAL 2.02 → 2.08).
/// [`Emitter::new`] checks the output's size in debug builds (and so under the
/// fuzz targets); always checked there, it cost the exact encoder 3% of its
/// instructions.
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
        // See `Emitter` for why this holds.
        debug_assert!(
            result_max.checked_add(4).is_some_and(|end| end <= out.len()),
            "the output holds the items the size checks let start"
        );
        // The first item "flushes" a control byte to out[0] before reserving out[0]
        // itself, so no dummy location is needed.
        Emitter { out, op: 0, ctrl_pos: 0, ctrl_byte: 0, ctrl_bit: 0, result_max }
    }

    /// Room for one item: a control byte if one is due, then up to three bytes.
    /// Only while `op < result_max` (the callers' size check before every item).
    #[inline(always)]
    fn item(&mut self) -> &mut [u8; 3] {
        if self.ctrl_bit == 0 {
            self.out[self.ctrl_pos] = self.ctrl_byte;
            self.ctrl_pos = self.op;
            self.op += 1;
            self.ctrl_byte = 0;
            self.ctrl_bit = 1;
        }
        debug_assert!(self.op + 3 <= self.out.len(), "an item started past the size check");
        // SAFETY: the item started below result_max (the callers' size check), so
        // with its control byte it ends by result_max + 4 <= out.len() (see
        // `Emitter`): op + 3 <= out.len(), three writable bytes, borrowed from self.out.
        unsafe { &mut *self.out.as_mut_ptr().add(self.op).cast::<[u8; 3]>() }
    }

    #[inline(always)]
    fn literal(&mut self, byte: u8) {
        self.item()[0] = byte;
        self.op += 1;
        self.ctrl_bit <<= 1;
    }

    /// How many literals in a row the output takes before it refuses an item:
    /// the size check before every item (refused when `op >= limit`) passes
    /// for each of them, and fails for the item after them.
    #[inline(always)]
    fn literals_before(&self, limit: usize) -> usize {
        // The item after n literals is checked at op + n + (the control bytes the
        // n start): (n + filled - 1) / 8 of them, with `filled` (1..=8) items in
        // the current group (8 when a new control byte is due). With
        // m = n + filled - 1 that is op + floor(9m / 8) - filled + 1, which stays
        // below `limit` exactly for m <= (8s + 7) / 9, s = limit - op - 2 + filled.
        let filled = self.ctrl_bit.trailing_zeros() as usize;
        match (limit + filled).checked_sub(self.op + 2) {
            Some(s) => ((8 * s + 7) / 9 + 2).saturating_sub(filled),
            None => 0,
        }
    }

    /// The literals `src[from..to]`, a control byte (all literal bits, 0)
    /// reserved before each new group: the bytes of a group moved as one word.
    #[inline(always)]
    fn literals(&mut self, src: &[u8], mut from: usize, to: usize) {
        loop {
            // Items the current group still takes (none when a new one is due).
            let k = (8 - self.ctrl_bit.trailing_zeros() as usize).min(to - from);
            // Eight bytes moved where both sides have eight; those past the k
            // literals are rewritten by the next items or lie past the result.
            match (src.get(from..from + 8), self.out.get_mut(self.op..self.op + 8)) {
                (Some(word), Some(room)) => room.copy_from_slice(word),
                _ => self.out[self.op..self.op + k].copy_from_slice(&src[from..from + k]),
            }
            self.op += k;
            self.ctrl_bit = (u32::from(self.ctrl_bit) << k) as u8;
            from += k;
            if from == to {
                return;
            }
            self.out[self.ctrl_pos] = self.ctrl_byte;
            self.ctrl_pos = self.op;
            self.op += 1;
            self.ctrl_byte = 0;
            self.ctrl_bit = 1;
        }
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

/// Inputs up to this many bytes (a page) go to [`compress_fast_core`], longer
/// ones to [`compress_core`] (see the `pglz` module documentation for why).
const FAST_SHORT_INPUT: usize = 8192;
/// Most history candidates [`compress_fast_core`] examines per position (256
/// rather than 96 keeps the unit tests' six-letter data in 5,000 bytes 4.5%
/// over the exact encoder's size instead of 5%; catalog text is not slower).
const FAST_MAX_CHAIN: usize = 256;
/// How much of a match [`compress_fast_core`] enters into its history: a match
/// of up to `ALL` bytes all its positions, a longer one those of its first and
/// last `EDGE` bytes. Up to 4096 bytes of input, 3 of matches over 8: 4% faster
/// than 4 on 2 KB of catalog text, at 0.80% over the exact encoder's size
/// instead of 0.68%. Over 4096, 8 of matches over 16: catalog text in 8 KB
/// comes out 0.73% larger than the exact encoder's output (3 of matches over 8:
/// 1.87%), page images 0.00% (BENCHMARKS.md).
///
/// Up to 4096 bytes the edges start at matches over 5, the shortest whose
/// edges do not overlap (a match of 6 enters all its positions either way):
/// matches of 6 to 8 bytes take the two fixed loops instead of one whose trip
/// count the branch predictor cannot know. 4% faster on 2 KB of catalog text
/// (median 5,106 → 4,901 ns a slice against the C's 14,981 / 15,040; harness),
/// at 0.84% over the exact encoder's size instead of 0.80% (the unit tests'
/// synthetic text 0.70% → 0.82% in 2 KB, 1.36% → 1.62% in 4 KB; WAL-like
/// records 0.00% → 0.15%).
const EDGE_UP_TO_4K: usize = 3;
const ALL_UP_TO_4K: usize = 5;
const EDGE_UP_TO_8K: usize = 8;
const ALL_UP_TO_8K: usize = 16;

/// Bucket of the four bytes `w` in a table of `1 << BITS` entries.
#[inline(always)]
fn hash_mul<const BITS: u32>(w: u32) -> usize {
    (w.wrapping_mul(0x9E37_79B1) >> (32 - BITS)) as usize
}

/// How [`compress_fast_core`] numbers its positions: a call enters position
/// `pos` as slot `base + pos`, its slots `base..base + len` just below the
/// previous call's; when they would go below [`FAST_LOWEST_SLOT`], the bucket
/// table is cleared and the numbering starts again from the top (65,535 down).
/// So whatever a call finds in the table from earlier calls since the clear is
/// a slot above all of its own, and the empty value 0 lies more than 4094
/// below all of them: the distance test ([`fast_in_reach`]), which measures in
/// slots, rejects both like an empty bucket, and the scan and the walk never
/// decode a slot to test it (three instructions less per position and per
/// candidate). The table (64 KB) is cleared once every 30 calls on 2 KB, 7 on
/// 8 KB. Against fixed windows of 8192 slots, cleared every 7 calls whatever the
/// input size, with positions decoded for the test (harness, ratios to C): text
/// 2 KB 2.78 → 2.90, WAL 2 KB 3.27 → 3.34, text 8 KB 2.90 → 2.95.
const FAST_SLOTS: usize = 1 << 16;
/// The lowest slot a position takes: 4095, so that the empty value 0 is out
/// of reach of every slot.
const FAST_LOWEST_SLOT: usize = MAX_DISTANCE;
const _: () = assert!(FAST_SHORT_INPUT < FAST_SLOTS - FAST_LOWEST_SLOT);

/// The slot of position `pos` in [`compress_fast_core`]'s call with `base`.
#[inline(always)]
fn fast_slot(base: u16, pos: usize) -> u16 {
    base.wrapping_add(pos as u16)
}

/// The position in slot `slot`, one of [`compress_fast_core`]'s call with `base`.
#[inline(always)]
fn fast_pos(base: u16, slot: u16) -> usize {
    usize::from(slot).wrapping_sub(usize::from(base))
}

/// Whether `slot`, read from [`compress_fast_core`]'s tables, is a candidate
/// for the position in slot `at`: 1..=4094 slots (bytes) below it (pglz's
/// reach). Empty buckets and other calls' slots fail (see [`FAST_SLOTS`]), as
/// do slots at `at` or above.
#[inline(always)]
fn fast_in_reach(at: usize, slot: u16) -> bool {
    at.wrapping_sub(usize::from(slot)).wrapping_sub(1) < MAX_DISTANCE - 1
}

/// log2 of the bucket count of [`compress_fast_core`] for inputs of 1024 bytes
/// and more: 32,768 buckets (64 KB) for at most 8192 positions, so that few
/// positions share a bucket with another four bytes' (each such candidate costs
/// a compare). Measured against 8192 buckets (harness, 2 KB slices, ratios to C):
/// catalog text 2.69 → 2.80, WAL 2.85 → 3.28; 16,384 gave 2.78 and 3.14,
/// 65,536 2.79 and 3.34.
const FAST_SMALL_BITS: u32 = 15;
const FAST_SMALL_BUCKETS: usize = 1 << FAST_SMALL_BITS;

/// The state [`compress_fast_core`] keeps between calls: its bucket table, the
/// window of its last call's slots, and its "good" lengths.
struct FastSmall {
    /// Per bucket: the slot of the newest position with that hash.
    head: Box<[u16; FAST_SMALL_BUCKETS]>,
    /// Buckets the calls since the last clear may have written (`head[used..]`
    /// is all empty).
    used: usize,
    /// The last call's base (65536 before the first call).
    last_base: usize,
    /// The decaying "good" length after each candidate of a walk, for the
    /// (match_size_good, match_size_drop) pair in `good_key`.
    good_after: [i32; FAST_MAX_CHAIN],
    good_key: (i32, i32),
}

impl FastSmall {
    /// The base of the next call, which enters `len` positions in `buckets`
    /// buckets (see [`FAST_SLOTS`]), after clearing the buckets used since the
    /// last clear if the slots run out.
    fn next_base(&mut self, buckets: usize, len: usize) -> u16 {
        debug_assert!(len <= FAST_SHORT_INPUT);
        if self.last_base < FAST_LOWEST_SLOT + len {
            self.head[..self.used].fill(u16::EMPTY);
            self.used = 0;
            self.last_base = FAST_SLOTS;
        }
        self.last_base -= len;
        self.used = self.used.max(buckets);
        self.last_base as u16
    }
}

/// The compressor behind [`compress_fast`] for inputs up to [`FAST_SHORT_INPUT`]
/// bytes: same output format, item order, size checks and accept/refuse rules
/// as [`compress_core`], with a cheaper match finder over a table of `1 << BITS`
/// buckets that enters positions into the history as the items pass them (see
/// the module documentation of `pglz`), and slots that need no clearing of that
/// table at most calls (see [`FAST_SLOTS`]). The literals before a match are
/// written as one run when the match is found, so the scan of their positions
/// does nothing but enter and search each, and the size check before each of
/// them is one bound on the scan ([`Emitter::literals_before`]). Never inlined, for the reason given at
/// [`compress_core`] (here it measured 1-2% faster in the server, a new backend
/// per build, three alternations: text 2 KB 2.33 → 2.35-2.37, WAL 2 KB 2.63-2.69 →
/// 2.69-2.71).
#[inline(never)]
fn compress_fast_core<const BITS: u32, const EDGE: usize, const ALL: usize>(
    src: &[u8],
    out: &mut [u8],
    p: &Params,
    ws: &mut FastSmall,
    chain: &mut [u16],
) -> Option<usize> {
    const { assert!(BITS <= FAST_SMALL_BITS) };
    let slen = src.len();
    assert!(slen <= FAST_SHORT_INPUT);
    let out = &mut out[..max_output(slen)];
    // One link per slot value: indexing it with a slot needs no bounds check.
    let chain: &mut [u16; 1 << 16] = chain.try_into().expect("the u16 chain has a link per slot");
    let base = ws.next_base(1 << BITS, slen);
    let slot_of = |pos: usize| fast_slot(base, pos);

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
    let FastSmall { head, good_after, .. } = ws;

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

    // Up to word_end the literals before a match are a run, written when the
    // match is found (or the positions run out). The size check before each of
    // them is one bound on the scan: the output refuses the item at `refuse_at`.
    let mut run_start = 0usize;
    while ip < word_end {
        let refuse_at = run_start + emit.literals_before(limit);
        let scan_end = word_end.min(refuse_at);
        let mut found = (0usize, 0usize);
        let mut slot = slot_of(ip);
        'scan: loop {
            // Enter positions until one has a candidate.
            let prev = loop {
                if ip >= scan_end {
                    break 'scan;
                }
                // SAFETY: ip < word_end, so ip + 4 <= slen.
                let h = hash_mul::<BITS>(unsafe { load_u32_unchecked(src, ip) });
                let prev = head[h];
                chain[usize::from(slot)] = prev;
                head[h] = slot;
                if fast_in_reach(usize::from(slot), prev) {
                    break prev;
                }
                ip += 1;
                slot = slot.wrapping_add(1);
            };
            // black_box: otherwise the compiler keeps values the walk derives from ip
            // (ip + 16, src + ip) as counters of the scan loop above, spilled to the
            // stack for lack of registers; the scan is then 4 instructions longer per
            // position and the encoder 5% slower (harness, text 2 KB: 2.70 against 2.57).
            let (len, off) = walk_fast(src, std::hint::black_box(ip), slot, prev, base, good_after, chain);
            if len > 2 {
                found = (len, off);
                break;
            }
            ip += 1;
            slot = slot.wrapping_add(1);
        }
        let (len, off) = found;
        if len == 0 {
            if ip < word_end {
                // The item at ip is refused.
                return None;
            }
            break;
        }
        emit.literals(src, run_start, ip);
        emit.tag(off, len);
        insert_match_fast::<BITS, EDGE, ALL>(src, ip, len, hash_end, base, head, chain);
        ip += len;
        run_start = ip;
        limit = p.result_max;
    }
    if run_start < ip {
        emit.literals(src, run_start, ip);
    }

    // The last positions, an item at a time: compared byte by byte, the same
    // walk otherwise; the last three are not searched.
    while ip < slen {
        if emit.op >= limit {
            return None;
        }
        let (len, off) = if ip < hash_end {
            let h = hash_mul::<BITS>(load_u32(src, ip));
            let prev = head[h];
            chain[usize::from(slot_of(ip))] = prev;
            head[h] = slot_of(ip);
            // The test of `fast_in_reach` in positions: a slot of an earlier call
            // decodes past ip, the empty value to ip + base (over 4094). With the
            // helper here the compiler laid out the scan loop anew: 2.6% more
            // instructions on 2 KB of text (callgrind).
            let reach = (MAX_DISTANCE - 1).min(ip);
            let (mut best_len, mut best_off) = (0usize, 0usize);
            let mut slot = prev;
            for &good in good_after.iter() {
                let off = ip.wrapping_sub(fast_pos(base, slot));
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
                slot = chain[usize::from(slot)];
            }
            (best_len, best_off)
        } else {
            (0, 0)
        };

        if len > 2 {
            emit.tag(off, len);
            insert_match_fast::<BITS, EDGE, ALL>(src, ip, len, hash_end, base, head, chain);
            ip += len;
            limit = p.result_max;
        } else {
            emit.literal(src[ip]);
            ip += 1;
        }
    }

    emit.finish()
}

/// The walk of [`compress_fast_core`] at a position `ip` (in slot `at`) below
/// `src.len() - 15` whose bucket held `first`, a candidate ([`fast_in_reach`]): candidates
/// newest first, compared 16 bytes at a time, the longest (the newest of equal
/// ones) kept until it reaches the decaying "good" length or the chain leaves
/// pglz's reach. Returns (length, offset); a length under 3 is no match.
#[inline(always)]
fn walk_fast(
    src: &[u8],
    ip: usize,
    at: u16,
    first: u16,
    base: u16,
    good_after: &[i32; FAST_MAX_CHAIN],
    chain: &[u16; 1 << 16],
) -> (usize, usize) {
    debug_assert!(ip + 16 <= src.len() && at == fast_slot(base, ip));
    let at = usize::from(at);
    // SAFETY: ip + 16 <= src.len() (the caller's promise).
    let cur = unsafe { Block16::load(src, ip) };
    let max_len = (src.len() - ip).min(MAX_MATCH);
    let (mut best_len, mut best_slot) = (0usize, at);
    let mut slot = first;
    for &good in good_after {
        let cand = fast_pos(base, slot);
        // SAFETY: cand is in reach, so cand < ip (the caller's promise for `first`, checked below for the
        // others), so cand + 16 <= ip + 16 <= src.len().
        let len = unsafe { Block16::load(src, cand) }.common_prefix(cur);
        let len = if len < 16 {
            len
        } else {
            // SAFETY: cand < ip and ip + max_len <= src.len().
            16 + unsafe { common_prefix_unchecked(src, cand + 16, ip + 16, max_len - 16) }
        };
        if len > best_len {
            best_len = len;
            best_slot = slot.into();
        }
        if best_len as i32 >= good {
            break;
        }
        slot = chain[usize::from(slot)];
        if !fast_in_reach(at, slot) {
            break;
        }
    }
    (best_len, at - best_slot)
}

/// Enters the positions after `ip` of a match of `len` bytes there into the
/// history of [`compress_fast_core`]'s call with `base`: all of them in a match
/// up to `ALL` bytes, else those of its first and last `EDGE` bytes (see
/// [`EDGE_UP_TO_4K`]); none at `hash_end` or after.
#[inline(always)]
fn insert_match_fast<const BITS: u32, const EDGE: usize, const ALL: usize>(
    src: &[u8],
    ip: usize,
    len: usize,
    hash_end: usize,
    base: u16,
    head: &mut [u16; FAST_SMALL_BUCKETS],
    chain: &mut [u16; 1 << 16],
) {
    // Longer matches enter edges that must not overlap: a position entered
    // twice would link its slot to itself.
    const { assert!(ALL + 1 >= 2 * EDGE) };
    let stop = ip + len;
    let mut enter = |q: usize| {
        // SAFETY: q < hash_end = src.len() - 3.
        let h = hash_mul::<BITS>(unsafe { load_u32_unchecked(src, q) });
        let slot = fast_slot(base, q);
        chain[usize::from(slot)] = head[h];
        head[h] = slot;
    };
    if len > ALL && stop <= hash_end {
        // The usual case, with loops of fixed length.
        for k in 1..EDGE {
            enter(ip + k);
        }
        for k in (1..=EDGE).rev() {
            enter(stop - k);
        }
        return;
    }
    let ins_end = stop.min(hash_end);
    let (first, last) = if len > ALL { (EDGE, EDGE) } else { (len, 0) };
    for q in ip + 1..(ip + first).min(ins_end) {
        enter(q);
    }
    for q in (stop - last).max(ip + first)..ins_end {
        enter(q);
    }
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

    /// The slots of [`compress_fast_core`] (see [`FAST_SLOTS`]), over calls of
    /// random lengths up to [`FAST_SHORT_INPUT`] through several clears: a
    /// position's slot reads back as that position, and the slots 1..=4094 below
    /// it are in reach; the empty value, and every slot an earlier call since
    /// the clear entered, are out of reach of every position of the call.
    #[test]
    fn fast_slots_of_earlier_calls_are_out_of_reach() {
        let mut ws = Workspace::new();
        let mut rng = SeededRng::new(11);
        let mut earlier: Vec<u16> = Vec::new();
        let mut clears = 0;
        for call in 0..400 {
            let len = match call % 4 {
                0 => FAST_SHORT_INPUT,
                1 => 1 + rng.below(64) as usize,
                _ => 1 + rng.below(FAST_SHORT_INPUT as u64) as usize,
            };
            let last_base = ws.fast_small.last_base;
            let base = ws.fast_small.next_base(FAST_SMALL_BUCKETS, len);
            if usize::from(base) + len == FAST_SLOTS {
                // The first call, or the slots ran out.
                assert!(call == 0 || last_base < FAST_LOWEST_SLOT + len, "call {call}: cleared with room left");
                earlier.clear();
                clears += 1;
            }
            let at = |pos: usize| usize::from(fast_slot(base, pos));
            for pos in 0..len {
                assert_eq!(fast_pos(base, fast_slot(base, pos)), pos);
                assert!(!fast_in_reach(at(pos), u16::EMPTY), "call {call}: empty value in reach of {pos}");
                let back = 1 + rng.below(MAX_DISTANCE as u64 - 1) as usize;
                if back <= pos {
                    assert!(fast_in_reach(at(pos), fast_slot(base, pos - back)));
                }
                assert!(!fast_in_reach(at(pos), fast_slot(base, pos)));
            }
            for &slot in &earlier {
                // The distance from `at` only grows as `at` goes down: both ends suffice.
                assert!(usize::from(slot) >= at(len - 1), "call {call}: earlier slot {slot} below {}", at(len - 1));
                for pos in [0, len - 1] {
                    assert!(!fast_in_reach(at(pos), slot), "call {call}: base {base}, slot {slot} in reach of {pos}");
                }
            }
            earlier.extend((0..len).map(|pos| fast_slot(base, pos)));
        }
        assert!(clears >= 5, "{clears} clears");
    }

    /// [`Emitter::literals`] writes what as many [`Emitter::literal`] calls write,
    /// from every position in a control group, for runs up to three groups long,
    /// up to the last byte of the output (where it cannot move whole words).
    #[test]
    fn emitter_literals_match_one_literal_at_a_time() {
        let src: Vec<u8> = (0..64u8).map(|b| b.wrapping_mul(37) | 1).collect();
        for before in 0..10usize {
            for run in 0..24usize {
                // Every output length from just enough (the items' bytes, and
                // `result_max + 4` for `Emitter::new`) to room for words more.
                let need = (before + run).div_ceil(8) + before + run + 4;
                for len in need..need + 12 {
                    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                    let mut one = Emitter::new(&mut a, len - 4);
                    let mut batch = Emitter::new(&mut b, len - 4);
                    for &byte in &src[..before] {
                        one.literal(byte);
                        batch.literal(byte);
                    }
                    for &byte in &src[before..before + run] {
                        one.literal(byte);
                    }
                    batch.literals(&src, before, before + run);
                    assert_eq!(
                        (one.op, one.ctrl_pos, one.ctrl_byte, one.ctrl_bit),
                        (batch.op, batch.ctrl_pos, batch.ctrl_byte, batch.ctrl_bit)
                    );
                    let n = one.op;
                    one.finish();
                    batch.finish();
                    assert_eq!(a[..n], b[..n], "{before} then {run} literals, {len} bytes of output");
                }
            }
        }
    }

    /// [`Emitter::literals_before`]: the number of literals whose size checks pass
    /// before one fails, from every position in a control group and output size.
    #[test]
    fn emitter_literals_before_counts_the_checks_that_pass() {
        for before in 0..10 {
            for limit in 0..40 {
                let mut out = vec![0u8; 204];
                let mut e = Emitter::new(&mut out, 200);
                for _ in 0..before {
                    e.literal(1);
                }
                let want = {
                    let (op, bit) = (e.op, e.ctrl_bit);
                    let mut n = 0;
                    while e.op < limit {
                        e.literal(1);
                        n += 1;
                    }
                    (e.op, e.ctrl_bit) = (op, bit);
                    n
                };
                assert_eq!(e.literals_before(limit), want, "{before} literals, limit {limit}");
            }
        }
    }

    /// When the small `pglz_fast` loop clears its bucket table: before its first
    /// call and when its slots run out, and then only the buckets the calls
    /// since the last clear used (the other encoders have tables of their own).
    #[test]
    fn fast_small_loop_clears_when_it_must() {
        let mut ws = Workspace::new();
        let fs = &mut ws.fast_small;
        fs.head.fill(7);
        assert_eq!(fs.next_base(1 << 10, 100), 65436);
        assert_eq!(fs.used, 1 << 10);
        // Nothing was used before the first call: nothing cleared.
        assert!(fs.head.iter().all(|&h| h == 7));
        fs.head.fill(0);
        fs.head[..1 << 10].fill(7);
        // The next calls' slots lie below, without clearing; `used` grows to the largest table.
        assert_eq!(fs.next_base(1 << 12, 5000), 60436);
        assert_eq!(fs.next_base(1 << 10, FAST_SHORT_INPUT), 52244);
        assert_eq!(fs.used, 1 << 12);
        assert!(fs.head[..1 << 10].iter().all(|&h| h == 7));
        // A call whose slots start at the lowest: still no clear.
        fs.head[..1 << 12].fill(7);
        fs.head[1 << 12] = 7;
        fs.last_base = FAST_LOWEST_SLOT + 100;
        assert_eq!(fs.next_base(1 << 12, 100), FAST_LOWEST_SLOT as u16);
        assert!(fs.head[..1 << 12].iter().all(|&h| h == 7));
        // One slot more than is left: the used part cleared, back to the top.
        assert_eq!(fs.next_base(FAST_SMALL_BUCKETS, 1), 65535);
        assert!(fs.head[..1 << 12].iter().all(|&h| h == u16::EMPTY));
        assert_eq!(fs.head[1 << 12], 7, "cleared past the buckets used");
        assert_eq!(fs.used, FAST_SMALL_BUCKETS);
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
