//! PostgreSQL's own C routines and the C libraries the server links, as codecs the lab times
//! beside ours: the server's pglz and CRC-32C (exported by the postgres binary), and the
//! liblz4 and libzstd it has loaded. Our own zstd is statically linked under the same symbol
//! names, so the server's libraries are reached through `dlsym` on the already-loaded shared
//! objects. [`build`] makes any method of the registry, ours or the server's.

use std::ffi::{c_char, c_void};
use std::mem::MaybeUninit;

use compresslab_core::error::{try_reserve, Result};
use compresslab_core::lab::codecs;
use compresslab_core::lab::Codec;
use compresslab_core::pglz::{self, Strategy};
use compresslab_core::registry::{MethodKind, MethodSpec};
use compresslab_core::uninit::as_uninit_mut;
use compresslab_core::CodecError;

use super::c_zstd::ServerZstd;
use super::loaded::loaded_symbol;

type Crc32cFn = unsafe extern "C" fn(crc: u32, data: *const c_void, len: usize) -> u32;

unsafe extern "C" {
    fn pglz_compress(source: *const c_char, slen: i32, dest: *mut c_char, strategy: *const Strategy) -> i32;
    fn pglz_decompress(source: *const c_char, slen: i32, dest: *mut c_char, rawsize: i32, check_complete: bool) -> i32;
    /// Chosen at start-up: the SSE4.2 routine when the CPU has it, else slicing-by-8.
    static pg_comp_crc32c: Crc32cFn;
    fn pg_comp_crc32c_sb8(crc: u32, data: *const c_void, len: usize) -> u32;
}

/// The server's `pglz_compress` into the front of `dst`, which must hold at least
/// `PGLZ_MAX_OUTPUT(src.len())` = `src.len() + 4` bytes; None where it returns -1.
pub fn c_pglz_compress(src: &[u8], dst: &mut [u8], strategy: &Strategy) -> Option<usize> {
    let slen = i32::try_from(src.len()).ok()?;
    assert!(dst.len() >= pglz::max_output(src.len()), "pglz_compress needs PGLZ_MAX_OUTPUT bytes");
    // SAFETY: dest has at least PGLZ_MAX_OUTPUT(slen) bytes (asserted above), the bound
    // pglz_compress writes within; source and strategy (repr(C), PGLZ_Strategy's layout) are
    // valid for the call.
    let n = unsafe { pglz_compress(src.as_ptr().cast(), slen, dst.as_mut_ptr().cast(), strategy) };
    usize::try_from(n).ok()
}

/// The server's `pglz_decompress` of `src` into `dst` (whose length is the raw size); None
/// where it returns -1. The C decoder checks for a truncated tag only after reading it, so it
/// reads a copy of `src` with 4 spare zero bytes, made in `padded` (reused across calls,
/// grown fallibly).
#[cfg(any(test, feature = "pg_test"))]
pub fn c_pglz_decompress(
    src: &[u8],
    dst: &mut [u8],
    check_complete: bool,
    padded: &mut Vec<u8>,
) -> Result<Option<usize>> {
    // SAFETY: the C decoder writes only initialised bytes.
    c_pglz_decompress_uninit(src, unsafe { as_uninit_mut(dst) }, check_complete, padded)
}

/// [`c_pglz_decompress`] into memory that need not be initialised: the C decoder only writes
/// it (it copies a match only from bytes it has written), and its first n bytes are written
/// when it returns n.
pub fn c_pglz_decompress_uninit(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    check_complete: bool,
    padded: &mut Vec<u8>,
) -> Result<Option<usize>> {
    let slen = i32::try_from(src.len()).map_err(|_| CodecError::too_large("pglz input over 2 GB"))?;
    padded.clear();
    try_reserve(padded, src.len() + 4, "a copy of the input")?;
    padded.extend_from_slice(src);
    padded.extend_from_slice(&[0; 4]);
    // SAFETY: dst has rawsize bytes; the source over-read stays within the 4 padding bytes.
    let n = unsafe {
        pglz_decompress(padded.as_ptr().cast(), slen, dst.as_mut_ptr().cast(), dst.len() as i32, check_complete)
    };
    Ok((n >= 0).then_some(n as usize))
}

/// The server's CRC-32C (`pg_comp_crc32c`, hardware where available) of `data`, as a finished
/// CRC continuing from the finished CRC `previous`.
pub fn c_crc32c(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: pg_comp_crc32c is set before any backend runs; data is a valid slice.
    unsafe { !pg_comp_crc32c(!previous, data.as_ptr().cast(), data.len()) }
}

/// The server's portable slicing-by-8 CRC-32C.
pub fn c_crc32c_sb8(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: data is a valid slice.
    unsafe { !pg_comp_crc32c_sb8(!previous, data.as_ptr().cast(), data.len()) }
}

/// The codec of any method of the registry: the server's own C code for a server method,
/// built here where its symbols are reached; ours from the core.
pub fn build(spec: &MethodSpec) -> Result<Box<dyn Codec>> {
    Ok(match spec.kind {
        MethodKind::ServerPglz => Box::new(ServerPglz { spec: *spec, strategy: Strategy::DEFAULT, padded: Vec::new() }),
        MethodKind::ServerPglzAlways => {
            Box::new(ServerPglz { spec: *spec, strategy: Strategy::ALWAYS, padded: Vec::new() })
        }
        MethodKind::ServerLz4 => Box::new(ServerLz4::load()?),
        MethodKind::ServerZstd => Box::new(ServerZstd::load(*spec)?),
        _ => codecs::build(spec)?,
    })
}

struct ServerPglz {
    spec: MethodSpec,
    strategy: Strategy,
    padded: Vec<u8>,
}

impl Codec for ServerPglz {
    fn spec(&self) -> MethodSpec {
        self.spec
    }
    fn compress_bound(&self, len: usize) -> usize {
        pglz::max_output(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], _tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        Ok(c_pglz_compress(src, dst, &self.strategy))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        // SAFETY: the C decoder writes only initialised bytes.
        self.decompress_uninit(src, unsafe { as_uninit_mut(dst) }, tick)
    }
    fn decompress_uninit(&mut self, src: &[u8], dst: &mut [MaybeUninit<u8>], _tick: &mut dyn FnMut()) -> Result<()> {
        // The copy into a padded buffer is part of what the C decoder needs to be safe; it is
        // small next to decoding and keeps the comparison honest about safety.
        match c_pglz_decompress_uninit(src, dst, true, &mut self.padded)? {
            Some(n) if n == dst.len() => Ok(()),
            _ => Err(CodecError::corrupt("PostgreSQL's pglz_decompress rejected the data")),
        }
    }
}

type Lz4CompressFn = unsafe extern "C" fn(*const c_char, *mut c_char, i32, i32) -> i32;
type Lz4DecompressFn = unsafe extern "C" fn(*const c_char, *mut c_char, i32, i32) -> i32;

struct ServerLz4 {
    compress: Lz4CompressFn,
    decompress: Lz4DecompressFn,
}

impl ServerLz4 {
    fn load() -> Result<ServerLz4> {
        let lib = c"liblz4.so.1";
        // SAFETY: the symbols have these C signatures in lz4.h.
        unsafe {
            Ok(ServerLz4 {
                compress: std::mem::transmute::<*mut c_void, Lz4CompressFn>(loaded_symbol(
                    lib,
                    c"LZ4_compress_default",
                )?),
                decompress: std::mem::transmute::<*mut c_void, Lz4DecompressFn>(loaded_symbol(
                    lib,
                    c"LZ4_decompress_safe",
                )?),
            })
        }
    }
}

impl Codec for ServerLz4 {
    fn spec(&self) -> MethodSpec {
        MethodSpec { kind: MethodKind::ServerLz4, level: None }
    }
    fn compress_bound(&self, len: usize) -> usize {
        len + len / 255 + 16 // LZ4_COMPRESSBOUND
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], _tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        let (Ok(slen), Ok(capacity)) = (i32::try_from(src.len()), i32::try_from(dst.len())) else {
            return Err(CodecError::too_large("liblz4 takes at most 2 GB at once"));
        };
        // SAFETY: LZ4_compress_default writes at most dstCapacity bytes and reads srcSize.
        let n = unsafe { (self.compress)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), slen, capacity) };
        if n <= 0 {
            return Err(CodecError::invalid("liblz4's LZ4_compress_default failed"));
        }
        Ok(Some(n as usize))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        // SAFETY: liblz4 writes only initialised bytes.
        self.decompress_uninit(src, unsafe { as_uninit_mut(dst) }, tick)
    }
    fn decompress_uninit(&mut self, src: &[u8], dst: &mut [MaybeUninit<u8>], _tick: &mut dyn FnMut()) -> Result<()> {
        // SAFETY: LZ4_decompress_safe never writes past dstCapacity nor reads past srcSize, and
        // reads of its output only from what it wrote (so dst may be uninitialised); it
        // returns dstCapacity only when it wrote all of it.
        let n = unsafe {
            (self.decompress)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), src.len() as i32, dst.len() as i32)
        };
        if n as usize != dst.len() {
            return Err(CodecError::corrupt("liblz4 rejected the block"));
        }
        Ok(())
    }
}
