//! PostgreSQL's own C routines and the C libraries the server links, as codecs the lab times
//! beside ours: the server's pglz and CRC-32C (exported by the postgres binary), and the
//! liblz4 and libzstd it has loaded. Our own zstd is statically linked under the same symbol
//! names, so the server's libraries are reached through `dlsym` on the already-loaded shared
//! objects. [`build`] makes any method of the registry, ours or the server's.
//!
//! So that a cancel never waits for one long C call: liblz4's calls and `pglz_decompress` on
//! more than [`off_thread::THRESHOLD`] bytes run on a worker thread (`off_thread.rs`);
//! `pglz_compress`, which is not thread-safe, is given at most [`c_pglz_max_input`] bytes.

pub mod loaded;
pub mod off_thread;
pub mod versions;
pub mod zstd;

use std::ffi::{c_char, c_void};
use std::mem::MaybeUninit;

use compresslab_core::clock::Timer;
use compresslab_core::error::{try_reserve, Result};
use compresslab_core::lab::codecs;
use compresslab_core::lab::Codec;
use compresslab_core::pglz::{self, Strategy};
use compresslab_core::registry::{MethodKind, MethodSpec};
use compresslab_core::uninit::as_uninit_mut;
use compresslab_core::CodecError;

use loaded::loaded_symbol;
use off_thread::Elsewhere;
use zstd::ServerZstd;

type Crc32cFn = unsafe extern "C" fn(crc: u32, data: *const c_void, len: usize) -> u32;

unsafe extern "C" {
    fn pglz_compress(source: *const c_char, slen: i32, dest: *mut c_char, strategy: *const Strategy) -> i32;
    fn pglz_decompress(source: *const c_char, slen: i32, dest: *mut c_char, rawsize: i32, check_complete: bool) -> i32;
    /// Chosen at start-up: the SSE4.2 routine when the CPU has it, else slicing-by-8.
    static pg_comp_crc32c: Crc32cFn;
    fn pg_comp_crc32c_sb8(crc: u32, data: *const c_void, len: usize) -> u32;
}

/// The most bytes one call of the server's `pglz_compress` is given under the default
/// strategy, and under any other. It keeps its history in static arrays, so it cannot run on
/// a worker thread, and a cancel waits for it: these bounds keep one call within about a
/// quarter of a second of CPU on the worst shape of data measured, 16 MB of random bytes
/// over 0x00 and 0x80 (its history chains are long, its matches short):
/// `scripts/bench/c_call_bounds.sh --pglz-shapes` (2 CPUs, load 2.3) took 65 ns a byte under
/// the default strategy (4 MiB: 0.27 s) and 380 ns under `always` or
/// `match_size_good=273,match_size_drop=0` (512 KiB: 0.20 s); English-like text 22 ns.
pub const C_PGLZ_MAX_INPUT: usize = 4 << 20;
/// See [`C_PGLZ_MAX_INPUT`].
pub const C_PGLZ_MAX_INPUT_OTHER_STRATEGY: usize = 512 << 10;

/// The most bytes one call of the server's `pglz_compress` is given under `strategy`.
pub fn c_pglz_max_input(strategy: &Strategy) -> usize {
    if *strategy == Strategy::DEFAULT {
        C_PGLZ_MAX_INPUT
    } else {
        C_PGLZ_MAX_INPUT_OTHER_STRATEGY
    }
}

/// The server's `pglz_compress` into the front of `dst`, which must hold at least
/// `PGLZ_MAX_OUTPUT(src.len())` = `src.len() + 4` bytes; None where it returns -1. `src` is
/// at most [`c_pglz_max_input`] bytes.
pub fn c_pglz_compress(src: &[u8], dst: &mut [u8], strategy: &Strategy) -> Option<usize> {
    assert!(src.len() <= c_pglz_max_input(strategy), "pglz_compress is given at most c_pglz_max_input bytes");
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
    let dst = unsafe { as_uninit_mut(dst) };
    c_pglz_decompress_uninit(src, dst, check_complete, padded, &mut || (), &mut Elsewhere::default())
}

/// [`c_pglz_decompress`] into memory that need not be initialised: the C decoder only writes
/// it (it copies a match only from bytes it has written), and its first n bytes are written
/// when it returns n. On more than [`off_thread::THRESHOLD`] bytes of output the call runs
/// on a worker, `tick` (which checks for cancel) called while it runs, its time counted in
/// `elsewhere`.
pub fn c_pglz_decompress_uninit(
    src: &[u8],
    dst: &mut [MaybeUninit<u8>],
    check_complete: bool,
    padded: &mut Vec<u8>,
    tick: &mut dyn FnMut(),
    elsewhere: &mut Elsewhere,
) -> Result<Option<usize>> {
    let slen = i32::try_from(src.len()).map_err(|_| CodecError::too_large("pglz input over 2 GB"))?;
    let rawsize = i32::try_from(dst.len()).map_err(|_| CodecError::too_large("pglz output over 2 GB"))?;
    if dst.len() > off_thread::THRESHOLD {
        let timer = Timer::start();
        // The worker's copy of the input carries the 4 spare zero bytes.
        let input = off_thread::copy_in(src, 4, tick)?;
        let mut output = off_thread::output(dst.len())?;
        let done = off_thread::run(tick, move || {
            // SAFETY: output has room for rawsize bytes; the source over-read stays within the
            // 4 padding bytes; both buffers belong to this thread alone.
            let n = unsafe {
                pglz_decompress(input.as_ptr().cast(), slen, output.as_mut_ptr().cast(), rawsize, check_complete)
            };
            if n >= 0 {
                // SAFETY: the decoder wrote the n bytes it returns, within the capacity.
                unsafe { output.set_len(n as usize) };
            }
            (n, output)
        })?;
        let (n, output) = &done.value;
        off_thread::copy_out(&mut dst[..output.len()], output, tick);
        let n = *n;
        elsewhere.add(timer.stop(), &done);
        return Ok((n >= 0).then_some(n as usize));
    }
    padded.clear();
    try_reserve(padded, src.len() + 4, "a copy of the input")?;
    padded.extend_from_slice(src);
    padded.extend_from_slice(&[0; 4]);
    // SAFETY: dst has rawsize bytes; the source over-read stays within the 4 padding bytes.
    let n = unsafe { pglz_decompress(padded.as_ptr().cast(), slen, dst.as_mut_ptr().cast(), rawsize, check_complete) };
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
        MethodKind::ServerPglz => Box::new(ServerPglz::new(*spec, Strategy::DEFAULT)),
        MethodKind::ServerPglzAlways => Box::new(ServerPglz::new(*spec, Strategy::ALWAYS)),
        MethodKind::ServerLz4 => Box::new(ServerLz4::load()?),
        MethodKind::ServerZstd => Box::new(ServerZstd::load(*spec)?),
        _ => codecs::build(spec)?,
    })
}

struct ServerPglz {
    spec: MethodSpec,
    strategy: Strategy,
    padded: Vec<u8>,
    elsewhere: Elsewhere,
}

impl ServerPglz {
    fn new(spec: MethodSpec, strategy: Strategy) -> ServerPglz {
        ServerPglz { spec, strategy, padded: Vec::new(), elsewhere: Elsewhere::default() }
    }
}

impl Codec for ServerPglz {
    fn spec(&self) -> MethodSpec {
        self.spec
    }
    fn compress_bound(&self, len: usize) -> usize {
        pglz::max_output(len)
    }
    /// Above [`c_pglz_max_input`] (a whole value the TOAST estimates size; the lab leaves
    /// such slices out, `max_slice`), compresslab's own encoder, which writes the same bytes
    /// and checks for cancel.
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        if src.len() > c_pglz_max_input(&self.strategy) {
            return Ok(pglz::compress_to_ticking(src, dst, &self.strategy, false, tick));
        }
        Ok(c_pglz_compress(src, dst, &self.strategy))
    }
    fn max_slice(&self) -> Option<(usize, &'static str)> {
        Some((
            c_pglz_max_input(&self.strategy),
            "one call of PostgreSQL's pglz_compress is given here (a cancel would wait for it); \
             compresslab's pglz (pglz_always for server_pglz_always) writes the same bytes",
        ))
    }
    fn take_time_elsewhere(&mut self) -> (f64, f64) {
        self.elsewhere.take()
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        // SAFETY: the C decoder writes only initialised bytes.
        self.decompress_uninit(src, unsafe { as_uninit_mut(dst) }, tick)
    }
    fn decompress_uninit(&mut self, src: &[u8], dst: &mut [MaybeUninit<u8>], tick: &mut dyn FnMut()) -> Result<()> {
        // The copy into a padded buffer is part of what the C decoder needs to be safe; it is
        // small next to decoding and keeps the comparison honest about safety.
        match c_pglz_decompress_uninit(src, dst, true, &mut self.padded, tick, &mut self.elsewhere)? {
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
    elsewhere: Elsewhere,
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
                elsewhere: Elsewhere::default(),
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
    /// On more than [`off_thread::THRESHOLD`] bytes, on a worker thread.
    fn compress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<Option<usize>> {
        let (Ok(slen), Ok(capacity)) = (i32::try_from(src.len()), i32::try_from(dst.len())) else {
            return Err(CodecError::too_large("liblz4 takes at most 2 GB at once"));
        };
        let n = if src.len() > off_thread::THRESHOLD {
            let timer = Timer::start();
            let input = off_thread::copy_in(src, 0, tick)?;
            let mut output = off_thread::output(dst.len())?;
            let compress = self.compress;
            let done = off_thread::run(tick, move || {
                // SAFETY: LZ4_compress_default writes at most dstCapacity bytes (the output's
                // capacity) and reads srcSize (the input's length); both buffers belong to this
                // thread alone.
                let n = unsafe { compress(input.as_ptr().cast(), output.as_mut_ptr().cast(), slen, capacity) };
                if n > 0 {
                    // SAFETY: liblz4 wrote the n bytes it returns, within the capacity.
                    unsafe { output.set_len(n as usize) };
                }
                output
            })?;
            let n = done.value.len();
            // SAFETY: initialised bytes seen as possibly uninitialised, only written to.
            off_thread::copy_out(unsafe { as_uninit_mut(&mut dst[..n]) }, &done.value, tick);
            self.elsewhere.add(timer.stop(), &done);
            n as i32
        } else {
            // SAFETY: LZ4_compress_default writes at most dstCapacity bytes and reads srcSize.
            unsafe { (self.compress)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), slen, capacity) }
        };
        if n <= 0 {
            return Err(CodecError::invalid("liblz4's LZ4_compress_default failed"));
        }
        Ok(Some(n as usize))
    }
    fn decompress(&mut self, src: &[u8], dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
        // SAFETY: liblz4 writes only initialised bytes.
        self.decompress_uninit(src, unsafe { as_uninit_mut(dst) }, tick)
    }
    /// On more than [`off_thread::THRESHOLD`] bytes of output, on a worker thread.
    fn decompress_uninit(&mut self, src: &[u8], dst: &mut [MaybeUninit<u8>], tick: &mut dyn FnMut()) -> Result<()> {
        let (Ok(slen), Ok(capacity)) = (i32::try_from(src.len()), i32::try_from(dst.len())) else {
            return Err(CodecError::too_large("liblz4 takes at most 2 GB at once"));
        };
        let n = if dst.len() > off_thread::THRESHOLD {
            let timer = Timer::start();
            let input = off_thread::copy_in(src, 0, tick)?;
            let mut output = off_thread::output(dst.len())?;
            let decompress = self.decompress;
            let done = off_thread::run(tick, move || {
                // SAFETY: as below, on buffers that belong to this thread alone: the output's
                // capacity is dstCapacity.
                let n = unsafe { decompress(input.as_ptr().cast(), output.as_mut_ptr().cast(), slen, capacity) };
                if n == capacity {
                    // SAFETY: liblz4 returns dstCapacity only when it wrote all of it.
                    unsafe { output.set_len(n as usize) };
                }
                output
            })?;
            let n = done.value.len();
            if n == dst.len() {
                off_thread::copy_out(dst, &done.value, tick);
            }
            self.elsewhere.add(timer.stop(), &done);
            n as i32
        } else {
            // SAFETY: LZ4_decompress_safe never writes past dstCapacity nor reads past srcSize,
            // and reads of its output only from what it wrote (so dst may be uninitialised); it
            // returns dstCapacity only when it wrote all of it.
            unsafe { (self.decompress)(src.as_ptr().cast(), dst.as_mut_ptr().cast(), slen, capacity) }
        };
        if n as usize != dst.len() {
            return Err(CodecError::corrupt("liblz4 rejected the block"));
        }
        Ok(())
    }
    fn take_time_elsewhere(&mut self) -> (f64, f64) {
        self.elsewhere.take()
    }
}
