//! compresslab: PostgreSQL's compression codecs and checksums in SQL.
//!
//! This crate is the thin pgrx layer: the SQL surface (`api`), what touches the server
//! (`server`), result rows (`rows`), settings and errors. The codecs, checksums, lab and
//! scenario models live in the pure-Rust `compresslab-core` crate (`core/`).

// Result tables are spelled out in signatures because pgrx reads their column names there.
#![allow(clippy::type_complexity)]

use pgrx::prelude::*;

// The magic block's name and version, Cargo.toml's (PostgreSQL 18 and 19 show them in
// pg_get_loaded_modules()).
::pgrx::pg_module_magic!(name, version);

mod api;
mod bytea;
mod errors;
mod gucs;
mod measure;
mod rows;
mod server;

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // A Rust backtrace must never reach a client: pgrx puts one in an ERROR's DETAIL when
    // RUST_BACKTRACE is set in the server's environment, and it names the library's
    // internals. RUST_LIB_BACKTRACE wins over RUST_BACKTRACE for captured backtraces; the
    // backend is single-threaded here.
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
    compresslab_core::ticking::set_cancel_probe(server::interrupt_pending);
    gucs::register();
}

#[cfg(any(test, feature = "pg_test"))]
mod tests;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
