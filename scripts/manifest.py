#!/usr/bin/env python3
"""Reads wasm-pack.toml for the shell scripts.

    manifest.py get tools.wasm-pack        -> 0.15.1
    manifest.py bundles                    -> one line per bundle: name target out-dir features(comma)
    manifest.py lock-version wasm-bindgen  -> the version Cargo.lock pins
    manifest.py version                    -> the project's version (Cargo.toml's
                                              [package]; every artifact takes it)
"""
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    cmd = sys.argv[1]
    if cmd == "version":
        print(tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]["version"])
        return
    if cmd == "lock-version":
        lock = tomllib.loads((ROOT / "Cargo.lock").read_text())
        versions = {p["version"] for p in lock["package"] if p["name"] == sys.argv[2]}
        if len(versions) != 1:
            sys.exit(f"Cargo.lock has {sorted(versions)} for {sys.argv[2]}, expected one")
        print(versions.pop())
        return
    manifest = tomllib.loads((ROOT / "wasm-pack.toml").read_text())
    if cmd == "get":
        value = manifest
        for part in sys.argv[2].split("."):
            value = value[part]
        print(value)
    elif cmd == "bundles":
        for name, b in manifest["bundles"].items():
            print(name, b["target"], b["out-dir"], ",".join(b.get("features", [])))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
