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

/// lz4_flex's error as ours.
fn same_kind(e: &lz4_flex::block::DecompressError) -> DecodeError {
    use lz4_flex::block::DecompressError as E;
    match e {
        E::OutputTooSmall { .. } => DecodeError::OutputTooSmall,
        E::LiteralOutOfBounds => DecodeError::LiteralOutOfBounds,
        E::ExpectedAnotherByte => DecodeError::Truncated,
        E::OffsetZero => DecodeError::OffsetZero,
        E::OffsetOutOfBounds => DecodeError::OffsetOutOfBounds,
        other => panic!("lz4_flex error {other:?} has no counterpart"),
    }
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
    if dict.is_empty() {
        // The ticking decoder, its windows cut anywhere, gives the same result.
        for every in [1, 7, 64, 1000] {
            let mut ticked = vec![0xA5; cap];
            let t = decompress_into_ticking_every(src, &mut ticked, every, &mut || ());
            assert_eq!(t, a, "ticking every {every} differs for {src:02x?} into {cap}");
            if let Ok(n) = t {
                assert_eq!(ticked[..n], ours[..n], "ticking every {every}: bytes differ for {src:02x?}");
            }
        }
    }
    match (a, b) {
        (Ok(n), Ok(m)) => {
            assert_eq!(n, m, "lengths differ for {src:02x?}");
            assert_eq!(ours[..n], theirs[..m], "bytes differ for {src:02x?}");
            Ok(ours[..n].to_vec())
        }
        (Err(e), Err(f)) => {
            assert_eq!(e, same_kind(&f), "errors differ for {src:02x?} into {cap}");
            Err(e)
        }
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

/// Blocks of random sequences of every shape (literal runs 0..40 and a few long ones,
/// offsets 1..300 and some past the output's start, matches 4..300 bytes), decoded into
/// buffers from 70 bytes short to 70 bytes larger than the result: every room check of the
/// fast loop meets every shape near both ends of the output.
#[test]
fn random_sequences_near_both_ends() {
    let mut rng = SeededRng::new(15);
    let dict = rng.printable(400);
    // Under Miri (which checks the raw-pointer code for undefined behaviour) a few rounds.
    let rounds = if cfg!(miri) { 6 } else { 400 };
    for round in 0..rounds {
        let mut lits: Vec<Vec<u8>> = Vec::new();
        let mut matches: Vec<Option<(u16, usize)>> = Vec::new();
        let mut produced = 0usize;
        for _ in 0..rng.below(40) {
            let n = match rng.below(10) {
                0 => 15 + rng.below(300) as usize,
                1..=3 => 0,
                _ => rng.below(15) as usize,
            };
            let l = rng.bytes(n);
            produced += l.len();
            let room = produced + if round % 2 == 1 { dict.len() } else { 0 };
            let offset = match rng.below(8) {
                0 => 1 + rng.below(7),
                1 => 8 + rng.below(8),
                2 => 1 + rng.below(300),
                _ => 16 + rng.below(120),
            } as usize;
            let offset = if rng.below(50) == 0 { room + 1 } else { offset.min(room) };
            let len = match rng.below(4) {
                0 => 19 + rng.below(300) as usize,
                _ => 4 + rng.below(15) as usize,
            };
            // (An offset of 0 here, with nothing before it, is an error case too.)
            lits.push(l);
            produced += len;
            matches.push(Some((offset as u16, len)));
        }
        let n = rng.below(20) as usize;
        lits.push(rng.bytes(n));
        matches.push(None);
        let parts: Vec<Part> = lits.iter().map(|l| &l[..]).zip(matches.iter().copied()).collect();
        let b = block(&parts);
        let d: &[u8] = if round % 2 == 1 { &dict } else { &[] };
        for cap in produced.saturating_sub(70)..produced + 70 {
            let _ = agree(&b, cap, d);
        }
        for cut in b.len().saturating_sub(40)..b.len() {
            let _ = agree(&b[..cut], produced + 64, d);
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
        for block in [lz4_flex::block::compress(&data), super::super::block::compress(&data).unwrap()] {
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

/// Cancel within a second: a long block ticks about once per TICK_BYTES of output, and to the same
/// bytes as the plain decoder.
#[test]
fn long_blocks_tick_per_window() {
    let mut rng = SeededRng::new(15);
    let data: Vec<u8> =
        (0..(9 * TICK_BYTES + 12345)).map(|i| if i % 97 == 0 { rng.next_u64() as u8 } else { b'x' }).collect();
    let block = super::super::block::compress(&data).unwrap();
    let mut out = vec![0; data.len()];
    let mut ticks = 0;
    assert_eq!(decompress_into_ticking(&block, &mut out, &mut || ticks += 1), Ok(data.len()));
    assert!(out == data);
    assert!((9..=10).contains(&ticks), "{ticks} ticks");
    // One long match (a run of 40 MB from 2 bytes of literals) ticks after it.
    let run = block_of_run(40 << 20);
    let mut out = vec![0; 2 + (40 << 20) + 7];
    let mut ticks = 0;
    assert_eq!(decompress_into_ticking(&run, &mut out, &mut || ticks += 1), Ok(out.len()));
    assert!(ticks <= 1, "{ticks}");
}

/// Two literals "ab", then a match of offset 2 and `len` bytes, then 5 literals as the format
/// wants at the end.
fn block_of_run(len: usize) -> Vec<u8> {
    let mut out = Vec::new();
    seq(&mut out, b"ab", Some((2, len)));
    seq(&mut out, b"abababa", None);
    out
}

/// The short-offset copies (the every-shape goals: the register pattern of `wild_copy::repeat_tail` in
/// the fast loop, the doubling of `forward_copy_exact` in the careful path): every offset
/// 1..=64, lengths around every chunk and step size, the match ending at every distance from
/// the end of the block up to past the fast loop's room, after a lead of one period or more
/// (another alignment), alone or followed by a second match, into buffers exact to 100
/// bytes larger: the same bytes as a byte-by-byte copy and as lz4_flex.
#[test]
fn short_offsets_every_period_length_and_distance_to_the_end() {
    let text: Vec<u8> = (0..200u32).map(|i| (i.wrapping_mul(151) ^ (i >> 3)) as u8).collect();
    let lens =
        (4..=40usize).chain([47, 48, 49, 63, 64, 65, 95, 96, 97, 127, 128, 129, 255, 256, 273, 300, 511, 1000, 4099]);
    let lens: Vec<usize> = lens.collect();
    for offset in 1..=64u16 {
        for &len in &lens {
            for tail in [0usize, 1, 5, 11, 12, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 80] {
                for lead in [offset as usize, offset as usize + 37] {
                    let tail_bytes = &text[100..100 + tail];
                    let one: [Part; 2] = [(&text[..lead], Some((offset, len))), (tail_bytes, None)];
                    let two: [Part; 3] =
                        [(&text[..lead], Some((offset, len))), (b"z", Some((offset, len))), (tail_bytes, None)];
                    for parts in [&one[..], &two[..]] {
                        let b = block(parts);
                        let want = naive(parts);
                        for slack in [0, 1, 17, 31, 32, 63, 64, 100] {
                            assert_eq!(
                                agree(&b, want.len() + slack, &[]).unwrap(),
                                want,
                                "offset {offset} len {len} tail {tail} slack {slack}"
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Decoding into uninitialised memory (Miri checks that nothing unwritten is read) gives what
/// decoding into initialised memory gives, whatever that memory held, on good and damaged
/// blocks, with ticks cutting the fast loop's windows.
#[test]
fn decoding_into_uninitialised_memory_equals_decoding_into_initialised() {
    use crate::uninit::{damaged, periodic_test_data, same_whatever_the_buffer_held};
    let mut rng = SeededRng::new(48);
    let rounds = if cfg!(miri) { 12 } else { 400 };
    for round in 0..rounds {
        let len = rng.below(if round % 4 == 0 { 3000 } else { 400 }) as usize;
        let data = periodic_test_data(&mut rng, len);
        let packed = super::super::block::compress(&data).unwrap();
        let mut inputs = vec![packed.clone()];
        inputs.extend(damaged(&mut rng, &packed));
        for (i, src) in inputs.iter().enumerate() {
            for cap in [len, len + 40, len / 2] {
                let every = [usize::MAX, 64, 1][round % 3];
                let got = same_whatever_the_buffer_held(cap, &mut |room| {
                    decompress_uninit_ticking_every(src, room, every, &mut || ())
                });
                let mut init = vec![0x5Au8; cap];
                let want = decompress_into(src, &mut init).map(|n| init[..n].to_vec());
                assert_eq!(got, want.map_err(|e| format!("{e:?}")), "round {round} input {i} cap {cap}");
                if i == 0 && cap >= len {
                    assert_eq!(got.as_deref(), Ok(&data[..]), "round {round}");
                }
            }
        }
    }
}
