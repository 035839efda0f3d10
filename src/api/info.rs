//! What this build offers: `version()`, `capabilities()` (every codec and checksum exercised
//! once) and the choices the SQL API takes by name (`methods()`).

use compresslab_core::registry::{Named, METHODS};
use compresslab_core::{checksum, envelope, lz4, pglz, zstd_codec, Method};
use pgrx::prelude::*;

/// The extension's version: this crate's, which is the control file's `default_version` (the
/// core crate is versioned on its own).
#[pg_extern(immutable, parallel_safe)]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Sample input for the smoke round trips: repetitive text with some variation.
fn sample() -> Vec<u8> {
    (0..200).flat_map(|i| format!("row {i}: the quick brown fox jumps over the lazy dog; ").into_bytes()).collect()
}

/// One row per codec and checksum of this build, each exercised once: codecs by a round trip
/// of a sample, checksums against their published check values.
#[pg_extern(immutable, parallel_safe)]
fn capabilities(
) -> TableIterator<'static, (name!(kind, String), name!(name, String), name!(ok, bool), name!(detail, String))> {
    let data = sample();
    let mut rows = Vec::new();
    let mut codec = |name: &str, packed: Option<Vec<u8>>, unpack: &dyn Fn(&[u8]) -> Option<Vec<u8>>| {
        let (ok, detail) = match packed {
            Some(p) => {
                let ok = unpack(&p).as_deref() == Some(&data[..]);
                (ok, format!("{} -> {} bytes", data.len(), p.len()))
            }
            None => (false, "compressor refused the sample".to_string()),
        };
        rows.push(("codec".to_string(), name.to_string(), ok, detail));
    };
    for m in [Method::Pglz, Method::Lz4, Method::Zstd] {
        codec(&format!("compress({})", m.name()), envelope::compress(&data, m, None).ok(), &|p| {
            envelope::decompress(p, usize::MAX).ok()
        });
    }
    codec("pglz (PostgreSQL format)", pglz::compress(&data, &pglz::Strategy::DEFAULT), &|p| {
        pglz::decompress(p, data.len(), true).ok()
    });
    codec("lz4 block", lz4::block::compress(&data).ok(), &|p| lz4::block::decompress(p, data.len()).ok());
    codec("lz4 frame", Some(lz4::frame::compress(&data)), &|p| lz4::frame::decompress(p, usize::MAX).ok());
    codec(
        &format!("zstd frame (levels {}..{})", zstd_codec::level_range().start(), zstd_codec::level_range().end()),
        zstd_codec::compress(&data, zstd_codec::DEFAULT_LEVEL, None).ok(),
        &|p| zstd_codec::decompress(p, None, usize::MAX).ok(),
    );
    let check = b"123456789";
    for (name, value, expected) in [
        ("crc32c", checksum::crc32c(0, check), 0xE306_9283u32),
        ("crc32", checksum::crc32(0, check), 0xCBF4_3926),
        ("crc32_legacy", checksum::crc32_legacy(0, check), 0xC40E_D0B0),
    ] {
        rows.push((
            "checksum".to_string(),
            name.to_string(),
            value == expected,
            format!("'123456789' -> 0x{value:08X} (expected 0x{expected:08X})"),
        ));
    }
    TableIterator::new(rows)
}

/// The benchmark methods of the lab, from the registry: name, codec family, whether it is
/// PostgreSQL's own C code, the levels it takes, and what it is.
#[pg_extern(immutable, parallel_safe)]
fn methods() -> TableIterator<
    'static,
    (
        name!(method, String),
        name!(family, String),
        name!(server_code, bool),
        name!(min_level, Option<i32>),
        name!(max_level, Option<i32>),
        name!(description, String),
    ),
> {
    TableIterator::new(METHODS.iter().map(|m| {
        let levels = m.family.levels();
        (
            m.kind.name().to_string(),
            m.family.name().to_string(),
            m.server,
            levels.as_ref().map(|r| *r.start()),
            levels.as_ref().map(|r| *r.end()),
            m.about.to_string(),
        )
    }))
}
