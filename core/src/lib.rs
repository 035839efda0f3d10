//! compresslab-core: the codecs, checksums, benchmark harness and scenario models of
//! compresslab, in plain Rust.
//!
//! Nothing here knows about PostgreSQL's server APIs; the pgrx layer in the root crate converts
//! types, reads GUCs, checks privileges, reaches the server's own C codecs and turns
//! [`CodecError`] into ERRORs with SQLSTATEs.

pub mod advisor;
pub mod bytes;
pub mod checksum;
pub mod clock;
pub mod envelope;
pub mod error;
pub mod lab;
pub mod lz4;
pub mod page;
pub mod pglz;
pub mod registry;
pub mod rng;
pub mod scenarios;
pub mod wild_copy;
pub mod zstd_codec;

pub use envelope::Method;
pub use error::CodecError;

/// The version of this build, as `compresslab.version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
