//! The codecs the lab measures, behind one trait so that Rust codecs and PostgreSQL's own C
//! routines (implemented in the extension, which can reach the server's symbols) are timed by
//! the same loop.

use crate::error::{CodecError, Result};
use crate::{lz4, pglz, zstd_codec};

/// One compression method at one setting, with whatever state it keeps between calls.
pub trait Codec {
    /// The method's name as reported (`pglz`, `lz4`, `zstd`, `server_pglz`, …).
    fn name(&self) -> String;
    /// The level, for methods that have levels.
    fn level(&self) -> Option<i32> {
        None
    }
    /// Compress `src` into `dst` (cleared first); `None` when the method refuses the input.
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize>;
    /// Decompress `src` into exactly `dst.len()` bytes.
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<()>;
}

/// Which codec a method name stands for, parsed from `name[:level]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecSpec {
    pub name: String,
    pub level: Option<i32>,
}

impl CodecSpec {
    /// Parse `pglz`, `zstd:19`, `server_zstd:-5`, … (names are checked when the codec is built).
    pub fn parse(text: &str) -> Result<CodecSpec> {
        let text = text.trim();
        let (name, level) = match text.split_once(':') {
            Some((name, level)) => {
                let level = level.trim().parse::<i32>().map_err(|_| {
                    CodecError::invalid(format!("method \"{text}\": level \"{level}\" is not an integer"))
                })?;
                (name.trim(), Some(level))
            }
            None => (text, None),
        };
        Ok(CodecSpec { name: name.to_ascii_lowercase(), level })
    }

    /// Refuse a level for a method that has none.
    pub fn no_level(&self) -> Result<()> {
        match self.level {
            None => Ok(()),
            Some(l) => Err(CodecError::invalid(format!("method {} has no levels, but level {l} was given", self.name))),
        }
    }
}

/// Rust methods the core offers; the extension adds `server_*` methods for PostgreSQL's C code.
pub const RUST_METHODS: &[&str] = &["pglz", "pglz_always", "pglz_fast", "lz4", "lz4_frame", "zstd", "memcpy"];

/// Build a Rust codec, or `Ok(None)` when the name is not one of [`RUST_METHODS`].
pub fn rust_codec(spec: &CodecSpec, default_zstd_level: i32) -> Result<Option<Box<dyn Codec>>> {
    let codec: Box<dyn Codec> = match spec.name.as_str() {
        "pglz" => {
            spec.no_level()?;
            Box::new(Pglz { strategy: pglz::Strategy::DEFAULT, name: "pglz", fast: false })
        }
        "pglz_always" => {
            spec.no_level()?;
            Box::new(Pglz { strategy: pglz::Strategy::ALWAYS, name: "pglz_always", fast: false })
        }
        "pglz_fast" => {
            spec.no_level()?;
            Box::new(Pglz { strategy: pglz::Strategy::DEFAULT, name: "pglz_fast", fast: true })
        }
        "lz4" => {
            spec.no_level()?;
            Box::new(Lz4Block)
        }
        "lz4_frame" => {
            spec.no_level()?;
            Box::new(Lz4Frame)
        }
        "zstd" => {
            let level = zstd_codec::check_level(spec.level.unwrap_or(default_zstd_level))?;
            Box::new(Zstd::new(level)?)
        }
        "memcpy" => {
            spec.no_level()?;
            Box::new(Memcpy)
        }
        _ => return Ok(None),
    };
    Ok(Some(codec))
}

struct Pglz {
    strategy: pglz::Strategy,
    name: &'static str,
    fast: bool,
}

impl Codec for Pglz {
    fn name(&self) -> String {
        self.name.to_string()
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        if self.fast {
            pglz::compress_fast_into(src, dst, &self.strategy)
        } else {
            pglz::compress_into(src, dst, &self.strategy)
        }
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        pglz::decompress_into(src, dst, true).map(|_| ())
    }
}

struct Lz4Block;

impl Codec for Lz4Block {
    fn name(&self) -> String {
        "lz4".into()
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        Some(lz4::block::compress_into(src, dst))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        lz4::block::decompress_into(src, dst)
    }
}

struct Lz4Frame;

impl Codec for Lz4Frame {
    fn name(&self) -> String {
        "lz4_frame".into()
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        *dst = lz4::frame::compress(src);
        Some(dst.len())
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        let out = lz4::frame::decompress(src, dst.len())?;
        if out.len() != dst.len() {
            return Err(CodecError::corrupt("lz4 frame decoded to the wrong length"));
        }
        dst.copy_from_slice(&out);
        Ok(())
    }
}

struct Zstd {
    level: i32,
    compressor: zstd::bulk::Compressor<'static>,
    decompressor: zstd::bulk::Decompressor<'static>,
}

impl Zstd {
    fn new(level: i32) -> Result<Zstd> {
        let fail = |e: std::io::Error| CodecError::invalid(format!("zstd: {e}"));
        Ok(Zstd {
            level,
            compressor: zstd::bulk::Compressor::new(level).map_err(fail)?,
            decompressor: zstd::bulk::Decompressor::new().map_err(fail)?,
        })
    }
}

impl Codec for Zstd {
    fn name(&self) -> String {
        "zstd".into()
    }
    fn level(&self) -> Option<i32> {
        Some(self.level)
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        dst.clear();
        dst.reserve(zstd_codec::compress_bound(src.len()));
        self.compressor.compress_to_buffer(src, dst).ok()
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        let n = self
            .decompressor
            .decompress_to_buffer(src, dst)
            .map_err(|e| CodecError::corrupt(format!("zstd frame is corrupt: {e}")))?;
        if n != dst.len() {
            return Err(CodecError::corrupt("zstd frame decoded to the wrong length"));
        }
        Ok(())
    }
}

/// The speed limit: a plain copy, "compressing" nothing.
struct Memcpy;

impl Codec for Memcpy {
    fn name(&self) -> String {
        "memcpy".into()
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        dst.clear();
        dst.extend_from_slice(src);
        Some(src.len())
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Result<()> {
        dst.copy_from_slice(src);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_build() {
        assert_eq!(CodecSpec::parse(" zstd:19 ").unwrap(), CodecSpec { name: "zstd".into(), level: Some(19) });
        assert_eq!(CodecSpec::parse("LZ4").unwrap(), CodecSpec { name: "lz4".into(), level: None });
        assert!(CodecSpec::parse("zstd:high").is_err());
        for name in RUST_METHODS {
            let codec = rust_codec(&CodecSpec::parse(name).unwrap(), 3).unwrap().unwrap();
            assert_eq!(&codec.name(), name);
        }
        assert_eq!(rust_codec(&CodecSpec::parse("zstd").unwrap(), 7).unwrap().unwrap().level(), Some(7));
        assert!(rust_codec(&CodecSpec::parse("zstd:99").unwrap(), 3).is_err());
        assert!(rust_codec(&CodecSpec::parse("lz4:3").unwrap(), 3).is_err());
        assert!(rust_codec(&CodecSpec::parse("snappy").unwrap(), 3).unwrap().is_none());
    }

    #[test]
    fn every_rust_codec_round_trips_through_the_trait() {
        let data = b"codec trait round trip, codec trait round trip, codec trait round trip".repeat(50);
        for name in RUST_METHODS {
            let mut codec = rust_codec(&CodecSpec::parse(name).unwrap(), 3).unwrap().unwrap();
            let mut packed = Vec::new();
            let n = codec.compress(&data, &mut packed).expect(name);
            assert_eq!(n, packed.len(), "{name}");
            let mut out = vec![0u8; data.len()];
            codec.decompress(&packed, &mut out).unwrap();
            assert_eq!(out, data, "{name}");
        }
    }
}
