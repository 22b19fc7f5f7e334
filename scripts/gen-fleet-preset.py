#!/usr/bin/env python3
"""Writes www/presets/fleet-50.json: a fleet of 50 clusters, the playground's
large-topology preset (its layout and speed are tested on it).

Eight regions of five edge clusters each mirror into their region's
aggregate; two global clusters mirror four aggregates each. Every edge
cluster has producers allocated from 0, as Kafka allocates them, so the
verbatim and -(pid+2) strategies corrupt producer state at every aggregate.

    python3 scripts/gen-fleet-preset.py           # write the preset
    python3 scripts/gen-fleet-preset.py --check   # fail if the file differs
"""
import json
import pathlib
import sys

REGIONS = ["us-east", "us-west", "eu-west", "eu-central", "ap-south", "ap-east", "sa-east", "af-south"]
EDGES = 5


def fleet():
    clusters, links, producers, events = [], [], [], []
    for gi, glob in enumerate(["global-1", "global-2"]):
        for region in REGIONS[gi * 4 : gi * 4 + 4]:
            agg = f"{region}-agg"
            for e in range(1, EDGES + 1):
                edge = f"{region}-{e}"
                clusters.append({"id": edge})
                links.append({"from": edge, "to": agg})
                for pid in range(2 if e == 1 else 1):
                    name = f"{edge}/p{pid}"
                    producers.append({"id": name, "cluster": edge, "pid": str(pid), "epoch": e % 3})
                    events.append({"type": "produce", "producer": name, "count": 2})
            clusters.append({"id": agg, "writable": False})
            links.append({"from": agg, "to": glob})
        clusters.append({"id": glob, "writable": False})
    return {
        "name": "A fleet of 50 clusters",
        "description": (
            "Eight regions of five edge clusters mirror into their region's aggregate, and two global "
            "clusters mirror four aggregates each. Every edge allocates PIDs from 0, so verbatim mirroring "
            "makes each aggregate's PID 0 one producer shared by five clusters, and -(pid+2) takes every "
            "mirrored batch out of producer state. mirrorpid keeps all 48 producers apart at every hop."
        ),
        "clusters": clusters,
        "links": links,
        "producers": producers,
        "events": events,
    }


def main():
    path = pathlib.Path(__file__).resolve().parent.parent / "www" / "presets" / "fleet-50.json"
    text = json.dumps(fleet(), indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        if not path.exists() or path.read_text() != text:
            sys.exit(f"{path} is not what scripts/gen-fleet-preset.py writes: run it")
        return
    path.write_text(text)


if __name__ == "__main__":
    main()
