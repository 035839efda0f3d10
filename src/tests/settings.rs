//! The settings (`compresslab.*` GUCs): what they steer and the values they refuse; and
//! `capabilities()`, every check of the server's side passing.

use pgrx::prelude::*;

#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn gucs_steer_compress_and_are_range_checked() {
        let method = |q: &str| Spi::get_one::<String>(q).unwrap().unwrap();
        let probe = "SELECT method FROM compresslab.compression_info(compresslab.compress(convert_to(repeat('guc ', 100), 'UTF8')))";
        assert_eq!(method(probe), "lz4");
        Spi::run("SET compresslab.method = 'zstd'").unwrap();
        assert_eq!(method(probe), "zstd");
        Spi::run("SET compresslab.method = 'pglz'").unwrap();
        assert_eq!(method(probe), "pglz");
        Spi::run("RESET compresslab.method").unwrap();
        assert_eq!(method(probe), "lz4");
        Spi::run("SET compresslab.zstd_level = 19").unwrap();
        assert_eq!(Spi::get_one::<String>("SHOW compresslab.zstd_level").unwrap().as_deref(), Some("19"));
    }

    /// PostgreSQL 18 and 19 list a loaded library's magic block: ours names compresslab and
    /// Cargo.toml's version.
    #[cfg(any(feature = "pg18", feature = "pg19"))]
    #[pg_test]
    fn magic_block_names_the_library_and_its_version() {
        let module = Spi::get_one::<String>(
            "SELECT module_name || ' ' || version FROM pg_get_loaded_modules() WHERE file_name LIKE 'compresslab%'",
        );
        assert_eq!(module.unwrap().as_deref(), Some(concat!("compresslab ", env!("CARGO_PKG_VERSION"))));
    }

    #[pg_test(error = "23 is outside the valid range for parameter \"compresslab.zstd_level\" (-131072 .. 22)")]
    fn zstd_level_setting_is_range_checked() {
        Spi::run("SET compresslab.zstd_level = 23").unwrap();
    }

    #[pg_test(error = "invalid value for parameter \"compresslab.method\": \"snappy\"")]
    fn method_setting_rejects_unknown_methods() {
        Spi::run("SET compresslab.method = 'snappy'").unwrap();
    }

    #[pg_test(
        error = "compressed value declares 4000 decompressed bytes, more than the limit of 1000 (compresslab.max_decompressed_size)"
    )]
    fn max_decompressed_size_refuses_large_values() {
        Spi::run("SET compresslab.max_decompressed_size = 1000").unwrap();
        Spi::run(
            "SELECT compresslab.decompress(compresslab.compress(convert_to(repeat('abcd', 1000), 'UTF8'), 'zstd'))",
        )
        .unwrap();
    }

    #[pg_test]
    fn capabilities_all_pass() {
        let failing = Spi::get_one::<i64>("SELECT count(*) FROM compresslab.capabilities() WHERE NOT ok").unwrap();
        assert_eq!(failing, Some(0));
        let rows = Spi::get_one::<i64>("SELECT count(*) FROM compresslab.capabilities()").unwrap();
        assert_eq!(rows, Some(10));
    }
}
