//! Turning core errors into PostgreSQL ERRORs with the SQLSTATE a DBA can act on.

use compresslab_core::CodecError;
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

/// Raise `err` as an ERROR: corrupt data → `data_corrupted` (XX001), bad method, level or
/// option → `invalid_parameter_value` (22023), over a size limit → `program_limit_exceeded`
/// (54000), an allocation that failed → `out_of_memory` (53200).
pub fn raise(err: CodecError) -> ! {
    let code = match &err {
        CodecError::Corrupt(_) => PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        CodecError::InvalidParameter(_) => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        CodecError::TooLarge(_) => PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
        CodecError::OutOfMemory(_) => PgSqlErrorCode::ERRCODE_OUT_OF_MEMORY,
    };
    report(code, err.message().to_string(), None)
}

/// Unwrap a core result, raising its error as an ERROR.
pub trait OrRaise<T> {
    fn or_raise(self) -> T;
}

impl<T> OrRaise<T> for Result<T, CodecError> {
    fn or_raise(self) -> T {
        self.unwrap_or_else(|e| raise(e))
    }
}

/// An `int` raw-size argument as a usize, refusing negatives and sizes above
/// `compresslab.max_decompressed_size` before anything is allocated.
pub fn checked_raw_size(raw_size: i32) -> usize {
    if raw_size < 0 {
        raise(CodecError::invalid(format!("raw_size must not be negative, got {raw_size}")));
    }
    let limit = crate::gucs::max_decompressed_size();
    if raw_size as usize > limit {
        raise(CodecError::too_large(format!(
            "raw_size {raw_size} is more than compresslab.max_decompressed_size ({limit} bytes)"
        )));
    }
    raw_size as usize
}

/// The value of a required argument; NULL is `null_value_not_allowed` (22004) naming it.
pub fn required<T>(value: Option<T>, what: &str) -> T {
    value.unwrap_or_else(|| {
        report(PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED, format!("{what} must not be NULL"), None)
    })
}

/// Raise an ERROR with any SQLSTATE, and a hint when there is one to give.
pub fn report(code: PgSqlErrorCode, message: String, hint: Option<&str>) -> ! {
    let mut report = ErrorReport::new(code, message, "compresslab");
    if let Some(hint) = hint {
        report = report.set_hint(hint);
    }
    report.report(PgLogLevel::ERROR);
    unreachable!("ERROR does not return")
}
