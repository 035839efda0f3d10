//! LZ4 block format, with and without a 4-byte little-endian raw-size prefix. Blocks are
//! written by [`encode`] (byte for byte liblz4's `LZ4_compress_default`) and read by
//! [`decode`].

use super::decode::{self, DecodeError};
use super::encode;
use crate::error::{try_zeroed, CodecError, Result};

/// Compress `src` into one LZ4 block (no size prefix).
pub fn compress(src: &[u8]) -> Result<Vec<u8>> {
    let mut out = try_zeroed(compress_bound(src.len()), "the compressed block")?;
    let n = compress_to(src, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// The largest block [`compress_to`] can write for `len` input bytes (liblz4's
/// `LZ4_COMPRESSBOUND`).
pub fn compress_bound(len: usize) -> usize {
    encode::compress_bound(len)
}

/// Compress `src` into the front of `dst` (at least [`compress_bound`] bytes); returns the
/// block length.
pub fn compress_to(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    compress_to_ticking(src, dst, &mut || {})
}

/// [`compress_to`], calling `tick` every few MB of input (where the caller checks for
/// interrupts).
pub fn compress_to_ticking(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<usize> {
    if src.len() > encode::MAX_INPUT {
        return Err(CodecError::too_large(format!(
            "lz4 compresses at most {} bytes in one block (liblz4's limit); the input has {}",
            encode::MAX_INPUT,
            src.len()
        )));
    }
    encode::compress_to_ticking(src, dst, tick).ok_or_else(|| {
        CodecError::invalid(format!(
            "lz4 compression failed: the output buffer ({} bytes) is smaller than the block",
            dst.len()
        ))
    })
}

/// Decompress one LZ4 block that must expand to exactly `raw_size` bytes.
pub fn decompress(src: &[u8], raw_size: usize) -> Result<Vec<u8>> {
    let mut out = try_zeroed(raw_size, "the decompressed block")?;
    decompress_into(src, &mut out)?;
    Ok(out)
}

/// Decompress one LZ4 block into `dst`, which must be filled exactly.
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<()> {
    decompress_into_ticking(src, dst, &mut || ())
}

/// [`decompress_into`], calling `tick` every [`decode::TICK_BYTES`] of output (where the
/// extension checks for cancel).
pub fn decompress_into_ticking(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
    // SAFETY: the decoder writes only initialised bytes.
    decompress_uninit_ticking(src, unsafe { crate::uninit::as_uninit_mut(dst) }, tick)
}

/// [`decompress_into_ticking`] into memory that need not be initialised (a fresh result):
/// `Ok` means every byte of `dst` was written; nothing of `dst` is read before it is written.
pub fn decompress_uninit_ticking(
    src: &[u8],
    dst: &mut [std::mem::MaybeUninit<u8>],
    tick: &mut dyn FnMut(),
) -> Result<()> {
    let produced = decode::decompress_uninit_ticking(src, dst, tick).map_err(|e| block_error(e, dst.len()))?;
    if produced != dst.len() {
        return Err(CodecError::corrupt(format!(
            "lz4 block decodes to {produced} bytes, but the raw size given is {}: the size given does not match the data",
            dst.len()
        )));
    }
    Ok(())
}

/// The decoder's errors in our words, for a block decoded into `raw_size` bytes.
pub(crate) fn block_error(e: DecodeError, raw_size: usize) -> CodecError {
    use DecodeError as E;
    CodecError::corrupt(match e {
        E::OutputTooSmall => format!(
            "lz4 block decodes to more than the raw size given ({raw_size} bytes): the size given does not match the data"
        ),
        E::LiteralOutOfBounds | E::Truncated => {
            "lz4 block is truncated or corrupt: it ends in the middle of a sequence".to_string()
        }
        E::OffsetZero => "lz4 block is corrupt: a match has offset 0".to_string(),
        E::OffsetOutOfBounds => {
            "lz4 block is corrupt: a match refers to bytes before the start of the output".to_string()
        }
    })
}

/// Compress `src` into a block preceded by its raw size (4 bytes, little-endian), the layout of
/// `lz4_flex::compress_prepend_size` and of many LZ4 bindings.
pub fn compress_size_prepended(src: &[u8]) -> Result<Vec<u8>> {
    let mut out = try_zeroed(4 + compress_bound(src.len()), "the compressed block")?;
    let n = compress_prefixed_to(src, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// [`compress_size_prepended`] into the front of `dst` (at least 4 + [`compress_bound`] bytes);
/// returns the length written, prefix included.
pub fn compress_prefixed_to(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    compress_prefixed_to_ticking(src, dst, &mut || {})
}

/// [`compress_prefixed_to`], calling `tick` as [`compress_to_ticking`] does.
pub fn compress_prefixed_to_ticking(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<usize> {
    let raw = u32::try_from(src.len())
        .map_err(|_| CodecError::too_large("lz4: input longer than 4 GB cannot carry a 4-byte size prefix"))?;
    dst[..4].copy_from_slice(&raw.to_le_bytes());
    Ok(4 + compress_to_ticking(src, &mut dst[4..], tick)?)
}

/// Decompress a size-prepended block, refusing a declared raw size above `max_raw` before
/// allocating anything.
pub fn decompress_size_prepended(src: &[u8], max_raw: usize) -> Result<Vec<u8>> {
    let (raw_size, block) = split_size_prefix(src, max_raw)?;
    decompress(block, raw_size)
}

/// A size-prepended block's raw size (checked against `max_raw`) and its block, which
/// [`decompress_into`] decodes into a buffer of that size.
/// The most bytes `compressed_len` bytes of one LZ4 block can decode to: a match costs at
/// least its token and 2-byte offset for 19 bytes, and each further length byte of 255 adds at
/// most 255, so no input byte yields more than 255 (the 16 cover the last literals' token).
pub fn max_decoded_len(compressed_len: usize) -> usize {
    compressed_len.saturating_mul(255).saturating_add(16)
}

/// Refuse, before anything is allocated, a raw size that `compressed_len` bytes of a block
/// cannot produce.
pub fn check_decodable(compressed_len: usize, raw_size: usize) -> Result<()> {
    if raw_size > max_decoded_len(compressed_len) {
        return Err(CodecError::corrupt(format!(
            "lz4 block of {compressed_len} bytes cannot decode to {raw_size} bytes (at most {})",
            max_decoded_len(compressed_len)
        )));
    }
    Ok(())
}

pub fn split_size_prefix(src: &[u8], max_raw: usize) -> Result<(usize, &[u8])> {
    let Some((prefix, block)) = src.split_first_chunk::<4>() else {
        return Err(CodecError::corrupt(format!(
            "lz4 size-prepended block is {} bytes long, shorter than its 4-byte size prefix",
            src.len()
        )));
    };
    let raw_size = u32::from_le_bytes(*prefix) as usize;
    if raw_size > max_raw {
        return Err(CodecError::over_limit("lz4 block", raw_size as u64, max_raw));
    }
    check_decodable(block.len(), raw_size)?;
    Ok((raw_size, block))
}

#[cfg(test)]
mod tests {

    #[test]
    fn max_decoded_len_bounds_the_most_repetitive_blocks() {
        for len in [0usize, 1, 4, 19, 1000, 1 << 20] {
            let zeros = vec![0u8; len];
            let block = compress(&zeros).unwrap();
            assert!(len <= max_decoded_len(block.len()), "{len} zeros in {} bytes", block.len());
            assert!(check_decodable(block.len(), len).is_ok());
        }
        // a megabyte of zeros comes close to the bound: the bound is not loose by much
        let block = compress(&vec![0u8; 1 << 20]).unwrap();
        assert!(max_decoded_len(block.len()) < 2 * (1 << 20), "{}", block.len());
        assert!(check_decodable(1, 272).is_err());
    }

    use super::*;

    #[test]
    fn round_trip_with_and_without_prefix() {
        let data = b"hello hello hello hello hello, lz4 block".repeat(20);
        assert_eq!(decompress(&compress(&data).unwrap(), data.len()).unwrap(), data);
        let prefixed = compress_size_prepended(&data).unwrap();
        assert_eq!(u32::from_le_bytes(prefixed[..4].try_into().unwrap()) as usize, data.len());
        assert_eq!(decompress_size_prepended(&prefixed, usize::MAX).unwrap(), data);
        assert_eq!(&prefixed[4..], &compress(&data).unwrap()[..]);
    }

    #[test]
    fn the_size_prefix_splits_off_and_is_checked_against_the_limit() {
        let random = crate::rng::SeededRng::new(5).bytes(70_000);
        let mut block = vec![0; 4 + compress_bound(random.len())];
        let n = compress_prefixed_to(&random, &mut block).unwrap();
        let (raw, body) = split_size_prefix(&block[..n], usize::MAX).unwrap();
        assert_eq!((raw, body.len()), (random.len(), n - 4));
        assert!(matches!(split_size_prefix(&block[..n], raw - 1), Err(CodecError::TooLarge(_))));
    }

    #[test]
    fn wrong_raw_size_is_corrupt() {
        let data = vec![7u8; 1000];
        let block = compress(&data).unwrap();
        assert!(matches!(decompress(&block, 999), Err(CodecError::Corrupt(_))));
        assert!(matches!(decompress(&block, 1001), Err(CodecError::Corrupt(_))));
    }

    #[test]
    fn declared_size_over_limit_is_refused_before_decoding() {
        let mut forged = vec![0xFF, 0xFF, 0xFF, 0x3F];
        forged.extend_from_slice(&[0x10, b'a']);
        let err = decompress_size_prepended(&forged, 1 << 20).unwrap_err();
        assert!(matches!(err, CodecError::TooLarge(_)), "{err:?}");
        assert!(matches!(decompress_size_prepended(&[1, 0], 100), Err(CodecError::Corrupt(_))));
    }
}
