#!/usr/bin/env bash
# Builds every WASM artifact named in wasm-pack.toml: the wasm-bindgen
# bundles (www/pkg for the playground, dist/node for Node) and the broker
# module (dist/mirrorpid_broker.wasm), after the files generated from Rust
# (scripts/generate.sh), each optimized with binaryen's
# wasm-opt (the bundles -Oz, the module -O3), and checks the module's size
# budget; the JVM library's native runtime (dist/native/); then the
# module's release artifact (dist/release/: versioned name, SHA-256,
# manifest).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
ensure_wasm_target
ensure_wasm_tools
ensure_wasm_opt

# CI checks the generated files (the native tests) instead of writing them.
if [ "${CI:-}" != true ]; then
  bash scripts/generate.sh
fi

while read -r name target out features; do
  log "wasm-pack build: bundle '$name' ($target -> $out)"
  wasm-pack build --mode no-install --profile "$(manifest get bundle-profile)" \
    --target "$target" --out-dir "$out" --no-pack . -- --features "$features" >&2
  log "wasm-opt -Oz: $out/mirrorpid_bg.wasm"
  wasm_opt "$out/mirrorpid_bg.wasm" "$out/mirrorpid_bg.opt.wasm"
  mv "$out/mirrorpid_bg.opt.wasm" "$out/mirrorpid_bg.wasm"
  python3 scripts/finish-glue.py "$out/mirrorpid.js"
done < <(manifest bundles)

pkg=$(manifest get broker.package)
profile=$(manifest get broker.profile)
out=$(manifest get broker.out)
max=$(manifest get broker.max-bytes)
log "cargo build: broker module ($pkg, profile $profile)"
cargo build -p "$pkg" --target wasm32-unknown-unknown --profile "$profile" >&2
mkdir -p "$(dirname "$out")"
log "wasm-opt ${BROKER_WASM_OPT[*]}: $out"
wasm_opt "target/wasm32-unknown-unknown/$profile/${pkg//-/_}.wasm" "$out" "${BROKER_WASM_OPT[@]}"
# The same build keeping its function names (not shipped), for
# host/tests/module_structure.rs to read the module's call graph.
named="$(dirname "$out")/named/$(basename "$out")"
log "cargo build: the same module with its names ($named)"
CARGO_PROFILE_WASM_STRIP=false cargo build -p "$pkg" --target wasm32-unknown-unknown \
  --profile "$profile" --target-dir target/named >&2
mkdir -p "$(dirname "$named")"
cp "target/named/wasm32-unknown-unknown/$profile/${pkg//-/_}.wasm" "$named"
size=$(stat -c %s "$out")
log "broker module: $out is $size bytes ($((size / 1024)) KiB; budget $((max / 1024)) KiB)"
if [ "$size" -gt "$max" ]; then
  echo "error: $out is $size bytes, over the $max-byte budget (wasm-pack.toml)" >&2
  exit 1
fi
log "cargo build: the JVM library's native runtime (jvm/native: wasmtime behind JNI), $(uname -m)"
cargo build --release -p mirrorpid-jni >&2
native="dist/native/linux-$(uname -m)"
mkdir -p "$native"
# Without its symbols: the jar carries it.
strip -o "$native/libmirrorpid_jni.so" target/release/libmirrorpid_jni.so
if [ "$(uname -m)" = x86_64 ]; then
  # arm64 brokers (Graviton, Ampere) get the native runtime too: cross-built.
  ensure_arm64_cross
  log "cargo build: the native runtime for linux-aarch64 (cross, Debian's aarch64-linux-gnu-gcc links)"
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
    cargo build --release -p mirrorpid-jni --target aarch64-unknown-linux-gnu >&2
  mkdir -p dist/native/linux-aarch64
  aarch64-linux-gnu-strip -o dist/native/linux-aarch64/libmirrorpid_jni.so \
    target/aarch64-unknown-linux-gnu/release/libmirrorpid_jni.so
fi
release=$(manifest get broker.release)
log "release artifact: $release (name with version and ABI, SHA-256, manifest)"
node scripts/release-module.mjs "$out" "$release" >&2
log "jvm/.mvn/maven.config: the Maven build's version, from Cargo.toml"
mkdir -p jvm/.mvn
printf -- '-Drevision=%s\n' "$(python3 scripts/manifest.py version)" > jvm/.mvn/maven.config
log "npm package: dist/mirrorpid-<version>.tgz (node/ and web/ builds, types, README, licence)"
node scripts/npm-package.mjs "$(manifest get bundles.node.out-dir)" "$(manifest get bundles.web.out-dir)" dist >&2
log "the playground installs the npm package as a user would (www/node_modules/mirrorpid)"
rm -rf www/node_modules/mirrorpid
npm install --prefix www --no-save --no-package-lock --no-audit --no-fund --loglevel=error --offline \
  "$ROOT/dist/mirrorpid-$(python3 scripts/manifest.py version).tgz" >&2
