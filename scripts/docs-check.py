#!/usr/bin/env python3
"""Checks that the documentation names only what exists (the test command runs it).

In README.md, DEVELOPERS.md, docs/*.md and every README.md beside code, each
backticked reference must resolve:

  `dir/file.ext`                a file or directory, from the document's own
                                directory or from the repository's root
  `file.ext`                    (no directory) a tracked file of that name
  `dir/file.ext:symbol`         that file, and the symbol in it
  (`doc.md`, "Section")         that document, and a heading or a bold lead
  `doc.md`'s "Section"          term (**Section.**) of that name in it (or a
  `doc.md` ("Section")          heading that goes on after it and a comma)

What the build writes (dist/, target/, www/pkg/, node_modules/ and the like)
is named without being checked. Also the limits (LIMITS): the README at most
200 lines with the two commands in its first 40, docs/PERFORMANCE.md at most
250 with what the figures mean first and at most three sentences of prose under
each of its tables. Exit status 1, with each broken reference,
when any does not resolve.
"""
import re

from repo_checks import ROOT, fail_if, tracked

# Written by the build or a tool, never tracked: named, not checked (a path with one of these
# directories in it, or under one of these prefixes).
GENERATED_DIRS = {"dist", "target", "node_modules", "pkg", ".mvn", "screenshots", "artifacts"}
GENERATED = ("fuzz/corpus/", "~/")


def generated(ref):
    return ref.startswith(GENERATED) or any(part in GENERATED_DIRS for part in ref.rstrip("/").split("/"))
EXTENSIONS = "rs|java|js|mjs|ts|md|py|sh|toml|json|html|css|xml|wasm|tsv|png|yml|yaml"
PATH = re.compile(r"`([A-Za-z0-9_.~/-]+\.(?:" + EXTENSIONS + r")|[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+/?)"
                  r"(?::([A-Za-z_][A-Za-z0-9_]*))?`")
SECTION = re.compile(r'`([A-Za-z0-9_./-]+\.md)`(?:,\s*|\'s\s+|\s+\()"([^"]+)"')


def documents(files):
    docs = [ROOT / "README.md", ROOT / "DEVELOPERS.md"]
    docs += sorted((ROOT / "docs").glob("*.md"))
    docs += [ROOT / str(p) for p in files if p.name == "README.md" and str(p) != "README.md"
             and not str(p).startswith(("tests/consumers/", "node_modules/"))]
    return [d for d in docs if d.exists()]


def headings(path):
    text = path.read_text()
    found = {m.group(1).strip() for m in re.finditer(r"^#+\s+(.+?)\s*$", text, re.M)}
    found |= {m.group(1).strip() for m in re.finditer(r"\*\*([^*]+?)\.?\*\*", text)}
    return found


def resolve(doc, ref):
    """The path `ref` names, from the document's directory or the root; None if neither."""
    for base in (doc.parent, ROOT):
        p = (base / ref).resolve()
        if p.exists():
            return p
    return None


# The limits the documents are held to: (file, most lines, the line by which its text must
# have appeared), so that a reader finds the two commands on the first screen.
LIMITS = [("README.md", 200, "scripts/test.sh      # run every test", 40),
          ("docs/PERFORMANCE.md", 250, "## What the figures mean for you", 20)]


# At most this many sentences of prose under a table of docs/PERFORMANCE.md, before the next
# table or heading: design reasons go beside the code they explain.
MOST_SENTENCES_UNDER_A_TABLE = 3


def prose_under_tables(name="docs/PERFORMANCE.md"):
    broken = []
    parts = re.split(r"^<!-- /perf:([\w-]+) -->$", (ROOT / name).read_text(), flags=re.M)
    for table, after in zip(parts[1::2], parts[2::2]):
        prose = re.split(r"^(?:#|<!-- perf:|\|)", after, maxsplit=1, flags=re.M)[0]
        sentences = len(re.findall(r"[.!?](?:\s|$)", re.sub(r"`[^`]*`|\be\.g\.|\bi\.e\.", "", prose)))
        if sentences > MOST_SENTENCES_UNDER_A_TABLE:
            broken.append(f"{name}: {sentences} sentences under the table {table}, over "
                          f"{MOST_SENTENCES_UNDER_A_TABLE}")
    return broken


def limits():
    broken = prose_under_tables()
    for name, most, text, by in LIMITS:
        lines = (ROOT / name).read_text().splitlines()
        if len(lines) > most:
            broken.append(f"{name}: {len(lines)} lines, over its {most}")
        at = next((i + 1 for i, line in enumerate(lines) if text in line), None)
        if at is None or at > by:
            broken.append(f"{name}: {text!r} is not in its first {by} lines")
    return broken


def main():
    files = tracked()
    names = {p.name for p in files} | {str(p) for p in files}
    broken = limits()
    for doc in documents(files):
        rel = doc.relative_to(ROOT)
        text = doc.read_text()
        # Fenced code is shell and source, not references.
        prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
        for m in PATH.finditer(prose):
            ref, symbol = m.group(1), m.group(2)
            line = prose[: m.start()].count("\n") + 1
            if generated(ref) or "*" in ref or ref.startswith(("http", "-", ".")):
                continue
            if "/" not in ref.rstrip("/"):
                if ref not in names:
                    broken.append(f"{rel}: `{ref}` names no tracked file")
                continue
            path = resolve(doc, ref)
            if path is None:
                broken.append(f"{rel}: `{ref}` does not exist")
            elif symbol and path.is_file() and symbol not in path.read_text():
                broken.append(f"{rel}: `{ref}` has no `{symbol}`")
        for m in SECTION.finditer(prose):
            ref, section = m.group(1), " ".join(m.group(2).split())
            path = resolve(doc, ref)
            if path is None:
                broken.append(f"{rel}: `{ref}` does not exist")
            elif not any(h == section or h.startswith(section + ",") for h in headings(path)):
                broken.append(f'{rel}: `{ref}` has no section "{section}"')
    fail_if(broken, "the documentation names what does not exist, or outgrew its length")
    print(f"docs-check: every reference in {len(documents(files))} documents resolves")


if __name__ == "__main__":
    main()
