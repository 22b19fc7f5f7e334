#!/usr/bin/env node
// Assembles the npm package `mirrorpid` (issue 26) from the two wasm-bindgen
// builds scripts/build.sh made, and packs it with `npm pack`:
//
//   node/   the nodejs build (CommonJS, loads its .wasm with fs), and an ES
//           module over it (index.mjs) whose default export is a no-op
//           init(), so the README's example runs unchanged under Node
//   web/    the web build (an ES module whose init() fetches the .wasm from
//           beside itself: browsers, and bundlers that follow new URL())
//
// `exports` picks one per environment, with the types of each. The version
// is Cargo.toml's. Writes dist/npm/ and dist/mirrorpid-<version>.tgz.
//
//   node scripts/npm-package.mjs dist/node www/pkg dist
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [nodeBuild, webBuild, outDir] = process.argv.slice(2).map((p) => path.resolve(p));
if (!outDir) {
  console.error("usage: node scripts/npm-package.mjs NODE_BUILD WEB_BUILD OUT_DIR");
  process.exit(2);
}
const version = execFileSync("python3", [path.join(root, "scripts/manifest.py"), "version"])
  .toString()
  .trim();
const pkg = path.join(outDir, "npm");
rmSync(pkg, { recursive: true, force: true });
for (const [from, to] of [
  [nodeBuild, "node"],
  [webBuild, "web"],
]) {
  mkdirSync(path.join(pkg, to), { recursive: true });
  for (const f of ["mirrorpid.js", "mirrorpid.d.ts", "mirrorpid_bg.wasm", "mirrorpid_bg.wasm.d.ts"]) {
    copyFileSync(path.join(from, f), path.join(pkg, to, f));
  }
}
// The CommonJS build's names, re-exported as an ES module.
const names = Object.keys(createRequire(import.meta.url)(path.join(pkg, "node", "mirrorpid.js"))).sort();
writeFileSync(
  path.join(pkg, "node", "index.mjs"),
  `// mirrorpid for Node as an ES module: the CommonJS build's exports, and a
// default init() that does nothing (Node loads the .wasm synchronously), so
// code written for the web build runs unchanged.
import m from "./mirrorpid.js";
export const { ${names.join(", ")} } = m;
export default async function init() {}
`,
);
writeFileSync(
  path.join(pkg, "node", "index.d.mts"),
  `export * from "./mirrorpid.js";
/** Does nothing under Node (the module is loaded already); the web build's init() fetches it. */
export default function init(): Promise<void>;
`,
);
const readme = readFileSync(path.join(root, "README.md"), "utf8");
const js = readme.match(/## JavaScript\n\n```js\n([\s\S]*?)```/);
if (!js) throw new Error("README.md has no JavaScript example");
writeFileSync(
  path.join(pkg, "README.md"),
  `# mirrorpid

Per-partition producer-ID mapping for Kafka cross-cluster mirroring: the
Rust core compiled to WebAssembly, for Node (CommonJS and ES modules) and
browsers. Install with \`npm install mirrorpid-${version}.tgz\`, then:

\`\`\`js
${js[1].replace('from "./pkg/mirrorpid.js"', 'from "mirrorpid"')}\`\`\`

Under Node, \`require("mirrorpid")\` gives the same names (no \`init\` needed).
Every error is an \`Error\` whose message starts with the error's name.
`,
);
copyFileSync(path.join(root, "LICENSE"), path.join(pkg, "LICENSE"));
const web = { types: "./web/mirrorpid.d.ts", default: "./web/mirrorpid.js" };
const manifest = {
  name: "mirrorpid",
  version,
  description: readFileSync(path.join(root, "Cargo.toml"), "utf8").match(/^description = "(.*)"$/m)[1],
  license: "Apache-2.0",
  type: "commonjs",
  main: "./node/mirrorpid.js",
  types: "./node/mirrorpid.d.ts",
  browser: "./web/mirrorpid.js",
  exports: {
    ".": {
      node: {
        import: { types: "./node/index.d.mts", default: "./node/index.mjs" },
        require: { types: "./node/mirrorpid.d.ts", default: "./node/mirrorpid.js" },
      },
      browser: web,
      default: web,
    },
    "./web": web,
    "./package.json": "./package.json",
  },
  files: ["node/", "web/", "README.md", "LICENSE"],
  sideEffects: ["./web/mirrorpid.js"],
};
writeFileSync(path.join(pkg, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
const tgz = execFileSync("npm", ["pack", "--silent", "--pack-destination", outDir], { cwd: pkg }).toString().trim();
console.log(`${path.join(outDir, tgz)}: mirrorpid ${version}`);
