// Shared set-up for the page tests: serves www/ with scripts/serve.py on a
// free loopback port and launches Debian's Chromium through playwright-core
// (never a downloaded browser), with the flags DEVELOPERS.md lists.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { before, after } from "node:test";

const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "../..");
export const shots = path.join(here, "screenshots");
mkdirSync(shots, { recursive: true });

export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

async function waitFor(url, ms = 15000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

/** Debian's Chromium, or `$CHROMIUM`. */
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

export async function start() {
  const port = await freePort();
  const server = spawn("python3", [path.join(root, "scripts/serve.py"), "--port", String(port)], { stdio: "ignore" });
  const base = `http://127.0.0.1:${port}/`;
  let browser;
  try {
    await waitFor(base + "node_modules/mirrorpid/web/mirrorpid.js");
    if (!existsSync(CHROMIUM)) {
      throw new Error(`no Chromium at ${CHROMIUM}: scripts/test.sh installs Debian's chromium, or set CHROMIUM to one`);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
  } catch (e) {
    // The server would keep the test process alive after the failed hook.
    server.kill();
    throw e;
  }
  return {
    base,
    browser,
    async page(viewport = { width: 1400, height: 1000 }) {
      const page = await browser.newPage({ viewport });
      const errors = [];
      page.on("pageerror", (e) => errors.push(String(e)));
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      page.errors = errors;
      return page;
    },
    async stop() {
      await browser.close();
      server.kill();
    },
  };
}

export async function ready(page) {
  await page.waitForSelector("body[data-ready=true]", { timeout: 20000 });
}

/** Pairs of cluster boxes and link labels drawn over each other ("A / B->C"). */
export function overlaps(page) {
  return page.evaluate(() => {
    const boxes = [...document.querySelectorAll("#topology .cluster-head rect, #topology .label-bg")].map((r) => {
      const b = r.getBBox();
      const name = r.closest("[data-cluster]")?.dataset.cluster ?? r.closest("[data-link]").dataset.link;
      return { name, x: b.x, y: b.y, width: b.width, height: b.height };
    });
    const out = [];
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i],
          b = boxes[j];
        if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) {
          out.push(`${a.name} / ${b.name}`);
        }
      }
    }
    return out;
  });
}

/**
 * The playground served and a browser running for the tests of one file:
 * started before its first test, stopped after its last.
 */
export function playground() {
  const env = {};
  before(async () => Object.assign(env, await start()));
  after(async () => env.stop?.());
  return env;
}

/** A page of `env` at `viewport`, opened at `#hash` and ready. */
export async function openAt(env, hash, viewport) {
  const page = await env.page(viewport);
  await page.goto(`${env.base}#${hash}`);
  await ready(page);
  return page;
}

/**
 * Counts, from now on, the calls of the exports named in `names` of every
 * WebAssembly instance this process (or page, through `addInitScript`)
 * makes: an instance's `exports` read as a copy whose named functions count
 * into the object returned (also `globalThis.exportCalls`). The package is
 * untouched; a name no instance exports keeps its count at 0. Serialisable:
 * it reads nothing but its argument and globals.
 */
export function countExportCalls(names) {
  const calls = Object.fromEntries(names.map((name) => [name, 0]));
  const proto = WebAssembly.Instance.prototype;
  const exportsOf = Object.getOwnPropertyDescriptor(proto, "exports").get;
  const copies = new WeakMap();
  Object.defineProperty(proto, "exports", {
    configurable: true,
    get() {
      if (!copies.has(this)) {
        const real = exportsOf.call(this);
        const copy = { ...real };
        for (const name of names) {
          const f = real[name];
          if (typeof f !== "function") continue;
          copy[name] = function (...args) {
            calls[name] += 1;
            return f.apply(this, args);
          };
        }
        copies.set(this, copy);
      }
      return copies.get(this);
    },
  });
  globalThis.exportCalls = calls;
  return calls;
}
