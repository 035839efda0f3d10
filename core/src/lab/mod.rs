//! The lab: test_pglz-style benchmarks of sliced payloads, for every codec and checksum.
//!
//! Method, after the "pglz performance" thread and the absolute-CPU critique of the
//! full-page-writes thread:
//!
//! * **Slices.** A payload is a list of *pieces* (a bytea, a page image, a column value, a file).
//!   Each piece is cut into slices of the requested size — the tail slice included, so every
//!   input byte is measured — or kept whole (slice size 0), and every slice is compressed and
//!   decompressed on its own, as TOAST chunks and WAL page images are.
//! * **Fixed work, interleaved.** Every method does the same number of iterations over the same
//!   slices, after one untimed warm-up iteration; the methods of one run take turns within each
//!   iteration, so drift in the machine's speed hits them alike. All buffers are allocated
//!   before the timed regions, in two contiguous arenas whose size is bounded by the input
//!   (see [`harness`]).
//! * **Raw fallback.** A slice the method refuses (pglz's strategy) or that does not shrink is
//!   stored raw, as PostgreSQL does; such slices are counted (`raw_slices`) and their raw size
//!   is what `stored_bytes` counts. They are not decompressed.
//! * **Verified.** After every iteration every decompressed slice is compared byte for byte with
//!   its source, outside the timed region; a mismatch is an error, never a number.
//! * **Reported.** Bytes in and out, the ratio, compression and decompression speed as MB/s
//!   (10^6 bytes per second of *uncompressed* bytes, like lzbench) and ns per uncompressed byte,
//!   each the median and the best of the iterations, plus the summed wall time and the CPU time
//!   (user + system, from the thread's CPU clock; see `clock`) of the timed regions.

pub mod batches;
pub mod checksums;
pub mod codecs;
pub mod harness;
pub mod payload;
pub mod render;

pub use batches::{run_batches, run_payload, RunOptions};
pub use checksums::{bench_checksums, Checksum, ChecksumRow};
pub use codecs::Codec;
pub use harness::{
    bench_codec, measure_bare, measure_codec, measure_codecs, measure_overhead, BenchRow, Hooks, Measurement, NoHooks,
};
pub use payload::Payload;
