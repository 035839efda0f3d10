//! Links PostgreSQL 15's own pglz (`pglz_compress`, `pglz_decompress`, the two exported
//! strategies) from the Debian package's static `libpgcommon.a`, for the targets that compare
//! the Rust codec with the C one. The archive's `pg_lzcompress.o` needs only memcpy, memset and
//! memcmp, so `libpgport.a` is not needed. `PG_LIBDIR` overrides the folder.
fn main() {
    let dir = std::env::var("PG_LIBDIR").unwrap_or_else(|_| "/usr/lib/postgresql/15/lib".to_string());
    let archive = std::path::Path::new(&dir).join("libpgcommon.a");
    if !archive.exists() {
        panic!(
            "{} not found: install postgresql-server-dev-15 (or set PG_LIBDIR to the folder holding libpgcommon.a)",
            archive.display()
        );
    }
    println!("cargo:rerun-if-env-changed=PG_LIBDIR");
    println!("cargo:rerun-if-changed={}", archive.display());
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=static=pgcommon");
}
