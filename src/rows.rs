//! Result rows: one source of truth for each shape. The core defines each row as a struct
//! (`BenchRow`, `ChecksumRow`, `SpillRow`, `FpiRow`, `ToastRow`); `sql/result_types.sql`
//! declares the matching composite type; this module turns any such struct into a tuple of
//! its type generically, through the struct's serde field names, and refuses to produce a row
//! when a name, an order or a type disagrees — so the two cannot drift apart unnoticed.

use std::num::NonZeroUsize;

use pgrx::datum::Interval;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;
use serde::Serialize;
use serde_json::Value;

use crate::errors::{report, update_not_run};

extension_sql_file!("../sql/result_types.sql", name = "result_types", bootstrap);

/// A tuple of one of the result types (signatures name the type with `composite_type!`).
pub type Row = PgHeapTuple<'static, AllocatedByRust>;

fn mismatch(type_name: &str, detail: String) -> ! {
    match crate::server::catalog::installed_version() {
        // the SQL of another release on this library: not a fault, an update not yet run
        Some(version) if version != env!("CARGO_PKG_VERSION") => {
            update_not_run(&version, &format!("the result type {type_name} is the old one"))
        }
        _ => report(
            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            format!("compresslab's result type {type_name} does not match its row: {detail}"),
            Some("The installed SQL and the library disagree; reinstall the extension (ALTER EXTENSION compresslab UPDATE)."),
        ),
    }
}

/// `row` as a tuple of the composite type `type_name`.
pub fn to_composite<T: Serialize>(type_name: &str, row: &T) -> Row {
    let value = serde_json::to_value(row).unwrap_or_else(|e| mismatch(type_name, e.to_string()));
    let Value::Object(fields) = value else { mismatch(type_name, "the row is not a struct".into()) };
    let mut tuple = PgHeapTuple::new_composite_type(type_name).unwrap_or_else(|e| mismatch(type_name, e.to_string()));
    let columns: Vec<(NonZeroUsize, pg_sys::Oid, String)> =
        tuple.attributes().map(|(i, att)| (i, att.atttypid, att.name().to_string())).collect();
    if columns.len() != fields.len() {
        mismatch(type_name, format!("{} columns, {} fields", columns.len(), fields.len()));
    }
    for ((index, typid, column), (field, v)) in columns.into_iter().zip(fields) {
        if column != field {
            mismatch(type_name, format!("column {index} is {column}, the field is {field}"));
        }
        let set = match typid {
            pg_sys::INT4OID => tuple.set_by_index(index, v.as_i64().map(|n| n as i32)),
            pg_sys::INT8OID => tuple.set_by_index(index, v.as_i64()),
            pg_sys::FLOAT8OID => tuple.set_by_index(index, v.as_f64()),
            pg_sys::BOOLOID => tuple.set_by_index(index, v.as_bool()),
            pg_sys::TEXTOID => tuple.set_by_index(index, v.as_str().map(str::to_string)),
            // seconds, as an interval of hours and days
            pg_sys::INTERVALOID => tuple.set_by_index(
                index,
                v.as_f64().map(|seconds| Interval::from_micros((seconds * 1e6).round() as i64).justify_hours()),
            ),
            other => mismatch(type_name, format!("column {column} has type oid {other:?}, which rows do not use")),
        };
        set.unwrap_or_else(|e| mismatch(type_name, format!("column {column}: {e}")));
        if !v.is_null() && matches!(typid, pg_sys::INT4OID | pg_sys::INT8OID) && v.as_i64().is_none() {
            mismatch(type_name, format!("field {column} is not an integer"));
        }
    }
    tuple
}

/// Rows as a set of tuples of `type_name`.
pub fn set_of<T: Serialize>(type_name: &str, rows: &[T]) -> SetOfIterator<'static, Row> {
    SetOfIterator::new(rows.iter().map(|r| to_composite(type_name, r)).collect::<Vec<_>>())
}
