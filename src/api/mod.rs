//! The SQL surface: `#[pg_extern]` functions, and the `recompress` procedure's plpgsql
//! (`rewrite.sql`), only. Each parses its arguments once (through
//! the core's registry), asks `crate::server` for data and privileges, hands the work to the
//! core, and turns the core's rows into tuples (`crate::rows`).
//!
//! Labels, as core labels its own functions: codecs and checksums whose result depends only on
//! their arguments are IMMUTABLE STRICT PARALLEL SAFE (usable in indexes and generated
//! columns); the forms that read a setting (`compress(data)`, `zstd_compress(data)`, every
//! decompression function, bounded by `compresslab.max_decompressed_size`) are STABLE;
//! benchmarks and estimates are VOLATILE, PARALLEL SAFE when they only compute, RESTRICTED
//! when they read relations (buffers, SPI), UNSAFE when they run the caller's query
//! (`simulate_spill`).

mod advisor;
mod checksums;
mod codecs;
mod info;
mod lab;
mod retired;
mod rewrite;
mod scenarios;
mod spill;
mod wal;
