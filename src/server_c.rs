//! PostgreSQL's own C routines, exported by the postgres binary, exposed for interop tests and
//! as reference rows in benchmarks: the server's pglz and its CRC-32C.

use std::ffi::{c_char, c_void};

use compresslab_core::pglz::Strategy;
use pgrx::prelude::*;

use crate::errors::{checked_raw_size, OrRaise};

/// `PGLZ_Strategy` from `common/pg_lzcompress.h`: six int32 fields, same order as ours.
#[repr(C)]
struct PglzStrategy {
    min_input_size: i32,
    max_input_size: i32,
    min_comp_rate: i32,
    first_success_by: i32,
    match_size_good: i32,
    match_size_drop: i32,
}

impl From<&Strategy> for PglzStrategy {
    fn from(s: &Strategy) -> Self {
        PglzStrategy {
            min_input_size: s.min_input_size,
            max_input_size: s.max_input_size,
            min_comp_rate: s.min_comp_rate,
            first_success_by: s.first_success_by,
            match_size_good: s.match_size_good,
            match_size_drop: s.match_size_drop,
        }
    }
}

type Crc32cFn = unsafe extern "C" fn(crc: u32, data: *const c_void, len: usize) -> u32;

unsafe extern "C" {
    fn pglz_compress(source: *const c_char, slen: i32, dest: *mut c_char, strategy: *const PglzStrategy) -> i32;
    fn pglz_decompress(source: *const c_char, slen: i32, dest: *mut c_char, rawsize: i32, check_complete: bool) -> i32;
    /// Chosen at start-up: the SSE4.2 routine when the CPU has it, else slicing-by-8.
    static pg_comp_crc32c: Crc32cFn;
    fn pg_comp_crc32c_sb8(crc: u32, data: *const c_void, len: usize) -> u32;
}

/// The server's `pglz_compress`; None where it returns -1.
pub fn c_pglz_compress_into(src: &[u8], dst: &mut Vec<u8>, strategy: &Strategy) -> Option<usize> {
    let slen = i32::try_from(src.len()).ok()?;
    dst.clear();
    dst.resize(src.len() + 4, 0); // PGLZ_MAX_OUTPUT
    let c_strategy = PglzStrategy::from(strategy);
    // SAFETY: dest has PGLZ_MAX_OUTPUT(slen) bytes, the bound pglz_compress writes within.
    let n = unsafe { pglz_compress(src.as_ptr().cast(), slen, dst.as_mut_ptr().cast(), &c_strategy) };
    if n < 0 {
        return None;
    }
    dst.truncate(n as usize);
    Some(n as usize)
}

/// The server's `pglz_decompress` into `dst` (whose length is the raw size); None where it
/// returns -1. `padded_src` must end with 4 spare bytes, because the C decoder checks for a
/// truncated tag only after reading it.
pub fn c_pglz_decompress_padded(padded_src: &[u8], dst: &mut [u8], check_complete: bool) -> Option<usize> {
    let slen = padded_src.len().checked_sub(4)?;
    // SAFETY: dst has rawsize bytes; the source over-read stays within the 4 padding bytes.
    let n = unsafe {
        pglz_decompress(
            padded_src.as_ptr().cast(),
            slen as i32,
            dst.as_mut_ptr().cast(),
            dst.len() as i32,
            check_complete,
        )
    };
    (n >= 0).then_some(n as usize)
}

/// The server's CRC-32C (`pg_comp_crc32c`, hardware where available) of `data`, as a finished
/// CRC continuing from the finished CRC `previous`.
pub fn c_crc32c(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: pg_comp_crc32c is set before any backend runs; data is a valid slice.
    unsafe { !pg_comp_crc32c(!previous, data.as_ptr().cast(), data.len()) }
}

/// The server's portable slicing-by-8 CRC-32C.
#[cfg_attr(not(feature = "pg_test"), allow(dead_code))]
pub fn c_crc32c_sb8(previous: u32, data: &[u8]) -> u32 {
    // SAFETY: data is a valid slice.
    unsafe { !pg_comp_crc32c_sb8(!previous, data.as_ptr().cast(), data.len()) }
}

/// PostgreSQL's own C `pglz_compress` (reference for interop and benchmarks).
#[pg_extern(immutable, strict, parallel_safe)]
fn server_pglz_compress(data: &[u8], strategy: default!(&str, "'default'")) -> Option<Vec<u8>> {
    let strategy = Strategy::parse(strategy).or_raise();
    let mut out = Vec::new();
    c_pglz_compress_into(data, &mut out, &strategy).map(|_| out)
}

/// PostgreSQL's own C `pglz_decompress` (reference for interop and benchmarks).
#[pg_extern(stable, strict, parallel_safe)]
fn server_pglz_decompress(data: &[u8], raw_size: i32, check_complete: default!(bool, true)) -> Vec<u8> {
    let mut out = vec![0u8; checked_raw_size(raw_size)];
    let mut padded = Vec::with_capacity(data.len() + 4);
    padded.extend_from_slice(data);
    padded.extend_from_slice(&[0; 4]);
    match c_pglz_decompress_padded(&padded, &mut out, check_complete) {
        Some(n) => {
            out.truncate(n);
            out
        }
        None => crate::errors::raise(compresslab_core::CodecError::corrupt(
            "PostgreSQL's pglz_decompress rejected the data as corrupt",
        )),
    }
}

/// PostgreSQL's own CRC-32C (`pg_comp_crc32c`).
#[pg_extern(immutable, strict, parallel_safe)]
fn server_crc32c(data: &[u8]) -> i64 {
    c_crc32c(0, data) as i64
}

// ---------------------------------------------------------------------------------------------
// Reference codecs for the lab: the server's C pglz, and the C liblz4 and libzstd the postgres
// binary links. Our own zstd is statically linked under the same symbol names, so the server's
// libraries are reached through dlsym on the already-loaded shared objects.
// ---------------------------------------------------------------------------------------------

use compresslab_core::lab::{Codec, CodecSpec};
use compresslab_core::error::Result as CoreResult;
use compresslab_core::CodecError;

/// Methods measured through PostgreSQL's own C code.
pub const SERVER_METHODS: &[&str] = &["server_pglz", "server_pglz_always", "server_lz4", "server_zstd"];

/// Build a server codec for `spec`, or `Ok(None)` when it names none.
pub fn server_codec(spec: &CodecSpec, default_zstd_level: i32) -> CoreResult<Option<Box<dyn Codec>>> {
    Ok(Some(match spec.name.as_str() {
        "server_pglz" => {
            spec.no_level()?;
            Box::new(ServerPglz { strategy: Strategy::DEFAULT, name: "server_pglz", padded: Vec::new() })
        }
        "server_pglz_always" => {
            spec.no_level()?;
            Box::new(ServerPglz { strategy: Strategy::ALWAYS, name: "server_pglz_always", padded: Vec::new() })
        }
        "server_lz4" => {
            spec.no_level()?;
            Box::new(ServerLz4::load()?)
        }
        "server_zstd" => {
            let level = compresslab_core::zstd_codec::check_level(spec.level.unwrap_or(default_zstd_level))?;
            Box::new(ServerZstd::load(level)?)
        }
        _ => return Ok(None),
    }))
}

struct ServerPglz {
    strategy: Strategy,
    name: &'static str,
    padded: Vec<u8>,
}

impl Codec for ServerPglz {
    fn name(&self) -> String {
        self.name.to_string()
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        c_pglz_compress_into(src, dst, &self.strategy)
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> CoreResult<()> {
        // The copy into a padded buffer is part of what the C decoder needs to be safe; it is
        // small next to decoding and keeps the comparison honest about safety.
        self.padded.clear();
        self.padded.extend_from_slice(src);
        self.padded.extend_from_slice(&[0; 4]);
        match c_pglz_decompress_padded(&self.padded, dst, true) {
            Some(n) if n == dst.len() => Ok(()),
            _ => Err(CodecError::corrupt("PostgreSQL's pglz_decompress rejected the data")),
        }
    }
}

/// Find `symbol` in the already-loaded shared library `library`.
fn loaded_symbol(library: &std::ffi::CStr, symbol: &std::ffi::CStr) -> CoreResult<*mut c_void> {
    // SAFETY: RTLD_NOLOAD only returns a handle to a library that is already mapped.
    let handle = unsafe { libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return Err(CodecError::invalid(format!(
            "the server has not loaded {}; its C codec cannot be measured",
            library.to_string_lossy()
        )));
    }
    // SAFETY: handle is valid; dlsym returns null if the symbol is missing.
    let ptr = unsafe { libc::dlsym(handle, symbol.as_ptr()) };
    if ptr.is_null() {
        return Err(CodecError::invalid(format!("{} has no symbol {}", library.to_string_lossy(), symbol.to_string_lossy())));
    }
    Ok(ptr)
}

type Lz4CompressFn = unsafe extern "C" fn(*const c_char, *mut c_char, i32, i32) -> i32;
type Lz4DecompressFn = unsafe extern "C" fn(*const c_char, *mut c_char, i32, i32) -> i32;

struct ServerLz4 {
    compress: Lz4CompressFn,
    decompress: Lz4DecompressFn,
}

impl ServerLz4 {
    fn load() -> CoreResult<ServerLz4> {
        let lib = c"liblz4.so.1";
        // SAFETY: the symbols have these C signatures in lz4.h.
        unsafe {
            Ok(ServerLz4 {
                compress: std::mem::transmute::<*mut c_void, Lz4CompressFn>(loaded_symbol(lib, c"LZ4_compress_default")?),
                decompress: std::mem::transmute::<*mut c_void, Lz4DecompressFn>(loaded_symbol(lib, c"LZ4_decompress_safe")?),
            })
        }
    }
}

impl Codec for ServerLz4 {
    fn name(&self) -> String {
        "server_lz4".into()
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        let capacity = src.len() + src.len() / 255 + 16; // LZ4_COMPRESSBOUND
        dst.clear();
        dst.resize(capacity, 0);
        // SAFETY: dst has LZ4_COMPRESSBOUND(src.len()) bytes.
        let n = unsafe { (self.compress)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), src.len() as i32, capacity as i32) };
        (n > 0).then(|| {
            dst.truncate(n as usize);
            n as usize
        })
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> CoreResult<()> {
        // SAFETY: LZ4_decompress_safe never writes past dstCapacity nor reads past srcSize.
        let n = unsafe { (self.decompress)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), src.len() as i32, dst.len() as i32) };
        if n as usize != dst.len() {
            return Err(CodecError::corrupt("liblz4 rejected the block"));
        }
        Ok(())
    }
}

type ZstdCreateFn = unsafe extern "C" fn() -> *mut c_void;
type ZstdFreeFn = unsafe extern "C" fn(*mut c_void) -> usize;
type ZstdCompressCctxFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, *const c_void, usize, i32) -> usize;
type ZstdDecompressDctxFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, *const c_void, usize) -> usize;
type ZstdIsErrorFn = unsafe extern "C" fn(usize) -> u32;

struct ServerZstd {
    level: i32,
    cctx: *mut c_void,
    dctx: *mut c_void,
    compress: ZstdCompressCctxFn,
    decompress: ZstdDecompressDctxFn,
    is_error: ZstdIsErrorFn,
    free_cctx: ZstdFreeFn,
    free_dctx: ZstdFreeFn,
}

impl ServerZstd {
    fn load(level: i32) -> CoreResult<ServerZstd> {
        let lib = c"libzstd.so.1";
        // SAFETY: the symbols have these C signatures in zstd.h.
        unsafe {
            let create_cctx = std::mem::transmute::<*mut c_void, ZstdCreateFn>(loaded_symbol(lib, c"ZSTD_createCCtx")?);
            let create_dctx = std::mem::transmute::<*mut c_void, ZstdCreateFn>(loaded_symbol(lib, c"ZSTD_createDCtx")?);
            Ok(ServerZstd {
                level,
                cctx: create_cctx(),
                dctx: create_dctx(),
                compress: std::mem::transmute::<*mut c_void, ZstdCompressCctxFn>(loaded_symbol(lib, c"ZSTD_compressCCtx")?),
                decompress: std::mem::transmute::<*mut c_void, ZstdDecompressDctxFn>(loaded_symbol(lib, c"ZSTD_decompressDCtx")?),
                is_error: std::mem::transmute::<*mut c_void, ZstdIsErrorFn>(loaded_symbol(lib, c"ZSTD_isError")?),
                free_cctx: std::mem::transmute::<*mut c_void, ZstdFreeFn>(loaded_symbol(lib, c"ZSTD_freeCCtx")?),
                free_dctx: std::mem::transmute::<*mut c_void, ZstdFreeFn>(loaded_symbol(lib, c"ZSTD_freeDCtx")?),
            })
        }
    }
}

impl Drop for ServerZstd {
    fn drop(&mut self) {
        // SAFETY: the contexts were created by this library and are freed once.
        unsafe {
            (self.free_cctx)(self.cctx);
            (self.free_dctx)(self.dctx);
        }
    }
}

impl Codec for ServerZstd {
    fn name(&self) -> String {
        "server_zstd".into()
    }
    fn level(&self) -> Option<i32> {
        Some(self.level)
    }
    fn compress(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Option<usize> {
        let capacity = compresslab_core::zstd_codec::compress_bound(src.len());
        dst.clear();
        dst.resize(capacity, 0);
        // SAFETY: dst has ZSTD_compressBound(src.len()) bytes; the context is ours.
        let n = unsafe { (self.compress)(self.cctx, dst.as_mut_ptr().cast(), capacity, src.as_ptr().cast(), src.len(), self.level) };
        // SAFETY: ZSTD_isError only inspects the code.
        if unsafe { (self.is_error)(n) } != 0 {
            return None;
        }
        dst.truncate(n);
        Some(n)
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> CoreResult<()> {
        // SAFETY: libzstd never writes past the capacity given; the context is ours.
        let n = unsafe { (self.decompress)(self.dctx, dst.as_mut_ptr().cast(), dst.len(), src.as_ptr().cast(), src.len()) };
        // SAFETY: as above.
        if unsafe { (self.is_error)(n) } != 0 || n != dst.len() {
            return Err(CodecError::corrupt("libzstd rejected the frame"));
        }
        Ok(())
    }
}
