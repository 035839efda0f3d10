//! zstd_codec against the reference command-line tool (`zstd`, from the system): what we write
//! it reads, and what it writes (with or without checksum, content size, dictionary) we read.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use compresslab_core::{zstd_codec, CodecError};

const ZSTD: &str = "/usr/bin/zstd";

/// Run `zstd args...` with `input` on stdin; its stdout.
fn zstd_tool(args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(ZSTD)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run /usr/bin/zstd");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "zstd {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

fn have_tool() -> bool {
    let present = Path::new(ZSTD).exists();
    if !present {
        eprintln!("{ZSTD} is not installed: interoperability not tested");
    }
    present
}

fn sample_data() -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..60_000u32 {
        data.extend_from_slice(
            format!("row {i}: value={} flag={}\n", i.wrapping_mul(2654435761) % 1000, i % 3 == 0).as_bytes(),
        );
    }
    data
}

fn temp_file(name: &str, contents: &[u8]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("compresslab-zstd-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

#[test]
fn the_tool_reads_our_frames() {
    if !have_tool() {
        return;
    }
    let data = sample_data();
    for level in [-5, 1, 3, 19] {
        let frame = zstd_codec::compress(&data, level, None).unwrap();
        assert_eq!(zstd_tool(&["-d", "-c"], &frame), data, "level {level}");
    }
    assert_eq!(zstd_tool(&["-d", "-c"], &zstd_codec::compress(b"", 3, None).unwrap()), b"");
}

#[test]
fn we_read_the_tools_frames() {
    if !have_tool() {
        return;
    }
    let data = sample_data();
    for args in
        [&["-19", "-c"][..], &["-19", "-c", "--no-check"], &["-3", "-c", "--no-check"], &["-1", "-c", "--content-size"]]
    {
        let frame = zstd_tool(args, &data);
        assert_eq!(zstd_codec::decompress(&frame, None, data.len()).unwrap(), data, "{args:?}");
        let mut ticks = 0;
        assert_eq!(zstd_codec::decompress_with_tick(&frame, None, data.len(), &mut || ticks += 1).unwrap(), data);
        assert!(ticks >= data.len() / zstd_codec::CHUNK, "{args:?}: {ticks} ticks");
        assert!(
            matches!(zstd_codec::decompress(&frame, None, data.len() - 1), Err(CodecError::TooLarge(_))),
            "{args:?}"
        );
    }
    // Frames from stdin declare no content size: the limit is enforced while decoding.
    let frame = zstd_tool(&["-19", "-c"], &data);
    assert_eq!(zstd::zstd_safe::get_frame_content_size(&frame).ok(), Some(None));
}

#[test]
fn dictionaries_work_both_ways() {
    if !have_tool() {
        return;
    }
    let data = b"common prefix of every record: customer_id=42, order_id=7, status=shipped".to_vec();
    let dict = b"common prefix of every record: customer_id=, order_id=, status=shipped".to_vec();
    let dict_path = temp_file("dict", &dict);
    let dict_arg = dict_path.to_str().unwrap();
    let ours = zstd_codec::compress(&data, 3, Some(&dict)).unwrap();
    assert_eq!(zstd_tool(&["-d", "-c", "-D", dict_arg], &ours), data);
    let theirs = zstd_tool(&["-3", "-c", "-D", dict_arg], &data);
    assert_eq!(zstd_codec::decompress(&theirs, Some(&dict), data.len()).unwrap(), data);
    std::fs::remove_file(dict_path).unwrap();
}

#[test]
fn legacy_reproducer_is_an_error_not_a_crash() {
    // zstd_decompress('\x26b52ffd002ffd00', '\x28b52f') of the AddressSanitizer report.
    let frame = b"\x26\xb5\x2f\xfd\x00\x2f\xfd\x00";
    assert!(matches!(
        zstd_codec::decompress(frame, Some(b"\x28\xb5\x2f"), 1 << 20),
        Err(CodecError::InvalidParameter(_))
    ));
    assert_eq!(
        zstd_codec::decompress(frame, None, 1 << 20).unwrap_err().message(),
        "zstd legacy format v0.6 is not supported (frame magic number 0xFD2FB526); only frames of zstd v0.8 \
         and later (magic number 0xFD2FB528) can be decoded"
    );
}

#[test]
fn malformed_magic_dictionary_is_reported_as_such() {
    let dict = b"\x37\xa4\x30\xec\x01\x00\x00\x00\x00";
    let frame = zstd_codec::compress(b"payload", 3, None).unwrap();
    let expected = CodecError::InvalidParameter(
        "zstd dictionary is malformed: it starts with the dictionary magic number (0xEC30A437) but its entropy \
         tables cannot be read"
            .into(),
    );
    assert_eq!(zstd_codec::compress(b"payload", 3, Some(dict)), Err(expected.clone()));
    assert_eq!(zstd_codec::decompress(&frame, Some(dict), 100), Err(expected));
}

#[test]
fn level_19_on_a_large_input_ticks_per_mebibyte() {
    // 12 MiB is enough to see ticks proportional to the input at a slow level without making
    // the test suite slow; 50 MB calls tick about 50 times the same way.
    let data: Vec<u8> = (0..12 * zstd_codec::CHUNK as u32).map(|i| (i.wrapping_mul(2654435761) >> 26) as u8).collect();
    let mut ticks = 0;
    let frame = zstd_codec::compress_with_tick(&data, 19, None, &mut || ticks += 1).unwrap();
    assert!(ticks >= 12, "{ticks} ticks");
    assert_eq!(zstd::zstd_safe::get_frame_content_size(&frame).ok(), Some(Some(data.len() as u64)));
    assert_eq!(zstd_codec::decompress(&frame, None, data.len()).unwrap(), data);
    if have_tool() {
        assert_eq!(zstd_tool(&["-d", "-c"], &frame), data);
    }
}

/// Fuzzing finding (zstd_decode_never_panics_and_respects_limit, 0.4.0): an empty frame, then a
/// frame declaring 96 bytes of content whose only block is an empty last block. libzstd's
/// streaming decoder skips the content-size check on an empty last block, so decoding into a
/// growing vector (room under 96 bytes for the second frame) returned no bytes and no error,
/// while decoding in place refused it; a single frame declaring more than a chunk (1 MB) was
/// accepted the same way. Every path must refuse them.
#[test]
fn a_frame_holding_less_than_it_declares_is_corrupt_on_every_path() {
    let empty_frame: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd, 0x30, 0x00, 0x01, 0x00, 0x00];
    let lying_frame: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd, 0x30, 0x60, 0x01, 0x00, 0x00];
    let both = [empty_frame, lying_frame].concat();
    assert_eq!(zstd_codec::decompress(empty_frame, None, 100).unwrap(), b"");
    for data in [lying_frame, &both[..]] {
        let err = zstd_codec::decompress(data, None, 0x8f_ffff).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt(_)), "{err:?}");
        // Its one empty block cannot hold 96 bytes: no size to allocate on its word.
        assert_eq!(zstd_codec::declared_size(data), None);
        let mut dst = vec![0; 96];
        let err = zstd_codec::decompress_to(data, None, &mut dst, &mut || ()).unwrap_err();
        assert!(matches!(err, CodecError::Corrupt(_)), "{err:?}");
    }
    // Alone, too, when the declared size is over a chunk (the decoder then never has room for
    // all of it at once): 2,000,000 declared bytes used to come back as none.
    let mut large_lie = vec![0x28, 0xb5, 0x2f, 0xfd, 0xa0];
    large_lie.extend_from_slice(&2_000_000u32.to_le_bytes());
    large_lie.extend_from_slice(&[0x01, 0x00, 0x00]);
    let err = zstd_codec::decompress(&large_lie, None, 4 << 20).unwrap_err();
    assert!(matches!(&err, CodecError::Corrupt(m) if m.contains("declares 2000000 bytes")), "{err:?}");
}

/// The 16-byte frame of the 0.5.0 review declares 1,000,000,000 bytes and holds one
/// empty raw block. It is refused as corrupt from its block headers, before any allocation
/// (no size is offered to allocate, and the decoder refuses it before its first step).
#[test]
fn a_tiny_frame_declaring_a_gigabyte_is_refused_before_allocating() {
    let frame: &[u8] = b"\x28\xb5\x2f\xfd\xa4\x00\xca\x9a\x3b\x01\x00\x00\x99\xe9\xd8\x51";
    assert_eq!(zstd_codec::declared_size(frame), None);
    assert_eq!(zstd_codec::max_content(frame), Some(0));
    assert!(matches!(zstd_codec::check_decodable(frame, 1_000_000_000), Err(CodecError::Corrupt(_))));
    assert!(zstd_codec::check_decodable(frame, 0).is_ok());
    let err = zstd_codec::decompress(frame, None, 1_073_741_818).unwrap_err();
    assert!(
        matches!(&err, CodecError::Corrupt(m) if m.contains("declares 1000000000 bytes of content, but its blocks can hold at most 0")),
        "{err:?}"
    );
}

/// Frames whose declared sizes add up past the limit are refused before the
/// first is decoded (the tick counts decoding steps: none ran).
#[test]
fn frames_declaring_more_than_the_limit_together_are_refused_before_decoding() {
    let one = zstd_codec::compress(&vec![7u8; 1 << 20], 1, None).unwrap();
    let eleven = one.repeat(11);
    assert_eq!(zstd_codec::declared_size(&eleven), Some(11 << 20));
    let mut steps = 0;
    let err = zstd_codec::decompress_with_tick(&eleven, None, 10 << 20, &mut || steps += 1).unwrap_err();
    assert!(
        matches!(&err, CodecError::TooLarge(m) if m.contains("several frames declares 11534336 decompressed bytes")),
        "{err:?}"
    );
    assert_eq!(steps, 0);
    assert_eq!(zstd_codec::decompress(&eleven, None, 11 << 20).unwrap().len(), 11 << 20);
}

/// [`zstd_codec::max_content`] bounds what real frames hold, at every level, and is `None`
/// for anything that is not whole frames.
#[test]
fn max_content_bounds_real_frames_and_refuses_truncated_ones() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 & 0x0f).collect();
    for level in [-5, 1, 3, 19] {
        let frame = zstd_codec::compress(&data, level, None).unwrap();
        let max = zstd_codec::max_content(&frame).unwrap();
        assert!(max >= data.len() as u64, "level {level}: {max}");
        assert_eq!(zstd_codec::frame_extent(&frame).unwrap().len, frame.len());
        assert_eq!(zstd_codec::max_content(&frame[..frame.len() - 1]), None);
    }
    let zeros = zstd_codec::compress(&vec![0u8; 5 << 20], 3, None).unwrap();
    assert!(zstd_codec::max_content(&zeros).unwrap() >= 5 << 20);
    assert_eq!(zstd_codec::max_content(b"not zstd"), None);
}
