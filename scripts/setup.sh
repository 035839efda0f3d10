#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine, as root: installs only what is missing and
# prints one line per step. Used by both README commands (scripts/report.sh, scripts/test.sh).
#
#   scripts/setup.sh            what the report needs (scripts/report.sh): PostgreSQL 15 from
#                               Debian's packages (/usr/bin/pg_config), the build tools, cargo-pgrx
#   scripts/setup.sh --tests    and what the tests need too (scripts/test.sh): rustfmt, clippy,
#                               pyflakes, lintian, dpkg-dev, pgxnclient, pgxn_meta
#   scripts/setup.sh --pg N     PostgreSQL N (15, 16, 17, 18 or 19) with lz4, zstd, pg_walinspect,
#                               pageinspect and test_decoding; prints its pg_config's path as
#                               the last line. 15: Debian's packages. 18: built from Debian's
#                               source package (about 6 CPU-minutes, once). 17: Debian 13's
#                               binary packages on its own C library (as 19). 16: the PyPI wheel
#                               pgserver (16.2 and its headers, but no lz4, zstd or contrib:
#                               enough for pgrx-tests/t/smoke_pg16.sh only). 19: the release
#                               candidate 19~rc1 as Debian's experimental suite ships it in
#                               binary packages (its source files are missing from the archive),
#                               run on the C library and libraries of Debian's sid, patched in
#                               with patchelf (scripts/setup_pg.sh, build_pg19). 16 to 19 are kept
#                               in ~/.cache/compresslab/pgN (COMPRESSLAB_CACHE overrides the
#                               folder), so a second run takes seconds.
set -euo pipefail
# rustup installs cargo in ~/.cargo/bin, which a bare shell's PATH (env -i PATH=/usr/bin:/bin)
# does not name.
[[ -d "${CARGO_HOME:-$HOME/.cargo}/bin" ]] && PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

PGRX_VERSION=0.19.4
PGXN_META_VERSION=0.7.0
PG_MAJOR=15
print_pg_config=false
for_tests=false
while (($#)); do
  case $1 in
    --tests) for_tests=true; shift ;;
    --pg) PG_MAJOR=${2:?--pg needs a major version}; print_pg_config=true; shift 2 ;;
    --pg=*) PG_MAJOR=${1#--pg=}; print_pg_config=true; shift ;;
    *) echo "setup: unknown argument $1 (usage: scripts/setup.sh [--tests] [--pg 15|16|17|18|19])" >&2; exit 2 ;;
  esac
done
case $PG_MAJOR in
  15) PG_CONFIG=/usr/bin/pg_config ;;
  16 | 17 | 18 | 19)
    COMPRESSLAB_CACHE=${COMPRESSLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/compresslab}
    PG_CONFIG=$COMPRESSLAB_CACHE/pg$PG_MAJOR/bin/pg_config
    # The wheel of 16 is kept whole: its programs look for their libraries beside it.
    ((PG_MAJOR != 16)) || PG_CONFIG=$COMPRESSLAB_CACHE/pg16/pgserver/pginstall/bin/pg_config
    # 17's and 19's Debian packages are unpacked in Debian's layout (usr/lib/postgresql/N/bin, ...).
    ((PG_MAJOR != 17 && PG_MAJOR != 19)) ||
      PG_CONFIG=$COMPRESSLAB_CACHE/pg$PG_MAJOR/usr/lib/postgresql/$PG_MAJOR/bin/pg_config ;;
  *) echo "setup: PostgreSQL $PG_MAJOR is not supported here (15, 16, 17, 18 or 19)" >&2; exit 2 ;;
esac
DEB_PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-contrib libclang-dev clang sudo lz4 zstd python3
  build-essential pkg-config)
# pyflakes3: the gates' Python linter (scripts/test.sh).
! $for_tests || DEB_PACKAGES+=(pyflakes3)
# Building PostgreSQL 18 from source; 16's wheel.
((PG_MAJOR == 15 || PG_MAJOR == 17 || PG_MAJOR == 19)) ||
  DEB_PACKAGES+=(dpkg-dev liblz4-dev libzstd-dev zlib1g-dev bison flex python3-pip)
# 17's and 19's Debian packages, rewritten to run on a newer C library (scripts/setup_pg.sh,
# build_pg_debian).
((PG_MAJOR != 17 && PG_MAJOR != 19)) || DEB_PACKAGES+=(patchelf)

step() { printf 'setup: %-28s %s\n' "$1" "$2"; }

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  step "debian packages" "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_log=$(mktemp)
  if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1; then
    cat "$apt_log"
    exit 1
  fi
  rm -f "$apt_log"
else
  step "debian packages" "present"
fi

# Debian's postgresql-common creates and starts a default cluster on install; ours are
# throwaway clusters, so keep the packaged one from holding port 5432 and memory.
if command -v pg_lsclusters >/dev/null && pg_lsclusters -h 2>/dev/null | grep -q online; then
  pg_lsclusters -h | awk '$4 == "online" {print $1, $2}' | while read -r ver name; do
    pg_ctlcluster "$ver" "$name" stop || true
  done
  step "packaged cluster" "stopped"
fi

# pgrx 0.19 needs Rust 1.96: every cargo call below runs under the toolchain this picks.
source "$(dirname "$0")/toolchain.sh"
select_toolchain
step "rust toolchain" "$RUSTUP_TOOLCHAIN ($(rustc -V))"

if [[ "$(cargo pgrx --version 2>/dev/null || true)" == "cargo-pgrx $PGRX_VERSION" ]]; then
  step "cargo-pgrx" "$PGRX_VERSION present"
else
  step "cargo-pgrx" "installing $PGRX_VERSION (about 4 minutes)"
  cargo install cargo-pgrx --version "$PGRX_VERSION" --locked --force --quiet
fi

if $for_tests; then
  if cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1; then
    step "rustfmt, clippy" "present"
  else
    step "rustfmt, clippy" "installing"
    rustup component add rustfmt clippy >/dev/null
  fi

  # The package layer's tools (pgrx-tests/t/package.sh): lintian judges the Debian package,
  # dpkg-shlibdeps (dpkg-dev) computes its Depends, pgxnclient installs the PGXN zip.
  for pkg in lintian dpkg-dev pgxnclient; do
    if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
      step "$pkg" "present"
    else
      step "$pkg" "installing"
      apt_log=$(mktemp)
      { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$pkg"; } >"$apt_log" 2>&1 ||
        { cat "$apt_log"; exit 1; }
      rm -f "$apt_log"
    fi
  done
  # pgxn_meta, PGXN's validator of META.json (the gates, scripts/meta_json.py).
  if [[ "$(pgxn_meta --version 2>/dev/null || true)" == *" $PGXN_META_VERSION" ]]; then
    step "pgxn_meta" "$PGXN_META_VERSION present"
  else
    step "pgxn_meta" "installing $PGXN_META_VERSION (about 3 minutes)"
    cargo install pgxn_meta --version "$PGXN_META_VERSION" --locked --force --quiet
  fi
fi

if ((PG_MAJOR != 15)); then
  source "$(dirname "$0")/setup_pg.sh"
  setup_pg "$PG_MAJOR" "$PG_CONFIG"
fi

if grep -qs "pg$PG_MAJOR = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
  step "pgrx init" "done before"
else
  step "pgrx init" "pg$PG_MAJOR -> $PG_CONFIG"
  # cargo pgrx init rewrites its config with the versions it is given: keep the others.
  init_args=("--pg$PG_MAJOR" "$PG_CONFIG")
  while read -r ver path; do
    [[ $ver != "pg$PG_MAJOR" && -x $path ]] && init_args+=("--$ver" "$path")
  done < <(sed -n 's/^\(pg[0-9]*\) = "\(.*\)"$/\1 \2/p' "${PGRX_HOME:-$HOME/.pgrx}/config.toml" 2>/dev/null)
  cargo pgrx init "${init_args[@]}" >/dev/null
fi
if $print_pg_config; then
  echo "$PG_CONFIG"
fi
