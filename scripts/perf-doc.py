#!/usr/bin/env python3
"""Writes docs/PERFORMANCE.md's tables from the benchmarks' own output.

The figures live as data in docs/perf/ (one JSON file per source: criterion's
estimates, JMH's results, the Node benchmark's, the instruction counts), each
with the machine and the command that measured it. Each table in
docs/PERFORMANCE.md sits between `<!-- perf:NAME -->` and `<!-- /perf:NAME -->`
and is written from that data alone; with --check nothing is written and the
exit status says whether the document is current (the test command runs it).

  python3 scripts/perf-doc.py                         rewrite the tables
  python3 scripts/perf-doc.py --check                 are they current?
  python3 scripts/perf-doc.py collect criterion DIR   DIR = target/criterion
  python3 scripts/perf-doc.py collect jmh FILE...     JMH's -rf json output (merged)
  python3 scripts/perf-doc.py collect partitions FILE...  PartitionMemory's output, one a mode
  python3 scripts/perf-doc.py collect node FILE       benches/node.mjs --json output
  python3 scripts/perf-doc.py collect instructions FILE
                                                      the host's instructions example --json
"""
import json
import os
import pathlib
import platform
import sys

from doc_blocks import rewrite

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "PERFORMANCE.md"
DATA = ROOT / "docs" / "perf"
SIZES = ["256B", "1KiB", "4KiB", "16KiB", "64KiB", "1MiB"]
SIZE_NAMES = {"256B": "256 B", "1KiB": "1 KiB", "4KiB": "4 KiB", "16KiB": "16 KiB", "64KiB": "64 KiB",
              "1MiB": "1 MiB", "256": "256 B", "1024": "1 KiB", "4096": "4 KiB", "16384": "16 KiB",
              "65536": "64 KiB", "1048576": "1 MiB"}


def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def load(name):
    path = DATA / f"{name}.json"
    if not path.exists():
        sys.exit(f"error: {path} is missing: run the benchmark that writes it (docs/PERFORMANCE.md says which)")
    return json.loads(path.read_text())


def save(name, data):
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / f"{name}.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote docs/perf/{name}.json")


# ---- collecting ---------------------------------------------------------------------------


def collect_criterion(directory):
    results = {}
    for est in pathlib.Path(directory).glob("**/new/estimates.json"):
        bench = json.loads((est.parent / "benchmark.json").read_text())
        e = json.loads(est.read_text())["mean"]
        results[f"{bench['group_id']}/{bench['function_id'] or bench['value_str']}"] = {
            "ns": round(e["point_estimate"], 2),
            "lo": round(e["confidence_interval"]["lower_bound"], 2),
            "hi": round(e["confidence_interval"]["upper_bound"], 2),
        }
    if not results:
        sys.exit(f"error: no criterion estimates under {directory}")
    old = json.loads((DATA / "criterion.json").read_text()) if (DATA / "criterion.json").exists() else {}
    merged = dict(old.get("results", {}))
    merged.update(results)
    save("criterion", {"machine": machine(), "command": "scripts/bench.sh", "results": merged})


def collect_jmh(files):
    old = json.loads((DATA / "jmh.json").read_text()) if (DATA / "jmh.json").exists() else {}
    results = dict(old.get("results", {}))
    jdk = old.get("jdk", "")
    for f in files:
        for r in json.loads(pathlib.Path(f).read_text()):
            ps = dict(r.get("params", {}))
            if r.get("threads", 1) != 1:
                ps["threads"] = r["threads"]
            params = ",".join(f"{k}={v}" for k, v in sorted(ps.items()))
            name = r["benchmark"].rsplit(".", 2)
            key = f"{name[-2]}.{name[-1]}|{params}"
            m = r["primaryMetric"]
            results[key] = {"score": round(m["score"], 3), "error": round(m["scoreError"], 3),
                            "unit": m["scoreUnit"], "forks": r.get("forks", 1)}
            # A paired benchmark's counters, iteration by iteration (every fork's in turn).
            counters = {k: [x for fork in v.get("rawData", []) for x in fork]
                        for k, v in r.get("secondaryMetrics", {}).items() if k.endswith("Ns") or k == "pairs"}
            if "pairs" in counters:
                results[key]["iterations"] = counters
            jdk = f"{r.get('vmName', '')} {r.get('jdkVersion', '')}".strip()
    save("jmh", {"machine": machine(), "jdk": jdk, "command": "scripts/bench-jvm.sh", "results": results})


def collect_node(path):
    data = json.loads(pathlib.Path(path).read_text())
    save("node", {"machine": machine(), "node": data["node"], "command": "node benches/node.mjs --json FILE",
                  "results": data["results"]})


def collect_partitions(paths):
    results = {}
    jdk = ""
    for path in paths:
        r = json.loads(pathlib.Path(path).read_text())
        jdk = r.pop("jdk", jdk)
        results.setdefault(r["mode"], {}).update(r)
    save("partitions", {"machine": machine(), "jdk": jdk, "command": "scripts/bench-jvm.sh partitions",
                        "results": results})


def collect_instructions(path):
    data = json.loads(pathlib.Path(path).read_text())
    save("instructions", {"command": "cargo run --release -p mirrorpid-host --example instructions -- --json",
                          "rows": data["rows"]})


# ---- rendering ----------------------------------------------------------------------------


def fmt_ns(ns):
    if ns >= 1_000_000:
        return f"{ns / 1_000_000:.2f} ms"
    if ns >= 1_000:
        return f"{ns / 1_000:.2f} µs"
    return f"{ns:.1f} ns"


def ratio(a, b):
    """a / b, as a multiple: two decimals, two significant digits below 0.1 (one format in every table)."""
    r = a / b
    return f"{r:.2g}x" if r < 0.095 else f"{r:.2f}x"


def table(header, rows, align=None):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(align or (["---"] + ["---:"] * (len(header) - 1))) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def with_machine(data, body, extra=""):
    return body + f"\nMeasured on {data['machine']}{extra}; `{data['command']}`.\n"


def criterion_pairs(group, ours, peer, cases, peer_name="naive"):
    data = load("criterion")
    r = data["results"]
    rows = []
    for case in cases:
        a = r.get(f"{group}/{ours} {case}")
        b = r.get(f"{group}/{peer} {case}")
        if a is None or b is None:
            continue
        label = SIZE_NAMES.get(case, case)
        rows.append([label, fmt_ns(a["ns"]), fmt_ns(b["ns"]), ratio(a["ns"], b["ns"])])
    return data, rows


def t_native():
    data, rows = criterion_pairs("single batch", "mirrorpid", "naive", SIZES)
    _, more = criterion_pairs("fetch", "mirrorpid", "naive", ["1 batches", "10 batches", "100 batches", "1000 batches"])
    rows += [[f"a fetch of {c[0].split()[0]} × 61 B"] + c[1:] for c in more]
    return with_machine(data, table(["one call of", "mirrorpid", "naive peer", "mirrorpid / naive"], rows))


def t_wasmtime():
    data, rows = criterion_pairs("single batch (wasmtime)", "mirrorpid wasm", "naive wasm", SIZES)
    _, more = criterion_pairs("fetch (wasmtime)", "mirrorpid wasm", "naive wasm",
                              ["1 batches", "10 batches", "100 batches", "1000 batches"])
    rows += [[f"a fetch of {c[0].split()[0]} × 61 B"] + c[1:] for c in more]
    r = data["results"]
    nothing = r.get("fetch (wasmtime)/a call doing nothing (mp_abi_version)")
    extra = f"; a call into the module doing nothing costs {fmt_ns(nothing['ns'])}" if nothing else ""
    return with_machine(data, table(["mp_rewrite of", "mirrorpid", "naive peer (same module)",
                                     "mirrorpid / naive"], rows), extra)


def t_instructions():
    data = load("instructions")
    rows = []
    for r in data["rows"]:
        rows.append([SIZE_NAMES.get(str(r["batch_bytes"]), r["batch_bytes"]), r["idle"], r["empty"], r["one"],
                     r["further"], r["run"], r["mp_rewrite_one"]])
    body = table(["batch", "a call doing nothing", "a call, no batch", "one batch", "each further batch, a producer each",
                  "each further batch of one producer", "mp_rewrite, one batch"], rows)
    return body + f"\nExact on every machine (wasmtime fuel); `{data['command']}`.\n"


def t_node():
    data = load("node")
    r = data["results"]
    rows = []
    for key, what in [("256B", "one batch of 256 B"), ("1KiB", "one batch of 1 KiB"),
                      ("16KiB", "one batch of 16 KiB"), ("64KiB", "one batch of 64 KiB"),
                      ("1MiB", "one batch of 1 MiB"), ("1000x1KiB", "a fetch of 1,000 batches of 1 KiB")]:
        ours, fast, slow = (r[f"{call} {key}"] for call in ("rewriteBatchesInPlace", "naive node-rs", "naive table"))
        rows.append([what, fmt_ns(ours), fmt_ns(r[f"rewriteBatchesInPlace bare {key}"]), fmt_ns(fast),
                     fmt_ns(slow), ratio(ours, fast), ratio(ours, slow)])
    header = ["a call rewriting", "rewriteBatchesInPlace", "the same, `{ outcomes: false }`",
              "naive, @node-rs/crc32", "naive, JS table", "÷ naive, @node-rs/crc32", "÷ naive, JS table"]
    return with_machine(data, table(header, rows), f", Node {data['node']}")


def jmh_find(results, bench, **params):
    """The result of JMH benchmark `bench` whose parameters include `params`."""
    want = {k: str(v) for k, v in params.items()}
    for key, value in results.items():
        name, _, ps = key.partition("|")
        have = dict(p.split("=", 1) for p in ps.split(",") if p)
        if name == bench and all(have.get(k) == v for k, v in want.items()):
            return value
    return None


def t_jvm():
    data = load("jmh")
    r = data["results"]
    rows = []
    cases = [(SIZE_NAMES[s], s, 1) for s in ["256", "1024", "16384", "65536", "1048576"]]
    cases.append(("a fetch of 1000 × 1 KiB", "1024", 1000))
    for label, size, batches in cases:
        naive = jmh_find(r, "RewriteBench.naive", batchBytes=size, batches=batches, mode="NATIVE") or \
            jmh_find(r, "RewriteBench.naive", batchBytes=size, batches=batches)
        if naive is None:
            continue
        row = [label, fmt_ns(naive["score"])]
        for mode in ["NATIVE", "COMPILER"]:
            m = jmh_find(r, "RewriteBench.mirrorpid", batchBytes=size, batches=batches, mode=mode)
            row += [f"{fmt_ns(m['score'])} ({ratio(m['score'], naive['score'])})" if m else "–"]
        rows.append(row)
    extra = []
    for mode in ["NATIVE", "COMPILER"]:
        c = jmh_find(r, "RewriteBench.crossing", mode=mode)
        if c:
            extra.append(f"{mode} {fmt_ns(c['score'])}")
    note = f"; a call doing nothing (mp_pending): {', '.join(extra)}" if extra else ""
    return with_machine(data, table(["one call of", "naive Java", "NATIVE (wasmtime, JNI)",
                                     "COMPILER (Chicory)"], rows), f", {data['jdk']}{note}")


def t_quantile(nu):
    """Student's t for a two-sided 99.9 % interval with `nu` degrees of freedom (JMH's
    interval), by the Cornish-Fisher expansion of the normal quantile."""
    z = 3.2905267
    return z + (z ** 3 + z) / (4 * nu) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * nu ** 2)


def mean_and_error(xs):
    """The mean of `xs` and the half-width of its 99.9 % interval."""
    n = len(xs)
    mean = sum(xs) / n
    sd = (sum((x - mean) ** 2 for x in xs) / (n - 1)) ** 0.5
    return mean, t_quantile(n - 1) * sd / n ** 0.5


def t_mirror():
    data = load("jmh")
    r = data["results"]
    rows = []
    for size in ["1024", "16384", "1048576"]:
        p = jmh_find(r, "MirrorBench.paired", batchBytes=size, **{"from": "source"})
        if not p or "iterations" not in p:
            continue
        it = p["iterations"]
        v = [ns / n / 1000 for ns, n in zip(it["verbatimNs"], it["pairs"])]
        m = [ns / n / 1000 for ns, n in zip(it["mirrorpidNs"], it["pairs"])]
        (vm, ve), (mm, me) = mean_and_error(v), mean_and_error(m)
        share, se = mean_and_error([(b / a - 1) * 100 for a, b in zip(v, m)])
        rows.append([SIZE_NAMES[size], f"{vm:.0f} ± {ve:.0f} µs", f"{mm:.0f} ± {me:.0f} µs",
                     f"{share:+.1f} ± {se:.1f} %"])
    return with_machine(data, table(["batches of", "verbatim", "mirrorpid", "mirrorpid's share"], rows),
                        f", {data['jdk']}")


def t_mapper():
    data = load("criterion")
    r = data["results"]
    rows = []

    def row(label, key, per):
        if key in r:
            rows.append([label, fmt_ns(r[key]["ns"] / per)])

    row("map(), a bound identity, four sources in turn, 1,000 bound", "map/bound identity x1000", 1000)
    row("map(), a bound identity, one source at a time, 1,000 bound",
        "map/bound identity x1000, one source at a time", 1000)
    for n in (1000, 100_000, 1_000_000, 10_000_000):
        row(f"map(), a bound identity, {n:,} bound", f"scale/map bound x1000, {n} bound", 1000)
    for n in (1000, 100_000, 1_000_000, 10_000_000):
        row(f"rewrite, a batch of a 1000-batch fetch, {n:,} bound", f"scale/rewrite 1000 batches, {n} bound", 1000)
    row("replay, a record of a million bindings (decode + load)", "1M bindings/replay records (decode + load)", 1e6)
    row("restore, a binding of a million-binding snapshot", "1M bindings/restore snapshot", 1e6)
    for op, label in (("map new", "map(), a new identity"), ("map bound", "map(), a bound identity"),
                      ("rewrite bound", "rewrite, a batch of a bound identity"),
                      ("restore", "restore, a binding")):
        for kind in ("random PIDs", "adversarial PIDs", "random cluster IDs", "adversarial cluster IDs"):
            row(f"{label}, 100,000 of {kind}", f"100k identities/{op}, {kind}", 100_000)
    return with_machine(data, table(["work", "each"], rows))


def t_partitions():
    data = load("jmh")
    r = data["results"]
    memory = load("partitions")
    modes = ["NATIVE", "COMPILER"]
    rows = []
    m = memory["results"]
    n = next(iter(m.values()))["partitions"]
    rows.append([f"memory a partition ({n:,} partitions): heap + resident outside it"] +
                [f"{(m[x]['heapBytes'] + max(0, m[x]['residentBytes'])) / 1024:.1f} KiB "
                 f"({m[x]['heapBytes'] / 1024:.1f} + {max(0, m[x]['residentBytes']) / 1024:.1f})" for x in modes])
    rows.append(["address space a partition"] + [f"{max(0, m[x]['addressBytes'])} B" for x in modes])

    # The kit's rows give the heap alone: the resident size outside it is
    # Kafka's index files, mapped and touched as its appends go.
    k = m[modes[0]]["loopPartitions"]
    rows.append([f"heap a partition mirrored through MirrorLoop ({k:,} partitions)"] +
                [f"{m[x]['loopHeapBytes'] / 1024:.1f} KiB" for x in modes])
    rows.append(["heap a partition mirrored verbatim (NaiveLoop)"] +
                [f"{m[x]['verbatimHeapBytes'] / 1024:.1f} KiB" for x in modes])

    def per_call(bench, mode, **params):
        found = jmh_find(r, bench, mode=mode, **params)
        return found and (found["score"] if found["unit"] == "ns/op" else 1000 / found["score"])

    for bench, label in [("PartitionsBench.lead", "becoming leader: new mapper, first fetch, confirm"),
                         ("PartitionsBench.restore", "becoming leader from a snapshot of ten producers")]:
        rows.append([label] + [fmt_ns(per_call(bench, x, partitions=1000) or 0) for x in modes])
    for parts in ["1", "1000", "10000"]:
        label = "a fetch of ten batches, one partition" if parts == "1" else \
            f"a fetch of ten batches, round-robin over {int(parts):,}"
        cells = []
        for x in modes:
            t = per_call("PartitionsBench.rewrite", x, partitions=parts)
            one = per_call("PartitionsBench.rewrite", x, partitions="1")
            cells.append("–" if not t else fmt_ns(t) + ("" if parts == "1" else f" ({ratio(t, one)} one)"))
        rows.append([label] + cells)
    for parts in ["1000", "10000"]:
        cells = []
        for x in modes:
            one = jmh_find(r, "PartitionsBench.rewrite", mode=x, partitions=parts)
            two = jmh_find(r, "PartitionsBench.rewrite", mode=x, partitions=parts, threads=2)
            cells.append("–" if not (one and two) else f"{ratio(two['score'], one['score'])} one thread's")
        rows.append([f"two threads, {int(parts):,} partitions: fetches a second"] + cells)
    return with_machine(memory, table(["per partition", "NATIVE (wasmtime, JNI)", "COMPILER (Chicory)"], rows),
                        f", {memory['jdk']}")


TABLES = {
    "partitions": t_partitions,
    "native": t_native,
    "wasmtime": t_wasmtime,
    "instructions": t_instructions,
    "node": t_node,
    "jvm": t_jvm,
    "mirror": t_mirror,
    "mapper": t_mapper,
}


def main():
    args = sys.argv[1:]
    if args[:1] == ["collect"]:
        kind, rest = args[1], args[2:]
        {"criterion": lambda: collect_criterion(rest[0]), "jmh": lambda: collect_jmh(rest),
         "node": lambda: collect_node(rest[0]), "instructions": lambda: collect_instructions(rest[0]),
         "partitions": lambda: collect_partitions(rest)}[kind]()
        return
    unknown = lambda name: sys.exit(f"error: {DOC} names a table this script does not write: {name}")
    rewrite(DOC, "perf", lambda name: TABLES.get(name, lambda: unknown(name))(), "--check" in args,
            "python3 scripts/perf-doc.py")


if __name__ == "__main__":
    main()
