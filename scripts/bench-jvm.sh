#!/usr/bin/env bash
# The JVM benchmarks (JMH, jvm/bench), each beside its peer in one run, their
# results written to docs/perf/jmh.json (scripts/perf-doc.py collect jmh),
# from which docs/PERFORMANCE.md's JVM tables are written:
#
#   scripts/bench-jvm.sh            RewriteBench: mirrorpid-jvm's rewrite in each
#                                   runtime (NATIVE, COMPILER, BUILD_TIME, INTERPRETER)
#                                   beside the naive Java rewrite (PID written,
#                                   Crc32C recomputed), one batch of each size and a
#                                   fetch of 1000; and a call doing nothing
#   scripts/bench-jvm.sh mirror     MirrorBench: a real Fetch from a real broker
#                                   process on loopback through MirrorLoop into
#                                   Kafka's UnifiedLog, verbatim beside mirrorpid in
#                                   every invocation (paired), three forks
#   scripts/bench-jvm.sh partitions PartitionsBench: 1, 1,000 and 10,000 partitions of
#                                   ten producers on one MirrorPid (two instances),
#                                   NATIVE and COMPILER: a fetch of ten batches
#                                   round-robin over them on one thread and on two,
#                                   becoming leader (new, or restored),
#                                   PartitionMemory's bytes per partition, and
#                                   LoopMemory's (the mirror kit's, beside verbatim)
#   scripts/bench-jvm.sh count [--one-producer] [--bytes] [BATCHES...]
#                                   no timing: the WebAssembly instructions one
#                                   rewrite runs, by function (InstructionCount)
#
# Extra arguments after the first pass to JMH. Not part of the test command.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
[ -f dist/mirrorpid_broker.wasm ] || bash scripts/build.sh
(cd jvm && mvn -B -q install -DskipTests)
cp_file=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$cp_file" "$out"' EXIT
(cd jvm/bench && mvn -B -q dependency:build-classpath -Dmdep.outputFile="$cp_file")
cp="jvm/bench/target/classes:$(cat "$cp_file")"
jmh() {
  local name=$1
  shift
  java -cp "$cp" org.openjdk.jmh.Main "$@" -rf json -rff "$out/$name.json"
}
case "${1:-}" in
  count)
    shift
    # The module with its names, optimised as the shipped one is.
    named="$out/named.wasm"
    wasm_opt dist/named/mirrorpid_broker.wasm "$named" "${BROKER_WASM_OPT[@]}" -g
    log "WebAssembly instructions a header rewrite runs (Chicory's interpreter counting)"
    java -cp "$cp" dev.mirrorpid.bench.InstructionCount "$named" "$@"
    exit 0
    ;;
  partitions)
    shift
    log "JMH: a broker's partitions, round-robin on one thread and two, and becoming leader"
    jmh rr 'PartitionsBench.rewrite$' -p mode=NATIVE,COMPILER -p partitions=1,1000,10000 -t 1 "$@"
    jmh rr2 'PartitionsBench.rewrite$' -p mode=NATIVE,COMPILER -p partitions=1000,10000 -t 2 "$@"
    jmh lead 'PartitionsBench.(lead|restore)$' -p mode=NATIVE,COMPILER -p partitions=1000 "$@"
    python3 scripts/perf-doc.py collect jmh "$out/rr.json" "$out/rr2.json" "$out/lead.json"
    log "memory: 10,000 partitions in one JVM, the heap committed and touched up front"
    for mode in NATIVE COMPILER; do
      java -Xms4g -Xmx4g -XX:+AlwaysPreTouch -cp "$cp" dev.mirrorpid.bench.PartitionMemory "$mode" 10000 \
        | tail -1 > "$out/memory-$mode.json"
    done
    log "memory: 1,000 partitions through MirrorLoop, beside 1,000 mirrored verbatim"
    for mode in NATIVE COMPILER; do
      java -Xms4g -Xmx4g -XX:+AlwaysPreTouch -cp "$cp" dev.mirrorpid.bench.LoopMemory "$mode" 1000 \
        | tail -1 > "$out/loops-$mode.json"
    done
    python3 scripts/perf-doc.py collect partitions "$out"/memory-*.json "$out"/loops-*.json
    ;;
  mirror)
    shift
    log "JMH: a real Fetch through MirrorLoop into Kafka's UnifiedLog, verbatim beside mirrorpid, paired"
    # paired runs both paths in every invocation (path names none of them).
    jmh mirror 'MirrorBench.paired$' -p from=source -p path=mirrorpid -p batchBytes=1024,16384,1048576 \
      -f 3 "$@"
    python3 scripts/perf-doc.py collect jmh "$out/mirror.json"
    ;;
  *)
    log "JMH: one batch of each size and a fetch of 1000, every runtime beside the naive rewrite"
    jmh one 'RewriteBench.(mirrorpid|naive|crossing)$' -p batchBytes=256,1024,16384,65536,1048576 \
      -p batches=1 -p mode=NATIVE,COMPILER "$@"
    # Three forks: one fork's figure for the fetch follows what else the machine runs.
    jmh many 'RewriteBench.(mirrorpid|naive)$' -p batchBytes=1024 -p batches=1000 -p mode=NATIVE,COMPILER -f 3 "$@"
    jmh slow 'RewriteBench.mirrorpid$' -p batchBytes=256,1048576 -p batches=1 -p mode=BUILD_TIME,INTERPRETER "$@"
    python3 scripts/perf-doc.py collect jmh "$out/one.json" "$out/many.json" "$out/slow.json"
    ;;
esac
python3 scripts/perf-doc.py
