//! The catalog and SPI: internal queries with one failure path, relations named and quoted,
//! the privileges a query would check.

pub mod names;
pub mod privileges;
pub mod relations;
pub mod spi;

/// The version of compresslab's SQL installed in this database (`pg_extension.extversion`),
/// None when it cannot be read.
pub fn installed_version() -> Option<String> {
    spi::select_one::<String>(
        "SELECT extversion FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'compresslab'",
        &[],
    )
    .ok()
    .flatten()
}
