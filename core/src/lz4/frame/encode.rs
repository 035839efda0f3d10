//! Writing LZ4 frames, through `lz4_flex`'s `FrameEncoder`.

use std::io::Write;

use crate::error::{CodecError, Result};

/// Compress `src` into one LZ4 frame with a content checksum and the content size recorded,
/// independent 4 MB-max blocks — what `lz4 --content-size` would write.
pub fn compress(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() / 2 + 64);
    compress_to_writer(src, &mut out, &mut || ()).expect("writing to a Vec cannot fail");
    out
}

/// Input handed to the encoder between two `tick()` calls: one block.
const TICK_BYTES: usize = 4 << 20;

/// Compress `src` as [`compress`] does, writing the frame to `out`, one block of input at a
/// time with a `tick` after each (where the extension checks for cancel). The frame is the
/// same whatever the pieces: the encoder cuts blocks at 4 MB of input either way.
pub fn compress_to_writer(src: &[u8], out: &mut impl Write, tick: &mut dyn FnMut()) -> Result<()> {
    let info = lz4_flex::frame::FrameInfo::new()
        .content_checksum(true)
        .content_size(Some(src.len() as u64))
        .block_size(lz4_flex::frame::BlockSize::Max4MB);
    let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, out);
    let fail = |e: &dyn std::fmt::Display| CodecError::invalid(format!("lz4 frame compression failed: {e}"));
    for piece in src.chunks(TICK_BYTES) {
        encoder.write_all(piece).map_err(|e| fail(&e))?;
        tick();
    }
    encoder.finish().map_err(|e| fail(&e))?;
    Ok(())
}

/// [`compress`] into the front of `dst` (at least [`compress_bound`] bytes); returns the
/// frame's length.
pub fn compress_to(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    compress_to_ticking(src, dst, &mut || ())
}

/// [`compress_to`] with a `tick` after every 4 MB block of input.
pub fn compress_to_ticking(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<usize> {
    let room = dst.len();
    let mut rest = &mut dst[..];
    compress_to_writer(src, &mut rest, tick)?;
    Ok(room - rest.len())
}

/// The largest frame [`compress`] writes for `len` input bytes: a 15-byte header, per 4 MB
/// block a 4-byte size (an incompressible block is stored as is), the 4-byte end mark and the
/// 4-byte content checksum.
pub fn compress_bound(len: usize) -> usize {
    15 + len + 4 * len.div_ceil(4 << 20).max(1) + 4 + 4
}
