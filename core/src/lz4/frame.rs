//! LZ4 frame format (the `lz4` command-line tool's format), with bounded decoding.

use std::io::{Read, Write};

use crate::error::{CodecError, Result};

const FRAME_MAGIC: u32 = 0x184D_2204;
/// Skippable frames use magic numbers 0x184D2A50 to 0x184D2A5F.
const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;

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

/// Decompress LZ4 frame data (one or more concatenated frames), producing at most `max_raw`
/// bytes: a declared content size above the limit is refused before decoding, and output that
/// grows past it stops the decoder.
pub fn decompress(src: &[u8], max_raw: usize) -> Result<Vec<u8>> {
    if let Some(declared) = declared_content_size(src) {
        if declared > max_raw as u64 {
            return Err(CodecError::too_large(format!(
                "lz4 frame declares {declared} decompressed bytes, more than the limit of {max_raw}"
            )));
        }
    }
    let magic = src.first_chunk::<4>().map(|m| u32::from_le_bytes(*m));
    if !matches!(magic, Some(m) if m == FRAME_MAGIC || m & 0xFFFF_FFF0 == SKIPPABLE_MAGIC) {
        return Err(CodecError::corrupt("input is not an lz4 frame (bad magic number)"));
    }
    // lz4_flex decodes one frame per decoder; the lz4 tool writes and reads concatenations.
    let mut rest = src;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let before = rest.len();
        let frame = read_bounded(lz4_flex::frame::FrameDecoder::new(&mut rest), max_raw - out.len(), "lz4 frame")?;
        if rest.len() == before {
            return Err(CodecError::corrupt(format!("lz4 frame data has {before} trailing bytes that are not a frame")));
        }
        out.extend_from_slice(&frame);
    }
    Ok(out)
}

/// Read everything from `reader`, failing as `TooLarge` once more than `max_raw` bytes come out
/// and as `Corrupt` on a decoding error.
pub(crate) fn read_bounded(reader: impl Read, max_raw: usize, what: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let limit = (max_raw as u64).saturating_add(1);
    reader
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| CodecError::corrupt(format!("{what} is corrupt: {e}")))?;
    if out.len() > max_raw {
        return Err(CodecError::too_large(format!(
            "{what} decompresses to more than the limit of {max_raw} bytes"
        )));
    }
    Ok(out)
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
    fn concatenated_frames_decode_to_concatenation() {
        let mut two = compress(b"first,");
        two.extend(compress(b"second"));
        assert_eq!(decompress(&two, 100).unwrap(), b"first,second");
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
        for cut in [5, 10, frame.len() / 2, frame.len() - 1] {
            assert!(decompress(&frame[..cut], 1 << 20).is_err(), "cut {cut}");
        }
    }
}
