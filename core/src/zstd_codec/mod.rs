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

/// Where decoded bytes go: a vector that grows as output comes ([`decompress_with_tick`]),
/// or a buffer of the final size ([`decompress_to`]).
trait Output {
    fn len(&self) -> usize;
    fn capacity(&self) -> usize;
    /// Make room for `wanted` more bytes if the output can grow (a fixed buffer cannot).
    fn grow(&mut self, wanted: usize) -> Result<()>;
    /// One call of the decoder, writing from `len()` up to `end` (at most `capacity()`).
    fn decode_step(&mut self, dctx: &mut DCtx<'static>, input: &mut InBuffer<'_>, end: usize) -> SafeResult;
}

impl Output for Vec<u8> {
    fn len(&self) -> usize {
        self.len()
    }
    fn capacity(&self) -> usize {
        self.capacity()
    }
    fn grow(&mut self, wanted: usize) -> Result<()> {
        try_reserve(self, wanted, "the decompressed zstd data")
    }
    fn decode_step(&mut self, dctx: &mut DCtx<'static>, input: &mut InBuffer<'_>, end: usize) -> SafeResult {
        let before = self.len();
        let mut window = Window::new(self, end);
        let mut output = OutBuffer::around_pos(&mut window, before);
        dctx.decompress_stream(&mut output, input)
    }
}

impl Output for Filled<'_> {
    fn len(&self) -> usize {
        self.len
    }
    fn capacity(&self) -> usize {
        self.buf.len()
    }
    fn grow(&mut self, _wanted: usize) -> Result<()> {
        Ok(())
    }
    fn decode_step(&mut self, dctx: &mut DCtx<'static>, input: &mut InBuffer<'_>, end: usize) -> SafeResult {
        let mut room = UninitRoom { buf: &mut self.buf[..end], written: self.len };
        let mut output = OutBuffer::around_pos(&mut room, self.len);
        let result = dctx.decompress_stream(&mut output, input);
        self.len = output.pos();
        result
    }
}

/// Memory the decoder writes from the front, `buf[..written]` written already.
struct UninitRoom<'a> {
    buf: &'a mut [MaybeUninit<u8>],
    written: usize,
}

// SAFETY: `capacity()` bytes from `as_mut_ptr()` are `buf`, which the room borrows
// exclusively; `as_slice` covers only the written bytes; zstd_safe calls `filled_until(n)` only
// once the first `n` bytes are written.
unsafe impl WriteBuf for UninitRoom<'_> {
    fn as_slice(&self) -> &[u8] {
        // SAFETY: `buf[..written]` is written.
        unsafe { assume_written(self.buf, self.written) }
    }
    fn capacity(&self) -> usize {
        self.buf.len()
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr().cast()
    }
    unsafe fn filled_until(&mut self, n: usize) {
        self.written = n;
    }
}

/// Decode every frame of `src` into `out`, producing at most `max_raw` bytes.
fn decode_frames(
    src: &[u8],
    dictionary: Option<&[u8]>,
    max_raw: usize,
    out: &mut impl Output,
    tick: &mut dyn FnMut(),
) -> Result<()> {
    let dictionary_id = match dictionary {
        Some(dict) => check_dictionary(dict)?,
        None => None,
    };
    if src.is_empty() {
        return Err(CodecError::corrupt("input is not a zstd frame: it is empty"));
    }
    check_declared_sizes(src, max_raw)?;
    let mut dctx: Option<DCtx<'static>> = None;
    let result = decode_frames_with(src, dictionary, dictionary_id, max_raw, out, &mut dctx, tick);
    if let (Some(dctx), None) = (dctx, dictionary) {
        keep_decoder(dctx);
    }
    result
}

/// The frame loop of [`decode_frames`], which makes `dctx` when a frame needs it.
fn decode_frames_with(
    src: &[u8],
    dictionary: Option<&[u8]>,
    dictionary_id: Option<NonZeroU32>,
    max_raw: usize,
    out: &mut impl Output,
    dctx: &mut Option<DCtx<'static>>,
    tick: &mut dyn FnMut(),
) -> Result<()> {
    let mut pos = 0;
    while pos < src.len() {
        let (content_size, needs) = match frame_at(&src[pos..], pos == 0)? {
            FrameStart::Skippable { len } => {
                pos += len;
                continue;
            }
            FrameStart::Frame { content_size, dictionary_id } => (content_size, dictionary_id),
        };
        if let Some(needed) = needs {
            check_frame_dictionary(needed, dictionary, dictionary_id)?;
        }
        if let Some(declared) = content_size {
            if declared > (max_raw - out.len()) as u64 {
                return Err(if out.len() == 0 {
                    CodecError::over_limit("zstd frame", declared, max_raw)
                } else {
                    CodecError::over_limit(
                        "zstd data of several frames",
                        declared.saturating_add(out.len() as u64),
                        max_raw,
                    )
                });
            }
        }
        let dctx = match dctx {
            Some(dctx) => dctx,
            None => dctx.insert(decoder(dictionary)?),
        };
        decode_frame(dctx, src, &mut pos, out, content_size, max_raw, dictionary.is_none(), tick)?;
    }
    Ok(())
}

/// Decode the frame that starts at `src[*pos]`, appending to `out` and leaving `*pos` after it.
/// `content_size` is what the frame's header declares, if it does.
#[allow(clippy::too_many_arguments)]
fn decode_frame(
    dctx: &mut DCtx<'static>,
    src: &[u8],
    pos: &mut usize,
    out: &mut impl Output,
    content_size: Option<u64>,
    max_raw: usize,
    no_dictionary: bool,
    tick: &mut dyn FnMut(),
) -> Result<()> {
    // Room for one byte past the limit, so that going over it shows.
    let limit = max_raw.saturating_add(1);
    let frame_start = out.len();
    // Where `out` will end if the declared content size is right (the caller checked it
    // against the limit).
    let frame_end = content_size.map(|declared| frame_start + declared as usize);
    loop {
        if out.len() == out.capacity() {
            let wanted = match frame_end {
                Some(end) => end.saturating_sub(out.len()).clamp(1, MAX_PREALLOCATION),
                None => 64 << 10,
            };
            out.grow(wanted.min(limit - out.len()))?;
        }
        let before = out.len();
        let window_end = out.capacity().min(before.saturating_add(CHUNK)).min(limit);
        let mut input = InBuffer::around(&src[*pos..src.len().min(*pos + CHUNK)]);
        let result = out.decode_step(dctx, &mut input, window_end);
        *pos += input.pos();
        tick();
        let hint = result.map_err(|code| decode_error(code, no_dictionary))?;
        if out.len() > max_raw {
            return Err(CodecError::too_large(format!(
                "zstd frame decompresses to more than the limit of {max_raw} bytes"
            )));
        }
        if hint == 0 {
            // The frame is complete and flushed. libzstd's streaming decoder does not compare
            // the content size a frame declares with what it held when the frame ends in an
            // empty last block (its one-shot decoder does), so a frame declaring 96 bytes and
            // holding none would pass: check it here, for every frame.
            if let Some(end) = frame_end.filter(|&end| end != out.len()) {
                return Err(CodecError::corrupt(format!(
                    "zstd frame is corrupt: it declares {} bytes of content but holds {}",
                    end - frame_start,
                    out.len() - frame_start
                )));
            }
            return Ok(());
        }
        if input.pos() == 0 && out.len() == before {
            return Err(if *pos == src.len() {
                CodecError::corrupt("zstd frame is truncated")
            } else {
                CodecError::corrupt("zstd frame is corrupt: the decoder made no progress")
            });
        }
    }
}

thread_local! {
    /// The decoding context of the last call without a dictionary, kept for the next one:
    /// making one took some 8 µs a call, more than decoding an 8 KB value. Taken out while in
    /// use, so an error or a cancel that unwinds past a decoder only drops it.
    static SPARE_DECODER: Cell<Option<DCtx<'static>>> = const { Cell::new(None) };
    /// The size of a new context (`ZSTD_sizeof_DCtx`), before it has buffered anything.
    static NEW_DECODER_SIZE: Cell<usize> = const { Cell::new(0) };
}

/// Keep `dctx` (without a dictionary) for the next call if it is as a new one is: one that
/// streamed a frame holds buffers as long as the frame's window (up to 128 MB), which a
/// backend should not keep, and libzstd keeps them across sessions, where they change how it
/// reports some damaged frames (the fuzz target `decode_ignores_what_the_output_buffer_held`
/// found an error text that depended on the frame decoded before). Frames that declare their
/// size, up to a [`CHUNK`], decode in one pass and leave none.
fn keep_decoder(dctx: DCtx<'static>) {
    if dctx.sizeof() <= NEW_DECODER_SIZE.with(Cell::get) {
        SPARE_DECODER.with(|spare| spare.set(Some(dctx)));
    }
}

/// A decoding context with the limits and dictionary of [`decompress_with_tick`]: without a
/// dictionary, the one kept from the last call if there is one, its session reset (its
/// window limit, a parameter, stays).
fn decoder(dictionary: Option<&[u8]>) -> Result<DCtx<'static>> {
    if dictionary.is_none() {
        if let Some(mut dctx) = SPARE_DECODER.with(Cell::take) {
            if dctx.reset(ResetDirective::SessionOnly).is_ok() {
                return Ok(dctx);
            }
        }
    }
    let mut dctx = DCtx::try_create()
        .ok_or_else(|| CodecError::out_of_memory("out of memory: could not create a zstd decompression context"))?;
    dctx.set_parameter(DParameter::WindowLogMax(MAX_WINDOW_LOG))
        .map_err(|code| CodecError::invalid(format!("zstd cannot limit the window size ({})", error_name(code))))?;
    match dictionary {
        Some(dict) => {
            dctx.load_dictionary(dict).map_err(|code| dictionary_load_error(code, dict))?;
        }
        None => NEW_DECODER_SIZE.with(|size| size.set(dctx.sizeof())),
    }
    Ok(dctx)
}

/// What starts at the beginning of a (remaining) input.
enum FrameStart {
    /// A skippable frame of `len` bytes in all, to be passed over.
    Skippable { len: usize },
    /// A standard frame whose header is complete and readable.
    Frame { content_size: Option<u64>, dictionary_id: Option<NonZeroU32> },
}

/// Read the frame header at the start of `rest` (`first`: at the start of the input), refusing
/// legacy frames, truncated headers and anything that is not a frame.
fn frame_at(rest: &[u8], first: bool) -> Result<FrameStart> {
    if rest.len() < 4 {
        return Err(if FRAME_MAGIC.to_le_bytes().starts_with(rest) {
            CodecError::corrupt("zstd frame is truncated: its header is incomplete")
        } else if first {
            CodecError::corrupt("input is not a zstd frame: it is too short")
        } else {
            trailing_bytes(rest.len())
        });
    }
    let magic = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    if magic == FRAME_MAGIC {
        let Some(&descriptor) = rest.get(4) else {
            return Err(CodecError::corrupt("zstd frame is truncated: its header is incomplete"));
        };
        if rest.len() < frame_header_len(descriptor) {
            return Err(CodecError::corrupt("zstd frame is truncated: its header is incomplete"));
        }
        let content_size = zstd_safe::get_frame_content_size(rest).map_err(|_| {
            CodecError::corrupt("zstd frame is corrupt: invalid frame header (reserved bit set or window too large)")
        })?;
        return Ok(FrameStart::Frame { content_size, dictionary_id: zstd_safe::get_dict_id_from_frame(rest) });
    }
    if LEGACY_MAGICS.contains(&magic) {
        let version = match magic & 0xFF {
            0x1E => "v0.1".to_string(),
            minor @ 0x22..=0x27 => format!("v0.{}", minor - 0x20),
            _ => "before v0.8".to_string(),
        };
        return Err(CodecError::corrupt(format!(
            "zstd legacy format {version} is not supported (frame magic number 0x{magic:08X}); only frames of \
             zstd v0.8 and later (magic number 0xFD2FB528) can be decoded"
        )));
    }
    if SKIPPABLE_MAGICS.contains(&magic) {
        let declared = match rest.get(4..8) {
            Some(size) => u32::from_le_bytes([size[0], size[1], size[2], size[3]]) as usize,
            None => {
                return Err(CodecError::corrupt("zstd frame is truncated: a skippable frame's header is incomplete"))
            }
        };
        let len = declared.saturating_add(8);
        if rest.len() < len {
            return Err(CodecError::corrupt(format!(
                "zstd frame is truncated: a skippable frame declares {declared} bytes of content, only {} remain",
                rest.len() - 8
            )));
        }
        return Ok(FrameStart::Skippable { len });
    }
    Err(if first {
        CodecError::corrupt(format!("input is not a zstd frame (bad magic number 0x{magic:08X})"))
    } else {
        trailing_bytes(rest.len())
    })
}

fn trailing_bytes(n: usize) -> CodecError {
    CodecError::corrupt(format!("zstd data has {n} trailing bytes after its last frame that are not a frame"))
}

/// The length of a frame header (magic number included) from its descriptor byte.
fn frame_header_len(descriptor: u8) -> usize {
    let single_segment = descriptor & 0x20 != 0;
    let window = usize::from(!single_segment);
    let dictionary_id = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let content_size = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    5 + window + dictionary_id + content_size
}

/// The part of `out` the decoder may write into on one call: from `out.len()` up to `end`
/// (at most `out.capacity()`), so that one call produces at most [`CHUNK`] bytes and stays
/// within the limit.
struct Window<'a> {
    out: &'a mut Vec<u8>,
    end: usize,
}

impl<'a> Window<'a> {
    fn new(out: &'a mut Vec<u8>, end: usize) -> Self {
        assert!(end <= out.capacity() && end >= out.len());
        Window { out, end }
    }
}

// SAFETY: `end <= out.capacity()` (checked in `new`), so the `capacity()` bytes from
// `as_mut_ptr()` are owned by `out`'s allocation; `as_slice` covers only initialized bytes
// (the vector's length); zstd_safe calls `filled_until(n)` only once the first `n <= end` bytes
// are written, which is what `set_len` requires.
unsafe impl WriteBuf for Window<'_> {
    fn as_slice(&self) -> &[u8] {
        self.out
    }
    fn capacity(&self) -> usize {
        self.end
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.out.as_mut_ptr()
    }
    unsafe fn filled_until(&mut self, n: usize) {
        self.out.set_len(n)
    }
}

mod cctx;
mod errors;
mod frames;

use frames::check_declared_sizes;
pub use frames::{check_decodable, declared_size, frame_extent, max_content, FrameExtent};

#[cfg(test)]
mod tests;
