//! What this build offers: `version()`, `versions()` (compresslab's, its libraries' and the
//! server's), `capabilities()` (every codec and checksum exercised once) and the choices the
//! SQL API takes by name (`methods()`, with the library each method runs).

use compresslab_core::registry::{Library, Named, METHODS};
use compresslab_core::versions::{dotted, locked_version, zstd_version_number};
use compresslab_core::{checksum, envelope, lz4, pglz, zstd_codec, EnvelopeMethod};
use pgrx::prelude::*;

use crate::server::activity::setting;
use crate::server::codecs::versions::{server_lz4, server_zstd, LoadedLibrary};

/// The extension's version: this crate's, which is the control file's `default_version` (the
/// core crate is versioned on its own).
#[pg_extern(immutable, parallel_safe)]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The server's version (`server_version`) and `server_version_num`.
fn postgres_version() -> (String, String) {
    (setting("server_version"), setting("server_version_num"))
}

/// A crate's version as Cargo.lock pinned it at build time.
fn locked(name: &str) -> String {
    locked_version(name).unwrap_or("unknown").to_string()
}

/// One row per piece of code compresslab runs or reports on: compresslab itself, the libzstd
/// and lz4_flex compiled into it, the liblz4 and libzstd the server has loaded (asked of the
/// loaded libraries; NULL when the server has not loaded one) and PostgreSQL. `detail` says
/// where each version comes from.
#[pg_extern(stable, parallel_safe)]
fn versions(
) -> TableIterator<'static, (name!(component, String), name!(version, Option<String>), name!(detail, String))> {
    let server = |what: &str, lib: Option<LoadedLibrary>, function: &str| match lib {
        Some(l) => (what.to_string(), Some(dotted(l.number)), format!("{}, {function}() = {}", l.file, l.number)),
        None => (what.to_string(), None, "not loaded by the server".to_string()),
    };
    let (pg, pg_num) = postgres_version();
    TableIterator::new(vec![
        ("compresslab".to_string(), Some(version().to_string()), "the extension's library".to_string()),
        (
            "libzstd (compresslab's)".to_string(),
            Some(dotted(zstd_version_number())),
            format!(
                "statically linked by the zstd crate {}, ZSTD_versionNumber() = {}",
                locked("zstd"),
                zstd_version_number()
            ),
        ),
        ("lz4_flex".to_string(), Some(locked("lz4_flex")), "Rust crate, LZ4 frames (Cargo.lock at build time)".into()),
        server("liblz4 (server's)", server_lz4(), "LZ4_versionNumber"),
        server("libzstd (server's)", server_zstd(), "ZSTD_versionNumber"),
        ("PostgreSQL".to_string(), Some(pg), format!("server_version_num = {pg_num}")),
    ])
}

/// The code `library` names, with its version.
fn library_text(library: Library) -> String {
    let loaded = |name: &str, lib: Option<LoadedLibrary>| match lib {
        Some(l) => format!("the server's {name} {}", dotted(l.number)),
        None => format!("the server's {name} (not loaded)"),
    };
    match library {
        Library::Compresslab => format!("compresslab {} (Rust)", version()),
        Library::Lz4Flex => format!("lz4_flex {} (Rust)", locked("lz4_flex")),
        Library::BundledZstd => {
            format!("libzstd {} (C, in the zstd crate {})", dotted(zstd_version_number()), locked("zstd"))
        }
        Library::Postgres => {
            let version = postgres_version().0;
            format!("PostgreSQL {} (C)", version.split_whitespace().next().unwrap_or_default())
        }
        Library::ServerLz4 => loaded("liblz4", server_lz4()),
        Library::ServerZstd => loaded("libzstd", server_zstd()),
    }
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
    for m in [EnvelopeMethod::Pglz, EnvelopeMethod::Lz4, EnvelopeMethod::Zstd] {
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
/// PostgreSQL's own C code, the levels it takes, what it is, and the library (with its
/// version) it runs.
#[pg_extern(stable, parallel_safe)]
fn methods() -> TableIterator<
    'static,
    (
        name!(method, String),
        name!(family, String),
        name!(server_code, bool),
        name!(min_level, Option<i32>),
        name!(max_level, Option<i32>),
        name!(description, String),
        name!(library, String),
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
            library_text(m.library),
        )
    }))
}
