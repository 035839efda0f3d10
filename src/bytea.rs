//! A bytea result built in place: allocated once with palloc at its final size (or a bound),
//! written by the codec, shortened to what was written, and returned as it is — no
//! intermediate `Vec`, no copy into the result (pgrx's `Vec<u8>` return copies).

use std::mem::MaybeUninit;
use std::ptr::NonNull;

use compresslab_core::error::try_zeroed;
use compresslab_core::CodecError;
use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::pg_sys;

use crate::errors::{raise, OrRaise};
use crate::gucs;
use crate::server::check_interrupts;

/// Bytes zeroed or copied between two checks for cancel.
const PIECE: usize = compresslab_core::ticking::PIECE;

const VARHDRSZ: usize = pg_sys::VARHDRSZ;

/// A palloc'd bytea of `len` data bytes, zeroed (so that it is initialised memory a codec may
/// be handed as `&mut [u8]`) or filled by a copy.
pub struct ResultBytea {
    varlena: NonNull<pg_sys::varlena>,
    len: usize,
}

impl ResultBytea {
    /// Room for `len` bytes; more than a bytea holds is `program_limit_exceeded`, an allocation
    /// that fails is `out_of_memory` (never an abort). Zeroed a [`PIECE`] at a time with a
    /// check for cancel between pieces: palloc0 of a gigabyte, which first touches every page,
    /// took 0.3-0.5 s here and a cancel waited for it.
    pub fn zeroed(len: usize) -> ResultBytea {
        let out = Self::allocate(len);
        let data = out.data_ptr();
        for start in (0..len).step_by(PIECE) {
            if start > 0 {
                check_interrupts();
            }
            // SAFETY: start < len and the piece ends at most at len: inside the allocation's
            // len data bytes after the header.
            unsafe { std::ptr::write_bytes(data.add(start), 0, PIECE.min(len - start)) };
        }
        out
    }

    /// A copy of `data` (for results a codec had to build elsewhere), a [`PIECE`] at a time
    /// with a check for cancel between pieces.
    pub fn copy_of(data: &[u8]) -> ResultBytea {
        let out = Self::allocate(data.len());
        let dst = out.data_ptr();
        for (i, piece) in data.chunks(PIECE).enumerate() {
            if i > 0 {
                check_interrupts();
            }
            // SAFETY: the piece starts at i * PIECE in `data` and ends within it, so its copy
            // fits in the allocation's data.len() bytes after the header, which is new and does
            // not overlap `data`.
            unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), dst.add(i * PIECE), piece.len()) };
        }
        out
    }

    /// Room for `len` bytes left unwritten, for a decoder that only writes its output
    /// ([`Unwritten::room`]); refused as [`zeroed`](Self::zeroed) refuses. Nothing touches the
    /// memory before the decoder does, which checks for cancel as it goes.
    pub fn unwritten(len: usize) -> Unwritten {
        Unwritten(Self::allocate(len))
    }

    /// Where the data bytes start (uninitialised until `zeroed` or `copy_of` writes them).
    fn data_ptr(&self) -> *mut u8 {
        self.varlena.as_ptr().cast::<u8>().wrapping_add(VARHDRSZ)
    }

    fn allocate(len: usize) -> ResultBytea {
        check_result_len(len);
        let flags = pg_sys::MCXT_ALLOC_NO_OOM as i32;
        // SAFETY: palloc_extended in the current memory context; with MCXT_ALLOC_NO_OOM it
        // returns NULL instead of raising, which we turn into our own ERROR below.
        let ptr = unsafe { pg_sys::palloc_extended(VARHDRSZ + len, flags) }.cast::<pg_sys::varlena>();
        let Some(varlena) = NonNull::new(ptr) else {
            raise(CodecError::OutOfMemory(format!("could not allocate {len} bytes for the result")))
        };
        let mut result = ResultBytea { varlena, len };
        result.set_len(len);
        result
    }

    /// A result written in place by `write` (which returns the length it wrote) into room of
    /// `bound` bytes. When the bound itself is more than a bytea holds (an input within a few
    /// bytes or per mille of 1 GB) though the result may not be, `write` fills a buffer of
    /// `bound` bytes allocated aside (fallibly) and the result is copied from it; a result too
    /// long for a bytea is then refused by its real length.
    pub fn within_bound(bound: usize, write: impl FnOnce(&mut [u8]) -> usize) -> ResultBytea {
        match Self::within_bound_or_none(bound, |room| Some(write(room))) {
            Some(result) => result,
            None => unreachable!("the writer always returns a length"),
        }
    }

    /// A decompressed result of frames whose headers may declare the content's size: when they
    /// do, and it is at most `max`, `decode_into` writes straight into a result of that size,
    /// left unwritten until then (`Ok` must mean it filled it exactly); otherwise
    /// `decode_aside` decodes into a buffer of its own, under `max`, copied once.
    pub fn of_frames(
        declared: Option<u64>,
        max: usize,
        decode_into: impl FnOnce(&mut [MaybeUninit<u8>]) -> compresslab_core::error::Result<()>,
        decode_aside: impl FnOnce() -> compresslab_core::error::Result<Vec<u8>>,
    ) -> ResultBytea {
        match declared {
            Some(size) if size <= max as u64 => {
                let size = size as usize;
                let mut out = ResultBytea::unwritten(size);
                decode_into(out.room()).or_raise();
                // SAFETY: Ok means all `size` bytes were written.
                unsafe { out.written(size) }
            }
            _ => ResultBytea::copy_of(&decode_aside().or_raise()),
        }
    }

    /// [`within_bound`](Self::within_bound) for a writer that may decline (`None`, as pglz
    /// declines data it cannot shrink): then no result.
    pub fn within_bound_or_none(bound: usize, write: impl FnOnce(&mut [u8]) -> Option<usize>) -> Option<ResultBytea> {
        if bound > gucs::MAX_RESULT as usize {
            let mut aside = try_zeroed(bound, "room for the result").or_raise();
            let n = write(&mut aside)?;
            return Some(ResultBytea::copy_of(&aside[..n]));
        }
        let mut out = ResultBytea::zeroed(bound);
        let n = write(out.data_mut())?;
        out.truncate(n);
        Some(out)
    }

    /// The data bytes.
    pub fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: the allocation holds VARHDRSZ + len bytes, initialised (zeroed, or copied into
        // by `copy_of` before it returns); we hold the only pointer to it until it is returned.
        unsafe { std::slice::from_raw_parts_mut(self.varlena.as_ptr().cast::<u8>().add(VARHDRSZ), self.len) }
    }

    /// Keep the first `len` bytes (at most the current length).
    pub fn truncate(&mut self, len: usize) {
        self.set_len(len.min(self.len));
    }

    fn set_len(&mut self, len: usize) {
        self.len = len;
        // SAFETY: a 4-byte varlena header we own; len ≤ MAX_RESULT so the size fits an i32.
        unsafe { pgrx::set_varsize_4b(self.varlena.as_ptr(), (VARHDRSZ + len) as i32) };
    }
}

/// A result allocated but not written yet: a decoder writes [`room`](Self::room), and
/// [`written`](Self::written) makes the result of the bytes it says it wrote. Never read.
pub struct Unwritten(ResultBytea);

impl Unwritten {
    /// The data bytes, to be written.
    pub fn room(&mut self) -> &mut [MaybeUninit<u8>] {
        // SAFETY: the allocation holds VARHDRSZ + len bytes; we hold the only pointer to it.
        // As MaybeUninit, nothing of it is claimed written.
        unsafe { std::slice::from_raw_parts_mut(self.0.data_ptr().cast::<MaybeUninit<u8>>(), self.0.len) }
    }

    /// The result: the first `len` bytes of the room (at most its length).
    ///
    /// # Safety
    ///
    /// The first `len` bytes of [`room`](Self::room) are written.
    pub unsafe fn written(mut self, len: usize) -> ResultBytea {
        self.0.truncate(len);
        self.0
    }
}

/// A result longer than a bytea holds is `program_limit_exceeded`, never a failed conversion.
pub fn check_result_len(len: usize) {
    if len > gucs::MAX_RESULT as usize {
        raise(CodecError::too_large(format!(
            "the result would be {len} bytes, more than a bytea can hold ({} bytes)",
            gucs::MAX_RESULT
        )));
    }
}

// SAFETY: the Datum is a pointer to a palloc'd bytea in the function's memory context, which
// is what PostgreSQL expects a function returning bytea to return.
unsafe impl BoxRet for ResultBytea {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        // SAFETY: as above.
        unsafe { fcinfo.return_raw_datum(pg_sys::Datum::from(self.varlena.as_ptr())) }
    }
}

pgrx::impl_sql_translatable!(ResultBytea, "bytea");
