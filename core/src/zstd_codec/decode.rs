//! Decoding a sequence of frames, each checked before libzstd sees it (a legacy or skippable
//! magic, a dictionary ID, a declared size), into a growing vector or a buffer of the final
//! size, a chunk at a time with a tick between chunks; one decoding context kept per thread.

use super::frames::{frame_at, FrameStart};
use super::*;

/// Where decoded bytes go: a vector that grows as output comes ([`decompress_with_tick`]),
/// or a buffer of the final size ([`decompress_to`]).
pub(super) trait Output {
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
pub(super) fn decode_frames(
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
    pub(super) static SPARE_DECODER: Cell<Option<DCtx<'static>>> = const { Cell::new(None) };
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
