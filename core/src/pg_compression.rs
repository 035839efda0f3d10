//! PostgreSQL's own names for its compression settings, mapped in one place: the values of
//! `wal_compression` (and how a WAL record's `bimg_info` says which one stored an image), a
//! column's TOAST method (`attcompression`, `pg_column_compression()`,
//! `default_toast_compression`), and the registry method that runs each as the server does.
//! Code elsewhere holds these typed values; only the SQL-facing rows carry their names as text.

use crate::registry::{MethodKind, MethodSpec, Named};

crate::named_choices! {
    /// A `wal_compression` setting (PostgreSQL 15 and later).
    pub enum WalCompression: "wal_compression setting", "settings" {
        Off = "off",
        Pglz = "pglz",
        Lz4 = "lz4",
        Zstd = "zstd",
    }
}

/// `ZSTD_CLEVEL_DEFAULT`, the level xloginsert.c compresses images at.
const WAL_ZSTD_LEVEL: i32 = 3;

impl WalCompression {
    /// The setting as `SHOW wal_compression` prints it: also `on` (pglz, as in PostgreSQL 14)
    /// and the other spellings of a boolean. None for anything else.
    pub fn from_setting(text: &str) -> Option<WalCompression> {
        match text.trim().to_ascii_lowercase().as_str() {
            "off" | "false" | "no" | "0" => Some(WalCompression::Off),
            "on" | "true" | "yes" | "1" | "pglz" => Some(WalCompression::Pglz),
            "lz4" => Some(WalCompression::Lz4),
            "zstd" => Some(WalCompression::Zstd),
            _ => None,
        }
    }

    /// How an image in the WAL is stored: `BKPIMAGE_COMPRESS_PGLZ`, `_LZ4`, `_ZSTD` of
    /// `bimg_info` (PostgreSQL 15 and later), `Off` for an uncompressed image.
    pub fn from_bimg_info(bimg_info: u8) -> WalCompression {
        match bimg_info & 0x1c {
            0 => WalCompression::Off,
            0x04 => WalCompression::Pglz,
            0x08 => WalCompression::Lz4,
            _ => WalCompression::Zstd,
        }
    }

    /// The server's own routine for the setting, at the settings xloginsert.c uses
    /// (`pglz_compress` with `PGLZ_strategy_default`, `LZ4_compress_default`, `ZSTD_compress` at
    /// `ZSTD_CLEVEL_DEFAULT`), so CPU figures are what the server would spend. None for `off`.
    pub fn server_method(self) -> Option<MethodSpec> {
        let (kind, level) = match self {
            WalCompression::Off => return None,
            WalCompression::Pglz => (MethodKind::ServerPglz, None),
            WalCompression::Lz4 => (MethodKind::ServerLz4, None),
            WalCompression::Zstd => (MethodKind::ServerZstd, Some(WAL_ZSTD_LEVEL)),
        };
        Some(MethodSpec { kind, level })
    }

    /// Our encoder that writes the server's bytes for the setting, faster (the what-if's
    /// sizers): pglz and LZ4; None where we have none.
    pub fn sizer(self) -> Option<MethodSpec> {
        match self {
            WalCompression::Pglz => Some(MethodSpec { kind: MethodKind::Pglz, level: None }),
            WalCompression::Lz4 => Some(MethodSpec { kind: MethodKind::Lz4, level: None }),
            WalCompression::Off | WalCompression::Zstd => None,
        }
    }

    /// The value to write in `ALTER SYSTEM SET wal_compression`.
    pub fn setting(self) -> &'static str {
        self.name()
    }
}

crate::named_choices! {
    /// A column's TOAST compression method.
    pub enum ToastCompression: "TOAST compression method", "methods" {
        Pglz = "pglz",
        Lz4 = "lz4",
    }
}

impl ToastCompression {
    /// `pg_attribute.attcompression`: `p`, `l`, or none (the column follows
    /// `default_toast_compression`).
    pub fn from_attcompression(code: u8) -> Option<ToastCompression> {
        match code {
            b'p' => Some(ToastCompression::Pglz),
            b'l' => Some(ToastCompression::Lz4),
            _ => None,
        }
    }

    /// Its `pg_attribute.attcompression` code (and `toast_compress_datum`'s `cmethod`).
    pub fn attcompression(self) -> u8 {
        match self {
            ToastCompression::Pglz => b'p',
            ToastCompression::Lz4 => b'l',
        }
    }

    /// A method as `pg_column_compression()` or `default_toast_compression` names it.
    pub fn from_setting(text: &str) -> Option<ToastCompression> {
        ToastCompression::ALL.iter().copied().find(|m| m.name() == text.trim())
    }

    /// The server's own routine TOAST runs for the method.
    pub fn server_method(self) -> MethodSpec {
        let kind = match self {
            ToastCompression::Pglz => MethodKind::ServerPglz,
            ToastCompression::Lz4 => MethodKind::ServerLz4,
        };
        MethodSpec { kind, level: None }
    }

    /// The name in `ALTER TABLE ... SET COMPRESSION`.
    pub fn setting(self) -> &'static str {
        self.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_map_both_ways() {
        for &w in WalCompression::ALL {
            assert_eq!(WalCompression::from_setting(w.setting()), Some(w));
            assert_eq!(w.server_method().is_none(), w == WalCompression::Off);
        }
        assert_eq!(WalCompression::from_setting("on"), Some(WalCompression::Pglz));
        assert_eq!(WalCompression::from_setting("snappy"), None);
        assert_eq!(WalCompression::from_bimg_info(0x08 | 0x02), WalCompression::Lz4);
        assert_eq!(WalCompression::Zstd.server_method().unwrap().label(), "server_zstd:3");
        for &t in ToastCompression::ALL {
            assert_eq!(ToastCompression::from_setting(t.setting()), Some(t));
            assert!(t.server_method().info().server);
        }
        assert_eq!(ToastCompression::from_attcompression(b'l'), Some(ToastCompression::Lz4));
        assert_eq!(ToastCompression::from_attcompression(0), None);
        for &t in ToastCompression::ALL {
            assert_eq!(ToastCompression::from_attcompression(t.attcompression()), Some(t));
        }
    }
}
