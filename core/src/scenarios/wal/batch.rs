//! One batch of hole-less images (about 1 MB) under one setting: compressed by the server's
//! routine, timed, and on the timed batches decompressed again and verified (what writing and
//! replaying the WAL would spend), or sized by our encoder; see the `wal` module comment.

use std::ops::Range;

use super::Setting;
use crate::clock::Timer;
use crate::error::{try_resize, Result};
use crate::lab::codecs::Codec;
use crate::page::BLCKSZ;
use crate::registry::Named;
use crate::scenarios::fpi::{keeps_compressed, COMPRESSED_HOLE_HEADER};
use crate::CodecError;

/// The hole-less images of one batch, back to back, and where each lies.
pub(super) struct Batch<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) images: &'a [Range<usize>],
}

/// Every image of `batch` compressed by `codec` into its own room of `packed`: per image the
/// room's start and the compressed length (`None`: refused). `timed` adds the CPU seconds of
/// the compression loop alone (not the allocation of the rooms).
pub(super) fn compress_batch(
    codec: &mut dyn Codec,
    batch: &Batch,
    packed: &mut Vec<u8>,
    timed: Option<&mut f64>,
) -> Result<Vec<(usize, Option<usize>)>> {
    let rooms: Vec<usize> = batch.images.iter().map(|image| codec.compress_bound(image.len())).collect();
    try_resize(packed, rooms.iter().sum(), "compressed images")?;
    let mut out = Vec::with_capacity(rooms.len());
    let timer = Timer::start();
    let mut at = 0;
    for (image, room) in batch.images.iter().zip(rooms) {
        out.push((at, codec.compress(&batch.bytes[image.clone()], &mut packed[at..at + room], &mut || ())?));
        at += room;
    }
    if let Some(cpu) = timed {
        *cpu += timer.stop().1;
    }
    Ok(out)
}

/// The setting's (server's) codec on the batch, timed: compress every image, then, if `replay`,
/// what the server keeps is decompressed again (what replay would spend) and checked against
/// the original. Per image where its compressed bytes lie in `packed` and their length
/// (`None`: refused), as [`compress_batch`].
pub(super) fn run_timed(
    setting: &mut Setting,
    batch: &Batch,
    packed: &mut Vec<u8>,
    unpacked: &mut Vec<u8>,
    replay: bool,
) -> Result<Vec<(usize, Option<usize>)>> {
    let codec = setting.codec.as_deref_mut().expect("a compressed setting");
    let lengths = compress_batch(codec, batch, packed, Some(&mut setting.compress_cpu))?;
    let raw: u64 = batch.images.iter().map(|image| image.len() as u64).sum();
    setting.compress_timed_raw += raw;
    if !replay {
        return Ok(lengths);
    }
    setting.replay_timed_raw += raw;
    let kept: Vec<Option<(usize, usize)>> = batch
        .images
        .iter()
        .zip(&lengths)
        .map(|(image, &(at, len))| len.filter(|&len| keeps_compressed(len, BLCKSZ - image.len())).map(|len| (at, len)))
        .collect();
    if kept.iter().any(Option::is_some) {
        try_resize(unpacked, batch.bytes.len(), "decompressed images")?;
        let timer = Timer::start();
        for (image, kept) in batch.images.iter().zip(&kept) {
            if let Some((at, len)) = *kept {
                codec.decompress(&packed[at..at + len], &mut unpacked[image.clone()], &mut || ())?;
            }
        }
        setting.decompress_cpu += timer.stop().1;
        for (image, kept) in batch.images.iter().zip(&kept) {
            if kept.is_some() && unpacked[image.clone()] != batch.bytes[image.clone()] {
                return Err(CodecError::corrupt(format!(
                    "{} did not give back a full-page image it compressed",
                    setting.setting.name()
                )));
            }
        }
    }
    Ok(lengths)
}

/// Whether the sizer wrote the server's bytes for every image (both refused it, or both wrote
/// the same bytes).
pub(super) fn same_images(
    packed: &[u8],
    server: &[(usize, Option<usize>)],
    sized: &[u8],
    ours: &[(usize, Option<usize>)],
) -> bool {
    server.len() == ours.len()
        && server.iter().zip(ours).all(|(&(a, x), &(b, y))| match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => packed[a..a + x] == sized[b..b + y],
            _ => false,
        })
}

/// One batch's results for `setting` from the compressed lengths ([`compress_batch`]'s): (bytes
/// in record, `bimg_len`, compressed), the raw image when the server would not keep the
/// compressed one.
pub(super) fn push_results(setting: &mut Setting, batch: &Batch, lengths: &[(usize, Option<usize>)]) {
    for (image, &(_, len)) in batch.images.iter().zip(lengths) {
        let raw = image.len() as u64;
        let result = match len.filter(|&len| keeps_compressed(len, BLCKSZ - image.len())) {
            Some(len) => {
                let header = if image.len() != BLCKSZ { COMPRESSED_HOLE_HEADER } else { 0 };
                ((len + header) as u64, len as u64, true)
            }
            None => (raw, raw, false),
        };
        setting.batch_results.push(result);
    }
}
