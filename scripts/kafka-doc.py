#!/usr/bin/env python3
"""Writes docs/KAFKA.md's tables from the real-Kafka judge's findings.

The judge (jvm/judge, run by `mvn install` in jvm/) writes one JSON file per
topology to jvm/judge/target/judge/. Each table in docs/KAFKA.md sits between
`<!-- judge:NAME -->` and `<!-- /judge:NAME -->` and is replaced by the rows
of NAME.json. With --check, nothing is written and the exit status says
whether the document is current (the test command runs it so).
"""
import json
import pathlib
import sys

from doc_blocks import rewrite

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "KAFKA.md"
FINDINGS = ROOT / "jvm" / "judge" / "target" / "judge"


def cell(text):
    return str(text).replace("|", "\\|")


def table(name):
    path = FINDINGS / f"{name}.json"
    if not path.exists():
        sys.exit(f"error: {path} is missing: run the judge first (cd jvm && mvn -B install)")
    rows = json.loads(path.read_text())
    # A replayed preset's rows end in the simulator's verdict, a judged run's in the oracle's.
    replay = bool(rows) and "simulator" in rows[0]
    last_key = "simulator" if replay else "oracle"
    out = [
        "| scenario | strategy | Kafka's producer entries"
        + (" (epoch/last sequence), cluster by cluster" if replay else " at the destination")
        + " | appends Kafka refused | copies dropped | "
        + ("the simulator's prediction" if replay else "oracle (read_committed)") + " |",
        "|---|---|---|---|---|---|",
    ]
    last = None
    for r in rows:
        scenario = "" if r["scenario"] == last else r["scenario"]
        last = r["scenario"]
        out.append("| " + " | ".join(cell(x) for x in (
            scenario, r["strategy"], r["producers"], r["refused"], r["copies"], r[last_key])) + " |")
    return "\n".join(out) + "\n"


def main():
    rewrite(DOC, "judge", table, "--check" in sys.argv[1:], "python3 scripts/kafka-doc.py")


if __name__ == "__main__":
    main()
