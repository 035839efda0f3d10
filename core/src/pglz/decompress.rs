//! The pglz decompressor: PostgreSQL 15's `pglz_decompress` semantics, safe on any input.

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

/// Decodes until the input or the output is exhausted. Returns (bytes produced,
/// bytes consumed).
fn decode(src: &[u8], out: &mut [u8]) -> Result<(usize, usize)> {
    let slen = src.len();
    let raw = out.len();
    let mut sp = 0usize;
    let mut dp = 0usize;

    while sp < slen && dp < raw {
        let mut ctrl = src[sp];
        sp += 1;

        // Eight literals in a row with room on both sides: one 8-byte copy.
        if ctrl == 0 && sp + 8 <= slen && dp + 8 <= raw {
            out[dp..dp + 8].copy_from_slice(&src[sp..sp + 8]);
            sp += 8;
            dp += 8;
            continue;
        }

        for _ in 0..8 {
            if sp >= slen || dp >= raw {
                break;
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
                if off == 0 {
                    return Err(CodecError::corrupt(format!(
                        "pglz: back-reference offset 0 at input byte {tag_at}"
                    )));
                }
                if off > dp {
                    return Err(CodecError::corrupt(format!(
                        "pglz: back-reference offset {off} at input byte {tag_at} reaches before \
                         the start of the output (only {dp} bytes produced)"
                    )));
                }
                let len = len.min(raw - dp);
                copy_match(out, dp, off, len);
                dp += len;
            }
            ctrl >>= 1;
        }
    }
    Ok((dp, sp))
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
    fn max_compressed_size() {
        assert_eq!(maximum_compressed_size(0, 100), 0);
        assert_eq!(maximum_compressed_size(1, 100), 2);
        assert_eq!(maximum_compressed_size(8, 100), 9);
        assert_eq!(maximum_compressed_size(80, 50), 50);
        assert_eq!(maximum_compressed_size(usize::MAX, 7), 7);
    }
}
