// The topology drawing: clusters in layers (js/layout.js), producers
// inside, and on every link the PIDs its producers carry into the
// destination under the chosen strategy, coloured by region. Laid out left
// to right when that fits the width, in rows when a long chain does not,
// top to bottom when that reads better (a phone); scaled to fit. A link
// against the flow (two-way mirroring) is drawn back beside its partner.
import { s } from "./dom.js";
import { pidStyle } from "./colour.js";
import { BOLD, HEAD, LABEL_LINE, LINE, MONO, ROW_GAP, choose } from "./layout.js";

/** The label lines of a link under `strategy`: one per producer that crossed it. */
function labelLines(link, strategy) {
  return (link.crossings ?? []).map((c) => ({ producer: c.producer, pid: c.pid[strategy] }));
}

const BACK = 9; // how far beside the middle a link against the flow attaches

/**
 * Where a link leaves box `from` and enters box `to` (a box or a label):
 * with the flow, from the far side into the near side; against it, from
 * the near side back into the far side, a little beside the middle.
 */
function ends(from, to, vertical, back) {
  const off = back ? BACK : 0;
  if (vertical) {
    return back
      ? [
          [from.x + from.w / 2 + off, from.y],
          [to.x + to.w / 2 + off, to.y + to.h],
        ]
      : [
          [from.x + from.w / 2, from.y + from.h],
          [to.x + to.w / 2, to.y],
        ];
  }
  return back
    ? [
        [from.x, from.y + from.h / 2 + off],
        [to.x + to.w, to.y + to.h / 2 + off],
      ]
    : [
        [from.x + from.w, from.y + from.h / 2],
        [to.x, to.y + to.h / 2],
      ];
}

function curve([x1, y1], [x2, y2], vertical, arrow) {
  if (vertical) {
    const end = arrow ? Math.sign(y2 - y1) * 2 : 0;
    const my = (y1 + y2) / 2;
    return `M ${x1} ${y1} C ${x1} ${my}, ${x2} ${my}, ${x2} ${y2 - end}`;
  }
  const end = arrow ? Math.sign(x2 - x1) * 2 : 0;
  const mx = (x1 + x2) / 2;
  return `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2 - end} ${y2}`;
}

/**
 * A link from a box at the end of one row to a box or label at the start
 * of a later row: down into the gap below the source's row, back to the
 * left, and down into the target's side.
 */
function wrapped(from, to, gapY, arrow) {
  const [x1, y1] = [from.x + from.w / 2, from.y + from.h];
  const [x2, y2] = [to.x, to.y + to.h / 2];
  const xin = Math.max(4, x2 - 16);
  return `M ${x1} ${y1} L ${x1} ${gapY} L ${xin} ${gapY} L ${xin} ${y2} L ${x2 - (arrow ? 2 : 0)} ${y2}`;
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
  const chosen = choose(model, width);
  const { boxes, labels, vertical } = chosen;
  svg.setAttribute("viewBox", `0 0 ${chosen.width} ${chosen.height}`);
  svg.setAttribute("width", chosen.width);
  svg.setAttribute("height", chosen.height);
  svg.style.maxWidth = `${chosen.width}px`;
  svg.dataset.orientation = vertical ? "vertical" : "horizontal";
  svg.dataset.rows = String(chosen.rows);

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
    const back = chosen.isBack(l);
    // One leg: from box p to box q (either may be the label), an arrow at the end or not.
    const leg = (p, q, arrow, pLayer, qLayer) => {
      const [r1, r2] = [chosen.rowOf(pLayer), chosen.rowOf(qLayer)];
      const d =
        r1 !== r2 && !back
          ? wrapped(p, q, chosen.rowBottom(r1) + ROW_GAP / 2, arrow)
          : curve(...ends(p, q, vertical, back), vertical, arrow);
      g.append(s("path", arrow ? { d, "marker-end": marker } : { d }));
    };
    const [fromLayer, toLayer] = [chosen.layerOf(l.from), chosen.layerOf(l.to)];
    if (label) {
      const at = chosen.labelLayer(l);
      leg(a, label, false, fromLayer, at);
      leg(label, b, true, at, toLayer);
      labelLayer.append(drawLabel(l, label, { strategy, selectedProducer, onSelect, dim }));
    } else {
      leg(a, b, true, fromLayer, toLayer);
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
