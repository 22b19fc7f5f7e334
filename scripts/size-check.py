#!/usr/bin/env python3
"""Holds every tracked source file to its size (the test command runs it).

A source file (src, broker, host, cli, abi, jvm/*/src/main, www, scripts,
benches) has at most 450 lines, a test file (tests, host/tests, cli/tests,
jvm/*/src/test, fuzz) at most 600: past that a file holds more than one
idea. The files over their limit today are listed in OVER with the most
lines each may have; one may only shrink (lower its figure when it does, and
drop it once it is within the limit), so that no file grows past the limit
unnoticed. Exit status 1, naming each file, when one is over.
"""
from repo_checks import ROOT, fail_if, tracked
CODE = {".rs", ".java", ".js", ".mjs", ".ts", ".py", ".sh", ".css", ".html"}
SOURCE_LIMIT = 450
TEST_LIMIT = 600

# Files over their limit, with the most lines each may have until it is split (none today:
# a file that grows past its limit is split, or listed here with a reason in its commit).
OVER: dict[str, int] = {}


def is_test(path):
    parts = path.parts
    return (parts[0] in ("tests", "fuzz") or "tests" in parts[:2] or (len(parts) > 2 and parts[0] == "jvm"
            and "src" in parts and "test" in parts))


def main():
    broken = []
    for path in tracked():
        name = str(path)
        if path.suffix not in CODE or (ROOT / name).is_symlink() or not (ROOT / name).exists():
            continue
        if name.startswith(("tests/consumers/", "www/pkg/")) or "/fixtures/" in name:
            continue
        lines = len((ROOT / name).read_text(errors="replace").splitlines())
        limit = OVER.get(name, TEST_LIMIT if is_test(path) else SOURCE_LIMIT)
        if lines > limit:
            broken.append(f"{name}: {lines} lines, over its {limit}")
    for name in OVER:
        if not (ROOT / name).exists():
            broken.append(f"{name} is listed in scripts/size-check.py's OVER but does not exist")
    fail_if(broken, "files over their size (split them; scripts/size-check.py says why)")
    print(f"size-check: every source file within {SOURCE_LIMIT} lines, every test within {TEST_LIMIT}, "
          f"{len(OVER)} listed to shrink")


if __name__ == "__main__":
    main()
