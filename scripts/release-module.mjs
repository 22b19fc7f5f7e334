#!/usr/bin/env node
// Writes the broker module as a release artifact (issue 26): into OUT_DIR,
//   mirrorpid_broker-<version>-abi<N>.wasm           the module, byte for byte
//   mirrorpid_broker-<version>-abi<N>.wasm.sha256    its SHA-256, as sha256sum prints it
//   mirrorpid_broker-<version>-abi<N>.json           the manifest a host checks before loading
// The version is the mirrorpid crate's (Cargo.toml, the one place versions
// live); the ABI version is what the module itself answers (mp_abi_version);
// the F version is src/pid.rs's F_VERSION.
//
//   node scripts/release-module.mjs dist/mirrorpid_broker.wasm dist/release
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const [input, outDir] = process.argv.slice(2);
if (!input || !outDir) {
  console.error("usage: node scripts/release-module.mjs MODULE.wasm OUT_DIR");
  process.exit(2);
}

function one(file, pattern, what) {
  const m = readFileSync(path.join(root, file), "utf8").match(pattern);
  if (!m) throw new Error(`${file}: no ${what}`);
  return m[1];
}
const version = one("Cargo.toml", /^\[package\][^[]*?^version = "([^"]+)"/ms, "package version");
const fVersion = Number(one("src/pid.rs", /pub const F_VERSION: u8 = (\d+);/, "F_VERSION"));

const bytes = readFileSync(input);
const module = new WebAssembly.Module(bytes);
const imports = WebAssembly.Module.imports(module);
if (imports.length)
  throw new Error(`${input} imports ${JSON.stringify(imports)}: the broker module must import nothing`);
const instance = new WebAssembly.Instance(module, {});
const abiVersion = instance.exports.mp_abi_version();
const exports = WebAssembly.Module.exports(module)
  .filter((e) => e.kind === "function" || e.kind === "memory")
  .map((e) => e.name)
  .sort();

const name = `mirrorpid_broker-${version}-abi${abiVersion}`;
const sha256 = createHash("sha256").update(bytes).digest("hex");
mkdirSync(outDir, { recursive: true });
for (const old of readdirSync(outDir)) if (old.startsWith("mirrorpid_broker-")) rmSync(path.join(outDir, old));
writeFileSync(path.join(outDir, `${name}.wasm`), bytes);
writeFileSync(path.join(outDir, `${name}.wasm.sha256`), `${sha256}  ${name}.wasm\n`);
const manifest = {
  artifact: `${name}.wasm`,
  version,
  abiVersion,
  fVersion,
  size: bytes.length,
  sha256,
  imports: [],
  exports,
};
writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(manifest, null, 2) + "\n");
console.log(`${outDir}/${name}.wasm: ${bytes.length} bytes, ABI ${abiVersion}, F v${fVersion}, sha256 ${sha256}`);
