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
//!   time and call `tick()` after each piece, where the extension checks for query cancel.
//!   [`compress`] and [`decompress`] are the same code with a no-op tick.

use std::num::NonZeroU32;
use std::ops::RangeInclusive;

use zstd::zstd_safe::{self, zstd_sys, CCtx, CParameter, DCtx, DParameter, InBuffer, OutBuffer, WriteBuf};
use zstd_sys::ZSTD_EndDirective::{ZSTD_e_continue, ZSTD_e_end};
use zstd_sys::ZSTD_ErrorCode as Zerr;

use crate::error::{try_reserve, try_with_capacity, CodecError, Result};

/// How much input (and, decoding, output) the library gets between two `tick()` calls.
pub const CHUNK: usize = 1 << 20;

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

/// [`compress`], feeding the library [`CHUNK`] bytes at a time and calling `tick` after each
/// chunk (so a caller can check for cancellation). The result is one standard frame with the
/// content size (pledged up front) and a checksum. An input of more than one chunk costs
/// some speed (about 15% at level 3) against a one-pass compression, as the library copies it
/// into its own window buffer.
pub fn compress_with_tick(
    src: &[u8],
    level: i32,
    dictionary: Option<&[u8]>,
    tick: &mut dyn FnMut(),
) -> Result<Vec<u8>> {
    let level = check_level(level)?;
    if let Some(dict) = dictionary {
        check_dictionary(dict)?;
    }
    let fail = |code| compress_error(code, dictionary);
    let mut cctx = CCtx::try_create()
        .ok_or_else(|| CodecError::out_of_memory("out of memory: could not create a zstd compression context"))?;
    cctx.set_parameter(CParameter::CompressionLevel(level)).map_err(fail)?;
    cctx.set_parameter(CParameter::ChecksumFlag(true)).map_err(fail)?;
    cctx.set_parameter(CParameter::ContentSizeFlag(true)).map_err(fail)?;
    if let Some(dict) = dictionary {
        cctx.load_dictionary(dict).map_err(fail)?;
    }
    cctx.set_pledged_src_size(Some(src.len() as u64)).map_err(fail)?;

    let mut out = try_with_capacity(compress_bound(src.len()), "the zstd frame")?;
    // The last chunk goes in with ZSTD_e_end, so that an input of one chunk is compressed in a
    // single pass straight from `src` (the library buffers only what it must keep for later).
    let chunks = src.len().div_ceil(CHUNK).max(1);
    for (i, chunk) in src.chunks(CHUNK).chain(src.is_empty().then_some(&[][..])).enumerate() {
        let last = i + 1 == chunks;
        let mut input = InBuffer::around(chunk);
        loop {
            ensure_compress_room(&mut out)?;
            let pos = out.len();
            let mut output = OutBuffer::around_pos(&mut out, pos);
            let op = if last { ZSTD_e_end } else { ZSTD_e_continue };
            let left = cctx.compress_stream2(&mut output, &mut input, op).map_err(fail)?;
            let done = if last { left == 0 } else { input.pos() == chunk.len() };
            if done {
                break;
            }
        }
        tick();
    }
    Ok(out)
}

/// The output was sized by `compress_bound`, so this is a safety net, not a growth policy.
fn ensure_compress_room(out: &mut Vec<u8>) -> Result<()> {
    if out.len() == out.capacity() {
        try_reserve(out, CHUNK, "the zstd frame")?;
    }
    Ok(())
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
    let dictionary_id = match dictionary {
        Some(dict) => check_dictionary(dict)?,
        None => None,
    };
    if src.is_empty() {
        return Err(CodecError::corrupt("input is not a zstd frame: it is empty"));
    }
    let mut out = Vec::new();
    let mut dctx: Option<DCtx<'static>> = None;
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
                return Err(if out.is_empty() {
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
        let dctx = match &mut dctx {
            Some(dctx) => dctx,
            None => dctx.insert(decoder(dictionary)?),
        };
        let frame_end = content_size.map(|declared| out.len() + declared as usize);
        decode_frame(dctx, src, &mut pos, &mut out, frame_end, max_raw, dictionary.is_none(), tick)?;
    }
    Ok(out)
}

/// Decode the frame that starts at `src[*pos]`, appending to `out` and leaving `*pos` after it.
/// `frame_end` is where `out` will end if the frame's declared content size is right.
#[allow(clippy::too_many_arguments)]
fn decode_frame(
    dctx: &mut DCtx<'static>,
    src: &[u8],
    pos: &mut usize,
    out: &mut Vec<u8>,
    frame_end: Option<usize>,
    max_raw: usize,
    no_dictionary: bool,
    tick: &mut dyn FnMut(),
) -> Result<()> {
    // Room for one byte past the limit, so that going over it shows.
    let limit = max_raw.saturating_add(1);
    loop {
        if out.len() == out.capacity() {
            let wanted = match frame_end {
                Some(end) => end.saturating_sub(out.len()).clamp(1, MAX_PREALLOCATION),
                None => 64 << 10,
            };
            try_reserve(out, wanted.min(limit - out.len()), "the decompressed zstd data")?;
        }
        let before = out.len();
        let window_end = out.capacity().min(before.saturating_add(CHUNK)).min(limit);
        let mut input = InBuffer::around(&src[*pos..src.len().min(*pos + CHUNK)]);
        let result = {
            let mut window = Window::new(out, window_end);
            let mut output = OutBuffer::around_pos(&mut window, before);
            dctx.decompress_stream(&mut output, &mut input)
        };
        *pos += input.pos();
        tick();
        let hint = result.map_err(|code| decode_error(code, no_dictionary))?;
        if out.len() > max_raw {
            return Err(CodecError::too_large(format!(
                "zstd frame decompresses to more than the limit of {max_raw} bytes"
            )));
        }
        if hint == 0 {
            return Ok(()); // the frame is complete and flushed
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

/// A decoding context with the limits and dictionary of [`decompress_with_tick`].
fn decoder(dictionary: Option<&[u8]>) -> Result<DCtx<'static>> {
    let mut dctx = DCtx::try_create()
        .ok_or_else(|| CodecError::out_of_memory("out of memory: could not create a zstd decompression context"))?;
    dctx.set_parameter(DParameter::WindowLogMax(MAX_WINDOW_LOG))
        .map_err(|code| CodecError::invalid(format!("zstd cannot limit the window size ({})", error_name(code))))?;
    if let Some(dict) = dictionary {
        dctx.load_dictionary(dict).map_err(|code| dictionary_load_error(code, dict))?;
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

/// Check a frame that names dictionary `needed` against the dictionary given.
fn check_frame_dictionary(needed: NonZeroU32, given: Option<&[u8]>, given_id: Option<NonZeroU32>) -> Result<()> {
    let needs = format!("zstd frame needs dictionary {needed} (dictionary ID in the frame header)");
    match (given, given_id) {
        (None, _) => Err(CodecError::corrupt(format!("{needs}; give it as the dictionary argument"))),
        (Some(_), Some(id)) if id == needed => Ok(()),
        (Some(_), Some(id)) => Err(CodecError::invalid(format!("{needs}, but the dictionary given has ID {id}"))),
        (Some(_), None) => {
            Err(CodecError::invalid(format!("{needs}, but the dictionary given is raw content without an ID")))
        }
    }
}

/// Check that `dict` can be a zstd dictionary; returns its ID (None for raw content or ID 0).
fn check_dictionary(dict: &[u8]) -> Result<Option<NonZeroU32>> {
    if dict.len() < MIN_DICTIONARY_LEN {
        return Err(CodecError::invalid(format!(
            "zstd dictionary is too short: {} bytes, a dictionary needs at least {MIN_DICTIONARY_LEN}",
            dict.len()
        )));
    }
    if !has_dictionary_magic(dict) {
        return Ok(None); // raw content: any bytes will do
    }
    // SAFETY: ZDICT_getDictHeaderSize only reads `dict.len()` bytes at `dict.as_ptr()`, which
    // the slice guarantees are readable; it allocates and frees its own work space.
    let code = unsafe { zstd_sys::ZDICT_getDictHeaderSize(dict.as_ptr().cast(), dict.len()) };
    match error_code(code) {
        None => Ok(zstd_safe::get_dict_id_from_dict(dict)),
        Some(e) if e == Zerr::ZSTD_error_memory_allocation as usize => {
            Err(CodecError::out_of_memory("out of memory: zstd could not check the dictionary"))
        }
        Some(_) => Err(malformed_dictionary()),
    }
}

fn has_dictionary_magic(dict: &[u8]) -> bool {
    dict.len() >= 4 && u32::from_le_bytes([dict[0], dict[1], dict[2], dict[3]]) == DICTIONARY_MAGIC
}

fn malformed_dictionary() -> CodecError {
    CodecError::invalid(
        "zstd dictionary is malformed: it starts with the dictionary magic number (0xEC30A437) but its \
         entropy tables cannot be read",
    )
}

/// The library fails to build a dictionary with unreadable tables as "memory allocation":
/// for a dictionary with the magic number (whose tables [`check_dictionary`] has read with the
/// compressor's reader, not the decoder's) that means malformed.
fn dictionary_load_error(code: usize, dict: &[u8]) -> CodecError {
    match error_code(code) {
        Some(e) if e == Zerr::ZSTD_error_memory_allocation as usize && !has_dictionary_magic(dict) => {
            CodecError::out_of_memory(format!(
                "out of memory: zstd could not load a dictionary of {} bytes",
                dict.len()
            ))
        }
        _ if has_dictionary_magic(dict) => malformed_dictionary(),
        _ => CodecError::invalid(format!("zstd cannot use this dictionary ({})", error_name(code))),
    }
}

fn compress_error(code: usize, dictionary: Option<&[u8]>) -> CodecError {
    match error_code(code) {
        // check_dictionary read the tables as the compressor does: this is really memory.
        Some(e) if e == Zerr::ZSTD_error_memory_allocation as usize => {
            CodecError::out_of_memory("out of memory: zstd compression could not allocate its working memory")
        }
        Some(e) if e == Zerr::ZSTD_error_dictionary_corrupted as usize && dictionary.is_some() => {
            malformed_dictionary()
        }
        _ => CodecError::invalid(format!("zstd compression failed ({})", error_name(code))),
    }
}

/// A decoding error as a short reason of our own.
fn decode_error(code: usize, no_dictionary: bool) -> CodecError {
    let Some(e) = error_code(code) else {
        return CodecError::corrupt("zstd frame is corrupt");
    };
    let is = |z: Zerr| e == z as usize;
    let reason = if is(Zerr::ZSTD_error_corruption_detected) {
        if no_dictionary {
            "data corruption detected (or it was compressed with a dictionary that was not given)"
        } else {
            "data corruption detected"
        }
    } else if is(Zerr::ZSTD_error_checksum_wrong) {
        "checksum mismatch"
    } else if is(Zerr::ZSTD_error_srcSize_wrong) {
        return CodecError::corrupt("zstd frame is truncated");
    } else if is(Zerr::ZSTD_error_memory_allocation) {
        return CodecError::out_of_memory("out of memory: zstd could not allocate its decoding window");
    } else if is(Zerr::ZSTD_error_literals_headerWrong) {
        "invalid literals header"
    } else if is(Zerr::ZSTD_error_tableLog_tooLarge)
        || is(Zerr::ZSTD_error_maxSymbolValue_tooLarge)
        || is(Zerr::ZSTD_error_maxSymbolValue_tooSmall)
        // A block reusing entropy tables that no earlier block (or dictionary) defined.
        || is(Zerr::ZSTD_error_dictionary_corrupted)
    {
        "invalid entropy tables"
    } else if is(Zerr::ZSTD_error_dstSize_tooSmall) {
        // Output room is never short in streaming: the data outgrows its declared sizes.
        "it decodes to more data than its header or block sizes declare"
    } else if is(Zerr::ZSTD_error_frameParameter_unsupported) {
        "unsupported frame header parameter"
    } else if is(Zerr::ZSTD_error_frameParameter_windowTooLarge) {
        "its window is larger than the 128 MB this decoder accepts"
    } else if is(Zerr::ZSTD_error_prefix_unknown) {
        "unknown frame type"
    } else if is(Zerr::ZSTD_error_dictionary_wrong) {
        "it needs a different dictionary"
    } else {
        return CodecError::corrupt(format!("zstd frame is corrupt (zstd error code {e})"));
    };
    CodecError::corrupt(format!("zstd frame is corrupt: {reason}"))
}

/// The `ZSTD_ErrorCode` of a function result, if it is an error (what `ZSTD_isError` and
/// `ZSTD_getErrorCode` compute: errors are the last `ZSTD_error_maxCode` values of size_t).
fn error_code(code: usize) -> Option<usize> {
    let e = code.wrapping_neg();
    (code != 0 && e <= Zerr::ZSTD_error_maxCode as usize).then_some(e)
}

fn error_name(code: usize) -> &'static str {
    zstd_safe::get_error_name(code)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The v0.6 frame of the AddressSanitizer report, and its 3-byte "dictionary".
    const V06_FRAME: &[u8] = b"\x26\xb5\x2f\xfd\x00\x2f\xfd\x00";
    const V06_DICT: &[u8] = b"\x28\xb5\x2f";
    /// The dictionary magic, ID 1, and one byte where the entropy tables should be.
    const BAD_MAGIC_DICT: &[u8] = b"\x37\xa4\x30\xec\x01\x00\x00\x00\x00";

    fn sample_dictionary() -> Vec<u8> {
        let samples: Vec<Vec<u8>> = (0..2000)
            .map(|i| {
                format!(
                    "{{\"customer_id\": {}, \"order_id\": {}, \"status\": \"{}\", \"country\": \"{}\"}}",
                    i * 7919 % 10007,
                    i,
                    ["shipped", "pending", "cancelled", "delivered"][i % 4],
                    ["NL", "DE", "FR", "US", "JP"][i % 5]
                )
                .into_bytes()
            })
            .collect();
        zstd::dict::from_samples(&samples, 4096).unwrap()
    }

    #[test]
    fn round_trip_at_fast_default_and_max_levels() {
        let data = b"zstd likes repetition; zstd likes repetition. ".repeat(500);
        for level in [*level_range().start(), -5, 0, 1, 3, 19, 22] {
            let frame = compress(&data, level, None).unwrap();
            if level > 0 {
                assert!(frame.len() < data.len() / 10, "level {level}: {} bytes", frame.len());
            }
            assert_eq!(decompress(&frame, None, data.len()).unwrap(), data);
        }
    }

    #[test]
    fn empty_input_round_trips_and_declares_zero() {
        let frame = compress(b"", 3, None).unwrap();
        assert_eq!(zstd_safe::get_frame_content_size(&frame).ok(), Some(Some(0)));
        assert_eq!(decompress(&frame, None, 0).unwrap(), b"");
        assert!(matches!(decompress(b"", None, 10), Err(CodecError::Corrupt(_))));
    }

    #[test]
    fn out_of_range_level_is_invalid_parameter() {
        assert!(matches!(compress(b"x", 23, None), Err(CodecError::InvalidParameter(_))));
        assert!(matches!(compress(b"x", *level_range().start() - 1, None), Err(CodecError::InvalidParameter(_))));
    }

    #[test]
    fn dictionary_is_needed_to_decode() {
        let dict = b"common prefix of every record: customer_id=, order_id=, status=shipped".to_vec();
        let data = b"common prefix of every record: customer_id=42, order_id=7, status=shipped".to_vec();
        let with = compress(&data, 3, Some(&dict)).unwrap();
        let without = compress(&data, 3, None).unwrap();
        assert!(with.len() < without.len());
        assert_eq!(decompress(&with, Some(&dict), 1000).unwrap(), data);
        assert!(matches!(decompress(&with, None, 1000), Err(CodecError::Corrupt(_))));
    }

    #[test]
    fn legacy_frames_are_refused_by_name() {
        let err = decompress(V06_FRAME, None, 1000).unwrap_err();
        assert!(
            matches!(&err, CodecError::Corrupt(m) if m.starts_with("zstd legacy format v0.6 is not supported")),
            "{err:?}"
        );
        // The reproducer of the heap over-read: its 3-byte dictionary is refused first.
        let err = decompress(V06_FRAME, Some(V06_DICT), 1000).unwrap_err();
        assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("too short")), "{err:?}");
        // With a usable dictionary, the frame is still a legacy one.
        let err = decompress(V06_FRAME, Some(b"eight or more bytes"), 1000).unwrap_err();
        assert!(matches!(&err, CodecError::Corrupt(m) if m.contains("v0.6")), "{err:?}");
        for (magic, version) in
            [(0xFD2F_B51Eu32, "v0.1"), (0xFD2F_B522, "v0.2"), (0xFD2F_B527, "v0.7"), (0xFD2F_B520, "before v0.8")]
        {
            let mut frame = magic.to_le_bytes().to_vec();
            frame.extend_from_slice(&[0; 12]);
            let err = decompress(&frame, None, 1000).unwrap_err();
            assert!(
                matches!(&err, CodecError::Corrupt(m) if m.contains(&format!("legacy format {version} "))),
                "{err:?}"
            );
        }
    }

    #[test]
    fn the_library_itself_has_no_legacy_decoders() {
        // With legacy support compiled in, ZSTD_getFrameContentSize reads v0.x frames (as size
        // unknown); without it, their magic number is simply not a frame.
        assert!(zstd_safe::get_frame_content_size(V06_FRAME).is_err());
        let mut padded = V06_FRAME.to_vec();
        padded.extend_from_slice(&[0; 16]); // past the shortest standard frame, so the magic decides
        let mut out = Vec::with_capacity(100);
        let code = DCtx::create().decompress(&mut out, &padded).unwrap_err();
        assert_eq!(error_code(code), Some(Zerr::ZSTD_error_prefix_unknown as usize));
    }

    #[test]
    fn short_dictionaries_are_invalid_parameters() {
        let frame = compress(b"payload", 3, None).unwrap();
        for dict in [&b""[..], b"\x28\xb5\x2f", b"seven b"] {
            let err = compress(b"payload", 3, Some(dict)).unwrap_err();
            assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("too short")), "{err:?}");
            let err = decompress(&frame, Some(dict), 100).unwrap_err();
            assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("too short")), "{err:?}");
        }
        // Eight bytes of raw content are a dictionary.
        let frame = compress(b"payload, payload", 3, Some(b"payload,")).unwrap();
        assert_eq!(decompress(&frame, Some(b"payload,"), 100).unwrap(), b"payload, payload");
    }

    #[test]
    fn malformed_dictionaries_say_so() {
        let frame = compress(b"payload", 3, None).unwrap();
        let mut truncated = sample_dictionary();
        truncated.truncate(40);
        for dict in [BAD_MAGIC_DICT, &b"\x37\xa4\x30\xec\x01\x00\x00\x00"[..], &truncated] {
            for err in
                [compress(b"payload", 3, Some(dict)).unwrap_err(), decompress(&frame, Some(dict), 100).unwrap_err()]
            {
                assert!(
                    matches!(&err, CodecError::InvalidParameter(m) if m.starts_with("zstd dictionary is malformed: it starts with the dictionary magic number")),
                    "{dict:?}: {err:?}"
                );
                assert!(!err.message().contains("Allocation"), "{err:?}");
            }
        }
    }

    #[test]
    fn frames_name_the_dictionary_they_need() {
        let dict = sample_dictionary();
        let id = zstd_safe::get_dict_id_from_dict(&dict).unwrap();
        let data = b"{\"customer_id\": 4242, \"order_id\": 99, \"status\": \"shipped\", \"country\": \"NL\"}".to_vec();
        let frame = compress(&data, 3, Some(&dict)).unwrap();
        assert_eq!(zstd_safe::get_dict_id_from_frame(&frame), Some(id));
        assert_eq!(decompress(&frame, Some(&dict), 1000).unwrap(), data);

        let err = decompress(&frame, None, 1000).unwrap_err();
        assert_eq!(
            err,
            CodecError::Corrupt(format!(
                "zstd frame needs dictionary {id} (dictionary ID in the frame header); give it as the dictionary argument"
            ))
        );
        let mut other = dict.clone();
        other[4..8].copy_from_slice(&(id.get() ^ 1).to_le_bytes());
        let err = decompress(&frame, Some(&other), 1000).unwrap_err();
        assert!(
            matches!(&err, CodecError::InvalidParameter(m) if m.contains(&format!("needs dictionary {id} ")) && m.contains(&format!("has ID {}", id.get() ^ 1))),
            "{err:?}"
        );
        let err = decompress(&frame, Some(b"raw content dictionary"), 1000).unwrap_err();
        assert!(matches!(&err, CodecError::InvalidParameter(m) if m.contains("raw content without an ID")), "{err:?}");
    }

    #[test]
    fn limits_and_garbage() {
        let data = vec![0u8; 100_000];
        let frame = compress(&data, 3, None).unwrap();
        assert_eq!(decompress(&frame, None, 99_999), Err(CodecError::over_limit("zstd frame", 100_000, 99_999)));
        let err = decompress(b"garbage!", None, 10).unwrap_err();
        assert!(matches!(&err, CodecError::Corrupt(m) if m.contains("not a zstd frame")), "{err:?}");
        for cut in [1, 3, 4, 5, 8, frame.len() / 2, frame.len() - 1] {
            let err = decompress(&frame[..cut], None, 1 << 20).unwrap_err();
            assert!(
                matches!(&err, CodecError::Corrupt(m) if m.starts_with("zstd frame is truncated")),
                "cut {cut}: {err:?}"
            );
        }
    }

    #[test]
    fn error_texts_are_our_own() {
        let data: Vec<u8> = (0..50_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8 % 16 + b'a').collect();
        let frame = compress(&data, 3, None).unwrap();
        // The last 4 bytes are the checksum.
        let mut bad_sum = frame.clone();
        *bad_sum.last_mut().unwrap() ^= 0x55;
        assert_eq!(
            decompress(&bad_sum, None, data.len()),
            Err(CodecError::corrupt("zstd frame is corrupt: checksum mismatch"))
        );
        // Damage anywhere: a Corrupt error of ours (or, rarely, the right data), never a panic.
        for i in (0..frame.len()).step_by(7) {
            let mut bad = frame.clone();
            bad[i] ^= 0x20;
            match decompress(&bad, None, data.len()) {
                Ok(out) => assert_eq!(out, data, "byte {i}"),
                Err(CodecError::Corrupt(m)) => {
                    assert!(m.starts_with("zstd frame") || m.starts_with("input is not"), "byte {i}: {m}")
                }
                Err(CodecError::TooLarge(_)) => {}
                Err(e) => panic!("byte {i}: {e:?}"),
            }
        }
    }

    #[test]
    fn frames_without_content_size_are_bounded() {
        let data = b"no size declared ".repeat(10_000);
        let mut frame = Vec::new();
        let mut encoder = zstd::stream::write::Encoder::new(&mut frame, 3).unwrap();
        std::io::Write::write_all(&mut encoder, &data).unwrap();
        encoder.finish().unwrap();
        assert_eq!(zstd_safe::get_frame_content_size(&frame).ok(), Some(None));
        assert_eq!(decompress(&frame, None, data.len()).unwrap(), data);
        assert!(matches!(decompress(&frame, None, data.len() - 1), Err(CodecError::TooLarge(_))));
        assert!(matches!(decompress(&frame, None, 0), Err(CodecError::TooLarge(_))));
    }

    #[test]
    fn several_frames_and_skippable_ones() {
        let mut data = compress(b"first,", 3, None).unwrap();
        data.extend_from_slice(&0x184D_2A53u32.to_le_bytes());
        data.extend_from_slice(&3u32.to_le_bytes());
        data.extend_from_slice(b"xyz");
        data.extend(compress(b"second", 19, None).unwrap());
        assert_eq!(decompress(&data, None, 100).unwrap(), b"first,second");
        assert!(matches!(decompress(&data, None, 11), Err(CodecError::TooLarge(_))));
        let mut trailing = data.clone();
        trailing.extend_from_slice(b"junk");
        let err = decompress(&trailing, None, 100).unwrap_err();
        assert!(matches!(&err, CodecError::Corrupt(m) if m.contains("4 trailing bytes")), "{err:?}");
        // A skippable frame cut short.
        let err =
            decompress(&data[..data.len() - compress(b"second", 19, None).unwrap().len() - 1], None, 100).unwrap_err();
        assert!(matches!(&err, CodecError::Corrupt(m) if m.starts_with("zstd frame is truncated")), "{err:?}");
    }

    #[test]
    fn ticks_come_per_chunk_and_the_frame_declares_its_size() {
        let data: Vec<u8> = (0..5 * CHUNK as u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 & 0x3F).collect();
        let mut ticks = 0;
        let frame = compress_with_tick(&data, 3, None, &mut || ticks += 1).unwrap();
        assert!(ticks >= 5, "{ticks} ticks");
        assert_eq!(zstd_safe::get_frame_content_size(&frame).ok(), Some(Some(data.len() as u64)));
        let mut ticks = 0;
        assert_eq!(decompress_with_tick(&frame, None, data.len(), &mut || ticks += 1).unwrap(), data);
        assert!(ticks >= 5, "{ticks} ticks");
        // Highly compressible data: output, not input, decides the ticks.
        let zeros = vec![0u8; 5 * CHUNK];
        let frame = compress(&zeros, 3, None).unwrap();
        assert!(frame.len() < CHUNK);
        let mut ticks = 0;
        assert_eq!(decompress_with_tick(&frame, None, zeros.len(), &mut || ticks += 1).unwrap(), zeros);
        assert!(ticks >= 5, "{ticks} ticks");
    }
}
