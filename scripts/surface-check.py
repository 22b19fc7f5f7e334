#!/usr/bin/env python3
"""Checks that the mirrorpid crate's default public surface is the library (the test command
runs it after `cargo doc --no-deps -p mirrorpid`, which builds the docs with no feature).

The slot plumbing and hash seed a host that keeps records in its own buffers builds on
are public only with feature `broker`, and the benchmarks' naive peer only with `peer`:
a Rust user who adds `mirrorpid` sees neither. rustdoc's pages are the surface as a user
sees it, so the check reads them: the items below must be absent, and the library's own
(`Mapper`, its `rewrite`, `Batches::complete`) present, so that a renamed page cannot make
the check pass by finding nothing. Exit status 1, naming each offence, otherwise.
"""
import re
import sys

from repo_checks import ROOT, fail_if

DOC = ROOT / "target" / "doc" / "mirrorpid"

# Items of the crate's index (all.html) that only the features export.
FEATURE_ITEMS = [
    "batch/fn.gather.html",
    "batch/fn.write_back.html",
    "batch/struct.HeaderView.html",
    "batch/constant.WINDOW.html",
    "batch/constant.SLOT_BYTES.html",
    "batch/constant.SLOT_LEN_OFFSET.html",
    "batch/constant.SLOT_CHANGED_OFFSET.html",
    "batch/constant.PRODUCER_ID_OFFSET.html",
    "batch/constant.CRC_OFFSET.html",
    "batch/constant.TRANSACTIONAL.html",
    "mapper/fn.seed_hashing.html",
    "peer/",
]
# Methods, by page, that only feature `broker` makes public.
FEATURE_METHODS = {
    "mapper/struct.Mapper.html": ["rewrite_headers"],
    "mapper/struct.Call.html": ["rewrite_headers"],
    "batch/struct.Batches.html": ["headers"],
}
# What the library is: present, or the pages are not what this check reads.
LIBRARY = {
    "mapper/struct.Mapper.html": ["rewrite", "map", "begin"],
    "mapper/struct.Call.html": ["rewrite"],
    "batch/struct.Batches.html": ["complete"],
}


def methods(page):
    path = DOC / page
    if not path.exists():
        return None
    return set(re.findall(r'id="method\.(\w+)"', path.read_text()))


def main():
    index = DOC / "all.html"
    if not index.exists():
        sys.exit(f"error: {index} is missing: run `cargo doc --no-deps -p mirrorpid` first")
    links = set(re.findall(r'href="([^"]+)"', index.read_text()))
    offences = [
        f"{item} is public without its feature"
        for item in FEATURE_ITEMS
        if any(link == item or (item.endswith("/") and link.startswith(item)) for link in links)
    ]
    for page, names in LIBRARY.items():
        found = methods(page)
        if found is None or page not in links:
            offences.append(f"{page} is not in the docs: the check reads nothing")
            continue
        offences += [f"{page}: method {n} is missing" for n in names if n not in found]
    for page, names in FEATURE_METHODS.items():
        found = methods(page) or set()
        offences += [f"{page}: method {n} is public without feature broker" for n in names if n in found]
    fail_if(offences, "the crate's default public surface holds more than the library")


if __name__ == "__main__":
    main()
