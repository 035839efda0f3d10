#!/usr/bin/env python3
"""Checks META.json, the PGXN distribution metadata (run by scripts/test.sh's gates):

1. valid against the PGXN Meta Spec 1.0.0, as PGXN's own validator judges it: `pgxn_meta`,
   the command-line tool of the Rust crate pgxn_meta (the JSON Schema of the spec; installed by
   scripts/setup.sh with `cargo install pgxn_meta`);
2. its version and provides.compresslab.version are Cargo.toml's;
3. its PostgreSQL prerequisite admits exactly the majors Cargo.toml has a pgN feature for
   (15 to 19): every N.0 and N.99 of them, and neither the major below nor the one above;
4. release_status, resources and tags are given.

Usage: scripts/meta_json.py [META.json [Cargo.toml]]. Prints one line per problem, or one line
saying it is valid; exits non-zero on a problem.
"""
import json
import re
import shutil
import subprocess
import sys


def version_tuple(text):
    return tuple(int(part) for part in text.split("."))


def admits(requirement, version):
    """Whether a PGXN version range ("1.0.0", ">= 15.0, < 19.0", "== 1.2") admits version."""
    clauses = [c.strip() for c in requirement.split(",")]
    for clause in clauses:
        m = re.fullmatch(r"(>=|<=|==|!=|>|<)?\s*([0-9]+(?:\.[0-9]+)*)", clause)
        if not m:
            raise ValueError(f"cannot read the version range clause {clause!r}")
        op, bound = m.group(1) or ">=", version_tuple(m.group(2))
        width = max(len(bound), len(version))
        v = version + (0,) * (width - len(version))
        b = bound + (0,) * (width - len(bound))
        ok = {">=": v >= b, "<=": v <= b, "==": v == b, "!=": v != b, ">": v > b, "<": v < b}[op]
        if not ok:
            return False
    return True


def main():
    meta_path = sys.argv[1] if len(sys.argv) > 1 else "META.json"
    cargo_path = sys.argv[2] if len(sys.argv) > 2 else "Cargo.toml"
    errors = []

    validator = shutil.which("pgxn_meta")
    if validator is None:
        errors.append("META.json: pgxn_meta, the PGXN validator, is not installed (scripts/setup.sh installs it)")
    else:
        run = subprocess.run([validator, meta_path], capture_output=True, text=True)
        if run.returncode != 0:
            detail = (run.stdout + run.stderr).strip()
            errors.append(f"META.json: invalid by PGXN Meta Spec 1.0.0 (pgxn_meta): {detail}")

    with open(meta_path) as f:
        meta = json.load(f)
    with open(cargo_path) as f:
        cargo = f.read()
    version = re.search(r'^version = "(.*)"$', cargo, re.M).group(1)
    provided = meta.get("provides", {}).get("compresslab", {})
    for key, value in (("version", meta.get("version")), ("provides.compresslab.version", provided.get("version"))):
        if value != version:
            errors.append(f"META.json: {key} is {value!r}, Cargo.toml's version is {version!r}")

    majors = sorted(int(n) for n in re.findall(r"^pg([0-9]+) = ", cargo, re.M))
    requirement = meta.get("prereqs", {}).get("runtime", {}).get("requires", {}).get("PostgreSQL")
    if not majors:
        errors.append("Cargo.toml: no pgN feature")
    elif requirement is None:
        errors.append("META.json: no prereqs.runtime.requires.PostgreSQL")
    else:
        try:
            wrong = [f"{n}.{minor}" for n in majors for minor in (0, 99) if not admits(requirement, (n, minor))]
            wrong += [f"{n}.0 (unsupported)" for n in (majors[0] - 1, majors[-1] + 1) if admits(requirement, (n, 0))]
        except ValueError as e:
            wrong = [str(e)]
        if wrong:
            errors.append(f"META.json: PostgreSQL {requirement!r} is wrong for the majors {majors[0]}-{majors[-1]} "
                          f"Cargo.toml builds for: {', '.join(wrong)}")

    if meta.get("release_status") not in ("stable", "testing", "unstable"):
        errors.append(f"META.json: release_status is {meta.get('release_status')!r}")
    if not meta.get("resources"):
        errors.append("META.json: no resources")
    if not meta.get("tags"):
        errors.append("META.json: no tags")

    if errors:
        print("\n".join(errors))
        return 1
    print(f"META.json: valid (pgxn_meta, PGXN Meta Spec 1.0.0), version {version}, PostgreSQL {requirement}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
