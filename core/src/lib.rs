//! compresslab-core: the codecs, checksums, benchmark harness and scenario models of
//! compresslab, in plain Rust.
//!
//! Nothing here knows about PostgreSQL's server APIs; the pgrx layer in the root crate converts
//! types, reads GUCs, checks privileges, reaches the server's own C codecs and turns
//! [`CodecError`] into ERRORs with SQLSTATEs.
//!
//! Test convention: a module that is a single file keeps its unit tests inline, at its end
//! (`#[cfg(test)] mod tests { ... }`); a module that is a directory keeps them in a `tests.rs`
//! beside its `mod.rs` (`#[cfg(test)] mod tests;`), and each other file of the directory, a
//! module of its own, keeps its own tests inline. So a test lives next to the code it tests,
//! and no `mod.rs` grows by the tests of its whole directory. Tests of the public API across
//! modules are in `core/tests/`.

pub mod advisor;
pub mod bytes;
pub mod checksum;
pub mod clock;
pub mod envelope;
pub mod error;
pub mod lab;
pub mod lz4;
pub mod monitor;
pub mod page;
pub mod pg_compression;
pub mod pglz;
pub mod registry;
pub mod rewrite;
pub mod rng;
pub mod sampling;
pub mod scenarios;
pub mod sql_text;
pub mod ticking;
pub mod uninit;
pub mod versions;
pub mod wild_copy;
pub mod zstd_codec;

pub use envelope::EnvelopeMethod;
pub use error::CodecError;

/// The version of this build, as `compresslab.version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
