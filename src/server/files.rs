//! Server files, read for the lab: only regular files (a FIFO or device would block the
//! backend in `open()` or `read()` beyond the reach of cancel), opened without blocking.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

use compresslab_core::error::try_with_capacity;
use compresslab_core::CodecError;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

use crate::errors::{raise, report, OrRaise};

/// Bytes read between interrupt checks.
const READ_CHUNK: u64 = 4 << 20;

/// The operating system's words for an I/O error, as PostgreSQL prints them (`%m`), without
/// Rust's "(os error N)".
pub fn os_message(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        // SAFETY: strerror returns a pointer to a NUL-terminated message for any error number.
        Some(code) => unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) }.to_string_lossy().into_owned(),
        None => e.to_string(),
    }
}

/// The file at `path`, opened for reading if it is a regular file; `Ok(None)` if it is not (a
/// FIFO, a device, a socket, a directory). Opened with `O_NONBLOCK`, so that a FIFO with no
/// writer cannot block `open()` beyond the reach of cancel, and checked with `fstat` on the
/// descriptor (a check of the path before opening would leave a race); the flag is cleared
/// before the file is returned.
pub fn open_regular(path: impl AsRef<std::path::Path>) -> std::io::Result<Option<File>> {
    let file = File::options().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(None);
    }
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns, open until `file` drops.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Some(file))
}

/// `length` bytes of the file at `path` (relative to the data directory, or absolute) from
/// `offset` (NULL length: to the end), at most `limit` bytes. Messages name the arguments as
/// `bench_file` calls them (`start_byte`, `byte_count`).
pub fn read_server_file(path: &str, offset: i64, length: Option<i64>, limit: usize) -> Vec<u8> {
    let io_error = |e: std::io::Error| -> ! {
        let code = match e.kind() {
            std::io::ErrorKind::NotFound => PgSqlErrorCode::ERRCODE_UNDEFINED_FILE,
            std::io::ErrorKind::PermissionDenied => PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            _ => PgSqlErrorCode::ERRCODE_IO_ERROR,
        };
        report(code, format!("could not read file \"{path}\": {}", os_message(&e)), None)
    };
    if offset < 0 || length.is_some_and(|l| l < 0) {
        raise(CodecError::invalid("start_byte and byte_count must not be negative"));
    }
    let Some(mut file) = open_regular(path).unwrap_or_else(|e| io_error(e)) else {
        report(
            PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
            format!("\"{path}\" is not a regular file"),
            Some("Only regular files (relation segments, WAL segments, …) can be benchmarked."),
        );
    };
    let meta = file.metadata().unwrap_or_else(|e| io_error(e));
    // Past the end, the seek itself may fail (EINVAL beyond the file system's largest offset).
    if offset as u64 > meta.len() {
        raise(CodecError::invalid(format!(
            "start_byte {offset} is past the end of \"{path}\", which has {} bytes",
            meta.len()
        )));
    }
    let wanted = length.map(|l| l as u64).unwrap_or(meta.len().saturating_sub(offset as u64));
    if wanted > limit as u64 {
        raise(CodecError::too_large(match length {
            Some(n) => format!("byte_count {n} is too large: the lab reads at most {limit} bytes at once"),
            None => format!(
                "\"{path}\" has {wanted} bytes from start_byte {offset} to its end, more than the lab reads at once; \
                 give byte_count (at most {limit})"
            ),
        }));
    }
    file.seek(SeekFrom::Start(offset as u64)).unwrap_or_else(|e| io_error(e));
    let mut data = try_with_capacity(wanted as usize, "the file's bytes").or_raise();
    loop {
        check_for_interrupts!();
        let want = (wanted - data.len() as u64).min(READ_CHUNK);
        let got = (&mut file).take(want).read_to_end(&mut data).unwrap_or_else(|e| io_error(e));
        if got == 0 || data.len() as u64 >= wanted {
            return data;
        }
    }
}
