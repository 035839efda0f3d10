//! Scenario studies: what PostgreSQL's own uses of compression would do with the user's data.
//!
//! * [`fpi`]: full-page images in WAL under each `wal_compression` setting.
//! * [`spill`]: logical-decoding spill files, per-record vs streaming compression.

pub mod fpi;
pub mod spill;
