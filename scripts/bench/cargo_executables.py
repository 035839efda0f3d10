#!/usr/bin/env python3
"""The executables a cargo build made, from its `--message-format=json` on standard input: one
line `NAME PATH` each (the paths cargo reports are unique to the build, unlike the shared
examples/ folder, which another build may overwrite). Used by scripts/bench/against_c.sh and
scripts/bench/callgrind.sh."""
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable"):
        print(message["target"]["name"], message["executable"])
