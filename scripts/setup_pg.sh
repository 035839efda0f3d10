# PostgreSQL 16 to 19 for scripts/setup.sh --pg N (sourced by it; uses its step function).
# Debian 12 packages none of them, so:
#   19: the binary packages of Debian's experimental suite (the release candidate 19~rc1-1 when
#       this was written: postgresql-19, postgresql-client-19, postgresql-server-dev-19, libpq5,
#       libpq-dev), unpacked with dpkg -x into $COMPRESSLAB_CACHE/pg19. That suite lists the
#       source package too, but its files are missing from the archive (404), so 19 is not built
#       here like 18. The packages need Debian's development C library (libc6 >= 2.43; Debian 12
#       has 2.36): they run on sid's C library and libraries, unpacked beside them, and patched
#       to them with patchelf (build_pg19 says how). lz4, zstd, ICU and the contrib modules are
#       Debian's build; no JIT.
#   18: the upstream tarball of Debian's source package (the development suite's postgresql-18),
#       built with lz4 and zstd (no ICU, no readline) into $COMPRESSLAB_CACHE/pg18, with the
#       contrib modules the tests use: pg_walinspect, pageinspect, test_decoding.
#   17: as 19, from Debian 13's (trixie's) binary packages and libraries (libc6 2.41), so that
#       the server and its headers are the same minor: pgrx 0.19 builds against 17.11's composite
#       datum versioning (heap_datum_check) when the headers have it, which a server of an
#       earlier minor (the PyPI wheel 17.10 used before) lacks.
#   16: the PyPI wheel pgserver (PostgreSQL 16.2 with its server headers and pg_regress, but
#       built without lz4 and zstd and without contrib), unpacked whole into
#       $COMPRESSLAB_CACHE/pg16 (its programs find their libpq in ../../../pgserver.libs). Enough
#       to build, load and smoke-test compresslab on 16 (pgrx-tests/t/smoke_pg16.sh), not for the
#       suites: no server lz4/zstd, no pg_walinspect or pageinspect to check against.
# The Debian archive is the one this machine's apt already uses: its URI is read from
# /etc/apt/sources.list.d/ at run time, and the extra suites are fetched with a private apt
# configuration under $COMPRESSLAB_CACHE/apt, so the system's own sources are left as they are
# (19: "experimental" and "sid", the latter for libraries only; 17: "trixie").
# shellcheck shell=bash

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
  # 19 is a release candidate: "PostgreSQL 19rc1".
  [[ -x "$pg_config" ]] && "$pg_config" --version 2>/dev/null | grep -Eq "^PostgreSQL $major([.]|beta|rc)" || return 1
  # 17's and 19's programs run on the C library under the cache (build_pg_debian): they must
  # still load (a moved or partly removed cache does not).
  ((major != 17 && major != 19)) || "$("$pg_config" --bindir)/postgres" --version 2>/dev/null | grep -Eq " $major([.]|beta|rc)" || return 1
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

# The library packages (lib*, zlib1g) named in the Depends and Pre-Depends fields on stdin (the
# first of alternatives), one a line; the packages in PG19_OWN_LIBS left out.
PG19_OWN_LIBS=libpq5
deb_lib_depends() {
  sed -n 's/^\(Pre-\)\{0,1\}Depends: //p' | sed 's/([^)]*)//g; s/:any//g; s/[[:space:]]//g; s/|[^,]*//g; s/,/\n/g' |
    awk -v own="$PG19_OWN_LIBS" '/^(lib.*|zlib1g)$/ && $0 != own' | sort -u
}

# The library packages the given .deb files depend on, and theirs in turn, as Debian's suite
# SUITE names them, one a line: library_closure SUITE DEB...
library_closure() {
  local suite=$1 want seen="" next names
  shift
  want=$(for deb in "$@"; do dpkg-deb -f "$deb" Depends Pre-Depends || exit 1; done | deb_lib_depends) || return 1
  while [[ -n $want ]]; do
    seen=$(printf '%s\n%s\n' "$seen" "$want" | sed '/^$/d' | sort -u)
    mapfile -t names <<<"$want"
    next=$(private_apt_cache "$suite" "deb $suite" show --no-all-versions "${names[@]}" | deb_lib_depends) || return 1
    want=$(comm -23 <(echo "$next") <(echo "$seen"))
  done
  echo "$seen"
}

# The ELF files under the given folders, one a line.
elf_files() {
  local f
  find "$@" -type f | while read -r f; do
    if [[ $(head -c4 "$f" | od -An -tx1 | tr -d ' \n') == 7f454c46 ]]; then echo "$f"; fi
  done
}

# PostgreSQL 19 (a release candidate at the time of writing) is not built from source here:
# Debian's experimental suite lists the source package postgresql-19, but its files (.dsc,
# .orig.tar.bz2) are not on the archive (404). Its binary packages are: they are unpacked with
# dpkg -x into $COMPRESSLAB_CACHE/pg19 (Debian's layout: usr/lib/postgresql/19/{bin,lib},
# usr/share/postgresql/19, usr/include/postgresql/19/server; PostgreSQL's programs find their
# share and lib folders relative to their own, so the tree works where it is unpacked). They
# need a newer C library than Debian 12's (libc6 >= 2.43), and the libraries of Debian's
# development suite (sid): those (libc6, libssl, libicu, liblz4, libzstd, libxml2, krb5, ...) are
# unpacked into $COMPRESSLAB_CACHE/pg19/sid, and every ELF file of the installation is rewritten
# with patchelf to use sid's dynamic loader (executables) and an RPATH (DT_RPATH, which also
# applies to what the loaded libraries load) naming the installation's libpq and sid's libraries.
# Every library the installation links resolves inside the tree (checked below); the machine's
# libraries are neither used for that nor changed. Run-time files stay the machine's: /etc
# (nsswitch.conf, openssl, krb5), /usr/share/zoneinfo, the locales. Extensions built on this
# machine (Debian 12's glibc symbols) load into this server: the newer C library keeps the older
# symbols, and the server's RPATH gives them sid's libgcc_s, libz and the like too.
# Not fetched: postgresql-19-jit (pgxs is told with_llvm = no, so no clang-21 is needed).
build_pg_debian() {
  local major=$1 suite=$2 libsuite=$3 prefix=$4
  local root dl="$COMPRESSLAB_CACHE/dl$major" log="$COMPRESSLAB_CACHE/pg$major-build.log"
  local version pkgs=() libs libc deb ld rpath f
  root=${prefix%/usr/lib/postgresql/$major}
  : >"$log"
  rm -rf "$dl" && mkdir -p "$dl/packages" "$dl/libs" || return 1
  version=$(private_apt_cache "$suite" "deb $suite" show --no-all-versions "postgresql-$major" 2>>"$log" |
    sed -n 's/^Version: //p')
  [[ -n $version ]] || { tail -20 "$log"; echo "setup: no postgresql-$major in Debian's $suite suite" >&2; return 1; }
  step "postgresql $major packages" "$version of Debian $suite (binary packages)"
  # libpq5 and libpq-dev by version (the same source package's): this machine's installed libpq5
  # may outrank the suite's, which apt would then never pick by itself.
  for f in "postgresql-$major" "postgresql-client-$major" "postgresql-server-dev-$major" libpq5 libpq-dev; do
    pkgs+=("$f=$version")
  done
  (cd "$dl/packages" && private_apt "$suite" "deb $suite" download "${pkgs[@]}") >>"$log" 2>&1 ||
    { tail -20 "$log"; return 1; }
  libs=$(library_closure "$libsuite" "$dl"/packages/{"postgresql-$major","postgresql-client-$major",libpq5}_*.deb 2>>"$log") ||
    { tail -20 "$log"; return 1; }
  mapfile -t libs <<<"$libs"
  step "postgresql $major libraries" "${#libs[@]} library packages of Debian $libsuite (named in $(basename "$log"))"
  echo "$libsuite's libraries: ${libs[*]}" >>"$log"
  (cd "$dl/libs" && private_apt "$libsuite" "deb $libsuite" download "${libs[@]}") >>"$log" 2>&1 ||
    { tail -20 "$log"; return 1; }
  libc=$(find "$dl/libs" -name 'libc6_*.deb' -printf '%f\n' | cut -d_ -f2)

  rm -rf "$root" && mkdir -p "$root/libs" || return 1
  for deb in "$dl"/packages/*.deb; do dpkg -x "$deb" "$root" || return 1; done
  for deb in "$dl"/libs/*.deb; do dpkg -x "$deb" "$root/libs" || return 1; done
  rm -rf "$dl" "$root/usr/share/doc" "$root/usr/share/man" "$root/libs/usr/share"
  # No JIT: 17's package carries its LLVM provider (19's is a package of its own, not fetched),
  # which would need LLVM's libraries; without it the server runs with JIT off.
  rm -rf "$prefix/lib/llvmjit.so" "$prefix/lib/llvmjit_types.bc" "$prefix/lib/bitcode"
  ld="$root/libs/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
  [[ -x $ld ]] || { echo "setup: no dynamic loader in $libsuite's libc6 at $ld" >&2; return 1; }
  # (libs/lib: for a package still shipping its library in /lib)
  rpath="$root/usr/lib/x86_64-linux-gnu:$root/libs/usr/lib/x86_64-linux-gnu:$root/libs/lib/x86_64-linux-gnu"
  step "postgresql $major patchelf" \
    "$libsuite's loader (libc6 $libc) and RPATH into $(elf_files "$root/usr/lib" | wc -l) ELF files"
  while read -r f; do
    if patchelf --print-interpreter "$f" >/dev/null 2>&1; then
      patchelf --set-interpreter "$ld" --force-rpath --set-rpath "$rpath" "$f" || return 1
    else
      patchelf --force-rpath --set-rpath "$rpath" "$f" || return 1
    fi
  done < <(elf_files "$root/usr/lib")
  # Every library each of them needs resolves inside the tree, none from the machine's /lib.
  local outside
  outside=$(elf_files "$root/usr/lib" | while read -r f; do
    "$ld" --list "$f" 2>&1 |
      { grep -v -e "=> $root/" -e "^[[:space:]]*$root/" -e 'linux-vdso' -e 'statically linked' || true; } |
      sed "s|^|${f#"$root"/}: |"
  done)
  [[ -z $outside ]] || { echo "setup: libraries not found under $root:" >&2; echo "$outside" >&2; return 1; }

  # pgxs as this machine can use it: Debian built 19 with gcc 16 and clang-21 (for JIT bitcode),
  # 17 with gcc 14 and clang-19; Debian 12 has gcc 12 and neither clang. With no bitcode to build,
  # and the compiler flags gcc 12 rejects (-Wmissing-variable-declarations) are dropped from
  # Makefile.global (pg_config --cflags still prints Debian's).
  local mk="$prefix/lib/pgxs/src/Makefile.global" var cc lang words kept dropped=()
  sed -i 's/^\(with_llvm[[:space:]]*=\) *yes$/\1 no/' "$mk"
  grep -q '^with_llvm[[:space:]]*= no$' "$mk" || { echo "setup: with_llvm not found in $mk" >&2; return 1; }
  for var in CFLAGS CXXFLAGS; do
    cc=$(sed -n 's/^CC = //p' "$mk") lang=c
    [[ $var == CFLAGS ]] || cc=$(sed -n 's/^CXX = //p' "$mk") lang=c++
    command -v "$cc" >/dev/null || continue
    read -ra words < <(sed -n "s/^$var = //p" "$mk")
    kept=()
    for f in "${words[@]}"; do
      if "$cc" -Wformat "$f" -x "$lang" -c -o /dev/null /dev/null 2>/dev/null; then
        kept+=("$f")
      else
        dropped+=("$f")
      fi
    done
    VAL="${kept[*]}" awk -v var="$var" '$0 ~ "^" var " = " { $0 = var " = " ENVIRON["VAL"] } { print }' "$mk" >"$mk.new" &&
      mv "$mk.new" "$mk" || return 1
  done
  step "postgresql $major pgxs" "with_llvm = no; flags this machine's compilers reject: ${dropped[*]:-none}"
  chmod -R a+rX "$root"
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
      17) build_pg_debian 17 trixie trixie "$prefix" || return 1 ;;
      16) build_pg16 "$prefix" || return 1 ;;
      19) build_pg_debian 19 experimental sid "$prefix" || return 1 ;;
    esac
    pg_complete "$pg_config" "$major" || { echo "setup: PostgreSQL $major in $prefix is incomplete" >&2; return 1; }
    step "postgresql $major" "$("$pg_config" --version) in $prefix"
  fi
  reachable_by_postgres "$prefix/bin"
}
