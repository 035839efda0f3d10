//! Scenario studies: what PostgreSQL's own uses of compression would do with the user's data.
//!
//! * [`fpi`]: full-page images in WAL under each `wal_compression` setting.
//! * [`spill`]: logical-decoding spill files, per-record vs streaming compression.
//! * [`toast`]: TOAST compression of a column's values under pglz and lz4.
//! * [`wal`]: a range of the server's real WAL replayed under each `wal_compression` setting.

pub mod fpi;
pub mod spill;
pub mod toast;
pub mod wal;
