//! The one error type of the core. Each variant maps to one SQLSTATE in the extension.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodecError {
    /// Compressed input is malformed (SQLSTATE `data_corrupted`, XX001).
    Corrupt(String),
    /// An unknown method, level, strategy or option (SQLSTATE `invalid_parameter_value`, 22023).
    InvalidParameter(String),
    /// A size above a configured or hard limit (SQLSTATE `program_limit_exceeded`, 54000).
    TooLarge(String),
    /// A buffer could not be allocated (SQLSTATE `out_of_memory`, 53200). Never "corrupt":
    /// running out of memory says nothing about the data.
    OutOfMemory(String),
}

impl CodecError {
    pub fn corrupt(msg: impl Into<String>) -> Self {
        CodecError::Corrupt(msg.into())
    }
    pub fn invalid(msg: impl Into<String>) -> Self {
        CodecError::InvalidParameter(msg.into())
    }
    pub fn too_large(msg: impl Into<String>) -> Self {
        CodecError::TooLarge(msg.into())
    }
    pub fn out_of_memory(msg: impl Into<String>) -> Self {
        CodecError::OutOfMemory(msg.into())
    }
    /// "`what` declares `declared` bytes, more than the limit of `limit`": the one wording of
    /// every refusal of a declared or requested size above a limit.
    pub fn over_limit(what: &str, declared: u64, limit: usize) -> Self {
        CodecError::TooLarge(format!(
            "{what} declares {declared} decompressed bytes, more than the limit of {limit} \
             (compresslab.max_decompressed_size)"
        ))
    }
    pub fn message(&self) -> &str {
        match self {
            CodecError::Corrupt(m)
            | CodecError::InvalidParameter(m)
            | CodecError::TooLarge(m)
            | CodecError::OutOfMemory(m) => m,
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for CodecError {}

pub type Result<T> = std::result::Result<T, CodecError>;

/// A zero-filled buffer of `len` bytes, allocated fallibly: an allocation failure is
/// [`CodecError::OutOfMemory`] instead of an abort of the whole process (a PostgreSQL backend
/// must raise an ERROR, never die).
///
/// Allocated zeroed (`calloc`), not zero-filled after: a large buffer comes straight from the
/// kernel's zero pages, so nothing touches its memory before its user does. The lab's arenas
/// of a 400 MB slice took a second of zero-filling, during which no interrupt was checked.
pub fn try_zeroed(len: usize, what: &str) -> Result<Vec<u8>> {
    let Ok(layout) = std::alloc::Layout::array::<u8>(len) else {
        return Err(out_of_memory(len, what));
    };
    if len == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: the layout's size is len > 0.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(out_of_memory(len, what));
    }
    // SAFETY: ptr comes from the global allocator with the layout of `len` bytes (align 1), and
    // alloc_zeroed initialised all of them, so length and capacity `len` are both right.
    Ok(unsafe { Vec::from_raw_parts(ptr, len, len) })
}

fn out_of_memory(len: usize, what: &str) -> CodecError {
    CodecError::out_of_memory(format!("out of memory: could not allocate {len} bytes for {what}"))
}

/// An empty buffer with room for `capacity` bytes, allocated fallibly (see [`try_zeroed`]).
pub fn try_with_capacity(capacity: usize, what: &str) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    try_reserve(&mut v, capacity, what)?;
    Ok(v)
}

/// A copy of `data`, allocated fallibly (see [`try_zeroed`]).
pub fn try_copy(data: &[u8], what: &str) -> Result<Vec<u8>> {
    let mut v = try_with_capacity(data.len(), what)?;
    v.extend_from_slice(data);
    Ok(v)
}

/// Resize `v` to `len` bytes (new ones zero), allocating fallibly (see [`try_zeroed`]).
pub fn try_resize(v: &mut Vec<u8>, len: usize, what: &str) -> Result<()> {
    if len > v.len() {
        try_reserve(v, len - v.len(), what)?;
    }
    v.resize(len, 0);
    Ok(())
}

/// Make room for `additional` more bytes in `v`, fallibly (see [`try_zeroed`]).
pub fn try_reserve(v: &mut Vec<u8>, additional: usize, what: &str) -> Result<()> {
    v.try_reserve(additional).map_err(|_| out_of_memory(v.len() + additional, what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_allocations_are_errors_not_aborts() {
        let err = try_zeroed(usize::MAX / 2, "a test buffer").unwrap_err();
        assert!(matches!(&err, CodecError::OutOfMemory(m) if m.contains("a test buffer")), "{err:?}");
        assert_eq!(try_zeroed(3, "x").unwrap(), vec![0, 0, 0]);
        assert!(try_with_capacity(100, "x").unwrap().capacity() >= 100);
    }
}
