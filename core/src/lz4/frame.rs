//! LZ4 frame format (the `lz4` command-line tool's format), with a strict, bounded reader.
//!
//! Writing goes through `lz4_flex`'s `FrameEncoder`. Reading is our own parser, so that
//! truncated or damaged frames are errors instead of short output. When every frame declares
//! its content size, [`content_size`] adds them up from the headers and [`decompress_to`]
//! decodes into the caller's buffer of that size (the SQL result); otherwise [`decompress`]
//! decodes into a vector that grows up to the caller's limit. A frame is, all integers
//! little-endian (see the overview in [`super`]):
//!
//! * magic 0x184D2204;
//! * FLG byte: bits 7-6 version (must be 01), bit 5 block independence, bit 4 block
//!   checksums, bit 3 content size present, bit 2 content checksum, bit 1 reserved (0), bit 0
//!   dictionary ID present;
//! * BD byte: bits 6-4 block maximum size (4 = 64 KB, 5 = 256 KB, 6 = 1 MB, 7 = 4 MB), the
//!   other bits reserved (0);
//! * optional 8-byte content size, optional 4-byte dictionary ID;
//! * header checksum byte: (xxHash32 of the bytes from FLG up to it, seed 0) >> 8, low byte;
//! * blocks: a 4-byte size (high bit: the block is stored uncompressed; never above the block
//!   maximum), the block's bytes, and an xxHash32 of those bytes if FLG asks for block
//!   checksums. With block independence off ("linked blocks", `lz4 -BD`), a block may refer
//!   back into the previous 64 KB of the frame's decoded output;
//! * an end mark (a size of 0), then the xxHash32 of the frame's whole content if FLG asks for
//!   a content checksum.
//!
//! Frames may be concatenated, with skippable frames (magic 0x184D2A50..0x184D2A5F, a 4-byte
//! size, that many bytes of anything) among them; the content is the concatenation of the
//! frames' contents. Anything else after a frame is an error, and so is every missing part:
//! a frame is only complete with its end mark and, if announced, its content checksum. We check
//! every checksum and the content size, refuse frames that need a dictionary (we take none),
//! and never allocate or produce more than the caller's limit. As the reference decoder
//! (`lz4frame.c`) does, a recorded content size of 0 means "unknown": its encoder never writes
//! 0 for content that is not empty.

use std::io::Write;

use twox_hash::XxHash32;

use super::decode::{self, DecodeError};
use crate::bytes::Filled;
use crate::error::{try_with_capacity, CodecError, Result};

const FRAME_MAGIC: u32 = 0x184D_2204;
/// Skippable frames use magic numbers 0x184D2A50 to 0x184D2A5F.
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
/// The "legacy" frame format (`lz4 -l`), which we do not read.
const LEGACY_MAGIC: u32 = 0x184C_2102;

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
const BLOCK_STORED: u32 = 0x8000_0000;
/// How far back a linked block may refer into earlier output (LZ4 offsets are 16 bits).
const LINKED_WINDOW: usize = 64 * 1024;
/// No LZ4 block decodes to more than 255 times its own size (a match-length byte adds at most
/// 255 bytes); used to bound buffers by the input instead of trusting sizes the input claims.
const MAX_EXPANSION: usize = 255;

/// Compress `src` into one LZ4 frame with a content checksum and the content size recorded,
/// independent 4 MB-max blocks — what `lz4 --content-size` would write.
pub fn compress(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() / 2 + 64);
    compress_to_writer(src, &mut out).expect("writing to a Vec cannot fail");
    out
}

/// Compress `src` as [`compress`] does, writing the frame to `out`.
pub fn compress_to_writer(src: &[u8], out: &mut impl Write) -> Result<()> {
    let info = lz4_flex::frame::FrameInfo::new()
        .content_checksum(true)
        .content_size(Some(src.len() as u64))
        .block_size(lz4_flex::frame::BlockSize::Max4MB);
    let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, out);
    let fail = |e: &dyn std::fmt::Display| CodecError::invalid(format!("lz4 frame compression failed: {e}"));
    encoder.write_all(src).map_err(|e| fail(&e))?;
    encoder.finish().map_err(|e| fail(&e))?;
    Ok(())
}

/// [`compress`] into the front of `dst` (at least [`compress_bound`] bytes); returns the
/// frame's length.
pub fn compress_to(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let room = dst.len();
    let mut rest = &mut dst[..];
    compress_to_writer(src, &mut rest)?;
    Ok(room - rest.len())
}

/// The largest frame [`compress`] writes for `len` input bytes: a 15-byte header, per 4 MB
/// block a 4-byte size (an incompressible block is stored as is), the 4-byte end mark and the
/// 4-byte content checksum.
pub fn compress_bound(len: usize) -> usize {
    15 + len + 4 * len.div_ceil(4 << 20).max(1) + 4 + 4
}

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

/// Decompress LZ4 frame data (one or more concatenated frames, skippable frames allowed),
/// producing at most `max_raw` bytes: a declared content size above the limit is refused
/// before anything is allocated, and output that grows past it stops the decoder.
///
/// Every frame must be complete and intact: truncation, a checksum or content-size mismatch,
/// a frame that needs a dictionary and bytes after the last frame are all `Corrupt`.
pub fn decompress(src: &[u8], max_raw: usize) -> Result<Vec<u8>> {
    decompress_with_tick(src, max_raw, &mut || {})
}

/// [`decompress`], calling `tick` after every block (at most 4 MB of output) so that a caller
/// can check for interrupts.
pub fn decompress_with_tick(src: &[u8], max_raw: usize, tick: &mut dyn FnMut()) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decode_frames(src, &mut out, max_raw, tick)?;
    Ok(out)
}

/// Decompress LZ4 frame data straight into `dst`, which must be exactly as long as the content
/// (as [`content_size`] gives it): content of any other length is an error, and nothing is
/// written past `dst`. Otherwise as [`decompress_with_tick`] with `dst.len()` as the limit,
/// with the same errors (the unit tests and a fuzz target compare the two).
pub fn decompress_to(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
    Filled::fill_exactly(
        dst,
        |out, expected| decode_frames(src, out, expected, tick),
        |held, expected| format!("lz4 frame data holds {held} bytes of content, expected {expected}"),
    )
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

/// The frame loop of every decoding function: frames and skippable frames until the input
/// ends, each frame's content appended to `out`, at most `max_raw` bytes in all.
fn decode_frames(src: &[u8], out: &mut impl Output, max_raw: usize, tick: &mut dyn FnMut()) -> Result<()> {
    if src.is_empty() {
        return Err(CodecError::corrupt("input is not an lz4 frame: it is empty"));
    }
    let mut input = Cursor { rest: src };
    let mut frame: u64 = 0;
    while !input.rest.is_empty() {
        frame += 1;
        let magic = input.rest.first_chunk::<4>().map(|m| u32::from_le_bytes(*m));
        match magic {
            Some(FRAME_MAGIC) => {
                input.rest = input.rest.get(4..).unwrap_or_default();
                decode_frame(&mut input, frame, out, max_raw, tick)?;
            }
            Some(m) if m & 0xFFFF_FFF0 == SKIPPABLE_MAGIC => {
                input.rest = input.rest.get(4..).unwrap_or_default();
                skip_frame(&mut input, frame)?;
            }
            _ if frame > 1 => {
                return Err(CodecError::corrupt(format!(
                    "lz4 frame data has {} trailing bytes after frame {} that are not a frame",
                    input.rest.len(),
                    frame - 1
                )));
            }
            Some(LEGACY_MAGIC) => {
                return Err(CodecError::corrupt(
                    "input is in the legacy lz4 format (lz4 -l), which this function does not read",
                ));
            }
            _ => return Err(CodecError::corrupt("input is not an lz4 frame (bad magic number)")),
        }
    }
    Ok(())
}

/// Where decoded content goes: a vector that grows (fallibly, never past the caller's limit)
/// when the content size is not known, or the caller's buffer of the content's exact size.
trait Output {
    /// Bytes of content written so far.
    fn len(&self) -> usize;
    /// The content written so far.
    fn written(&self) -> &[u8];
    /// Make room for `needed` bytes of content in all (`needed <= max_raw`).
    fn reserve(&mut self, needed: usize, max_raw: usize) -> Result<()>;
    /// Append `data` (room reserved).
    fn extend_from_slice(&mut self, data: &[u8]);
    /// Let `decode` write into `room` bytes after the content (room reserved), given the
    /// content before them; keep the bytes it says it wrote.
    fn decode_into(
        &mut self,
        room: usize,
        decode: impl FnOnce(&[u8], &mut [u8]) -> std::result::Result<usize, DecodeError>,
    ) -> std::result::Result<usize, DecodeError>;
}

impl Output for Vec<u8> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn written(&self) -> &[u8] {
        self
    }
    fn reserve(&mut self, needed: usize, max_raw: usize) -> Result<()> {
        ensure_capacity(self, needed, max_raw)
    }
    fn extend_from_slice(&mut self, data: &[u8]) {
        Vec::extend_from_slice(self, data)
    }
    fn decode_into(
        &mut self,
        room: usize,
        decode: impl FnOnce(&[u8], &mut [u8]) -> std::result::Result<usize, DecodeError>,
    ) -> std::result::Result<usize, DecodeError> {
        let start = Vec::len(self);
        self.resize(start.saturating_add(room), 0);
        let (earlier, spare) = self.split_at_mut(start);
        let decoded = decode(earlier, spare);
        self.truncate(start.saturating_add(*decoded.as_ref().unwrap_or(&0)));
        decoded
    }
}

impl Output for Filled<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn written(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    fn reserve(&mut self, needed: usize, _max_raw: usize) -> Result<()> {
        // The decoder's limit is the buffer's length, so it never asks for more.
        debug_assert!(needed <= self.buf.len());
        Ok(())
    }
    fn extend_from_slice(&mut self, data: &[u8]) {
        self.buf[self.len..][..data.len()].copy_from_slice(data);
        self.len += data.len();
    }
    fn decode_into(
        &mut self,
        room: usize,
        decode: impl FnOnce(&[u8], &mut [u8]) -> std::result::Result<usize, DecodeError>,
    ) -> std::result::Result<usize, DecodeError> {
        let (earlier, rest) = self.buf.split_at_mut(self.len);
        let decoded = decode(earlier, &mut rest[..room]);
        self.len += *decoded.as_ref().unwrap_or(&0);
        decoded
    }
}

/// The unread part of the input.
struct Cursor<'a> {
    rest: &'a [u8],
}

impl<'a> Cursor<'a> {
    /// The next `n` bytes, or `None` (consuming nothing) if fewer remain.
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    fn u32_le(&mut self) -> Option<u32> {
        let bytes = self.take(4)?;
        Some(u32::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// Skip a skippable frame whose magic number has been read.
fn skip_frame(input: &mut Cursor<'_>, frame: u64) -> Result<()> {
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
struct Descriptor {
    independent: bool,
    block_checksum: bool,
    content_checksum: bool,
    /// The recorded content size; `None` if absent or 0 ("unknown", as in `lz4frame.c`).
    content_size: Option<u64>,
    block_max: usize,
}

/// Read and check a frame descriptor (after the magic number).
fn read_descriptor(input: &mut Cursor<'_>, frame: u64) -> Result<Descriptor> {
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

/// Decode one frame whose magic number has been read, appending its content to `out`, which
/// never grows past `max_raw` bytes.
fn decode_frame(
    input: &mut Cursor<'_>,
    frame: u64,
    out: &mut impl Output,
    max_raw: usize,
    tick: &mut dyn FnMut(),
) -> Result<()> {
    let desc = read_descriptor(input, frame)?;
    let frame_start = out.len();
    // Limit against the whole output; `out.len() <= max_raw` always holds.
    let room = max_raw.saturating_sub(frame_start);
    if let Some(declared) = desc.content_size {
        if declared > room as u64 {
            return Err(if frame_start == 0 {
                CodecError::over_limit("lz4 frame", declared, max_raw)
            } else {
                CodecError::over_limit("lz4 frame data", declared.saturating_add(frame_start as u64), max_raw)
            });
        }
        // Reserve the declared size, but no more than the rest of the input could hold: a tiny
        // input declaring a huge size must not make us allocate it.
        let plausible = input.rest.len().saturating_mul(MAX_EXPANSION);
        let expected = usize::try_from(declared).unwrap_or(usize::MAX).min(plausible);
        out.reserve(frame_start.saturating_add(expected), max_raw)?;
    }
    let mismatch_more = |held: usize| {
        CodecError::corrupt(format!(
            "lz4 frame declares {} bytes of content but holds at least {held} (frame {frame})",
            desc.content_size.unwrap_or(0)
        ))
    };

    let mut block: u64 = 0;
    loop {
        let Some(header) = input.u32_le() else {
            return Err(CodecError::corrupt(if input.rest.is_empty() {
                format!("lz4 frame is truncated: the end mark of frame {frame} is missing")
            } else {
                format!("lz4 frame is truncated: a block header of frame {frame} is incomplete")
            }));
        };
        if header == 0 {
            break;
        }
        if block > 0 {
            tick();
        }
        block += 1;
        let stored = header & BLOCK_STORED != 0;
        let size = usize::try_from(header & !BLOCK_STORED).unwrap_or(usize::MAX);
        if size > desc.block_max {
            return Err(CodecError::corrupt(format!(
                "lz4 frame is corrupt: block {block} of frame {frame} is {size} bytes long, more than the \
                 frame's block maximum of {} bytes",
                desc.block_max
            )));
        }
        let remaining = input.rest.len();
        let Some(data) = input.take(size) else {
            return Err(CodecError::corrupt(format!(
                "lz4 frame is truncated: block {block} of frame {frame} is {size} bytes long but only \
                 {remaining} remain"
            )));
        };
        if desc.block_checksum {
            check_xxh32(input, data, &format!("block {block} of frame {frame}"), "block checksum")?;
        }

        let start = out.len();
        let held = start.saturating_sub(frame_start);
        // Room left under the declared size (if any) and under the caller's limit.
        let declared_room = desc.content_size.map(|d| usize::try_from(d).unwrap_or(usize::MAX).saturating_sub(held));
        let limit_room = max_raw.saturating_sub(start);
        if stored {
            if declared_room.is_some_and(|room| size > room) {
                return Err(mismatch_more(held.saturating_add(size)));
            }
            if size > limit_room {
                return Err(limit_exceeded(max_raw));
            }
            out.reserve(start.saturating_add(size), max_raw)?;
            out.extend_from_slice(data);
            continue;
        }

        // Decode into the spare room of `out`, sized to the smallest of: the block maximum, the
        // room left (declared or limit), and what `size` compressed bytes can possibly expand to.
        let room = declared_room.unwrap_or(limit_room).min(limit_room);
        let cap = desc.block_max.min(room).min(size.saturating_mul(MAX_EXPANSION));
        out.reserve(start.saturating_add(cap), max_raw)?;
        let decoded = out.decode_into(cap, |earlier, spare| {
            if desc.independent {
                decode::decompress_into(data, spare)
            } else {
                let window = earlier.get(start.saturating_sub(LINKED_WINDOW).max(frame_start)..).unwrap_or_default();
                decode::decompress_into_with_dict(data, spare, window)
            }
        });
        match decoded {
            Ok(_) => {}
            Err(DecodeError::OutputTooSmall) if cap < desc.block_max && cap == room => {
                return Err(if declared_room.is_some_and(|r| r <= limit_room) {
                    mismatch_more(held.saturating_add(cap).saturating_add(1))
                } else {
                    limit_exceeded(max_raw)
                });
            }
            Err(e) => return Err(block_error(&e, block, frame, desc.independent, desc.block_max)),
        }
    }

    let content = out.written().get(frame_start..).unwrap_or_default();
    if desc.content_checksum {
        check_xxh32(input, content, &format!("frame {frame}"), "content checksum")?;
    }
    if let Some(declared) = desc.content_size {
        if declared != content.len() as u64 {
            return Err(CodecError::corrupt(format!(
                "lz4 frame declares {declared} bytes of content but holds {} (frame {frame})",
                content.len()
            )));
        }
    }
    Ok(())
}

fn limit_exceeded(max_raw: usize) -> CodecError {
    CodecError::too_large(format!(
        "lz4 frame decompresses to more than the limit of {max_raw} bytes (compresslab.max_decompressed_size)"
    ))
}

/// A block that the LZ4 block decoder rejected, in words.
fn block_error(e: &DecodeError, block: u64, frame: u64, independent: bool, block_max: usize) -> CodecError {
    let why = match e {
        DecodeError::OutputTooSmall => {
            format!("it decodes to more than the frame's block maximum of {block_max} bytes")
        }
        DecodeError::LiteralOutOfBounds => "its literal bytes run past its end".to_string(),
        DecodeError::Truncated => "it ends in the middle of a sequence".to_string(),
        DecodeError::OffsetZero => "a match has the invalid offset 0".to_string(),
        DecodeError::OffsetOutOfBounds if independent => {
            "a match refers back to before the start of the block (the frame's blocks are independent)".to_string()
        }
        DecodeError::OffsetOutOfBounds => "a match refers back to before the start of the frame".to_string(),
    };
    CodecError::corrupt(format!("lz4 frame is corrupt: block {block} of frame {frame} is damaged: {why}"))
}

/// Make `out`'s capacity at least `needed` bytes (`needed <= max_raw` in all our calls),
/// allocating fallibly, doubling for amortized growth but never beyond `max_raw`.
fn ensure_capacity(out: &mut Vec<u8>, needed: usize, max_raw: usize) -> Result<()> {
    if needed <= out.capacity() {
        return Ok(());
    }
    let target = out.capacity().saturating_mul(2).min(max_raw).max(needed);
    let mut bigger = try_with_capacity(target, "the decompressed lz4 frame data")?;
    bigger.extend_from_slice(out);
    *out = bigger;
    Ok(())
}

/// Read the 4-byte xxHash32 `checksum` of `data` (in `place`) that comes next, and check it.
fn check_xxh32(input: &mut Cursor<'_>, data: &[u8], place: &str, checksum: &str) -> Result<()> {
    let Some(expected) = input.u32_le() else {
        return Err(CodecError::corrupt(format!("lz4 frame is truncated: the {checksum} of {place} is missing")));
    };
    if XxHash32::oneshot(0, data) != expected {
        return Err(CodecError::corrupt(format!("lz4 frame {checksum} mismatch ({place}): the data is damaged")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_declared_size() {
        let data = b"frame me ".repeat(100_000);
        let frame = compress(&data);
        assert_eq!(declared_content_size(&frame), Some(data.len() as u64));
        assert_eq!(decompress(&frame, data.len()).unwrap(), data);
        assert!(matches!(decompress(&frame, data.len() - 1), Err(CodecError::TooLarge(_))));
    }

    #[test]
    fn compress_to_writes_the_same_frame_into_a_buffer_and_refuses_too_little_room() {
        let random = crate::rng::SeededRng::new(5).bytes(70_000);
        for data in [&b""[..], &b"frame me ".repeat(1000)[..], &random[..]] {
            let mut room = vec![0; compress_bound(data.len())];
            let n = compress_to(data, &mut room).unwrap();
            assert_eq!(&room[..n], &compress(data)[..]);
            assert!(matches!(compress_to(data, &mut room[..n - 1]), Err(CodecError::InvalidParameter(_))));
        }
    }

    #[test]
    fn concatenated_frames_decode_to_concatenation() {
        let mut two = compress(b"first,");
        two.extend(compress(b"second"));
        assert_eq!(decompress(&two, 100).unwrap(), b"first,second");
    }

    /// Frames of every shape [`content_size`] accepts: one frame, several blocks, several
    /// frames with a skippable frame and an empty frame among them.
    fn frames_that_declare_their_sizes() -> Vec<(Vec<u8>, Vec<u8>)> {
        let text = b"in place, please ".repeat(600_000); // 10.2 MB: three 4 MB blocks
        vec![(compress(b"x"), b"x".to_vec()), (compress(&text), text), several_frames(300_000)]
    }

    /// Five frames: text, a skippable frame, `random_len` random bytes (a stored block), an
    /// empty frame, text; and their content.
    fn several_frames(random_len: usize) -> (Vec<u8>, Vec<u8>) {
        let random = crate::rng::SeededRng::new(9).bytes(random_len);
        let mut frames = compress(b"first,");
        frames.extend([0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 7, 7, 7]); // a skippable frame
        frames.extend(compress(&random));
        frames.extend(compress(b""));
        frames.extend(compress(b"last"));
        (frames, [&b"first,"[..], &random, b"last"].concat())
    }

    #[test]
    fn decompress_to_fills_the_buffer_that_content_size_gives() {
        for (frames, content) in frames_that_declare_their_sizes() {
            assert_eq!(content_size(&frames), Some(content.len() as u64));
            let mut dst = vec![0xEE; content.len()];
            decompress_to(&frames, &mut dst, &mut || {}).unwrap();
            assert!(dst == content, "{} bytes", content.len());
            assert_eq!(decompress(&frames, content.len()).unwrap(), content);
        }
    }

    #[test]
    fn decompress_to_refuses_a_buffer_of_another_length() {
        let (frames, content) = frames_that_declare_their_sizes().swap_remove(2);
        for len in [0, content.len() - 1, content.len() + 1] {
            let mut dst = vec![0; len];
            assert!(decompress_to(&frames, &mut dst, &mut || {}).is_err(), "{len} bytes of room");
        }
    }

    #[test]
    fn content_size_is_none_unless_every_frame_declares_it_and_is_whole() {
        let (frames, _) = frames_that_declare_their_sizes().swap_remove(2);
        assert_eq!(content_size(b""), None);
        assert_eq!(content_size(b"not a frame"), None);
        // A cut between two frames leaves whole frames: their content, which decodes.
        let mut whole = 0;
        for cut in 1..frames.len() {
            if let Some(n) = content_size(&frames[..cut]) {
                assert_eq!(decompress(&frames[..cut], usize::MAX).map(|c| c.len() as u64), Ok(n), "cut {cut}");
                whole += 1;
            }
        }
        assert_eq!(whole, 4, "after each of the five frames but the last");
        let mut tail = frames.clone();
        tail.push(0);
        assert_eq!(content_size(&tail), None);
        // A frame without a content size (lz4_flex's default, as the lz4 tool's) among them.
        let mut unsized_frame = Vec::new();
        let mut encoder = lz4_flex::frame::FrameEncoder::new(&mut unsized_frame);
        encoder.write_all(b"no size").unwrap();
        encoder.finish().unwrap();
        assert_eq!(declared_content_size(&unsized_frame), None);
        assert_eq!(content_size(&[&frames[..], &unsized_frame].concat()), None);
        assert_eq!(decompress(&[&frames[..], &unsized_frame].concat(), usize::MAX).unwrap().len(), 300_017);
    }

    #[test]
    fn decompress_to_fails_exactly_where_decompress_fails() {
        // Every 7th truncation and one flipped bit in every 5th byte of a frame of linked 64 KB
        // blocks with block checksums, and of the frames with a skippable frame: where the
        // damaged data still claims a content size, decoding into a buffer of that size gives
        // what the growing decoder gives under the same limit, error for error.
        let text = b"linked blocks, checked blocks; ".repeat(7_000); // 217 KB: four blocks
        let info = lz4_flex::frame::FrameInfo::new()
            .content_size(Some(text.len() as u64))
            .block_checksums(true)
            .block_mode(lz4_flex::frame::BlockMode::Linked)
            .block_size(lz4_flex::frame::BlockSize::Max64KB);
        let mut linked = Vec::new();
        let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, &mut linked);
        encoder.write_all(&text).unwrap();
        encoder.finish().unwrap();
        assert_eq!(decompress(&linked, text.len()).unwrap(), text);
        let (several, _) = several_frames(3000);
        let mut checked = 0;
        for frames in [linked, several] {
            let mut mutants: Vec<Vec<u8>> = (0..frames.len()).step_by(7).map(|cut| frames[..cut].to_vec()).collect();
            for at in (0..frames.len()).step_by(5) {
                let mut m = frames.clone();
                m[at] ^= 1 << (at % 8);
                mutants.push(m);
            }
            for m in mutants {
                let Some(n) = content_size(&m).filter(|&n| n < 1 << 24) else { continue };
                let mut dst = vec![0; n as usize];
                let into = decompress_to(&m, &mut dst, &mut || {}).map(|()| dst);
                assert_eq!(into, decompress(&m, n as usize));
                checked += 1;
            }
        }
        assert!(checked > 500, "only {checked} damaged inputs still declared a size");
    }

    #[test]
    fn every_block_after_the_first_ticks() {
        let (frames, content) = frames_that_declare_their_sizes().swap_remove(1);
        let mut ticks = 0;
        decompress_with_tick(&frames, content.len(), &mut || ticks += 1).unwrap();
        assert_eq!(ticks, 2, "three blocks");
        let mut dst = vec![0; content.len()];
        decompress_to(&frames, &mut dst, &mut || ticks += 1).unwrap();
        assert_eq!(ticks, 4);
    }

    #[test]
    fn trailing_garbage_is_corrupt() {
        for tail in [&[0u8][..], &[1, 2, 3], b"junk after the frame"] {
            let mut data = compress(b"payload");
            data.extend_from_slice(tail);
            assert!(matches!(decompress(&data, 100), Err(CodecError::Corrupt(_))), "{tail:?}");
        }
    }

    #[test]
    fn garbage_and_truncation_are_corrupt() {
        assert!(matches!(decompress(b"not a frame", 100), Err(CodecError::Corrupt(_))));
        let frame = compress(&b"abcdefgh".repeat(1000));
        for cut in 0..frame.len() {
            assert!(matches!(decompress(&frame[..cut], 1 << 20), Err(CodecError::Corrupt(_))), "cut {cut}");
        }
    }

    #[test]
    fn buffers_grow_by_doubling_but_never_past_the_limit() {
        let mut out = try_with_capacity(8, "test").unwrap();
        out.extend_from_slice(b"12345678");
        ensure_capacity(&mut out, 10, 15).unwrap();
        assert_eq!((out.capacity(), &out[..]), (15, &b"12345678"[..]));
        ensure_capacity(&mut out, 12, 15).unwrap();
        assert_eq!(out.capacity(), 15);
        ensure_capacity(&mut out, 20, 1000).unwrap();
        assert_eq!(out.capacity(), 30);
        assert!(matches!(ensure_capacity(&mut out, usize::MAX / 2, usize::MAX), Err(CodecError::OutOfMemory(_))));
        assert_eq!(out, b"12345678");
    }

    #[test]
    fn descriptor_fields_are_read() {
        // The attack reproducer's header: FLG 0x6C (independent blocks, content size, content
        // checksum), BD 0x70 (4 MB), content size 1, header checksum 0x74.
        let mut input = Cursor { rest: &[0x6C, 0x70, 1, 0, 0, 0, 0, 0, 0, 0, 0x74, 0xAA] };
        let desc = read_descriptor(&mut input, 1).unwrap();
        assert!(desc.independent && desc.content_checksum && !desc.block_checksum);
        assert_eq!((desc.content_size, desc.block_max), (Some(1), 4 << 20));
        assert_eq!(input.rest, [0xAA]);
    }
}
