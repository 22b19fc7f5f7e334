// The topology drawing: clusters in columns by their distance from a
// cluster with no incoming link, producers inside, links as arrows.
import { s } from "./dom.js";

/** Draws `scenario`'s clusters, producers and links into `svg`. */
export function drawTopology(svg, scenario) {
  svg.replaceChildren();
  const clusters = scenario.clusters || [];
  const links = (scenario.links || []).filter(
    (l) => clusters.some((c) => c.id === l.from) && clusters.some((c) => c.id === l.to),
  );
  // Column = longest mirror path from a cluster with no incoming link.
  const depth = new Map(clusters.map((c) => [c.id, 0]));
  for (let i = 0; i < clusters.length; i++) {
    for (const l of links) depth.set(l.to, Math.max(depth.get(l.to), depth.get(l.from) + 1));
  }
  const columns = [];
  for (const c of clusters) (columns[Math.min(depth.get(c.id), clusters.length)] ??= []).push(c);
  const producersOf = (id) => (scenario.producers || []).filter((p) => p.cluster === id);
  const W = 170,
    GAP_X = 70,
    GAP_Y = 26,
    HEAD = 30,
    LINE = 17;
  const boxHeight = (c) => HEAD + Math.max(1, producersOf(c.id).length) * LINE + 8;
  const pos = new Map();
  let width = 0,
    height = 0;
  columns.forEach((col, ci) => {
    let y = 10;
    for (const c of col || []) {
      const x = 10 + ci * (W + GAP_X);
      pos.set(c.id, { x, y, h: boxHeight(c) });
      width = Math.max(width, x + W + 10);
      height = Math.max(height, y + boxHeight(c) + 10);
      y += boxHeight(c) + GAP_Y;
    }
  });
  // Natural size (readable text); the wrapper scrolls sideways on a phone.
  svg.setAttribute("viewBox", `0 0 ${Math.max(width, 200)} ${Math.max(height, 60)}`);
  svg.setAttribute("width", Math.max(width, 200));
  svg.setAttribute("height", Math.max(height, 60));
  const defs = s("defs");
  const marker = s("marker", {
    id: "arrow",
    viewBox: "0 0 10 10",
    refX: "9",
    refY: "5",
    markerWidth: "7",
    markerHeight: "7",
    orient: "auto-start-reverse",
  });
  marker.append(s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }));
  defs.append(marker);
  svg.append(defs);
  for (const l of links) {
    const a = pos.get(l.from),
      b = pos.get(l.to);
    const x1 = a.x + W,
      y1 = a.y + a.h / 2,
      x2 = b.x,
      y2 = b.y + b.h / 2;
    let d;
    if (x2 > x1) {
      const mx = (x1 + x2) / 2;
      d = `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2 - 2} ${y2}`;
    } else {
      d = `M ${a.x + W / 2} ${a.y + a.h} C ${a.x + W / 2} ${a.y + a.h + 30}, ${b.x + W / 2} ${b.y - 30}, ${b.x + W / 2} ${b.y - 2}`;
    }
    svg.append(s("path", { d, class: "link", "marker-end": "url(#arrow)" }));
  }
  const destinations = new Set(links.map((l) => l.to));
  for (const c of clusters) {
    const p = pos.get(c.id);
    const g = s("g", {
      class: `cluster${c.writable === false ? " readonly" : ""}${destinations.has(c.id) ? " destination" : ""}`,
      "data-cluster": c.id,
    });
    g.append(s("rect", { x: p.x, y: p.y, width: W, height: p.h, rx: 8 }));
    g.append(
      s(
        "text",
        { x: p.x + 10, y: p.y + 20, class: "cluster-name" },
        c.id + (c.writable === false ? " (read-only)" : ""),
      ),
    );
    const prods = producersOf(c.id);
    if (!prods.length)
      g.append(s("text", { x: p.x + 10, y: p.y + HEAD + 12, class: "producer none" }, "no local producers"));
    prods.forEach((pr, i) => {
      g.append(
        s(
          "text",
          { x: p.x + 10, y: p.y + HEAD + 12 + i * LINE, class: "producer" },
          `${pr.id} · PID ${pr.pid}${pr.epoch ? ` · epoch ${pr.epoch}` : ""}`,
        ),
      );
    });
    svg.append(g);
  }
}
