#!/usr/bin/env bash
# Functions that install whatever the build and tests need and is missing,
# for scripts/build.sh, test.sh and fuzz.sh to source. Sourcing it only
# defines ROOT and functions; a script calls `enter_root` to work from the
# repository with cargo's tools on PATH. Each ensure_* checks first, so
# running them again is cheap.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

enter_root() {
  cd "$ROOT"
  case ":$PATH:" in
    *":$HOME/.cargo/bin:"*) ;;
    *) export PATH="$HOME/.cargo/bin:$PATH" ;;
  esac
}

manifest() { python3 "$ROOT/scripts/manifest.py" "$@"; }

log() { printf '\033[1m== %s\033[0m\n' "$*" >&2; }

ensure_wasm_target() {
  if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    log "adding rustup target wasm32-unknown-unknown"
    rustup target add wasm32-unknown-unknown
  fi
}

# cargo_tool BINARY CRATE VERSION
cargo_tool() {
  local bin=$1 crate=$2 want=$3 have=""
  if command -v "$bin" >/dev/null; then
    have=$("$bin" --version 2>/dev/null | awk '{print $2}')
  fi
  if [ "$have" != "$want" ]; then
    log "installing $crate $want (found '${have:-none}')"
    cargo install --locked "$crate" --version "$want"
  fi
}

ensure_wasm_tools() {
  cargo_tool wasm-pack wasm-pack "$(manifest get tools.wasm-pack)"
  cargo_tool wasm-bindgen wasm-bindgen-cli "$(manifest lock-version wasm-bindgen)"
}

# The nightly toolchain (minimal profile) and cargo-fuzz, for scripts/fuzz.sh.
ensure_fuzz_tools() {
  if ! rustup toolchain list | grep -q '^nightly'; then
    log "installing the nightly toolchain (for cargo-fuzz)"
    rustup toolchain install nightly --profile minimal
  fi
  cargo_tool cargo-fuzz cargo-fuzz "$(manifest get tools.cargo-fuzz)"
}

# binaryen's wasm-opt, from npm (pinned in scripts/tools/package.json).
ensure_wasm_opt() {
  if [ ! -x "$ROOT/scripts/tools/node_modules/.bin/wasm-opt" ]; then
    log "installing binaryen (wasm-opt) from npm"
    (cd "$ROOT/scripts/tools" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# wasm-opt -Oz IN OUT [OPTION...], or at the level an OPTION names (-O3 …).
# rustc's wasm32 features are named, since a stripped module has no
# target-features section to read them from.
wasm_opt() {
  local in=$1 out=$2 level=-Oz
  shift 2
  local a
  for a in "$@"; do
    case $a in -O*) level= ;; esac
  done
  "$ROOT/scripts/tools/node_modules/.bin/wasm-opt" $level \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-multivalue --enable-reference-types \
    "$@" "$in" -o "$out"
}

# The broker module's wasm-opt options: optimised for speed, not size (a
# host pays for the instructions it runs, not for the module's bytes, which
# stay under the budget of wasm-pack.toml), and inlining never makes a
# function over 3,000 bytes, so that no function passes HotSpot's 8,000
# bytes of bytecode once Chicory compiles it (docs/PERFORMANCE.md,
# "Function size"; jvm/library's FunctionSizeTest checks it).
BROKER_WASM_OPT=(-O3 --converge --inline-max-combined-binary-size 3000)

# Java 17 and Maven for jvm/ (this machine kind ships both; Debian's otherwise).
ensure_maven() {
  if ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
    log "installing Debian maven and openjdk-17-jdk-headless"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven openjdk-17-jdk-headless >/dev/null
  fi
}

ensure_chromium() {
  local chromium chromedriver
  chromium=$(manifest get tools.chromium)
  chromedriver=$(manifest get tools.chromedriver)
  if [ ! -x "$chromium" ] || [ ! -x "$chromedriver" ]; then
    log "installing Debian chromium and chromium-driver"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
}

ensure_e2e_modules() {
  if [ ! -d tests/e2e/node_modules/playwright-core ]; then
    log "installing page-test packages (npm ci)"
    (cd tests/e2e && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

# The arm64 Linux target of the JVM library's native runtime, cross-built
# here: rustup's aarch64 standard library and Debian's cross gcc as linker.
ensure_arm64_cross() {
  if ! rustup target list --installed | grep -qx aarch64-unknown-linux-gnu; then
    log "adding rustup target aarch64-unknown-linux-gnu"
    rustup target add aarch64-unknown-linux-gnu
  fi
  if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
    log "installing Debian gcc-aarch64-linux-gnu (the arm64 linker)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc-aarch64-linux-gnu >/dev/null
  fi
}

# Debian's arm64 JRE, unpacked (never installed) under $ARM64_ROOT, and
# qemu-user to run it: the native runtime's test on arm64 under emulation.
ARM64_ROOT=${MIRRORPID_ARM64_ROOT:-$HOME/.cache/mirrorpid/arm64-root}
ARM64_JAVA=$ARM64_ROOT/usr/lib/jvm/java-17-openjdk-arm64/bin/java
ensure_arm64_jre() {
  if ! command -v qemu-aarch64 >/dev/null; then
    log "installing Debian qemu-user (runs arm64 programs here)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user >/dev/null
  fi
  if [ ! -x "$ARM64_JAVA" ]; then
    log "unpacking Debian's arm64 openjdk-17-jre-headless into $ARM64_ROOT"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
      dpkg --add-architecture arm64
    fi
    apt-get update -qq
    local debs
    debs=$(mktemp -d)
    # apt-get download fetches as the _apt user, which must be able to write there.
    chmod a+rwx "$debs"
    (cd "$debs" && apt-get download -qq openjdk-17-jre-headless:arm64 libc6:arm64 zlib1g:arm64 \
      libgcc-s1:arm64 libstdc++6:arm64 >/dev/null)
    mkdir -p "$ARM64_ROOT"
    local deb
    for deb in "$debs"/*.deb; do
      dpkg-deb -x "$deb" "$ARM64_ROOT"
    done
    rm -rf "$debs"
  fi
}
