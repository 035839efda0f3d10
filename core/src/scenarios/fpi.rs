//! Full-page images in WAL under each `wal_compression` setting, computed the way PostgreSQL 15
//! writes them (`XLogRecordAssemble` and `XLogCompressBackupBlock` in xloginsert.c).
//!
//! For every page that is modified for the first time after a checkpoint, WAL stores an image:
//!
//! 1. **Hole removal.** For a standard page, the all-zero gap between `pd_lower` and `pd_upper`
//!    is cut out when `pd_lower >= SizeOfPageHeaderData`, `pd_upper > pd_lower` and
//!    `pd_upper <= BLCKSZ`; the image is `BLCKSZ - hole_length` bytes.
//! 2. **Compression** (`wal_compression` = `pglz`, `lz4` or `zstd`) of the hole-less image:
//!    pglz with the `default` strategy, `LZ4_compress_default`, or `ZSTD_compress` at
//!    `ZSTD_CLEVEL_DEFAULT` (3).
//! 3. **Must pay for its header.** A compressed image of a page with a hole needs 2 extra bytes
//!    (the hole length; `SizeOfXLogRecordBlockCompressHeader`). The compressed image is kept only
//!    if `compressed + extra < BLCKSZ - hole_length`; otherwise the raw hole-less image is stored.
//!
//! `fpi_bytes` counts what `pg_walinspect`'s `fpi_length` counts: the image bytes (`bimg_len`),
//! without the 5-byte block image header every image has in all settings, nor the extra 2 bytes
//! for a compressed image with a hole.

use super::super::lab::codecs::Codec;
use super::super::lab::harness::thread_cpu_seconds;
use crate::lab::payload::{page_hole, page_image_without_hole, BLCKSZ};

/// `SizeOfXLogRecordBlockCompressHeader`: the hole length stored beside a compressed image.
pub const COMPRESSED_HOLE_HEADER: usize = 2;

/// The bytes WAL stores for one page image, and whether they are compressed.
pub fn stored_image(page: &[u8], codec: Option<&mut (dyn Codec + 'static)>, scratch: &mut Vec<u8>) -> (usize, bool) {
    let (_, hole_length) = page_hole(page);
    let orig_len = BLCKSZ - hole_length;
    let Some(codec) = codec else {
        return (orig_len, false);
    };
    let image = page_image_without_hole(page);
    let extra = if hole_length != 0 { COMPRESSED_HOLE_HEADER } else { 0 };
    match codec.compress(&image, scratch) {
        Some(len) if len + extra < orig_len => (len, true),
        _ => (orig_len, false),
    }
}

/// One `wal_compression` setting's totals.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FpiEstimate {
    pub wal_compression: String,
    pub images: u64,
    pub compressed_images: u64,
    pub fpi_bytes: u64,
    pub cpu_seconds: f64,
}

impl FpiEstimate {
    pub fn cpu_ns_per_image(&self) -> f64 {
        if self.images == 0 {
            0.0
        } else {
            self.cpu_seconds * 1e9 / self.images as f64
        }
    }
}

/// Accumulates images of pages under several settings; `None` as codec means `off`.
pub struct FpiEstimator {
    settings: Vec<(FpiEstimate, Option<Box<dyn Codec>>)>,
    scratch: Vec<u8>,
}

impl FpiEstimator {
    pub fn new(settings: Vec<(String, Option<Box<dyn Codec>>)>) -> FpiEstimator {
        let settings = settings
            .into_iter()
            .map(|(name, codec)| {
                let estimate = FpiEstimate {
                    wal_compression: name,
                    images: 0,
                    compressed_images: 0,
                    fpi_bytes: 0,
                    cpu_seconds: 0.0,
                };
                (estimate, codec)
            })
            .collect();
        FpiEstimator { settings, scratch: Vec::with_capacity(2 * BLCKSZ) }
    }

    /// Add one page (BLCKSZ bytes as in shared buffers) under every setting.
    pub fn add_page(&mut self, page: &[u8]) {
        for (estimate, codec) in &mut self.settings {
            let cpu = thread_cpu_seconds();
            let (len, compressed) = stored_image(page, codec.as_deref_mut(), &mut self.scratch);
            estimate.cpu_seconds += thread_cpu_seconds() - cpu;
            estimate.images += 1;
            estimate.compressed_images += compressed as u64;
            estimate.fpi_bytes += len as u64;
        }
    }

    pub fn finish(self) -> Vec<FpiEstimate> {
        self.settings.into_iter().map(|(e, _)| e).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::codecs::{rust_codec, CodecSpec};
    use crate::lab::payload::SeededRng;

    fn page(lower: u16, upper: u16, fill: impl Fn(usize) -> u8) -> Vec<u8> {
        let mut p: Vec<u8> = (0..BLCKSZ).map(fill).collect();
        p[12..14].copy_from_slice(&lower.to_le_bytes());
        p[14..16].copy_from_slice(&upper.to_le_bytes());
        for b in &mut p[lower as usize..upper as usize] {
            *b = 0;
        }
        p
    }

    fn codec(name: &str) -> Box<dyn Codec> {
        rust_codec(&CodecSpec::parse(name).unwrap(), 3).unwrap().unwrap()
    }

    #[test]
    fn off_stores_the_hole_less_image() {
        let p = page(200, 6000, |i| (i % 7) as u8);
        assert_eq!(stored_image(&p, None, &mut Vec::new()), (BLCKSZ - 5800, false));
    }

    #[test]
    fn compression_kept_only_when_it_beats_the_extra_header() {
        let compressible = page(200, 6000, |i| (i % 7) as u8);
        let (len, compressed) = stored_image(&compressible, Some(codec("pglz").as_mut()), &mut Vec::new());
        assert!(compressed && len < 200);
        let mut rng = SeededRng::new(5);
        let mut random = page(1000, 1000, |_| 0);
        rng.fill(&mut random[24..]);
        random[12..14].copy_from_slice(&1000u16.to_le_bytes());
        random[14..16].copy_from_slice(&1000u16.to_le_bytes());
        for name in ["pglz", "lz4", "zstd"] {
            assert_eq!(stored_image(&random, Some(codec(name).as_mut()), &mut Vec::new()), (BLCKSZ, false), "{name}");
        }
    }

    /// A codec that saves exactly `saving` bytes: the 2-byte hole header decides.
    struct Saves(usize);
    impl Codec for Saves {
        fn name(&self) -> String {
            "saves".into()
        }
        fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
            dst.clear();
            dst.extend_from_slice(&src[..src.len() - self.0]);
            Some(dst.len())
        }
        fn decompress(&mut self, _: &[u8], _: &mut [u8]) -> crate::error::Result<()> {
            unreachable!()
        }
    }

    #[test]
    fn the_boundary_is_compressed_plus_extra_less_than_original() {
        let with_hole = page(100, 200, |i| i as u8);
        let orig = BLCKSZ - 100;
        assert_eq!(stored_image(&with_hole, Some(&mut Saves(2)), &mut Vec::new()), (orig, false));
        assert_eq!(stored_image(&with_hole, Some(&mut Saves(3)), &mut Vec::new()), (orig - 3, true));
        let no_hole = page(8192, 8192, |i| i as u8);
        assert_eq!(stored_image(&no_hole, Some(&mut Saves(1)), &mut Vec::new()), (BLCKSZ - 1, true));
    }

    #[test]
    fn estimator_totals_per_setting() {
        let mut est = FpiEstimator::new(vec![("off".into(), None), ("pglz".into(), Some(codec("pglz")))]);
        for _ in 0..3 {
            est.add_page(&page(200, 6000, |i| (i % 7) as u8));
        }
        let rows = est.finish();
        assert_eq!(rows[0].fpi_bytes, 3 * (BLCKSZ as u64 - 5800));
        assert_eq!((rows[1].images, rows[1].compressed_images), (3, 3));
        assert!(rows[1].fpi_bytes < rows[0].fpi_bytes / 4);
    }
}
