//! The self-describing envelope that `compresslab.compress()` writes so that `decompress()`
//! needs no method argument, and the methods it can name.
//!
//! Envelope layout (10-byte header, then the payload):
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic `CLZ` + 0xC1 (never the start of a pglz, lz4 or zstd stream by accident) |
//! | 4 | format version, 1 |
//! | 5 | method id: 0 = stored raw, 1 = pglz, 2 = lz4 block, 3 = zstd frame |
//! | 6..10 | raw (decompressed) length, u32 little-endian |
//!
//! Like PostgreSQL for TOAST and WAL images, a payload that the method refuses or that is not
//! smaller than the raw bytes is stored raw (method id 0): the envelope never costs more than
//! its header. pglz uses the `default` strategy, as TOAST does.

use crate::error::{try_zeroed, CodecError, Result};
use crate::registry::{parse_named, Named};
use crate::{lz4, pglz, ticking, zstd_codec};

crate::named_choices! {
    /// The methods an envelope can name (`compress()`'s `method` argument).
    pub enum EnvelopeMethod: "compression method", "methods" {
        /// Stored as is.
        None = "none",
        Pglz = "pglz",
        Lz4 = "lz4",
        Zstd = "zstd",
    }
}

impl EnvelopeMethod {
    pub fn parse(text: &str) -> Result<EnvelopeMethod> {
        parse_named(text)
    }

    fn id(self) -> u8 {
        match self {
            EnvelopeMethod::None => 0,
            EnvelopeMethod::Pglz => 1,
            EnvelopeMethod::Lz4 => 2,
            EnvelopeMethod::Zstd => 3,
        }
    }

    fn from_id(id: u8) -> Option<EnvelopeMethod> {
        EnvelopeMethod::ALL.iter().copied().find(|m| m.id() == id)
    }

    /// Check a level for this method: only zstd has levels.
    pub fn check_level(self, level: Option<i32>) -> Result<Option<i32>> {
        match (self, level) {
            (_, None) => Ok(None),
            (EnvelopeMethod::Zstd, Some(l)) => zstd_codec::check_level(l).map(Some),
            (m, Some(l)) => Err(CodecError::invalid(format!(
                "compression method {} has no levels, but level {l} was given",
                m.name()
            ))),
        }
    }
}

pub const MAGIC: [u8; 4] = [b'C', b'L', b'Z', 0xC1];
pub const FORMAT_VERSION: u8 = 1;
pub const HEADER_LEN: usize = 10;

/// Compress `src` with `method` (and `level` for zstd, default 3) into an envelope.
pub fn compress(src: &[u8], method: EnvelopeMethod, level: Option<i32>) -> Result<Vec<u8>> {
    compress_with_tick(src, method, level, &mut || ())
}

/// [`compress`], calling `tick` during long work (see [`pglz::compress_to_ticking`] and
/// [`zstd_codec::compress_to`]). The result is allocated once, fallibly.
pub fn compress_with_tick(
    src: &[u8],
    method: EnvelopeMethod,
    level: Option<i32>,
    tick: &mut dyn FnMut(),
) -> Result<Vec<u8>> {
    let mut out = try_zeroed(compress_bound(src.len()), "the compressed value")?;
    let n = compress_to(src, method, level, &mut out, tick)?;
    out.truncate(n);
    Ok(out)
}

/// The room [`compress_to`] needs for `len` input bytes, whatever the method: the header and
/// the input (a payload that does not shrink is stored raw; pglz and LZ4 need a little more
/// room while they work).
pub fn compress_bound(len: usize) -> usize {
    HEADER_LEN + len.max(pglz::max_output(len)).max(lz4::block::compress_bound(len))
}

/// [`compress_with_tick`] into the front of `dst` (at least [`compress_bound`] bytes): every
/// codec writes straight into it after the header. Returns the envelope's length.
pub fn compress_to(
    src: &[u8],
    method: EnvelopeMethod,
    level: Option<i32>,
    dst: &mut [u8],
    tick: &mut dyn FnMut(),
) -> Result<usize> {
    let level = method.check_level(level)?;
    let raw_len = u32::try_from(src.len())
        .map_err(|_| CodecError::too_large(format!("input of {} bytes is too large to compress", src.len())))?;
    let room = compress_bound(src.len());
    let Some(out) = dst.get_mut(..room) else {
        return Err(CodecError::invalid(format!(
            "{} bytes is too little room for an envelope of {} bytes",
            dst.len(),
            src.len()
        )));
    };
    let payload = &mut out[HEADER_LEN..];
    let stored = match method {
        EnvelopeMethod::None => None,
        EnvelopeMethod::Pglz => pglz::compress_to_ticking(src, payload, &pglz::Strategy::DEFAULT, false, tick),
        EnvelopeMethod::Lz4 => Some(lz4::block::compress_to_ticking(src, payload, tick)?),
        // Room for the input only: a frame that does not fit would not be kept anyway.
        EnvelopeMethod::Zstd => zstd_codec::compress_to(
            src,
            level.unwrap_or(zstd_codec::DEFAULT_LEVEL),
            None,
            &mut payload[..src.len()],
            tick,
        )?,
    };
    let (stored_method, len) = match stored {
        Some(n) if n < src.len() => (method, n),
        _ => {
            ticking::copy(&mut payload[..src.len()], src, tick);
            (EnvelopeMethod::None, src.len())
        }
    };
    out[..4].copy_from_slice(&MAGIC);
    out[4] = FORMAT_VERSION;
    out[5] = stored_method.id();
    out[6..HEADER_LEN].copy_from_slice(&raw_len.to_le_bytes());
    Ok(HEADER_LEN + len)
}

/// What an envelope's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvelopeInfo {
    pub method: EnvelopeMethod,
    pub raw_size: usize,
    pub compressed_size: usize,
}

/// Parse and check an envelope's header.
pub fn info(src: &[u8]) -> Result<EnvelopeInfo> {
    if src.len() < HEADER_LEN || src[..4] != MAGIC {
        return Err(CodecError::corrupt(
            "value is not compresslab-compressed data (missing the compresslab header); \
             raw codec output is read by pglz_decompress, lz4_decompress or zstd_decompress",
        ));
    }
    if src[4] != FORMAT_VERSION {
        return Err(CodecError::corrupt(format!(
            "compresslab format version {} is not supported by this build (it reads version {FORMAT_VERSION})",
            src[4]
        )));
    }
    let method = EnvelopeMethod::from_id(src[5])
        .ok_or_else(|| CodecError::corrupt(format!("compresslab header names unknown method id {}", src[5])))?;
    let raw_size = u32::from_le_bytes(src[6..10].try_into().unwrap()) as usize;
    Ok(EnvelopeInfo { method, raw_size, compressed_size: src.len() })
}

/// Decompress an envelope, refusing a declared raw size above `max_raw` before allocating.
pub fn decompress(src: &[u8], max_raw: usize) -> Result<Vec<u8>> {
    decompress_with_tick(src, max_raw, &mut || ())
}

/// [`decompress`], calling `tick` during long work.
pub fn decompress_with_tick(src: &[u8], max_raw: usize, tick: &mut dyn FnMut()) -> Result<Vec<u8>> {
    let mut out = try_zeroed(decompressed_len(src, max_raw)?, "the decompressed value")?;
    decompress_to(src, &mut out, tick)?;
    Ok(out)
}

/// The raw length an envelope's header declares, checked against `max_raw` (before anything
/// is allocated).
pub fn decompressed_len(src: &[u8], max_raw: usize) -> Result<usize> {
    let info = info(src)?;
    if info.raw_size > max_raw {
        return Err(CodecError::over_limit("compressed value", info.raw_size as u64, max_raw));
    }
    Ok(info.raw_size)
}

/// Decompress an envelope straight into `dst`, which must be of the raw length its header
/// declares ([`decompressed_len`]).
pub fn decompress_to(src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
    // SAFETY: every decoder below writes only initialised bytes.
    decompress_uninit(src, unsafe { crate::uninit::as_uninit_mut(dst) }, tick)
}

/// [`decompress_to`] into memory that need not be initialised (a fresh result): `Ok` means
/// every byte of `dst` was written. pglz and LZ4 decode straight in; zstd (libzstd through
/// zstd-safe, which takes initialised memory) gets `dst` zero-filled first.
pub fn decompress_uninit(src: &[u8], dst: &mut [std::mem::MaybeUninit<u8>], tick: &mut dyn FnMut()) -> Result<()> {
    use crate::uninit::as_uninit;
    let info = info(src)?;
    if dst.len() != info.raw_size {
        return Err(CodecError::invalid(format!(
            "the output has room for {} bytes, but the header says {}",
            dst.len(),
            info.raw_size
        )));
    }
    let payload = &src[HEADER_LEN..];
    let decoded = match info.method {
        EnvelopeMethod::None => {
            if payload.len() == dst.len() {
                for (i, (d, s)) in dst.chunks_mut(ticking::PIECE).zip(payload.chunks(ticking::PIECE)).enumerate() {
                    if i > 0 {
                        tick();
                    }
                    d.copy_from_slice(as_uninit(s));
                }
            }
            payload.len()
        }
        EnvelopeMethod::Pglz => pglz::decompress_uninit_ticking(payload, dst, true, tick)?,
        EnvelopeMethod::Lz4 => lz4::block::decompress_uninit_ticking(payload, dst, tick).map(|()| dst.len())?,
        EnvelopeMethod::Zstd => {
            for (i, d) in dst.chunks_mut(ticking::PIECE).enumerate() {
                if i > 0 {
                    tick();
                }
                d.fill(std::mem::MaybeUninit::new(0));
            }
            // SAFETY: every byte of dst was just written.
            let dst = unsafe { &mut *(dst as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
            zstd_codec::decompress_to(payload, None, dst, tick).map(|()| dst.len())?
        }
    };
    if decoded != info.raw_size {
        return Err(CodecError::corrupt(format!(
            "compressed value decoded to {decoded} bytes, but its header says {}",
            info.raw_size
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_round_trips_and_reports_itself() {
        let data = b"envelope envelope envelope envelope envelope envelope".repeat(40);
        for &method in EnvelopeMethod::ALL {
            let packed = compress(&data, method, None).unwrap();
            let info = info(&packed).unwrap();
            assert_eq!(info.method, method);
            assert_eq!(info.raw_size, data.len());
            assert_eq!(info.compressed_size, packed.len());
            assert_eq!(decompress(&packed, data.len()).unwrap(), data);
        }
    }

    #[test]
    fn incompressible_input_is_stored_raw() {
        let data = crate::rng::SeededRng::new(0x9E37_79B9).bytes(4096);
        for &method in EnvelopeMethod::ALL {
            let packed = compress(&data, method, None).unwrap();
            assert_eq!(info(&packed).unwrap().method, EnvelopeMethod::None);
            assert_eq!(packed.len(), data.len() + HEADER_LEN);
            assert_eq!(decompress(&packed, usize::MAX).unwrap(), data);
        }
    }

    #[test]
    fn names_levels_and_bad_headers() {
        assert_eq!(EnvelopeMethod::parse(" LZ4 ").unwrap(), EnvelopeMethod::Lz4);
        assert!(matches!(EnvelopeMethod::parse("snappy"), Err(CodecError::InvalidParameter(_))));
        assert!(matches!(compress(b"x", EnvelopeMethod::Lz4, Some(1)), Err(CodecError::InvalidParameter(_))));
        assert!(matches!(compress(b"x", EnvelopeMethod::Zstd, Some(99)), Err(CodecError::InvalidParameter(_))));
        let mut packed = compress(&[1u8; 100], EnvelopeMethod::Zstd, Some(19)).unwrap();
        assert!(matches!(decompress(&packed, 99), Err(CodecError::TooLarge(_))));
        packed[5] = 9;
        assert!(matches!(decompress(&packed, 1000), Err(CodecError::Corrupt(_))));
        packed[4] = 2;
        assert!(matches!(info(&packed), Err(CodecError::Corrupt(_))));
        assert!(matches!(info(b"short"), Err(CodecError::Corrupt(_))));
    }

    #[test]
    fn lying_raw_size_is_corrupt() {
        let data = vec![5u8; 1000];
        for method in [EnvelopeMethod::Pglz, EnvelopeMethod::Lz4, EnvelopeMethod::Zstd] {
            let mut packed = compress(&data, method, None).unwrap();
            packed[6..10].copy_from_slice(&1200u32.to_le_bytes());
            assert!(matches!(decompress(&packed, 1 << 20), Err(CodecError::Corrupt(_))), "{method:?}");
        }
    }
}
