#!/usr/bin/env bash
# Fuzzing with cargo-fuzz (libFuzzer) on a nightly toolchain, installed here
# if missing (versions in wasm-pack.toml). The ABI target loads the broker
# module, so build it first (scripts/build.sh).
#
#   scripts/fuzz.sh smoke [SECONDS]   every target for SECONDS (default 5): the test command's step
#   scripts/fuzz.sh long [RUNS]       every target for RUNS executions (default 10000000),
#                                     the figures for docs/RELIABILITY.md
#   scripts/fuzz.sh long RUNS TARGET  one target
#
# New inputs go to a scratch corpus; fuzz/corpus/ holds the seeds only, and
# fuzz/dicts/<target>.dict a target's dictionary where it has one.
# A crash is saved under fuzz/artifacts/<target>/ and fails the run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
ensure_fuzz_tools
mode=${1:-smoke}
targets=(topic_id records snapshot rewrite scenario abi_calls differential)
case "$mode" in
  smoke) limit=(-max_total_time="${2:-5}") ;;
  long) limit=(-runs="${2:-10000000}"); [ -n "${3:-}" ] && targets=("$3") ;;
  *) echo "usage: scripts/fuzz.sh smoke [SECONDS] | long [RUNS [TARGET]]" >&2; exit 2 ;;
esac
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
log "cargo fuzz build (sanitizer none: the code under test is safe Rust but for one call into x86-64 CRC instructions, which a test holds to the tables)"
(cd fuzz && cargo +nightly fuzz build -s none)
for t in "${targets[@]}"; do
  mkdir -p "$scratch/$t" "fuzz/corpus/$t"
  # A target's dictionary (the tokens of its input format), where it has one.
  dict=()
  [ -f "fuzz/dicts/$t.dict" ] && dict=(-dict="dicts/$t.dict")
  log "fuzz $t (${limit[*]} ${dict[*]})"
  (cd fuzz && cargo +nightly fuzz run -s none "$t" "$scratch/$t" "corpus/$t" -- \
      "${limit[@]}" "${dict[@]}" -timeout=30 -print_final_stats=1 2>&1) |
    grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|panicked|ERROR|SUMMARY|Test unit written' >&2
done
