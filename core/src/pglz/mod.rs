//! pglz: PostgreSQL's built-in LZ compressor, in Rust.
//!
//! This is the format TOAST uses for `pglz`-compressed values and that
//! `wal_compression = pglz` uses for full-page images. The compressor [`compress`] emits
//! the very same bytes as PostgreSQL 15's `pglz_compress` on x86-64 and refuses
//! exactly the inputs it refuses; the decompressor accepts everything PostgreSQL
//! writes, with PostgreSQL 15's `pglz_decompress` semantics, and is safe on any
//! input whatsoever.
//!
//! # Format
//!
//! A compressed datum has no header: its raw length is kept by the caller (TOAST
//! keeps it in the varlena header, WAL derives it from the block size minus the
//! hole) and passed to the decoder. Storing data uncompressed when compression
//! does not pay is also the caller's business.
//!
//! The stream is a sequence of *items*, grouped by eight. Each group starts with
//! a **control byte** whose bits are read **least significant bit first**, one
//! per item: a clear bit announces a *literal* (one byte copied from the input),
//! a set bit announces a *tag*. The final group may be shorter than eight items;
//! the unused high bits of its control byte are zero.
//!
//! A tag is two or three bytes `T1 T2 [T3]`:
//!
//! ```text
//!   T1: OOOO LLLL    T2: OOOO OOOO    [T3: EEEE EEEE]
//!   offset = (T1 >> 4) << 8 | T2               12 bits, 1..=4095
//!   L < 15  : length = L + 3                   3..=17, two-byte tag
//!   L == 15 : length = 18 + T3                 18..=273, three-byte tag
//! ```
//!
//! and means "append `length` bytes copied from `offset` bytes back in the
//! output". A match of exactly 18 is written with `L = 15, T3 = 0`. Shorter
//! matches than three bytes never pay, so they do not exist. The compressor stops
//! looking at distance 0x0fff, so it only writes offsets up to 4094, but the
//! decoder accepts 4095. Example: 200 spaces compress to
//! `02 20 0f 01 b5`: a control byte (item 0 literal, item 1 tag), the literal
//! space, and a tag with offset 1, length 18 + 0xb5 = 199.
//!
//! ## Overlapping copies (the LZ77 rule)
//!
//! A tag's source may start fewer than `length` bytes before the write position,
//! so the copy reads bytes it has just produced; the result must equal a forward
//! byte-by-byte copy. With output `11234` and a tag (offset 4, length 16) the
//! output becomes `112341234123412341234`. A `memmove`-style copy would be wrong
//! (it copies a snapshot of the source) and `memcpy` on overlapping ranges is
//! undefined. The decoder uses the *doubling trick* PostgreSQL adopted in 13:
//! while `offset < length`, copy `offset` bytes from `offset` back (the two
//! ranges touch but do not overlap), advance, reduce `length`, and double
//! `offset`, since the last `2 * offset` bytes now repeat cleanly; one final copy
//! of the remaining `length <= offset` bytes finishes. A run therefore costs
//! O(log length) block copies; an offset of 1 is a plain fill.
//!
//! # Strategy
//!
//! [`Strategy`] mirrors `PGLZ_Strategy`'s six `int32` fields:
//!
//! | field | meaning | `DEFAULT` | `ALWAYS` |
//! |---|---|---|---|
//! | `min_input_size` | shorter inputs are refused | 32 | 0 |
//! | `max_input_size` | longer inputs are refused | `i32::MAX` | `i32::MAX` |
//! | `min_comp_rate` | minimum saving in percent | 25 | 0 |
//! | `first_success_by` | give up after this many output bytes without any match | 1024 | `i32::MAX` |
//! | `match_size_good` | stop searching at a match this long | 128 | 128 |
//! | `match_size_drop` | shrink "good" by this percent per history entry visited | 10 | 6 |
//!
//! Values are stored as given and clamped when compressing, as PostgreSQL does:
//! the good length to 17..=273, the drop to 0..=100, the rate to 0..=99.
//! [`Strategy::parse`] reads `default`, `always` or `key=value,...` text.
//!
//! # Compressor
//!
//! For each input position, a bucket number is computed from the next four bytes,
//! `((b0 << 6) ^ (b1 << 4) ^ (b2 << 2) ^ b3) & mask`, or from `b0 & mask` alone
//! for the last three positions. PostgreSQL reads plain `char`, which is signed on
//! x86-64, so bytes >= 0x80 are sign-extended before shifting and their sign bits
//! land inside the mask; we emulate that to choose the same buckets (the decoder
//! does not care). The hash table size depends on the input length (512 entries
//! below 128 bytes, 1024 below 256, 2048 below 512, 4096 below 1024, else 8192),
//! and only that part is cleared per call, so short inputs start cheaply.
//!
//! The history remembers the last 4096 input positions; every position consumed
//! (as a literal or inside a match) enters it, and the oldest falls out. To find a
//! match, the bucket of the current position is walked newest first:
//!
//! * stop at the first candidate 0x0fff or more bytes back;
//! * measure the common length, capped at 273 and at the end of the input, and
//!   keep it if it is strictly longer than the best so far (so among equal
//!   lengths the nearest wins);
//! * before moving to the next candidate, stop if the best length has reached
//!   `good`, otherwise lower `good` by `good * drop / 100` (integer arithmetic):
//!   the farther back we search, the less we ask for.
//!
//! A best length of three or more becomes a tag, anything shorter a literal.
//!
//! PostgreSQL keeps doubly linked lists of recycled history entries; we keep an
//! equivalent hash chain of absolute positions (see `compress/chain.rs` for why it
//! walks the very same candidates in the same order) and compare sixteen bytes at
//! a time, which changes speed but not output. For inputs up to 61,440 bytes the
//! chain has one link per position, indexed by the stored value, so a step of the
//! walk is one load; the decaying "good" length is read from a table computed
//! once per strategy (one entry per candidate a walk can visit) instead of a
//! division per candidate. Every position enters the history, matched or not, so
//! its link depends on the input alone: the buckets and links of 4096 positions at
//! a time are made up front, in one vectorizable pass (16-bit lanes give the same
//! masked bits as C's `int` arithmetic) and one pass with no branches, and the
//! items read only the link of the position they start at.
//!
//! [`compress_fast`] emits the same format with the same size checks, strategy
//! clamping and accept/refuse rules, but a cheaper match finder, so its output
//! is valid pglz (PostgreSQL decodes it) but **not** byte-identical to
//! PostgreSQL's. Buckets come from a multiplicative hash of the next four bytes
//! (`(u32_le * 0x9E3779B1) >> (32 - bits)`), so chains hold few colliding
//! entries, and the walk is the same (newest first, distance below 0x0fff,
//! strictly longer wins, same "good" decay) but stops after a number of
//! candidates. It has two loops, by input size:
//!
//! * **up to 8192 bytes** (a page), a loop of its own: a table of 1024 buckets
//!   below 512 bytes of input, 4096 below 1024 and 32,768 above (so that few
//!   positions share a bucket with other bytes); the walk stops after 256
//!   candidates; positions enter the history as the items pass them, and those
//!   inside a long match only for its first and last bytes (up to 4096 bytes
//!   of input, 3 of a match over 8; above, 8 of a match over 16); the last
//!   three positions are not searched (they become literals). The literals
//!   before a match are written as one run once the match is found, the size
//!   check before each of them made as one bound on the scan of their positions.
//!   Its bucket table is its own and not cleared at every call: each call
//!   numbers its positions just below the previous call's, so that what
//!   earlier calls left lies out of reach, and the table is cleared once the
//!   numbers run out (every 30 calls on 2 KB, 7 on 8 KB);
//! * **over 8192 bytes**, the exact encoder's loop (buckets and links made ahead
//!   of the items, every position in the history) with 8192 buckets of the
//!   multiplicative hash and a walk cut after 64 candidates for the default
//!   `match_size_good` of 128 (proportionally fewer for a strategy asking for
//!   shorter matches).
//!
//! Why two loops: on small inputs the first is faster than the second at the
//! same size, because making every position's link costs about as much as the
//! whole search saves on 2 KB, while the first loop skips the middle of long
//! matches and writes literal runs at once. Cutting the walk harder trades size
//! for speed, and how much size depends on the data (repetitive data loses the
//! most); leaving the middles of long matches out of the history costs size
//! too, most on data whose longest matches lie deep in long chains or in the
//! skipped middles (the unit tests' six-letter `high_bytes`). The figures
//! behind each choice are in BENCHMARKS.md.
//!
//! ## Accept / refuse rules
//!
//! [`compress`] (and [`compress_fast`]) return `None` exactly when `pglz_compress` returns -1:
//!
//! * `match_size_good <= 0`, or the input length is below `min_input_size` or
//!   above `max_input_size` (so an input over `i32::MAX` bytes is always refused);
//! * `result_max = len * (100 - rate) / 100`, computed as
//!   `len / 100 * (100 - rate)` when `len > i32::MAX / 100` to avoid overflow;
//!   before every item, if the output already holds `result_max` bytes or more;
//! * before every item, if no match has been found yet and the output holds
//!   `first_success_by` bytes or more (quick exit on incompressible data);
//! * at the end, if the size is `>= result_max`: even with rate 0 the result must
//!   be strictly smaller than the input, and an empty input always fails.
//!
//! Because the size test runs once per item and an item writes up to four bytes
//! (control byte plus three-byte tag), the output buffer needs
//! [`max_output`]`(len) = len + 4` bytes.
//!
//! # Decompressor
//!
//! Read a control byte, then up to eight items while input and output remain;
//! literal bytes are copied, tags are copied from the output as described above.
//! Every copy is clamped to the remaining room, so at most `raw_size` bytes are
//! ever written. A fast loop takes one control group per iteration while at
//! least 30 input bytes (the most a group can read: control byte, seven 3-byte
//! tags, an 8-byte load) and 32 output bytes remain, so it checks the input once
//! per group: a run of literals (up to the next tag in the control byte, found
//! with one `trailing_zeros`) is moved with one 8-byte copy; a tag is read with
//! one 4-byte load, its size (2 or 3) computed without a branch from
//! `(L + 33) >> 4`, which keeps the input cursor's dependency chain short (the
//! next item's address waits on it); a tag with `length + 32` bytes of room is
//! copied, for offsets of 16 or more, with one 16-byte copy when it is at most 16
//! long (most are), by two overlapping 16-byte copies or `memcpy` when it is
//! longer but does not overlap its source, else in 32-byte (offsets >= 32) or
//! 16-byte chunks; 8-byte chunks for offsets 8..15 (each chunk reads only bytes
//! already final), and for offsets 1..7 by storing an 8-byte pattern of the
//! period every `8 / off * off` bytes. Chunks may write up to 31 bytes past the
//! match, inside the room, to be rewritten later or lie past the result. The
//! first tag too close to the end, and everything after it, takes the checked
//! loop described above (with the doubling trick). With `check_complete` the result must be exactly `raw_size`
//! bytes and every input byte must have been used; without it (TOAST slices need
//! only a prefix) decoding stops once `raw_size` bytes are out, leftover input is
//! ignored, and a short result is returned as is. [`maximum_compressed_size`]
//! bounds the input needed for a raw prefix of `n` bytes by `(9n + 7) / 8`.
//!
//! Safety on untrusted input: before reading a tag's second byte or its length
//! extension the decoder checks they exist (a truncated tag is an error, not a
//! read past the end); an offset of 0 is rejected (it would copy garbage and make
//! the doubling loop spin forever); an offset larger than the number of bytes
//! produced so far is rejected (it would read before the buffer). Every error is
//! a [`CodecError::Corrupt`](crate::error::CodecError::Corrupt) whose message
//! names the problem and the input byte offset. [`decompress`] also refuses a
//! `raw_size` above 1 GB - 1 and never allocates more than the input could expand
//! to. Each loop step consumes input, so decoding always terminates. The fast
//! loops of both directions use `unsafe` unchecked loads and stores; each block
//! states the bound that makes it safe (input and output room checked once per
//! item, candidate distances checked to lie in `1..=min(ip, 4094)`), and the
//! property tests feed truncated, bit-flipped and random streams.

mod compress;
mod decompress;
mod strategy;

pub use compress::{
    compress, compress_fast, compress_fast_into, compress_fast_to, compress_into, compress_to, compress_to_ticking,
    max_output, TICK_BYTES,
};
pub use decompress::{
    decodable_room, decompress, decompress_into, decompress_into_ticking, decompress_into_ticking_every,
    decompress_uninit_ticking, decompress_uninit_ticking_every, max_decoded_len, maximum_compressed_size, read_tag,
    DECODE_TICK_BYTES, MAX_RAW_SIZE,
};
pub use strategy::Strategy;
