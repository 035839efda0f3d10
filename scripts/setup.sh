#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine, as root: installs only what is missing and
# prints one line per step. Used by both README commands (scripts/report.sh, scripts/test.sh).
set -euo pipefail

PGRX_VERSION=0.18.0
PG_CONFIG=/usr/bin/pg_config
DEB_PACKAGES=(postgresql-15 postgresql-server-dev-15 postgresql-contrib libclang-dev clang sudo lz4 zstd python3 build-essential pkg-config)

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

if cargo fmt --version >/dev/null 2>&1 && cargo clippy --version >/dev/null 2>&1; then
  step "rustfmt, clippy" "present"
else
  step "rustfmt, clippy" "installing"
  rustup component add rustfmt clippy >/dev/null
fi

if [[ "$(cargo pgrx --version 2>/dev/null || true)" == "cargo-pgrx $PGRX_VERSION" ]]; then
  step "cargo-pgrx" "$PGRX_VERSION present"
else
  step "cargo-pgrx" "installing $PGRX_VERSION (about 4 minutes)"
  cargo install cargo-pgrx --version "$PGRX_VERSION" --locked --force --quiet
fi

if grep -qs "pg15 = \"$PG_CONFIG\"" "${PGRX_HOME:-$HOME/.pgrx}/config.toml"; then
  step "pgrx init" "done before"
else
  step "pgrx init" "pg15 -> $PG_CONFIG"
  cargo pgrx init --pg15 "$PG_CONFIG" >/dev/null
fi
