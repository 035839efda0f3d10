use std::io::Write;

use super::decode::ensure_capacity;
use super::header::{read_descriptor, Cursor};
use super::*;
use crate::error::{try_with_capacity, CodecError};

#[test]
fn round_trip_and_declared_size() {
    let data = b"frame me ".repeat(100_000);
    let frame = compress(&data);
    assert_eq!(declared_content_size(&frame), Some(data.len() as u64));
    assert_eq!(decompress(&frame, data.len()).unwrap(), data);
    assert!(matches!(decompress(&frame, data.len() - 1), Err(CodecError::TooLarge(_))));
}

#[test]
fn compress_to_writes_the_same_frame_into_a_buffer_and_refuses_too_little_room() {
    let random = crate::rng::SeededRng::new(5).bytes(70_000);
    for data in [&b""[..], &b"frame me ".repeat(1000)[..], &random[..]] {
        let mut room = vec![0; compress_bound(data.len())];
        let n = compress_to(data, &mut room).unwrap();
        assert_eq!(&room[..n], &compress(data)[..]);
        assert!(matches!(compress_to(data, &mut room[..n - 1]), Err(CodecError::InvalidParameter(_))));
    }
}

#[test]
fn concatenated_frames_decode_to_concatenation() {
    let mut two = compress(b"first,");
    two.extend(compress(b"second"));
    assert_eq!(decompress(&two, 100).unwrap(), b"first,second");
}

/// Frames of every shape [`content_size`] accepts: one frame, several blocks, several
/// frames with a skippable frame and an empty frame among them.
fn frames_that_declare_their_sizes() -> Vec<(Vec<u8>, Vec<u8>)> {
    let text = b"in place, please ".repeat(600_000); // 10.2 MB: three 4 MB blocks
    vec![(compress(b"x"), b"x".to_vec()), (compress(&text), text), several_frames(300_000)]
}

/// Five frames: text, a skippable frame, `random_len` random bytes (a stored block), an
/// empty frame, text; and their content.
fn several_frames(random_len: usize) -> (Vec<u8>, Vec<u8>) {
    let random = crate::rng::SeededRng::new(9).bytes(random_len);
    let mut frames = compress(b"first,");
    frames.extend([0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 7, 7, 7]); // a skippable frame
    frames.extend(compress(&random));
    frames.extend(compress(b""));
    frames.extend(compress(b"last"));
    (frames, [&b"first,"[..], &random, b"last"].concat())
}

#[test]
fn decompress_to_fills_the_buffer_that_content_size_gives() {
    for (frames, content) in frames_that_declare_their_sizes() {
        assert_eq!(content_size(&frames), Some(content.len() as u64));
        let mut dst = vec![0xEE; content.len()];
        decompress_to(&frames, &mut dst, &mut || {}).unwrap();
        assert!(dst == content, "{} bytes", content.len());
        assert_eq!(decompress(&frames, content.len()).unwrap(), content);
    }
}

#[test]
fn decompress_to_refuses_a_buffer_of_another_length() {
    let (frames, content) = frames_that_declare_their_sizes().swap_remove(2);
    for len in [0, content.len() - 1, content.len() + 1] {
        let mut dst = vec![0; len];
        assert!(decompress_to(&frames, &mut dst, &mut || {}).is_err(), "{len} bytes of room");
    }
}

#[test]
fn content_size_is_none_unless_every_frame_declares_it_and_is_whole() {
    let (frames, _) = frames_that_declare_their_sizes().swap_remove(2);
    assert_eq!(content_size(b""), None);
    assert_eq!(content_size(b"not a frame"), None);
    // A cut between two frames leaves whole frames: their content, which decodes.
    let mut whole = 0;
    for cut in 1..frames.len() {
        if let Some(n) = content_size(&frames[..cut]) {
            assert_eq!(decompress(&frames[..cut], usize::MAX).map(|c| c.len() as u64), Ok(n), "cut {cut}");
            whole += 1;
        }
    }
    assert_eq!(whole, 4, "after each of the five frames but the last");
    let mut tail = frames.clone();
    tail.push(0);
    assert_eq!(content_size(&tail), None);
    // A frame without a content size (lz4_flex's default, as the lz4 tool's) among them.
    let mut unsized_frame = Vec::new();
    let mut encoder = lz4_flex::frame::FrameEncoder::new(&mut unsized_frame);
    encoder.write_all(b"no size").unwrap();
    encoder.finish().unwrap();
    assert_eq!(declared_content_size(&unsized_frame), None);
    assert_eq!(content_size(&[&frames[..], &unsized_frame].concat()), None);
    assert_eq!(decompress(&[&frames[..], &unsized_frame].concat(), usize::MAX).unwrap().len(), 300_017);
}

#[test]
fn decompress_to_fails_exactly_where_decompress_fails() {
    // Every 7th truncation and one flipped bit in every 5th byte of a frame of linked 64 KB
    // blocks with block checksums, and of the frames with a skippable frame: where the
    // damaged data still claims a content size, decoding into a buffer of that size gives
    // what the growing decoder gives under the same limit, error for error.
    let text = b"linked blocks, checked blocks; ".repeat(7_000); // 217 KB: four blocks
    let info = lz4_flex::frame::FrameInfo::new()
        .content_size(Some(text.len() as u64))
        .block_checksums(true)
        .block_mode(lz4_flex::frame::BlockMode::Linked)
        .block_size(lz4_flex::frame::BlockSize::Max64KB);
    let mut linked = Vec::new();
    let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, &mut linked);
    encoder.write_all(&text).unwrap();
    encoder.finish().unwrap();
    assert_eq!(decompress(&linked, text.len()).unwrap(), text);
    let (several, _) = several_frames(3000);
    let mut checked = 0;
    for frames in [linked, several] {
        let mut mutants: Vec<Vec<u8>> = (0..frames.len()).step_by(7).map(|cut| frames[..cut].to_vec()).collect();
        for at in (0..frames.len()).step_by(5) {
            let mut m = frames.clone();
            m[at] ^= 1 << (at % 8);
            mutants.push(m);
        }
        for m in mutants {
            let Some(n) = content_size(&m).filter(|&n| n < 1 << 24) else { continue };
            let mut dst = vec![0; n as usize];
            let into = decompress_to(&m, &mut dst, &mut || {}).map(|()| dst);
            assert_eq!(into, decompress(&m, n as usize));
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} damaged inputs still declared a size");
}

#[test]
fn every_block_after_the_first_ticks() {
    let (frames, content) = frames_that_declare_their_sizes().swap_remove(1);
    let mut ticks = 0;
    decompress_with_tick(&frames, content.len(), &mut || ticks += 1).unwrap();
    assert_eq!(ticks, 2, "three blocks");
    let mut dst = vec![0; content.len()];
    decompress_to(&frames, &mut dst, &mut || ticks += 1).unwrap();
    assert_eq!(ticks, 4);
}

#[test]
fn trailing_garbage_is_corrupt() {
    for tail in [&[0u8][..], &[1, 2, 3], b"junk after the frame"] {
        let mut data = compress(b"payload");
        data.extend_from_slice(tail);
        assert!(matches!(decompress(&data, 100), Err(CodecError::Corrupt(_))), "{tail:?}");
    }
}

#[test]
fn garbage_and_truncation_are_corrupt() {
    assert!(matches!(decompress(b"not a frame", 100), Err(CodecError::Corrupt(_))));
    let frame = compress(&b"abcdefgh".repeat(1000));
    for cut in 0..frame.len() {
        assert!(matches!(decompress(&frame[..cut], 1 << 20), Err(CodecError::Corrupt(_))), "cut {cut}");
    }
}

#[test]
fn buffers_grow_by_doubling_but_never_past_the_limit() {
    let mut out = try_with_capacity(8, "test").unwrap();
    out.extend_from_slice(b"12345678");
    ensure_capacity(&mut out, 10, 15).unwrap();
    assert_eq!((out.capacity(), &out[..]), (15, &b"12345678"[..]));
    ensure_capacity(&mut out, 12, 15).unwrap();
    assert_eq!(out.capacity(), 15);
    ensure_capacity(&mut out, 20, 1000).unwrap();
    assert_eq!(out.capacity(), 30);
    assert!(matches!(ensure_capacity(&mut out, usize::MAX / 2, usize::MAX), Err(CodecError::OutOfMemory(_))));
    assert_eq!(out, b"12345678");
}

#[test]
fn descriptor_fields_are_read() {
    // The attack reproducer's header: FLG 0x6C (independent blocks, content size, content
    // checksum), BD 0x70 (4 MB), content size 1, header checksum 0x74.
    let mut input = Cursor { rest: &[0x6C, 0x70, 1, 0, 0, 0, 0, 0, 0, 0, 0x74, 0xAA] };
    let desc = read_descriptor(&mut input, 1).unwrap();
    assert!(desc.independent && desc.content_checksum && !desc.block_checksum);
    assert_eq!((desc.content_size, desc.block_max), (Some(1), 4 << 20));
    assert_eq!(input.rest, [0xAA]);
}

/// Decoding into uninitialised memory (Miri checks that nothing unwritten is read) gives what
/// the growing decoder gives, whatever the memory held before: good and damaged frames of
/// independent and of linked blocks.
#[test]
fn decoding_into_uninitialised_memory_equals_the_growing_decoder() {
    use crate::uninit::{damaged, periodic_test_data, same_whatever_the_buffer_held};
    let mut rng = crate::rng::SeededRng::new(4848);
    let (rounds, long) = if cfg!(miri) { (4, 5000) } else { (120, 200_000) };
    let mut checked = 0;
    for round in 0..rounds {
        let len = rng.below(if round % 4 == 0 { long } else { 3000 }) as usize;
        let data = periodic_test_data(&mut rng, len);
        let mode =
            if round % 2 == 0 { lz4_flex::frame::BlockMode::Independent } else { lz4_flex::frame::BlockMode::Linked };
        let info = lz4_flex::frame::FrameInfo::new()
            .content_size(Some(len as u64))
            .block_mode(mode)
            .block_size(lz4_flex::frame::BlockSize::Max64KB);
        let mut theirs = Vec::new();
        let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, &mut theirs);
        encoder.write_all(&data).unwrap();
        encoder.finish().unwrap();
        let mut inputs = vec![compress(&data), theirs.clone()];
        inputs.extend(damaged(&mut rng, &theirs));
        for (i, src) in inputs.iter().enumerate() {
            let Some(cap) = content_size(src).filter(|&n| n < 1 << 20).map(|n| n as usize) else { continue };
            let got = same_whatever_the_buffer_held(cap, &mut |room| {
                decompress_to_uninit(src, room, &mut || ()).map(|()| room.len())
            });
            let want = decompress(src, cap).map_err(|e| format!("{e:?}"));
            assert_eq!(got, want, "round {round} input {i}");
            if i < 2 {
                assert_eq!(got.as_deref(), Ok(&data[..]), "round {round} input {i}");
            }
            checked += 1;
        }
    }
    assert!(checked > rounds * 3, "only {checked} inputs declared a size");
}
