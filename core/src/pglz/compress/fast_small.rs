//! [`compress_fast`](super::compress_fast)'s loop for inputs up to a page (8192 bytes): a
//! multiplicative hash, positions entered into the history as the items pass them (only the
//! edges of long matches), a walk cut after [`FAST_MAX_CHAIN`] candidates, and a bucket table
//! kept between calls (see [`FAST_SLOTS`]).

use super::chain::Slot;
use super::emitter::Emitter;
use super::params::{hash_mul, max_output, Params, MAX_DISTANCE, MAX_MATCH};
use crate::bytes::{common_prefix, common_prefix_unchecked, load_u32, load_u32_unchecked, Block16};

/// Inputs up to this many bytes (a page) go to [`compress_fast_core`], longer
/// ones to [`compress_core`](super::chain::compress_core) (see the `pglz` module documentation for why).
pub(super) const FAST_SHORT_INPUT: usize = 8192;
/// Most history candidates [`compress_fast_core`] examines per position: more
/// than fewer keeps repetitive data closer to the exact encoder's size, at no
/// cost in speed on catalog text (BENCHMARKS.md).
const FAST_MAX_CHAIN: usize = 256;
/// How much of a match [`compress_fast_core`] enters into its history: a match
/// of up to `ALL` bytes all its positions, a longer one those of its first and
/// last `EDGE` bytes. Fewer edge bytes are faster and cost size; larger inputs
/// have longer matches and take more edge bytes to keep their size close to the
/// exact encoder's (the trade measured is in BENCHMARKS.md).
///
/// Up to 4096 bytes the edges start at matches over 5, the shortest whose
/// edges do not overlap (a match of 6 enters all its positions either way):
/// matches of 6 to 8 bytes take the two fixed loops instead of one whose trip
/// count the branch predictor cannot know, which is faster for a slightly
/// larger output (BENCHMARKS.md).
pub(super) const EDGE_UP_TO_4K: usize = 3;
pub(super) const ALL_UP_TO_4K: usize = 5;
pub(super) const EDGE_UP_TO_8K: usize = 8;
pub(super) const ALL_UP_TO_8K: usize = 16;

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
/// 8 KB: less often on small inputs than fixed windows of slots would be
/// (BENCHMARKS.md compares the two).
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
/// a compare); fewer buckets were slower, more no faster (BENCHMARKS.md).
pub(super) const FAST_SMALL_BITS: u32 = 15;
const FAST_SMALL_BUCKETS: usize = 1 << FAST_SMALL_BITS;

/// The state [`compress_fast_core`] keeps between calls: its bucket table, the
/// window of its last call's slots, and its "good" lengths.
pub(super) struct FastSmall {
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
    pub(super) fn new() -> FastSmall {
        FastSmall {
            head: vec![0; FAST_SMALL_BUCKETS].into_boxed_slice().try_into().unwrap(),
            used: 0,
            last_base: FAST_SLOTS,
            good_after: [0; FAST_MAX_CHAIN],
            good_key: (0, 0),
        }
    }

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

/// The compressor behind [`compress_fast`](super::compress_fast) for inputs up to [`FAST_SHORT_INPUT`]
/// bytes: same output format, item order, size checks and accept/refuse rules
/// as [`compress_core`](super::chain::compress_core), with a cheaper match finder over a table of `1 << BITS`
/// buckets that enters positions into the history as the items pass them (see
/// the module documentation of `pglz`), and slots that need no clearing of that
/// table at most calls (see [`FAST_SLOTS`]). The literals before a match are
/// written as one run when the match is found, so the scan of their positions
/// does nothing but enter and search each, and the size check before each of
/// them is one bound on the scan ([`Emitter::literals_before`]). Never inlined, for the
/// reason given at [`compress_core`](super::chain::compress_core) (here too it measured
/// faster in the server; BENCHMARKS.md).
///
/// One function although it is long: it is the hot loop of `pglz_fast`, and how the compiler
/// allocates registers to the scan loop depends on everything around it (see the
/// `black_box` and the tail's reach test below, each of which moved its instruction count).
#[inline(never)]
pub(super) fn compress_fast_core<const BITS: u32, const EDGE: usize, const ALL: usize>(
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
        for (g, good) in ws.good_after.iter_mut().zip(p.good_lengths()) {
            *g = good;
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
            // position and the encoder slower (BENCHMARKS.md).
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
            // helper here the compiler laid out the scan loop anew, with more
            // instructions (scripts/bench/callgrind.sh).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// The slots of [`compress_fast_core`] (see [`FAST_SLOTS`]), over calls of
    /// random lengths up to [`FAST_SHORT_INPUT`] through several clears: a
    /// position's slot reads back as that position, and the slots 1..=4094 below
    /// it are in reach; the empty value, and every slot an earlier call since
    /// the clear entered, are out of reach of every position of the call.
    #[test]
    fn fast_slots_of_earlier_calls_are_out_of_reach() {
        let mut fs = FastSmall::new();
        let mut rng = SeededRng::new(11);
        let mut earlier: Vec<u16> = Vec::new();
        let mut clears = 0;
        for call in 0..400 {
            let len = match call % 4 {
                0 => FAST_SHORT_INPUT,
                1 => 1 + rng.below(64) as usize,
                _ => 1 + rng.below(FAST_SHORT_INPUT as u64) as usize,
            };
            let last_base = fs.last_base;
            let base = fs.next_base(FAST_SMALL_BUCKETS, len);
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

    /// When the small `pglz_fast` loop clears its bucket table: before its first
    /// call and when its slots run out, and then only the buckets the calls
    /// since the last clear used (the other encoders have tables of their own).
    #[test]
    fn fast_small_loop_clears_when_it_must() {
        let fs = &mut FastSmall::new();
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
}
