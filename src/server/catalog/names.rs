//! Names as SQL text. One function quotes every identifier compresslab writes, whether into its
//! own queries or into statements it prints for a DBA to run: PostgreSQL's `quote_identifier`
//! (which knows the keywords), except for a name holding a character that may end or split a
//! line, which becomes a `U&"..."` identifier with that character escaped
//! ([`compresslab_core::sql_text`]), so a printed statement is one line whatever the name.

use std::ffi::{CStr, CString};

use compresslab_core::sql_text::{has_line_breaks, string_literal, unicode_identifier};
use compresslab_core::CodecError;
use pgrx::pg_sys;

use crate::errors::raise;

/// `ident` quoted as an SQL identifier when it needs to be; always on one line.
pub fn quote_identifier(ident: &str) -> String {
    if has_line_breaks(ident) {
        return unicode_identifier(ident);
    }
    server_quote(ident)
}

/// PostgreSQL's `quote_identifier` alone.
fn server_quote(ident: &str) -> String {
    let c = CString::new(ident).unwrap_or_else(|_| raise(CodecError::invalid("a name contains a NUL byte")));
    // SAFETY: quote_identifier returns the input or a palloc'd, NUL-terminated copy.
    unsafe { CStr::from_ptr(pg_sys::quote_identifier(c.as_ptr())) }.to_string_lossy().into_owned()
}

/// `schema.name`, each part quoted by [`quote_identifier`].
pub fn qualified_name(schema: &str, name: &str) -> String {
    format!("{}.{}", quote_identifier(schema), quote_identifier(name))
}

/// A relation's schema and name from the catalogue; None for an OID no relation has now.
fn catalog_names(oid: pg_sys::Oid) -> Option<(String, String)> {
    // SAFETY: catalog lookups that return NULL for an OID no relation (or namespace) has.
    let (rel, schema) =
        unsafe { (pg_sys::get_rel_name(oid), pg_sys::get_namespace_name(pg_sys::get_rel_namespace(oid))) };
    if rel.is_null() || schema.is_null() {
        return None;
    }
    // SAFETY: both are NUL-terminated palloc'd names, checked non-NULL above.
    let text = |s: *mut std::ffi::c_char| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    Some((text(schema), text(rel)))
}

/// A relation's `schema.name` as an SQL string literal a `regclass` argument reads back as the
/// relation: each part quoted by the server's `quote_identifier` alone (`regclass` input does
/// not read `U&"..."`), the literal escaping any line-breaking character
/// ([`compresslab_core::sql_text::string_literal`]), so it is one line whatever the names.
pub fn regclass_literal(oid: pg_sys::Oid) -> Option<String> {
    let (schema, rel) = catalog_names(oid)?;
    Some(string_literal(&format!("{}.{}", server_quote(&schema), server_quote(&rel))))
}

/// A relation's `schema.name` quoted, from the catalogue; None for an OID no relation has now.
pub fn relation_name(oid: pg_sys::Oid) -> Option<String> {
    catalog_names(oid).map(|(schema, rel)| qualified_name(&schema, &rel))
}

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use compresslab_core::rng::SeededRng;
    use compresslab_core::sql_text::has_line_breaks;
    use pgrx::prelude::*;

    use super::quote_identifier;

    /// Characters a hostile role puts in a name to break out of a printed statement.
    const HOSTILE: &[&str] = &[
        "\n", "\r", "\t", "\u{b}", "\u{c}", "\u{1b}", "\u{7f}", "\u{85}", "\u{2028}", "\u{2029}", "\"", "\\", ";",
        "--", "$$", "\\!", "'", " ", "é", "名", "😀", "a", "Z", "_", "0", "select", "user",
    ];

    /// A generated name of at most 63 bytes (longer ones the server truncates).
    fn hostile_name(rng: &mut SeededRng) -> String {
        let mut name = String::new();
        for _ in 0..1 + rng.below(12) {
            let part = HOSTILE[rng.below(HOSTILE.len() as u64) as usize];
            if name.len() + part.len() > 63 {
                break;
            }
            name.push_str(part);
        }
        name
    }

    #[pg_test]
    fn quoted_names_are_one_line_and_parse_back() {
        let mut rng = SeededRng::new(20261204);
        let names = (0..400)
            .map(|_| hostile_name(&mut rng))
            .chain(["user", "Upper", "a b", "t\nALTER ROLE r SUPERUSER; --"].map(String::from));
        for name in names {
            let statement = format!("SELECT 1 AS {}", quote_identifier(&name));
            assert!(!has_line_breaks(&statement), "{statement:?} spans lines");
            // The server's own parser reads the quoted name back as the name.
            let parsed = Spi::connect(|client| client.select(&statement, None, &[]).unwrap().column_name(1).unwrap());
            assert_eq!(parsed, name, "{statement:?}");
        }
    }
}
