// Serves this folder (with the installed package in node_modules) on
// 127.0.0.1, opens it in Debian's Chromium through playwright-core, and
// checks that the page mapped a PID with the package. Stops both after.
//
//   node run.mjs PLAYWRIGHT_CORE_DIR
import assert from "node:assert";
import { createReadStream, existsSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";

const { chromium } = createRequire(import.meta.url)(path.resolve(process.argv[2]));
const here = process.cwd();
const types = { ".html": "text/html", ".js": "text/javascript", ".wasm": "application/wasm" };
const server = createServer((req, res) => {
  const file = path.join(here, decodeURIComponent(new URL(req.url, "http://x").pathname));
  if (!file.startsWith(here) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  const target = file.endsWith("/") ? path.join(file, "index.html") : file;
  res.writeHead(200, { "content-type": types[path.extname(target)] ?? "application/octet-stream" });
  createReadStream(target).pipe(res);
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/index.html`);
  await page.waitForFunction(() => document.body.dataset.mapped || document.body.dataset.error, null, {
    timeout: 20000,
  });
  assert.equal(await page.evaluate(() => document.body.dataset.error), undefined);
  assert.equal(await page.evaluate(() => document.body.dataset.mapped), "8373639764095533061");
  console.log("browser: the page mapped A's 5 with the installed package");
} finally {
  await browser.close();
  server.close();
}
