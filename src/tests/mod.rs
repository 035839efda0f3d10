//! In-server tests (`cargo pgrx test`): what only a running PostgreSQL can check, through the
//! SQL functions and the server's own C, one file per subject:
//! - `codecs`: pglz and LZ4 against the server's C, LZ4 and zstd against the command-line tools
//! - `checksums`: CRC-32C and the legacy CRC-32 against the server's
//! - `settings`: the `compresslab.*` settings and `capabilities()`
//! - `rows`: the SQL result types against the core's rows
//!
//! Each file's tests are in a `#[pg_schema] mod tests` (pgrx runs a test as a function of
//! schema `tests`); the helpers they share are here.

mod checksums;
mod codecs;
mod rows;
mod settings;

use pgrx::prelude::*;

fn bytes(query: &str) -> Vec<u8> {
    Spi::get_one::<Vec<u8>>(query).expect("query failed").expect("query returned NULL")
}

fn bytes_with(query: &str, arg: &[u8]) -> Option<Vec<u8>> {
    Spi::get_one_with_args::<Vec<u8>>(query, &[arg.into()]).expect("query failed")
}

/// A heap page image as a full-page write sees it: the hole between pd_lower and pd_upper cut out.
fn page_image_without_hole(page: &[u8]) -> Vec<u8> {
    let lower = u16::from_le_bytes([page[12], page[13]]) as usize;
    let upper = u16::from_le_bytes([page[14], page[15]]) as usize;
    assert!(lower <= upper && upper <= page.len(), "not a standard page");
    [&page[..lower], &page[upper..]].concat()
}

/// Real payloads from this server: heap pages (hole removed and zero-filled), 2 KB slices
/// of the current WAL segment, 8 KB slices of catalog text, plus random and tiny inputs.
fn server_payloads() -> Vec<(String, Vec<u8>)> {
    Spi::run("CREATE EXTENSION IF NOT EXISTS pageinspect").unwrap();
    Spi::run(
        "CREATE TABLE interop_rows AS SELECT i AS id, md5(i::text) AS digest, repeat('x', i % 50) AS pad, now() AS at \
         FROM generate_series(1, 2000) i",
    )
    .unwrap();
    Spi::run("DELETE FROM interop_rows WHERE id % 3 = 0").unwrap();
    let mut payloads = Vec::new();
    for blkno in 0..4 {
        let page = bytes(&format!("SELECT get_raw_page('interop_rows', {blkno})"));
        payloads.push((format!("page {blkno} without hole"), page_image_without_hole(&page)));
        payloads.push((format!("page {blkno} zero-filled hole"), page));
    }
    Spi::run("CHECKPOINT").unwrap();
    let wal = bytes("SELECT pg_read_binary_file('pg_wal/' || pg_walfile_name(pg_current_wal_lsn()), 0, 16384)");
    for (i, slice) in wal.chunks(2048).enumerate() {
        payloads.push((format!("WAL slice {i}"), slice.to_vec()));
    }
    let text =
        bytes("SELECT convert_to(string_agg(description, ' ' ORDER BY objoid, objsubid), 'UTF8') FROM pg_description");
    for (i, slice) in text.chunks(8192).take(6).enumerate() {
        payloads.push((format!("text slice {i}"), slice.to_vec()));
    }
    payloads.push(("text 64 KB".into(), text[..65_536.min(text.len())].to_vec()));
    payloads.push(("random 8 KB".into(), compresslab_core::rng::SeededRng::new(0x2545_F491).bytes(8192)));
    payloads.push(("high bytes".into(), (0..5000u32).map(|i| 0x80 | ((i * 7 / 3) % 128) as u8).collect()));
    payloads.push(("31 bytes".into(), vec![b'a'; 31]));
    payloads.push(("32 bytes".into(), vec![b'a'; 32]));
    payloads
}
