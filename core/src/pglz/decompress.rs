//! The pglz decompressor: PostgreSQL 15's `pglz_decompress` semantics, safe on any input.

use std::ptr;

use crate::error::{CodecError, Result};

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
    let mut out = vec![0u8; raw_size.min(producible)];
    let (produced, consumed) = decode(src, &mut out)?;
    if check_complete {
        check_completion(produced, raw_size, consumed, src.len())?;
    }
    out.truncate(produced);
    Ok(out)
}

/// Decompresses `src` into `dst`, whose length is the raw size; returns the number
/// of bytes produced. Same rules as [`decompress`]. Bytes of `dst` past the
/// returned length are left unspecified.
pub fn decompress_into(src: &[u8], dst: &mut [u8], check_complete: bool) -> Result<usize> {
    let raw_size = dst.len();
    let (produced, consumed) = decode(src, dst)?;
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
            "pglz: compressed data ends after {produced} of {raw_size} expected raw bytes \
             (input exhausted at byte {consumed})"
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

/// Copies `len` bytes starting `off` bytes before `dp` to `dp`, with the result
/// of a forward byte-by-byte copy (LZ77): when the source overlaps the
/// destination, bytes written by this very copy are read again.
///
/// Caller guarantees `1 <= off <= dp` and `dp + len <= out.len()`.
#[inline(always)]
fn copy_match(out: &mut [u8], dp: usize, off: usize, len: usize) {
    let room = out.len() - dp;
    if off >= 16 && room >= len + 16 {
        // Fixed 16-byte chunks. Each chunk's source ends at or before the
        // chunk's own start, so it reads only final bytes, exactly as a forward
        // byte copy would. Up to 15 bytes past
        // `len` are scribbled on; they are rewritten later or lie beyond the
        // produced length.
        let mut at = dp;
        while at < dp + len {
            let (done, rest) = out.split_at_mut(at);
            rest[..16].copy_from_slice(&done[at - off..at - off + 16]);
            at += 16;
        }
        return;
    }
    if off >= 8 && room >= len + 8 {
        // The same with 8-byte chunks for offsets 8..15 (or little room left).
        let mut at = dp;
        while at < dp + len {
            let (done, rest) = out.split_at_mut(at);
            rest[..8].copy_from_slice(&done[at - off..at - off + 8]);
            at += 8;
        }
        return;
    }
    let from = dp - off;
    if off >= len {
        // Disjoint ranges.
        out.copy_within(from..from + len, dp);
        return;
    }
    if off == 1 {
        // A run of one byte.
        let b = out[from];
        out[dp..dp + len].fill(b);
        return;
    }
    if len <= 32 {
        // Short overlapping copy with a small offset: byte by byte is cheapest.
        for i in dp..dp + len {
            out[i] = out[i - off];
        }
        return;
    }
    // Doubling: [from, dp) repeats with period `off`; copying it forward makes
    // [from, dp + off) a clean repetition of twice the length, and so on. Each
    // copy's source ends where its destination begins, so they never overlap.
    let mut dp = dp;
    let mut off = off;
    let mut len = len;
    while off < len {
        out.copy_within(dp - off..dp, dp);
        dp += off;
        len -= off;
        off *= 2;
    }
    out.copy_within(dp - off..dp - off + len, dp);
}

/// Output room the fast loop of [`decode`] keeps: a match is copied in chunks
/// of up to 32 bytes that may write up to 31 bytes past its end, so it takes
/// the fast copy only with `len + FAST_SLACK` bytes of room left.
const FAST_SLACK: usize = 32;
/// Input the fast loop keeps in reserve: a run of literals is copied with one
/// 8-byte load, and a tag needs at most three bytes.
const FAST_INPUT: usize = 8;

/// Decodes until the input or the output is exhausted. Returns (bytes produced,
/// bytes consumed).
///
/// Items are decoded exactly as PostgreSQL does: a control byte is read when
/// input and output remain, then up to eight items while both remain. `ctrl`
/// holds the control bits still to use above a sentinel bit, so `ctrl == 1`
/// means "read the next control byte".
///
/// While at least [`FAST_INPUT`] input bytes and [`FAST_SLACK`] output bytes
/// remain, no item can run out of input and a run of literals cannot run out of
/// output, so the fast loop skips those checks (offsets are still validated),
/// copies a run of literals with one 8-byte copy, and copies a match that has
/// `FAST_SLACK` bytes of room beyond it in 8-, 16- or 32-byte chunks that may
/// write a few bytes past its end (rewritten by later items or past the
/// produced length). The first match closer to the end, and everything after
/// it, goes through the checked loop.
fn decode(src: &[u8], out: &mut [u8]) -> Result<(usize, usize)> {
    let slen = src.len();
    let raw = out.len();
    let mut sp = 0usize;
    let mut dp = 0usize;
    let mut ctrl: u32 = 1;

    if slen >= FAST_INPUT && raw >= FAST_SLACK {
        let sp_end = slen - FAST_INPUT;
        let dp_end = raw - FAST_SLACK;
        let src_ptr = src.as_ptr();
        let out_ptr = out.as_mut_ptr();
        while sp <= sp_end && dp <= dp_end {
            // Here sp + 8 <= slen and dp + 32 <= raw.
            if ctrl == 1 {
                // SAFETY: sp < slen.
                ctrl = u32::from(unsafe { *src_ptr.add(sp) }) | 0x100;
                sp += 1;
                continue;
            }
            if ctrl & 1 == 0 {
                // A run of n literals (up to the next tag or the end of the group).
                let n = ctrl.trailing_zeros() as usize; // 1..=8
                // SAFETY: sp + 8 <= slen and dp + 8 <= raw; src and out are
                // distinct slices (one shared, one exclusive), so they don't overlap.
                unsafe { ptr::copy_nonoverlapping(src_ptr.add(sp), out_ptr.add(dp), 8) };
                sp += n;
                dp += n;
                ctrl >>= n;
            } else {
                let tag_at = sp;
                // SAFETY: sp + 3 <= sp + 8 <= slen.
                let (t1, t2, t3) = unsafe { (*src_ptr.add(sp), *src_ptr.add(sp + 1), *src_ptr.add(sp + 2)) };
                let off = (usize::from(t1 & 0xf0) << 4) | usize::from(t2);
                let mut len = usize::from(t1 & 0x0f) + 3;
                sp += 2;
                if len == 18 {
                    len += usize::from(t3);
                    sp += 1;
                }
                if off == 0 || off > dp {
                    return Err(bad_offset(off, tag_at, dp));
                }
                if len + FAST_SLACK > raw - dp {
                    // Too close to the end for chunked copies: leave this tag
                    // (its control bit still unused) to the checked loop.
                    sp = tag_at;
                    break;
                }
                // SAFETY: 1 <= off <= dp and dp + len + 32 <= raw = out.len().
                unsafe { copy_match_fast(out_ptr, dp, off, len) };
                dp += len;
                ctrl >>= 1;
            }
        }
    }

    while sp < slen && dp < raw {
        if ctrl == 1 {
            ctrl = u32::from(src[sp]) | 0x100;
            sp += 1;
            continue;
        }
        if ctrl & 1 == 0 {
            out[dp] = src[sp];
            dp += 1;
            sp += 1;
        } else {
            let tag_at = sp;
            if slen - sp < 2 {
                return Err(CodecError::corrupt(format!(
                    "pglz: truncated tag at input byte {tag_at}: offset byte missing"
                )));
            }
            let t1 = src[sp];
            let t2 = src[sp + 1];
            sp += 2;
            let off = (usize::from(t1 & 0xf0) << 4) | usize::from(t2);
            let mut len = usize::from(t1 & 0x0f) + 3;
            if len == 18 {
                if sp >= slen {
                    return Err(CodecError::corrupt(format!(
                        "pglz: truncated tag at input byte {tag_at}: length extension byte missing"
                    )));
                }
                len += usize::from(src[sp]);
                sp += 1;
            }
            if off == 0 || off > dp {
                return Err(bad_offset(off, tag_at, dp));
            }
            let len = len.min(raw - dp);
            copy_match(out, dp, off, len);
            dp += len;
        }
        ctrl >>= 1;
    }
    Ok((dp, sp))
}

#[cold]
fn bad_offset(off: usize, tag_at: usize, dp: usize) -> CodecError {
    if off == 0 {
        CodecError::corrupt(format!("pglz: back-reference offset 0 at input byte {tag_at}"))
    } else {
        CodecError::corrupt(format!(
            "pglz: back-reference offset {off} at input byte {tag_at} reaches before \
             the start of the output (only {dp} bytes produced)"
        ))
    }
}

/// For offsets 1..=7: the largest multiple of the offset that is at most 8, the
/// stride at which an 8-byte copy of the repeating pattern stays in phase.
const PATTERN_STEP: [usize; 8] = [0, 8, 8, 6, 8, 5, 6, 7];

/// The fast loop's match copy: the result of a forward byte-by-byte copy of
/// `len` bytes from `off` bytes before `dp`, written in 32-, 16-, 8-byte or
/// pattern chunks that may store up to 31 bytes past `dp + len`.
///
/// # Safety
///
/// `out` points to a buffer of `raw` initialised bytes with `1 <= off <= dp`,
/// `len >= 1` and `dp + len + 32 <= raw`.
#[inline(always)]
unsafe fn copy_match_fast(out: *mut u8, dp: usize, off: usize, len: usize) {
    // Every load below reads bytes in [dp - off, dp + len + 31) and every store
    // writes bytes in [dp, dp + len + 31); both lie in [0, raw).
    let d = out.add(dp);
    let s = d.sub(off);
    if off >= 32 {
        // Chunk i reads [dp + i - off, dp + i - off + 32), which ends at or before
        // dp + i: only bytes already final, as a forward byte copy would read.
        let mut i = 0;
        loop {
            let v = ptr::read_unaligned(s.add(i) as *const [u8; 32]);
            ptr::write_unaligned(d.add(i) as *mut [u8; 32], v);
            i += 32;
            if i >= len {
                break;
            }
        }
    } else if off >= 16 {
        // The same with 16-byte chunks.
        let mut i = 0;
        loop {
            let v = ptr::read_unaligned(s.add(i) as *const [u8; 16]);
            ptr::write_unaligned(d.add(i) as *mut [u8; 16], v);
            i += 16;
            if i >= len {
                break;
            }
        }
    } else if off >= 8 {
        // The same with 8-byte chunks (a chunk's source ends at or before its start).
        let mut i = 0;
        loop {
            let v = ptr::read_unaligned(s.add(i) as *const [u8; 8]);
            ptr::write_unaligned(d.add(i) as *mut [u8; 8], v);
            i += 8;
            if i >= len {
                break;
            }
        }
    } else {
        // Offsets 1..=7: the output repeats the `off` bytes before dp. Build eight
        // bytes of that repetition (byte k = out[dp - off + k % off]) and store
        // them every PATTERN_STEP[off] bytes, a multiple of the period. Stores
        // reach at most dp + len + 7.
        let first = u64::from_le_bytes(ptr::read_unaligned(s as *const [u8; 8]));
        let mut pat = first & ((1u64 << (8 * off)) - 1);
        let mut shift = 8 * off;
        while shift < 64 {
            pat |= pat << shift;
            shift *= 2;
        }
        let bytes = pat.to_le_bytes();
        let step = PATTERN_STEP[off];
        let mut i = 0;
        loop {
            ptr::write_unaligned(d.add(i) as *mut [u8; 8], bytes);
            i += step;
            if i >= len {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forward_copy(out: &mut [u8], dp: usize, off: usize, len: usize) {
        for i in 0..len {
            out[dp + i] = out[dp + i - off];
        }
    }

    #[test]
    fn copy_match_equals_forward_copy() {
        let seed: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37).wrapping_add(11)).collect();
        for off in 1..=40usize {
            for len in 1..=120usize {
                for extra in [0usize, 3, 16, 40] {
                    let dp = 40;
                    let mut a = vec![0xAAu8; dp + len + extra];
                    a[..dp].copy_from_slice(&seed[..dp]);
                    let mut b = a.clone();
                    copy_match(&mut a, dp, off, len);
                    forward_copy(&mut b, dp, off, len);
                    assert_eq!(a[..dp + len], b[..dp + len], "off {off} len {len}");
                }
            }
        }
    }

    #[test]
    fn copy_match_fast_equals_forward_copy() {
        let seed: Vec<u8> = (0..300u32).map(|i| (i.wrapping_mul(37) % 251) as u8).collect();
        for off in 1..=300usize {
            for len in (3..=273usize).filter(|l| *l < 40 || l % 7 == 0 || *l == 273) {
                let dp = 300;
                let mut a = vec![0xAAu8; dp + len + 32];
                a[..dp].copy_from_slice(&seed[..dp]);
                let mut b = a.clone();
                // SAFETY: 1 <= off <= dp, dp + len + 32 <= a.len().
                unsafe { copy_match_fast(a.as_mut_ptr(), dp, off, len) };
                forward_copy(&mut b, dp, off, len);
                assert_eq!(a[..dp + len], b[..dp + len], "off {off} len {len}");
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
