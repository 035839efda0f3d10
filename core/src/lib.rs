//! compresslab-core: the codecs, checksums and benchmark harness of compresslab, in plain Rust.
//!
//! Nothing here knows about PostgreSQL's server APIs; the pgrx layer in the root crate converts
//! types, reads GUCs, checks privileges and turns [`CodecError`] into ERRORs with SQLSTATEs.

pub mod checksum;
pub mod error;
pub mod lab;
pub mod lz4;
pub mod method;
pub mod pglz;
pub mod scenarios;
pub mod zstd_codec;

pub use error::CodecError;
pub use method::Method;

/// The version of this build, as `compresslab.version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
