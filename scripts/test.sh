#!/usr/bin/env bash
# Runs every test on a fresh machine, installing what is missing first:
# fmt, clippy, native tests, the WASM builds, the broker module in wasmtime,
# the JVM libraries (Maven: mirrorpid-jvm, mirrorpid-kafka), the real-Kafka judge (jvm/judge:
# real broker processes, Kafka's own UnifiedLog), the JVM library's arm64 native runtime under
# qemu-user, a bounded fuzz smoke run, wasm-pack
# tests in Node and headless Chromium, and the playground's page tests in
# headless Chromium.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
ensure_wasm_target
ensure_wasm_tools
ensure_chromium

log "cargo fmt --check"
cargo fmt --all -- --check
(cd fuzz && cargo fmt -- --check)

log "the documentation names only what exists (paths, symbols, sections), every file keeps its size, no Rust files import each other in a circle"
python3 scripts/docs-check.py
python3 scripts/size-check.py
python3 scripts/import-check.py

log "cargo clippy (workspace, all targets, -D warnings)"
cargo clippy --workspace --all-targets --features js,peer -- -D warnings
# The broker module as it is built (wasm32, its allocator and the peer variant).
cargo clippy -p mirrorpid-broker --target wasm32-unknown-unknown --features peer -- -D warnings

log "cargo doc (the public API's docs link where they say; -D warnings); without features the crate exports the library alone"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p mirrorpid
python3 scripts/surface-check.py
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p mirrorpid -p mirrorpid-host

log "cargo package: the mirrorpid crate as crates.io would receive it (built from the packaged files alone)"
cargo package -p mirrorpid --allow-dirty --quiet

log "the broker module builds from the mapping core alone (no simulator, no wasm-bindgen)"
if cargo tree -p mirrorpid-broker -e normal,features --target wasm32-unknown-unknown |
  grep -E 'wasm-bindgen|mirrorpid feature "(sim|js)"'; then
  echo "error: the broker module pulls in the simulator or wasm-bindgen" >&2
  exit 1
fi

log "the generated 50-cluster preset is what its script writes"
python3 scripts/gen-fleet-preset.py --check

log "native tests: core, broker ABI, command line; the files generated from Rust are what it writes"
cargo test -p mirrorpid -p mirrorpid-abi -p mirrorpid-broker -p mirrorpid-cli --features mirrorpid/js

log "memory per producer at 1 M and 10 M (release build)"
cargo test --release -p mirrorpid --test memory

log "build WASM packages and the broker module"
bash scripts/build.sh

log "broker module in wasmtime (no imports)"
cargo test -p mirrorpid-host --release

log "JVM libraries, and the real-Kafka judge (jvm/: mvn -B install, javac -Xlint:all -Werror, JUnit; Kafka broker processes on 127.0.0.1)"
ensure_maven
(cd jvm && mvn -B --no-transfer-progress install)
python3 scripts/kafka-doc.py --check
python3 scripts/perf-doc.py --check

log "the JVM library's native runtime on arm64 Linux, under qemu-user with Debian's arm64 JRE"
bash scripts/test-arm64.sh

log "fuzz smoke: every target for a few seconds (docs/RELIABILITY.md has the long runs)"
bash scripts/fuzz.sh smoke "${FUZZ_SMOKE_SECONDS:-5}"

log "wasm-pack test --node"
wasm-pack test --node --mode no-install . --features js

log "wasm-pack test --headless --chrome"
WASM_BINDGEN_USE_BROWSER=1 wasm-pack test --headless --chrome \
  --chromedriver "$(manifest get tools.chromedriver)" --mode no-install . --features js

if [ -f tests/e2e/package.json ]; then
  ensure_e2e_modules
  log "eslint and prettier --check on the page and its tests"
  (cd tests/e2e && npm run --silent lint)
  log "tsc --noEmit: the README's JS example, typed, against the generated declarations"
  (cd tests/e2e && npm run --silent typecheck)
  log "Node package and playground page tests (playwright-core + Debian chromium)"
  (cd tests/e2e && node --test --test-concurrency=1 ./*.test.mjs)
  log "the packages installed as their users install them (npm tarball, Maven coordinates)"
  bash scripts/test-consumers.sh
fi
log "all tests passed"
