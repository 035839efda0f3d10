//! The frames' declared sizes, read from their headers before anything is decoded or
//! allocated: what a sequence of frames says it holds ([`declared_size`]), what its blocks can
//! hold at most ([`frame_extent`], [`max_content`]), and the refusals that follow from both.

use super::*;

/// The total content size that the frames of `src` declare, if every one of them declares
/// it (ours always do; the `zstd` tool does for files, not for a pipe), `src` is a sequence of
/// whole frames, and no frame declares more than its blocks can hold ([`frame_extent`]);
/// `None` otherwise, and for anything malformed, which [`decompress_to`] or
/// [`decompress_with_tick`] then reports (before allocating what a frame only claims).
pub fn declared_size(src: &[u8]) -> Option<u64> {
    let mut total: u64 = 0;
    walk_frames(src, |content_size, extent| {
        total = total.checked_add(content_size.filter(|&declared| declared <= extent.capacity)?)?;
        Some(())
    })?;
    Some(total)
}

/// The most bytes the zstd frames of `src` can decode to, from their block headers (see
/// [`frame_extent`]): `None` if `src` is not a sequence of whole frames (skippable ones
/// included). A caller that is told a raw size (`server_zstd_decompress`) refuses a larger
/// one before allocating it.
pub fn max_content(src: &[u8]) -> Option<u64> {
    let mut total: u64 = 0;
    walk_frames(src, |_, extent| {
        total = total.checked_add(extent.capacity)?;
        Some(())
    })?;
    Some(total)
}

/// Walk the frames of `src`, passing over skippable ones and calling `each` with every standard
/// frame's declared content size and extent: `None` if `src` is not a sequence of whole frames
/// or `each` gives `None`.
fn walk_frames(src: &[u8], mut each: impl FnMut(Option<u64>, FrameExtent) -> Option<()>) -> Option<()> {
    let mut pos = 0;
    while pos < src.len() {
        let rest = &src[pos..];
        match frame_at(rest, pos == 0).ok()? {
            FrameStart::Skippable { len } => pos += len,
            FrameStart::Frame { content_size, .. } => {
                let extent = frame_extent(rest)?;
                each(content_size, extent)?;
                pos += extent.len;
            }
        }
    }
    (pos > 0).then_some(())
}

/// Refuse, before anything is allocated, a raw size that the frames of `src` cannot produce
/// ([`max_content`]), or any size when `src` is not a sequence of whole standard frames.
pub fn check_decodable(src: &[u8], raw_size: usize) -> Result<()> {
    match max_content(src) {
        Some(max) if raw_size as u64 <= max => Ok(()),
        Some(max) => Err(CodecError::corrupt(format!(
            "zstd data of {} bytes cannot decode to {raw_size} bytes (its blocks hold at most {max})",
            src.len()
        ))),
        None => Err(CodecError::corrupt("input is not a sequence of whole zstd frames")),
    }
}

/// The largest block content of the format (`Block_Maximum_Size` is at most 128 KiB).
const MAX_BLOCK_CONTENT: u64 = 128 << 10;

/// A standard frame's length in bytes and the most content its blocks can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameExtent {
    pub len: usize,
    pub capacity: u64,
}

/// Walk the block headers of the standard frame at the start of `rest` (its header already
/// read by [`frame_at`]): a raw or RLE block holds the size its header states, a compressed
/// block at most 128 KiB, so a frame of `n` bytes never holds more than about 43,690 × `n`
/// (RLE blocks: 4 bytes each). `None` if the frame is truncated or has a reserved block type.
/// Cheap: three bytes read per block, at most one block per 3 bytes of input.
pub fn frame_extent(rest: &[u8]) -> Option<FrameExtent> {
    let descriptor = *rest.get(4)?;
    let mut pos = frame_header_len(descriptor);
    let mut capacity: u64 = 0;
    loop {
        let header = rest.get(pos..pos + 3)?;
        let header = u32::from(header[0]) | u32::from(header[1]) << 8 | u32::from(header[2]) << 16;
        let size = (header >> 3) as usize;
        pos += 3;
        match (header >> 1) & 3 {
            0 => {
                capacity += size as u64;
                pos += size;
            }
            1 => {
                capacity += size as u64;
                pos += 1;
            }
            2 => {
                capacity += MAX_BLOCK_CONTENT;
                pos += size;
            }
            _ => return None,
        }
        if pos > rest.len() {
            return None;
        }
        if header & 1 != 0 {
            break;
        }
    }
    if descriptor & 0x04 != 0 {
        pos += 4; // the content checksum
    }
    (pos <= rest.len()).then_some(FrameExtent { len: pos, capacity })
}

/// Before anything is decoded or allocated, walk the frames' headers and refuse what their
/// declared sizes already rule out: a frame declaring more content than its blocks can hold
/// (corrupt: a 16-byte frame declaring 1 GB), and declared sizes that add up past `max_raw`
/// (eleven frames of 100 MB against a 1 GB limit used to be refused only after ten were
/// decoded). Stops quietly at the first thing it cannot walk; the decoder reports that.
pub(super) fn check_declared_sizes(src: &[u8], max_raw: usize) -> Result<()> {
    let mut declared_total: u64 = 0;
    let mut pos = 0;
    while pos < src.len() {
        let rest = &src[pos..];
        let Ok(start) = frame_at(rest, pos == 0) else { return Ok(()) };
        let content_size = match start {
            FrameStart::Skippable { len } => {
                pos += len;
                continue;
            }
            FrameStart::Frame { content_size, .. } => content_size,
        };
        let Some(extent) = frame_extent(rest) else { return Ok(()) };
        if let Some(declared) = content_size {
            if declared > extent.capacity {
                return Err(CodecError::corrupt(format!(
                    "zstd frame is corrupt: it declares {declared} bytes of content, but its blocks can hold at \
                     most {}",
                    extent.capacity
                )));
            }
            declared_total = declared_total.saturating_add(declared);
            if declared_total > max_raw as u64 {
                return Err(if declared_total == declared {
                    CodecError::over_limit("zstd frame", declared, max_raw)
                } else {
                    CodecError::over_limit("zstd data of several frames", declared_total, max_raw)
                });
            }
        }
        pos += extent.len;
    }
    Ok(())
}
