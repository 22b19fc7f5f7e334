#!/usr/bin/env bash
# Installs every package the way its ecosystem does, into fresh temporary
# projects that see nothing of this repository but the packed artifacts,
# and runs each one's example:
#   Node, CommonJS and ES module   npm install dist/mirrorpid-<version>.tgz
#   TypeScript                     the same, then tsc against its declarations
#   a page in headless Chromium    the same, imported through an import map
#   Maven                          mirrorpid-jvm by its coordinates, from ~/.m2
#   Maven, a broker's mirror       mirrorpid-kafka the same way, running the README's example
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

log "Maven consumer: mirrorpid-kafka $version by its coordinates, the README's mirror whole"
# Every line of the README's mirror example is a line of the project that runs it.
python3 - <<'PY'
import pathlib, sys
readme = pathlib.Path("README.md").read_text()
section = readme[readme.index("### Mirroring into a Kafka partition"):]
start = section.index("```java") + len("```java\n")
block = section[start:section.index("```", start)]
example = pathlib.Path("tests/consumers/maven-kafka/src/main/java/example/Mirror.java").read_text()
lines = {line.strip() for line in example.splitlines()}
missing = [line for line in block.splitlines() if line.strip() and line.strip() not in lines]
if missing:
    sys.exit("README's mirror example has lines tests/consumers/maven-kafka does not run:\n" + "\n".join(missing))
PY
cp -r tests/consumers/maven-kafka "$work/maven-kafka"
(cd "$work/maven-kafka" && mvn -B -q --no-transfer-progress -Dmirrorpid.version="$version" package exec:java@mirror exec:java@topologies)
