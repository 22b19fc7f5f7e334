#!/usr/bin/env bash
# Every benchmark of docs/PERFORMANCE.md, in the order the page lists them:
# the rewrite beside the naive peer (native, then wasmtime with the
# bench-only module that exports the peer), the mapper, hash flooding,
# scaling, and the JS API in Node. Then the chart (docs/perf-rewrite.svg)
# from criterion's output. Takes about 15 minutes; run it on a quiet machine.
#
#   scripts/bench.sh            everything
#   scripts/bench.sh chart      only redraw the chart from target/criterion
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
if [ "${1:-}" != chart ]; then
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
  log "cargo bench: native, the peer"
  cargo bench --features peer --bench peer
  log "cargo bench: wasmtime"
  cargo bench -p mirrorpid-host --bench wasm
  log "cargo bench: mapper, hash flooding"
  cargo bench --bench mapper
  cargo bench --bench adversary
  log "node: the JS API beside the module's C ABI"
  node benches/node.mjs
fi
log "chart: docs/perf-rewrite.svg"
python3 scripts/perf-chart.py target/criterion docs/perf-rewrite.svg
