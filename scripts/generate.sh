#!/usr/bin/env bash
# Writes the files generated from Rust definitions, so that JavaScript and
# Java read the layouts Rust defines instead of copies: src/js/layout.js
# (src/js/generated.rs), and the JVM library's Abi.java and the JVM
# benchmarks' Slots.java (abi/src/generated.rs). scripts/build.sh runs it outside CI; the test
# command's native tests fail when either file differs from what it writes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
log "writing the files generated from Rust: src/js/layout.js, jvm/library/.../Abi.java, jvm/bench/.../Slots.java"
MIRRORPID_WRITE_GENERATED=1 cargo test -q -p mirrorpid --features js --lib generated >&2
MIRRORPID_WRITE_GENERATED=1 cargo test -q -p mirrorpid-abi --lib generated >&2
