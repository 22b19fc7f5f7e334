#!/usr/bin/env python3
"""Names the one error wasm-bindgen's glue throws in words of its own.

A call on a freed `PidMapper` reaches wasm-bindgen's null-pointer check,
which throws `Error("null pointer passed to rust")`: the only error of the
JS API whose message does not start with an error's name, as every other
does (`Name: detail`). This rewrites the glue's throw helper (the
`__wbindgen_throw` import of the generated `mirrorpid.js`) to say
`BadHandle: …` for that message and to pass every other through. It fails
unless it finds the helper exactly once, so a wasm-bindgen upgrade that
changes the glue is noticed here (and `tests/e2e/node-package.test.mjs`
checks the message).

    scripts/name-glue-errors.py PATH/mirrorpid.js
"""
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
open(path, "w", encoding="utf-8").write(pattern.sub(replacement, text))
