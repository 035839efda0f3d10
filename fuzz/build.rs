//! Links PostgreSQL 15's own pglz (`pglz_compress`, `pglz_decompress`, the two exported
//! strategies) from the Debian package's static `libpgcommon.a`, for the targets that compare
//! the Rust codec with the C one. The archive's `pg_lzcompress.o` needs only memcpy, memset and
//! memcmp, so `libpgport.a` is not needed. `PG_LIBDIR` overrides the folder.
//!
//! Also links the system's liblz4 (`liblz4.so.1`, which PostgreSQL 15 itself links, so it is
//! there wherever the server is; `LZ4_LIB` overrides the path) for the target that compares
//! our LZ4 encoder with liblz4's. No development package is needed: the library is named by
//! its path.
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

    let lz4 = std::env::var("LZ4_LIB").unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu/liblz4.so.1".to_string());
    if !std::path::Path::new(&lz4).exists() {
        panic!("{lz4} not found: install liblz4-1 (PostgreSQL 15 depends on it), or set LZ4_LIB to the library's path");
    }
    println!("cargo:rerun-if-env-changed=LZ4_LIB");
    println!("cargo:rustc-link-arg={lz4}");
}
