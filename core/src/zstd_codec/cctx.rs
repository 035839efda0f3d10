//! A compression context whose working memory is touched a piece at a time, so that a cancel
//! is noticed while the library sets up its tables.
//!
//! At the slowest levels the library's match tables are large (at level 22 with a 1 GB input,
//! `ZSTD_resetCCtx_internal` allocates and zeroes some 700 MB) and it sets them up inside the
//! first `ZSTD_compressStream2` call: 1.5 s here before the first chunk came back, with no
//! interrupt checked. The context made here (`ZSTD_createCCtx_advanced`) allocates through
//! [`touching_alloc`], which faults the pages of a large block in [`PIECE`]s and asks
//! [`ticking::cancel_pending`] between them; the library's own zeroing afterwards runs over
//! memory already mapped, at memory speed. When a cancel is pending the allocation gives up
//! (returns NULL): the library reports an allocation failure, and [`Compressor::gave_up`]
//! tells the caller to tick (where the extension raises the cancel) instead of reporting
//! "out of memory". Nothing may unwind through the C frames, so the callback itself never
//! raises anything.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::NonNull;

use libc::{free, malloc};
use zstd::zstd_safe::zstd_sys;

use crate::ticking::{self, PIECE};

/// Blocks up to this size are returned as `malloc` gives them: faulting them takes well under
/// a millisecond.
const TOUCH_FROM: usize = PIECE;

/// The granularity of the kernel's page faults (the smallest page of x86-64 and AArch64).
const PAGE: usize = 4096;

/// What [`touching_alloc`] is told and tells, through the library's `opaque` pointer.
struct AllocState {
    /// Whether to ask [`ticking::cancel_pending`] at all (off for a second attempt after a tick
    /// that raised nothing, so that an interrupt the server keeps pending cannot loop us).
    ask: bool,
    gave_up: Cell<bool>,
}

/// `malloc`, with every page of a block over [`TOUCH_FROM`] written once, a [`PIECE`] at a
/// time, giving up (NULL) between pieces when a cancel is pending.
unsafe extern "C" fn touching_alloc(opaque: *mut c_void, size: usize) -> *mut c_void {
    // SAFETY: `opaque` is the `AllocState` boxed by `Compressor::new`, alive as long as the
    // context that calls us.
    let state = unsafe { &*(opaque as *const AllocState) };
    // SAFETY: plain malloc.
    let block = unsafe { malloc(size) };
    if block.is_null() || size <= TOUCH_FROM {
        return block;
    }
    let bytes = block as *mut u8;
    for offset in (0..size).step_by(PAGE) {
        if offset % PIECE == 0 && offset > 0 && state.ask && ticking::cancel_pending() {
            state.gave_up.set(true);
            // SAFETY: `block` came from malloc above and is not returned.
            unsafe { free(block) };
            return std::ptr::null_mut();
        }
        // SAFETY: `offset < size`, inside the block; the library initialises what it reads.
        unsafe { bytes.add(offset).write_volatile(0) };
    }
    block
}

unsafe extern "C" fn plain_free(_opaque: *mut c_void, ptr: *mut c_void) {
    // SAFETY: every block the library frees came from `touching_alloc` (malloc); free(NULL)
    // is a no-op.
    unsafe { free(ptr) }
}

/// A `ZSTD_CCtx` allocating through [`touching_alloc`]; freed on drop.
pub(super) struct Compressor {
    ctx: NonNull<zstd_sys::ZSTD_CCtx>,
    // Boxed so that its address, given to the library, stays put; dropped after the context.
    state: Box<AllocState>,
}

impl Compressor {
    /// A context that gives up its allocations on a pending cancel if `ask_for_cancel`.
    pub(super) fn new(ask_for_cancel: bool) -> Option<Self> {
        let state = Box::new(AllocState { ask: ask_for_cancel, gave_up: Cell::new(false) });
        let mem = zstd_sys::ZSTD_customMem {
            customAlloc: Some(touching_alloc),
            customFree: Some(plain_free),
            opaque: &*state as *const AllocState as *mut c_void,
        };
        // SAFETY: the callbacks follow the ZSTD_customMem contract; `state` outlives the
        // context (see the field order and Drop).
        let ctx = NonNull::new(unsafe { zstd_sys::ZSTD_createCCtx_advanced(mem) })?;
        Some(Compressor { ctx, state })
    }

    /// Whether an allocation was given up for a pending cancel.
    pub(super) fn gave_up(&self) -> bool {
        self.state.gave_up.get()
    }

    /// `ZSTD_CCtx_setParameter`.
    pub(super) fn set(&mut self, param: zstd_sys::ZSTD_cParameter, value: i32) -> Result<(), usize> {
        // SAFETY: a live context.
        check(unsafe { zstd_sys::ZSTD_CCtx_setParameter(self.ctx.as_ptr(), param, value) }).map(drop)
    }

    /// `ZSTD_CCtx_loadDictionary` (the dictionary is copied).
    pub(super) fn load_dictionary(&mut self, dict: &[u8]) -> Result<(), usize> {
        // SAFETY: a live context; the library copies `dict`.
        check(unsafe { zstd_sys::ZSTD_CCtx_loadDictionary(self.ctx.as_ptr(), dict.as_ptr().cast(), dict.len()) })
            .map(drop)
    }

    /// `ZSTD_CCtx_setPledgedSrcSize`.
    pub(super) fn pledge(&mut self, len: usize) -> Result<(), usize> {
        // SAFETY: a live context.
        check(unsafe { zstd_sys::ZSTD_CCtx_setPledgedSrcSize(self.ctx.as_ptr(), len as u64) }).map(drop)
    }

    /// `ZSTD_compressStream2` of `input[*in_pos..]` into `output[*out_pos..]`: what is left to
    /// flush (0 when done with `ZSTD_e_end`).
    pub(super) fn compress_stream(
        &mut self,
        output: &mut [u8],
        out_pos: &mut usize,
        input: &[u8],
        in_pos: &mut usize,
        end: zstd_sys::ZSTD_EndDirective,
    ) -> Result<usize, usize> {
        let mut out = zstd_sys::ZSTD_outBuffer { dst: output.as_mut_ptr().cast(), size: output.len(), pos: *out_pos };
        let mut inb = zstd_sys::ZSTD_inBuffer { src: input.as_ptr().cast(), size: input.len(), pos: *in_pos };
        // SAFETY: both buffers describe live slices; the library writes within `out.size`.
        let left = check(unsafe { zstd_sys::ZSTD_compressStream2(self.ctx.as_ptr(), &mut out, &mut inb, end) });
        *out_pos = out.pos;
        *in_pos = inb.pos;
        left
    }
}

impl Drop for Compressor {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createCCtx_advanced, freed once; `state` is dropped after.
        unsafe { zstd_sys::ZSTD_freeCCtx(self.ctx.as_ptr()) };
    }
}

fn check(code: usize) -> Result<usize, usize> {
    // SAFETY: a pure function of the code.
    if unsafe { zstd_sys::ZSTD_isError(code) } != 0 {
        Err(code)
    } else {
        Ok(code)
    }
}
