//! Tests of the timing loop: counts, verification, interleaving, merging, memory bounds.

use super::*;
use crate::lab::codecs::tests::codec;
use crate::lab::payload::{synthetic, SyntheticKind};
use crate::registry::{MethodKind, METHODS};

fn payload() -> Payload {
    Payload::new(
        "mixed",
        vec![
            synthetic(SyntheticKind::Text, 20_000, 1).unwrap(),
            synthetic(SyntheticKind::Random, 5_000, 2).unwrap(),
            vec![0; 9000],
        ],
    )
}

#[test]
fn rows_count_bytes_slices_and_raw_fallback() {
    let p = payload();
    for info in METHODS.iter().filter(|m| !m.server) {
        let name = info.name;
        let row = bench_codec(&p, 2048, codec(name).as_mut(), 2, &mut NoHooks).unwrap();
        assert_eq!(row.raw_bytes, 34_000, "{name}");
        assert_eq!(row.slices, 10 + 3 + 5, "{name}");
        assert!(row.stored_bytes <= row.raw_bytes, "{name}");
        // the random piece never shrinks, so at least its three slices are stored raw
        assert!(row.raw_slices >= 3, "{name}: {}", row.raw_slices);
        assert!(row.compress_mbps > 0.0 && row.decompress_mbps_best >= row.decompress_mbps, "{name}");
        assert!(row.decompress_mbps.is_some(), "{name}");
        assert_eq!(row.iterations, 2);
    }
    let row = bench_codec(&p, 0, codec("memcpy").as_mut(), 1, &mut NoHooks).unwrap();
    assert_eq!((row.slices, row.raw_slices, row.ratio), (3, 3, 1.0));
}

/// A method that stored every slice raw decompressed nothing: no decompression speed, rather
/// than the speed of copying raw slices back.
#[test]
fn all_raw_has_no_decompression_speed() {
    let random = Payload::new("random", vec![synthetic(SyntheticKind::Random, 20_000, 3).unwrap()]);
    for name in ["pglz", "lz4", "memcpy"] {
        let row = bench_codec(&random, 2048, codec(name).as_mut(), 2, &mut NoHooks).unwrap();
        assert_eq!(row.raw_slices, row.slices, "{name}");
        let none = (row.decompress_mbps, row.decompress_mbps_best, row.decompress_ns_per_byte) == (None, None, None);
        // memcpy stores everything as is by design: its copy back is still timed.
        assert_eq!(none, name != "memcpy", "{name}");
        assert!(row.compress_mbps > 0.0, "{name}");
    }
    let text = Payload::new("text", vec![synthetic(SyntheticKind::Text, 20_000, 3).unwrap()]);
    let row = bench_codec(&text, 2048, codec("pglz").as_mut(), 2, &mut NoHooks).unwrap();
    assert!(row.decompress_mbps.is_some_and(|s| s > 0.0) && row.decompress_ns_per_byte.is_some());
}

#[test]
fn busy_when_wall_time_exceeds_cpu_time_by_half() {
    assert!(busy(1.51, 1.0) && busy(0.2, 0.0));
    assert!(!busy(1.5, 1.0) && !busy(1.0, 1.0) && !busy(0.9, 1.0));
    let m = Measurement {
        slices: 1,
        raw_bytes: 10,
        stored_bytes: 5,
        compress_secs: vec![1.0],
        decompress_secs: vec![1.0],
        compress_cpu: 0.5,
        decompress_cpu: 0.5,
        ..Measurement::default()
    };
    let spec = codec("lz4").spec();
    assert!(m.row("x", &spec, 0).busy);
    let idle = Measurement { compress_cpu: 1.0, decompress_cpu: 0.9, ..m };
    assert!(!idle.row("x", &spec, 0).busy);
}

/// A codec whose decoder is wrong: the verifier must catch it.
struct BrokenDecoder;
impl Codec for BrokenDecoder {
    fn spec(&self) -> MethodSpec {
        MethodSpec { kind: MethodKind::Memcpy, level: None }
    }
    fn compress_bound(&self, len: usize) -> usize {
        len
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], _: &mut dyn FnMut()) -> Result<Option<usize>> {
        dst[..src.len() / 2].copy_from_slice(&src[..src.len() / 2]);
        Ok(Some(src.len() / 2))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], _: &mut dyn FnMut()) -> Result<()> {
        dst[..src.len()].copy_from_slice(src);
        dst[src.len()..].fill(b'?');
        Ok(())
    }
}

/// A decoder that writes nothing: it must not pass on what an earlier method left.
struct LazyDecoder;
impl Codec for LazyDecoder {
    fn spec(&self) -> MethodSpec {
        MethodSpec { kind: MethodKind::Memcpy, level: None }
    }
    fn compress_bound(&self, _: usize) -> usize {
        1
    }
    fn compress(&mut self, _: &[u8], _: &mut [u8], _: &mut dyn FnMut()) -> Result<Option<usize>> {
        Ok(Some(0))
    }
    fn decompress(&mut self, _: &[u8], _: &mut [u8], _: &mut dyn FnMut()) -> Result<()> {
        Ok(())
    }
}

/// A compressor that fails: an error, not a raw slice.
struct Failing;
impl Codec for Failing {
    fn spec(&self) -> MethodSpec {
        MethodSpec { kind: MethodKind::Memcpy, level: None }
    }
    fn compress_bound(&self, len: usize) -> usize {
        len
    }
    fn compress(&mut self, _: &[u8], _: &mut [u8], _: &mut dyn FnMut()) -> Result<Option<usize>> {
        Err(CodecError::invalid("cannot"))
    }
    fn decompress(&mut self, _: &[u8], _: &mut [u8], _: &mut dyn FnMut()) -> Result<()> {
        unreachable!()
    }
}

#[test]
fn a_broken_round_trip_or_a_failure_is_an_error_not_a_number() {
    let err = bench_codec(&payload(), 8192, &mut BrokenDecoder, 1, &mut NoHooks).unwrap_err();
    assert!(err.message().contains("round trip broken: memcpy"), "{err}");
    let mut good = codec("lz4");
    let mut codecs: [&mut dyn Codec; 2] = [good.as_mut(), &mut LazyDecoder];
    assert!(measure_codecs(&payload(), 2048, &mut codecs, 1, &mut NoHooks).is_err());
    assert!(matches!(bench_codec(&payload(), 0, &mut Failing, 1, &mut NoHooks), Err(CodecError::InvalidParameter(_))));
}

#[test]
fn hooks_are_called() {
    struct Count(usize);
    impl Hooks for Count {
        fn tick(&mut self) {
            self.0 += 1;
        }
    }
    let mut count = Count(0);
    bench_codec(&payload(), 64, codec("lz4").as_mut(), 1, &mut count).unwrap();
    assert!(count.0 > 10);
}

#[test]
fn interleaved_codecs_measure_like_separate_runs() {
    let p = payload();
    let (mut lz4, mut pglz) = (codec("lz4"), codec("pglz"));
    let together = {
        let mut codecs: [&mut dyn Codec; 2] = [lz4.as_mut(), pglz.as_mut()];
        measure_codecs(&p, 2048, &mut codecs, 3, &mut NoHooks).unwrap()
    };
    let alone = measure_codec(&p, 2048, pglz.as_mut(), 3, &mut NoHooks).unwrap();
    assert_eq!((together[1].stored_bytes, together[1].raw_slices), (alone.stored_bytes, alone.raw_slices));
    assert_ne!(together[0].stored_bytes, together[1].stored_bytes);
    assert!(together.iter().all(|m| m.compress_secs.len() == 3 && m.decompress_secs.len() == 3));
}

#[test]
fn merged_batches_equal_one_run_in_bytes() {
    let p = payload();
    let halves = [Payload::new("mixed", p.pieces[..1].to_vec()), Payload::new("mixed", p.pieces[1..].to_vec())];
    let mut codec = codec("pglz");
    let whole = measure_codec(&p, 2048, codec.as_mut(), 3, &mut NoHooks).unwrap();
    let mut merged = Measurement::default();
    for half in &halves {
        merged.merge(&measure_codec(half, 2048, codec.as_mut(), 3, &mut NoHooks).unwrap());
    }
    assert_eq!(
        (merged.slices, merged.raw_slices, merged.raw_bytes, merged.stored_bytes),
        (whole.slices, whole.raw_slices, whole.raw_bytes, whole.stored_bytes)
    );
    assert_eq!(merged.row("mixed", &codec.spec(), 2048).iterations, 3);
}

#[test]
fn memory_is_bounded_by_the_input_whatever_the_slice_size() {
    let p = Payload::new("zeros", vec![vec![0u8; 100_000]]);
    let (mut zstd, mut lz4, mut pglz) = (codec("zstd:1"), codec("lz4"), codec("pglz"));
    let codecs: [&mut dyn Codec; 3] = [zstd.as_mut(), lz4.as_mut(), pglz.as_mut()];
    for slice_size in [1, 7, 2048, 0] {
        let arenas = Arenas::new(&p, slice_size, &codecs).unwrap();
        assert_eq!(arenas.unpacked.len(), 100_000);
        // The input plus one slice's worst growth, which is under 10% + 1 KB for every codec.
        let longest = if slice_size == 0 { 100_000 } else { slice_size };
        assert!(arenas.packed.len() <= 100_000 + longest / 10 + 1024, "slice {slice_size}: {}", arenas.packed.len());
        assert_eq!(arenas.ends.len(), p.slice_count(slice_size));
    }
    // 1-byte slices: every one stored raw, all verified.
    let mut codecs: [&mut dyn Codec; 3] = [zstd.as_mut(), lz4.as_mut(), pglz.as_mut()];
    let ms =
        measure_codecs(&Payload::new("tiny", vec![b"abcdefgh".repeat(50)]), 1, &mut codecs, 1, &mut NoHooks).unwrap();
    assert!(ms.iter().all(|m| m.raw_slices == 400 && m.stored_bytes == 400));
}

#[test]
fn the_bare_loop_stores_what_the_harness_stores_and_still_verifies() {
    let p = payload();
    for name in ["memcpy", "pglz", "lz4", "zstd"] {
        let harness = measure_codec(&p, 2048, codec(name).as_mut(), 3, &mut NoHooks).unwrap();
        let bare = measure_bare(&p, 2048, codec(name).as_mut(), 3, &mut NoHooks).unwrap();
        assert_eq!(
            (bare.slices, bare.raw_bytes, bare.stored_bytes, bare.raw_slices),
            (harness.slices, harness.raw_bytes, harness.stored_bytes, harness.raw_slices),
            "{name}"
        );
        assert!(bare.compress_secs.len() == 3 && bare.decompress_secs.len() == 3, "{name}");
        assert!(bare.compress_secs.iter().chain(&bare.decompress_secs).all(|&t| t > 0.0), "{name}");
    }
    let err = measure_bare(&p, 8192, &mut BrokenDecoder, 1, &mut NoHooks).unwrap_err();
    assert!(err.message().contains("round trip broken: memcpy"), "{err}");
    assert!(measure_bare(&p, 2048, &mut LazyDecoder, 1, &mut NoHooks).is_err());
}

#[test]
fn appended_runs_are_one_measurement_with_more_iterations() {
    let p = payload();
    let mut total = Measurement::default();
    for iterations in [2, 3] {
        total.append(measure_codec(&p, 2048, codec("lz4").as_mut(), iterations, &mut NoHooks).unwrap());
    }
    let once = measure_codec(&p, 2048, codec("lz4").as_mut(), 1, &mut NoHooks).unwrap();
    assert_eq!((total.compress_secs.len(), total.decompress_secs.len()), (5, 5));
    assert_eq!(
        (total.slices, total.raw_bytes, total.stored_bytes, total.raw_slices),
        (once.slices, once.raw_bytes, once.stored_bytes, once.raw_slices)
    );
    assert_eq!(total.row("x", &codec("lz4").spec(), 2048).iterations, 5);
}

/// lz4 as a codec that ran each pass's calls elsewhere for 2 s of wall and 1.5 s of CPU.
struct Elsewhere(Box<dyn Codec>);
impl Codec for Elsewhere {
    fn spec(&self) -> MethodSpec {
        self.0.spec()
    }
    fn compress_bound(&self, len: usize) -> usize {
        self.0.compress_bound(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        self.0.compress(src, dst, tick)
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        self.0.decompress(src, dst, tick)
    }
    fn take_time_elsewhere(&mut self) -> (f64, f64) {
        (2.0, 1.5)
    }
}

/// Time a codec spent on another thread counts in every pass of both loops.
#[test]
fn time_elsewhere_is_added_to_each_pass() {
    let p = payload();
    let mut codec = Elsewhere(codec("lz4"));
    for m in [
        measure_codec(&p, 2048, &mut codec, 3, &mut NoHooks).unwrap(),
        measure_bare(&p, 2048, &mut codec, 3, &mut NoHooks).unwrap(),
    ] {
        assert!(m.compress_secs.iter().chain(&m.decompress_secs).all(|&s| (2.0..2.5).contains(&s)), "{m:?}");
        assert!((4.5..5.5).contains(&m.compress_cpu) && (4.5..5.5).contains(&m.decompress_cpu), "{m:?}");
    }
}

/// Few long slices still tick after each [`TICK_BYTES`] of them, in both passes: 8 whole
/// pieces of 300,000 bytes tick after every slice (64 slices alone would never have come).
#[test]
fn long_slices_tick_by_bytes() {
    struct Count(usize);
    impl Hooks for Count {
        fn tick(&mut self) {
            self.0 += 1;
        }
    }
    let p = Payload::new("long", vec![synthetic(SyntheticKind::Text, 300_000, 1).unwrap(); 8]);
    let mut count = Count(0);
    // A warm-up and one timed iteration: two round trips of two passes of 8 slices.
    bench_codec(&p, 0, codec("lz4").as_mut(), 1, &mut count).unwrap();
    assert!(count.0 >= 2 * 2 * 8, "{}", count.0);
}
