#!/usr/bin/env python3
"""One payload file of scripts/bench/callgrind.sh: payload.py NAME OUT BKI writes payload NAME
into OUT.
  text    PostgreSQL's catalog descriptions: the pg_description rows of BKI (postgres.bki,
          pg_config --sharedir) in index order, joined by spaces, 8 copies
  random  1 MiB of pseudo-random bytes (random.Random(1)): incompressible
  zeros   1 MiB of zero bytes: the most repetitive input"""
import random
import re
import sys


def catalog_text(bki):
    rows, inside = [], False
    for line in open(bki, encoding="utf-8"):
        line = line.rstrip("\n")
        if line == "open pg_description":
            inside = True
        elif line == "close pg_description":
            break
        elif inside:
            m = re.fullmatch(r"insert \( (\d+) (\d+) (\d+) (?:'(.*)'|(\S+)) \)", line)
            text = m[4].replace("''", "'") if m[4] is not None else m[5]
            rows.append((int(m[1]), int(m[2]), int(m[3]), text))
    return (" ".join(r[3] for r in sorted(rows)) * 8).encode()


name, out, bki = sys.argv[1:4]
if name == "random":
    data = random.Random(1).randbytes(1 << 20)
elif name == "zeros":
    data = bytes(1 << 20)
elif name == "text":
    data = catalog_text(bki)
else:
    sys.exit(f"payload: no payload {name} (text, random or zeros)")
open(out, "wb").write(data)
