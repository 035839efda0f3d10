//! Our own LZ4 block decoder, in safe Rust.
//!
//! ```text
//! decode.rs -
//!
//!     Decoding of the LZ4 block format.
//!
//!     The LZ4 block format
//!     --------------------
//!
//!     A block is a series of sequences. Every sequence starts with a token
//!     byte: its high nibble is the number of literal bytes that follow, its
//!     low nibble the length of the match after them, minus 4 (the shortest
//!     match, MINMATCH). A nibble of 15 means the length goes on: each next
//!     byte is added to it, and a byte of 255 says yet another byte follows
//!     (so 15 + 255 + 255 + 7 is written F, FF, FF, 07).
//!
//!         token | [literal length bytes] | literals |
//!               offset (2 bytes, little-endian) | [match length bytes]
//!
//!     The match copies `length` bytes starting `offset` bytes back from the
//!     current end of the output (1 <= offset <= 65535). A match may overlap
//!     its own output (offset < length): it is then a copy made one byte after
//!     the other, so offset 1 repeats the last byte, offset 2 the last two, and
//!     so on - run-length encoding falls out of the format for free.
//!
//!     The last sequence has literals only and no offset: the block ends
//!     right after its literals. The block carries no length of its own; the
//!     caller knows how large the output is (PostgreSQL keeps the raw size in
//!     its TOAST header) and gives us a buffer of that size.
//!
//!     The specification adds rules for encoders (the last 5 bytes are
//!     literals, the last match starts at least 12 bytes before the end) so
//!     that decoders may copy in wide chunks; like lz4_flex, the decoder we
//!     replace, we do not require them of the input: any block made of
//!     complete sequences and ending with a literal section decodes.
//!
//!     What is an error
//!     ----------------
//!
//!     Input that ends inside a sequence (in a length, in the literals, in
//!     an offset), an offset of 0, an offset reaching before the start of
//!     the output (and of the dictionary, when there is one), and output
//!     that would not fit in the caller's buffer. Nothing is ever read or
//!     written outside the two slices: every access is a bounds-checked
//!     slice operation, so the worst a crafted block can do is fail.
//!
//!     The decoder
//!     -----------
//!
//!     The output is written straight into the caller's slice, `op` bytes
//!     from its start; `ip` is the position in the input. Each sequence goes
//!     down one of two paths:
//!
//!     The fast path is taken while at least FAST_IN input bytes and
//!     FAST_OUT output bytes are left and the literal run is shorter than
//!     15. There, 16 bytes are copied for the literals whatever their count
//!     (0..14): the bytes past the literals land where the next sequence will
//!     write anyway, and one fixed-size copy costs less than a variable one.
//!     The match is then copied in fixed-size chunks too: 16 bytes at a time
//!     when it starts 16 or more bytes back (every chunk then reads bytes
//!     already final), 8 at a time for offsets 8..15, a byte fill for offset
//!     1, and for offsets 2..7 the first period-multiple of 8 or more bytes
//!     one at a time, then 8-byte chunks from that far back. The chunks may
//!     overshoot the match by up to 15 bytes, which is why the path needs
//!     room at the end of the output.
//!
//!     The careful path decodes one sequence with every length checked
//!     against what is left of both buffers and exact copies; it handles
//!     long literal runs, the end of the block and the last bytes of the
//!     output, and then hands back to the fast path if there is room again.
//!
//!     With a dictionary (the previous block of a linked LZ4 frame, or the
//!     history of an LZ4 stream), an offset reaching before the start of the
//!     output continues into the end of the dictionary; a match may start in
//!     the dictionary and run on into the output.
//! ```
//!
//! The bytes past the end of the decoded data (when the caller's buffer is larger than the
//! result) may hold copies of decoded bytes: never anything else, the buffer being an
//! initialized `&mut [u8]`.

/// Why a block does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The block ends in the middle of a sequence (a length, or an offset).
    Truncated,
    /// A literal run is longer than what is left of the block.
    LiteralOutOfBounds,
    /// A match has offset 0.
    OffsetZero,
    /// A match refers to bytes before the start of the output (and of the dictionary).
    OffsetOutOfBounds,
    /// The block decodes to more bytes than the output buffer holds.
    OutputTooSmall,
}

/// The shortest match; a token's match nibble is the match length minus this.
const MIN_MATCH: usize = 4;
/// Input left (from the token) for the fast path: the token, a 16-byte literal copy and the
/// 2-byte offset after at most 14 literals all lie inside.
const FAST_IN: usize = 1 + 16 + 2;
/// Output room for the fast path: 16 bytes of literal copy, then a short match (at most 18
/// bytes) copied in chunks that may overshoot it by up to 15 bytes, all inside.
const FAST_OUT: usize = 64;
/// Matches without overlap up to this long are copied in inline chunks when there is room;
/// longer ones by one exact copy (a memcpy call).
const INLINE_COPY: usize = 32;
/// Room that must be left past a match for its chunked copy, which may overshoot by up to 15.
const WILD_ROOM: usize = 16;

/// Decode the LZ4 block `src` into the front of `dst`; returns the number of bytes written.
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<usize, DecodeError> {
    decode::<false>(src, dst, &[])
}

/// [`decompress_into`] with `dict` as the bytes just before the output: matches may reach
/// back into its last 64 KB.
pub fn decompress_into_with_dict(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<usize, DecodeError> {
    decode::<true>(src, dst, dict)
}

/// Read the bytes extending a length nibble of 15 and return what they add.
#[inline(always)]
fn read_length(src: &[u8], ip: &mut usize) -> Result<usize, DecodeError> {
    let mut n = 0usize;
    loop {
        let b = *src.get(*ip).ok_or(DecodeError::Truncated)?;
        *ip += 1;
        n += b as usize;
        if b != 255 {
            return Ok(n);
        }
    }
}

#[inline(always)]
fn decode<const DICT: bool>(src: &[u8], dst: &mut [u8], dict: &[u8]) -> Result<usize, DecodeError> {
    let mut ip = 0usize;
    let mut op = 0usize;
    // The fast path runs while ip < in_limit and op < out_limit (0 when there is never room).
    let in_limit = (src.len() + 1).saturating_sub(FAST_IN);
    let out_limit = (dst.len() + 1).saturating_sub(FAST_OUT);
    loop {
        // Invariants: ip <= src.len(), op <= dst.len().
        if ip < in_limit && op < out_limit {
            // The token, up to 14 literals and the offset all lie in these FAST_IN bytes.
            let head: &[u8; FAST_IN] = src[ip..ip + FAST_IN].try_into().unwrap_or(&[0; FAST_IN]);
            let token = head[0];
            let lit = (token >> 4) as usize;
            if lit < 15 {
                // Fast path: 16 bytes of literals copied (lit <= 14 of them count), then the
                // offset.
                let lits: &[u8; 16] = head[1..17].try_into().unwrap_or(&[0; 16]);
                dst[op..op + 16].copy_from_slice(lits);
                op += lit;
                let offset = u16::from_le_bytes([head[1 + lit], head[2 + lit]]) as usize;
                ip += 3 + lit;
                let nibble = (token & 15) as usize;
                if nibble < 15 && offset <= op && offset >= 8 {
                    // A short match (<= 18 bytes) from inside the output, with room for 32
                    // bytes after op (FAST_OUT - 14): two chunks of 16 or three of 8 cover it.
                    let start = op - offset;
                    if offset >= 16 {
                        dst.copy_within(start..start + 16, op);
                        dst.copy_within(start + 16..start + 32, op + 16);
                    } else {
                        dst.copy_within(start..start + 8, op);
                        dst.copy_within(start + 8..start + 16, op + 8);
                        dst.copy_within(start + 16..start + 24, op + 16);
                    }
                    op += nibble + MIN_MATCH;
                    continue;
                }
                if offset == 0 {
                    return Err(DecodeError::OffsetZero);
                }
                let mut len = nibble + MIN_MATCH;
                if nibble == 15 {
                    len += read_length(src, &mut ip)?;
                }
                op = copy_match::<DICT>(dst, op, offset, len, dict)?;
                continue;
            }
        }

        // Careful path: one sequence, every length checked.
        let token = *src.get(ip).ok_or(DecodeError::Truncated)?;
        ip += 1;
        let mut lit = (token >> 4) as usize;
        if lit == 15 {
            lit += read_length(src, &mut ip)?;
        }
        if lit > src.len() - ip {
            return Err(DecodeError::LiteralOutOfBounds);
        }
        if lit > dst.len() - op {
            return Err(DecodeError::OutputTooSmall);
        }
        dst[op..op + lit].copy_from_slice(&src[ip..ip + lit]);
        ip += lit;
        op += lit;
        if ip == src.len() {
            return Ok(op);
        }
        let Some(&[lo, hi]) = src.get(ip..ip + 2).and_then(|s| <&[u8; 2]>::try_from(s).ok()) else {
            return Err(DecodeError::Truncated);
        };
        ip += 2;
        let offset = u16::from_le_bytes([lo, hi]) as usize;
        if offset == 0 {
            return Err(DecodeError::OffsetZero);
        }
        let mut len = (token & 15) as usize + MIN_MATCH;
        if len == 15 + MIN_MATCH {
            len += read_length(src, &mut ip)?;
        }
        op = copy_match::<DICT>(dst, op, offset, len, dict)?;
    }
}

/// Append the match (`offset` >= 1 back, `len` bytes) at `op`; returns the new end of the
/// output. Checks that it fits and that it starts inside the output (or the dictionary).
#[inline(always)]
fn copy_match<const DICT: bool>(
    dst: &mut [u8],
    mut op: usize,
    offset: usize,
    mut len: usize,
    dict: &[u8],
) -> Result<usize, DecodeError> {
    if len > dst.len() - op {
        return Err(DecodeError::OutputTooSmall);
    }
    if offset > op {
        if !DICT {
            return Err(DecodeError::OffsetOutOfBounds);
        }
        // The match starts `offset - op` bytes before the end of the dictionary.
        let back = offset - op;
        if back > dict.len() {
            return Err(DecodeError::OffsetOutOfBounds);
        }
        let from_dict = len.min(back);
        let start = dict.len() - back;
        dst[op..op + from_dict].copy_from_slice(&dict[start..start + from_dict]);
        op += from_dict;
        len -= from_dict;
        if len == 0 {
            return Ok(op);
        }
        // Now op == offset: the rest starts at the beginning of the output.
    }
    let start = op - offset;
    let end = op + len;
    if dst.len() - end < WILD_ROOM {
        // Near the end of the output: exact copies only.
        if offset >= len {
            dst.copy_within(start..start + len, op);
        } else {
            for i in 0..len {
                dst[op + i] = dst[start + i];
            }
        }
        return Ok(end);
    }
    if offset >= len && len > INLINE_COPY {
        // A long match without overlap: one exact copy (memcpy) from the output before op.
        let (done, rest) = dst.split_at_mut(op);
        rest[..len].copy_from_slice(&done[start..start + len]);
    } else if offset >= 32 {
        let (mut s, mut d) = (start, op);
        // 32 bytes while that overshoots the match by less than 16, then 16.
        while d + 16 < end {
            dst.copy_within(s..s + 16, d);
            dst.copy_within(s + 16..s + 32, d + 16);
            s += 32;
            d += 32;
        }
        if d < end {
            dst.copy_within(s..s + 16, d);
        }
    } else if offset >= 16 {
        let (mut s, mut d) = (start, op);
        while d < end {
            dst.copy_within(s..s + 16, d);
            s += 16;
            d += 16;
        }
    } else if offset >= 8 {
        let (mut s, mut d) = (start, op);
        while d < end {
            dst.copy_within(s..s + 8, d);
            s += 8;
            d += 8;
        }
    } else if offset == 1 {
        // A run of one byte (zeros, mostly): memset.
        let byte = dst[start];
        dst[op..end].fill(byte);
    } else {
        // Offsets 2..7: the match repeats the last `offset` bytes. Build its first 8 bytes
        // from them (doubling the pattern until it is 8 bytes or more), then copy 8-byte
        // chunks from `period` back, the smallest multiple of `offset` that is 8 or more
        // (each chunk then reads bytes already final).
        let seed: [u8; 8] = dst[start..start + 8].try_into().unwrap_or([0; 8]);
        let mut v = u64::from_le_bytes(seed) & (u64::MAX >> (64 - 8 * offset));
        let mut have = offset;
        while have < 8 {
            v |= v << (8 * have);
            have *= 2;
        }
        dst[op..op + 8].copy_from_slice(&v.to_le_bytes());
        let period = [8, 8, 8, 9, 8, 10, 12, 14][offset];
        let (mut s, mut d) = (op + 8 - period, op + 8);
        while d < end {
            dst.copy_within(s..s + 8, d);
            s += 8;
            d += 8;
        }
    }
    Ok(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SeededRng;

    /// One sequence of a test block: its literals and its match (offset, length), if any.
    type Part<'a> = (&'a [u8], Option<(u16, usize)>);

    /// Append a length nibble's extension bytes for `n` (the part above 15).
    fn push_length(out: &mut Vec<u8>, mut n: usize) {
        while n >= 255 {
            out.push(255);
            n -= 255;
        }
        out.push(n as u8);
    }

    /// Append one sequence: `lits`, then (if `m` is given) a match of (offset, length).
    fn seq(out: &mut Vec<u8>, lits: &[u8], m: Option<(u16, usize)>) {
        let ln = lits.len().min(15) as u8;
        let mn = m.map_or(0, |(_, len)| (len - MIN_MATCH).min(15) as u8);
        out.push(ln << 4 | mn);
        if lits.len() >= 15 {
            push_length(out, lits.len() - 15);
        }
        out.extend_from_slice(lits);
        if let Some((offset, len)) = m {
            out.extend_from_slice(&offset.to_le_bytes());
            if len - MIN_MATCH >= 15 {
                push_length(out, len - MIN_MATCH - 15);
            }
        }
    }

    /// What the block should decode to, made one byte at a time.
    fn naive(lits_and_matches: &[Part]) -> Vec<u8> {
        let mut out = Vec::new();
        for (lits, m) in lits_and_matches {
            out.extend_from_slice(lits);
            if let Some((offset, len)) = *m {
                for _ in 0..len {
                    out.push(out[out.len() - offset as usize]);
                }
            }
        }
        out
    }

    fn block(parts: &[Part]) -> Vec<u8> {
        let mut b = Vec::new();
        for (lits, m) in parts {
            seq(&mut b, lits, *m);
        }
        b
    }

    /// Decode with ours and with lz4_flex into buffers of `cap` bytes; both must agree.
    fn agree(src: &[u8], cap: usize, dict: &[u8]) -> Result<Vec<u8>, DecodeError> {
        let mut ours = vec![0xA5; cap];
        let mut theirs = vec![0xA5; cap];
        let (a, b) = if dict.is_empty() {
            (decompress_into(src, &mut ours), lz4_flex::block::decompress_into(src, &mut theirs))
        } else {
            (
                decompress_into_with_dict(src, &mut ours, dict),
                lz4_flex::block::decompress_into_with_dict(src, &mut theirs, dict),
            )
        };
        match (a, b) {
            (Ok(n), Ok(m)) => {
                assert_eq!(n, m, "lengths differ for {src:02x?}");
                assert_eq!(ours[..n], theirs[..m], "bytes differ for {src:02x?}");
                Ok(ours[..n].to_vec())
            }
            (Err(e), Err(_)) => Err(e),
            (a, b) => panic!("ours {a:?}, lz4_flex {b:?} for {src:02x?} into {cap}"),
        }
    }

    fn check(parts: &[Part]) {
        let b = block(parts);
        let want = naive(parts);
        for slack in [0, 1, 17, 100] {
            assert_eq!(agree(&b, want.len() + slack, &[]).unwrap(), want, "{parts:?}");
        }
        if !want.is_empty() {
            assert_eq!(agree(&b, want.len() - 1, &[]), Err(DecodeError::OutputTooSmall), "{parts:?}");
        }
        // Every strict prefix is an error or decodes to fewer bytes.
        for cut in 0..b.len() {
            if let Ok(got) = agree(&b[..cut], want.len() + 64, &[]) {
                assert!(got.len() < want.len() || want.is_empty(), "prefix {cut} of {parts:?}");
            }
        }
    }

    #[test]
    fn literals_only() {
        check(&[(b"", None)]);
        check(&[(b"a", None)]);
        check(&[(b"hello, world", None)]);
        check(&[(&[7; 15], None)]);
        check(&[(&[7; 16], None)]);
        for n in [269, 270, 271, 524, 525, 1000, 5000] {
            let lits: Vec<u8> = (0..n).map(|i| i as u8).collect();
            check(&[(&lits, None)]);
        }
    }

    #[test]
    fn every_offset_and_length_shape() {
        let text: Vec<u8> = (0..300u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for offset in [1u16, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 18, 31, 32, 33, 64, 100, 255, 300] {
            for len in [4usize, 5, 7, 8, 15, 16, 17, 18, 19, 20, 33, 64, 100, 273, 274, 529, 2000] {
                let lead = &text[..offset as usize];
                check(&[(lead, Some((offset, len))), (b"tail!", None)]);
                check(&[(lead, Some((offset, len))), (b"", None)]);
                // Short literals between matches, as the fast path sees them.
                check(&[
                    (&text, Some((offset, len))),
                    (b"xy", Some((offset, len))),
                    (&text[..14], Some((offset, len))),
                    (b"end of block", None),
                ]);
            }
        }
    }

    #[test]
    fn bad_offsets() {
        let ok = block(&[(b"abcdefgh", Some((8, 10))), (b"z", None)]);
        assert!(decompress_into(&ok, &mut [0; 64]).is_ok());
        let zero = block(&[(b"abcdefgh", Some((0, 10))), (b"z", None)]);
        assert_eq!(agree(&zero, 64, &[]), Err(DecodeError::OffsetZero));
        let beyond = block(&[(b"abcdefgh", Some((9, 10))), (b"z", None)]);
        assert_eq!(agree(&beyond, 64, &[]), Err(DecodeError::OffsetOutOfBounds));
        // The same with room for the fast path.
        let lits = [3u8; 40];
        let zero = block(&[(&lits, Some((0, 10))), (&lits, Some((0, 10))), (&lits, None)]);
        assert_eq!(agree(&zero, 1000, &[]), Err(DecodeError::OffsetZero));
        let beyond = block(&[(&lits[..10], Some((11, 10))), (&lits, Some((1, 10))), (&lits, None)]);
        assert_eq!(agree(&beyond, 1000, &[]), Err(DecodeError::OffsetOutOfBounds));
        // A block ending after a match (no last literal section) is truncated.
        let no_tail = block(&[(b"abcdefgh", Some((8, 10)))]);
        assert_eq!(agree(&no_tail, 64, &[]), Err(DecodeError::Truncated));
        assert_eq!(agree(&[], 64, &[]), Err(DecodeError::Truncated));
        // Literals running past the end of the block.
        assert_eq!(agree(&[0x50, 1, 2, 3], 64, &[]), Err(DecodeError::LiteralOutOfBounds));
    }

    #[test]
    fn dictionary_matches() {
        let dict: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 251) as u8).collect();
        for (offset, len) in [(1u16, 4usize), (5, 20), (16, 16), (16, 40), (100, 90), (1000, 4), (1000, 1200)] {
            for lits in [&b""[..], b"0123456789", &[9u8; 40]] {
                let b = block(&[(lits, Some((offset, len))), (b"tail", None)]);
                let mut history = dict.clone();
                history.extend_from_slice(lits);
                for _ in 0..len {
                    history.push(history[history.len() - offset as usize]);
                }
                history.extend_from_slice(b"tail");
                let want = &history[dict.len()..];
                assert_eq!(agree(&b, want.len() + 64, &dict).unwrap(), want, "offset {offset} len {len}");
            }
        }
        let too_far = block(&[(b"abc", Some((1004, 4))), (b"t", None)]);
        assert_eq!(agree(&too_far, 64, &dict), Err(DecodeError::OffsetOutOfBounds));
    }

    #[test]
    fn same_as_lz4_flex_on_compressed_data() {
        let mut rng = SeededRng::new(13);
        for round in 0..300 {
            let len = rng.below(if round % 3 == 0 { 70_000 } else { 2000 }) as usize;
            let data: Vec<u8> = match round % 4 {
                0 => rng.bytes(len),
                1 => rng.printable(len),
                2 => (0..len).map(|i| if rng.below(8) == 0 { rng.next_u64() as u8 } else { (i % 7) as u8 }).collect(),
                _ => (0..len).map(|_| [0u8, 0, 0, b' ', 1][rng.below(5) as usize]).collect(),
            };
            for block in [lz4_flex::block::compress(&data), super::super::block::compress(&data)] {
                assert_eq!(agree(&block, data.len(), &[]).unwrap(), data);
                assert_eq!(agree(&block, data.len() + 33, &[]).unwrap(), data);
            }
            let n = rng.below(3000) as usize;
            let dict = rng.printable(n);
            let linked = lz4_flex::block::compress_with_dict(&data, &dict);
            assert_eq!(agree(&linked, data.len(), &dict).unwrap(), data);
        }
    }

    #[test]
    fn same_as_lz4_flex_on_garbage_and_damaged_blocks() {
        let mut rng = SeededRng::new(14);
        let dict = rng.printable(500);
        for round in 0..20_000 {
            let src = if round % 2 == 0 {
                {
                    let n = rng.below(200) as usize;
                    rng.bytes(n)
                }
            } else {
                let n = rng.below(400) as usize;
                let data = rng.printable(n).repeat(2);
                let mut b = lz4_flex::block::compress(&data);
                for _ in 0..=rng.below(3) {
                    if !b.is_empty() {
                        let at = rng.below(b.len() as u64) as usize;
                        b[at] = rng.next_u64() as u8;
                    }
                }
                b
            };
            let cap = rng.below(1200) as usize;
            let _ = agree(&src, cap, &[]);
            let _ = agree(&src, cap, &dict);
        }
    }
}
