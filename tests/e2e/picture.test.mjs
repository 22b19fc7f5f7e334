// The playground's picture in real headless Chromium: PIDs on the drawing
// under each strategy, a producer's path, the timeline, the cluster-ID
// planner, the 50-cluster fleet, a phone and the keyboard. Expected values
// come from the simulator run in Node (the dist/node package), never from
// strings written here. Screenshots go to tests/e2e/screenshots/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { openAt, overlaps, playground, root, shots } from "./harness.mjs";

const require = createRequire(import.meta.url);
const m = require(`${root}/dist/node/mirrorpid.js`);
const preset = (name) => JSON.parse(readFileSync(`${root}/www/presets/${name}.json`, "utf8"));
const STRATEGIES = ["verbatim", "kip", "mirrorpid"];
const LAPTOP = { width: 1400, height: 1000 };
const PHONE = { width: 390, height: 844 };

const env = playground();

const open = (name, viewport = LAPTOP) => openAt(env, `preset=${name}`, viewport);

/** Every PID label on the drawing: {"from->to": [[producer, pid], ...]}. */
function labels(page) {
  return page.evaluate(() => {
    const out = {};
    for (const g of document.querySelectorAll("#topology .link-label")) {
      out[g.dataset.link] = [...g.querySelectorAll(".pid-pill")].map((p) => [p.dataset.producer, p.dataset.pid]);
    }
    return out;
  });
}

/** The same, from the simulator's report. */
function expectedLabels(report, strategy) {
  const out = {};
  for (const l of report.links) {
    if (l.crossings.length) out[`${l.from}->${l.to}`] = l.crossings.map((c) => [c.producer, c.pid[strategy]]);
  }
  return out;
}

const fill = (page, producer, link) =>
  page
    .locator(`#topology .link-label[data-link="${link}"] .pid-pill[data-producer="${producer}"] rect`)
    .evaluate((r) => getComputedStyle(r).fill);

test("the seed chain's links carry each strategy's PIDs, mapped ones in their region's colour", async () => {
  const report = m.simulate(preset("seed-chain"));
  const page = await open("seed-chain");
  for (const strategy of STRATEGIES) {
    await page.locator(`input[name=strategy][value=${strategy}]`).check();
    const shown = await labels(page);
    assert.deepEqual(shown, expectedLabels(report, strategy), strategy);
    assert.equal(Object.keys(shown).length, 3, "A->B, B->C and C->D are labelled");
    await page.screenshot({ path: `${shots}/labels-${strategy}.png` });
  }
  // mirrorpid: A's producer keeps A's colour all the way down; B's has another.
  const a5 = await Promise.all(["A->B", "B->C", "C->D"].map((l) => fill(page, "a5", l)));
  assert.equal(new Set(a5).size, 1, `a5 keeps one colour: ${a5}`);
  assert.equal(await fill(page, "a0", "C->D"), a5[0], "a0 is from A too: same region, same colour");
  assert.notEqual(await fill(page, "b5", "C->D"), a5[0]);
  assert.deepEqual(page.errors, []);
});

test("a salted PID changes colour at a region collision", async () => {
  const page = await open("region-collision");
  const salted = await fill(page, "p2336", "cluster-2336->dest");
  const first = await fill(page, "p2123", "cluster-2123->dest");
  const sameRegion = await fill(page, "q2336", "cluster-2336->dest");
  assert.equal(sameRegion, first, "cluster-2336's other producer keeps the shared region's colour");
  assert.notEqual(salted, first, "the salted one has its own");
});

test("clicking a producer highlights exactly its path and shows its PID at every hop", async () => {
  const report = m.simulate(preset("seed-chain"));
  const page = await open("seed-chain");
  for (const producer of ["a5", "c5"]) {
    await page.locator(`#topology .producer-line[data-producer="${producer}"]`).click();
    const on = await page.locator("#topology .link.on").evaluateAll((gs) => gs.map((g) => g.dataset.link).sort());
    const expected = report.links
      .filter((l) => l.crossings.some((c) => c.producer === producer))
      .map((l) => `${l.from}->${l.to}`)
      .sort();
    assert.deepEqual(on, expected, producer);
    const dim = await page.locator("#topology .link.dim").count();
    assert.equal(dim, report.links.length - expected.length, `${producer}: every other link is dimmed`);
    const path = report.paths.find((p) => p.producer === producer);
    const clusters = await page.locator("#topology .cluster.on").evaluateAll((gs) => gs.map((g) => g.dataset.cluster));
    assert.deepEqual(clusters.sort(), path.hops.map((h) => h.cluster).sort(), `${producer}: its clusters`);
    const hops = await page
      .getByTestId("hop")
      .evaluateAll((lis) => lis.map((li) => [li.dataset.cluster, li.querySelector(".pid-chip").textContent]));
    assert.deepEqual(
      hops,
      path.hops.map((h) => [h.cluster, h.pid.mirrorpid]),
    );
    await page.screenshot({ path: `${shots}/path-${producer}.png` });
  }
  // Clicking it again clears the highlight.
  await page.locator(`#topology .producer-line[data-producer="c5"]`).click();
  assert.equal(await page.locator("#topology .link.on, #topology .link.dim").count(), 0);
});

test("clicking a cluster lists its partition's producer state", async () => {
  const report = m.simulate(preset("seed-chain"));
  const page = await open("seed-chain");
  await page.locator(`#topology [data-cluster="D"] .cluster-head`).click();
  const D = report.partitions.find((p) => p.cluster === "D");
  for (const strategy of STRATEGIES) {
    await page.locator(`input[name=strategy][value=${strategy}]`).check();
    const rows = await page
      .getByTestId("state-row")
      .evaluateAll((trs) => trs.map((tr) => [tr.cells[0].textContent, tr.classList.contains("shared")]));
    assert.deepEqual(
      rows,
      D.producerState[strategy].map((e) => [e.pid, e.producers.length > 1]),
      strategy,
    );
  }
  assert.ok(
    D.producerState.verbatim.some((e) => e.producers.length > 1),
    "verbatim shares a PID at D",
  );
  await page.screenshot({ path: `${shots}/cluster-D.png` });
});

test("the timeline: counts rise at the first corruption for verbatim and -(pid+2), never for mirrorpid", async () => {
  const scenario = preset("seed-chain");
  const report = m.simulate(scenario);
  const page = await open("seed-chain");
  const n = scenario.events.length;
  const now = async (s) => Number((await page.getByTestId(`now-${s}`).textContent()).match(/\d+$/)[0]);
  const goTo = async (k) => {
    await page.getByTestId("time").fill(String(k));
    await page
      .getByTestId("time-label")
      .filter({ hasText: k ? `After event ${k} of ${n}` : "Before" })
      .waitFor();
  };
  for (const strategy of ["verbatim", "kip"]) {
    // The first marked event is where the simulator's total first rises.
    const marks = await page
      .locator(`[data-testid^=tick-${strategy}-]`)
      .evaluateAll((ts) => ts.map((t) => Number(t.dataset.testid.split("-").pop())));
    const first = report.timeline.findIndex((s) => s.totals[strategy] > 0) + 1;
    assert.ok(first > 0);
    assert.equal(marks[0], first, `${strategy}: first mark`);
    await goTo(first - 1);
    const beforeIt = await now(strategy);
    assert.equal(beforeIt, 0, `${strategy}: clean before event ${first}`);
    await goTo(first);
    assert.ok((await now(strategy)) > beforeIt, `${strategy}: rises at event ${first}`);
    assert.equal(await now(strategy), report.timeline[first - 1].totals[strategy]);
    // The sentences of that event are the simulator's.
    const said = await page.getByTestId("incident").allTextContents();
    const expected = report.timeline[first - 1].incidents.filter((i) => i.strategy === strategy);
    assert.ok(expected.length > 0);
    for (const i of expected)
      assert.ok(
        said.some((t) => t.includes(`at ${i.cluster}: ${i.text}`)),
        i.text,
      );
    await page.screenshot({ path: `${shots}/timeline-${strategy}-${first}.png` });
  }
  // Appends Kafka refuses are said too, marked as refused (loud, not in the totals).
  const refusedAt = report.timeline.findIndex((s) => s.refused.verbatim > 0) + 1;
  assert.ok(refusedAt > 0, "seed-chain: Kafka refuses a local write under verbatim");
  await goTo(refusedAt);
  const refusals = report.timeline[refusedAt - 1].incidents.filter((i) => i.kind === "invalidProducerEpoch");
  assert.ok(refusals.length > 0);
  assert.ok((await page.getByTestId("refused").count()) > 0, "refusals carry the refused chip");
  assert.match(await page.getByTestId("incidents").textContent(), /refused \(InvalidProducerEpochException\)/);
  await page.screenshot({ path: `${shots}/timeline-refused.png` });
  assert.equal(await page.locator("[data-testid^=tick-mirrorpid-]").count(), 0, "no mark for mirrorpid");
  // Step through every event with the buttons: mirrorpid stays at 0.
  await goTo(0);
  for (let k = 1; k <= n; k++) {
    await page.getByTestId("time-next").click();
    await page
      .getByTestId("time-label")
      .filter({ hasText: `After event ${k} of ${n}` })
      .waitFor();
    assert.equal(await now("mirrorpid"), 0, `mirrorpid after event ${k}`);
    assert.equal(await now("verbatim"), report.timeline[k - 1].totals.verbatim, `verbatim after event ${k}`);
  }
  assert.equal(await page.getByTestId("time-next").isDisabled(), true, "the last event is the end");
  // The drawing shows the state of the chosen time: before event 1 nothing crossed.
  await goTo(0);
  assert.equal(await page.locator("#topology .link-label").count(), 0);
  assert.deepEqual(page.errors, []);
});

test("the planner flags the reference vectors' colliding pair and not the others", async () => {
  const page = await open("seed-chain");
  const ids = "# the reference pair and two more\ncluster-2123\nA\ncluster-2336\nB\n";
  await page.getByTestId("plan-ids").fill(ids);
  await page.getByTestId("plan-check").click();
  const rows = await page
    .getByTestId("plan-row")
    .evaluateAll((trs) => trs.map((tr) => [tr.dataset.cluster, tr.classList.contains("shared")]));
  assert.deepEqual(rows, [
    ["cluster-2123", true],
    ["A", false],
    ["cluster-2336", true],
    ["B", false],
  ]);
  const expected = m.planClusters(ids);
  assert.equal(expected.sharedRegions.length, 1);
  assert.match(await page.getByTestId("plan-verdict").textContent(), /cluster-2123 and cluster-2336 \(0x192b06\)/);
  assert.match(await page.getByTestId("plan-probability").textContent(), /of 4 random cluster IDs .* 1 in 700,000/);
  const shown = await page
    .locator("[data-testid=plan-probability] [data-probability]")
    .getAttribute("data-probability");
  assert.equal(Number(shown), expected.sharedRegionProbability);
  // Each ID's region is shown in its colour: the pair's swatches match, A's differs.
  const swatches = await page
    .locator("[data-testid=plan-row] .swatch")
    .evaluateAll((ss) => ss.map((s) => getComputedStyle(s).backgroundColor));
  assert.equal(swatches[0], swatches[2]);
  assert.notEqual(swatches[0], swatches[1]);
  await page.getByTestId("plan-out").screenshot({ path: `${shots}/planner.png` });
  // A fleet without a shared pair says so.
  await page.getByTestId("plan-from-scenario").click();
  assert.match(await page.getByTestId("plan-verdict").textContent(), /No two of these 4 clusters share a region/);
  assert.equal(await page.locator("[data-testid=plan-row].shared").count(), 0);
  // A hostile paste gets the core's clear error.
  await page.getByTestId("plan-ids").fill("x".repeat(40000));
  await page.getByTestId("plan-check").click();
  assert.match(await page.getByTestId("plan-error").textContent(), /cluster ID/i);
  assert.deepEqual(page.errors, []);
});

test("the 50-cluster fleet renders within two seconds, with nothing drawn over anything", async () => {
  const scenario = preset("fleet-50");
  assert.equal(scenario.clusters.length, 50);
  const report = m.simulate(scenario);
  const page = await open("seed-chain");
  const ms = await page.evaluate(async (verbatim) => {
    const t0 = performance.now();
    const select = document.querySelector("[data-testid=preset]");
    select.value = "fleet-50";
    select.dispatchEvent(new Event("change"));
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      const drawn = document.querySelectorAll("#topology .cluster").length === 50;
      const total = document.querySelector("[data-testid=totals-verbatim-total]")?.textContent;
      if (drawn && total === String(verbatim)) return performance.now() - t0;
    }
  }, report.totals.verbatim.total);
  assert.ok(ms < 2000, `rendered in ${ms.toFixed(0)} ms`);
  assert.equal(await page.locator("#topology .link").count(), 48);
  assert.equal(await page.locator("#topology .link-label").count(), 48, "every link is labelled");
  assert.deepEqual(await overlaps(page), []);
  // Readable: the text is drawn at 80 % of its size or more on a laptop.
  const scale = await page.evaluate(() => {
    const svg = document.querySelector("#topology");
    return svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  });
  assert.ok(scale >= 0.8, `scale ${scale}`);
  await page.screenshot({ path: `${shots}/fleet-50.png`, fullPage: true });
  for (const name of ["seed-chain", "diamond", "fan-in", "failover"]) {
    const p = await open(name);
    assert.deepEqual(await overlaps(p), [], name);
  }
});

test("on a phone the whole drawing fits the width, without horizontal scrolling", async () => {
  for (const name of ["seed-chain", "fleet-50", "diamond"]) {
    const page = await open(name, PHONE);
    const fit = await page.evaluate(() => {
      const svg = document.querySelector("#topology").getBoundingClientRect();
      const drawn = document.querySelector("#topology > g.links").parentNode.getBBox();
      return {
        scrollWidth: document.documentElement.scrollWidth,
        left: svg.left,
        right: svg.right,
        viewBoxWidth: document.querySelector("#topology").viewBox.baseVal.width,
        drawnRight: drawn.x + drawn.width,
      };
    });
    assert.ok(fit.scrollWidth <= PHONE.width, `${name}: page ${fit.scrollWidth} px wide`);
    assert.ok(fit.left >= 0 && fit.right <= PHONE.width, `${name}: drawing at ${fit.left}..${fit.right}`);
    assert.ok(fit.drawnRight <= fit.viewBoxWidth + 0.5, `${name}: everything drawn is inside the view box`);
    await page.locator("#topology").screenshot({ path: `${shots}/phone-${name}.png` });
    if (name === "fleet-50") {
      // Fitted, the fleet is small print: the page offers its natural size.
      await page.getByTestId("zoom").click();
      const wrap = await page.locator("#svg-wrap").evaluate((w) => ({ sw: w.scrollWidth, cw: w.clientWidth }));
      assert.ok(wrap.sw > wrap.cw, "zoomed, the drawing scrolls inside its frame");
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= PHONE.width, "the page does not");
    }
    assert.deepEqual(page.errors, [], name);
  }
  const page = await open("seed-chain", PHONE);
  assert.equal(await page.locator("#topology").getAttribute("data-orientation"), "vertical", "a chain reads downwards");
  await page.screenshot({ path: `${shots}/phone-seed-chain-page.png` });
});

test("the drawing and the timeline work from the keyboard", async () => {
  const page = await open("seed-chain");
  await page.locator(`#topology .producer-line[data-producer="b5"]`).focus();
  await page.keyboard.press("Enter");
  assert.match(await page.getByTestId("selection").textContent(), /Producer b5/);
  assert.equal(
    await page.evaluate(() => document.activeElement.dataset.producer),
    "b5",
    "focus stays on the producer after the redraw",
  );
  await page.keyboard.press("Tab");
  assert.ok(await page.evaluate(() => !!document.activeElement.closest("#topology")), "Tab moves through the drawing");
  await page.keyboard.press("Escape");
  assert.match(await page.getByTestId("selection").textContent(), /Click \(or Tab to/);
  await page.locator(`#topology [data-cluster="C"] .cluster-head`).focus();
  await page.keyboard.press(" ");
  assert.match(await page.getByTestId("selection").textContent(), /Partition at C/);
  const n = preset("seed-chain").events.length;
  await page.getByTestId("time").focus();
  await page.keyboard.press("ArrowLeft");
  assert.match(await page.getByTestId("time-label").textContent(), new RegExp(`After event ${n - 1} of ${n}`));
  await page.keyboard.press("Home");
  assert.match(await page.getByTestId("time-label").textContent(), /Before the first/);
  await page.locator("input[name=strategy][value=mirrorpid]").focus();
  await page.keyboard.press("ArrowLeft");
  assert.equal(await page.locator("input[name=strategy]:checked").getAttribute("value"), "kip");
  assert.deepEqual(page.errors, []);
});
