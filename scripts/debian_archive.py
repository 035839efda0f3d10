#!/usr/bin/env python3
"""The URI and keyring of the Debian archive this machine's apt uses for release CODENAME's main
suite, printed as "URI KEYRING": debian_archive.py CODENAME. Reads the deb822 files of
/etc/apt/sources.list.d/, then the one-line sources.list files. Used by scripts/setup_pg.sh."""
import glob
import sys

DEFAULT_KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"


def deb822_entry(codename):
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        for stanza in open(path).read().split("\n\n"):
            fields = {}
            for line in stanza.splitlines():
                if ":" in line and not line.startswith(("#", " ")):
                    key, value = line.split(":", 1)
                    fields[key.strip().lower()] = value.strip()
            if "deb" in fields.get("types", "").split() and codename in fields.get("suites", "").split():
                return fields["uris"].split()[0], fields.get("signed-by", DEFAULT_KEYRING)
    return None


def one_line_entry(codename):
    for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
        try:
            lines = open(path).read().splitlines()
        except OSError:
            continue
        for line in lines:
            words = [w for w in line.split() if not w.startswith("[")]
            if len(words) >= 3 and words[0] == "deb" and words[2] == codename:
                return words[1], DEFAULT_KEYRING
    return None


codename = sys.argv[1]
entry = deb822_entry(codename) or one_line_entry(codename)
if entry is None:
    sys.exit("setup: no Debian archive for " + codename + " in /etc/apt/sources.list.d/")
print(*entry)
