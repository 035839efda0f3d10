//! Integration tests of the LZ4 frame reader (`lz4::frame::decompress`): interop with the
//! reference `lz4` command-line tool, the reproducers of defects found by attack, and
//! exhaustive truncation and bit-flip sweeps.
//!
//! The fixtures in `tests/fixtures/lz4/` were written once by `lz4` v1.9.4 from the
//! deterministic text of [`fixture_input`]; `cargo test -p compresslab-core --test lz4_frame
//! -- --ignored regenerate_fixtures` writes them again (it needs `lz4` on the PATH).

use std::path::{Path, PathBuf};
use std::process::Command;

use compresslab_core::lz4::frame::{compress, content_size, declared_content_size, decompress, decompress_to};
use compresslab_core::CodecError;
use proptest::prelude::{any, prop, prop_assert, prop_assert_eq, prop_oneof, proptest, Just, ProptestConfig};
use twox_hash::XxHash32;

// ---------------------------------------------------------------------------
// Deterministic input and the fixtures made from it.
// ---------------------------------------------------------------------------

/// xorshift64*: tiny, seedable, stable across platforms.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
}

const SUBJECTS: [&str; 8] = [
    "the customer",
    "our supplier",
    "the warehouse",
    "a courier",
    "the accountant",
    "the night shift",
    "PostgreSQL",
    "the backup job",
];
const VERBS: [&str; 8] =
    ["shipped", "returned", "counted", "compressed", "archived", "checked", "rejected", "signed for"];
const OBJECTS: [&str; 8] = [
    "twelve crates of apples",
    "the monthly invoice",
    "a pallet of bricks",
    "three boxes of paper",
    "the WAL segment",
    "an empty container",
    "the spare keys",
    "a TOAST chunk",
];

/// Text of `len` bytes: numbered lines, each one of 16 three-sentence paragraphs. Compressible
/// enough that the fixtures stay small, varied enough that blocks refer far back.
fn text(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let paragraphs: Vec<String> = (0..16)
        .map(|_| {
            (0..3)
                .map(|_| format!("{} {} {}.", rng.pick(&SUBJECTS), rng.pick(&VERBS), rng.pick(&OBJECTS)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let mut out = Vec::with_capacity(len + 200);
    let mut line = 0;
    while out.len() < len {
        line += 1;
        let paragraph = &paragraphs[(rng.next() % paragraphs.len() as u64) as usize];
        out.extend_from_slice(format!("{line}: {paragraph}\n").as_bytes());
    }
    out.truncate(len);
    out
}

const FIXTURE_LEN: usize = 200_000;
const FIXTURE_SEED: u64 = 2204;

/// The text every fixture was compressed from.
fn fixture_input() -> Vec<u8> {
    text(FIXTURE_LEN, FIXTURE_SEED)
}

/// Each fixture: file name, and the parts it is made of, each an `lz4` command line and the
/// slice of [`fixture_input`] it compresses (several parts are concatenated frames).
/// One part of a fixture: the `lz4` arguments and the input slice (start, end) compressed.
type Part = (&'static [&'static str], usize, usize);

const FIXTURES: &[(&str, &[Part])] = &[
    // Defaults: 4 MB independent blocks, content checksum, no content size.
    ("text.lz4", &[(&["-c"], 0, FIXTURE_LEN)]),
    ("text_hc_content_size.lz4", &[(&["-c", "-9", "--content-size"], 0, FIXTURE_LEN)]),
    // Linked blocks of 64 KB, no content checksum.
    ("text_linked_64k.lz4", &[(&["-c", "-B4", "-BD", "--no-frame-crc"], 0, FIXTURE_LEN)]),
    // 64 KB independent blocks, each with a block checksum.
    ("text_64k_block_checksums.lz4", &[(&["-c", "-B4", "-BX"], 0, FIXTURE_LEN)]),
    // Two frames back to back: linked 64 KB blocks with every checksum and the content size,
    // then a default frame.
    (
        "two_frames.lz4",
        &[(&["-c", "-9", "-B4", "-BD", "-BX", "--content-size"], 0, 150_000), (&["-c"], 150_000, 170_000)],
    ),
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lz4")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixtures_dir().join(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// What a fixture decodes to: the concatenation of its parts' slices of the input.
fn fixture_content(parts: &[(&[&str], usize, usize)]) -> Vec<u8> {
    let input = fixture_input();
    parts.iter().flat_map(|&(_, from, to)| input[from..to].iter().copied()).collect()
}

#[test]
#[ignore = "rewrites the committed fixtures with the lz4 command-line tool"]
fn regenerate_fixtures() {
    let input = fixture_input();
    let dir = fixtures_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let scratch = std::env::temp_dir().join(format!("compresslab-lz4-fixture-{}", std::process::id()));
    for (name, parts) in FIXTURES {
        let mut frames = Vec::new();
        for (args, from, to) in parts.iter() {
            std::fs::write(&scratch, &input[*from..*to]).unwrap();
            let run = Command::new("lz4").args(*args).arg(&scratch).output().expect("run lz4");
            assert!(run.status.success(), "lz4 {args:?}: {}", String::from_utf8_lossy(&run.stderr));
            frames.extend(run.stdout);
        }
        std::fs::write(dir.join(name), frames).unwrap();
    }
    std::fs::remove_file(&scratch).unwrap();
}

// ---------------------------------------------------------------------------
// Interop with the lz4 tool.
// ---------------------------------------------------------------------------

#[test]
fn lz4_tool_fixtures_decode_to_the_original() {
    let mut total = 0;
    for (name, parts) in FIXTURES {
        let frames = fixture(name);
        total += frames.len();
        let content = fixture_content(parts);
        assert_eq!(decompress(&frames, content.len()).unwrap_or_else(|e| panic!("{name}: {e}")), content, "{name}");
        assert_eq!(decompress(&frames, usize::MAX).unwrap(), content, "{name}");
        let err = decompress(&frames, content.len() - 1).unwrap_err();
        assert!(matches!(err, CodecError::TooLarge(_)), "{name}: {err:?}");
    }
    assert!(total < 100_000, "the lz4 fixtures should stay small, they are {total} bytes");
}

#[test]
fn lz4_tool_fixtures_that_declare_every_size_decode_in_place() {
    // Only frames that all record their content size are decoded into a buffer of that size
    // (two_frames.lz4's second frame does not record it).
    let mut in_place = 0;
    for (name, parts) in FIXTURES {
        let frames = fixture(name);
        let content = fixture_content(parts);
        let sized = parts.iter().all(|(args, _, _)| args.contains(&"--content-size"));
        assert_eq!(content_size(&frames), sized.then_some(content.len() as u64), "{name}");
        if sized {
            let mut dst = vec![0; content.len()];
            decompress_to(&frames, &mut dst, &mut || {}).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(dst == content, "{name}");
            in_place += 1;
        }
    }
    assert_eq!(in_place, 1);
}

#[test]
fn lz4_tool_fixtures_have_the_expected_layout() {
    // Guard against fixtures that stopped exercising what they are named after.
    let flags = |name: &str| fixture(name)[4];
    assert_eq!(flags("text.lz4") & 0x3C, 0x24, "independent blocks, content checksum");
    assert_eq!(flags("text_hc_content_size.lz4") & 0x3C, 0x2C, "content size and checksum");
    assert_eq!(flags("text_linked_64k.lz4") & 0x3C, 0x00, "linked blocks, no checksums");
    assert_eq!(fixture("text_linked_64k.lz4")[5], 0x40, "64 KB blocks");
    assert_eq!(flags("text_64k_block_checksums.lz4") & 0x3C, 0x34, "block and content checksums");
    assert_eq!(flags("two_frames.lz4") & 0x3C, 0x1C, "linked, every checksum, content size");
    assert_eq!(declared_content_size(&fixture("text_hc_content_size.lz4")), Some(FIXTURE_LEN as u64));
    assert_eq!(declared_content_size(&fixture("text.lz4")), None);
}

#[test]
fn linked_blocks_need_the_earlier_blocks() {
    // Marking the linked frame's blocks independent (and fixing the header checksum) must make
    // the first back-reference across a block boundary an error, not different data.
    let mut frame = fixture("text_linked_64k.lz4");
    frame[4] |= 0x20;
    frame[6] = header_checksum(&frame[4..6]);
    let err = decompress(&frame, FIXTURE_LEN).unwrap_err();
    assert!(
        matches!(&err, CodecError::Corrupt(m) if m.contains("block 2 of frame 1") && m.contains("before the start of the block")),
        "{err:?}"
    );
}

#[test]
fn every_truncation_of_a_multi_block_frame_is_an_error() {
    // The first frame of two_frames.lz4: linked 64 KB blocks, block and content checksums,
    // content size.
    let both = fixture("two_frames.lz4");
    let content = fixture_content(FIXTURES[4].1);
    let first_len = frame_len(&both);
    let first = &both[..first_len];
    assert_eq!(decompress(first, usize::MAX).unwrap(), &content[..150_000]);
    for cut in 0..first_len {
        match decompress(&first[..cut], usize::MAX) {
            Err(CodecError::Corrupt(_)) => {}
            other => panic!("cut at {cut} of {first_len}: {:?}", other.map(|v| v.len())),
        }
    }
    // Cut inside the second frame: an error too, never the first frame alone.
    for cut in first_len + 1..both.len() {
        assert!(decompress(&both[..cut], usize::MAX).is_err(), "cut at {cut}");
    }
    assert_eq!(decompress(&both[..first_len], usize::MAX).unwrap().len(), 150_000);
}

#[test]
fn truncations_of_the_tool_fixtures_are_errors() {
    for (name, _) in FIXTURES {
        let frames = fixture(name);
        let frame_end = frame_len(&frames);
        // Every length near the ends, a stride through the middle.
        let cuts = (0..frames.len()).filter(|&c| c < 64 || c + 64 > frames.len() || c % 97 == 0);
        for cut in cuts {
            if cut == frame_end {
                continue; // A whole first frame of a concatenation is valid on its own.
            }
            assert!(decompress(&frames[..cut], usize::MAX).is_err(), "{name} cut at {cut}");
        }
    }
}

#[test]
fn a_bit_flip_anywhere_under_a_content_checksum_is_an_error_or_the_same_data() {
    for name in ["text_hc_content_size.lz4", "two_frames.lz4"] {
        let frames = fixture(name);
        let content = fixture_content(FIXTURES.iter().find(|f| f.0 == name).unwrap().1);
        let mut flipped = frames.clone();
        for i in 0..frames.len() {
            let bit = i % 8;
            flipped[i] ^= 1 << bit;
            if let Ok(out) = decompress(&flipped, usize::MAX) {
                assert_eq!(out, content, "{name}: Ok with different data after flipping bit {bit} of byte {i}");
            }
            flipped[i] = frames[i];
        }
    }
}

#[test]
fn every_byte_value_anywhere_in_our_own_frames_is_an_error_or_the_same_data() {
    let data = text(3000, 5);
    let frame = compress(&data);
    let mut changed = frame.clone();
    for i in 0..frame.len() {
        for value in 0..=255u8 {
            changed[i] = value;
            if let Ok(out) = decompress(&changed, usize::MAX) {
                assert_eq!(out, data, "byte {i} set to {value:#04x}");
            }
        }
        changed[i] = frame[i];
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Several random changes and a random cut of the tool's frames: never a panic, never more
    /// than the limit, and under a content checksum never different data.
    #[test]
    fn damaged_tool_frames_never_panic_or_lie(
        which in 0..FIXTURES.len(),
        changes in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<usize>(),
        limit in prop_oneof![Just(usize::MAX), 0usize..250_000],
    ) {
        let (name, parts) = FIXTURES[which];
        let mut frames = fixture(name);
        for (at, value) in changes {
            let i = at % frames.len();
            frames[i] = value;
        }
        frames.truncate(cut % (frames.len() + 1));
        match decompress(&frames, limit) {
            Ok(out) => {
                prop_assert!(out.len() <= limit);
                let content = fixture_content(parts);
                if name == "text_hc_content_size.lz4" {
                    prop_assert_eq!(out, content);
                }
            }
            Err(CodecError::Corrupt(_)) | Err(CodecError::TooLarge(_)) => {}
            Err(e) => prop_assert!(false, "unexpected error {e:?}"),
        }
    }
}

// ---------------------------------------------------------------------------
// Reproducers of the defects found by attack.
// ---------------------------------------------------------------------------

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn corrupt_message(result: compresslab_core::error::Result<Vec<u8>>) -> String {
    match result {
        Err(CodecError::Corrupt(m)) => m,
        other => panic!("expected Corrupt, got {other:?}"),
    }
}

#[test]
fn declared_size_without_blocks_or_end_mark_is_truncated() {
    let m = corrupt_message(decompress(&hex("04224d186c70010000000000000074"), 100));
    assert_eq!(m, "lz4 frame is truncated: the end mark of frame 1 is missing");
}

#[test]
fn more_content_than_declared_is_an_error() {
    let m = corrupt_message(decompress(&hex("04224d186c700100000000000000740900008041000000004d9a6510"), 100));
    assert!(m.contains("declares 1 bytes of content but holds at least 9"), "{m}");
}

#[test]
fn magic_alone_is_a_truncated_header() {
    let m = corrupt_message(decompress(&hex("04224d18"), 100));
    assert_eq!(m, "lz4 frame is truncated: the header of frame 1 is incomplete");
}

#[test]
fn a_big_frame_cut_after_its_first_block_is_an_error() {
    let data = text(10 << 20, 10);
    let full = compress(&data);
    // magic, FLG, BD, 8-byte content size, header checksum: the first block size is at 15.
    let first_block = u32::from_le_bytes(full[15..19].try_into().unwrap()) & 0x7FFF_FFFF;
    let cut = 19 + first_block as usize;
    let m = corrupt_message(decompress(&full[..cut], data.len()));
    assert_eq!(m, "lz4 frame is truncated: the end mark of frame 1 is missing");
    assert_eq!(decompress(&full, data.len()).unwrap(), data);

    // The same without a content size or content checksum (what a stream writer produces).
    let info = lz4_flex::frame::FrameInfo::new().block_size(lz4_flex::frame::BlockSize::Max4MB);
    let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    std::io::Write::write_all(&mut encoder, &data).unwrap();
    let stream = encoder.finish().unwrap();
    let first_block = u32::from_le_bytes(stream[7..11].try_into().unwrap()) & 0x7FFF_FFFF;
    assert!(decompress(&stream[..11 + first_block as usize], data.len()).is_err());
    assert_eq!(decompress(&stream, data.len()).unwrap(), data);
}

#[test]
fn skippable_frames_are_skipped() {
    let frame = compress(b"after the skippable frame");
    let mut data = hex("502a4d1800000000");
    data.extend_from_slice(&frame);
    assert_eq!(decompress(&data, 100).unwrap(), b"after the skippable frame");

    // With a payload, with the last magic of the range, between and after frames.
    let mut data = frame.clone();
    data.extend_from_slice(&0x184D_2A5Fu32.to_le_bytes());
    data.extend_from_slice(&5u32.to_le_bytes());
    data.extend_from_slice(b"12345");
    data.extend_from_slice(&compress(b"!"));
    data.extend_from_slice(&hex("532a4d1801000000ff"));
    assert_eq!(decompress(&data, 100).unwrap(), b"after the skippable frame!");

    // Skippable frames alone hold no content.
    assert_eq!(decompress(&hex("502a4d1800000000"), 100).unwrap(), b"");
}

#[test]
fn truncated_skippable_frames_are_errors() {
    let m = corrupt_message(decompress(&hex("502a4d1808000000010203"), 100));
    assert!(m.contains("skippable frame is truncated") && m.contains("declares 8 bytes but only 3 remain"), "{m}");
    let m = corrupt_message(decompress(&hex("502a4d180800"), 100));
    assert!(m.contains("the size field of frame 1 is incomplete"), "{m}");
    let mut data = compress(b"x");
    data.extend_from_slice(&hex("502a4d18"));
    let m = corrupt_message(decompress(&data, 100));
    assert!(m.contains("frame 2"), "{m}");
}

// ---------------------------------------------------------------------------
// Crafted frames: every field of the format.
// ---------------------------------------------------------------------------

fn header_checksum(descriptor: &[u8]) -> u8 {
    (XxHash32::oneshot(0, descriptor) >> 8) as u8
}

/// The length of the first (non-skippable) frame of `frames`, walking its blocks.
fn frame_len(frames: &[u8]) -> usize {
    let flg = frames[4];
    let mut pos = 7 + if flg & 0x08 != 0 { 8 } else { 0 } + if flg & 0x01 != 0 { 4 } else { 0 };
    loop {
        let size = u32::from_le_bytes(frames[pos..pos + 4].try_into().unwrap());
        pos += 4;
        if size == 0 {
            break;
        }
        pos += (size & 0x7FFF_FFFF) as usize + if flg & 0x10 != 0 { 4 } else { 0 };
    }
    pos + if flg & 0x04 != 0 { 4 } else { 0 }
}

/// A frame assembled field by field.
struct Frame {
    flg: u8,
    bd: u8,
    content_size: Option<u64>,
    dictionary: Option<u32>,
    /// (stored uncompressed, bytes as they appear in the frame)
    blocks: Vec<(bool, Vec<u8>)>,
    /// The content, for the content checksum.
    content: Vec<u8>,
}

impl Frame {
    /// Independent 64 KB blocks, block and content checksums, no content size.
    fn new() -> Frame {
        Frame { flg: 0x74, bd: 0x40, content_size: None, dictionary: None, blocks: Vec::new(), content: Vec::new() }
    }
    fn stored(mut self, data: &[u8]) -> Frame {
        self.blocks.push((true, data.to_vec()));
        self.content.extend_from_slice(data);
        self
    }
    fn compressed(mut self, data: &[u8]) -> Frame {
        self.blocks.push((false, lz4_flex::block::compress(data)));
        self.content.extend_from_slice(data);
        self
    }
    fn linked(mut self, data: &[u8]) -> Frame {
        self.flg &= !0x20;
        let block = lz4_flex::block::compress_with_dict(data, &self.content);
        self.blocks.push((false, block));
        self.content.extend_from_slice(data);
        self
    }
    fn bytes(&self) -> Vec<u8> {
        let mut flg = self.flg;
        if self.content_size.is_some() {
            flg |= 0x08;
        }
        if self.dictionary.is_some() {
            flg |= 0x01;
        }
        let mut out = 0x184D_2204u32.to_le_bytes().to_vec();
        out.extend([flg, self.bd]);
        if let Some(size) = self.content_size {
            out.extend(size.to_le_bytes());
        }
        if let Some(id) = self.dictionary {
            out.extend(id.to_le_bytes());
        }
        out.push(header_checksum(&out[4..]));
        for (stored, data) in &self.blocks {
            out.extend((data.len() as u32 | if *stored { 0x8000_0000 } else { 0 }).to_le_bytes());
            out.extend(data);
            if flg & 0x10 != 0 {
                out.extend(XxHash32::oneshot(0, data).to_le_bytes());
            }
        }
        out.extend([0; 4]);
        if flg & 0x04 != 0 {
            out.extend(XxHash32::oneshot(0, &self.content).to_le_bytes());
        }
        out
    }
}

#[test]
fn crafted_frames_decode() {
    let a = text(70_000, 1);
    let b = text(50_000, 2);
    let frame = Frame::new().compressed(&a[..60_000]).stored(&b[..100]).compressed(&b);
    let mut expected = a[..60_000].to_vec();
    expected.extend_from_slice(&b[..100]);
    expected.extend_from_slice(&b);
    assert_eq!(decompress(&frame.bytes(), usize::MAX).unwrap(), expected);

    // No checksums at all, a declared size, an empty stored block, a 1 MB block maximum.
    let mut bare = Frame::new().stored(b"").compressed(&a);
    bare.flg = 0x60;
    bare.bd = 0x60;
    bare.content_size = Some(a.len() as u64);
    assert_eq!(decompress(&bare.bytes(), a.len()).unwrap(), a);

    // An empty frame.
    assert_eq!(decompress(&Frame::new().bytes(), 0).unwrap(), b"");
}

#[test]
fn linked_blocks_refer_back_into_earlier_blocks() {
    let a = text(65_536, 3);
    let mut b = a[10_000..40_000].to_vec(); // all of it a match 25-56 KB back
    b.extend_from_slice(&a[..3_000]); // a match 62-65 KB back
    let frame = Frame::new().compressed(&a).linked(&b).linked(&a[60_000..]);
    let bytes = frame.bytes();
    assert!(bytes.len() < 30_000, "the linked blocks should be small: {}", bytes.len());
    assert_eq!(decompress(&bytes, usize::MAX).unwrap(), frame.content);
    // Bound by the limit like any frame.
    assert!(matches!(decompress(&bytes, frame.content.len() - 1), Err(CodecError::TooLarge(_))));
    // An independent frame with the same blocks refers to data it does not have.
    let mut independent = frame;
    independent.flg |= 0x20;
    let m = corrupt_message(decompress(&independent.bytes(), usize::MAX));
    assert!(m.contains("block 2 of frame 1 is damaged"), "{m}");
}

#[test]
fn linked_blocks_do_not_reach_into_the_previous_frame() {
    let a = text(10_000, 4);
    let first = Frame::new().compressed(&a).bytes();
    // A frame whose only block refers back into `a`, as if it were its dictionary.
    let mut second = Frame::new();
    second.flg &= !0x20;
    second.blocks.push((false, lz4_flex::block::compress_with_dict(&a, &a)));
    second.content = a.clone();
    let mut both = first;
    both.extend(second.bytes());
    let m = corrupt_message(decompress(&both, usize::MAX));
    assert!(m.contains("block 1 of frame 2") && m.contains("before the start of the frame"), "{m}");
}

#[test]
fn damaged_fields_are_errors() {
    let data = text(5_000, 6);
    let good = Frame::new().compressed(&data);
    assert_eq!(decompress(&good.bytes(), usize::MAX).unwrap(), data);

    let check = |bytes: Vec<u8>, expected: &str| {
        let m = corrupt_message(decompress(&bytes, usize::MAX));
        assert!(m.contains(expected), "expected {expected:?} in {m:?}");
    };

    // Header: version, reserved bits, block size codes, header checksum.
    for (flg, bd, expected) in [
        (0x34, 0x40, "version is 0"),
        (0xB4, 0x40, "version is 2"),
        (0x76, 0x40, "reserved bit of its flags"),
        (0x74, 0xC0, "reserved bit of its block descriptor"),
        (0x74, 0x41, "reserved bit of its block descriptor"),
        (0x74, 0x30, "block size code 3"),
        (0x74, 0x00, "block size code 0"),
    ] {
        let mut frame = Frame::new().compressed(&data);
        frame.flg = flg;
        frame.bd = bd;
        check(frame.bytes(), expected);
    }
    let mut bytes = good.bytes();
    bytes[6] ^= 1;
    check(bytes, "lz4 frame header checksum mismatch (frame 1)");

    // A dictionary is refused by its ID.
    let mut with_dictionary = Frame::new().compressed(&data);
    with_dictionary.dictionary = Some(0x1234_ABCD);
    check(with_dictionary.bytes(), "lz4 frame needs dictionary 0x1234ABCD, which this function does not take");

    // Block and content checksums.
    let mut bytes = good.bytes();
    let last_block_byte = bytes.len() - 13;
    bytes[last_block_byte - 50] ^= 0x10;
    check(bytes, "block checksum mismatch (block 1 of frame 1)");
    let mut bytes = good.bytes();
    let n = bytes.len();
    bytes[n - 1] ^= 0x80;
    check(bytes, "lz4 frame content checksum mismatch (frame 1): the data is damaged");
    let mut no_block_checksum = Frame::new().stored(b"abc");
    no_block_checksum.flg = 0x64;
    let mut bytes = no_block_checksum.bytes();
    bytes[11] = b'x'; // the stored block's first byte
    check(bytes, "content checksum mismatch");

    // Content size: fewer bytes than declared, more bytes than declared.
    for (declared, expected) in
        [(5_001, "declares 5001 bytes of content but holds 5000"), (4_999, "holds at least 5000")]
    {
        let mut frame = Frame::new().compressed(&data);
        frame.content_size = Some(declared);
        check(frame.bytes(), expected);
    }
    let mut frame = Frame::new().stored(&data);
    frame.content_size = Some(10);
    check(frame.bytes(), "declares 10 bytes of content but holds at least 5000");

    // Blocks above the block maximum, stored or compressed.
    let big = text(70_000, 7);
    check(
        Frame::new().stored(&big).bytes(),
        "block 1 of frame 1 is 70000 bytes long, more than the frame's block maximum of 65536",
    );
    check(
        Frame::new().compressed(&big).bytes(),
        "block 1 of frame 1 is damaged: it decodes to more than the frame's block maximum of 65536",
    );

    // A block that is not LZ4.
    let mut garbage = Frame::new();
    garbage.blocks.push((false, vec![0xF0, 1, 2]));
    check(garbage.bytes(), "block 1 of frame 1 is damaged");
}

#[test]
fn content_size_zero_means_unknown_as_in_the_reference_decoder() {
    // lz4frame.c treats a recorded content size of 0 as "not recorded" (`lz4 -d` accepts such
    // a frame); its encoder never writes 0 for content that is not empty.
    let mut frame = Frame::new().stored(b"hello");
    frame.content_size = Some(0);
    assert_eq!(decompress(&frame.bytes(), 100).unwrap(), b"hello");
    assert_eq!(decompress(&compress(b""), 0).unwrap(), b"");
}

#[test]
fn trailing_bytes_and_foreign_input_are_errors() {
    let m = corrupt_message(decompress(b"", 100));
    assert!(m.contains("not an lz4 frame"), "{m}");
    let m = corrupt_message(decompress(&hex("02214c18"), 100));
    assert!(m.contains("legacy lz4 format"), "{m}");
    let m = corrupt_message(decompress(b"\x28\xb5\x2f\xfd", 100));
    assert!(m.contains("not an lz4 frame (bad magic number)"), "{m}");
    for tail in [&b"\0"[..], b"\x04\x22\x4d", b"\x04\x22\x4d\x19rest"] {
        let mut data = compress(b"payload");
        data.extend_from_slice(tail);
        let m = corrupt_message(decompress(&data, 100));
        assert!(m.contains(&format!("{} trailing bytes after frame 1", tail.len())), "{m}");
    }
}

#[test]
fn limits_are_enforced_before_allocating_and_while_decoding() {
    // A declared size above the limit: TooLarge, with the one over-limit wording.
    let frame = compress(&text(1000, 8));
    match decompress(&frame, 999) {
        Err(CodecError::TooLarge(m)) => {
            assert!(m.starts_with("lz4 frame declares 1000 decompressed bytes, more than the limit of 999"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    // A tiny frame declaring an enormous size under an unlimited limit must not allocate it:
    // it is found to be truncated, not out of memory.
    let mut huge = Frame::new();
    huge.content_size = Some(1 << 60);
    let mut bytes = huge.bytes();
    bytes.truncate(bytes.len() - 8); // drop the end mark and content checksum
    let m = corrupt_message(decompress(&bytes, usize::MAX));
    assert!(m.contains("end mark of frame 1 is missing"), "{m}");

    // No declared size: the output stops at the limit.
    let data = text(196_608, 9); // three blocks of 64 KB
    let stream =
        Frame::new().compressed(&data[..65_536]).compressed(&data[65_536..131_072]).stored(&data[131_072..]).bytes();
    assert_eq!(decompress(&stream, data.len()).unwrap(), data);
    for limit in [0, 1, 65_535, 65_536, 100_000, 131_072, data.len() - 1] {
        assert!(matches!(decompress(&stream, limit), Err(CodecError::TooLarge(_))), "limit {limit}");
    }

    // Concatenated frames count together.
    let mut two = compress(b"first,");
    two.extend(compress(b"second"));
    assert_eq!(decompress(&two, 12).unwrap(), b"first,second");
    assert!(matches!(decompress(&two, 11), Err(CodecError::TooLarge(_))));
    assert!(matches!(decompress(&two, 5), Err(CodecError::TooLarge(_))));
}

#[test]
fn our_frames_round_trip_and_declare_their_size() {
    for len in [0, 1, 100, 65_536, 300_000] {
        let data = text(len, len as u64);
        let frame = compress(&data);
        assert_eq!(declared_content_size(&frame), Some(len as u64));
        assert_eq!(decompress(&frame, len).unwrap(), data);
    }
}
