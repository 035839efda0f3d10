//! Symbols of the shared libraries the server has already loaded (liblz4, libzstd), found
//! without loading anything: the server's own C codecs are reached through them.

use std::ffi::{c_void, CStr};

use compresslab_core::error::Result;
use compresslab_core::CodecError;

/// Find `symbol` in the already-loaded shared library `library`.
pub fn loaded_symbol(library: &CStr, symbol: &CStr) -> Result<*mut c_void> {
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
