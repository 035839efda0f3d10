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

/// What starts at the beginning of a (remaining) input.
pub(super) enum FrameStart {
    /// A skippable frame of `len` bytes in all, to be passed over.
    Skippable { len: usize },
    /// A standard frame whose header is complete and readable.
    Frame { content_size: Option<u64>, dictionary_id: Option<NonZeroU32> },
}

/// Read the frame header at the start of `rest` (`first`: at the start of the input), refusing
/// legacy frames, truncated headers and anything that is not a frame.
pub(super) fn frame_at(rest: &[u8], first: bool) -> Result<FrameStart> {
    if rest.len() < 4 {
        return Err(if FRAME_MAGIC.to_le_bytes().starts_with(rest) {
            CodecError::corrupt("zstd frame is truncated: its header is incomplete")
        } else if first {
            CodecError::corrupt("input is not a zstd frame: it is too short")
        } else {
            trailing_bytes(rest.len())
        });
    }
    let magic = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    if magic == FRAME_MAGIC {
        let Some(&descriptor) = rest.get(4) else {
            return Err(CodecError::corrupt("zstd frame is truncated: its header is incomplete"));
        };
        if rest.len() < frame_header_len(descriptor) {
            return Err(CodecError::corrupt("zstd frame is truncated: its header is incomplete"));
        }
        let content_size = zstd_safe::get_frame_content_size(rest).map_err(|_| {
            CodecError::corrupt("zstd frame is corrupt: invalid frame header (reserved bit set or window too large)")
        })?;
        return Ok(FrameStart::Frame { content_size, dictionary_id: zstd_safe::get_dict_id_from_frame(rest) });
    }
    if LEGACY_MAGICS.contains(&magic) {
        let version = match magic & 0xFF {
            0x1E => "v0.1".to_string(),
            minor @ 0x22..=0x27 => format!("v0.{}", minor - 0x20),
            _ => "before v0.8".to_string(),
        };
        return Err(CodecError::corrupt(format!(
            "zstd legacy format {version} is not supported (frame magic number 0x{magic:08X}); only frames of \
             zstd v0.8 and later (magic number 0xFD2FB528) can be decoded"
        )));
    }
    if SKIPPABLE_MAGICS.contains(&magic) {
        let declared = match rest.get(4..8) {
            Some(size) => u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize,
            None => {
                return Err(CodecError::corrupt("zstd frame is truncated: a skippable frame's header is incomplete"))
            }
        };
        let len = declared.saturating_add(8);
        if rest.len() < len {
            return Err(CodecError::corrupt(format!(
                "zstd frame is truncated: a skippable frame declares {declared} bytes of content, only {} remain",
                rest.len() - 8
            )));
        }
        return Ok(FrameStart::Skippable { len });
    }
    Err(if first {
        CodecError::corrupt(format!("input is not a zstd frame (bad magic number 0x{magic:08X})"))
    } else {
        trailing_bytes(rest.len())
    })
}

fn trailing_bytes(n: usize) -> CodecError {
    CodecError::corrupt(format!("zstd data has {n} trailing bytes after its last frame that are not a frame"))
}

/// The length of a frame header (magic number included) from its descriptor byte.
fn frame_header_len(descriptor: u8) -> usize {
    let single_segment = descriptor & 0x20 != 0;
    let window = usize::from(!single_segment);
    let dictionary_id = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let content_size = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    5 + window + dictionary_id + content_size
}
