#!/usr/bin/env python3
"""Draws docs/perf-rewrite.svg: rewrite cost against batch size for
mirrorpid and the naive peer, natively and in wasmtime, from criterion's
output of `cargo bench --features peer --bench peer` and
`cargo bench -p mirrorpid-host --bench wasm` (scripts/bench.sh runs both).

    python3 scripts/perf-chart.py target/criterion docs/perf-rewrite.svg
"""
import json
import math
import os
import sys

SIZES = [("256B", 256), ("1KiB", 1 << 10), ("4KiB", 4 << 10), ("16KiB", 16 << 10),
         ("64KiB", 64 << 10), ("1MiB", 1 << 20)]
SERIES = [  # (label, criterion group, function prefix, colour, dashed)
    ("mirrorpid, native", "single batch", "mirrorpid", "#1f77b4", False),
    ("naive peer, native", "single batch", "naive", "#d62728", False),
    ("mirrorpid, wasmtime", "single batch (wasmtime)", "mirrorpid wasm", "#1f77b4", True),
    ("naive peer, wasmtime", "single batch (wasmtime)", "naive wasm", "#d62728", True),
]


def median_ns(root, group, function):
    path = os.path.join(root, group, function, "new", "estimates.json")
    with open(path) as f:
        return json.load(f)["median"]["point_estimate"]


def main(root, out):
    data = []
    for label, group, prefix, colour, dashed in SERIES:
        points = []
        for name, size in SIZES:
            try:
                points.append((size, median_ns(root, group, f"{prefix} {name}")))
            except FileNotFoundError:
                pass
        if points:
            data.append((label, colour, dashed, points))
    if not data:
        sys.exit(f"no benchmark results under {root}: run scripts/bench.sh")
    w, h, left, right, top, bottom = 720, 420, 80, 200, 30, 50
    xs = [math.log2(s) for _, s in SIZES]
    ys = [math.log10(ns) for *_, pts in data for _, ns in pts]
    y0, y1 = math.floor(min(ys)), math.ceil(max(ys))
    px = lambda size: left + (math.log2(size) - xs[0]) / (xs[-1] - xs[0]) * (w - left - right)
    py = lambda ns: top + (y1 - math.log10(ns)) / (y1 - y0) * (h - top - bottom)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">Rewrite of one batch: time vs batch size '
           f'(log-log, median of criterion)</text>']
    for e in range(y0, y1 + 1):
        y = py(10 ** e)
        label = ["1 ns", "10 ns", "100 ns", "1 µs", "10 µs", "100 µs", "1 ms", "10 ms"][e] if 0 <= e < 8 else f"1e{e} ns"
        svg.append(f'<line x1="{left}" x2="{w - right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>')
        svg.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
    for name, size in SIZES:
        x = px(size)
        svg.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{h - bottom}" stroke="#eee"/>')
        svg.append(f'<text x="{x:.1f}" y="{h - bottom + 18}" text-anchor="middle">{name}</text>')
    svg.append(f'<text x="{(left + w - right) / 2}" y="{h - 10}" text-anchor="middle">batch size</text>')
    for i, (label, colour, dashed, pts) in enumerate(data):
        path = " ".join(f"{px(s):.1f},{py(ns):.1f}" for s, ns in pts)
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        svg.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for s, ns in pts:
            svg.append(f'<circle cx="{px(s):.1f}" cy="{py(ns):.1f}" r="3" fill="{colour}"/>')
        ly = top + 20 + 22 * i
        svg.append(f'<line x1="{w - right + 15}" x2="{w - right + 45}" y1="{ly}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>')
        svg.append(f'<text x="{w - right + 52}" y="{ly + 4}">{label}</text>')
    svg.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"wrote {out} ({len(data)} series)")


if __name__ == "__main__":
    main(*sys.argv[1:3])
