#!/usr/bin/env bash
# Package test, for what scripts/package.sh made for PG_CONFIG's major N and Cargo.toml's
# version (target/compresslab-<v>-pgN-<arch>.tar.gz and target/postgresql-N-compresslab_<v>-1_
# <arch>.deb):
#   1. the tarball, unpacked into a fresh temporary root, holds exactly the library, the control
#      file (default_version = Cargo.toml's version), the install script of this version, the
#      frozen install scripts of earlier releases with their secondary control files and the
#      update scripts, all relative paths; the
#      library needs no file from the Rust toolchain;
#   2. the Debian package: its control fields (Section database, Depends on postgresql-N and on
#      the package of every library the library links), its files (the tarball's SQL files byte
#      for byte, in /usr/share/postgresql/N/extension; the same build of the library, stripped,
#      in /usr/lib/postgresql/N/lib; copyright and changelogs; root-owned; md5sums right), and
#      lintian reporting no error;
#   3. installed the way a DBA would, on a fresh throwaway cluster: CREATE EXTENSION,
#      compresslab.version(), every capability ok, and CREATE EXTENSION ... VERSION of the
#      oldest frozen release followed by ALTER EXTENSION ... UPDATE. Where the server is
#      Debian's postgresql-N (15 here): `apt-get install ./postgresql-N-compresslab_....deb` on
#      a machine state without the extension's files, then `apt-get remove`, after which no file
#      `dpkg -L` listed is left. Elsewhere (16-18 here are not Debian packages, so the package's
#      Depends cannot be satisfied): the tarball unpacked over /.
#   4. on Debian's server, PGXN: scripts/pgxn_bundle.sh's zip installed by the PGXN client
#      (`pgxn install ./compresslab-<v>.zip`: the Makefile's make and make install, without the
#      LTO rebuild, reusing this checkout's cargo build), CREATE EXTENSION, `pgxn check` (make
#      installcheck) and `pgxn uninstall`. Needs the commit's sources: uncommitted changes are
#      not in the zip.
# 3 and 4 replace what install_extension installed: the machine's files are saved first and put
# back on exit, failure included. Runs as root, under the lock of CONTRIBUTING.md (it writes
# into PostgreSQL's directories and runs apt). Ends with "N passed, N failed".
set -euo pipefail
HARNESS=package
# shellcheck source=pgrx-tests/t/lib.sh
source "$(dirname "$0")/lib.sh"
root=$COMPRESSLAB_ROOT
version=$(current_version)
arch=$(uname -m)
tarball=$root/target/compresslab-$version-pg$PG_MAJOR-$arch.tar.gz
deb_name=postgresql-$PG_MAJOR-compresslab
deb=$root/target/${deb_name}_$version-1_$(dpkg --print-architecture).deb
[[ -f "$tarball" && -f "$deb" ]] || die "no $tarball or $deb (run scripts/package.sh)"
pkglibdir=$("$PG_CONFIG" --pkglibdir) extdir=$("$PG_CONFIG" --sharedir)/extension
deb_libdir=/usr/lib/postgresql/$PG_MAJOR/lib deb_extdir=/usr/share/postgresql/$PG_MAJOR/extension
# A server of Debian's packages: the package's paths are its paths, and apt can satisfy Depends.
debian_server=false
if [[ $pkglibdir == "$deb_libdir" && $extdir == "$deb_extdir" ]] &&
  dpkg-query -W -f='${Status}' "postgresql-$PG_MAJOR" 2>/dev/null | grep -q 'install ok installed'; then
  debian_server=true
fi

work=$(mktemp -d)
chmod 755 "$work" # apt's download user reads the .deb from here
saved=$work/saved
cleanup() {
  cluster_stop
  if [[ -d "$saved" ]]; then restore_machine_install; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The extension's files in PostgreSQL's folders (absolute paths, sorted): the library, the
# control file, this version's install script and every file of sql/ (frozen install scripts of
# earlier releases and their secondary control files, update scripts), under LIBDIR and EXTDIR.
expected_files() {
  local libdir=$1 extdir=$2 f
  {
    echo "$libdir/compresslab.so"
    echo "$extdir/compresslab.control"
    echo "$extdir/compresslab--$version.sql"
    for f in "$root"/sql/compresslab--*.sql "$root"/sql/compresslab--*.control; do
      [[ $(basename "$f") == "compresslab--$version.sql" ]] || echo "$extdir/$(basename "$f")"
    done
  } | LC_ALL=C sort
}
build_id() { readelf -n "$1" | sed -n 's/^ *Build ID: //p'; }

# 1. The tarball's file list, in a fresh temporary root.
tmp=$work/tarball
mkdir "$tmp"
tar -xzf "$tarball" -C "$tmp"
expected_files "${pkglibdir#/}" "${extdir#/}" | sed 's|^/||' >"$work/expected"
tar -tzf "$tarball" | LC_ALL=C sort >"$work/listed"
if diff -u --label expected --label "in $(basename "$tarball")" "$work/expected" "$work/listed"; then
  pass "tarball: files" "$(wc -l <"$work/listed") as expected"
else
  fail "tarball: files" "the entries differ from the expected list (above)"
fi
(cd "$tmp" && find . -type f -printf '%P\n' | LC_ALL=C sort) | cmp -s - "$work/listed" ||
  fail "tarball: regular files only"
if tar -tzf "$tarball" | grep -E '^/|(^|/)\.\.(/|$)'; then fail "tarball: relative paths"; fi
check "tarball: compresslab.control says default_version = '$version'" \
  grep -qx "default_version = '$version'" "$tmp/${extdir#/}/compresslab.control"
sql_differs=()
for f in "$root"/sql/compresslab--*.sql; do
  [[ $(basename "$f") == "compresslab--$version.sql" ]] && continue
  cmp -s "$f" "$tmp/${extdir#/}/$(basename "$f")" || sql_differs+=("$(basename "$f")")
done
((${#sql_differs[@]} == 0)) && pass "tarball: SQL files equal sql/'s" || fail "tarball: SQL files equal sql/'s" "${sql_differs[*]}"
libs=$(ldd "$tmp/${pkglibdir#/}/compresslab.so")
if grep -E 'not found|\.rustup|\.cargo|/target' <<<"$libs"; then
  fail "tarball: library needs only system files"
else
  pass "tarball: library needs only system files"
fi

# 2. The Debian package: control fields, files, lintian.
field() { dpkg-deb --field "$deb" "$1"; }
[[ $(field Package) == "$deb_name" && $(field Version) == "$version-1" && $(field Section) == database &&
  $(field Architecture) == "$(dpkg --print-architecture)" && -n $(field Maintainer) &&
  $(field Description) == *"PostgreSQL $PG_MAJOR"* ]] &&
  pass "deb: control fields" "$deb_name $(field Version) $(field Architecture), Section $(field Section)" ||
  fail "deb: control fields" "$(dpkg-deb --field "$deb" Package Version Architecture Section Maintainer | tr '\n' ' ')"
depends=$(field Depends)
# Every library the library links comes from a package Depends names (dpkg-shlibdeps computed it;
# checked here against ldd and dpkg -S).
missing=()
grep -qE "(^|, )postgresql-$PG_MAJOR(,|$)" <<<"$depends" || missing+=("postgresql-$PG_MAJOR")
while read -r path; do
  pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
  [[ -n $pkg ]] || pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
  [[ -n $pkg ]] && grep -qE "(^|, )$pkg( |,|$)" <<<"$depends" || missing+=("${pkg:-no package} ($path)")
done < <(ldd "$tmp/${pkglibdir#/}/compresslab.so" | awk '$3 ~ /^\// {print $3}')
((${#missing[@]} == 0)) && pass "deb: Depends" "$depends" || fail "deb: Depends" "$depends lacks ${missing[*]}"

debroot=$work/deb
dpkg-deb -x "$deb" "$debroot"
{
  expected_files "$deb_libdir" "$deb_extdir"
  for f in changelog.Debian.gz changelog.gz copyright; do echo "/usr/share/doc/$deb_name/$f"; done
} | LC_ALL=C sort >"$work/deb-expected"
dpkg-deb --contents "$deb" | awk '$1 !~ /^d/ {print substr($NF, 2)}' | LC_ALL=C sort >"$work/deb-listed"
if diff -u --label expected --label "in $(basename "$deb")" "$work/deb-expected" "$work/deb-listed"; then
  pass "deb: files" "$(wc -l <"$work/deb-listed") at Debian's paths ($deb_libdir, $deb_extdir)"
else
  fail "deb: files" "the entries differ from the expected list (above)"
fi
owners=$(dpkg-deb --contents "$deb" | awk '{print $2}' | sort -u)
[[ $owners == root/root ]] && pass "deb: root-owned" || fail "deb: root-owned" "$owners"
# Against the install tree (the tarball's): the same SQL files, the same build of the library.
differs=()
for f in "$tmp/${extdir#/}"/*; do
  cmp -s "$f" "$debroot$deb_extdir/$(basename "$f")" || differs+=("$(basename "$f")")
done
[[ -n $(build_id "$tmp/${pkglibdir#/}/compresslab.so") &&
  $(build_id "$tmp/${pkglibdir#/}/compresslab.so") == $(build_id "$debroot$deb_libdir/compresslab.so") ]] ||
  differs+=("compresslab.so (build ID)")
((${#differs[@]} == 0)) && pass "deb: contents equal the tarball's" "SQL files byte for byte, library of the same build ID" ||
  fail "deb: contents equal the tarball's" "${differs[*]}"
check "deb: md5sums" bash -c 'cd "$1" && dpkg-deb --ctrl-tarfile "$2" | tar -xOf - ./md5sums | md5sum --quiet -c -' _ "$debroot" "$deb"
if command -v lintian >/dev/null; then
  lintian_out=$(lintian --fail-on error "$deb" 2>&1) && lintian_ok=true || lintian_ok=false
  lintian_tags=$(grep -E '^[EWI]: ' <<<"$lintian_out" || true)
  [[ -n $lintian_tags ]] && sed 's/^/package:   lintian /' <<<"$lintian_tags"
  if $lintian_ok && ! grep -q '^E: ' <<<"$lintian_out"; then
    pass "deb: lintian" "no error, $(grep -c '^W: ' <<<"$lintian_tags" || true) warnings"
  else
    fail "deb: lintian" "errors (above)"
  fi
else
  fail "deb: lintian" "lintian is not installed (scripts/setup.sh installs it)"
fi

# CREATE EXTENSION, version, capabilities, and the oldest frozen release updated to this one, on
# a fresh cluster; stopped after. HOW says how the files got there.
extension_checks() {
  local how=$1 got oldest updated
  cluster_start "package-test" || { trap cleanup EXIT; die "cluster_start"; }
  trap cleanup EXIT
  if got=$(psql_q -c "CREATE EXTENSION compresslab" -c "SELECT compresslab.version()" \
    -c "SELECT count(*) FILTER (WHERE ok) || ' of ' || count(*) FROM compresslab.capabilities()"); then
    mapfile -t got <<<"$got"
    read -r ok _ total <<<"${got[1]}"
    [[ ${got[0]} == "$version" ]] && ((ok > 0 && ok == total)) &&
      pass "$how: CREATE EXTENSION" "version ${got[0]}, capabilities ok: ${got[1]}" ||
      fail "$how: CREATE EXTENSION" "version ${got[0]} (expected $version), capabilities ok: ${got[1]}"
  else
    fail "$how: CREATE EXTENSION"
  fi
  oldest=$(frozen_releases | head -1 || true)
  if [[ -n "$oldest" ]]; then
    updated=$(psql_q -c "CREATE DATABASE package_upgrade" &&
      psql_q -d package_upgrade -c "CREATE EXTENSION compresslab VERSION '$oldest'" -c "ALTER EXTENSION compresslab UPDATE" \
        -c "SELECT extversion FROM pg_extension WHERE extname = 'compresslab'") || updated="an error"
    [[ $updated == "$version" ]] && pass "$how: CREATE EXTENSION VERSION '$oldest'; ALTER EXTENSION UPDATE" "version $updated" ||
      fail "$how: CREATE EXTENSION VERSION '$oldest'; ALTER EXTENSION UPDATE" "version $updated, expected $version"
  fi
  cluster_stop
  unset CLUSTER_DATA
}

# The machine's install (what install_extension put there), saved and removed so that the
# package installs on a machine state without the extension's files; put back on exit.
save_machine_install() {
  local f
  mkdir -p "$saved"
  expected_files "$pkglibdir" "$extdir" >"$work/machine-files"
  while read -r f; do
    if [[ -e $f ]]; then
      mkdir -p "$saved$(dirname "$f")"
      mv "$f" "$saved$f"
    fi
  done <"$work/machine-files"
  echo "package: the machine's install moved aside ($(find "$saved" -type f | wc -l) files); put back on exit"
}
restore_machine_install() {
  local f
  if dpkg-query -W -f='${Status}' "$deb_name" 2>/dev/null | grep -q 'install ok'; then
    apt-get remove -y -q "$deb_name" >/dev/null 2>&1 || true
  fi
  while read -r f; do
    rm -f "$f"
    if [[ -e $saved$f ]]; then cp -p "$saved$f" "$f"; fi
  done <"$work/machine-files"
  rm -rf "$saved"
  echo "package: the machine's install put back"
}

# 3. Installed the way a DBA would.
if $debian_server; then
  if dpkg-query -W -f='${Status}' "$deb_name" 2>/dev/null | grep -q 'install ok'; then
    die "$deb_name is installed already (apt-get remove $deb_name first)"
  fi
  save_machine_install
  cp "$deb" "$work/"
  chmod 644 "$work/$(basename "$deb")"
  if DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$work/$(basename "$deb")" >"$work/apt.log" 2>&1; then
    pass "deb: apt-get install ./$(basename "$deb")"
  else
    cat "$work/apt.log"
    die "apt-get install ./$(basename "$deb")"
  fi
  dpkg -L "$deb_name" | while read -r f; do [[ -d $f ]] || echo "$f"; done | LC_ALL=C sort >"$work/dpkg-L"
  cmp -s "$work/dpkg-L" "$work/deb-listed" && pass "deb: dpkg -L lists the package's files" "$(wc -l <"$work/dpkg-L")" ||
    fail "deb: dpkg -L lists the package's files" "$(diff "$work/deb-listed" "$work/dpkg-L" | tr '\n' ' ')"
  extension_checks "deb"
  if DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "$deb_name" >"$work/apt.log" 2>&1; then
    pass "deb: apt-get remove $deb_name"
  else
    cat "$work/apt.log"
    fail "deb: apt-get remove $deb_name"
  fi
  left=()
  while read -r f; do [[ -e $f ]] && left+=("$f"); done <"$work/dpkg-L"
  status=$(dpkg-query -W -f='${db:Status-Status}' "$deb_name" 2>/dev/null || echo not-installed)
  ((${#left[@]} == 0)) && [[ $status == not-installed ]] &&
    pass "deb: nothing left after apt-get remove" "$(wc -l <"$work/dpkg-L") files gone, dpkg status $status" ||
    fail "deb: nothing left after apt-get remove" "dpkg status $status; left: ${left[*]}"
else
  echo "package: $deb_name not installed: its Depends (postgresql-$PG_MAJOR) cannot be satisfied on this machine," \
    "whose PostgreSQL $PG_MAJOR ($PG_CONFIG) is not a Debian package; its contents are checked against the tarball's above"
  tar -xzf "$tarball" -C /
  echo "package: tarball unpacked over /"
  extension_checks "tarball"
fi

# 4. PGXN, on Debian's server: the zip of the commit, installed by the PGXN client.
if $debian_server; then
  if ! command -v pgxn >/dev/null; then
    fail "pgxn install" "the PGXN client is not installed (scripts/setup.sh installs pgxnclient)"
  else
    zip=$("$root/scripts/pgxn_bundle.sh" | tail -1)
    # The unpacked zip builds in this checkout's target/ (only the two crates of the zip are
    # compiled again), without the LTO rebuild scripts/package.sh already tested.
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target} LTO=no
    if (cd "$work" && pgxn install --pg_config "$PG_CONFIG" "$zip") >"$work/pgxn.log" 2>&1; then
      pass "pgxn install ./$(basename "$zip")"
    else
      tail -40 "$work/pgxn.log"
      fail "pgxn install ./$(basename "$zip")"
    fi
    missing=()
    while read -r f; do [[ -f $f ]] || missing+=("$f"); done <"$work/machine-files"
    ((${#missing[@]} == 0)) && pass "pgxn: files installed" "$(wc -l <"$work/machine-files")" ||
      fail "pgxn: files installed" "missing ${missing[*]}"
    extension_checks "pgxn"
    cluster_start "package-pgxn" || { trap cleanup EXIT; die "cluster_start"; }
    trap cleanup EXIT
    if (cd "$work" && pgxn check --pg_config "$PG_CONFIG" "$zip") >"$work/pgxn-check.log" 2>&1; then
      pass "pgxn check (make installcheck)" "$(grep -cE '^(ok|test) ' "$work/pgxn-check.log" || true) tests"
    else
      tail -40 "$work/pgxn-check.log"
      fail "pgxn check (make installcheck)"
    fi
    cluster_stop
    unset CLUSTER_DATA
    (cd "$work" && pgxn uninstall --pg_config "$PG_CONFIG" "$zip") >"$work/pgxn.log" 2>&1 || tail -20 "$work/pgxn.log"
    left=()
    while read -r f; do [[ -e $f ]] && left+=("$f"); done <"$work/machine-files"
    ((${#left[@]} == 0)) && pass "pgxn uninstall: nothing left" || fail "pgxn uninstall: nothing left" "${left[*]}"
  fi
fi
finish
