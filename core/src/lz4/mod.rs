//! LZ4: blocks encoded by our own encoder ([`encode`]: byte for byte what liblz4's
//! `LZ4_compress_default` writes, the call behind PostgreSQL's lz4 TOAST values and lz4 WAL
//! compression; fuzzed against the system's liblz4) and decoded by our own decoder ([`decode`]:
//! a raw-pointer fast loop checked before every step, safe Rust near the ends; fuzzed against
//! lz4_flex's safe decoder). Frames are written by the pure-Rust `lz4_flex` crate.
//!
//! Two format layers, as in the LZ4 specification:
//!
//! * **Block format** ([`block`]): a sequence of *sequences*, each a token byte (high nibble:
//!   literal count, low nibble: match length − 4; 15 means "more length bytes follow, each
//!   adding up to 255"), the literals, then a 2-byte little-endian back-reference offset
//!   (1..65535). The last sequence has literals only. A block carries no length: the caller
//!   keeps the raw size, like PostgreSQL's TOAST does for its lz4 values. The common
//!   "size-prepended" variant puts the raw size first as a 4-byte little-endian integer.
//! * **Frame format** ([`frame`]): what the `lz4` command-line tool reads and writes. Magic
//!   0x184D2204 (little-endian), a frame descriptor (FLG: version, block independence, block
//!   and content checksums, content size present; BD: maximum block size 64 KB..4 MB; an
//!   optional 8-byte content size; a header checksum byte), then data blocks each prefixed by a
//!   4-byte size whose high bit marks a block stored uncompressed, an end mark of four zero
//!   bytes and an optional xxHash32 content checksum. Skippable frames (magic 0x184D2A5?) and
//!   concatenated frames are allowed by the specification.
//!
//! * **Streaming** ([`stream`]): one block per record, each free to refer back into the
//!   records before it (`LZ4_compress_fast_continue` / `LZ4_decompress_safe_usingDict`).
//!
//! Decoding untrusted input never allocates more than the caller's limit: the raw size of a
//! block (given or prepended) and a frame's declared content size are checked against it
//! first, and frames without a declared size are decoded through a bounded reader.

pub mod block;
pub mod decode;
pub mod encode;
pub mod frame;
pub mod stream;
