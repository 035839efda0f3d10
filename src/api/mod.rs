//! The SQL surface: `#[pg_extern]` functions only. Each parses its arguments once (through
//! the core's registry), asks `crate::server` for data and privileges, hands the work to the
//! core, and turns the core's rows into tuples (`crate::rows`).

mod checksums;
mod codecs;
mod info;
mod lab;
mod scenarios;
mod spill;
