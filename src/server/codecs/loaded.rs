//! Symbols of the shared libraries the server has already loaded (liblz4, libzstd), found
//! without loading anything: the server's own C codecs are reached through them.

use std::ffi::{c_void, CStr};
use std::sync::Mutex;

use compresslab_core::error::Result;
use compresslab_core::CodecError;

/// Symbols found so far in this backend: (library, symbol, address). A server wrapper
/// (`server_lz4_decompress`, `server_zstd_decompress`, ...) looks its symbols up on every call,
/// two for liblz4 and thirteen for libzstd; `dlopen` and `dlsym` each time took a measurable
/// part of a call on small values, a cost the server's own call of its library does not have.
static FOUND: Mutex<Vec<(&'static CStr, &'static CStr, usize)>> = Mutex::new(Vec::new());

/// Find `symbol` in the already-loaded shared library `library`, once per backend: a library
/// the server has mapped stays mapped, so its symbols keep their addresses.
pub fn loaded_symbol(library: &'static CStr, symbol: &'static CStr) -> Result<*mut c_void> {
    let mut found = FOUND.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&(_, _, addr)) = found.iter().find(|(l, s, _)| *l == library && *s == symbol) {
        return Ok(addr as *mut c_void);
    }
    let ptr = look_up(library, symbol)?;
    found.push((library, symbol, ptr as usize));
    Ok(ptr)
}

fn look_up(library: &CStr, symbol: &CStr) -> Result<*mut c_void> {
    // SAFETY: RTLD_NOLOAD only returns a handle to a library that is already mapped.
    let handle = unsafe { libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    if handle.is_null() {
        return Err(CodecError::invalid(format!(
            "the server has not loaded {}; its C codec cannot be measured",
            library.to_string_lossy()
        )));
    }
    // SAFETY: handle is valid; dlsym returns null if the symbol is missing.
    let ptr = unsafe { libc::dlsym(handle, symbol.as_ptr()) };
    if ptr.is_null() {
        return Err(CodecError::invalid(format!(
            "{} has no symbol {}",
            library.to_string_lossy(),
            symbol.to_string_lossy()
        )));
    }
    Ok(ptr)
}
