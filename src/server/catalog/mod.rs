//! The catalog and SPI: internal queries with one failure path, relations named and quoted,
//! the privileges a query would check.

pub mod names;
pub mod privileges;
pub mod relations;
pub mod spi;
