//! The fields of an LZ4 frame's header and the frame's layout, read without decoding blocks.

use twox_hash::XxHash32;

use crate::error::{CodecError, Result};

pub(super) const FRAME_MAGIC: u32 = 0x184D_2204;
/// Skippable frames use magic numbers 0x184D2A50 to 0x184D2A5F.
pub(super) const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
/// The "legacy" frame format (`lz4 -l`), which we do not read.
pub(super) const LEGACY_MAGIC: u32 = 0x184C_2102;

const FLG_VERSION_MASK: u8 = 0b1100_0000;
const FLG_VERSION_01: u8 = 0b0100_0000;
const FLG_INDEPENDENT_BLOCKS: u8 = 0b0010_0000;
const FLG_BLOCK_CHECKSUM: u8 = 0b0001_0000;
const FLG_CONTENT_SIZE: u8 = 0b0000_1000;
const FLG_CONTENT_CHECKSUM: u8 = 0b0000_0100;
const FLG_RESERVED: u8 = 0b0000_0010;
const FLG_DICTIONARY_ID: u8 = 0b0000_0001;
const BD_RESERVED: u8 = 0b1000_1111;

/// The high bit of a block size: the block is stored uncompressed.
pub(super) const BLOCK_STORED: u32 = 0x8000_0000;
/// The content size a frame header declares, if the frame starts with an LZ4 frame header that
/// carries one.
pub fn declared_content_size(src: &[u8]) -> Option<u64> {
    let magic = u32::from_le_bytes(src.get(..4)?.try_into().ok()?);
    if magic != FRAME_MAGIC {
        return None;
    }
    let flg = *src.get(4)?;
    if flg & 0x08 == 0 {
        return None;
    }
    Some(u64::from_le_bytes(src.get(6..14)?.try_into().ok()?))
}

/// The total content size of LZ4 frame data in which every frame declares its content size
/// (as ours and `lz4 --content-size` do), found by reading the frame and block headers only;
/// `None` if a frame does not declare it, or the data is not well-formed frames (decoding then
/// tells why). Skippable frames add nothing.
pub fn content_size(src: &[u8]) -> Option<u64> {
    if src.is_empty() {
        return None;
    }
    let mut input = Cursor { rest: src };
    let mut total: u64 = 0;
    while !input.rest.is_empty() {
        match input.u32_le()? {
            FRAME_MAGIC => {
                let size_recorded = input.rest.first()? & FLG_CONTENT_SIZE != 0;
                let desc = read_descriptor(&mut input, 0).ok()?;
                let mut blocks = 0;
                loop {
                    let header = input.u32_le()?;
                    if header == 0 {
                        break;
                    }
                    blocks += 1;
                    let size = usize::try_from(header & !BLOCK_STORED).ok()?;
                    if size > desc.block_max {
                        return None;
                    }
                    input.take(size)?;
                    if desc.block_checksum {
                        input.take(4)?;
                    }
                }
                if desc.content_checksum {
                    input.take(4)?;
                }
                // A recorded 0 means "unknown" (see `Descriptor`), unless the frame holds no
                // block: an empty frame, as ours of empty content.
                let size = match desc.content_size {
                    Some(size) => size,
                    None if size_recorded && blocks == 0 => 0,
                    None => return None,
                };
                total = total.checked_add(size)?;
            }
            m if m & 0xFFFF_FFF0 == SKIPPABLE_MAGIC => skip_frame(&mut input, 0).ok()?,
            _ => return None,
        }
    }
    Some(total)
}

/// The unread part of the input.
pub(super) struct Cursor<'a> {
    pub(super) rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// The next `n` bytes, or `None` (consuming nothing) if fewer remain.
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    pub(super) fn u32_le(&mut self) -> Option<u32> {
        let bytes = self.take(4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// Skip a skippable frame whose magic number has been read.
pub(super) fn skip_frame(input: &mut Cursor<'_>, frame: u64) -> Result<()> {
    let Some(size) = input.u32_le() else {
        return Err(CodecError::corrupt(format!(
            "lz4 skippable frame is truncated: the size field of frame {frame} is incomplete"
        )));
    };
    let remaining = input.rest.len();
    if usize::try_from(size).map_or(true, |size| input.take(size).is_none()) {
        return Err(CodecError::corrupt(format!(
            "lz4 skippable frame is truncated: frame {frame} declares {size} bytes but only {remaining} remain"
        )));
    }
    Ok(())
}

/// What a frame descriptor says.
pub(super) struct Descriptor {
    pub(super) independent: bool,
    pub(super) block_checksum: bool,
    pub(super) content_checksum: bool,
    /// The recorded content size; `None` if absent or 0 ("unknown", as in `lz4frame.c`).
    pub(super) content_size: Option<u64>,
    pub(super) block_max: usize,
}

/// Read and check a frame descriptor (after the magic number).
pub(super) fn read_descriptor(input: &mut Cursor<'_>, frame: u64) -> Result<Descriptor> {
    let truncated =
        || CodecError::corrupt(format!("lz4 frame is truncated: the header of frame {frame} is incomplete"));
    let damaged = |what: String| CodecError::corrupt(format!("lz4 frame header is damaged (frame {frame}): {what}"));

    let start = input.rest;
    let &[flg, bd] = input.take(2).ok_or_else(truncated)? else {
        return Err(truncated());
    };
    if flg & FLG_VERSION_MASK != FLG_VERSION_01 {
        return Err(damaged(format!("its version is {}, the only version is 1", flg >> 6)));
    }
    if flg & FLG_RESERVED != 0 {
        return Err(damaged("a reserved bit of its flags is set".into()));
    }
    if bd & BD_RESERVED != 0 {
        return Err(damaged("a reserved bit of its block descriptor is set".into()));
    }
    let block_max = match (bd >> 4) & 0x07 {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        code => return Err(damaged(format!("block size code {code} is not one of 4 (64 KB) to 7 (4 MB)"))),
    };
    let content_size = if flg & FLG_CONTENT_SIZE != 0 {
        let bytes = input.take(8).ok_or_else(truncated)?;
        Some(u64::from_le_bytes(bytes.try_into().map_err(|_| truncated())?))
    } else {
        None
    };
    let dictionary = if flg & FLG_DICTIONARY_ID != 0 { Some(input.u32_le().ok_or_else(truncated)?) } else { None };
    let descriptor_len = start.len() - input.rest.len();
    let described = start.get(..descriptor_len).ok_or_else(truncated)?;
    let &[checksum] = input.take(1).ok_or_else(truncated)? else {
        return Err(truncated());
    };
    if (XxHash32::oneshot(0, described) >> 8) as u8 != checksum {
        return Err(CodecError::corrupt(format!(
            "lz4 frame header checksum mismatch (frame {frame}): the header is damaged"
        )));
    }
    if let Some(id) = dictionary {
        return Err(CodecError::corrupt(format!(
            "lz4 frame needs dictionary 0x{id:08X}, which this function does not take (frame {frame})"
        )));
    }
    Ok(Descriptor {
        independent: flg & FLG_INDEPENDENT_BLOCKS != 0,
        block_checksum: flg & FLG_BLOCK_CHECKSUM != 0,
        content_checksum: flg & FLG_CONTENT_CHECKSUM != 0,
        content_size: content_size.filter(|&size| size != 0),
        block_max,
    })
}
