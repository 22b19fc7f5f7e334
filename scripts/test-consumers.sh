#!/usr/bin/env bash
# Installs every package the way its ecosystem does, into fresh temporary
# projects that see nothing of this repository but the packed artifacts
# (issue 26), and runs each one's example:
#   Node, CommonJS and ES module   npm install dist/mirrorpid-<version>.tgz
#   TypeScript                     the same, then tsc against its declarations
#   a page in headless Chromium    the same, imported through an import map
#   Maven                          mirrorpid-jvm by its coordinates, from ~/.m2
# The broker module's release artifact has its own check (host/tests/release.rs).
# Needs scripts/build.sh and `mvn install` in jvm/ first; scripts/test.sh runs it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
enter_root
version=$(python3 scripts/manifest.py version)
tgz="$ROOT/dist/mirrorpid-$version.tgz"
[ -f "$tgz" ] || { echo "error: $tgz is missing: run scripts/build.sh" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
install() { (cd "$1" && npm install --no-audit --no-fund --loglevel=error --offline "$tgz"); }

log "npm consumer: Node, CommonJS and ES module"
cp -r tests/consumers/node "$work/node"
install "$work/node"
(cd "$work/node" && node cjs.cjs && node esm.mjs)

log "npm consumer: TypeScript (tsc against the installed declarations)"
cp -r tests/consumers/typescript "$work/typescript"
install "$work/typescript"
(cd "$work/typescript" && "$ROOT/tests/e2e/node_modules/.bin/tsc" -p .)

log "npm consumer: a page in headless Chromium"
cp -r tests/consumers/browser "$work/browser"
install "$work/browser"
(cd "$work/browser" && node run.mjs "$ROOT/tests/e2e/node_modules/playwright-core")

log "Maven consumer: mirrorpid-jvm $version by its coordinates"
cp -r tests/consumers/maven "$work/maven"
(cd "$work/maven" && mvn -B -q --no-transfer-progress -Dmirrorpid.version="$version" package exec:java)
