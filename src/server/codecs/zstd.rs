//! The libzstd the server links, as a lab codec (`server_zstd:N`): one-shot calls
//! (`ZSTD_compressCCtx`, `ZSTD_decompressDCtx`) for slices up to a chunk, the streaming calls
//! (`ZSTD_compressStream2`, `ZSTD_decompressStream`) a chunk at a time for longer ones, with
//! a tick between chunks so that cancel takes effect. Our own zstd is statically linked under
//! the same symbol names, so the server's library is reached through `dlsym`.
//!
//! `server_zstd_decompress` keeps one set-up library per backend ([`with_backend_decoder`]),
//! as our `zstd_decompress` keeps its decoding context: the SQL-level comparison sets the two
//! decoders side by side, not the making of their contexts. (PostgreSQL's own WAL replay calls
//! `ZSTD_decompress`, which makes and frees a context per call.)

use std::cell::Cell;
use std::ffi::c_void;

use compresslab_core::error::Result;
use compresslab_core::lab::Codec;
use compresslab_core::registry::{MethodKind, MethodSpec};
use compresslab_core::zstd_codec::{self, CHUNK};
use compresslab_core::CodecError;

use super::loaded::loaded_symbol;

/// `ZSTD_inBuffer` and `ZSTD_outBuffer`: a pointer, its size, and the position reached.
#[repr(C)]
struct ZstdBuffer {
    ptr: *mut c_void,
    size: usize,
    pos: usize,
}

type CreateFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> usize;
type SizeofFn = unsafe extern "C" fn(*const c_void) -> usize;
type CompressCctxFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, *const c_void, usize, i32) -> usize;
type DecompressDctxFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, *const c_void, usize) -> usize;
type IsErrorFn = unsafe extern "C" fn(usize) -> u32;
type SetParameterFn = unsafe extern "C" fn(*mut c_void, i32, i32) -> usize;
type SetPledgedFn = unsafe extern "C" fn(*mut c_void, u64) -> usize;
type ResetFn = unsafe extern "C" fn(*mut c_void, i32) -> usize;
type CompressStreamFn = unsafe extern "C" fn(*mut c_void, *mut ZstdBuffer, *mut ZstdBuffer, i32) -> usize;
type DecompressStreamFn = unsafe extern "C" fn(*mut c_void, *mut ZstdBuffer, *mut ZstdBuffer) -> usize;

/// `ZSTD_c_compressionLevel`, `ZSTD_reset_session_only`, `ZSTD_e_continue`, `ZSTD_e_end`.
const C_COMPRESSION_LEVEL: i32 = 100;
const RESET_SESSION_ONLY: i32 = 1;
const E_CONTINUE: i32 = 0;
const E_END: i32 = 2;

pub struct ServerZstd {
    spec: MethodSpec,
    cctx: *mut c_void,
    dctx: *mut c_void,
    compress: CompressCctxFn,
    decompress: DecompressDctxFn,
    is_error: IsErrorFn,
    set_parameter: SetParameterFn,
    set_pledged: SetPledgedFn,
    reset_cctx: ResetFn,
    reset_dctx: ResetFn,
    compress_stream: CompressStreamFn,
    decompress_stream: DecompressStreamFn,
    free_cctx: FreeFn,
    free_dctx: FreeFn,
    sizeof_dctx: SizeofFn,
    /// `ZSTD_sizeof_DCtx` of the decoding context when it was made.
    new_dctx_size: usize,
}

thread_local! {
    /// The library set up by the last `server_zstd_decompress` in this backend, for the next.
    /// Taken out while in use: an error or a cancel that unwinds past it only drops it.
    static SPARE_DECODER: Cell<Option<ServerZstd>> = const { Cell::new(None) };
}

/// `decode` given the server's libzstd set up in this backend: the one kept from the last
/// call, or a new one; kept for the next only while its decoding context is as a new one is,
/// as for our own zstd (one that streamed a long frame holds buffers of its window).
pub fn with_backend_decoder<R>(decode: impl FnOnce(&mut ServerZstd) -> Result<R>) -> Result<R> {
    let mut codec = match SPARE_DECODER.with(Cell::take) {
        Some(codec) => codec,
        None => ServerZstd::load(MethodSpec::new(MethodKind::ServerZstd, Some(zstd_codec::DEFAULT_LEVEL))?)?,
    };
    let result = decode(&mut codec);
    if codec.dctx_size() <= codec.new_dctx_size {
        SPARE_DECODER.with(|spare| spare.set(Some(codec)));
    }
    result
}

/// Look `symbol` up in the server's libzstd as a function of type `F`.
///
/// # Safety
///
/// `F` must be the symbol's C signature (from zstd.h).
unsafe fn symbol<F: Copy>(name: &'static std::ffi::CStr) -> Result<F> {
    let ptr = loaded_symbol(c"libzstd.so.1", name)?;
    // SAFETY: F is a function pointer type of the symbol's signature (the caller's promise),
    // the same size as a data pointer on the platforms PostgreSQL runs on.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&ptr) })
}

impl ServerZstd {
    pub fn load(spec: MethodSpec) -> Result<ServerZstd> {
        // SAFETY: each type below is the C signature of its symbol in zstd.h (1.5).
        unsafe {
            let create_cctx: CreateFn = symbol(c"ZSTD_createCCtx")?;
            let create_dctx: CreateFn = symbol(c"ZSTD_createDCtx")?;
            let mut codec = ServerZstd {
                spec,
                cctx: create_cctx(),
                dctx: create_dctx(),
                compress: symbol(c"ZSTD_compressCCtx")?,
                decompress: symbol(c"ZSTD_decompressDCtx")?,
                is_error: symbol(c"ZSTD_isError")?,
                set_parameter: symbol(c"ZSTD_CCtx_setParameter")?,
                set_pledged: symbol(c"ZSTD_CCtx_setPledgedSrcSize")?,
                reset_cctx: symbol(c"ZSTD_CCtx_reset")?,
                reset_dctx: symbol(c"ZSTD_DCtx_reset")?,
                compress_stream: symbol(c"ZSTD_compressStream2")?,
                decompress_stream: symbol(c"ZSTD_decompressStream")?,
                free_cctx: symbol(c"ZSTD_freeCCtx")?,
                free_dctx: symbol(c"ZSTD_freeDCtx")?,
                sizeof_dctx: symbol(c"ZSTD_sizeof_DCtx")?,
                new_dctx_size: 0,
            };
            if codec.cctx.is_null() || codec.dctx.is_null() {
                return Err(CodecError::out_of_memory("out of memory: libzstd could not create its contexts"));
            }
            codec.new_dctx_size = codec.dctx_size();
            Ok(codec)
        }
    }

    fn dctx_size(&self) -> usize {
        // SAFETY: ZSTD_sizeof_DCtx only reads the context, which is ours.
        unsafe { (self.sizeof_dctx)(self.dctx) }
    }

    fn failed(&self, code: usize) -> bool {
        // SAFETY: ZSTD_isError only inspects the code.
        unsafe { (self.is_error)(code) != 0 }
    }

    fn level(&self) -> i32 {
        self.spec.level.unwrap_or(zstd_codec::DEFAULT_LEVEL)
    }

    /// One frame through `ZSTD_compressStream2`, `src` fed `piece` bytes at a time with a
    /// `tick` after each piece.
    fn compress_streaming(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        piece: usize,
        tick: &mut dyn FnMut(),
    ) -> Result<usize> {
        let failed = || CodecError::invalid("libzstd's ZSTD_compressStream2 failed");
        // SAFETY: the context is ours; these calls only set its parameters.
        let setup = unsafe {
            [
                (self.reset_cctx)(self.cctx, RESET_SESSION_ONLY),
                (self.set_parameter)(self.cctx, C_COMPRESSION_LEVEL, self.level()),
                (self.set_pledged)(self.cctx, src.len() as u64),
            ]
        };
        if setup.iter().any(|&code| self.failed(code)) {
            return Err(failed());
        }
        let mut output = ZstdBuffer { ptr: dst.as_mut_ptr().cast(), size: dst.len(), pos: 0 };
        let chunks = src.len().div_ceil(piece);
        for (i, chunk) in src.chunks(piece).enumerate() {
            let end = i + 1 == chunks;
            let mut input = ZstdBuffer { ptr: chunk.as_ptr().cast_mut().cast(), size: chunk.len(), pos: 0 };
            loop {
                // SAFETY: libzstd reads input.size bytes at input.ptr (a live slice) and writes at
                // most output.size - output.pos bytes into dst, which outlives the call.
                let left = unsafe {
                    (self.compress_stream)(self.cctx, &mut output, &mut input, if end { E_END } else { E_CONTINUE })
                };
                if self.failed(left) {
                    return Err(failed());
                }
                let done = if end { left == 0 } else { input.pos == input.size };
                if done {
                    break;
                }
                if output.pos == output.size {
                    return Err(failed());
                }
            }
            tick();
        }
        Ok(output.pos)
    }

    /// One frame through `ZSTD_decompressStream`, at most a chunk of output at a time.
    fn decompress_streaming(
        &mut self,
        src: &[u8],
        dst: &mut [std::mem::MaybeUninit<u8>],
        tick: &mut dyn FnMut(),
    ) -> Result<()> {
        let corrupt = || CodecError::corrupt("libzstd rejected the frame");
        // SAFETY: the context is ours.
        if self.failed(unsafe { (self.reset_dctx)(self.dctx, RESET_SESSION_ONLY) }) {
            return Err(corrupt());
        }
        let mut input = ZstdBuffer { ptr: src.as_ptr().cast_mut().cast(), size: src.len(), pos: 0 };
        let mut output = ZstdBuffer { ptr: dst.as_mut_ptr().cast(), size: 0, pos: 0 };
        loop {
            let before = (input.pos, output.pos);
            output.size = (output.pos + CHUNK).min(dst.len());
            // SAFETY: libzstd reads at most src.len() bytes and writes below output.size <=
            // dst.len(); both slices outlive the call.
            let left = unsafe { (self.decompress_stream)(self.dctx, &mut output, &mut input) };
            if self.failed(left) {
                return Err(corrupt());
            }
            if left == 0 {
                break;
            }
            if (input.pos, output.pos) == before {
                return Err(corrupt()); // no progress: the frame wants more input or room than there is
            }
            tick();
        }
        if output.pos != dst.len() || input.pos != input.size {
            return Err(corrupt());
        }
        Ok(())
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
    fn spec(&self) -> MethodSpec {
        self.spec
    }
    fn compress_bound(&self, len: usize) -> usize {
        zstd_codec::compress_bound(len)
    }
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        // One call without a tick only for what may go between two ticks: less at the
        // slowest levels.
        let piece = zstd_codec::compress_chunk(self.level());
        if src.len() > piece {
            return self.compress_streaming(src, dst, piece, tick).map(Some);
        }
        // SAFETY: libzstd writes at most dst.len() bytes and reads src.len(); the context is ours.
        let n = unsafe {
            (self.compress)(self.cctx, dst.as_mut_ptr().cast(), dst.len(), src.as_ptr().cast(), src.len(), self.level())
        };
        if self.failed(n) {
            return Err(CodecError::invalid("libzstd's ZSTD_compressCCtx failed"));
        }
        Ok(Some(n))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        // SAFETY: libzstd writes only initialised bytes.
        self.decompress_uninit(src, unsafe { compresslab_core::uninit::as_uninit_mut(dst) }, tick)
    }
    /// libzstd only writes its output (it reads back only what it wrote), so `dst` may be
    /// uninitialised; all of it is written when the decoded size is `dst.len()`.
    fn decompress_uninit(
        &mut self,
        src: &[u8],
        dst: &mut [std::mem::MaybeUninit<u8>],
        tick: &mut dyn FnMut(),
    ) -> Result<()> {
        if dst.len() > CHUNK {
            return self.decompress_streaming(src, dst, tick);
        }
        // SAFETY: libzstd never writes past the capacity given; the context is ours.
        let n =
            unsafe { (self.decompress)(self.dctx, dst.as_mut_ptr().cast(), dst.len(), src.as_ptr().cast(), src.len()) };
        if self.failed(n) || n != dst.len() {
            return Err(CodecError::corrupt("libzstd rejected the frame"));
        }
        Ok(())
    }
}
