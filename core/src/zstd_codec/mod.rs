//! Zstandard, through the `zstd` crate (the reference C library, statically built).
//!
//! A zstd *frame* is: magic 0xFD2FB528 (little-endian), a frame header (descriptor byte, an
//! optional window descriptor, an optional dictionary ID, an optional frame content size), then
//! blocks (raw, RLE or compressed: Huffman-coded literals plus FSE-coded sequences of literal
//! length, match length and offset against a window of up to 128 MB at the levels used here)
//! and an optional xxHash64-based checksum. Levels run from the library's negative "fast"
//! levels (trading ratio for speed) to 22; 0 means the library default (3). A dictionary
//! (raw content, or one trained by `zstd --train`, which starts with magic 0xEC30A437 and its
//! ID, then entropy tables) primes the window for small inputs; the same dictionary is needed
//! to decode.
//!
//! The output of [`compress`] is one standard frame with the content size and a checksum,
//! readable by `zstd -d`; [`decompress`] reads any sequence of frames (skippable ones included),
//! refusing a declared content size above the caller's limit before allocating, and bounding
//! output for frames that declare none. Every buffer whose size the input decides is allocated
//! fallibly ([`CodecError::OutOfMemory`], never an abort).
//!
//! Hardening:
//! * No legacy formats: the library is built without its v0.1-v0.7 decoders (AddressSanitizer
//!   found a heap over-read in the v0.6 one), and such frames (magic 0xFD2FB51E..0xFD2FB527) are
//!   refused here as corrupt, with the version named, before the library sees them.
//! * Dictionaries are checked before use: fewer than 8 bytes is not a dictionary (libzstd would
//!   silently ignore it when compressing but use it when decoding); one that starts with the
//!   dictionary magic must have readable entropy tables. Both are
//!   [`CodecError::InvalidParameter`]. A frame whose header names a dictionary ID is decoded
//!   only with that dictionary: without one it is [`CodecError::Corrupt`] saying which ID it
//!   needs, with a dictionary of another ID (or a raw-content one, which has none) it is
//!   [`CodecError::InvalidParameter`] (the argument is wrong, not the data).
//! * Decoding errors are [`CodecError::Corrupt`] with short reasons of our own ("zstd frame is
//!   truncated", "zstd frame is corrupt: checksum mismatch", ...), never the library's internal
//!   texts; only a failed allocation inside the library is [`CodecError::OutOfMemory`].
//! * Long work is chunked: [`compress_with_tick`] and [`decompress_with_tick`] drive the
//!   library's streaming API on at most [`CHUNK`] bytes of input (and, decoding, of output) at a
//!   time, 128 KB when compressing at the slowest levels ([`compress_chunk`]), and call
//!   `tick()` after each piece, where the extension checks for query cancel.
//!   [`compress`] and [`decompress`] are the same code with a no-op tick. The compressor's
//!   working memory is touched a piece at a time too, giving way to a pending cancel
//!   (`cctx.rs`).
//!
//! Rooms: the frames' headers read before decoding (`frames.rs`), the decoding loop (`decode.rs`),
//! the compressor's context (`cctx.rs`), the library's errors as ours (`errors.rs`).

use std::cell::Cell;
use std::mem::MaybeUninit;
use std::num::NonZeroU32;
use std::ops::RangeInclusive;

use zstd::zstd_safe::{self, zstd_sys, DCtx, DParameter, InBuffer, OutBuffer, ResetDirective, SafeResult, WriteBuf};
use zstd_sys::ZSTD_EndDirective::{ZSTD_e_continue, ZSTD_e_end};
use zstd_sys::ZSTD_cParameter::{ZSTD_c_checksumFlag, ZSTD_c_compressionLevel, ZSTD_c_contentSizeFlag};

use crate::bytes::Filled;
use crate::error::{try_reserve, try_zeroed, CodecError, Result};
use crate::uninit::{as_uninit_mut, assume_written};
use cctx::Compressor;
use errors::{
    check_dictionary, check_frame_dictionary, compress_error, decode_error, dictionary_load_error, error_name,
};

/// How much input (and, decoding, output) the library gets between two `tick()` calls.
pub const CHUNK: usize = 1 << 20;

/// From this level on libzstd uses its slowest strategies (btopt, btultra): on random bytes
/// here (`zstd -b`) 5.5 MB/s at level 19 and 7.3 MB/s at 22, against 64 MB/s at level 15, so
/// a [`CHUNK`] kept the backend from noticing a cancel for about 200 ms, and longer at the
/// start of a frame.
pub const SLOW_LEVELS_FROM: i32 = 16;

/// Input between two `tick()` calls when compressing at [`SLOW_LEVELS_FROM`] or above: one
/// block of the library (128 KB), some 25-40 ms of work.
pub const SLOW_LEVEL_CHUNK: usize = 128 << 10;

/// How much input the compressor gets between two `tick()` calls at `level`.
pub fn compress_chunk(level: i32) -> usize {
    if level >= SLOW_LEVELS_FROM {
        SLOW_LEVEL_CHUNK
    } else {
        CHUNK
    }
}

/// The shortest dictionary accepted: libzstd ignores shorter ones when compressing (but not
/// when decoding), and a dictionary with the magic number needs at least its 8-byte header.
pub const MIN_DICTIONARY_LEN: usize = 8;

/// The largest window a frame may ask the decoder to keep: 2^27 = 128 MiB (the library's
/// default limit, set explicitly so a library update cannot raise it).
const MAX_WINDOW_LOG: u32 = 27;

/// The most output reserved ahead on the word of a frame header (a declared content size):
/// beyond that the buffer grows as data actually comes out.
const MAX_PREALLOCATION: usize = 64 << 20;

const FRAME_MAGIC: u32 = 0xFD2F_B528;
const DICTIONARY_MAGIC: u32 = 0xEC30_A437;
const LEGACY_MAGICS: RangeInclusive<u32> = 0xFD2F_B51E..=0xFD2F_B527;
const SKIPPABLE_MAGICS: RangeInclusive<u32> = 0x184D_2A50..=0x184D_2A5F;

/// The levels this build accepts: the library's minimum (negative) through 22.
pub fn level_range() -> RangeInclusive<i32> {
    zstd::compression_level_range()
}

/// The level used when none is given (the library default).
pub const DEFAULT_LEVEL: i32 = zstd::DEFAULT_COMPRESSION_LEVEL;

pub fn check_level(level: i32) -> Result<i32> {
    let range = level_range();
    if range.contains(&level) {
        Ok(level)
    } else {
        Err(CodecError::invalid(format!(
            "zstd compression level {level} is out of range; valid levels are {} to {}",
            range.start(),
            range.end()
        )))
    }
}

/// The largest frame [`compress`] can produce for `len` input bytes (`ZSTD_compressBound`).
pub fn compress_bound(len: usize) -> usize {
    zstd_safe::compress_bound(len)
}

/// Compress `src` into one zstd frame at `level`, optionally with a dictionary.
pub fn compress(src: &[u8], level: i32, dictionary: Option<&[u8]>) -> Result<Vec<u8>> {
    compress_with_tick(src, level, dictionary, &mut || {})
}

/// Decompress zstd frame data, producing at most `max_raw` bytes.
pub fn decompress(src: &[u8], dictionary: Option<&[u8]>, max_raw: usize) -> Result<Vec<u8>> {
    decompress_with_tick(src, dictionary, max_raw, &mut || {})
}

/// [`compress`], feeding the library [`compress_chunk`] bytes at a time (a [`CHUNK`], less at
/// the slowest levels) and calling `tick` after each chunk (so a caller can check for
/// cancellation). The result is one standard frame with the content size (pledged up front)
/// and a checksum. An input of more than one chunk costs some speed against a one-pass
/// compression, as the library copies it into its own window buffer.
pub fn compress_with_tick(
    src: &[u8],
    level: i32,
    dictionary: Option<&[u8]>,
    tick: &mut dyn FnMut(),
) -> Result<Vec<u8>> {
    let mut out = try_zeroed(compress_bound(src.len()), "the zstd frame")?;
    let n = compress_to(src, level, dictionary, &mut out, tick)?
        .ok_or_else(|| CodecError::invalid("zstd frame is larger than ZSTD_compressBound"))?;
    out.truncate(n);
    Ok(out)
}

/// [`compress_with_tick`] writing the frame into the front of `dst` (the SQL functions' result,
/// allocated once): the frame's length, or `None` if it does not fit in `dst` (it always fits
/// in [`compress_bound`] bytes).
pub fn compress_to(
    src: &[u8],
    level: i32,
    dictionary: Option<&[u8]>,
    dst: &mut [u8],
    tick: &mut dyn FnMut(),
) -> Result<Option<usize>> {
    let level = check_level(level)?;
    if let Some(dict) = dictionary {
        check_dictionary(dict)?;
    }
    // A first attempt gives its table set-up up on a pending cancel (cctx.rs); the tick then
    // raises it. An interrupt that raised nothing gets one more attempt that does not ask.
    for ask_for_cancel in [true, false] {
        match compress_attempt(src, level, dictionary, dst, tick, ask_for_cancel)? {
            Attempt::GaveUp => tick(),
            Attempt::Done(n) => return Ok(n),
        }
    }
    Err(CodecError::out_of_memory("out of memory: zstd compression could not allocate its working memory"))
}

enum Attempt {
    /// The frame's length, or `None` if it does not fit in `dst`.
    Done(Option<usize>),
    /// The context gave an allocation up for a pending cancel.
    GaveUp,
}

fn compress_attempt(
    src: &[u8],
    level: i32,
    dictionary: Option<&[u8]>,
    dst: &mut [u8],
    tick: &mut dyn FnMut(),
    ask_for_cancel: bool,
) -> Result<Attempt> {
    let mut cctx = Compressor::new(ask_for_cancel)
        .ok_or_else(|| CodecError::out_of_memory("out of memory: could not create a zstd compression context"))?;
    let fail = |code| compress_error(code, dictionary);
    cctx.set(ZSTD_c_compressionLevel, level).map_err(fail)?;
    cctx.set(ZSTD_c_checksumFlag, 1).map_err(fail)?;
    cctx.set(ZSTD_c_contentSizeFlag, 1).map_err(fail)?;
    if let Some(dict) = dictionary {
        cctx.load_dictionary(dict).map_err(fail)?;
    }
    cctx.pledge(src.len()).map_err(fail)?;

    let mut out_pos = 0;
    // The last chunk goes in with ZSTD_e_end, so that an input of one chunk is compressed in a
    // single pass straight from `src` (the library buffers only what it must keep for later).
    let piece = compress_chunk(level);
    let chunks = src.len().div_ceil(piece).max(1);
    for (i, chunk) in src.chunks(piece).chain(src.is_empty().then_some(&[][..])).enumerate() {
        let last = i + 1 == chunks;
        let mut in_pos = 0;
        loop {
            let op = if last { ZSTD_e_end } else { ZSTD_e_continue };
            let left = match cctx.compress_stream(dst, &mut out_pos, chunk, &mut in_pos, op) {
                Err(_) if cctx.gave_up() => return Ok(Attempt::GaveUp),
                result => result.map_err(fail)?,
            };
            let done = if last { left == 0 } else { in_pos == chunk.len() };
            if done {
                break;
            }
            if out_pos == dst.len() {
                return Ok(Attempt::Done(None)); // the frame does not fit
            }
        }
        tick();
    }
    Ok(Attempt::Done(Some(out_pos)))
}

/// [`decompress`], calling `tick` after each step of at most [`CHUNK`] bytes of input and
/// [`CHUNK`] bytes of output.
///
/// Errors: [`CodecError::InvalidParameter`] for an unusable dictionary or one whose ID is not
/// the frame's; [`CodecError::TooLarge`] past `max_raw` (a declared content size is checked
/// before anything is allocated); [`CodecError::OutOfMemory`] when a buffer cannot be
/// allocated; [`CodecError::Corrupt`] for everything wrong with the data (a frame needing a
/// dictionary that was not given included).
pub fn decompress_with_tick(
    src: &[u8],
    dictionary: Option<&[u8]>,
    max_raw: usize,
    tick: &mut dyn FnMut(),
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    decode_frames(src, dictionary, max_raw, &mut out, tick)?;
    Ok(out)
}

/// [`decompress_with_tick`] into `dst`, which the frames must fill exactly (size it with
/// [`declared_size`]): the decoder writes straight into the caller's buffer.
pub fn decompress_to(src: &[u8], dictionary: Option<&[u8]>, dst: &mut [u8], tick: &mut dyn FnMut()) -> Result<()> {
    // SAFETY: libzstd writes only initialised bytes.
    decompress_to_uninit(src, dictionary, unsafe { as_uninit_mut(dst) }, tick)
}

/// [`decompress_to`] into memory that need not be initialised (a fresh SQL result): `Ok`
/// means every byte of `dst` is written. libzstd only writes its output and reads back only
/// what it wrote, so the result and the errors do not depend on what `dst` held.
pub fn decompress_to_uninit(
    src: &[u8],
    dictionary: Option<&[u8]>,
    dst: &mut [MaybeUninit<u8>],
    tick: &mut dyn FnMut(),
) -> Result<()> {
    Filled::fill_exactly(
        dst,
        |out, expected| decode_frames(src, dictionary, expected, out, tick),
        |decoded, expected| format!("zstd data decoded to {decoded} bytes, but its frames declare {expected}"),
    )
}

mod cctx;
mod decode;
mod errors;
mod frames;

use decode::decode_frames;

use frames::check_declared_sizes;
pub use frames::{check_decodable, declared_size, frame_extent, max_content, FrameExtent};

#[cfg(test)]
mod tests;
