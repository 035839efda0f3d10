# The targets PostgreSQL's extension build system (PGXS) offers, for the PGXN client
# (`pgxn install` runs `make` then `make install`, `pgxn check` runs `make installcheck`,
# `pgxn uninstall` runs `make uninstall`, each with PG_CONFIG=...) and for DBAs who build
# extensions with make. compresslab is Rust: the build goes through cargo-pgrx 0.19.4 (it needs
# Rust 1.96 or newer, cargo-pgrx and the server's development files; docs/install.md).
#   make [PG_CONFIG=...] [LTO=no]   build into target/pgxn/pgN/: `cargo pgrx package`, the library
#                                   rebuilt with link-time optimization (as scripts/cluster.sh's
#                                   install_extension does; LTO=no skips it), the frozen install
#                                   scripts of earlier releases
#   make install [DESTDIR=...]      copy the library and the SQL files into pg_config's
#                                   --pkglibdir and --sharedir/extension (no cargo run as root)
#   make installcheck               pg_regress: REGRESS's tests of pgrx-tests/ against the running
#                                   server of PG_CONFIG's installation (PGHOST, PGPORT, PGUSER),
#                                   each in a database CONTRIB_TESTDB_<test>, created afresh
#   make uninstall                  remove the installed files
#   make clean                      remove target/pgxn/
PG_CONFIG ?= pg_config
CARGO ?= cargo
LTO ?= yes
REGRESS ?= basics errors tiny_inputs
CONTRIB_TESTDB ?= contrib_regression

EXTENSION = compresslab
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' Cargo.toml | head -1)
PG_MAJOR := $(shell $(PG_CONFIG) --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
PKGLIBDIR := $(shell $(PG_CONFIG) --pkglibdir)
EXTDIR := $(shell $(PG_CONFIG) --sharedir)/extension
BINDIR := $(shell $(PG_CONFIG) --bindir)
TREE := target/pgxn/pg$(PG_MAJOR)
# Where cargo puts its build (CARGO_TARGET_DIR from the environment, as cargo reads it).
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
# The earlier releases' install scripts and their secondary control files, and every update
# script (pgrx copies the latter too).
FROZEN_SQL := $(filter-out sql/$(EXTENSION)--$(VERSION).sql,$(wildcard sql/$(EXTENSION)--*.sql)) \
  $(wildcard sql/$(EXTENSION)--*.control)

.PHONY: all install installcheck uninstall clean check-pg-config

all: $(TREE)/.built

check-pg-config:
	@test -n "$(PG_MAJOR)" || { echo "make: $(PG_CONFIG) is not a PostgreSQL pg_config (set PG_CONFIG=...)" >&2; exit 1; }

$(TREE)/.built: Cargo.toml Cargo.lock compresslab.control $(shell find src core/src -name '*.rs') $(FROZEN_SQL) | check-pg-config
	rm -rf $(TREE)
	$(CARGO) pgrx package --pg-config "$(PG_CONFIG)" --out-dir $(TREE)
ifeq ($(LTO),yes)
	$(CARGO) rustc --lib --release --features pg$(PG_MAJOR) --no-default-features --crate-type cdylib
	install -m 755 "$(TARGET_DIR)/release/lib$(EXTENSION).so" "$(TREE)$(PKGLIBDIR)/$(EXTENSION).so"
endif
	install -m 644 $(FROZEN_SQL) "$(TREE)$(EXTDIR)/"
	touch $@

install: all
	install -d "$(DESTDIR)$(PKGLIBDIR)" "$(DESTDIR)$(EXTDIR)"
	install -m 755 "$(TREE)$(PKGLIBDIR)/$(EXTENSION).so" "$(DESTDIR)$(PKGLIBDIR)/"
	install -m 644 "$(TREE)$(EXTDIR)"/$(EXTENSION).control "$(TREE)$(EXTDIR)"/$(EXTENSION)--*.sql \
	  "$(TREE)$(EXTDIR)"/$(EXTENSION)--*.control "$(DESTDIR)$(EXTDIR)/"

# Each test in a database of its own (CONTRIB_TESTDB_<test>), as pgrx-tests/t/run.sh runs them:
# every script creates the extension. pg_regress feeds each script to psql on standard input,
# so `\ir` resolves from the working directory: run from pgrx-tests/sql/. A failing test's diff
# is printed.
installcheck: check-pg-config
	rm -rf pgrx-tests/results/installcheck
	cd pgrx-tests/sql && failed=0; for t in $(REGRESS); do \
	  mkdir -p ../results/installcheck/$$t; \
	  "$(PKGLIBDIR)/pgxs/src/test/regress/pg_regress" --inputdir=.. --outputdir=../results/installcheck/$$t \
	    --bindir="$(BINDIR)" --dbname=$(CONTRIB_TESTDB)_$$t $$t || \
	    { cat ../results/installcheck/$$t/regression.diffs; failed=1; }; \
	done; exit $$failed

uninstall: check-pg-config
	rm -f "$(DESTDIR)$(PKGLIBDIR)/$(EXTENSION).so" "$(DESTDIR)$(EXTDIR)/$(EXTENSION).control" \
	  "$(DESTDIR)$(EXTDIR)/$(EXTENSION)--$(VERSION).sql"
	for f in $(notdir $(FROZEN_SQL)); do rm -f "$(DESTDIR)$(EXTDIR)/$$f"; done

clean:
	rm -rf target/pgxn
