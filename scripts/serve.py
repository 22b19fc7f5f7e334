#!/usr/bin/env python3
"""A small static server for the playground: serves www/ on 127.0.0.1.

    python3 scripts/serve.py [--port 8080] [--dir www]

Sends .wasm as application/wasm (needed for streaming compilation) and
disables caching, so a rebuilt package is picked up on reload.
Stop it with Ctrl-C.
"""
import argparse
import functools
import http.server
from pathlib import Path


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
    }

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, fmt, *args):  # quieter: one line per request
        print(f"{self.address_string()} {fmt % args}", flush=True)


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--dir", default=str(root / "www"))
    args = parser.parse_args()
    handler = functools.partial(Handler, directory=args.dir)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    print(f"mirrorpid playground: http://127.0.0.1:{args.port}/  (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
