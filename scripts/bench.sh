#!/usr/bin/env bash
# The timed benchmarks of docs/PERFORMANCE.md but the JVM's
# (scripts/bench-jvm.sh): the rewrite beside the naive peer natively and in
# wasmtime (with the bench-only module that exports the peer), the mapper,
# hash flooding and scaling (criterion), and the JS API in Node beside
# the naive Node rewrite. Their
# figures go to docs/perf/ (criterion.json, node.json) and the tables are
# written from them (scripts/perf-doc.py). About 20 minutes; run it on a
# quiet machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
scripts/build.sh
pkg=$(manifest get broker.package)
profile=$(manifest get broker.profile)
log "cargo build: the bench-only module with the naive peer"
cargo build -p "$pkg" --features peer --target wasm32-unknown-unknown --profile "$profile" >&2
mkdir -p dist/bench
wasm_opt "target/wasm32-unknown-unknown/$profile/${pkg//-/_}.wasm" dist/bench/mirrorpid_broker_peer.wasm "${BROKER_WASM_OPT[@]}"
# The peer build shares the target directory with the real module: build
# the real one again so that dist/ and target/ agree.
scripts/build.sh
rm -rf target/criterion
log "cargo bench: native, the peer"
cargo bench --features peer --bench peer
log "cargo bench: wasmtime"
cargo bench -p mirrorpid-host --bench wasm
log "cargo bench: mapper, hash flooding"
cargo bench --bench mapper
cargo bench --bench adversary
python3 scripts/perf-doc.py collect criterion target/criterion
log "node: the JS API beside the naive rewrite a Node user would write (@node-rs/crc32 from npm, and a JS table)"
(cd benches && npm ci --no-audit --no-fund --loglevel=error)
node_json=$(mktemp)
trap 'rm -f "$node_json"' EXIT
node benches/node.mjs --json "$node_json"
python3 scripts/perf-doc.py collect node "$node_json"
python3 scripts/perf-doc.py
