//! Every choice the SQL API takes by name, as data: the lab's methods, and the helper that
//! parses any such table once, up front, into a typed value — PostgreSQL's "strategy as data".
//!
//! A method is written `name` or `name:level` (`pglz`, `zstd:19`, `server_zstd:-5`). Its row in
//! [`METHODS`] says what it is: the codec family, whether it is PostgreSQL's own C code (built
//! by the extension, which can reach the server's symbols) or ours, and whether it takes a
//! level. Parsing checks the name and the level against the table and nothing else — no codec
//! is built, no library looked up — so a bad argument is an ERROR before any work starts.
//! Listing (`compresslab.methods()`), help texts and error messages read the same table; the
//! spill strategies and synthetic payload kinds are tables of the same shape ([`Named`]).

use std::ops::RangeInclusive;

use crate::error::{CodecError, Result};
use crate::zstd_codec;

/// A closed set of choices known by name. [`parse_named`] reads one from text.
pub trait Named: Copy + PartialEq + 'static {
    /// What one choice is called in messages: "benchmark method", "spill strategy", …
    const WHAT: &'static str;
    /// What several are called in "valid … are": "methods", "strategies", …
    const PLURAL: &'static str;
    /// Every choice, in the order they are listed.
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
}

/// Declare an enum of choices known by name and its [`Named`] table at once:
///
/// ```text
/// named_choices! {
///     /// What it is.
///     pub enum Kind: "kind of thing", "kinds" { Zeros = "zeros", Random = "random" }
/// }
/// ```
#[macro_export]
macro_rules! named_choices {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $what:literal, $plural:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $text:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vmeta])* $variant ),+
        }

        impl $crate::registry::Named for $name {
            const WHAT: &'static str = $what;
            const PLURAL: &'static str = $plural;
            const ALL: &'static [$name] = &[$($name::$variant),+];
            fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
                serializer.serialize_str($crate::registry::Named::name(*self))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::registry::Named::name(*self))
            }
        }
    };
}

/// `name` or `name:level` (as `zstd:19` and `zstd_stream:19` are written), split; a level that
/// is not an integer is an error.
pub fn split_level(text: &str) -> Result<(&str, Option<i32>)> {
    let text = text.trim();
    match text.split_once(':') {
        Some((name, level)) => {
            let level = level
                .trim()
                .parse::<i32>()
                .map_err(|_| CodecError::invalid(format!("\"{text}\": level \"{level}\" is not an integer")))?;
            Ok((name.trim(), Some(level)))
        }
        None => Ok((text, None)),
    }
}

/// The choice named `text` (trimmed, any case), or an InvalidParameter error listing them all.
pub fn parse_named<T: Named>(text: &str) -> Result<T> {
    let wanted = text.trim();
    T::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(wanted)).ok_or_else(|| {
        CodecError::invalid(format!("unknown {} \"{wanted}\"; valid {} are {}", T::WHAT, T::PLURAL, names::<T>()))
    })
}

/// Every name of `T`, comma-separated, for messages and help texts.
pub fn names<T: Named>() -> String {
    T::ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
}

named_choices! {
    /// What a method compresses with.
    pub enum Family: "codec family", "families" {
        /// No compression: the speed limit.
        Copy = "copy",
        Pglz = "pglz",
        Lz4 = "lz4",
        Zstd = "zstd",
    }
}

impl Family {
    /// The levels this family takes, if any.
    pub fn levels(self) -> Option<RangeInclusive<i32>> {
        match self {
            Family::Zstd => Some(zstd_codec::level_range()),
            _ => None,
        }
    }
}

/// One row of the method table.
#[derive(Debug)]
pub struct MethodInfo {
    pub kind: MethodKind,
    pub name: &'static str,
    pub family: Family,
    /// PostgreSQL's own C code (or the C library the server links), built by the extension.
    pub server: bool,
    /// The code that runs it (`compresslab.methods()` adds the version).
    pub library: Library,
    pub about: &'static str,
}

/// Which code a method runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Library {
    /// compresslab's own Rust code (the core crate).
    Compresslab,
    /// The lz4_flex crate (Rust).
    Lz4Flex,
    /// The libzstd the zstd crate compiles in (C, statically linked).
    BundledZstd,
    /// PostgreSQL's own C code, in the server binary.
    Postgres,
    /// The liblz4 the server has loaded.
    ServerLz4,
    /// The libzstd the server has loaded.
    ServerZstd,
}

/// Declare the lab's methods once: the [`MethodKind`] enum, its order, and the [`METHODS`] table
/// come from the same rows, so no list of methods is written twice.
macro_rules! methods {
    ($( $kind:ident = $name:literal, $family:ident, server: $server:literal, $library:ident, $about:literal; )+) => {
        /// A method the lab can measure.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum MethodKind {
            $( $kind ),+
        }

        /// The method table, in the order methods are listed.
        pub const METHODS: &[MethodInfo] = &[
            $( MethodInfo {
                kind: MethodKind::$kind,
                name: $name,
                family: Family::$family,
                server: $server,
                library: Library::$library,
                about: $about,
            } ),+
        ];

        impl Named for MethodKind {
            const WHAT: &'static str = "benchmark method";
            const PLURAL: &'static str = "methods";
            const ALL: &'static [MethodKind] = &[$( MethodKind::$kind ),+];
            fn name(self) -> &'static str {
                self.info().name
            }
        }
    };
}

methods! {
    Memcpy = "memcpy", Copy, server: false, Compresslab,
        "a plain copy: the speed limit of any method";
    Pglz = "pglz", Pglz, server: false, Compresslab,
        "our pglz, byte-identical to PostgreSQL's, default strategy (as TOAST and wal_compression)";
    PglzFast = "pglz_fast", Pglz, server: false, Compresslab,
        "our pglz with a faster match finder: same format, not byte-identical";
    PglzAlways = "pglz_always", Pglz, server: false, Compresslab,
        "our pglz with the always strategy (no size or saving thresholds)";
    Lz4 = "lz4", Lz4, server: false, Compresslab,
        "an LZ4 block, byte for byte what the server's liblz4 writes for lz4 TOAST values";
    Lz4Frame = "lz4_frame", Lz4, server: false, Lz4Flex,
        "an LZ4 frame with content size and checksum (lz4_flex), as the lz4 tool writes";
    Zstd = "zstd", Zstd, server: false, BundledZstd,
        "a zstd frame (the zstd crate's static libzstd)";
    ServerPglz = "server_pglz", Pglz, server: true, Postgres,
        "PostgreSQL's own C pglz_compress/pglz_decompress, default strategy";
    ServerPglzAlways = "server_pglz_always", Pglz, server: true, Postgres,
        "PostgreSQL's own C pglz with the always strategy";
    ServerLz4 = "server_lz4", Lz4, server: true, ServerLz4,
        "the liblz4 the server links: LZ4_compress_default / LZ4_decompress_safe";
    ServerZstd = "server_zstd", Zstd, server: true, ServerZstd,
        "the libzstd the server links: ZSTD_compressCCtx / ZSTD_decompressDCtx";
}

impl MethodKind {
    pub fn info(self) -> &'static MethodInfo {
        METHODS.iter().find(|m| m.kind == self).expect("every method has a row in METHODS")
    }
}

/// The methods measured when none are given: every Rust codec, the server's C references at
/// comparable settings, and memcpy as the speed limit.
pub const DEFAULT_BENCH_METHODS: &[&str] = &[
    "memcpy",
    "pglz",
    "pglz_fast",
    "pglz_always",
    "server_pglz",
    "lz4",
    "lz4_frame",
    "server_lz4",
    "zstd:-5",
    "zstd:1",
    "zstd:3",
    "server_zstd:3",
    "zstd:9",
];

/// A method at a setting, parsed and checked: for a family with levels the level is always
/// present (the default filled in), for the others always absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    pub kind: MethodKind,
    pub level: Option<i32>,
}

impl MethodSpec {
    /// Parse `name` or `name:level`; `default_level` is used for a family with levels when
    /// none is written.
    pub fn parse(text: &str, default_level: i32) -> Result<MethodSpec> {
        let (name, level) = split_level(text)?;
        let kind: MethodKind =
            parse_named(name).map_err(|e| CodecError::invalid(format!("{e} (zstd methods take a level: zstd:19)")))?;
        MethodSpec::new(kind, level.or(kind.info().family.levels().map(|_| default_level)))
    }

    /// Check `level` against the method's family.
    pub fn new(kind: MethodKind, level: Option<i32>) -> Result<MethodSpec> {
        let info = kind.info();
        match (info.family.levels(), level) {
            (None, None) => {}
            (None, Some(l)) => {
                return Err(CodecError::invalid(format!("method {} has no levels, but level {l} was given", info.name)))
            }
            (Some(_), Some(l)) => {
                zstd_codec::check_level(l)?;
            }
            (Some(_), None) => {
                return Err(CodecError::invalid(format!("method {} needs a level, e.g. {}:3", info.name, info.name)))
            }
        }
        Ok(MethodSpec { kind, level })
    }

    pub fn info(&self) -> &'static MethodInfo {
        self.kind.info()
    }

    pub fn name(&self) -> &'static str {
        self.info().name
    }

    /// `name` or `name:level`, as it would be written.
    pub fn label(&self) -> String {
        match self.level {
            Some(l) => format!("{}:{l}", self.name()),
            None => self.name().to_string(),
        }
    }
}

/// Parse a list of methods (`None`: [`DEFAULT_BENCH_METHODS`]); an empty list is an error.
pub fn parse_methods(texts: Option<&[String]>, default_level: i32) -> Result<Vec<MethodSpec>> {
    match texts {
        Some([]) => Err(CodecError::invalid("methods must not be an empty array")),
        Some(texts) => texts.iter().map(|t| MethodSpec::parse(t, default_level)).collect(),
        None => DEFAULT_BENCH_METHODS.iter().map(|t| MethodSpec::parse(t, default_level)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_one_row_and_a_distinct_name() {
        assert_eq!(METHODS.len(), MethodKind::ALL.len());
        for kind in MethodKind::ALL {
            assert_eq!(kind.info().kind, *kind);
            assert_eq!(parse_named::<MethodKind>(&kind.name().to_uppercase()).unwrap(), *kind);
        }
        assert!(DEFAULT_BENCH_METHODS.iter().all(|m| MethodSpec::parse(m, 3).is_ok()));
        // Server methods, and only they, run the server's code.
        for m in METHODS {
            let servers = matches!(m.library, Library::Postgres | Library::ServerLz4 | Library::ServerZstd);
            assert_eq!(m.server, servers, "{}", m.name);
        }
    }

    #[test]
    fn specs_parse_with_levels_checked_against_the_table() {
        let zstd = MethodSpec::parse(" zstd:19 ", 3).unwrap();
        assert_eq!((zstd.kind, zstd.level, zstd.label()), (MethodKind::Zstd, Some(19), "zstd:19".to_string()));
        assert_eq!(MethodSpec::parse("server_zstd", 7).unwrap().level, Some(7));
        assert_eq!(MethodSpec::parse("LZ4", 3).unwrap(), MethodSpec { kind: MethodKind::Lz4, level: None });
        for bad in ["zstd:high", "zstd:99", "lz4:3", "snappy", "", "pglz:"] {
            let err = MethodSpec::parse(bad, 3).unwrap_err();
            assert!(matches!(err, CodecError::InvalidParameter(_)), "{bad}: {err:?}");
        }
        let err = MethodSpec::parse("snappy", 3).unwrap_err();
        assert!(err.message().contains("server_pglz_always") && err.message().contains("zstd:19"), "{err}");
        assert!(parse_methods(Some(&[]), 3).is_err());
        assert_eq!(parse_methods(None, 3).unwrap().len(), DEFAULT_BENCH_METHODS.len());
    }
}
