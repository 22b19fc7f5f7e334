// Where the topology drawing puts things: clusters in layers by the longest
// mirror path into them, each layer ordered to cross few links, link labels
// in the gap before the later of their two layers. A link that closes a
// cycle (two-way mirroring, a ring) is drawn back against the flow and
// does not count for the layers. One orientation at a time: "main" runs
// along the mirror direction and "cross" across it. A horizontal layout
// too wide for the page wraps its layers into rows.

export const MONO = 7.1; // px per character of the 12px monospace text (DejaVu Sans Mono)
export const BOLD = 8.6; // px per character of a 14px bold cluster name
export const HEAD = 30; // a box's name line
export const LINE = 18; // a box's producer line
export const LABEL_LINE = 17; // a link label's line
const GAP = 22; // between boxes of one layer, and between labels
const CURVE = 34; // the room a link needs to bend into a label
export const MARGIN = 12;
export const ROW_GAP = 36; // between wrapped rows: the way back for links

/**
 * The links that close a cycle: found depth first from the clusters no
 * link enters, then the rest, in scenario order.
 */
function backLinks(clusters, links) {
  const out = new Map();
  for (const l of links) (out.get(l.from) ?? out.set(l.from, []).get(l.from)).push(l);
  const state = new Map(); // 1: on the path, 2: done
  const back = new Set();
  const visit = (start) => {
    // A worklist, not recursion: a 500-cluster chain must not exhaust the stack.
    const stack = [[start, 0]];
    state.set(start, 1);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const next = (out.get(top[0]) ?? [])[top[1]++];
      if (!next) {
        state.set(top[0], 2);
        stack.pop();
      } else if (state.get(next.to) === 1) {
        back.add(next);
      } else if (!state.has(next.to)) {
        state.set(next.to, 1);
        stack.push([next.to, 0]);
      }
    }
  };
  const entered = new Set(links.map((l) => l.to));
  for (const c of clusters) if (!entered.has(c.id) && !state.has(c.id)) visit(c.id);
  for (const c of clusters) if (!state.has(c.id)) visit(c.id);
  return back;
}

/** The layer of each cluster: the longest path of forward links into it. */
function layers(clusters, forward) {
  const depth = new Map(clusters.map((c) => [c.id, 0]));
  for (let pass = 0; pass < clusters.length; pass++) {
    let changed = false;
    for (const l of forward) {
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

/**
 * Lays out clusters, links and labels in one orientation (`vertical` maps
 * main and cross to x and y). Returns the boxes and labels placed, the
 * size, each cluster's layer and each link's label layer, and whether a
 * link runs back.
 */
export function layout(model, vertical) {
  const { clusters, links, boxW, boxH, labelSize } = model;
  const back = backLinks(clusters, links);
  const depth = layers(
    clusters,
    links.filter((l) => !back.has(l)),
  );
  const labelLayer = (l) => Math.max(depth.get(l.from), depth.get(l.to));
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
      const into = links.filter((l) => labelLayer(l) === i);
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

  // Labels: in the gap before the later layer, at the link's middle.
  const labels = new Map();
  for (let i = 1; i < byLayer.length; i++) {
    const items = links
      .filter((l) => labelLayer(l) === i && labelMain(l))
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
    rows: 1,
    layerOf: (id) => depth.get(id),
    labelLayer,
    isBack: (l) => back.has(l),
    rowOf: () => 0,
    layerMain,
    gapBefore,
  };
}

/**
 * A horizontal layout with its layers wrapped into rows of `perRow`, read
 * like text: each row starts with the gap that holds the labels of the
 * links into its first layer, and rows are ROW_GAP apart so that links
 * from one row to the next have a way back to the left.
 */
export function wrapRows(flat, perRow) {
  const n = flat.layerMain.length;
  const rows = Math.ceil(n / perRow);
  const row = (layer) => Math.floor(layer / perRow);
  const rowHeight = flat.height + ROW_GAP;
  const moved = (b, layer) => {
    const first = row(layer) * perRow;
    const dx = first === 0 ? 0 : flat.layerMain[first] - flat.gapBefore[first] - MARGIN;
    return { ...b, x: b.x - dx, y: b.y + row(layer) * rowHeight };
  };
  const boxes = new Map([...flat.boxes].map(([id, b]) => [id, moved(b, flat.layerOf(id))]));
  const labels = new Map([...flat.labels].map(([l, b]) => [l, moved(b, flat.labelLayer(l))]));
  const right = Math.max(...[...boxes.values(), ...labels.values()].map((b) => b.x + b.w));
  return {
    ...flat,
    boxes,
    labels,
    width: right + MARGIN,
    height: rows * rowHeight - ROW_GAP,
    rows,
    rowOf: (layer) => row(layer),
    rowBottom: (r) => r * rowHeight + flat.height,
  };
}

/**
 * The layout to draw in `width` px: the one whose text is drawn largest, up
 * to 80 % of its size (past that, all read alike), and of those the one
 * that takes the least height on the page: left to right, left to right
 * in rows (when that reaches 80 %), or top to bottom.
 */
export function choose(model, width) {
  const across = layout(model, false);
  const scale = (l) => Math.min(1, width / l.width);
  const candidates = [across];
  if (scale(across) < 0.8) {
    // Rows only where they make the text readable: a wide fan-in in rows
    // is as small and harder to follow.
    for (let perRow = across.layerMain.length - 1; perRow >= 2; perRow--) {
      const rows = wrapRows(across, perRow);
      if (scale(rows) >= 0.8) candidates.push(rows);
    }
    candidates.push(layout(model, true));
  }
  const score = (l) => [Math.min(scale(l), 0.8), -l.height * scale(l)];
  let best = candidates[0];
  for (const c of candidates.slice(1)) {
    const [a, b] = [score(c), score(best)];
    if (a[0] > b[0] + 1e-9 || (Math.abs(a[0] - b[0]) <= 1e-9 && a[1] > b[1])) best = c;
  }
  best.scale = scale(best);
  return best;
}
