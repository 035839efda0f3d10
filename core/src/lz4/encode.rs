//! Our own LZ4 block encoder: byte for byte what liblz4's `LZ4_compress_default` writes.
//!
//! ```text
//! encode.rs -
//!
//!     Encoding of the LZ4 block format (see decode/mod.rs for the format),
//!     with the parse of liblz4's fast compressor at acceleration 1, the
//!     routine PostgreSQL calls for lz4 TOAST values and for lz4 WAL
//!     compression. Its output is the server's, so our decoder is timed
//!     on the very blocks the server's decoder reads, and a size measured
//!     with it is the size the server would store.
//!
//!     The parse
//!     ---------
//!
//!     One hash table maps the hash of 4 bytes to the last position that
//!     had it. Inputs under 64 KB + 11 bytes use 8192 16-bit entries and
//!     hash the 4 bytes at a position (multiplied by 2654435761, the top 13
//!     bits); longer inputs use 4096 32-bit entries and hash 5 bytes (the
//!     8-byte word shifted left by 24, multiplied by 889523592379, the top
//!     12 bits), and refuse candidates more than 65535 bytes back. The
//!     table starts zeroed, so an empty entry names position 0, which is a
//!     candidate like any other.
//!
//!     From the anchor (the first byte not yet encoded) the search looks
//!     up the position's hash, enters the position, and takes the
//!     candidate if its 4 bytes equal the position's. After 64 failed
//!     positions it steps 2 bytes at a time, after 128 three, and so on
//!     (`step = attempts >> 6`); the hash of the next position is computed
//!     before the current one is entered. A match found is extended
//!     backwards over equal bytes down to the anchor, then forwards up to
//!     5 bytes before the end; the sequence (literals since the anchor,
//!     offset, length) is written. The position 2 bytes before the match's
//!     end is entered, and the position right after it is tested at once:
//!     if its candidate matches, a sequence with no literals follows;
//!     otherwise the search resumes one byte further. No match starts
//!     within the last 12 bytes, and the last 5 bytes are always literals
//!     (the format's rules for encoders). Inputs under 13 bytes are one
//!     literal run.
//!
//!     Lengths of 15 or more are written as in the format: 15 in the
//!     token's nibble, then bytes of 255 and a last byte under 255.
//!
//!     Room for the output
//!     --------------------
//!
//!     Given at least compress_bound(len) bytes, the encoder writes without
//!     a test, as liblz4 does then: the block always fits. A match of n
//!     bytes (n >= 4) costs its token, 2 offset bytes and, from n = 19 on,
//!     1 + (n - 19) / 255 length bytes: at most n - 1 bytes. The literals
//!     before it cost themselves and, from 15 on, 1 + (lit - 15) / 255
//!     length bytes: at most lit + lit / 255 + 1, the 1 paid by the match's
//!     saving. The last literals add their token and length bytes: the
//!     block is at most len + len / 255 + 2 bytes. The 16-byte chunks of a
//!     literal run copied before a match store at most 15 bytes past it,
//!     and at least 8 follow it in the block (the offset, the last token,
//!     5 last literals): every store ends below len + len / 255 + 9, inside
//!     compress_bound. The last literals are copied exactly. Given less,
//!     every sequence's parts are tested before they are written, and a
//!     block that does not fit is refused.
//!
//!     Long inputs call `tick` about every TICK_BYTES of input, where the
//!     caller checks for interrupts.
//! ```

use crate::bytes::{load_u32_unchecked, load_u64_unchecked};
use crate::wild_copy::chunk_copy;

/// Shortest match of the format.
const MIN_MATCH: usize = 4;
/// No match starts within this many bytes of the end.
const MFLIMIT: usize = 12;
/// The last bytes of a block are always literals.
const LAST_LITERALS: usize = 5;
/// Inputs shorter than this are one literal run.
const MIN_LENGTH: usize = MFLIMIT + 1;
/// Failed attempts double the search's step every `1 << SKIP_TRIGGER` positions.
const SKIP_TRIGGER: u32 = 6;
/// Inputs shorter than this use the 16-bit table (liblz4's `LZ4_64Klimit`).
const LIMIT_64K: usize = 65536 + (MFLIMIT - 1);
/// The largest offset of the format.
const MAX_DISTANCE: usize = 65535;
/// liblz4's `LZ4_MAX_INPUT_SIZE`: it refuses longer inputs, [`compress_to`] too.
pub const MAX_INPUT: usize = 0x7E00_0000;
/// How much input passes between two calls of `tick`.
pub const TICK_BYTES: usize = 4 << 20;

/// The largest block [`compress_to`] writes for `len` input bytes (liblz4's
/// `LZ4_COMPRESSBOUND`).
pub const fn compress_bound(len: usize) -> usize {
    len + len / 255 + 16
}

/// The hash table of one of the two sizes, and how a position is hashed into it.
trait Table {
    fn new() -> Self;
    /// The hash of the bytes at `pos`.
    ///
    /// # Safety
    ///
    /// `pos + 8 <= src.len()` (every position hashed is at least MFLIMIT bytes before the end).
    unsafe fn hash(src: &[u8], pos: usize) -> usize;
    fn get(&self, h: usize) -> usize;
    fn put(&mut self, h: usize, pos: usize);
    /// Whether a candidate `cand` for `pos` is within reach of an offset.
    fn in_reach(cand: usize, pos: usize) -> bool;
}

/// 8192 16-bit entries, 4-byte hash: inputs under [`LIMIT_64K`].
struct Small([u16; 8192]);
/// 4096 32-bit entries, 5-byte hash: longer inputs.
struct Large([u32; 4096]);

impl Table for Small {
    fn new() -> Self {
        Small([0; 8192])
    }
    #[inline(always)]
    unsafe fn hash(src: &[u8], pos: usize) -> usize {
        // SAFETY: the trait's contract.
        (unsafe { load_u32_unchecked(src, pos) }.wrapping_mul(2_654_435_761) >> (32 - 13)) as usize
    }
    #[inline(always)]
    fn get(&self, h: usize) -> usize {
        usize::from(self.0[h])
    }
    #[inline(always)]
    fn put(&mut self, h: usize, pos: usize) {
        self.0[h] = pos as u16;
    }
    #[inline(always)]
    fn in_reach(_cand: usize, _pos: usize) -> bool {
        true // every position of an input under 64 KB + 11 bytes is
    }
}

impl Table for Large {
    fn new() -> Self {
        Large([0; 4096])
    }
    #[inline(always)]
    unsafe fn hash(src: &[u8], pos: usize) -> usize {
        // SAFETY: the trait's contract.
        ((unsafe { load_u64_unchecked(src, pos) } << 24).wrapping_mul(889_523_592_379) >> (64 - 12)) as usize
    }
    #[inline(always)]
    fn get(&self, h: usize) -> usize {
        self.0[h] as usize
    }
    #[inline(always)]
    fn put(&mut self, h: usize, pos: usize) {
        self.0[h] = pos as u32;
    }
    #[inline(always)]
    fn in_reach(cand: usize, pos: usize) -> bool {
        cand + MAX_DISTANCE >= pos
    }
}

/// Compress `src` into one LZ4 block at the front of `dst`, exactly as liblz4's
/// `LZ4_compress_default` does; returns the block's length, or `None` when `dst` is shorter
/// than the block or `src` is longer than [`MAX_INPUT`] (liblz4 returns 0 then). Bytes of `dst`
/// after the block may be overwritten (literals are copied 16 bytes at a time where room allows).
pub fn compress_to(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    compress_to_ticking(src, dst, &mut || {})
}

/// [`compress_to`], calling `tick` about every [`TICK_BYTES`] of input.
pub fn compress_to_ticking(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Option<usize> {
    if src.len() > MAX_INPUT {
        return None;
    }
    let roomy = dst.len() >= compress_bound(src.len());
    match (src.len() < LIMIT_64K, roomy) {
        (true, true) => compress_with::<Small, false>(src, Out::new(dst), tick),
        (true, false) => compress_with::<Small, true>(src, Out::new(dst), tick),
        (false, true) => compress_with::<Large, false>(src, Out::new(dst), tick),
        (false, false) => compress_with::<Large, true>(src, Out::new(dst), tick),
    }
}

/// The output cursor, a pointer into `dst` as liblz4's `op` (an index beside the slice's base
/// would hold one more register in the search loop). `LIMITED`: `dst` may be shorter than
/// `compress_bound`, and each write of a sequence's parts first tests that all its bytes fit
/// (one test, as liblz4's limited-output mode does); a block that does not fit ends the
/// encoding with `None`. Otherwise every write fits (the header comment's bound).
/// `start <= at <= end` always.
struct Out<'a, const LIMITED: bool> {
    start: *mut u8,
    at: *mut u8,
    end: *mut u8,
    _dst: std::marker::PhantomData<&'a mut [u8]>,
}

impl<'a, const LIMITED: bool> Out<'a, LIMITED> {
    fn new(dst: &'a mut [u8]) -> Self {
        let range = dst.as_mut_ptr_range();
        Out { start: range.start, at: range.start, end: range.end, _dst: std::marker::PhantomData }
    }
    /// How many bytes are written.
    fn len(&self) -> usize {
        self.at as usize - self.start as usize
    }
    /// Whether `n` more bytes fit: always, unless `LIMITED`.
    #[inline(always)]
    fn fits(&self, n: usize) -> bool {
        let room = self.end as usize - self.at as usize;
        debug_assert!(LIMITED || n <= room);
        !LIMITED || n <= room
    }
    /// # Safety
    ///
    /// One more byte fits.
    #[inline(always)]
    unsafe fn put(&mut self, b: u8) {
        debug_assert!(self.at < self.end);
        // SAFETY: the caller's contract.
        unsafe {
            self.at.write(b);
            self.at = self.at.add(1);
        }
    }
    /// The bytes after a nibble of 15 for a length `n` (already reduced by 15): `n / 255 + 1`.
    ///
    /// # Safety
    ///
    /// `n / 255 + 1` more bytes fit.
    #[inline(always)]
    unsafe fn length(&mut self, mut n: usize) {
        while n >= 255 {
            // SAFETY: the caller's contract, one byte for each 255.
            unsafe { self.put(255) };
            n -= 255;
        }
        // SAFETY: the caller's contract, its last byte.
        unsafe { self.put(n as u8) }
    }
    /// A token for `lit` literals, and the bytes of a length of 15 or more.
    ///
    /// # Safety
    ///
    /// 1 byte fits, or `2 + (lit - 15) / 255` bytes when `lit >= 15`.
    #[inline(always)]
    unsafe fn token(&mut self, lit: usize) {
        // SAFETY: the caller's contract.
        unsafe {
            if lit >= 15 {
                self.put(15 << 4);
                self.length(lit - 15);
            } else {
                self.put((lit as u8) << 4);
            }
        }
    }
    /// A sequence's token and the literals `src[from..to]`, with room for `after` more bytes
    /// (at most 16: a match's offset, or none after the last literals); returns the token,
    /// for the match nibble.
    #[inline(always)]
    fn literals(&mut self, src: &[u8], from: usize, to: usize, after: usize) -> Option<*mut u8> {
        debug_assert!(after <= 16 && from <= to && to <= src.len());
        let token = self.at;
        let lit = to - from;
        let head = if lit >= 15 { 2 + (lit - 15) / 255 } else { 1 };
        let from_ptr = src.as_ptr().wrapping_add(from);
        if to + 16 <= src.len() && self.fits(head + lit + 16) {
            // SAFETY: head bytes fit, and then lit + 16: chunk_copy reads from..from +
            // max(lit, 1) + 15 <= to + 16 <= src.len() and writes at..at + max(lit, 1) + 15
            // (src and dst are distinct slices). Its last chunk runs past the literals, into
            // bytes that the next writes replace.
            unsafe {
                self.token(lit);
                chunk_copy::<16>(from_ptr, self.at, lit);
            }
        } else if self.fits(head + lit + after) {
            // SAFETY: head + lit bytes fit; from..to is in src; distinct slices.
            unsafe {
                self.token(lit);
                std::ptr::copy_nonoverlapping(from_ptr, self.at, lit);
            }
        } else {
            return None;
        }
        // SAFETY: the lit bytes just written fit.
        self.at = unsafe { self.at.add(lit) };
        Some(token)
    }
    /// The token of a sequence with no literals, with room for its offset.
    #[inline(always)]
    fn no_literals(&mut self) -> Option<*mut u8> {
        let token = self.at;
        if !self.fits(3) {
            return None;
        }
        // SAFETY: three bytes fit.
        unsafe { self.put(0) };
        Some(token)
    }
    /// The offset and match length after `token`, written by [`Self::literals`] or
    /// [`Self::no_literals`] with room for the offset.
    #[inline(always)]
    fn matched(&mut self, token: *mut u8, offset: usize, len: usize) -> Option<()> {
        debug_assert!(self.start <= token && token < self.at && self.fits(2));
        // SAFETY: the offset's two bytes fit (its token's write made sure).
        unsafe {
            self.at.cast::<[u8; 2]>().write_unaligned((offset as u16).to_le_bytes());
            self.at = self.at.add(2);
        }
        let code = len - MIN_MATCH;
        let nibble = if code >= 15 {
            if !self.fits((code - 15) / 255 + 1) {
                return None;
            }
            // SAFETY: tested just above.
            unsafe { self.length(code - 15) };
            15
        } else {
            code as u8
        };
        // SAFETY: the token is a byte of dst written before.
        unsafe { *token |= nibble };
        Some(())
    }
}

/// How many bytes from `a` on equal those from `b` on (`b < a`), not counting from `limit`
/// on (`a <= limit <= src.len()`). What `bytes::common_prefix_unchecked` computes for the pglz
/// encoders, without its last whole-word compare near the limit, which costs this encoder
/// more than it saves (instructions: `bash scripts/bench/callgrind.sh "lz4 compress"`). The
/// first word is compared here, as liblz4's `LZ4_count` does apart from its loop: a branch of
/// its own, which the predictor learns apart from the loop's (most matches end in their first
/// word); matches that run on are counted by [`count_on`].
#[inline(always)]
fn count(src: &[u8], a: usize, b: usize, limit: usize) -> usize {
    debug_assert!(b < a && a <= limit && limit <= src.len());
    if a + 8 <= limit {
        // SAFETY: b < a and a + 8 <= limit <= src.len().
        let diff = unsafe { load_u64_unchecked(src, a) ^ load_u64_unchecked(src, b) };
        if diff != 0 {
            return (diff.trailing_zeros() / 8) as usize;
        }
        return 8 + count_on(src, a + 8, b + 8, limit);
    }
    count_on(src, a, b, limit)
}

/// [`count`]'s loop, out of line: a function starts on a 64-byte boundary (.cargo/config.toml),
/// so the loop's place in the instruction cache is its own, whatever the encoder around it.
#[inline(never)]
fn count_on(src: &[u8], mut a: usize, mut b: usize, limit: usize) -> usize {
    debug_assert!(b < a && a <= limit && limit <= src.len());
    let start = a;
    // The last position a word is read from; a >= 1 (b < a), so a limit under 8 reads none.
    // Compared with `a <=`, not as `a + 8 <= limit`, which LLVM compiles into a longer
    // dependency from one step's `a` to the next's.
    let last_word = limit.saturating_sub(8);
    while a <= last_word {
        // SAFETY: b < a, and a + 8 <= limit <= src.len() (a <= last_word = limit - 8 here).
        let diff = unsafe { load_u64_unchecked(src, a) ^ load_u64_unchecked(src, b) };
        if diff != 0 {
            return a - start + (diff.trailing_zeros() / 8) as usize;
        }
        a += 8;
        b += 8;
    }
    while a < limit && src[a] == src[b] {
        a += 1;
        b += 1;
    }
    a - start
}

fn compress_with<T: Table, const LIMITED: bool>(
    src: &[u8],
    mut out: Out<LIMITED>,
    tick: &mut dyn FnMut(),
) -> Option<usize> {
    let len = src.len();
    let mut anchor = 0usize;
    if len >= MIN_LENGTH {
        let mut table = T::new();
        // Positions up to mflimit_plus_one are hashed, reading 8 bytes (pos + 8 <= len - 3);
        // matches start below it and stop at match_limit.
        let mflimit_plus_one = len - MFLIMIT + 1;
        let match_limit = len - LAST_LITERALS;
        let hash = |pos: usize| {
            debug_assert!(pos <= mflimit_plus_one);
            // SAFETY: every caller passes pos <= mflimit_plus_one, so pos + 8 <= len - 3.
            unsafe { T::hash(src, pos) }
        };
        // Whether the 4 bytes at cand (< pos) equal those at pos (< mflimit_plus_one).
        let same4 = |cand: usize, pos: usize| {
            debug_assert!(cand < pos && pos < mflimit_plus_one);
            // SAFETY: cand < pos < mflimit_plus_one, so both reads end before len - 3.
            unsafe { load_u32_unchecked(src, cand) == load_u32_unchecked(src, pos) }
        };
        let mut next_tick = TICK_BYTES;
        table.put(hash(0), 0);
        let mut ip = 1usize;
        let mut forward_h = hash(ip);
        'sequences: loop {
            // Search from ip for a position whose candidate matches. Entries are earlier
            // positions (or 0, an empty one), so cand < ip.
            let mut forward = ip;
            let mut step = 1usize;
            let mut attempts = 1usize << SKIP_TRIGGER;
            let mut cand;
            loop {
                let h = forward_h;
                cand = table.get(h);
                ip = forward;
                forward += step;
                step = attempts >> SKIP_TRIGGER;
                attempts += 1;
                if forward > mflimit_plus_one {
                    break 'sequences;
                }
                forward_h = hash(forward);
                table.put(h, ip);
                if T::in_reach(cand, ip) && same4(cand, ip) {
                    break;
                }
            }
            // Extend it backwards, down to the anchor (or position 0).
            let reach = (ip - anchor).min(cand);
            let mut back = 0;
            // SAFETY: back < reach <= cand < ip <= len.
            while back < reach && unsafe { src.get_unchecked(ip - 1 - back) == src.get_unchecked(cand - 1 - back) } {
                back += 1;
            }
            ip -= back;
            cand -= back;
            let mut token = out.literals(src, anchor, ip, 2)?;
            loop {
                // The match at ip, from cand.
                let n = MIN_MATCH + count(src, ip + MIN_MATCH, cand + MIN_MATCH, match_limit);
                out.matched(token, ip - cand, n)?;
                ip += n;
                anchor = ip;
                if ip >= mflimit_plus_one {
                    break 'sequences;
                }
                if ip >= next_tick {
                    tick();
                    next_tick = ip + TICK_BYTES;
                }
                table.put(hash(ip - 2), ip - 2);
                // Test the next position at once.
                let h = hash(ip);
                cand = table.get(h);
                table.put(h, ip);
                if T::in_reach(cand, ip) && same4(cand, ip) {
                    token = out.no_literals()?;
                    continue;
                }
                break;
            }
            ip += 1;
            forward_h = hash(ip);
        }
    }
    // The last literals.
    out.literals(src, anchor, len, 0)?;
    Some(out.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(data: &[u8]) -> Vec<u8> {
        let mut block = vec![0u8; compress_bound(data.len())];
        let n = compress_to(data, &mut block).expect("fits in compress_bound");
        block.truncate(n);
        let back = lz4_flex::block::decompress(&block, data.len()).expect("lz4_flex reads our block");
        assert_eq!(back, data);
        block
    }

    #[test]
    fn short_inputs_are_one_literal_run() {
        for n in 0..MIN_LENGTH {
            let data: Vec<u8> = (0..n as u8).collect();
            let block = roundtrip(&data);
            assert_eq!(block[0], (n as u8) << 4);
            assert_eq!(block.len(), 1 + n);
        }
    }

    #[test]
    fn repeats_become_matches() {
        let data = vec![b'a'; 1000];
        let block = roundtrip(&data);
        // One literal, a match of offset 1 and 994 bytes (up to 5 bytes before the end: a
        // length code of 990 = 15 + 3 * 255 + 210), then the 5 last literals.
        assert_eq!(block, [0x1F, b'a', 1, 0, 255, 255, 255, 210, 0x50, b'a', b'a', b'a', b'a', b'a']);
    }

    /// Text-like data with repeats at every distance, random bytes sprinkled in.
    fn mixed(len: usize, seed: u64) -> Vec<u8> {
        let mut rng = crate::rng::SeededRng::new(seed);
        let words: Vec<Vec<u8>> = (0..40).map(|i| rng.printable(2 + i % 9)).collect();
        let mut data = Vec::with_capacity(len + 16);
        while data.len() < len {
            match rng.below(10) {
                0 => {
                    let n = 1 + rng.below(40) as usize;
                    data.extend(rng.bytes(n));
                }
                1 if data.len() > 300 => {
                    let from = data.len() - 1 - rng.below(300) as usize;
                    let n = rng.below(300) as usize;
                    for k in 0..n {
                        data.push(data[from + k]);
                    }
                }
                _ => data.extend_from_slice(&words[rng.below(40) as usize]),
            }
        }
        data.truncate(len);
        data
    }

    #[test]
    fn every_size_round_trips() {
        for len in (0..600).chain([8191, 8192, 65_535, 65_546, 65_547, 65_548, 70_000, 200_000]) {
            roundtrip(&mixed(len, len as u64));
            roundtrip(&vec![b'x'; len]);
            roundtrip(&crate::rng::SeededRng::new(len as u64).bytes(len));
        }
    }

    #[test]
    fn a_buffer_one_byte_short_is_refused() {
        for len in [5, 20, 1000, 70_000] {
            let data = mixed(len, 3);
            let block = roundtrip(&data);
            let mut exact = vec![0u8; block.len()];
            assert_eq!(compress_to(&data, &mut exact), Some(block.len()));
            assert_eq!(exact, block);
            for short in [0, block.len() / 2, block.len() - 1] {
                assert_eq!(compress_to(&data, &mut vec![0u8; short]), None, "{len} bytes into {short}");
            }
        }
    }

    /// The two modes write the same block: without tests given `compress_bound` (where, in
    /// debug builds, every write asserts that it fits) and with them given exactly the block's
    /// length, or more than the bound.
    #[test]
    fn both_modes_write_the_same_block() {
        let mut rng = crate::rng::SeededRng::new(7);
        for len in (0..700).chain([4095, 8192, 65_546, 65_547, 100_000]) {
            let runs: Vec<u8> = (0..len).map(|i| if (i / 37) % 3 == 0 { rng.below(256) as u8 } else { 0 }).collect();
            for data in [mixed(len, len as u64 + 1), rng.bytes(len), runs] {
                let block = roundtrip(&data);
                for room in [block.len(), compress_bound(len) + 64] {
                    let mut dst = vec![0u8; room];
                    assert_eq!(compress_to(&data, &mut dst), Some(block.len()), "{len} bytes into {room}");
                    assert_eq!(dst[..block.len()], block[..]);
                }
            }
        }
    }

    #[test]
    fn long_inputs_tick() {
        let data = mixed(3 * TICK_BYTES, 9);
        let mut block = vec![0u8; compress_bound(data.len())];
        let mut ticks = 0;
        compress_to_ticking(&data, &mut block, &mut || ticks += 1).unwrap();
        assert!(ticks >= 2, "{ticks} ticks");
    }
}
