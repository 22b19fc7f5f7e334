// ESLint for the playground (www/), its tests (tests/e2e/), the Node
// benchmark (benches/node.mjs) and the JS API's own JavaScript (src/js/): the
// recommended rules, with browser globals for the page and Node's for the
// tests. The packages are installed (pinned) in tests/e2e; scripts/test.sh
// runs `npm run lint` there.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(new URL("./tests/e2e/package.json", import.meta.url));
const { default: js } = await import(require.resolve("@eslint/js"));
const { default: globals } = await import(require.resolve("globals"));
// The constants src/js/layout.js (generated from Rust, not linted) declares before the builders' body.
const layout = readFileSync(new URL("./src/js/layout.js", import.meta.url), "utf-8");
const layoutNames = Object.fromEntries([...layout.matchAll(/^const (\w+) =/gm)].map(([, name]) => [name, "readonly"]));

export default [
  { ignores: ["www/pkg/**", "**/node_modules/**", "target/**", "dist/**"] },
  {
    files: ["www/**/*.js"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: globals.browser },
  },
  {
    // A function body after src/js/layout.js: src/js/build.rs makes it a function with `new Function`,
    // and scripts/finish-glue.py puts it in one in wasm-bindgen's glue.
    files: ["src/js/builders.js"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2024, sourceType: "commonjs", globals: layoutNames },
  },
  {
    // Appended to wasm-bindgen's glue (scripts/finish-glue.py), whose PidMapper and wasm it uses.
    files: ["src/js/fast.js"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2024, sourceType: "script", globals: { PidMapper: "readonly", wasm: "readonly" } },
  },
  {
    files: ["tests/e2e/**/*.mjs", "benches/**/*.mjs", "eslint.config.mjs"],
    ...js.configs.recommended,
    languageOptions: { ecmaVersion: 2024, sourceType: "module", globals: { ...globals.node, ...globals.browser } },
  },
];
