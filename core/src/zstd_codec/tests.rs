//! Tests of the zstd codec: levels, dictionaries, legacy frames, limits, error texts.

use super::decode::SPARE_DECODER;
use super::errors::error_code;
use super::*;
use zstd::zstd_safe::zstd_sys::ZSTD_ErrorCode as Zerr;

/// The v0.6 frame of the AddressSanitizer report, and its 3-byte "dictionary".
const V06_FRAME: &[u8] = b"\x26\xb5\x2f\xfd\x00\x2f\xfd\x00";
const V06_DICT: &[u8] = b"\x28\xb5\x2f";
/// The dictionary magic, ID 1, and one byte where the entropy tables should be.
const BAD_MAGIC_DICT: &[u8] = b"\x37\xa4\x30\xec\x01\x00\x00\x00\x00";

fn sample_dictionary() -> Vec<u8> {
    let samples: Vec<Vec<u8>> = (0..2000)
        .map(|i| {
            format!(
                "{{\"customer_id\": {}, \"order_id\": {}, \"status\": \"{}\", \"country\": \"{}\"}}",
                i * 7919 % 10007,
                i,
                ["shipped", "pending", "cancelled", "delivered"][i % 4],
                ["NL", "DE", "FR", "US", "JP"][i % 5]
            )
            .into_bytes()
        })
        .collect();
    zstd::dict::from_samples(&samples, 4096).unwrap()
}

#[test]
fn round_trip_at_fast_default_and_max_levels() {
    let data = b"zstd likes repetition; zstd likes repetition. ".repeat(500);
    for level in [*level_range().start(), -5, 0, 1, 3, 19, 22] {
        let frame = compress(&data, level, None).unwrap();
        if level > 0 {
            assert!(frame.len() < data.len() / 10, "level {level}: {} bytes", frame.len());
        }
        assert_eq!(decompress(&frame, None, data.len()).unwrap(), data);
    }
}

#[test]
fn empty_input_round_trips_and_declares_zero() {
    let frame = compress(b"", 3, None).unwrap();
    assert_eq!(zstd_safe::get_frame_content_size(&frame).ok(), Some(Some(0)));
    assert_eq!(decompress(&frame, None, 0).unwrap(), b"");
    assert!(matches!(decompress(b"", None, 10), Err(CodecError::Corrupt(_))));
}

#[test]
fn out_of_range_level_is_invalid_parameter() {
    assert!(matches!(compress(b"x", 23, None), Err(CodecError::InvalidParameter(_))));
    assert!(matches!(compress(b"x", *level_range().start() - 1, None), Err(CodecError::InvalidParameter(_))));
}

#[test]
fn dictionary_is_needed_to_decode() {
    let dict = b"common prefix of every record: customer_id=, order_id=, status=shipped".to_vec();
    let data = b"common prefix of every record: customer_id=42, order_id=7, status=shipped".to_vec();
    let with = compress(&data, 3, Some(&dict)).unwrap();
    let without = compress(&data, 3, None).unwrap();
    assert!(with.len() < without.len());
    assert_eq!(decompress(&with, Some(&dict), 1000).unwrap(), data);
    assert!(matches!(decompress(&with, None, 1000), Err(CodecError::Corrupt(_))));
}

#[test]
fn legacy_frames_are_refused_by_name() {
    let err = decompress(V06_FRAME, None, 1000).unwrap_err();
    assert!(
        matches!(&err, CodecError::Corrupt(m) if m.starts_with("zstd legacy format v0.6 is not supported")),
        "{err:?}"
    );
    // The reproducer of the heap over-read: its 3-byte dictionary is refused first.
    let err = decompress(V06_FRAME, Some(V06_DICT), 1000).unwrap_err();
    assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("too short")), "{err:?}");
    // With a usable dictionary, the frame is still a legacy one.
    let err = decompress(V06_FRAME, Some(b"eight or more bytes"), 1000).unwrap_err();
    assert!(matches!(&err, CodecError::Corrupt(m) if m.contains("v0.6")), "{err:?}");
    for (magic, version) in
        [(0xFD2F_B51Eu32, "v0.1"), (0xFD2F_B522, "v0.2"), (0xFD2F_B527, "v0.7"), (0xFD2F_B520, "before v0.8")]
    {
        let mut frame = magic.to_le_bytes().to_vec();
        frame.extend_from_slice(&[0; 12]);
        let err = decompress(&frame, None, 1000).unwrap_err();
        assert!(matches!(&err, CodecError::Corrupt(m) if m.contains(&format!("legacy format {version} "))), "{err:?}");
    }
}

#[test]
fn the_library_itself_has_no_legacy_decoders() {
    // With legacy support compiled in, ZSTD_getFrameContentSize reads v0.x frames (as size
    // unknown); without it, their magic number is simply not a frame.
    assert!(zstd_safe::get_frame_content_size(V06_FRAME).is_err());
    let mut padded = V06_FRAME.to_vec();
    padded.extend_from_slice(&[0; 16]); // past the shortest standard frame, so the magic decides
    let mut out = Vec::with_capacity(100);
    let code = DCtx::create().decompress(&mut out, &padded).unwrap_err();
    assert_eq!(error_code(code), Some(Zerr::ZSTD_error_prefix_unknown as usize));
}

#[test]
fn short_dictionaries_are_invalid_parameters() {
    let frame = compress(b"payload", 3, None).unwrap();
    for dict in [&b""[..], b"\x28\xb5\x2f", b"seven b"] {
        let err = compress(b"payload", 3, Some(dict)).unwrap_err();
        assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("too short")), "{err:?}");
        let err = decompress(&frame, Some(dict), 100).unwrap_err();
        assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("too short")), "{err:?}");
    }
    // Eight bytes of raw content are a dictionary.
    let frame = compress(b"payload, payload", 3, Some(b"payload,")).unwrap();
    assert_eq!(decompress(&frame, Some(b"payload,"), 100).unwrap(), b"payload, payload");
}

#[test]
fn malformed_dictionaries_say_so() {
    let frame = compress(b"payload", 3, None).unwrap();
    let mut truncated = sample_dictionary();
    truncated.truncate(40);
    for dict in [BAD_MAGIC_DICT, &b"\x37\xa4\x30\xec\x01\x00\x00\x00"[..], &truncated] {
        for err in [compress(b"payload", 3, Some(dict)).unwrap_err(), decompress(&frame, Some(dict), 100).unwrap_err()]
        {
            assert!(
                matches!(&err, CodecError::InvalidParameter(m) if m.starts_with("zstd dictionary is malformed: it starts with the dictionary magic number")),
                "{dict:?}: {err:?}"
            );
            assert!(!err.message().contains("Allocation"), "{err:?}");
        }
    }
}

#[test]
fn frames_name_the_dictionary_they_need() {
    let dict = sample_dictionary();
    let id = zstd_safe::get_dict_id_from_dict(&dict).unwrap();
    let data = b"{\"customer_id\": 4242, \"order_id\": 99, \"status\": \"shipped\", \"country\": \"NL\"}".to_vec();
    let frame = compress(&data, 3, Some(&dict)).unwrap();
    assert_eq!(zstd_safe::get_dict_id_from_frame(&frame), Some(id));
    assert_eq!(decompress(&frame, Some(&dict), 1000).unwrap(), data);

    let err = decompress(&frame, None, 1000).unwrap_err();
    assert_eq!(
        err,
        CodecError::Corrupt(format!(
            "zstd frame needs dictionary {id} (dictionary ID in the frame header); give it as the dictionary argument"
        ))
    );
    let mut other = dict.clone();
    other[4..8].copy_from_slice(&(id.get() ^ 1).to_le_bytes());
    let err = decompress(&frame, Some(&other), 1000).unwrap_err();
    assert!(
        matches!(&err, CodecError::InvalidParameter(m) if m.contains(&format!("needs dictionary {id} ")) && m.contains(&format!("has ID {}", id.get() ^ 1))),
        "{err:?}"
    );
    let err = decompress(&frame, Some(b"raw content dictionary"), 1000).unwrap_err();
    assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("raw content without an ID")), "{err:?}");
}

#[test]
fn limits_and_garbage() {
    let data = vec![0u8; 100_000];
    let frame = compress(&data, 3, None).unwrap();
    assert_eq!(decompress(&frame, None, 99_999), Err(CodecError::over_limit("zstd frame", 100_000, 99_999)));
    let err = decompress(b"garbage!", None, 10).unwrap_err();
    assert!(matches!(&err, CodecError::Corrupt(m) if m.contains("not a zstd frame")), "{err:?}");
    for cut in [1, 3, 4, 5, 8, frame.len() / 2, frame.len() - 1] {
        let err = decompress(&frame[..cut], None, 1 << 20).unwrap_err();
        assert!(
            matches!(&err, CodecError::Corrupt(m) if m.starts_with("zstd frame is truncated")),
            "cut {cut}: {err:?}"
        );
    }
}

#[test]
fn error_texts_are_our_own() {
    let data: Vec<u8> = (0..50_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 % 16 + b'a').collect();
    let frame = compress(&data, 3, None).unwrap();
    // The last 4 bytes are the checksum.
    let mut bad_sum = frame.clone();
    *bad_sum.last_mut().unwrap() ^= 0x55;
    assert_eq!(
        decompress(&bad_sum, None, data.len()),
        Err(CodecError::corrupt("zstd frame is corrupt: checksum mismatch"))
    );
    // Damage anywhere: a Corrupt error of ours (or, rarely, the right data), never a panic.
    for i in (0..frame.len()).step_by(7) {
        let mut bad = frame.clone();
        bad[i] ^= 0x20;
        match decompress(&bad, None, data.len()) {
            Ok(out) => assert_eq!(out, data, "byte {i}"),
            Err(CodecError::Corrupt(m)) => {
                assert!(m.starts_with("zstd frame") || m.starts_with("input is not"), "byte {i}: {m}")
            }
            Err(CodecError::TooLarge(_)) => {}
            Err(e) => panic!("byte {i}: {e:?}"),
        }
    }
}

#[test]
fn frames_without_content_size_are_bounded() {
    let data = b"no size declared ".repeat(10_000);
    let mut frame = Vec::new();
    let mut encoder = zstd::stream::write::Encoder::new(&mut frame, 3).unwrap();
    std::io::Write::write_all(&mut encoder, &data).unwrap();
    encoder.finish().unwrap();
    assert_eq!(zstd_safe::get_frame_content_size(&frame).ok(), Some(None));
    assert_eq!(decompress(&frame, None, data.len()).unwrap(), data);
    assert!(matches!(decompress(&frame, None, data.len() - 1), Err(CodecError::TooLarge(_))));
    assert!(matches!(decompress(&frame, None, 0), Err(CodecError::TooLarge(_))));
}

#[test]
fn several_frames_and_skippable_ones() {
    let mut data = compress(b"first,", 3, None).unwrap();
    data.extend_from_slice(&0x184D_2A53u32.to_le_bytes());
    data.extend_from_slice(&3u32.to_le_bytes());
    data.extend_from_slice(b"xyz");
    data.extend(compress(b"second", 19, None).unwrap());
    assert_eq!(decompress(&data, None, 100).unwrap(), b"first,second");
    assert!(matches!(decompress(&data, None, 11), Err(CodecError::TooLarge(_))));
    let mut trailing = data.clone();
    trailing.extend_from_slice(b"junk");
    let err = decompress(&trailing, None, 100).unwrap_err();
    assert!(matches!(&err, CodecError::Corrupt(m) if m.contains("4 trailing bytes")), "{err:?}");
    // A skippable frame cut short.
    let err =
        decompress(&data[..data.len() - compress(b"second", 19, None).unwrap().len() - 1], None, 100).unwrap_err();
    assert!(matches!(&err, CodecError::Corrupt(m) if m.starts_with("zstd frame is truncated")), "{err:?}");
}

#[test]
fn ticks_come_per_chunk_and_the_frame_declares_its_size() {
    let data: Vec<u8> = (0..5 * CHUNK as u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 & 0x3F).collect();
    let mut ticks = 0;
    let frame = compress_with_tick(&data, 3, None, &mut || ticks += 1).unwrap();
    assert!(ticks >= 5, "{ticks} ticks");
    assert_eq!(zstd_safe::get_frame_content_size(&frame).ok(), Some(Some(data.len() as u64)));
    let mut ticks = 0;
    assert_eq!(decompress_with_tick(&frame, None, data.len(), &mut || ticks += 1).unwrap(), data);
    assert!(ticks >= 5, "{ticks} ticks");
    // Highly compressible data: output, not input, decides the ticks.
    let zeros = vec![0u8; 5 * CHUNK];
    let frame = compress(&zeros, 3, None).unwrap();
    assert!(frame.len() < CHUNK);
    let mut ticks = 0;
    assert_eq!(decompress_with_tick(&frame, None, zeros.len(), &mut || ticks += 1).unwrap(), zeros);
    assert!(ticks >= 5, "{ticks} ticks");
}

#[test]
fn the_slowest_levels_tick_every_block() {
    assert_eq!(compress_chunk(SLOW_LEVELS_FROM - 1), CHUNK);
    assert_eq!(compress_chunk(SLOW_LEVELS_FROM), SLOW_LEVEL_CHUNK);
    let data: Vec<u8> =
        (0..4 * SLOW_LEVEL_CHUNK as u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 & 0x3F).collect();
    let mut ticks = 0;
    let frame = compress_with_tick(&data, SLOW_LEVELS_FROM, None, &mut || ticks += 1).unwrap();
    assert_eq!(ticks, 4);
    assert_eq!(decompress(&frame, None, data.len()).unwrap(), data);
    let mut ticks = 0;
    compress_with_tick(&data, SLOW_LEVELS_FROM - 1, None, &mut || ticks += 1).unwrap();
    assert_eq!(ticks, 1);
}

#[test]
fn frames_decode_in_place_into_a_buffer_of_their_declared_size() {
    let dict = sample_dictionary();
    let big: Vec<u8> = (0..3 * CHUNK as u32 + 17).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 & 0x3F).collect();
    for (data, dictionary) in [
        (&b""[..], None),
        (&b"in place, in place, in place"[..], None),
        (&big[..], None),
        (&b"{\"customer_id\": 7, \"order_id\": 1, \"status\": \"shipped\"}"[..], Some(&dict[..])),
    ] {
        let frame = compress(data, 3, dictionary).unwrap();
        assert_eq!(declared_size(&frame), Some(data.len() as u64));
        let mut dst = vec![0xA5; data.len()];
        let mut ticks = 0;
        decompress_to(&frame, dictionary, &mut dst, &mut || ticks += 1).unwrap();
        assert_eq!(dst, data);
        assert!(ticks >= data.len() / CHUNK, "{ticks} ticks");
        // A buffer of another size than the frames declare is refused, never half-filled silently.
        for wrong in [data.len() + 1, data.len().saturating_sub(1)] {
            if wrong == data.len() {
                continue;
            }
            let mut dst = vec![0; wrong];
            let err = decompress_to(&frame, dictionary, &mut dst, &mut || ()).unwrap_err();
            assert!(matches!(err, CodecError::Corrupt(_) | CodecError::TooLarge(_)), "{wrong}: {err:?}");
        }
    }
    // Several frames and a skippable one: the sizes add up.
    let mut data = compress(b"first,", 3, None).unwrap();
    data.extend_from_slice(&0x184D_2A53u32.to_le_bytes());
    data.extend_from_slice(&3u32.to_le_bytes());
    data.extend_from_slice(b"xyz");
    data.extend(compress(b"second", 19, None).unwrap());
    assert_eq!(declared_size(&data), Some(12));
    let mut dst = vec![0; 12];
    decompress_to(&data, None, &mut dst, &mut || ()).unwrap();
    assert_eq!(dst, b"first,second");
}

#[test]
fn declared_size_is_none_when_a_frame_does_not_say_or_the_data_is_not_frames() {
    let mut frame = Vec::new();
    let mut encoder = zstd::stream::write::Encoder::new(&mut frame, 3).unwrap();
    std::io::Write::write_all(&mut encoder, b"no size declared").unwrap();
    encoder.finish().unwrap();
    assert_eq!(declared_size(&frame), None);
    let mut two = compress(b"sized", 3, None).unwrap();
    two.extend_from_slice(&frame);
    assert_eq!(declared_size(&two), None);
    assert_eq!(declared_size(b""), None);
    assert_eq!(declared_size(b"not zstd at all"), None);
    let whole = compress(b"cut short, cut short", 3, None).unwrap();
    assert_eq!(declared_size(&whole[..whole.len() - 1]), None);
    assert_eq!(declared_size(V06_FRAME), None);
}

#[test]
fn compress_to_says_when_the_frame_does_not_fit() {
    let data = b"fits or not, fits or not, fits or not".repeat(100);
    let frame = compress(&data, 3, None).unwrap();
    let mut room = vec![0; frame.len()];
    assert_eq!(compress_to(&data, 3, None, &mut room, &mut || ()).unwrap(), Some(frame.len()));
    assert_eq!(room, frame);
    let mut short = vec![0; frame.len() - 1];
    assert_eq!(compress_to(&data, 3, None, &mut short, &mut || ()).unwrap(), None);
    assert_eq!(compress_to(&data, 3, None, &mut [], &mut || ()).unwrap(), None);
    assert!(matches!(compress_to(&data, 99, None, &mut room, &mut || ()), Err(CodecError::InvalidParameter(_))));
}

thread_local! {
    /// Whether this test thread's cancel probe says "pending" (other tests' threads never do).
    static CANCEL_ARMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// How often the probe was asked on this thread.
    static PROBES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn armed_probe() -> bool {
    PROBES.with(|n| n.set(n.get() + 1));
    CANCEL_ARMED.with(|a| a.get())
}

#[test]
fn a_pending_cancel_stops_the_table_set_up_and_ticks_first() {
    crate::ticking::set_cancel_probe(armed_probe);
    // Level 22 on 1 MB sets up tables over a piece (4 MB) in one allocation.
    let data: Vec<u8> =
        (0..8 * SLOW_LEVEL_CHUNK as u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 & 0x3F).collect();
    let plain = compress(&data, 22, None).unwrap();
    assert!(PROBES.with(|n| n.get()) > 0, "the allocator asked nobody");

    // A tick that raises (as the extension's does on a cancel) comes before any compression.
    CANCEL_ARMED.with(|a| a.set(true));
    let mut ticks = 0;
    let raised = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        compress_with_tick(&data, 22, None, &mut || {
            ticks += 1;
            panic!("cancelled");
        })
    }));
    assert!(raised.is_err());
    assert_eq!(ticks, 1);

    // An interrupt that raises nothing: one tick more than chunks, and the same frame, made by
    // the second attempt, which does not ask.
    let probes_before = PROBES.with(|n| n.get());
    let mut ticks = 0;
    let frame = compress_with_tick(&data, 22, None, &mut || ticks += 1).unwrap();
    CANCEL_ARMED.with(|a| a.set(false));
    assert_eq!(ticks, 8 + 1);
    assert_eq!(PROBES.with(|n| n.get()), probes_before + 1, "asked once, then not again");
    assert!(frame == plain);
    assert_eq!(decompress(&frame, None, data.len()).unwrap(), data);
}

/// Decoding into uninitialised memory gives the same result whatever the memory held before,
/// on good and damaged frames, with and without a dictionary, one pass and streamed.
#[test]
fn decoding_into_uninitialised_memory_ignores_what_it_held() {
    use crate::uninit::{damaged, periodic_test_data, same_whatever_the_buffer_held};
    let mut rng = crate::rng::SeededRng::new(4849);
    let dict = sample_dictionary();
    let mut checked = 0;
    for round in 0..60 {
        let len = rng.below(if round % 10 == 0 { 3 * CHUNK as u64 } else { 5000 }) as usize;
        let data = periodic_test_data(&mut rng, len);
        let dictionary = (round % 3 == 2).then_some(&dict[..]);
        let frame = compress(&data, 3, dictionary).unwrap();
        let mut inputs = vec![frame.clone()];
        inputs.extend(damaged(&mut rng, &frame));
        for (i, src) in inputs.iter().enumerate() {
            let Some(cap) = declared_size(src).filter(|&n| n < 1 << 24).map(|n| n as usize) else { continue };
            let got = same_whatever_the_buffer_held(cap, &mut |room| {
                decompress_to_uninit(src, dictionary, room, &mut || ()).map(|()| room.len())
            });
            // What the growing decoder gives under the same limit, when it is all the frames'
            // declared content.
            let want = decompress(src, dictionary, cap).ok().filter(|out| out.len() == cap);
            assert_eq!(got.as_ref().ok(), want.as_ref(), "round {round} input {i}");
            if i == 0 {
                assert_eq!(got.as_deref(), Ok(&data[..]), "round {round}");
            }
            checked += 1;
        }
    }
    assert!(checked > 150, "only {checked} inputs declared a size");
}

/// Whether this thread keeps a decoding context for the next call.
fn a_decoder_is_kept() -> bool {
    SPARE_DECODER.with(|spare| {
        let kept = spare.take();
        let is = kept.is_some();
        spare.set(kept);
        is
    })
}

#[test]
fn the_kept_decoding_context_decodes_as_a_new_one() {
    // The context kept after a frame cut short, after a damaged one, after a frame decoded with a
    // dictionary (which has its own) and after a streamed one decodes the next frame as a new
    // context would; a context that streamed a long frame holds its window and is not kept.
    let mut rng = crate::rng::SeededRng::new(4850);
    let small = crate::uninit::periodic_test_data(&mut rng, 20_000);
    let small_frame = compress(&small, 3, None).unwrap();
    let long = crate::uninit::periodic_test_data(&mut rng, 3 * CHUNK + 5);
    let long_frame = compress(&long, 3, None).unwrap();
    let dict = sample_dictionary();
    let json = b"{\"customer_id\": 7, \"order_id\": 1, \"status\": \"shipped\"}".repeat(20);
    let dict_frame = compress(&json, 3, Some(&dict)).unwrap();
    let mut flipped = small_frame.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x10;
    let cut = &small_frame[..small_frame.len() * 2 / 3];

    assert_eq!(decompress(&small_frame, None, 1 << 20).unwrap(), small);
    assert!(a_decoder_is_kept());
    let truncated = decompress(cut, None, 1 << 20).unwrap_err();
    let damaged = decompress(&flipped, None, 1 << 20);
    for round in 0..3 {
        assert_eq!(decompress(cut, None, 1 << 20).unwrap_err(), truncated, "round {round}");
        assert_eq!(decompress(&small_frame, None, 1 << 20).unwrap(), small, "round {round}");
        assert_eq!(decompress(&flipped, None, 1 << 20), damaged, "round {round}");
        let mut dst = vec![0; small.len()];
        decompress_to(&small_frame, None, &mut dst, &mut || ()).unwrap();
        assert_eq!(dst, small, "round {round}");
        assert_eq!(decompress(&dict_frame, Some(&dict), 1 << 20).unwrap(), json, "round {round}");
        assert_eq!(decompress(&long_frame, None, 1 << 24).unwrap(), long, "round {round}");
        assert!(!a_decoder_is_kept(), "a context that streamed {} bytes was kept", long.len());
        assert_eq!(decompress(&small_frame, None, 1 << 20).unwrap(), small, "round {round}");
        assert!(a_decoder_is_kept());
    }
}

#[test]
fn a_damaged_frame_is_reported_alike_whatever_was_decoded_before() {
    // A compresslab envelope of 0 bytes holding a damaged zstd frame (found by the fuzz target
    // decode_ignores_what_the_output_buffer_held): libzstd's error depended on the buffers a
    // kept context had from the frame decoded before it.
    let envelope = b"CLZ\xc1\x01\x03\x00\x00\x00\x00\x28\xb5\x2f\xfd\x81\x81\x00\x00\x00\x00\x00\x00\x00\x00\
        \x34\x00\x00\x00\x92\x00\x00\x00\x00\x00\x10\xe3\x00\x00\x10\xe3";
    let decode = || {
        let room: &mut [MaybeUninit<u8>] = &mut [];
        crate::envelope::decompress_uninit(envelope, room, &mut || ())
    };
    SPARE_DECODER.with(Cell::take);
    let fresh = decode();
    assert!(matches!(fresh, Err(CodecError::Corrupt(_))), "{fresh:?}");
    let mut rng = crate::rng::SeededRng::new(4851);
    let text = crate::uninit::periodic_test_data(&mut rng, 300_000);
    let unsized_frame = zstd::stream::encode_all(&text[..], 1).unwrap();
    assert_eq!(declared_size(&unsized_frame), None);
    let befores = [compress(&text[..5000], 3, None).unwrap(), unsized_frame, compress(&text, 1, None).unwrap()];
    for (i, before) in befores.iter().enumerate() {
        assert!(decompress(before, None, 1 << 20).is_ok());
        assert_eq!(decode(), fresh, "after frame {i}");
        assert_eq!(decode(), fresh, "after frame {i}, twice");
    }
}
