# Sourced by every script that calls cargo: picks a Rust toolchain new enough for pgrx 0.19
# (rust-version 1.96) and exports it as RUSTUP_TOOLCHAIN, so that cargo, clippy, rustfmt and
# the builds cargo-pgrx spawns all run under it. `--ignore-rust-version` cannot be used instead:
# cargo-pgrx passes its own arguments to the cargo it runs.
#
# The caller's RUSTUP_TOOLCHAIN, when set, is used as it is (and checked); else rustup's default
# when it is 1.96 or newer (a stable elsewhere); else the newest installed toolchain that is (on
# the machine CI runs on, whose stable is 1.95: its nightly, 1.97). No toolchain file pins one,
# so nobody with a new enough stable is sent to a nightly.
RUST_MIN_MINOR=96

# The minor version of a toolchain's rustc (97 for "rustc 1.97.0-nightly ..."), or 0.
rust_minor() {
  local version
  version=$(rustup run "$1" rustc -V 2>/dev/null || true)
  [[ $version =~ ^rustc\ 1\.([0-9]+)\. ]] && echo "${BASH_REMATCH[1]}" || echo 0
}

select_toolchain() {
  local chosen=${RUSTUP_TOOLCHAIN:-} best=0 name minor
  if [[ -z $chosen ]]; then
    name=$(rustup default 2>/dev/null | awk '{print $1}')
    if [[ -n $name ]] && (($(rust_minor "$name") >= RUST_MIN_MINOR)); then
      chosen=$name
    else
      while read -r name _; do
        minor=$(rust_minor "$name")
        if ((minor >= RUST_MIN_MINOR && minor > best)); then
          best=$minor
          chosen=$name
        fi
      done < <(rustup toolchain list 2>/dev/null)
    fi
  fi
  if [[ -z $chosen ]] || (($(rust_minor "$chosen") < RUST_MIN_MINOR)); then
    echo "toolchain: compresslab needs Rust 1.$RUST_MIN_MINOR or newer (pgrx 0.19); installed:" >&2
    rustup toolchain list >&2 || true
    return 1
  fi
  export RUSTUP_TOOLCHAIN=$chosen
}
