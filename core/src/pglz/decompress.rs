//! The pglz decompressor: PostgreSQL 15's `pglz_decompress` semantics, safe on any input.

use std::mem::MaybeUninit;
use std::ptr;

use crate::bytes::repeating;
use crate::error::{try_with_capacity, CodecError, Result};
use crate::uninit::as_uninit_mut;
use crate::wild_copy::{
    copy16, doubling_copy, forward_copy_exact, pattern16, period_before16, period_before8, repeat_tail, store_pattern16,
};

/// Largest raw size [`decompress`] will allocate: PostgreSQL's `MaxAllocSize`
/// (1 GB - 1), the bound on any varlena.
pub const MAX_RAW_SIZE: usize = 0x3fff_ffff;

/// Most raw bytes one compressed byte can stand for: a 3-byte tag copies 273.
const MAX_EXPANSION: usize = 91;

/// Decompresses `src` into a new vector of at most `raw_size` bytes.
///
/// With `check_complete`, anything but exactly `raw_size` bytes produced from all
/// of `src` is an error. Without it (TOAST slicing), decoding stops once
/// `raw_size` bytes are out, leftover input is ignored, and a shorter result is
/// returned if the input ends first. `raw_size` above [`MAX_RAW_SIZE`] is
/// rejected with [`CodecError::TooLarge`]; malformed input gives
/// [`CodecError::Corrupt`].
pub fn decompress(src: &[u8], raw_size: usize, check_complete: bool) -> Result<Vec<u8>> {
    if raw_size > MAX_RAW_SIZE {
        return Err(CodecError::too_large(format!(
            "pglz: raw size {raw_size} exceeds the maximum of {MAX_RAW_SIZE} bytes"
        )));
    }
    // Never allocate more than the input could possibly expand to, so a tiny
    // corrupt datum cannot make us allocate a gigabyte.
    let producible = src.len().saturating_mul(MAX_EXPANSION);
    let room = raw_size.min(producible);
    let mut out = try_with_capacity(room, "the decompressed value")?;
    let (produced, consumed) = decode(src, &mut out.spare_capacity_mut()[..room], usize::MAX, &mut || ())?;
    if check_complete {
        check_completion(produced, raw_size, consumed, src.len())?;
    }
    // SAFETY: decode wrote the first `produced` bytes of the spare capacity.
    unsafe { out.set_len(produced) };
    Ok(out)
}

/// Decompresses `src` into `dst`, whose length is the raw size; returns the number
/// of bytes produced. Same rules as [`decompress`]. Bytes of `dst` past the
/// returned length are left unspecified.
/// The most bytes `compressed_len` bytes of pglz data can decode to: the longest item, a
/// 3-byte tag, copies 273 bytes, so no input byte yields more than 91.
pub fn max_decoded_len(compressed_len: usize) -> usize {
    compressed_len.saturating_mul(91)
}

/// The room to decode `compressed_len` bytes into for a caller's `raw_size`, refused before
/// anything is allocated when the data must fill it (`check_complete`) and cannot; without
/// `check_complete` (a prefix is fine) the room is what the data can produce at most.
pub fn decodable_room(compressed_len: usize, raw_size: usize, check_complete: bool) -> Result<usize> {
    let most = max_decoded_len(compressed_len);
    if raw_size > most && check_complete {
        return Err(CodecError::corrupt(format!(
            "pglz data of {compressed_len} bytes cannot decode to {raw_size} bytes (at most {most})"
        )));
    }
    Ok(raw_size.min(most))
}

pub fn decompress_into(src: &[u8], dst: &mut [u8], check_complete: bool) -> Result<usize> {
    decompress_into_ticking(src, dst, check_complete, &mut || ())
}

/// [`decompress_into_ticking`] into memory that need not be initialised: the decoder only
/// writes `dst`, never reads a byte of it it has not written, and the first `n` bytes of the
/// `Ok(n)` it returns are written (the rest is left as it was, possibly uninitialised). The
/// same bytes and the same errors as [`decompress_into_ticking`], whatever `dst` held.
pub fn decompress_uninit_ticking(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    check_complete: bool,
    tick: &mut dyn FnMut(),
) -> Result<usize> {
    decompress_uninit_ticking_every(src, dst, check_complete, DECODE_TICK_BYTES, tick)
}

/// Output between two `tick()` calls of [`decompress_into_ticking`]: a few ms of decoding.
pub const DECODE_TICK_BYTES: usize = 4 << 20;

/// [`decompress_into`], calling `tick` each time about [`DECODE_TICK_BYTES`] more bytes have been
/// written (the extension checks for cancel there). The same bytes and the same errors.
pub fn decompress_into_ticking(
    src: &[u8],
    dst: &mut [u8],
    check_complete: bool,
    tick: &mut dyn FnMut(),
) -> Result<usize> {
    decompress_into_ticking_every(src, dst, check_complete, DECODE_TICK_BYTES, tick)
}

/// [`decompress_into_ticking`] with a tick every `every` (at least 1) bytes, for the tests
/// and the fuzz target `pglz_decode_never_panics`, which must reach the tick points with
/// small outputs.
#[doc(hidden)]
pub fn decompress_into_ticking_every(
    src: &[u8],
    dst: &mut [u8],
    check_complete: bool,
    every: usize,
    tick: &mut dyn FnMut(),
) -> Result<usize> {
    // SAFETY: the decoder writes only initialised bytes (as_uninit_mut's contract).
    decompress_uninit_ticking_every(src, unsafe { as_uninit_mut(dst) }, check_complete, every, tick)
}

/// [`decompress_uninit_ticking`] with a tick every `every` (at least 1) bytes.
#[doc(hidden)]
pub fn decompress_uninit_ticking_every(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    check_complete: bool,
    every: usize,
    tick: &mut dyn FnMut(),
) -> Result<usize> {
    let raw_size = dst.len();
    let (produced, consumed) = decode(src, dst, every.max(1), tick)?;
    if check_complete {
        check_completion(produced, raw_size, consumed, src.len())?;
    }
    Ok(produced)
}

/// Upper bound on the compressed bytes needed to decode the first `raw_prefix`
/// raw bytes (one control bit per byte in the worst case), capped at the total
/// compressed size. PostgreSQL's `pglz_maximum_compressed_size`.
pub fn maximum_compressed_size(raw_prefix: usize, total_compressed: usize) -> usize {
    let bound = (raw_prefix as u128 * 9).div_ceil(8);
    bound.min(total_compressed as u128) as usize
}

fn check_completion(produced: usize, raw_size: usize, consumed: usize, slen: usize) -> Result<()> {
    if produced != raw_size {
        return Err(CodecError::corrupt(format!(
            "pglz: the data decodes to {produced} bytes, but the raw size given is {raw_size}: the size given \
             does not match the data, or the data is truncated"
        )));
    }
    if consumed != slen {
        return Err(CodecError::corrupt(format!(
            "pglz: {} unused bytes of compressed input after the last item, from input \
             byte {consumed} of {slen}",
            slen - consumed
        )));
    }
    Ok(())
}

/// Copies `len` bytes starting `off` bytes before `op` to `op`, with the result
/// of a forward byte-by-byte copy (LZ77): when the source overlaps the
/// destination, bytes written by this very copy are read again.
///
/// Caller guarantees `1 <= off <= op`, `op + len <= out.len()` and `out[..op]` written.
#[inline(always)]
fn copy_match(out: &mut [MaybeUninit<u8>], op: usize, off: usize, len: usize) {
    if out.len() - op >= len + FAST_SLACK {
        // SAFETY: 1 <= off <= op, out[..op] written and op + len + 32 <= out.len(), as
        // copy_match_fast needs.
        unsafe { copy_match_fast(out.as_mut_ptr().cast::<u8>(), op, off, len) };
        return;
    }
    forward_copy_exact(out, op, off, len);
}

/// Output room the fast loop of [`decode`] keeps: a match is copied in chunks
/// of up to 32 bytes that may write up to 31 bytes past its end, so it takes
/// the fast copy only with `len + FAST_SLACK` bytes of room left.
const FAST_SLACK: usize = 32;
/// Input the fast loop needs at the start of a control group: the control byte,
/// then items starting at most 1 + 3 * 7 = 22 bytes in, each read with an 8-byte
/// (literals) or 4-byte (tag) load, and after a group ending in a tag an empty
/// literal run at most 1 + 3 * 8 = 25 bytes in, read with an 8-byte load.
const FAST_INPUT: usize = 33;

/// Decodes until the input or the output is exhausted. Returns (bytes produced,
/// bytes consumed).
///
/// Items are decoded exactly as PostgreSQL does: a control byte is read when
/// input and output remain, then up to eight items while both remain. `ctrl`
/// holds the control bits still to use above a sentinel bit, so `ctrl == 1`
/// means "read the next control byte".
///
/// While at least [`FAST_INPUT`] input bytes and [`FAST_SLACK`] output bytes
/// remain at the start of a control group, no item of the group can run out of
/// input and a run of literals cannot run out of output, so the fast loop skips
/// those checks (offsets are still validated), copies a run of literals with one
/// 8-byte copy, and copies a match that has `FAST_SLACK` bytes of room beyond it
/// with [`copy_match_fast`], which may write a few bytes past its end (rewritten
/// by later items or past the produced length). The first match closer to the
/// end, and everything after it, goes through the checked loop.
///
/// `tick` runs between two control groups of the fast loop once the output has passed the
/// next multiple of `every` bytes (the loop's output limit is cut there, which only makes it
/// stop earlier, then it resumes where it stopped): the result does not depend on `every`.
/// The checked loop needs no tick: it decodes fewer than [`FAST_INPUT`] × 91 bytes, or the
/// last few hundred.
///
/// `out` may be uninitialised: the first `op` bytes are always written (the bytes past `op`
/// may hold the overshoot of a wild copy, or nothing), and no byte of `out` not written yet
/// is loaded into a register (a 16-byte move may carry some along, untyped, to where they are
/// written again).
fn decode(src: &[u8], out: &mut [MaybeUninit<u8>], every: usize, tick: &mut dyn FnMut()) -> Result<(usize, usize)> {
    let slen = src.len();
    let raw = out.len();
    let mut ip = 0usize;
    let mut op = 0usize;
    let mut ctrl: u32 = 1;

    if slen >= FAST_INPUT && raw >= FAST_SLACK {
        let op_last = raw - FAST_SLACK;
        let mut next_tick = every;
        let src_ptr = src.as_ptr();
        let out_ptr = out.as_mut_ptr().cast::<u8>();
        // The input cursor as a pointer, sp = src + ip: a tag right after a run of n
        // literals is then loaded from [sp + n] while sp advances, which keeps the add
        // off the cursor's dependency chain (load, tag size, next load).
        // SAFETY: slen - FAST_INPUT < slen, inside src.
        let sp_end = unsafe { src_ptr.add(slen - FAST_INPUT) };
        // SAFETY: ip = 0 <= slen.
        let mut sp = unsafe { src_ptr.add(ip) };
        // One control group per iteration. At the start of a group sp + 33 <= src end,
        // and an item k of the group starts at most 1 + 3k bytes after the control byte,
        // so every load below (8 bytes for literals, 4 for a tag, from an item at most
        // 22 bytes in, or the empty run after an eighth item that was a tag, 25 bytes
        // in) stays inside src. op + 32 <= raw holds at the start of the group and after
        // every tag (its room check), so an 8-byte literal store fits; a literal run is
        // always followed by a tag or the end of the group.
        //
        // After a tag the loop goes straight on to the next literal run, which is
        // empty when the tag was the group's last item (ctrl == 1 gives n = 0), and
        // ends the group there: one test of the group's end per tag, not two. That
        // test is hard to predict, so the second one is dropped (BENCHMARKS.md).
        'windows: loop {
            let op_end = op_last.min(next_tick);
            while sp <= sp_end && op <= op_end {
                // SAFETY: sp is inside src (sp <= sp_end); the pointer arithmetic below stays
                // inside src as argued above.
                unsafe {
                    ctrl = u32::from(*sp) | 0x100;
                    sp = sp.add(1);
                }
                loop {
                    // A run of n literals (0..=8: up to the next tag or the end of the group),
                    // moved with one 8-byte copy.
                    let n = ctrl.trailing_zeros() as usize;
                    // SAFETY: sp + 8 <= src end and op + 8 <= raw (see above); src and out
                    // are distinct slices (one shared, one exclusive), so they don't overlap.
                    unsafe { ptr::copy_nonoverlapping(sp, out_ptr.add(op), 8) };
                    op += n;
                    ctrl >>= n;
                    if ctrl == 1 {
                        // SAFETY: sp + n is inside src (see above).
                        sp = unsafe { sp.add(n) };
                        break;
                    }
                    // A tag: read its (up to) three bytes with one 4-byte load.
                    // SAFETY: sp + n + 4 <= src end (see above).
                    let (tag, t) = unsafe {
                        let tag = sp.add(n);
                        (tag, u32::from_le_bytes(ptr::read_unaligned(tag as *const [u8; 4])))
                    };
                    let (off, len, size) = read_tag(t);
                    if off.wrapping_sub(1) >= op {
                        // SAFETY: tag and src_ptr point into the same slice.
                        let tag_at = unsafe { tag.offset_from(src_ptr) } as usize;
                        return Err(bad_offset(off, tag_at, op));
                    }
                    if op + len > op_last {
                        // Too close to the end for chunked copies: leave this tag (its
                        // control bit still unused) to the checked loop.
                        sp = tag;
                        break 'windows;
                    }
                    // SAFETY: tag + size is inside src (see above).
                    sp = unsafe { tag.add(size) };
                    // SAFETY: 1 <= off <= op, out[..op] written, op + len + 32 <= raw.
                    unsafe { copy_match_fast(out_ptr, op, off, len) };
                    op += len;
                    ctrl >>= 1;
                }
            }
            if sp > sp_end || op > op_last {
                break 'windows;
            }
            // Stopped at the tick point only: op > next_tick, and the group is complete.
            tick();
            next_tick = op.saturating_add(every);
        }
        // SAFETY: sp and src_ptr point into the same slice, sp >= src_ptr.
        ip = unsafe { sp.offset_from(src_ptr) } as usize;
    }

    while ip < slen && op < raw {
        if ctrl == 1 {
            ctrl = u32::from(src[ip]) | 0x100;
            ip += 1;
            continue;
        }
        if ctrl & 1 == 0 {
            out[op] = MaybeUninit::new(src[ip]);
            op += 1;
            ip += 1;
        } else {
            let tag_at = ip;
            if slen - ip < 2 {
                return Err(CodecError::corrupt(format!(
                    "pglz: truncated tag at input byte {tag_at}: offset byte missing"
                )));
            }
            let t1 = src[ip];
            let t2 = src[ip + 1];
            ip += 2;
            let off = (usize::from(t1 & 0xf0) << 4) | usize::from(t2);
            let mut len = usize::from(t1 & 0x0f) + 3;
            if len == 18 {
                if ip >= slen {
                    return Err(CodecError::corrupt(format!(
                        "pglz: truncated tag at input byte {tag_at}: length extension byte missing"
                    )));
                }
                len += usize::from(src[ip]);
                ip += 1;
            }
            if off == 0 || off > op {
                return Err(bad_offset(off, tag_at, op));
            }
            let len = len.min(raw - op);
            copy_match(out, op, off, len);
            op += len;
        }
        ctrl >>= 1;
    }
    Ok((op, ip))
}

/// A tag from the four bytes at its start, read as one little-endian word (the bytes after the
/// tag are ignored): its offset, the length of its match, and its size in bytes, 2, or 3 when
/// a length byte follows (the 4-bit length 15). The fast loop's reading of a tag, shared with
/// the speed example's walk over the items (`pglz_speed cg walk`), which must walk as it does.
#[doc(hidden)]
#[inline(always)]
pub fn read_tag(t: u32) -> (usize, usize, usize) {
    let off = (((t & 0xf0) << 4) | ((t >> 8) & 0xff)) as usize;
    let l = (t & 0x0f) as usize;
    let size = (l + 33) >> 4; // 2, or 3 when l == 15
    let len = l + 3 + (((t >> 16) & 0xff) as usize & (2usize.wrapping_sub(size)));
    (off, len, size)
}

#[cold]
fn bad_offset(off: usize, tag_at: usize, op: usize) -> CodecError {
    if off == 0 {
        CodecError::corrupt(format!("pglz: back-reference offset 0 at input byte {tag_at}"))
    } else {
        CodecError::corrupt(format!(
            "pglz: back-reference offset {off} at input byte {tag_at} reaches before \
             the start of the output (only {op} bytes produced)"
        ))
    }
}

/// The fast loop's match copy: the result of a forward byte-by-byte copy of
/// `len` bytes from `off` bytes before `op`, written in 32-, 16-, 8-byte or
/// pattern chunks that may store up to 31 bytes past `op + len`.
///
/// Each offset class first writes 32 bytes (at least 20 below offset 16) whatever
/// the length, and only a longer match tests and copies further: a test of the
/// length per match (most are 3 to 20 bytes, in no predictable order) was the
/// decoder's costliest mispredicted branch. On 2 KB text this took the decoder
/// from 1.82x to 2.10x the C one, on 64 KB from 2.31x to 2.73x (BENCHMARKS.md).
///
/// # Safety
///
/// `out` points to a buffer of `raw` bytes whose first `op` are written (the rest may be
/// uninitialised), with `1 <= off <= op`, `len >= 1` and `op + len + 32 <= raw`.
#[inline(always)]
unsafe fn copy_match_fast(out: *mut u8, op: usize, off: usize, len: usize) {
    // Every store writes bytes in [op, op + len + 31), inside [0, raw). A load into a
    // register reads written bytes only (before op, or written by this copy); the 16-byte
    // moves may carry bytes not yet written along to where they are rewritten later, as
    // untyped copies, which is sound on uninitialised memory.
    let d = out.add(op);
    let s = d.sub(off);
    if off >= 16 {
        // Most matches: two 16-byte copies, whatever the length up to 32.
        copy16(s, d);
        copy16(s.add(16), d.add(16));
        if len > 32 {
            if off >= len {
                // Disjoint ranges. Up to 128 bytes (most long matches in page images
                // and WAL) the rest goes in 32-byte pieces, the last one ending at len,
                // faster than a memcpy call there. Beyond that memcpy, which uses
                // AVX where the CPU has it.
                if len <= 128 {
                    let mut i = 32;
                    while i + 32 < len {
                        copy16(s.add(i), d.add(i));
                        copy16(s.add(i + 16), d.add(i + 16));
                        i += 32;
                    }
                    copy16(s.add(len - 32), d.add(len - 32));
                    copy16(s.add(len - 16), d.add(len - 16));
                } else {
                    ptr::copy_nonoverlapping(s, d, len);
                }
            } else if off >= 32 {
                // Longer than its offset (a repetition: runs, padding): doubling memcpys.
                doubling_copy(d, off, len);
            } else {
                // 16..31 back: the 32 bytes just written, stored again every multiple of
                // the period (a chunked copy from 16 back waits on its own stores).
                repeat_tail(d, off, len);
            }
        }
    } else if off >= 8 {
        // Offsets 8..=15: 16 bytes of the repetition built in a register from one load
        // (pattern16), stored every multiple of the period: at least 25 bytes whatever the
        // length, more only for longer matches (four 8-byte copies and a 16-byte reload of
        // them, which cannot be forwarded, left period 8 below the C). Loads reach
        // s + 16 <= d + 8, stores below d + max(len + 31, 32).
        // The period from the `off` written bytes before d only: nothing at d is read.
        let (v, step) = pattern16(period_before16(d, off), off);
        store_pattern16(d, v, step, len);
    } else if off == 1 {
        // A run of one byte (zero fill, blank padding): its byte in all 16 lanes, stored every
        // 16 bytes; no pattern to build, no stride to look up. Stores reach below d +
        // max(len + 31, 32).
        store_pattern16(d, [*s; 16], 16, len);
    } else {
        // Offsets 2..=7: the output repeats the `off` bytes before op. Build eight
        // bytes of that repetition (byte k = out[op - off + k % off]) and store
        // them every `step` bytes, a multiple of the period. Stores reach at most
        // op + max(len + 7, 32).
        let (bytes, step) = repeating(period_before8(d, off, op), off);
        // Four stores whatever the length (at least 20 bytes, as step >= 5), then
        // more only for longer matches.
        for k in 0..4 {
            ptr::write_unaligned(d.add(k * step) as *mut [u8; 8], bytes);
        }
        if len > 4 * step {
            // The four stores wrote at least 23 bytes: the rest from 16-byte registers.
            repeat_tail(d, off, len);
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn max_decoded_len_bounds_the_most_repetitive_data() {
        let always = crate::pglz::Strategy::ALWAYS;
        for len in [100usize, 1000, 1 << 20] {
            let zeros = vec![0u8; len];
            let packed = crate::pglz::compress(&zeros, &always).unwrap();
            assert!(len <= max_decoded_len(packed.len()), "{len} zeros in {} bytes", packed.len());
            assert_eq!(decodable_room(packed.len(), len, true).unwrap(), len);
        }
        let packed = crate::pglz::compress(&vec![0u8; 1 << 20], &always).unwrap();
        assert!(max_decoded_len(packed.len()) < 2 * (1 << 20), "{}", packed.len());
        // refused when the data must fill the size; a prefix is decoded into what it can give
        assert!(decodable_room(1, 92, true).is_err());
        assert_eq!(decodable_room(1, 1000, false).unwrap(), 91);
    }

    use super::*;

    /// The decoder's `copy_match` on an initialised buffer, as the test below calls it.
    fn copy_match(out: &mut [u8], op: usize, off: usize, len: usize) {
        // SAFETY: copy_match writes only bytes copied from the buffer's initialised ones.
        super::copy_match(unsafe { as_uninit_mut(out) }, op, off, len)
    }

    fn forward_copy(out: &mut [u8], op: usize, off: usize, len: usize) {
        for i in 0..len {
            out[op + i] = out[op + i - off];
        }
    }

    #[test]
    fn copy_match_equals_forward_copy() {
        let seed: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
        for off in 1..=40usize {
            for len in 1..=120usize {
                for extra in [0usize, 3, 16, 40] {
                    let op = 40;
                    let mut a = vec![0xAAu8; op + len + extra];
                    a[..op].copy_from_slice(&seed[..op]);
                    let mut b = a.clone();
                    copy_match(&mut a, op, off, len);
                    forward_copy(&mut b, op, off, len);
                    assert_eq!(a[..op + len], b[..op + len], "off {off} len {len}");
                }
            }
        }
    }

    #[test]
    fn copy_match_fast_equals_forward_copy() {
        let seed: Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(37) % 251) as u8).collect();
        for off in 1..=300usize {
            for len in (3..=273usize).filter(|l| *l < 40 || l % 7 == 0 || *l == 273) {
                let op = 300;
                let mut a = vec![0xAAu8; op + len + 32];
                a[..op].copy_from_slice(&seed[..op]);
                let mut b = a.clone();
                // SAFETY: 1 <= off <= op, op + len + 32 <= a.len().
                unsafe { copy_match_fast(a.as_mut_ptr(), op, off, len) };
                forward_copy(&mut b, op, off, len);
                assert_eq!(a[..op + len], b[..op + len], "off {off} len {len}");
            }
        }
    }

    /// Decoding into uninitialised memory (Miri checks that nothing unwritten is read) gives
    /// what decoding into initialised memory gives, whatever that memory held, on good and
    /// damaged data, with and without `check_complete`, and with ticks in the fast loop.
    #[test]
    fn decoding_into_uninitialised_memory_equals_decoding_into_initialised() {
        use crate::uninit::{damaged, periodic_test_data, same_whatever_the_buffer_held};
        let mut rng = crate::rng::SeededRng::new(48);
        let rounds = if cfg!(miri) { 12 } else { 400 };
        for round in 0..rounds {
            let len = rng.below(if round % 4 == 0 { 3000 } else { 400 }) as usize;
            let data = periodic_test_data(&mut rng, len);
            let Some(packed) = crate::pglz::compress(&data, &crate::pglz::Strategy::ALWAYS) else { continue };
            let mut inputs = vec![packed.clone()];
            inputs.extend(damaged(&mut rng, &packed));
            for (i, src) in inputs.iter().enumerate() {
                for cap in [len, len + 40, len / 2] {
                    for check_complete in [true, false] {
                        let every = [usize::MAX, 64, 1][round % 3];
                        let got = same_whatever_the_buffer_held(cap, &mut |room| {
                            decompress_uninit_ticking_every(src, room, check_complete, every, &mut || ())
                        });
                        let mut init = vec![0x5Au8; cap];
                        let want = decompress_into(src, &mut init, check_complete).map(|n| init[..n].to_vec());
                        assert_eq!(got, want.map_err(|e| format!("{e:?}")), "round {round} input {i} cap {cap}");
                        if i == 0 && cap == len {
                            assert_eq!(got.as_deref(), Ok(&data[..]), "round {round}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn max_compressed_size() {
        assert_eq!(maximum_compressed_size(0, 100), 0);
        assert_eq!(maximum_compressed_size(1, 100), 2);
        assert_eq!(maximum_compressed_size(8, 100), 9);
        assert_eq!(maximum_compressed_size(80, 50), 50);
        assert_eq!(maximum_compressed_size(usize::MAX, 7), 7);
    }
}
