import { start, ready } from "./harness.mjs";
const env = await start();
const page = await env.page();
await page.goto(env.base + "#preset=fan-in"); await ready(page);
const r = await page.evaluate(async () => {
  const clusters = [{ id: "d0" }], links = [];
  for (let i = 0; i < 40; i++) { for (const side of ["l", "r"]) { clusters.push({ id: side + i }); links.push({ from: "d" + i, to: side + i }, { from: side + i, to: "d" + (i + 1) }); } clusters.push({ id: "d" + (i + 1) }); }
  const text = JSON.stringify({ clusters, links, producers: [{ id: "p", cluster: "d0", pid: "5" }], events: [{ type: "produce", producer: "p" }] });
  const m = await import("mirrorpid");
  let t = performance.now(); try { m.simulate(JSON.parse(text)); } catch {} const sim = performance.now() - t;
  document.querySelector("[data-testid=json]").value = text;
  t = performance.now(); document.querySelector("[data-testid=apply-json]").click(); const all = performance.now() - t;
  return { sim, all };
});
console.log(r);
await env.stop();
