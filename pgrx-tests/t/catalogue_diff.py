#!/usr/bin/env python3
"""The difference between two catalogues of pgrx-tests/catalogue.sql (CSV rows: object,
property, value), for pgrx-tests/t/upgrade.sh: catalogue_diff.py FRESH UPDATED lists, object by
object, what the updated extension lacks, has in excess or has differently from a fresh
CREATE EXTENSION, and exits 1; prints nothing and exits 0 when they are the same."""
import csv
import sys


def load(path):
    rows = {}
    with open(path, newline="") as f:
        for obj, prop, value in csv.reader(f):
            rows.setdefault(obj, {})[prop] = value
    return rows


fresh, updated = load(sys.argv[1]), load(sys.argv[2])
missing = sorted(set(fresh) - set(updated))
extra = sorted(set(updated) - set(fresh))
changed = [o for o in sorted(set(fresh) & set(updated)) if fresh[o] != updated[o]]
if not (missing or extra or changed):
    sys.exit(0)
if missing:
    print("  missing after the update (create them in the script):")
    for o in missing:
        print(f"    {o}")
        for p in ("arguments", "result", "volatility", "strict", "parallel", "C symbol or body",
                  "attributes", "comment"):
            if fresh[o].get(p):
                print(f"      {p}: {fresh[o][p]}")
if extra:
    print("  left over after the update (drop them in the script):")
    for o in extra:
        print(f"    {o}")
if changed:
    print("  different (make the script give what a fresh install has):")
    for o in changed:
        print(f"    {o}")
        for p in sorted(set(fresh[o]) | set(updated[o])):
            a, b = updated[o].get(p, "(none)"), fresh[o].get(p, "(none)")
            if a != b:
                print(f"      {p}:")
                print(f"        after the update: {a}")
                print(f"        fresh install:    {b}")
sys.exit(1)
