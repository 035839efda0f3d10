#!/usr/bin/env bash
# Binary packages of compresslab for one PostgreSQL major N, for a machine without Rust:
#   target/postgresql-N-compresslab_<version>-1_<arch>.deb   a Debian package (apt install ./FILE)
#   target/compresslab-<version>-pgN-<arch>.tar.gz          a tarball (sudo tar -xzf FILE -C /)
# Both hold the library compresslab.so and, in the extension folder, compresslab.control,
# compresslab--<version>.sql, the update scripts compresslab--X--Y.sql and the frozen install
# scripts of earlier releases compresslab--X.sql (so CREATE EXTENSION ... VERSION 'X' works too).
# The tarball's paths are PG_CONFIG's (pg_config --pkglibdir and --sharedir, relative to /);
# the Debian package's are those of Debian's server packages, /usr/lib/postgresql/N/lib and
# /usr/share/postgresql/N/extension, whatever PG_CONFIG says: it is for a server installed from
# Debian's (or the PostgreSQL apt repository's) postgresql-N, which it depends on, with the
# libraries the library links (dpkg-shlibdeps). Its library is stripped as Debian's are (same
# build ID as the tarball's); its documentation folder holds the copyright file (the crates
# linked into the library with their licences), changelog.Debian.gz and the upstream CHANGELOG.
# `cargo pgrx package` builds (in release mode, reusing the build of `cargo pgrx install
# --release`) and lays out the tree in target/package/; this script puts the library built with
# LTO in it (scripts/cluster.sh's build_lto_library), adds the frozen install scripts and packs
# the regular files only (root-owned, sorted, dated by the last commit), so extracting over /
# creates missing directories but never changes existing ones.
# PG_CONFIG (default /usr/bin/pg_config) selects the PostgreSQL installation. Prints the
# tarball's path on its last line, the Debian package's on the line before.
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

# The Debian package, staged as debhelper would (target/package/deb-pgN/debian/PACKAGE, beside
# an empty debian/control, where dpkg-shlibdeps looks).
deb_name=postgresql-$pg_major-compresslab
deb_version=$version-1
deb_arch=$(dpkg --print-architecture)
deb="$COMPRESSLAB_ROOT/target/${deb_name}_${deb_version}_$deb_arch.deb"
deb_work="$COMPRESSLAB_ROOT/target/package/deb-pg$pg_major"
stage="$deb_work/debian/$deb_name"
doc="$stage/usr/share/doc/$deb_name"
maintainer=$(python3 -c 'import json; print(json.load(open("META.json"))["maintainer"][0])')
rm -rf "$deb_work"
mkdir -p "$stage/DEBIAN" "$stage/usr/lib/postgresql/$pg_major/lib" "$stage/usr/share/postgresql/$pg_major/extension" "$doc"
: >"$deb_work/debian/control"
install -m 644 "$tree$("$PG_CONFIG" --pkglibdir)/compresslab.so" "$stage/usr/lib/postgresql/$pg_major/lib/"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$stage/usr/lib/postgresql/$pg_major/lib/compresslab.so"
install -m 644 "$tree$("$PG_CONFIG" --sharedir)"/extension/* "$stage/usr/share/postgresql/$pg_major/extension/"
# The upstream changelog, and Debian's changelog of this package (one entry per build).
gzip -9n <CHANGELOG.md >"$doc/changelog.gz"
{
  echo "$deb_name ($deb_version) unstable; urgency=medium"
  echo
  echo "  * compresslab $version for PostgreSQL $pg_major, built from commit"
  echo "    $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown) by scripts/package.sh. What changed: changelog.gz."
  echo
  echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$mtime")"
} | gzip -9n >"$doc/changelog.Debian.gz"
# Machine-readable copyright (DEP-5): compresslab under the PostgreSQL Licence, and the Rust
# crates statically linked into the library with their licences, as cargo knows them.
crates=$(cargo tree --offline -q -e normal,no-proc-macro --no-default-features --features "pg$pg_major" -p compresslab \
  --prefix none --format '{p}: {l}' | sed 's/ (\*)$//' | grep -v '^compresslab' | LC_ALL=C sort -u)
{
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: compresslab"
  echo "Upstream-Contact: $maintainer"
  echo "Comment: The library statically links these Rust crates, each under its own licence:"
  sed 's/^/ /; s/^ *$/ ./' <<<"$crates"
  echo
  echo "Files: *"
  echo "Copyright: $(date -u -d "@$mtime" +%Y) compresslab maintainers"
  echo "License: PostgreSQL"
  sed 's/^/ /; s/^ *$/ ./' <<'LICENSE'
Permission to use, copy, modify, and distribute this software and its documentation for any
purpose, without fee, and without a written agreement is hereby granted, provided that the
above copyright notice and this paragraph and the following two paragraphs appear in all
copies.

IN NO EVENT SHALL THE COPYRIGHT HOLDERS BE LIABLE TO ANY PARTY FOR DIRECT, INDIRECT, SPECIAL,
INCIDENTAL, OR CONSEQUENTIAL DAMAGES, INCLUDING LOST PROFITS, ARISING OUT OF THE USE OF THIS
SOFTWARE AND ITS DOCUMENTATION, EVEN IF THE COPYRIGHT HOLDERS HAVE BEEN ADVISED OF THE
POSSIBILITY OF SUCH DAMAGE.

THE COPYRIGHT HOLDERS SPECIFICALLY DISCLAIM ANY WARRANTIES, INCLUDING, BUT NOT LIMITED TO,
THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE. THE SOFTWARE
PROVIDED HEREUNDER IS ON AN "AS IS" BASIS, AND THE COPYRIGHT HOLDERS HAVE NO OBLIGATIONS TO
PROVIDE MAINTENANCE, SUPPORT, UPDATES, ENHANCEMENTS, OR MODIFICATIONS.
LICENSE
} >"$doc/copyright"
chmod 644 "$doc"/*
shlibs=$(cd "$deb_work" && dpkg-shlibdeps -O "debian/$deb_name/usr/lib/postgresql/$pg_major/lib/compresslab.so") ||
  { echo "package: dpkg-shlibdeps failed" >&2; exit 1; }
shlibs=${shlibs#shlibs:Depends=}
[[ -n "$shlibs" ]] || { echo "package: dpkg-shlibdeps found no library dependency" >&2; exit 1; }
cat >"$stage/DEBIAN/control" <<CONTROL
Package: $deb_name
Version: $deb_version
Architecture: $deb_arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$stage" | cut -f1)
Depends: postgresql-$pg_major, $shlibs
Section: database
Priority: optional
Description: PostgreSQL $pg_major extension: compression codecs, checksums and a benchmark lab
 compresslab brings PostgreSQL's compression codecs (pglz, LZ4, zstd) and
 checksums (CRC-32C, CRC-32) into SQL, exact to the byte with the server's own
 C code, and a lab that times them on your data: page images, columns, WAL
 segments. Its advisor estimates what wal_compression and TOAST compression
 would save and checks the estimates against what the server writes.
 .
 This package is built for PostgreSQL $pg_major. After installing it, run
 "CREATE EXTENSION compresslab;" as a superuser in each database that uses it.
CONTROL
(cd "$stage" && find usr -type f | LC_ALL=C sort | xargs md5sum) >"$stage/DEBIAN/md5sums"
chmod 644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"
find "$stage" -type d -exec chmod 755 {} +
find "$stage" -exec touch -h -d "@$mtime" {} +
SOURCE_DATE_EPOCH=$mtime dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
dpkg-deb --contents "$deb" | awk '$1 !~ /^d/ {print "package:   " $NF}'
echo "package: $deb"
echo "package: $tarball"
