#!/usr/bin/env python3
"""README.md and the manual in docs/ checked against the catalogue, so that they cannot drift.

Usage: readme_check.py PAGE.md...            (the catalogue in FUNCTIONS, SETTINGS, TYPES and
                                              ATTRIBUTES, as readme_check.sh sets them)
       readme_check.py --links-only PAGE.md... (no server needed)

Checks:
- every function of schema compresslab is in docs/sql-api.md's function table, and every
  function that table names exists;
- every compresslab.* setting is in docs/sql-api.md's settings table;
- every compresslab.NAME( call and every `compresslab.NAME` setting that any page names exists;
- a table after `<!-- columns of compresslab.TYPE -->` lists exactly TYPE's attributes;
- every relative link of any page leads to a file, and its #anchor to a heading of that page.
Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import sys

API_PAGE = "sql-api.md"
FILES = {"compresslab.so", "compresslab.control"}  # the library and control file, not settings
COLUMNS_MARK = re.compile(r"<!-- columns of compresslab\.([a-z_0-9]+) -->")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def table_rows(text):
    """The rows of every markdown table in text (header and separator rows included)."""
    return [line for line in text.splitlines() if line.lstrip().startswith("|")]


def first_cell(row):
    cells = row.strip().strip("|").split("|")
    return cells[0] if cells else ""


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", f.read(), re.M)}


def check_links(pages, texts):
    problems = []
    for page in pages:
        for target in LINK.findall(texts[page]):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(dest):
                problems.append(f"{page}: link {target} leads to no file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{page}: link {target} names no heading of {path or 'this page'}")
    return problems


def column_tables(text):
    """(type, [column names]) for each table after a columns mark."""
    found = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        mark = COLUMNS_MARK.search(line)
        if not mark:
            continue
        names = []
        for row in lines[i + 1:]:
            if not row.lstrip().startswith("|"):
                break
            names += re.findall(r"`([a-z_0-9]+)`", first_cell(row))
        found.append((mark.group(1), names))
    return found


def check_catalogue(pages, texts):
    functions = set(os.environ["FUNCTIONS"].split())
    settings = set(os.environ["SETTINGS"].split())
    types = set(os.environ["TYPES"].split())
    attributes = {}
    for line in os.environ["ATTRIBUTES"].splitlines():
        if line.strip():
            typ, att = line.split()
            attributes.setdefault(typ, []).append(att)
    api_pages = [p for p in pages if os.path.basename(p) == API_PAGE]
    if not api_pages:
        return [f"{API_PAGE} is not among the pages checked"]
    api = texts[api_pages[0]]
    problems = []

    listed = set()
    setting_rows = set()
    for row in table_rows(api):
        cell = first_cell(row)
        listed |= set(re.findall(r"`([a-z_0-9]+)\(", cell))
        setting_rows |= set(re.findall(r"`(compresslab\.[a-z_]+)`", cell))
    for f in sorted(functions - listed):
        problems.append(f"function {f} is not in {API_PAGE}'s function table")
    for f in sorted(listed - functions):
        problems.append(f"{API_PAGE}'s function table lists {f}(), which does not exist")
    for s in sorted(settings - setting_rows):
        problems.append(f"setting {s} is not in {API_PAGE}'s settings table")

    for page in pages:
        text = texts[page]
        for f in sorted(set(re.findall(r"compresslab\.([a-z_0-9]+)\(", text)) - functions):
            problems.append(f"{page} calls compresslab.{f}(), which does not exist")
        named = set(re.findall(r"`(compresslab\.[a-z_]+)`", text))
        for s in sorted(named - settings - FILES - {"compresslab." + t for t in types}):
            problems.append(f"{page} names setting {s}, which does not exist")
        for typ, names in column_tables(text):
            if typ not in attributes:
                problems.append(f"{page} lists the columns of compresslab.{typ}, which is no composite type")
                continue
            for a in attributes[typ]:
                if a not in names:
                    problems.append(f"{page}: column {a} of compresslab.{typ} is not in its table")
            for n in names:
                if n not in attributes[typ]:
                    problems.append(f"{page}: compresslab.{typ} has no column {n}")
    print(f"readme: {len(functions)} functions, {len(settings)} settings and "
          f"{len(attributes)} result types checked")
    return problems


def main(argv):
    links_only = argv[:1] == ["--links-only"]
    pages = argv[1:] if links_only else argv
    if not pages:
        sys.exit(__doc__)
    texts = {}
    for page in pages:
        with open(page, encoding="utf-8") as f:
            texts[page] = f.read()
    problems = check_links(pages, texts)
    if not links_only:
        problems += check_catalogue(pages, texts)
    for p in problems:
        print("readme:", p)
    print(f"readme: {len(pages)} pages checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
