#!/usr/bin/env bash
# The PGXN release zip, target/compresslab-<version>.zip (the version of Cargo.toml and
# META.json): `git archive` of a commit (default HEAD; committed files only, so uncommitted
# changes are left out: a warning says so), every file under one top folder
# compresslab-<version>/, as PGXN's upload and the PGXN client expect. The client builds it with
# the top-level Makefile (`pgxn install ./compresslab-<version>.zip`: make, make install).
# Prints the zip's path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
version=$(git show "$rev:Cargo.toml" | sed -n 's/^version = "\(.*\)"$/\1/p' | head -1)
meta_version=$(git show "$rev:META.json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
[[ "$version" == "$meta_version" ]] ||
  { echo "pgxn_bundle: META.json says $meta_version, Cargo.toml $version (at $rev)" >&2; exit 1; }
git show "$rev:Makefile" >/dev/null 2>&1 || { echo "pgxn_bundle: no Makefile at $rev" >&2; exit 1; }
if [[ $rev == HEAD && -n $(git status --porcelain --untracked-files=no) ]]; then
  echo "pgxn_bundle: warning: uncommitted changes are not in the zip (git archive of HEAD)" >&2
fi
zip="$PWD/target/compresslab-$version.zip"
mkdir -p target
git archive --format=zip --prefix="compresslab-$version/" -o "$zip.tmp" "$rev"
mv "$zip.tmp" "$zip"
files=$(python3 -c 'import sys, zipfile; print(sum(not n.endswith("/") for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$zip")
echo "pgxn_bundle: $files files from $(git rev-parse --short=12 "$rev")"
echo "$zip"
