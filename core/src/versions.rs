//! Versions of the code compiled into compresslab: the libzstd the zstd crate bundles (asked at
//! run time, `ZSTD_versionNumber`) and the crates' versions as `Cargo.lock` pinned them when
//! this was built.

/// The workspace's lock file as it was at build time.
const CARGO_LOCK: &str = include_str!("../../Cargo.lock");

/// The version `Cargo.lock` pinned for the crate `name`, if it is there.
pub fn locked_version(name: &str) -> Option<&'static str> {
    let mut lines = CARGO_LOCK.lines();
    let wanted = format!("name = \"{name}\"");
    lines.find(|l| *l == wanted)?;
    lines.next()?.strip_prefix("version = \"")?.strip_suffix('"')
}

/// A libzstd or liblz4 version number (`major * 10000 + minor * 100 + patch`) as text.
pub fn dotted(number: u32) -> String {
    format!("{}.{}.{}", number / 10_000, number / 100 % 100, number % 100)
}

/// The bundled libzstd's `ZSTD_versionNumber`.
pub fn zstd_version_number() -> u32 {
    zstd::zstd_safe::version_number()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locked_versions_and_the_bundled_zstd() {
        let lz4_flex = locked_version("lz4_flex").unwrap();
        assert!(lz4_flex.starts_with("0.11."), "{lz4_flex}");
        assert_eq!(locked_version("no-such-crate"), None);
        // zstd-sys is versioned after the libzstd it bundles: "2.1.3+zstd.1.5.7".
        let sys = locked_version("zstd-sys").unwrap();
        assert_eq!(sys.split("+zstd.").nth(1), Some(dotted(zstd_version_number()).as_str()), "{sys}");
        assert_eq!(zstd::zstd_safe::version_string(), dotted(zstd_version_number()));
        assert_eq!(dotted(10904), "1.9.4");
    }
}
