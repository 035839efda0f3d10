//! The codecs the lab measures, behind one trait so that our Rust codecs and PostgreSQL's own C
//! routines (built by the extension, which can reach the server's symbols) are timed by the
//! same loop. Which codec a method name stands for is the registry's business
//! ([`crate::registry`]); [`build`] turns a parsed [`MethodSpec`] of ours into a codec. The
//! server's codecs are built by the extension and handed in as `Box<dyn Codec>`.

use std::io::Cursor;

use crate::error::{try_reserve, CodecError, Result};
use crate::registry::{MethodKind, MethodSpec};
use crate::{lz4, pglz, ticking, zstd_codec};

/// One compression method at one setting, with whatever state it keeps between calls.
pub trait Codec {
    /// The method and level this codec runs.
    fn spec(&self) -> MethodSpec;
    /// The room [`Codec::compress`] may need in `dst` for `len` input bytes.
    fn compress_bound(&self, len: usize) -> usize;
    /// Compress `src` into the front of `dst` (at least `compress_bound(src.len())` bytes) and
    /// return the compressed length; `Ok(None)` when the method refuses the input (pglz's
    /// strategy: a normal outcome, stored raw). A failure is an error, never a raw slice.
    /// `tick` may be called during long work (the extension checks for cancel there).
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>>;
    /// Decompress `src` into exactly `dst.len()` bytes.
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()>;
    /// [`Codec::decompress`] into memory that need not be initialised (a fresh result): `Ok`
    /// means every byte of `dst` was written. This default zero-fills `dst` first (a [`PIECE`]
    /// at a time); a codec that only writes its output (the C libraries) decodes straight in.
    ///
    /// [`PIECE`]: crate::ticking::PIECE
    fn decompress_uninit(
        &mut self,
        src: &[u8],
        dst: &mut [std::mem::MaybeUninit<u8>],
        tick: &mut dyn FnMut(),
    ) -> Result<()> {
        for (i, piece) in dst.chunks_mut(crate::ticking::PIECE).enumerate() {
            if i > 0 {
                tick();
            }
            piece.fill(std::mem::MaybeUninit::new(0));
        }
        // SAFETY: every byte of dst was just written.
        let dst = unsafe { &mut *(dst as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
        self.decompress(src, dst, tick)
    }
    /// The longest slice this codec takes, and why, where one call of it on a longer one
    /// could not be cancelled (the server's C `pglz_compress`): the lab leaves the codec out
    /// of a slice size with a longer slice, saying so. None: any length.
    fn max_slice(&self) -> Option<(usize, &'static str)> {
        None
    }
    /// Wall and CPU seconds to add to what the calling thread measured around this codec's
    /// calls since the last time asked (then reset): a codec that runs a long call on another
    /// thread (the server's C code, so that the backend answers cancel meanwhile) adds that
    /// thread's time in the call and takes off the caller's own around it (copies, waiting),
    /// so that the lab's figures are the call's alone.
    fn take_time_elsewhere(&mut self) -> (f64, f64) {
        (0.0, 0.0)
    }
}

/// Compress `src` with `codec` into `scratch` (resized fallibly to the codec's bound), for
/// callers that keep one output at a time; `tick` is the codec's (long values check for
/// cancel there).
pub fn compress_to_vec(
    codec: &mut dyn Codec,
    src: &[u8],
    scratch: &mut Vec<u8>,
    tick: &mut dyn FnMut(),
) -> Result<Option<usize>> {
    let bound = codec.compress_bound(src.len());
    if scratch.len() < bound {
        try_reserve(scratch, bound - scratch.len(), "compressed output")?;
        scratch.resize(bound, 0);
    }
    codec.compress(src, scratch, tick)
}

/// The codec of one of our methods; a server method is an error here: the extension builds
/// those from the server's own code (`src/server/codecs/mod.rs`) and hands them to the lab as
/// `Box<dyn Codec>`, so the core never calls back up to make one.
pub fn build(spec: &MethodSpec) -> Result<Box<dyn Codec>> {
    let spec = *spec;
    Ok(match spec.kind {
        MethodKind::Memcpy => Box::new(Memcpy),
        MethodKind::Pglz => Box::new(Pglz { spec, strategy: pglz::Strategy::DEFAULT, fast: false }),
        MethodKind::PglzAlways => Box::new(Pglz { spec, strategy: pglz::Strategy::ALWAYS, fast: false }),
        MethodKind::PglzFast => Box::new(Pglz { spec, strategy: pglz::Strategy::DEFAULT, fast: true }),
        MethodKind::Lz4 => Box::new(Lz4Block),
        MethodKind::Lz4Frame => Box::new(Lz4Frame),
        MethodKind::Zstd => Box::new(Zstd::new(spec)?),
        MethodKind::ServerPglz | MethodKind::ServerPglzAlways | MethodKind::ServerLz4 | MethodKind::ServerZstd => {
            return Err(CodecError::invalid(format!(
                "method {} runs PostgreSQL's own C code and can only be measured inside the server",
                spec.name()
            )))
        }
    })
}

struct Pglz {
    spec: MethodSpec,
    strategy: pglz::Strategy,
    fast: bool,
}

impl Codec for Pglz {
    fn spec(&self) -> MethodSpec {
        self.spec
    }
    fn compress_bound(&self, len: usize) -> usize {
        pglz::max_output(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        Ok(pglz::compress_to_ticking(src, dst, &self.strategy, self.fast, tick))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        pglz::decompress_into_ticking(src, dst, true, tick).map(|_| ())
    }
}

struct Lz4Block;

impl Codec for Lz4Block {
    fn spec(&self) -> MethodSpec {
        MethodSpec { kind: MethodKind::Lz4, level: None }
    }
    fn compress_bound(&self, len: usize) -> usize {
        lz4::block::compress_bound(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        lz4::block::compress_to_ticking(src, dst, tick).map(Some)
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        lz4::block::decompress_into_ticking(src, dst, tick)
    }
}

struct Lz4Frame;

impl Codec for Lz4Frame {
    fn spec(&self) -> MethodSpec {
        MethodSpec { kind: MethodKind::Lz4Frame, level: None }
    }
    fn compress_bound(&self, len: usize) -> usize {
        lz4::frame::compress_bound(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        let mut cursor = Cursor::new(dst);
        lz4::frame::compress_to_writer(src, &mut cursor, tick)?;
        Ok(Some(cursor.position() as usize))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        lz4::frame::decompress_to(src, dst, tick)
    }
}

struct Zstd {
    spec: MethodSpec,
    compressor: zstd::bulk::Compressor<'static>,
    decompressor: zstd::bulk::Decompressor<'static>,
}

impl Zstd {
    fn new(spec: MethodSpec) -> Result<Zstd> {
        let level = spec.level.unwrap_or(zstd_codec::DEFAULT_LEVEL);
        let fail = |e: std::io::Error| CodecError::invalid(format!("zstd: {e}"));
        Ok(Zstd {
            spec,
            compressor: zstd::bulk::Compressor::new(level).map_err(fail)?,
            decompressor: zstd::bulk::Decompressor::new().map_err(fail)?,
        })
    }
}

impl Codec for Zstd {
    fn spec(&self) -> MethodSpec {
        self.spec
    }
    fn compress_bound(&self, len: usize) -> usize {
        zstd_codec::compress_bound(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        if src.len() > zstd_codec::CHUNK {
            // Long inputs go through the streaming encoder a chunk at a time, so that cancel
            // takes effect between chunks (one frame either way).
            let level = self.spec.level.unwrap_or(zstd_codec::DEFAULT_LEVEL);
            return match zstd_codec::compress_to(src, level, None, dst, tick)? {
                Some(n) => Ok(Some(n)),
                None => Err(CodecError::invalid(format!("zstd frame is larger than its bound of {} bytes", dst.len()))),
            };
        }
        self.compressor
            .compress_to_buffer(src, dst)
            .map(Some)
            .map_err(|e| CodecError::invalid(format!("zstd compression failed: {e}")))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        if dst.len() > zstd_codec::CHUNK {
            return zstd_codec::decompress_to(src, None, dst, tick);
        }
        let n = self
            .decompressor
            .decompress_to_buffer(src, dst)
            .map_err(|e| CodecError::corrupt(format!("zstd frame is corrupt: {e}")))?;
        if n != dst.len() {
            return Err(CodecError::corrupt(format!("zstd frame decoded to {n} bytes, expected {}", dst.len())));
        }
        Ok(())
    }
}

/// The speed limit: a plain copy, "compressing" nothing.
struct Memcpy;

impl Codec for Memcpy {
    fn spec(&self) -> MethodSpec {
        MethodSpec { kind: MethodKind::Memcpy, level: None }
    }
    fn compress_bound(&self, len: usize) -> usize {
        len
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        ticking::copy(&mut dst[..src.len()], src, tick);
        Ok(Some(src.len()))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        if src.len() != dst.len() {
            return Err(CodecError::corrupt("memcpy: stored copy has the wrong length"));
        }
        ticking::copy(dst, src, tick);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::registry::{Named, METHODS};

    /// One of our codecs by method text (test shorthand).
    pub(crate) fn codec(text: &str) -> Box<dyn Codec> {
        build(&MethodSpec::parse(text, 3).unwrap()).unwrap()
    }

    #[test]
    fn every_rust_method_builds_and_round_trips_through_the_trait() {
        let data = b"codec trait round trip, codec trait round trip, codec trait round trip".repeat(50);
        for info in METHODS.iter().filter(|m| !m.server) {
            let mut codec = codec(info.name);
            assert_eq!(codec.spec().kind, info.kind);
            let mut packed = Vec::new();
            let n = compress_to_vec(codec.as_mut(), &data, &mut packed, &mut || ()).unwrap().expect(info.name);
            assert!(n <= codec.compress_bound(data.len()), "{}", info.name);
            let mut out = vec![0u8; data.len()];
            codec.decompress(&packed[..n], &mut out, &mut || ()).unwrap();
            assert_eq!(out, data, "{}", info.name);
        }
        assert_eq!(codec("zstd:7").spec().level, Some(7));
        for server in METHODS.iter().filter(|m| m.server) {
            let spec = MethodSpec::parse(server.name, 3).unwrap();
            assert!(matches!(build(&spec), Err(CodecError::InvalidParameter(_))), "{}", server.kind.name());
        }
    }

    /// Long inputs call the tick while they are compressed (and zstd's while decompressed), so
    /// that cancel takes effect within a slice.
    #[test]
    fn long_slices_tick() {
        let data = crate::lab::payload::synthetic(crate::lab::payload::SyntheticKind::Text, 3 << 20, 1).unwrap();
        for method in ["pglz", "pglz_fast", "pglz_always", "zstd:1"] {
            let mut codec = codec(method);
            let mut packed = vec![0u8; codec.compress_bound(data.len())];
            let mut ticks = 0;
            let n = codec.compress(&data, &mut packed, &mut || ticks += 1).unwrap().unwrap();
            assert!(ticks >= 2, "{method}: {ticks} ticks");
            let mut out = vec![0u8; data.len()];
            codec.decompress(&packed[..n], &mut out, &mut || ()).unwrap();
            assert_eq!(out, data, "{method}");
        }
    }

    #[test]
    fn refusal_is_none_and_damage_is_an_error() {
        let mut pglz = codec("pglz");
        let mut scratch = Vec::new();
        assert_eq!(compress_to_vec(pglz.as_mut(), b"short", &mut scratch, &mut || ()).unwrap(), None);
        let mut out = [0u8; 10];
        assert!(matches!(pglz.decompress(b"\x02\x61\x00\x00", &mut out, &mut || ()), Err(CodecError::Corrupt(_))));
    }
}
