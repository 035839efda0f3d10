//! Decoding LZ4 frames: the frame loop, one frame's blocks, and where the content goes.

use std::mem::MaybeUninit;

use twox_hash::XxHash32;

use super::header::{read_descriptor, skip_frame, Cursor, BLOCK_STORED, FRAME_MAGIC, LEGACY_MAGIC, SKIPPABLE_MAGIC};
use crate::bytes::Filled;
use crate::error::{try_with_capacity, CodecError, Result};
use crate::lz4::decode::{self, DecodeError};
use crate::uninit::{as_uninit, as_uninit_mut};

/// How far back a linked block may refer into earlier output (LZ4 offsets are 16 bits).
const LINKED_WINDOW: usize = 64 * 1024;
/// No LZ4 block decodes to more than 255 times its own size (a match-length byte adds at most
/// 255 bytes); used to bound buffers by the input instead of trusting sizes the input claims.
const MAX_EXPANSION: usize = 255;

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
/// (as [`content_size`](super::content_size) gives it): content of any other length is an error, and nothing is
/// written past `dst`. Otherwise as [`decompress_with_tick`] with `dst.len()` as the limit,
/// with the same errors (the unit tests and a fuzz target compare the two).
pub fn decompress_to(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
    // SAFETY: the decoder writes only initialised bytes.
    decompress_to_uninit(src, unsafe { as_uninit_mut(dst) }, tick)
}

/// [`decompress_to`] into memory that need not be initialised (a fresh SQL result): `Ok`
/// means every byte of `dst` is written; nothing of `dst` is read before it is written, so
/// the result and the errors do not depend on what it held.
pub fn decompress_to_uninit(src: &[u8], dst: &mut [MaybeUninit<u8>], tick: &mut dyn FnMut()) -> Result<()> {
    Filled::fill_exactly(
        dst,
        |out, expected| decode_frames(src, out, expected, tick),
        |held, expected| format!("lz4 frame data holds {held} bytes of content, expected {expected}"),
    )
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
    /// Let `decode` write into `room` bytes after the content (room reserved, not
    /// necessarily initialised), given the content before them; keep the bytes it says it
    /// wrote, which it must have written.
    fn decode_into(
        &mut self,
        room: usize,
        decode: impl FnOnce(&[u8], &mut [MaybeUninit<u8>]) -> std::result::Result<usize, DecodeError>,
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
        decode: impl FnOnce(&[u8], &mut [MaybeUninit<u8>]) -> std::result::Result<usize, DecodeError>,
    ) -> std::result::Result<usize, DecodeError> {
        let start = Vec::len(self);
        self.resize(start.saturating_add(room), 0);
        let (earlier, spare) = self.split_at_mut(start);
        // SAFETY: the block decoder writes only initialised bytes.
        let decoded = decode(earlier, unsafe { as_uninit_mut(spare) });
        self.truncate(start.saturating_add(*decoded.as_ref().unwrap_or(&0)));
        decoded
    }
}

impl Output for Filled<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn written(&self) -> &[u8] {
        Filled::written(self)
    }
    fn reserve(&mut self, needed: usize, _max_raw: usize) -> Result<()> {
        // The decoder's limit is the buffer's length, so it never asks for more.
        debug_assert!(needed <= self.buf.len());
        Ok(())
    }
    fn extend_from_slice(&mut self, data: &[u8]) {
        self.buf[self.len..][..data.len()].copy_from_slice(as_uninit(data));
        self.len += data.len();
    }
    fn decode_into(
        &mut self,
        room: usize,
        decode: impl FnOnce(&[u8], &mut [MaybeUninit<u8>]) -> std::result::Result<usize, DecodeError>,
    ) -> std::result::Result<usize, DecodeError> {
        let (earlier, rest) = self.buf.split_at_mut(self.len);
        // SAFETY: `buf[..len]` is written (Filled's invariant).
        let earlier = unsafe { crate::uninit::assume_written(earlier, earlier.len()) };
        let decoded = decode(earlier, &mut rest[..room]);
        self.len += *decoded.as_ref().unwrap_or(&0);
        decoded
    }
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
                // Into the room as it is: the block decoder writes before it reads.
                decode::decompress_uninit_ticking(data, spare, &mut || ())
            } else {
                let window = earlier.get(start.saturating_sub(LINKED_WINDOW).max(frame_start)..).unwrap_or_default();
                // Linked blocks (which our frames never have) take the block decoder's entry
                // with a dictionary, on initialised memory: the room is zeroed for them.
                spare.fill(MaybeUninit::new(0));
                // SAFETY: every byte of `spare` was just written.
                let spare = unsafe { &mut *(spare as *mut [MaybeUninit<u8>] as *mut [u8]) };
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
pub(super) fn ensure_capacity(out: &mut Vec<u8>, needed: usize, max_raw: usize) -> Result<()> {
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
