//! The versions of the C libraries the server has loaded (liblz4, libzstd), asked of the
//! libraries themselves (`LZ4_versionNumber`, `ZSTD_versionNumber`), and the file each was
//! loaded from.

use compresslab_core::pg_compression::{ToastCompression, WalCompression};
use std::ffi::{c_void, CStr};

use super::loaded::loaded_symbol;

/// A library the server loaded: the version it reports and the file it came from.
pub struct LoadedLibrary {
    /// `*_versionNumber()`: major * 10000 + minor * 100 + patch.
    pub number: u32,
    /// The file, symbolic links resolved (Debian's is named after the full version).
    pub file: String,
}

type VersionFn = unsafe extern "C" fn() -> u32;

/// `symbol` (a `unsigned (*)(void)` version function) of the already-loaded `library`; None
/// when the server has not loaded it.
fn loaded_library(library: &'static CStr, symbol: &'static CStr) -> Option<LoadedLibrary> {
    let ptr = loaded_symbol(library, symbol).ok()?;
    // SAFETY: LZ4_versionNumber and ZSTD_versionNumber take nothing and return an unsigned
    // int (lz4.h, zstd.h); a function pointer has a data pointer's size on PostgreSQL's platforms.
    let number = unsafe { std::mem::transmute::<*mut c_void, VersionFn>(ptr)() };
    Some(LoadedLibrary { number, file: file_of(ptr).unwrap_or_else(|| library.to_string_lossy().into_owned()) })
}

/// The file the code at `ptr` was loaded from, symbolic links resolved.
fn file_of(ptr: *mut c_void) -> Option<String> {
    // SAFETY: Dl_info is plain data; dladdr fills it for an address inside a loaded object and
    // returns 0 otherwise.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: ptr is a symbol's address; info is a valid Dl_info to write.
    if unsafe { libc::dladdr(ptr, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the dynamic linker.
    let name = unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned();
    Some(std::fs::canonicalize(&name).map(|p| p.display().to_string()).unwrap_or(name))
}

/// The server's liblz4, if it has loaded one.
pub fn server_lz4() -> Option<LoadedLibrary> {
    loaded_library(c"liblz4.so.1", c"LZ4_versionNumber")
}

/// The server's libzstd, if it has loaded one.
pub fn server_zstd() -> Option<LoadedLibrary> {
    loaded_library(c"libzstd.so.1", c"ZSTD_versionNumber")
}

/// Whether the server was built with what `wal_compression = setting` needs (lz4 and zstd
/// need their libraries loaded; the server refuses those settings otherwise). The one place
/// that asks: TOAST's lz4 needs the same liblz4 ([`toast_built_with`]).
pub fn wal_built_with(setting: WalCompression) -> bool {
    match setting {
        WalCompression::Lz4 => server_lz4().is_some(),
        WalCompression::Zstd => server_zstd().is_some(),
        WalCompression::Off | WalCompression::Pglz => true,
    }
}

/// Whether the server was built with TOAST compression `method`.
pub fn toast_built_with(method: ToastCompression) -> bool {
    match method {
        ToastCompression::Lz4 => wal_built_with(WalCompression::Lz4),
        ToastCompression::Pglz => true,
    }
}
