//! WAL what-if: the WAL a range of real records would have taken under each `wal_compression`
//! setting, and the CPU the server would have spent writing and replaying its full-page images.
//!
//! The extension reads the records with the server's own WAL reader and hands each one here:
//! its LSN, `xl_tot_len`, whether it is an `XLOG_SWITCH`, and its full-page images as stored
//! (`bimg_len`, hole, `bimg_info`'s compression method). For every setting:
//!
//! 1. **Each image is rebuilt** as the page it images (decompressed by the method it was stored
//!    with, hole zero-filled; the extension does this with `RestoreBlockImage`), the hole the
//!    record names is cut out again, and the hole-less image is compressed with the server's own
//!    C routine for that setting. [`keeps_compressed`] decides, as `XLogCompressBackupBlock`
//!    does, whether the compressed image is stored (then with the 2-byte hole header when the
//!    page has a hole) or the raw one.
//! 2. **Each record's length** under the setting is its real length with its images' bytes
//!    swapped: `xl_tot_len - Σ bytes stored now + Σ bytes stored under the setting`.
//! 3. **The records are laid out** from the range's start LSN ([`layout::WalCursor`]): MAXALIGN,
//!    page headers, segment switches. Under the setting the range was really written with,
//!    this reproduces the real byte count exactly.
//!
//! CPU is timed per batch of images (about 1 MB), interleaved by setting, a timed batch's
//! compressed images decompressed again with the same library (what replay would spend) and
//! verified against the original bytes. Memory is one batch, not the range.
//!
//! **Sizes from our encoders.** A setting may be given a *sizer* ([`WalWhatIf::size_with`]):
//! our encoder that writes the server's bytes exactly (our pglz is PostgreSQL's byte for byte,
//! our LZ4 blocks liblz4's), and faster. Its images' sizes then come from the sizer, and the
//! server's routine runs, timed, on the first batch and every [`TIMED_EVERY`]-th after it only,
//! where the sizer's output is also compared with the server's byte for byte: on the first
//! difference the sizer is dropped for the rest of the range ([`WalWhatIf::sizers_dropped`])
//! and the server's routine sizes every later batch. A setting without a sizer (zstd: the
//! server's libzstd may be another version than ours) is compressed by the server's routine in
//! every batch, and decompressed and verified in the timed ones. CPU is scaled from the timed
//! images by raw bytes, as for a sample.
//!
//! **Sampling.** With `sample` < 1 only every (1/sample)-th image is rebuilt and compressed,
//! evenly spaced and starting with the first. Records are laid out without their unsampled
//! images, and at the end those images are charged, in one sum, their raw bytes times the ratio
//! the sampled images give over the whole range (bytes in the record per raw byte) — a ratio
//! estimator, unbiased when the ratio drifts along the range (a running ratio was not: 5% high
//! on a pgbench run whose first images were its most compressible). CPU is scaled by raw bytes.
//! Counts of records and images are always exact; under `off` every figure is exact.

mod batch;
pub mod layout;
mod record;

pub use record::{lsn_text, ImageRef, RecordRef, RelationKey};

use std::collections::BTreeMap;
use std::ops::Range;

use serde::Serialize;

use crate::error::{try_resize, Result};
use crate::lab::codecs::Codec;
use crate::page::BLCKSZ;
use crate::pg_compression::WalCompression;
use crate::registry::Named;
use crate::CodecError;
use batch::{compress_batch, push_results, run_timed, same_images, Batch};
use layout::{WalCursor, WalLayout};

/// Hole-less images buffered before a timed round of compression.
const BATCH_BYTES: usize = 1 << 20;

/// With a sizer, the server's routine runs on the first batch and every this many after it.
pub const TIMED_EVERY: u64 = 8;

/// The WAL read is cut in pieces of this many bytes (by the records' LSNs) to see how the
/// bytes an image saves vary along it ([`WalWhatIf::chunks`]).
pub const CHUNK_BYTES: u64 = 1 << 20;

/// One piece of [`CHUNK_BYTES`] of the WAL read: the images sampled in it and, per setting
/// (in the what-if's order, `off` first), the bytes those images would take fewer in their
/// records than as written (negative where they would take more).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkSavings {
    /// Which piece: its records start at LSNs from `index * CHUNK_BYTES` on.
    pub index: u64,
    pub images: u64,
    pub saved: Vec<i64>,
}

/// One result row of `wal_whatif`: the range under one `wal_compression` setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WalWhatIfRow {
    pub wal_compression: WalCompression,
    pub start_lsn: String,
    pub end_lsn: String,
    pub records: i64,
    pub fpi_images: i64,
    /// Images rebuilt and compressed (all of them unless `sample` < 1).
    pub sampled_images: i64,
    /// Images that would be stored compressed (estimated from the sample).
    pub compressed_images: i64,
    /// Images of the range really stored this way (the setting(s) in force when written).
    pub stored_images: i64,
    /// Image bytes under this setting (`bimg_len`, pg_walinspect's `fpi_length`).
    pub fpi_bytes: i64,
    /// WAL bytes of the range under this setting, laid out as the server lays it out.
    pub wal_bytes: i64,
    /// Of `wal_bytes`, against `off`.
    pub saving_percent: f64,
    /// CPU seconds (thread CPU clock) the server would spend compressing the images (writing WAL).
    pub compress_cpu_seconds: f64,
    /// CPU seconds it would spend decompressing the images kept compressed (replaying WAL).
    pub decompress_cpu_seconds: f64,
}

/// One relation fork's full-page images under one setting (`wal_whatif_by_relation`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WalWhatIfRelationRow {
    pub relation: String,
    pub fork: String,
    pub wal_compression: WalCompression,
    pub fpi_images: i64,
    pub fpi_bytes: i64,
    /// Of `fpi_bytes`, against `off`.
    pub saving_percent: f64,
}

/// Per-setting totals.
struct Setting {
    setting: WalCompression,
    codec: Option<Box<dyn Codec>>,
    /// Our encoder writing `codec`'s bytes exactly, for the sizes of untimed batches.
    sizer: Option<Box<dyn Codec>>,
    /// Whether a sizer was dropped for writing other bytes than the server's routine.
    sizer_dropped: bool,
    /// Raw bytes of the images `codec` compressed, timed, and of those of the batches it also
    /// decompressed, timed (the replay side).
    compress_timed_raw: u64,
    replay_timed_raw: u64,
    cursor: Option<WalCursor>,
    /// `bimg_len` over all images (sampled exactly, the others estimated).
    fpi_bytes: u64,
    /// Over the sampled images: raw bytes, bytes in the record, `bimg_len`, compressed count.
    sampled_raw: u64,
    sampled_in_record: u64,
    sampled_bimg: u64,
    sampled_compressed: u64,
    compress_cpu: f64,
    decompress_cpu: f64,
    /// Per image of the current batch: (bytes in record, bimg_len, compressed).
    batch_results: Vec<(u64, u64, bool)>,
}

impl Setting {
    /// (bytes in records, `bimg_len`) charged to `raw` bytes of images that were not sampled:
    /// the sampled images' ratio (exactly `raw` under `off`).
    fn estimate(&self, raw: u64) -> (u64, u64) {
        if self.codec.is_none() || self.sampled_raw == 0 {
            return (raw, raw);
        }
        let scale = |sampled: u64| (raw as f64 * sampled as f64 / self.sampled_raw as f64).round() as u64;
        (scale(self.sampled_in_record), scale(self.sampled_bimg))
    }
}

struct PendingImage {
    image: ImageRef,
    /// Index of the hole-less image in the batch, if it was sampled.
    slot: Option<usize>,
}

struct PendingRecord {
    lsn: u64,
    total_length: u64,
    images: Range<usize>,
}

/// Image counts, per-setting `bimg_len` of the sampled images, and raw bytes of the others,
/// of one relation fork.
struct RelationTotals {
    images: u64,
    bytes: Vec<u64>,
    unsampled_raw: u64,
}

/// The what-if over a range of records; see the module comment.
pub struct WalWhatIf {
    layout: WalLayout,
    settings: Vec<Setting>,
    sample: f64,
    start_lsn: Option<u64>,
    end_lsn: u64,
    records: u64,
    images: u64,
    sampled_images: u64,
    raw_image_bytes: u64,
    /// Raw bytes of the images not sampled and not yet charged to the layout.
    unsampled_raw: u64,
    stored: [u64; 4],
    relations: BTreeMap<RelationKey, RelationTotals>,
    page: Vec<u8>,
    /// Hole-less images of the batch, back to back, and where each lies.
    batch: Vec<u8>,
    batch_images: Vec<Range<usize>>,
    packed: Vec<u8>,
    /// The sizer's images of a timed batch, to compare with the server's.
    sized: Vec<u8>,
    unpacked: Vec<u8>,
    /// Batches flushed so far.
    batches: u64,
    pending_records: Vec<PendingRecord>,
    pending_images: Vec<PendingImage>,
    /// The pieces of the range that held a sampled image, in LSN order, and the last's number.
    chunks: Vec<ChunkSavings>,
    last_chunk: Option<u64>,
}

impl WalWhatIf {
    /// `settings`: each setting and its codec, `off` (no codec) first. `sample` in (0, 1].
    pub fn new(
        layout: WalLayout,
        settings: Vec<(WalCompression, Option<Box<dyn Codec>>)>,
        sample: f64,
    ) -> Result<WalWhatIf> {
        if !(sample > 0.0 && sample <= 1.0) {
            return Err(CodecError::invalid(format!("sample must be in (0, 1], got {sample}")));
        }
        if settings.first().is_none_or(|(_, codec)| codec.is_some()) {
            return Err(CodecError::invalid("the first setting must be off (no codec)"));
        }
        let settings = settings
            .into_iter()
            .map(|(setting, codec)| Setting {
                setting,
                codec,
                sizer: None,
                sizer_dropped: false,
                compress_timed_raw: 0,
                replay_timed_raw: 0,
                cursor: None,
                fpi_bytes: 0,
                sampled_raw: 0,
                sampled_in_record: 0,
                sampled_bimg: 0,
                sampled_compressed: 0,
                compress_cpu: 0.0,
                decompress_cpu: 0.0,
                batch_results: Vec::new(),
            })
            .collect();
        let mut page = Vec::new();
        try_resize(&mut page, BLCKSZ, "page image")?;
        Ok(WalWhatIf {
            layout,
            settings,
            sample,
            start_lsn: None,
            end_lsn: 0,
            records: 0,
            images: 0,
            sampled_images: 0,
            raw_image_bytes: 0,
            unsampled_raw: 0,
            stored: [0; 4],
            relations: BTreeMap::new(),
            page,
            batch: Vec::new(),
            batch_images: Vec::new(),
            packed: Vec::new(),
            sized: Vec::new(),
            unpacked: Vec::new(),
            batches: 0,
            pending_records: Vec::new(),
            pending_images: Vec::new(),
            chunks: Vec::new(),
            last_chunk: None,
        })
    }

    /// Size the images of `setting` with `sizer`, an encoder that writes exactly the bytes of the
    /// setting's codec (see the module comment); the setting's codec then runs on the timed
    /// batches only. A setting not offered, or `off`, is an error.
    pub fn size_with(&mut self, setting: WalCompression, sizer: Box<dyn Codec>) -> Result<()> {
        match self.settings.iter_mut().find(|s| s.setting == setting && s.codec.is_some()) {
            Some(s) => {
                s.sizer = Some(sizer);
                Ok(())
            }
            None => Err(CodecError::invalid(format!("no compressed setting {} to size", setting.name()))),
        }
    }

    /// The settings whose sizer wrote other bytes than the server's routine on a timed batch
    /// (and was dropped there: the rest of the range was sized by the server's routine).
    pub fn sizers_dropped(&self) -> Vec<WalCompression> {
        self.settings.iter().filter(|s| s.sizer_dropped).map(|s| s.setting).collect()
    }

    /// Image `index` (counting from 0 over the range) is rebuilt and compressed: evenly spaced,
    /// the first always.
    fn is_sampled(&self, index: u64) -> bool {
        index == 0 || (index as f64 * self.sample).floor() > ((index - 1) as f64 * self.sample).floor()
    }

    /// Add one record, in LSN order. `restore(i, page)` writes image `i`'s page (BLCKSZ bytes,
    /// hole zero-filled) into `page`; it is called only for sampled images.
    pub fn add_record(
        &mut self,
        record: RecordRef,
        images: &[ImageRef],
        restore: &mut dyn FnMut(usize, &mut [u8]) -> Result<()>,
    ) -> Result<()> {
        if self.start_lsn.is_none() {
            self.start_lsn = Some(record.lsn);
            let cursor = WalCursor::new(self.layout, record.lsn);
            self.settings.iter_mut().for_each(|s| s.cursor = Some(cursor));
        }
        self.records += 1;
        if record.is_switch {
            // A switch's padding depends on where it starts: lay out everything before it first.
            self.flush()?;
            self.charge_unsampled();
        }
        if images.is_empty() {
            for s in &mut self.settings {
                let cursor = s.cursor.as_mut().expect("set at the first record");
                if record.is_switch {
                    cursor.append_switch(record.total_length as u64, record.lsn);
                } else {
                    cursor.append(record.total_length as u64, false);
                }
            }
            return Ok(());
        }
        let first = self.pending_images.len();
        for (i, image) in images.iter().enumerate() {
            let slot = if self.is_sampled(self.images) {
                restore(i, &mut self.page)?;
                let hole = image.hole_offset as usize..(image.hole_offset + image.hole_length) as usize;
                if hole.end > BLCKSZ {
                    return Err(CodecError::corrupt(format!(
                        "the image at {} has a hole {hole:?} outside the page",
                        lsn_text(record.lsn)
                    )));
                }
                let at = self.batch.len();
                try_resize(&mut self.batch, at + image.raw_len(), "image batch")?;
                self.batch[at..at + hole.start].copy_from_slice(&self.page[..hole.start]);
                self.batch[at + hole.start..].copy_from_slice(&self.page[hole.end..]);
                self.batch_images.push(at..self.batch.len());
                self.sampled_images += 1;
                Some(self.batch_images.len() - 1)
            } else {
                None
            };
            self.images += 1;
            self.raw_image_bytes += image.raw_len() as u64;
            self.stored[image.stored_as as usize] += 1;
            self.pending_images.push(PendingImage { image: *image, slot });
        }
        self.pending_records.push(PendingRecord {
            lsn: record.lsn,
            total_length: record.total_length as u64,
            images: first..self.pending_images.len(),
        });
        if record.is_switch {
            // Rare (a switch record has no images); keep the layout order anyway.
            self.flush()?;
        } else if self.batch.len() >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// The end LSN of the range read (the end of its last record), for the rows.
    pub fn set_end_lsn(&mut self, end_lsn: u64) {
        self.end_lsn = end_lsn;
    }

    /// The bytes the range read took as the server wrote it: its LSN span, from the start of
    /// its first record to the end of its last (after [`WalWhatIf::set_end_lsn`]).
    pub fn bytes_as_written(&self) -> u64 {
        self.end_lsn.saturating_sub(self.start_lsn.unwrap_or(self.end_lsn))
    }

    /// The pieces of [`CHUNK_BYTES`] of the range read that held a sampled image, in LSN order
    /// (complete after [`WalWhatIf::finish`]).
    pub fn chunks(&self) -> &[ChunkSavings] {
        &self.chunks
    }

    /// Compress the batch under every setting, then lay out the pending records.
    fn flush(&mut self) -> Result<()> {
        let timed_batch = self.batches.is_multiple_of(TIMED_EVERY);
        self.batches += 1;
        let batch = Batch { bytes: &self.batch, images: &self.batch_images };
        for setting in &mut self.settings {
            setting.batch_results.clear();
            if setting.codec.is_none() {
                let raw = batch.images.iter().map(|image| (image.len() as u64, image.len() as u64, false));
                setting.batch_results.extend(raw);
            } else if setting.sizer.is_none() || timed_batch {
                let lengths = run_timed(setting, &batch, &mut self.packed, &mut self.unpacked, timed_batch)?;
                if let Some(sizer) = setting.sizer.as_deref_mut() {
                    let sized = compress_batch(sizer, &batch, &mut self.sized, None)?;
                    if !same_images(&self.packed, &lengths, &self.sized, &sized) {
                        setting.sizer = None;
                        setting.sizer_dropped = true;
                    }
                }
                push_results(setting, &batch, &lengths);
            } else {
                let sizer = setting.sizer.as_deref_mut().expect("checked above");
                let sized = compress_batch(sizer, &batch, &mut self.sized, None)?;
                push_results(setting, &batch, &sized);
            }
        }
        for setting in &mut self.settings {
            for (image, &(in_record, bimg, compressed)) in batch.images.iter().zip(&setting.batch_results) {
                setting.sampled_raw += image.len() as u64;
                setting.sampled_in_record += in_record;
                setting.sampled_bimg += bimg;
                setting.sampled_compressed += compressed as u64;
            }
        }
        self.lay_out_pending();
        self.batch.clear();
        self.batch_images.clear();
        self.pending_records.clear();
        self.pending_images.clear();
        Ok(())
    }

    /// Lay out the pending records: each with its sampled images' bytes under each setting,
    /// and without its unsampled images, which [`WalWhatIf::charge_unsampled`] adds in one sum.
    fn lay_out_pending(&mut self) {
        let settings = self.settings.len();
        for record in &self.pending_records {
            let images = &self.pending_images[record.images.clone()];
            let now: u64 = images.iter().map(|p| p.image.bytes_in_record()).sum();
            for p in images {
                let totals = self.relations.entry(p.image.relation).or_insert_with(|| RelationTotals {
                    images: 0,
                    bytes: vec![0; settings],
                    unsampled_raw: 0,
                });
                totals.images += 1;
                if p.slot.is_none() {
                    totals.unsampled_raw += p.image.raw_len() as u64;
                    self.unsampled_raw += p.image.raw_len() as u64;
                }
            }
            let sampled = images.iter().filter(|p| p.slot.is_some());
            let sampled_now: u64 = sampled.clone().map(|p| p.image.bytes_in_record()).sum();
            let sampled_count = sampled.count() as u64;
            if sampled_count > 0 && self.last_chunk != Some(record.lsn / CHUNK_BYTES) {
                self.last_chunk = Some(record.lsn / CHUNK_BYTES);
                self.chunks.push(ChunkSavings { index: record.lsn / CHUNK_BYTES, images: 0, saved: vec![0; settings] });
            }
            for (s, setting) in self.settings.iter_mut().enumerate() {
                let mut then = 0;
                for p in images {
                    if let Some(slot) = p.slot {
                        let (in_record, bimg, _) = setting.batch_results[slot];
                        then += in_record;
                        setting.fpi_bytes += bimg;
                        self.relations.get_mut(&p.image.relation).expect("added above").bytes[s] += bimg;
                    }
                }
                if sampled_count > 0 {
                    self.chunks.last_mut().expect("pushed above").saved[s] += sampled_now as i64 - then as i64;
                }
                let length = record.total_length + then - now;
                setting.cursor.as_mut().expect("set at the first record").append(length, false);
            }
            if let Some(chunk) = self.chunks.last_mut().filter(|_| sampled_count > 0) {
                chunk.images += sampled_count;
            }
        }
    }

    /// Charge the unsampled images laid out so far, at the sampled ratio.
    fn charge_unsampled(&mut self) {
        for setting in &mut self.settings {
            let (in_records, bimg) = setting.estimate(self.unsampled_raw);
            setting.cursor.as_mut().expect("set at the first record").advance(in_records);
            setting.fpi_bytes += bimg;
        }
        self.unsampled_raw = 0;
    }

    /// Lay out what is left and return one row per setting, `off` first.
    pub fn finish(&mut self) -> Result<Vec<WalWhatIfRow>> {
        self.flush()?;
        if self.start_lsn.is_some() {
            self.charge_unsampled();
        }
        let start = self.start_lsn.unwrap_or(self.end_lsn);
        let off_bytes = self.settings[0].cursor.map_or(0, |c| c.bytes());
        let rows = self
            .settings
            .iter()
            .map(|s| {
                let wal_bytes = s.cursor.map_or(0, |c| c.bytes());
                // CPU was timed on some of the sampled images: those of the timed batches.
                let scale = |timed: u64| if timed > 0 { self.raw_image_bytes as f64 / timed as f64 } else { 0.0 };
                let stored = self.stored[s.setting as usize];
                let compressed = if self.sampled_images > 0 {
                    (s.sampled_compressed as f64 * self.images as f64 / self.sampled_images as f64).round() as i64
                } else {
                    0
                };
                WalWhatIfRow {
                    wal_compression: s.setting,
                    start_lsn: lsn_text(start),
                    end_lsn: lsn_text(self.end_lsn.max(start)),
                    records: self.records as i64,
                    fpi_images: self.images as i64,
                    sampled_images: self.sampled_images as i64,
                    compressed_images: compressed,
                    stored_images: stored as i64,
                    fpi_bytes: s.fpi_bytes as i64,
                    wal_bytes: wal_bytes as i64,
                    saving_percent: percent_saved(off_bytes, wal_bytes),
                    compress_cpu_seconds: s.compress_cpu * scale(s.compress_timed_raw),
                    decompress_cpu_seconds: s.decompress_cpu * scale(s.replay_timed_raw),
                }
            })
            .collect();
        Ok(rows)
    }

    /// Per relation fork and setting, the largest `off` image bytes first; `name` turns a key
    /// into (relation, fork) text. Call after [`WalWhatIf::finish`].
    pub fn relation_rows(&self, name: &mut dyn FnMut(&RelationKey) -> (String, String)) -> Vec<WalWhatIfRelationRow> {
        let mut relations: Vec<(&RelationKey, &RelationTotals)> = self.relations.iter().collect();
        relations.sort_by_key(|(key, totals)| (std::cmp::Reverse(totals.bytes[0] + totals.unsampled_raw), **key));
        let mut rows = Vec::new();
        for (key, totals) in relations {
            let (relation, fork) = name(key);
            let bytes_of = |s: usize| totals.bytes[s] + self.settings[s].estimate(totals.unsampled_raw).1;
            let off = bytes_of(0);
            for (s, setting) in self.settings.iter().enumerate() {
                let bytes = bytes_of(s);
                rows.push(WalWhatIfRelationRow {
                    relation: relation.clone(),
                    fork: fork.clone(),
                    wal_compression: setting.setting,
                    fpi_images: totals.images as i64,
                    fpi_bytes: bytes as i64,
                    saving_percent: percent_saved(off, bytes),
                });
            }
        }
        rows
    }
}

fn percent_saved(base: u64, now: u64) -> f64 {
    if base == 0 {
        0.0
    } else {
        100.0 * (base as f64 - now as f64) / base as f64
    }
}

#[cfg(test)]
mod tests;
