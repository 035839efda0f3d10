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
//! `stored_bytes` counts what `pg_walinspect`'s `fpi_length` counts: the image bytes (`bimg_len`),
//! without the 5-byte block image header every image has in all settings, nor the extra 2 bytes
//! for a compressed image with a hole.

use serde::Serialize;

use crate::clock::thread_cpu_seconds;
use crate::error::Result;
use crate::lab::codecs::{compress_to_vec, Codec};
use crate::page::{self, Hole, BLCKSZ};
use crate::pg_compression::WalCompression;
use crate::registry::Named;

/// `SizeOfXLogRecordBlockCompressHeader`: the hole length stored beside a compressed image.
pub const COMPRESSED_HOLE_HEADER: usize = 2;

/// The bytes WAL stores for one page image, and whether they are compressed.
pub fn stored_image(page: &[u8], codec: Option<&mut (dyn Codec + '_)>, scratch: &mut Vec<u8>) -> Result<(usize, bool)> {
    let (_, hole_length) = page::hole(page);
    let orig_len = BLCKSZ - hole_length;
    let Some(codec) = codec else {
        return Ok((orig_len, false));
    };
    let image = Hole::Removed.apply(page);
    Ok(match compress_to_vec(codec, &image, scratch, &mut || ())? {
        Some(len) if keeps_compressed(len, hole_length) => (len, true),
        _ => (orig_len, false),
    })
}

/// `XLogCompressBackupBlock`'s rule: a compressed image is kept only if it and its extra
/// header (for a page with a hole) are shorter than the raw hole-less image.
pub fn keeps_compressed(compressed_len: usize, hole_length: usize) -> bool {
    let extra = if hole_length != 0 { COMPRESSED_HOLE_HEADER } else { 0 };
    compressed_len + extra < BLCKSZ - hole_length
}

/// One `wal_compression` setting's totals.
#[derive(Debug, Clone, PartialEq)]
pub struct FpiEstimate {
    pub wal_compression: WalCompression,
    pub images: u64,
    pub compressed_images: u64,
    pub fpi_bytes: u64,
    pub cpu_seconds: f64,
}

/// One result row of `estimate_wal_compression`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FpiRow {
    pub wal_compression: WalCompression,
    pub images: i64,
    pub compressed_images: i64,
    /// The images' bytes without compression (what `off` stores: hole removed).
    pub raw_bytes: i64,
    /// The images' bytes under this setting (pg_walinspect's `fpi_length`).
    pub stored_bytes: i64,
    /// raw_bytes / stored_bytes.
    pub ratio: f64,
    /// CPU seconds (thread CPU clock) to compress the images under this setting.
    pub compress_cpu_seconds: f64,
}

/// Accumulates images of pages under several settings; `None` as codec means `off`.
pub struct FpiEstimator {
    settings: Vec<(FpiEstimate, Option<Box<dyn Codec>>)>,
    scratch: Vec<u8>,
}

impl FpiEstimator {
    pub fn new(settings: Vec<(WalCompression, Option<Box<dyn Codec>>)>) -> FpiEstimator {
        let settings = settings.into_iter().map(|(setting, codec)| (FpiEstimate::empty(setting), codec)).collect();
        FpiEstimator { settings, scratch: Vec::with_capacity(2 * BLCKSZ) }
    }

    /// Add one page (BLCKSZ bytes as in shared buffers) under every setting.
    pub fn add_page(&mut self, page: &[u8]) -> Result<()> {
        for (estimate, codec) in &mut self.settings {
            let cpu = thread_cpu_seconds();
            let (len, compressed) = stored_image(page, codec.as_deref_mut(), &mut self.scratch)?;
            estimate.cpu_seconds += thread_cpu_seconds() - cpu;
            estimate.images += 1;
            estimate.compressed_images += compressed as u64;
            estimate.fpi_bytes += len as u64;
        }
        Ok(())
    }

    pub fn finish(self) -> Vec<FpiEstimate> {
        self.settings.into_iter().map(|(e, _)| e).collect()
    }
}

impl FpiEstimate {
    fn empty(wal_compression: WalCompression) -> FpiEstimate {
        FpiEstimate { wal_compression, images: 0, compressed_images: 0, fpi_bytes: 0, cpu_seconds: 0.0 }
    }
}

/// Totals over several relations, each measured on all its pages or on a sample scaled up to
/// the relation (`scale` = pages of the relation / pages measured).
#[derive(Debug, Default)]
pub struct FpiTotals {
    totals: Vec<FpiEstimate>,
}

impl FpiTotals {
    pub fn add_scaled(&mut self, estimates: Vec<FpiEstimate>, scale: f64) {
        let scaled = |v: u64| (v as f64 * scale).round() as u64;
        for (i, e) in estimates.into_iter().enumerate() {
            if self.totals.len() <= i {
                self.totals.push(FpiEstimate::empty(e.wal_compression));
            }
            let t = &mut self.totals[i];
            t.images += scaled(e.images);
            t.compressed_images += scaled(e.compressed_images);
            t.fpi_bytes += scaled(e.fpi_bytes);
            t.cpu_seconds += e.cpu_seconds * scale;
        }
    }

    /// One row per `wal_compression` setting (zeros when nothing was added), with the ratio
    /// against `off` and the CPU per image.
    pub fn rows(&self) -> Vec<FpiRow> {
        let totals: Vec<FpiEstimate> = if self.totals.is_empty() {
            WalCompression::ALL.iter().map(|&setting| FpiEstimate::empty(setting)).collect()
        } else {
            self.totals.clone()
        };
        let off_bytes = totals[0].fpi_bytes;
        totals
            .into_iter()
            .map(|e| FpiRow {
                ratio: if e.fpi_bytes > 0 { off_bytes as f64 / e.fpi_bytes as f64 } else { 1.0 },
                compress_cpu_seconds: e.cpu_seconds,
                images: e.images as i64,
                compressed_images: e.compressed_images as i64,
                raw_bytes: off_bytes as i64,
                stored_bytes: e.fpi_bytes as i64,
                wal_compression: e.wal_compression,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::codecs::tests::codec;
    use crate::registry::{MethodKind, MethodSpec};
    use crate::rng::SeededRng;

    fn page(lower: u16, upper: u16, fill: impl Fn(usize) -> u8) -> Vec<u8> {
        let mut p: Vec<u8> = (0..BLCKSZ).map(fill).collect();
        p[12..14].copy_from_slice(&lower.to_le_bytes());
        p[14..16].copy_from_slice(&upper.to_le_bytes());
        for b in &mut p[lower as usize..upper as usize] {
            *b = 0;
        }
        p
    }

    #[test]
    fn off_stores_the_hole_less_image() {
        let p = page(200, 6000, |i| (i % 7) as u8);
        assert_eq!(stored_image(&p, None, &mut Vec::new()).unwrap(), (BLCKSZ - 5800, false));
    }

    #[test]
    fn compression_kept_only_when_it_beats_the_extra_header() {
        let compressible = page(200, 6000, |i| (i % 7) as u8);
        let (len, compressed) = stored_image(&compressible, Some(codec("pglz").as_mut()), &mut Vec::new()).unwrap();
        assert!(compressed && len < 200);
        let mut rng = SeededRng::new(5);
        let mut random = page(1000, 1000, |_| 0);
        rng.fill(&mut random[24..]);
        random[12..14].copy_from_slice(&1000u16.to_le_bytes());
        random[14..16].copy_from_slice(&1000u16.to_le_bytes());
        for name in ["pglz", "lz4", "zstd"] {
            assert_eq!(
                stored_image(&random, Some(codec(name).as_mut()), &mut Vec::new()).unwrap(),
                (BLCKSZ, false),
                "{name}"
            );
        }
    }

    /// A codec that saves exactly `saving` bytes: the 2-byte hole header decides.
    struct Saves(usize);
    impl Codec for Saves {
        fn spec(&self) -> MethodSpec {
            MethodSpec { kind: MethodKind::Memcpy, level: None }
        }
        fn compress_bound(&self, len: usize) -> usize {
            len
        }
        fn compress(&mut self, src: &[u8], dst: &mut [u8], _: &mut dyn FnMut()) -> Result<Option<usize>> {
            let n = src.len() - self.0;
            dst[..n].copy_from_slice(&src[..n]);
            Ok(Some(n))
        }
        fn decompress(&mut self, _: &[u8], _: &mut [u8], _: &mut dyn FnMut()) -> Result<()> {
            unreachable!()
        }
    }

    #[test]
    fn the_boundary_is_compressed_plus_extra_less_than_original() {
        let with_hole = page(100, 200, |i| i as u8);
        let orig = BLCKSZ - 100;
        assert_eq!(stored_image(&with_hole, Some(&mut Saves(2)), &mut Vec::new()).unwrap(), (orig, false));
        assert_eq!(stored_image(&with_hole, Some(&mut Saves(3)), &mut Vec::new()).unwrap(), (orig - 3, true));
        let no_hole = page(8192, 8192, |i| i as u8);
        assert_eq!(stored_image(&no_hole, Some(&mut Saves(1)), &mut Vec::new()).unwrap(), (BLCKSZ - 1, true));
    }

    #[test]
    fn estimator_totals_per_setting() {
        let mut est = FpiEstimator::new(vec![(WalCompression::Off, None), (WalCompression::Pglz, Some(codec("pglz")))]);
        for _ in 0..3 {
            est.add_page(&page(200, 6000, |i| (i % 7) as u8)).unwrap();
        }
        let rows = est.finish();
        assert_eq!(rows[0].fpi_bytes, 3 * (BLCKSZ as u64 - 5800));
        assert_eq!((rows[1].images, rows[1].compressed_images), (3, 3));
        assert!(rows[1].fpi_bytes < rows[0].fpi_bytes / 4);
        // Two relations, the second sampled at one page in ten: scaled up, ratio against off.
        let mut totals = FpiTotals::default();
        assert_eq!(totals.rows().len(), WalCompression::ALL.len());
        assert!(totals.rows().iter().all(|r| r.images == 0 && r.ratio == 1.0));
        totals.add_scaled(rows.clone(), 1.0);
        totals.add_scaled(rows, 10.0);
        let out = totals.rows();
        assert_eq!((out[0].images, out[1].compressed_images), (33, 33));
        assert_eq!(out[0].stored_bytes, 33 * (BLCKSZ as i64 - 5800));
        assert!(out.iter().all(|r| r.raw_bytes == out[0].stored_bytes));
        assert!((out[0].ratio - 1.0).abs() < 1e-12 && out[1].ratio > 4.0);
    }
}
