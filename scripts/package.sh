#!/usr/bin/env bash
# A binary package of compresslab for one PostgreSQL major N, for a machine without Rust:
#   target/compresslab-<version>-pgN-<arch>.tar.gz
# holding, with paths relative to / (install with: sudo tar -xzf FILE -C /),
#   usr/lib/postgresql/15/lib/compresslab.so (for 15; pg_config --pkglibdir in general)
#   usr/share/postgresql/15/extension/compresslab.control, compresslab--<version>.sql,
#     the update scripts compresslab--X--Y.sql and the frozen install scripts of earlier
#     releases compresslab--X.sql (so CREATE EXTENSION ... VERSION 'X' works too).
# `cargo pgrx package` builds (in release mode, reusing the build of `cargo pgrx install
# --release`) and lays out the tree in target/package/; this script puts the library built with
# LTO in it (scripts/cluster.sh's build_lto_library), adds the frozen install scripts and packs
# the regular files only (root-owned, sorted, dated by the last commit), so extracting over /
# creates missing directories but never changes existing ones.
# PG_CONFIG (default /usr/bin/pg_config) selects the PostgreSQL installation. Prints the
# tarball's path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-/usr/bin/pg_config}
source scripts/cluster.sh

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
pg_major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
arch=$(uname -m)
tree="$COMPRESSLAB_ROOT/target/package/compresslab-pg$pg_major"
tarball="$COMPRESSLAB_ROOT/target/compresslab-$version-pg$pg_major-$arch.tar.gz"

rm -rf "$tree"
mkdir -p "$tree"
echo "package: cargo pgrx package (release) into target/package/"
cargo pgrx package --pg-config "$PG_CONFIG" --out-dir "$tree" >"$COMPRESSLAB_ROOT/target/package.log" 2>&1 ||
  { tail -50 "$COMPRESSLAB_ROOT/target/package.log"; exit 1; }
# The library with LTO, as install_extension installs it (see build_lto_library).
lib=$(build_lto_library) || exit 1
install -m 755 "$lib" "$tree$("$PG_CONFIG" --pkglibdir)/compresslab.so"
install_frozen_sql "$tree$("$PG_CONFIG" --sharedir)/extension"

mtime=$(git log -1 --format=%ct 2>/dev/null || date +%s)
(cd "$tree" && find . -type f -printf '%P\n' | LC_ALL=C sort) |
  tar -C "$tree" --owner=0 --group=0 --numeric-owner --mode=go-w --mtime="@$mtime" --no-recursion \
    -cf - -T - | gzip -n >"$tarball.tmp"
mv "$tarball.tmp" "$tarball"
tar -tzf "$tarball" | sed 's/^/package:   /'
echo "package: $tarball"
