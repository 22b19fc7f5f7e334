import { start, ready } from "./harness.mjs";
import { readFileSync } from "node:fs";
const root = new URL("../..", import.meta.url).pathname;
const env = await start();
const names = JSON.parse(readFileSync(`${root}/www/presets/index.json`, "utf8"));
const chain = (n) => {
  const ids = [..."ABCDEFGH"].slice(0, n);
  return { name: `chain of ${n}`, clusters: ids.map((id) => ({ id })), links: ids.slice(1).map((id, i) => ({ from: ids[i], to: id })),
    producers: ids.map((c) => ({ id: c.toLowerCase() + "5", cluster: c, pid: "5" })),
    events: ids.map((c) => ({ type: "produce", producer: c.toLowerCase() + "5", count: 1 })) };
};
const which = process.argv.slice(2);
for (const [vname, vp] of [["laptop", { width: 1280, height: 800 }], ["phone", { width: 390, height: 844 }]]) {
  for (const name of [...names, "chain5", "chain8"]) {
    if (which.length && !which.includes(name)) continue;
    const page = await env.page(vp);
    if (name.startsWith("chain")) {
      const s = encodeURIComponent(JSON.stringify(chain(Number(name.slice(5)))));
      await page.goto(`${env.base}#preset=seed-chain`); await ready(page);
      await page.getByTestId("json").evaluate((t, v) => { t.value = v; }, JSON.stringify(chain(Number(name.slice(5)))));
      await page.locator("details.json-editor summary").click();
      await page.getByTestId("apply-json").click();
    } else {
      await page.goto(`${env.base}#preset=${name}`); await ready(page);
    }
    await page.waitForTimeout(200);
    await page.screenshot({ path: `/tmp/shots/${vname}-${name}.png`, fullPage: true });
    await page.locator(".topology-panel").screenshot({ path: `/tmp/shots/topo-${vname}-${name}.png` });
    if (page.errors.length) console.log(name, page.errors);
    await page.close();
  }
}
await env.stop();
