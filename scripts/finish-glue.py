#!/usr/bin/env python3
"""Finishes wasm-bindgen's generated glue (`mirrorpid.js`) in two steps.

1. Names the one error wasm-bindgen's glue throws in words of its own. A
   call on a freed `PidMapper` reaches wasm-bindgen's null-pointer check,
   which throws `Error("null pointer passed to rust")`: the only error of
   the JS API whose message does not start with an error's name, as every
   other does (`Name: detail`). The glue's throw helper (the
   `__wbindgen_throw` import) says `BadHandle: …` for that message and
   passes every other through.
2. Appends `rewriteBatchesInPlace`'s fast path (`src/js/fast.js`, with the
   builders of `src/js/builders.js` inside it, after the constants of
   `src/js/layout.js`, as `src/js/build.rs` makes them), which replaces the glue's
   method and keeps it as the checked path.

It fails unless it finds the throw helper, the `PidMapper` class and the
`wasm` exports exactly where it expects them, so a wasm-bindgen upgrade
that changes the glue is noticed here (and `tests/e2e/node-package.test.mjs`
checks the message and both paths).

    scripts/finish-glue.py PATH/mirrorpid.js
"""
import os
import re
import sys

FREED = "BadHandle: this PidMapper was freed (free() was called on it)"

path = sys.argv[1]
text = open(path, encoding="utf-8").read()
pattern = re.compile(
    r"(__wbg___wbindgen_throw_[0-9a-f]+: function\(arg0, arg1\) \{\s*)"
    r"throw new Error\(getStringFromWasm0\(arg0, arg1\)\);"
)
found = pattern.findall(text)
if len(found) != 1:
    sys.exit(f"{path}: wasm-bindgen's throw helper found {len(found)} times, not once")
replacement = (
    r"\1const message = getStringFromWasm0(arg0, arg1);\n"
    rf'            throw new Error(message === "null pointer passed to rust" ? "{FREED}" : message);'
)
text = pattern.sub(replacement, text)

for needed in (r"^(export )?class PidMapper \{$", r"^(let wasm = |let wasmModule, wasmInstance, wasm;$)"):
    if len(re.findall(needed, text, re.M)) != 1:
        sys.exit(f"{path}: the glue does not have one line matching {needed!r}")
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "js")
fast = open(os.path.join(root, "fast.js"), encoding="utf-8").read()
builders = "".join(
    open(os.path.join(root, name), encoding="utf-8").read() for name in ("layout.js", "builders.js")
)
slot = "  /* src/js/builders.js */\n"
if fast.count(slot) != 1:
    sys.exit("src/js/fast.js: the place for the builders is not there once")
fast = fast.replace(slot, builders)
open(path, "w", encoding="utf-8").write(text + "\n" + fast)
