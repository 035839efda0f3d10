//! zstd's errors and dictionaries in our words: which dictionary a frame needs, whether a
//! dictionary can be one, and the library's error codes turned into messages a DBA
//! understands (never the library's own text for a malformed dictionary).

use std::num::NonZeroU32;

use zstd::zstd_safe::{self, zstd_sys};
use zstd_sys::ZSTD_ErrorCode as Zerr;

use super::{DICTIONARY_MAGIC, MIN_DICTIONARY_LEN};
use crate::error::{CodecError, Result};

/// Check a frame that names dictionary `needed` against the dictionary given.
pub(super) fn check_frame_dictionary(
    needed: NonZeroU32,
    given: Option<&[u8]>,
    given_id: Option<NonZeroU32>,
) -> Result<()> {
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
pub(super) fn check_dictionary(dict: &[u8]) -> Result<Option<NonZeroU32>> {
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
pub(super) fn dictionary_load_error(code: usize, dict: &[u8]) -> CodecError {
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

pub(super) fn compress_error(code: usize, dictionary: Option<&[u8]>) -> CodecError {
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
pub(super) fn decode_error(code: usize, no_dictionary: bool) -> CodecError {
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
pub(super) fn error_code(code: usize) -> Option<usize> {
    let e = code.wrapping_neg();
    (code != 0 && e <= Zerr::ZSTD_error_maxCode as usize).then_some(e)
}

pub(super) fn error_name(code: usize) -> &'static str {
    zstd_safe::get_error_name(code)
}
