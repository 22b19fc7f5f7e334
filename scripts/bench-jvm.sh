#!/usr/bin/env bash
# The JVM benchmark (JMH, jvm/bench): mirrorpid's header rewrite through the
# module on Chicory, in each of its modes (run-time compiler, build-time
# compiler, interpreter), beside the naive Java rewrite (PID at offset 43,
# CRC-32C recomputed with Kafka's Crc32C), in one run. With `mirror`,
# the end-to-end mirror instead (MirrorBench: a 1 MiB fetch, landed in a
# buffer or fetched from a real broker process on loopback, through the
# MirrorLoop into Kafka's UnifiedLog, verbatim beside mirrorpid, and the
# rewrite's share). With `count`, no timing: how many WebAssembly
# instructions one header rewrite runs (or, with --bytes, one mp_rewrite),
# by function (InstructionCount). The timed groups also measure one call
# doing nothing (RewriteBench.crossing), the fixed cost of any call.
# Prints JMH's tables; docs/PERFORMANCE.md quotes them. Not part of the test
# command.
#
# With `jni`, the module on wasmtime through wasmtime-java's JNI binding
# (WasmtimeJniBench, the bench module's wasmtime-jni profile, which downloads
# it) beside Chicory and the naive rewrite, in one run.
#
#   scripts/bench-jvm.sh [mirror|jni] [extra JMH arguments]
#   scripts/bench-jvm.sh count [--one-producer] [--bytes] [BATCHES...]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
[ -f dist/mirrorpid_broker.wasm ] || bash scripts/build.sh
(cd jvm && mvn -B -q install -DskipTests)
profile=()
if [ "${1:-}" = jni ]; then
  profile=(-Pwasmtime-jni)
  (cd jvm/bench && mvn -B -q "${profile[@]}" compile)
fi
cp_file=$(mktemp)
trap 'rm -f "$cp_file"' EXIT
(cd jvm/bench && mvn -B -q "${profile[@]}" dependency:build-classpath -Dmdep.outputFile="$cp_file")
cp="jvm/bench/target/classes:$(cat "$cp_file")"
if [ "${1:-}" = jni ]; then
  shift
  log "JMH: one batch of each size and fetches of 1000, Chicory and wasmtime-java beside the naive rewrite"
  java -cp "$cp" org.openjdk.jmh.Main \
    'RewriteBench.(mirrorpid|naive|crossing)$|WasmtimeJniBench' -p batchBytes=256,1024,16384,1048576 \
    -p batches=1 -p mode=COMPILER "$@"
  java -cp "$cp" org.openjdk.jmh.Main 'RewriteBench.(mirrorpid|naive)$|WasmtimeJniBench.mirrorpid' \
    -p batchBytes=256,1024 -p batches=1000 -p mode=COMPILER "$@"
  # The next plain build compiles the bench module without it again.
  (cd jvm/bench && mvn -B -q clean)
  exit 0
fi
if [ "${1:-}" = count ]; then
  shift
  # The module with its names, optimised as the shipped one is.
  named=$(mktemp --suffix=.wasm)
  trap 'rm -f "$cp_file" "$named"' EXIT
  wasm_opt dist/named/mirrorpid_broker.wasm "$named" "${BROKER_WASM_OPT[@]}" -g
  log "WebAssembly instructions a header rewrite runs (Chicory's interpreter counting)"
  java -cp "$cp" dev.mirrorpid.bench.InstructionCount "$named" "$@"
  exit 0
fi
if [ "${1:-}" = mirror ]; then
  shift
  log "JMH: end-to-end mirror of a 1 MiB fetch into Kafka's UnifiedLog, landed and from a real broker"
  exec java -cp "$cp" org.openjdk.jmh.Main MirrorBench "$@"
fi
sizes="batchBytes=256,1024,4096,16384,65536,1048576"
log "JMH: one batch of each size, the compiled modes beside the naive rewrite"
java -cp "$cp" org.openjdk.jmh.Main 'RewriteBench.(mirrorpid|naive)$' -p "$sizes" -p batches=1 \
  -p mode=COMPILER,BUILD_TIME "$@"
log "JMH: one call into the module doing nothing (mp_pending), the compiled modes"
java -cp "$cp" org.openjdk.jmh.Main 'RewriteBench.crossing$' -p batchBytes=256 -p batches=1 \
  -p mode=COMPILER,BUILD_TIME "$@"
log "JMH: the interpreter, at the smallest and the largest size"
java -cp "$cp" org.openjdk.jmh.Main 'RewriteBench.mirrorpid' -p batchBytes=256,1048576 -p batches=1 \
  -p mode=INTERPRETER "$@"
log "JMH: fetches of 1, 10, 100, 1000 batches of 256 bytes, compiled modes"
java -cp "$cp" org.openjdk.jmh.Main 'RewriteBench.(mirrorpid|naive)$' -p batchBytes=256 -p batches=1,10,100,1000 \
  -p mode=COMPILER,BUILD_TIME "$@"
