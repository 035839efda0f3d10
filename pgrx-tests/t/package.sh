#!/usr/bin/env bash
# Package test, for the tarball scripts/package.sh made (default: the one for Cargo.toml's
# version, PostgreSQL 15 and this machine; or the path given as argument):
#   1. unpacked into a fresh temporary root, it holds exactly the library, the control file
#      (default_version = Cargo.toml's version), the install script of this version, the frozen
#      install scripts of earlier releases and the update scripts, all relative paths; the
#      library needs no file from the Rust toolchain;
#   2. unpacked over / (as an administrator would install it, replacing what install_extension
#      installed from the same sources), on a fresh throwaway cluster: CREATE EXTENSION,
#      compresslab.version(), every capability ok; and CREATE EXTENSION ... VERSION of the
#      oldest frozen release followed by ALTER EXTENSION ... UPDATE.
# Runs as root (it writes into PostgreSQL's directories). Exits non-zero on any failure.
set -euo pipefail
HARNESS=package
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
root=$COMPRESSLAB_ROOT
version=$(current_version)
tarball=${1:-$root/target/compresslab-$version-pg$PG_MAJOR-$(uname -m).tar.gz}
[[ -f "$tarball" ]] || die "no $tarball (run scripts/package.sh)"

# 1. The file list, in a fresh temporary root.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tmp=$work/root
mkdir "$tmp"
tar -xzf "$tarball" -C "$tmp"
pkglibdir=$("$PG_CONFIG" --pkglibdir) extdir=$("$PG_CONFIG" --sharedir)/extension
{
  echo "${pkglibdir#/}/compresslab.so"
  echo "${extdir#/}/compresslab.control"
  echo "${extdir#/}/compresslab--$version.sql"
  for f in "$root"/sql/compresslab--*.sql; do
    [[ $(basename "$f") == "compresslab--$version.sql" ]] || echo "${extdir#/}/$(basename "$f")"
  done
} | LC_ALL=C sort >"$work/expected"
tar -tzf "$tarball" | LC_ALL=C sort >"$work/listed"
diff -u --label expected --label "in $(basename "$tarball")" "$work/expected" "$work/listed" ||
  die "the tarball's entries differ from the expected list (above)"
(cd "$tmp" && find . -type f -printf '%P\n' | LC_ALL=C sort) | cmp -s - "$work/listed" ||
  die "the tarball holds more than regular files"
tar -tzf "$tarball" | grep -E '^/|(^|/)\.\.(/|$)' && die "absolute or .. paths in the tarball"
grep -qx "default_version = '$version'" "$tmp/${extdir#/}/compresslab.control" ||
  die "compresslab.control does not say default_version = '$version'"
for f in "$root"/sql/compresslab--*--*.sql "$root"/sql/compresslab--*.sql; do
  [[ $(basename "$f") == "compresslab--$version.sql" ]] && continue
  cmp -s "$f" "$tmp/${extdir#/}/$(basename "$f")" || die "$(basename "$f") in the tarball differs from sql/"
done
libs=$(ldd "$tmp/${pkglibdir#/}/compresslab.so")
if grep -E 'not found|\.rustup|\.cargo|/target' <<<"$libs"; then die "the library needs files that are not on the system"; fi
echo "package: $(basename "$tarball"): $(tar -tzf "$tarball" | wc -l) files as expected"

rm -rf "$work"

# 2. A real install: over /, then a fresh cluster (stopped on exit).
tar -xzf "$tarball" -C /
echo "package: unpacked over /"
cluster_start package-test
got=$(psql_q -c "CREATE EXTENSION compresslab" -c "SELECT compresslab.version()" \
  -c "SELECT count(*) FILTER (WHERE ok) || ' of ' || count(*) FROM compresslab.capabilities()") ||
  die "CREATE EXTENSION on the unpacked files"
mapfile -t got <<<"$got"
[[ ${got[0]} == "$version" ]] || die "compresslab.version() is ${got[0]}, expected $version"
read -r ok _ total <<<"${got[1]}"
((ok > 0 && ok == total)) || die "capabilities ok: ${got[1]}"
echo "package: CREATE EXTENSION compresslab: version ${got[0]}, capabilities ok: ${got[1]}"
oldest=$(frozen_releases | head -1 || true)
if [[ -n "$oldest" ]]; then
  updated=$(psql_q -c "CREATE DATABASE package_upgrade" &&
    psql_q -d package_upgrade -c "CREATE EXTENSION compresslab VERSION '$oldest'" -c "ALTER EXTENSION compresslab UPDATE" \
      -c "SELECT extversion FROM pg_extension WHERE extname = 'compresslab'") || die "CREATE EXTENSION VERSION '$oldest' + UPDATE"
  [[ $updated == "$version" ]] || die "after ALTER EXTENSION UPDATE from $oldest: version $updated, expected $version"
  echo "package: CREATE EXTENSION compresslab VERSION '$oldest'; ALTER EXTENSION compresslab UPDATE: version $updated"
fi
echo "package: ok"
