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

/// The ERROR for the SQL of another release calling this library, `installed` being the SQL's
/// version: `ALTER EXTENSION compresslab UPDATE` has not run yet. `what` says what is stale.
pub fn update_not_run(installed: &str, what: &str) -> ! {
    report(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("compresslab's SQL is version {installed}, its library {}: {what}", env!("CARGO_PKG_VERSION")),
        Some("Run ALTER EXTENSION compresslab UPDATE in this database."),
    )
}

/// A first, virtual argument of a function whose SQL declaration gained arguments since an
/// older version: it checks, before any argument is read, that the SQL calling the library
/// passes `N` of them. A function still declared by an older version's SQL (the package
/// installed, `ALTER EXTENSION compresslab UPDATE` not yet run) passes fewer, and would
/// otherwise fail reading the missing one with an internal error.
pub struct SqlArguments<const N: usize>;

// SAFETY: a virtual argument reads no datum: it only reads fcinfo, as pg_sys::FunctionCallInfo's
// own (virtual) ArgAbi does.
unsafe impl<'fcx, const N: usize> pgrx::callconv::ArgAbi<'fcx> for SqlArguments<N> {
    unsafe fn unbox_arg_unchecked(arg: pgrx::callconv::Arg<'_, 'fcx>) -> Self {
        // SAFETY: the caller's contract; a virtual argument is the call's fcinfo.
        let fcinfo = unsafe { <pg_sys::FunctionCallInfo as pgrx::callconv::ArgAbi>::unbox_arg_unchecked(arg) };
        // SAFETY: fcinfo and its flinfo are the call's, valid for the call.
        let (nargs, oid) = unsafe { ((*fcinfo).nargs as usize, (*(*fcinfo).flinfo).fn_oid) };
        if nargs != N {
            // SAFETY: the oid of the function being called.
            let name = unsafe { pg_sys::get_func_name(oid) };
            let name = if name.is_null() {
                "this function".to_string()
            } else {
                // SAFETY: a palloc'd NUL-terminated name.
                unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned()
            };
            report(
                PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("compresslab's SQL declares {name} with {nargs} argument(s); its library expects {N}"),
                Some("The installed SQL is older than the library: run ALTER EXTENSION compresslab UPDATE."),
            );
        }
        SqlArguments
    }

    fn is_virtual_arg() -> bool {
        true
    }
}

// SAFETY: not an SQL argument (Skip), as pg_sys::FunctionCallInfo.
unsafe impl<const N: usize> pgrx::pgrx_sql_entity_graph::metadata::SqlTranslatable for SqlArguments<N> {
    const TYPE_IDENT: &'static str = concat!(module_path!(), "::SqlArguments");
    const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
        pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
    const ARGUMENT_SQL: Result<
        pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef,
        pgrx::pgrx_sql_entity_graph::metadata::ArgumentError,
    > = Ok(pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef::Skip);
    const RETURN_SQL: Result<
        pgrx::pgrx_sql_entity_graph::metadata::ReturnsRef,
        pgrx::pgrx_sql_entity_graph::metadata::ReturnsError,
    > = Ok(pgrx::pgrx_sql_entity_graph::metadata::ReturnsRef::One(
        pgrx::pgrx_sql_entity_graph::metadata::SqlMappingRef::Skip,
    ));
}
