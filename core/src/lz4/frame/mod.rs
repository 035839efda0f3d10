//! LZ4 frame format (the `lz4` command-line tool's format), with a strict, bounded reader.
//!
//! Writing goes through `lz4_flex`'s `FrameEncoder`. Reading is our own parser, so that
//! truncated or damaged frames are errors instead of short output. When every frame declares
//! its content size, [`content_size`] adds them up from the headers and [`decompress_to`]
//! decodes into the caller's buffer of that size (the SQL result); otherwise [`decompress`]
//! decodes into a vector that grows up to the caller's limit. A frame is, all integers
//! little-endian (see the overview in [`super`]):
//!
//! * magic 0x184D2204;
//! * FLG byte: bits 7-6 version (must be 01), bit 5 block independence, bit 4 block
//!   checksums, bit 3 content size present, bit 2 content checksum, bit 1 reserved (0), bit 0
//!   dictionary ID present;
//! * BD byte: bits 6-4 block maximum size (4 = 64 KB, 5 = 256 KB, 6 = 1 MB, 7 = 4 MB), the
//!   other bits reserved (0);
//! * optional 8-byte content size, optional 4-byte dictionary ID;
//! * header checksum byte: (xxHash32 of the bytes from FLG up to it, seed 0) >> 8, low byte;
//! * blocks: a 4-byte size (high bit: the block is stored uncompressed; never above the block
//!   maximum), the block's bytes, and an xxHash32 of those bytes if FLG asks for block
//!   checksums. With block independence off ("linked blocks", `lz4 -BD`), a block may refer
//!   back into the previous 64 KB of the frame's decoded output;
//! * an end mark (a size of 0), then the xxHash32 of the frame's whole content if FLG asks for
//!   a content checksum.
//!
//! Frames may be concatenated, with skippable frames (magic 0x184D2A50..0x184D2A5F, a 4-byte
//! size, that many bytes of anything) among them; the content is the concatenation of the
//! frames' contents. Anything else after a frame is an error, and so is every missing part:
//! a frame is only complete with its end mark and, if announced, its content checksum. We check
//! every checksum and the content size, refuse frames that need a dictionary (we take none),
//! and never allocate or produce more than the caller's limit. As the reference decoder
//! (`lz4frame.c`) does, a recorded content size of 0 means "unknown": its encoder never writes
//! 0 for content that is not empty.

//!
//! The frame's fields are read in `header.rs`, frames are written in `encode.rs` and decoded
//! in `decode.rs`.

mod decode;
mod encode;
mod header;
#[cfg(test)]
mod tests;

pub use decode::{decompress, decompress_to, decompress_to_uninit, decompress_with_tick};
pub use encode::{compress, compress_bound, compress_to, compress_to_ticking, compress_to_writer};
pub use header::{content_size, declared_content_size};
