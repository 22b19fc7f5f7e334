// The topology drawing: clusters in layers by their distance from a cluster
// with no incoming link, producers inside, and on every link the PIDs its
// producers carry into the destination under the chosen strategy, coloured
// by region. Laid out left to right when that fits the width, top to bottom
// when that reads better (a phone); always scaled to fit, never scrolled.
import { s } from "./dom.js";
import { pidStyle } from "./colour.js";

const MONO = 7.1; // px per character of the 12px monospace text (DejaVu Sans Mono)
const BOLD = 8.6; // px per character of a 14px bold cluster name
const HEAD = 30; // a box's name line
const LINE = 18; // a box's producer line
const LABEL_LINE = 17; // a link label's line
const GAP = 22; // between boxes of one layer, and between labels
const CURVE = 34; // the room a link needs to bend into a label
const MARGIN = 12;

/** The layer of each cluster: the longest mirror path into it (links form no cycle). */
function layers(clusters, links) {
  const depth = new Map(clusters.map((c) => [c.id, 0]));
  for (let pass = 0; pass < clusters.length; pass++) {
    let changed = false;
    for (const l of links) {
      const d = depth.get(l.from) + 1;
      if (d > depth.get(l.to)) {
        depth.set(l.to, d);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return depth;
}

/** Orders each layer by the mean position of its neighbours (fewer crossings). */
function order(byLayer, links) {
  const index = new Map();
  const renumber = () => byLayer.forEach((layer) => layer.forEach((id, i) => index.set(id, i)));
  renumber();
  const preds = new Map(),
    succs = new Map();
  for (const l of links) {
    (preds.get(l.to) ?? preds.set(l.to, []).get(l.to)).push(l.from);
    (succs.get(l.from) ?? succs.set(l.from, []).get(l.from)).push(l.to);
  }
  const sortBy = (layer, neighbours) => {
    const key = new Map(
      layer.map((id) => {
        const ns = neighbours.get(id) ?? [];
        return [id, ns.length ? ns.reduce((a, n) => a + index.get(n), 0) / ns.length : index.get(id)];
      }),
    );
    layer.sort((a, b) => key.get(a) - key.get(b) || index.get(a) - index.get(b));
  };
  for (let sweep = 0; sweep < 4; sweep++) {
    for (let i = 1; i < byLayer.length; i++) {
      sortBy(byLayer[i], preds);
      renumber();
    }
    for (let i = byLayer.length - 2; i >= 0; i--) {
      sortBy(byLayer[i], succs);
      renumber();
    }
  }
  return { preds, succs };
}

/**
 * Places items (in order) at their wanted cross positions without overlap:
 * each no closer than GAP to the one before, then the whole run shifted so
 * that, on average, they sit where they wanted.
 */
function spread(items) {
  let end = -Infinity;
  for (const it of items) {
    it.at = Math.max(it.want, end + GAP);
    end = it.at + it.size;
  }
  if (!items.length) return;
  const shift = items.reduce((a, it) => a + it.at - it.want, 0) / items.length;
  for (const it of items) it.at -= shift;
}

/** The label lines of a link under `strategy`: one per producer that crossed it. */
function labelLines(link, strategy) {
  return (link.crossings ?? []).map((c) => ({ producer: c.producer, pid: c.pid[strategy] }));
}

/**
 * Lays out clusters, links and labels in one orientation. Coordinates are
 * "main" (along the mirror direction) and "cross"; `vertical` maps them.
 */
function layout(model, vertical) {
  const { clusters, links, boxW, boxH, labelSize } = model;
  const depth = layers(clusters, links);
  const byLayer = [];
  for (const c of clusters) (byLayer[depth.get(c.id)] ??= []).push(c.id);
  for (let i = 0; i < byLayer.length; i++) byLayer[i] ??= [];
  const { preds, succs } = order(byLayer, links);
  const mainSize = (id) => (vertical ? boxH(id) : boxW);
  const crossSize = (id) => (vertical ? boxW : boxH(id));
  const labelMain = (l) => (vertical ? labelSize(l).h : labelSize(l).w);
  const labelCross = (l) => (vertical ? labelSize(l).w : labelSize(l).h);

  // Main axis: each layer after the gap that holds the labels of links into it.
  const layerMain = [];
  const gapBefore = [];
  let at = MARGIN;
  byLayer.forEach((layer, i) => {
    if (i > 0) {
      const into = links.filter((l) => depth.get(l.to) === i);
      gapBefore[i] = Math.max(70, ...into.map((l) => (labelMain(l) ? labelMain(l) + 2 * CURVE : 0)));
      at += gapBefore[i];
    }
    layerMain[i] = at;
    at += Math.max(0, ...layer.map(mainSize));
  });
  const mainEnd = at + MARGIN;

  // Cross axis: pack, then pull each layer towards its neighbours.
  const cross = new Map();
  const center = (id) => cross.get(id) + crossSize(id) / 2;
  const place = (layer, neighbours) => {
    const items = layer.map((id) => {
      const ns = neighbours?.get(id)?.filter((n) => cross.has(n)) ?? [];
      const want = ns.length
        ? ns.reduce((a, n) => a + center(n), 0) / ns.length - crossSize(id) / 2
        : (cross.get(id) ?? 0);
      return { id, want, size: crossSize(id) };
    });
    spread(items);
    for (const it of items) cross.set(it.id, it.at);
  };
  byLayer.forEach((layer) => place(layer, null));
  for (let i = 1; i < byLayer.length; i++) place(byLayer[i], preds);
  for (let i = byLayer.length - 2; i >= 0; i--) place(byLayer[i], succs);
  for (let i = 1; i < byLayer.length; i++) place(byLayer[i], preds);

  // Labels: in the gap before the destination's layer, at the link's middle.
  const labels = new Map();
  for (let i = 1; i < byLayer.length; i++) {
    const items = links
      .filter((l) => depth.get(l.to) === i && labelMain(l))
      .map((l) => ({ l, want: (center(l.from) + center(l.to)) / 2 - labelCross(l) / 2, size: labelCross(l) }))
      .sort((a, b) => a.want - b.want);
    spread(items);
    for (const it of items) {
      const main = layerMain[i] - gapBefore[i] + (gapBefore[i] - labelMain(it.l)) / 2;
      labels.set(it.l, { main, cross: it.at });
    }
  }
  // Everything starts at MARGIN on the cross axis.
  const starts = [...cross.values(), ...[...labels.values()].map((v) => v.cross)];
  const ends = [
    ...clusters.map((c) => cross.get(c.id) + crossSize(c.id)),
    ...[...labels].map(([l, v]) => v.cross + labelCross(l)),
  ];
  const lo = Math.min(0, ...starts),
    hi = Math.max(60, ...ends);
  const shift = MARGIN - lo;
  const xy = (main, crossAt) => (vertical ? { x: crossAt + shift, y: main } : { x: main, y: crossAt + shift });
  const boxes = new Map(
    clusters.map((c) => {
      const p = xy(layerMain[depth.get(c.id)], cross.get(c.id));
      return [c.id, { ...p, w: boxW, h: boxH(c.id) }];
    }),
  );
  const placed = new Map(
    [...labels].map(([l, v]) => [l, { ...xy(v.main, v.cross), w: labelSize(l).w, h: labelSize(l).h }]),
  );
  const crossEnd = hi + shift + MARGIN;
  return {
    vertical,
    boxes,
    labels: placed,
    width: vertical ? crossEnd : mainEnd,
    height: vertical ? mainEnd : crossEnd,
  };
}

/** Where a link leaves a box or label and where it enters the next. */
function ends(from, to, vertical) {
  if (vertical) {
    return [
      [from.x + from.w / 2, from.y + from.h],
      [to.x + to.w / 2, to.y],
    ];
  }
  return [
    [from.x + from.w, from.y + from.h / 2],
    [to.x, to.y + to.h / 2],
  ];
}

function curve([x1, y1], [x2, y2], vertical, arrow) {
  const end = arrow ? 2 : 0;
  if (vertical) {
    const my = (y1 + y2) / 2;
    return `M ${x1} ${y1} C ${x1} ${my}, ${x2} ${my}, ${x2} ${y2 - end}`;
  }
  const mx = (x1 + x2) / 2;
  return `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2 - end} ${y2}`;
}

/** A focusable, clickable SVG group (Enter and Space act like a click). */
function control(attrs, label, onSelect) {
  const g = s("g", { ...attrs, tabindex: "0", role: "button", "aria-label": label });
  g.addEventListener("click", (e) => {
    e.stopPropagation();
    onSelect();
  });
  g.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      onSelect();
    }
  });
  return g;
}

/**
 * Draws the scenario into `svg`.
 *
 * `links` are the report's links (with what crossed them by the chosen
 * time), or the scenario's when there is no report; `active` says which
 * mirror at that time. `selection` is `{producer}` or `{cluster}` or null;
 * `onSelect` is called with a new one. `width` is the room on the page.
 * `extent` maps "from->to" to the link at the end of the run, whose labels
 * the layout makes room for.
 */
export function drawTopology(svg, { scenario, links, extent, active, strategy, selection, onSelect, width }) {
  svg.replaceChildren();
  const clusters = scenario.clusters || [];
  const known = new Set(clusters.map((c) => c.id));
  links = links.filter((l) => known.has(l.from) && known.has(l.to));
  const producersOf = new Map(clusters.map((c) => [c.id, []]));
  for (const p of scenario.producers || []) producersOf.get(p.cluster)?.push(p);
  const producerText = (p) => `${p.id} · PID ${p.pid}${p.epoch ? ` · epoch ${p.epoch}` : ""}`;
  const boxW = Math.min(
    300,
    Math.max(
      150,
      ...clusters.map((c) => (c.id.length + (c.writable === false ? 12 : 0)) * BOLD + 24),
      ...(scenario.producers || []).map((p) => producerText(p).length * MONO + 24),
    ),
  );
  const boxH = (id) => HEAD + Math.max(1, producersOf.get(id).length) * LINE + 8;
  // Room for every label the whole run draws (`extent`), so stepping
  // through time changes what the labels say, not where things are.
  const size = (lines) => {
    const chars = Math.max(0, ...lines.map((x) => x.producer.length + 1 + x.pid.length));
    return lines.length ? { w: chars * MONO + 16, h: lines.length * LABEL_LINE + 6 } : { w: 0, h: 0 };
  };
  const sizes = new Map(
    links.map((l) => {
      const most = extent.get(`${l.from}->${l.to}`) ?? l;
      const [now, all] = [size(labelLines(l, strategy)), size(labelLines(most, strategy))];
      return [l, { w: Math.max(now.w, all.w), h: Math.max(now.h, all.h) }];
    }),
  );
  const model = { clusters, links, boxW, boxH, labelSize: (l) => sizes.get(l) };
  const across = layout(model, false);
  // Left to right unless it would shrink the text below 80 % and top to
  // bottom shrinks it less.
  let chosen = across;
  const scale = (l) => Math.min(1, width / l.width);
  if (scale(across) < 0.8) {
    const down = layout(model, true);
    if (scale(down) > scale(across)) chosen = down;
  }
  const { boxes, labels, vertical } = chosen;
  svg.setAttribute("viewBox", `0 0 ${chosen.width} ${chosen.height}`);
  svg.setAttribute("width", chosen.width);
  svg.setAttribute("height", chosen.height);
  svg.style.maxWidth = `${chosen.width}px`;
  chosen.scale = scale(chosen);
  svg.dataset.orientation = vertical ? "vertical" : "horizontal";

  const selectedProducer = selection?.producer ?? null;
  const selectedCluster = selection?.cluster ?? null;
  const onPath = (l) => labelLines(l, strategy).some((x) => x.producer === selectedProducer);

  const defs = s("defs");
  for (const [id, cls] of [
    ["arrow", "arrowhead"],
    ["arrow-on", "arrowhead on"],
  ]) {
    const marker = s("marker", {
      id,
      viewBox: "0 0 10 10",
      refX: "9",
      refY: "5",
      markerWidth: "7",
      markerHeight: "7",
      orient: "auto-start-reverse",
    });
    marker.append(s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: cls }));
    defs.append(marker);
  }
  svg.append(defs);

  const linkLayer = s("g", { class: "links" });
  const labelLayer = s("g", { class: "labels" });
  for (const l of links) {
    const on = selectedProducer !== null && onPath(l);
    const dim = selectedProducer !== null && !on;
    const cls = ["link", active(l) ? "" : "inactive", on ? "on" : "", dim ? "dim" : ""].filter(Boolean).join(" ");
    const g = s("g", { class: cls, "data-link": `${l.from}->${l.to}` });
    const a = boxes.get(l.from),
      b = boxes.get(l.to);
    const lines = labelLines(l, strategy).length;
    // The room is for the most lines of the run; the label has what there is now, centred.
    const room = labels.get(l);
    const label =
      room && lines
        ? { ...room, y: room.y + (room.h - (lines * LABEL_LINE + 6)) / 2, h: lines * LABEL_LINE + 6 }
        : null;
    const marker = `url(#${on ? "arrow-on" : "arrow"})`;
    if (label) {
      const [p1, p2] = ends(a, label, vertical);
      const [p3, p4] = ends(label, b, vertical);
      g.append(s("path", { d: curve(p1, p2, vertical, false) }));
      g.append(s("path", { d: curve(p3, p4, vertical, true), "marker-end": marker }));
      labelLayer.append(drawLabel(l, label, { strategy, selectedProducer, onSelect, dim }));
    } else {
      const [p1, p2] = ends(a, b, vertical);
      g.append(s("path", { d: curve(p1, p2, vertical, true), "marker-end": marker }));
    }
    linkLayer.append(g);
  }
  svg.append(linkLayer);

  const destinations = new Set(links.filter(active).map((l) => l.to));
  const reached = new Set(links.filter(onPath).map((l) => l.to));
  for (const c of clusters) {
    const p = boxes.get(c.id);
    const mine = (producersOf.get(c.id) ?? []).some((pr) => pr.id === selectedProducer);
    const cls = [
      "cluster",
      c.writable === false ? "readonly" : "",
      destinations.has(c.id) ? "destination" : "",
      selectedCluster === c.id ? "selected" : "",
      selectedProducer !== null && (mine || reached.has(c.id)) ? "on" : "",
      selectedProducer !== null && !mine && !reached.has(c.id) ? "dim" : "",
    ];
    const g = s("g", { class: cls.filter(Boolean).join(" "), "data-cluster": c.id });
    const head = control({ class: "cluster-head" }, `cluster ${c.id}: show its partition's producer state`, () =>
      onSelect(selectedCluster === c.id ? null : { cluster: c.id }),
    );
    head.append(s("rect", { x: p.x, y: p.y, width: p.w, height: p.h, rx: 8 }));
    head.append(
      s(
        "text",
        { x: p.x + 10, y: p.y + 20, class: "cluster-name" },
        c.id + (c.writable === false ? " (read-only)" : ""),
      ),
    );
    g.append(head);
    const prods = producersOf.get(c.id);
    if (!prods.length)
      g.append(s("text", { x: p.x + 10, y: p.y + HEAD + 12, class: "producer none" }, "no local producers"));
    prods.forEach((pr, i) => {
      const line = control(
        {
          class: `producer-line${pr.id === selectedProducer ? " selected" : ""}`,
          "data-producer": pr.id,
        },
        `producer ${pr.id}: highlight its path`,
        () => onSelect(pr.id === selectedProducer ? null : { producer: pr.id }),
      );
      const y = p.y + HEAD + i * LINE;
      line.append(s("rect", { x: p.x + 4, y: y - 1, width: p.w - 8, height: LINE - 1, rx: 4 }));
      line.append(s("text", { x: p.x + 10, y: y + 12, class: "producer" }, producerText(pr)));
      g.append(line);
    });
    svg.append(g);
  }
  svg.append(labelLayer);
  return chosen;
}

function drawLabel(l, box, { strategy, selectedProducer, onSelect, dim }) {
  const lines = labelLines(l, strategy);
  const g = s("g", { class: `link-label${dim ? " dim" : ""}`, "data-link": `${l.from}->${l.to}` });
  g.append(s("rect", { x: box.x, y: box.y, width: box.w, height: box.h, rx: 6, class: "label-bg" }));
  lines.forEach((line, i) => {
    const style = pidStyle(line.pid);
    const y = box.y + 3 + i * LABEL_LINE;
    const item = control(
      {
        class: `pid-pill ${style.kind}${
          selectedProducer === null ? "" : line.producer === selectedProducer ? " selected" : " other"
        }`,
        "data-producer": line.producer,
        "data-pid": line.pid,
        style: `--pill-bg: ${style.background}; --pill-ink: ${style.ink}; --pill-edge: ${style.edge}`,
      },
      `${line.producer}'s PID ${line.pid} into ${l.to}`,
      () => onSelect(line.producer === selectedProducer ? null : { producer: line.producer }),
    );
    item.append(s("rect", { x: box.x + 3, y, width: box.w - 6, height: LABEL_LINE - 2, rx: 4 }));
    const text = s("text", { x: box.x + 8, y: y + 11.5, class: "pill-text" });
    text.append(
      s("tspan", { class: "pill-producer" }, `${line.producer} `),
      s("tspan", { class: "pill-pid" }, line.pid),
    );
    item.append(text);
    g.append(item);
  });
  return g;
}
