#!/usr/bin/env bash
# Builds the WASM packages and serves the playground on
# http://127.0.0.1:${PORT:-8080}/ . Stop with Ctrl-C. Another port:
#   PORT=9000 scripts/serve.sh     (or: scripts/serve.sh 9000)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh
exec python3 scripts/serve.py --port "${1:-${PORT:-8080}}"
