#!/usr/bin/env python3
"""Checks that no Rust source files import each other in a circle (the test command runs it).

In each crate, a file's `crate::…`, `super::…` and `self::…` paths name modules; each path
is an edge from the file to the file of the longest module it names. A module's own
ancestors and descendants are left out (a parent declares and re-exports its children, a
child uses what its parent holds), so what remains is one part of the code reaching into
another. A circle of such edges (`a.rs` uses `b.rs`, which uses `a.rs`, directly or
through others) makes two parts one: the layering DEVELOPERS.md describes holds only
while there is none. Exit status 1, naming each circle, when one exists.
"""
import re

from repo_checks import ROOT, fail_if, tracked

# The crates' source roots, each with its root file.
ROOTS = ["src", "broker/src", "host/src", "cli/src", "abi/src", "jvm/native/src", "tests/support/src"]
PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+|::\{)")


def modules(root):
    """Module path (a tuple) -> file, for every tracked .rs file under `root`."""
    found = {}
    for path in tracked():
        name = str(path)
        if not name.startswith(root + "/") or path.suffix != ".rs":
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] in ("mod", "lib", "main"):
            parts.pop()
        found[tuple(parts)] = name
    return found


def code(text):
    """`text` without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return re.sub(r"//.*", "", text)


def named(text, module, is_dir):
    """The module paths a file's code names."""
    parent = module if is_dir else module[:-1]
    for m in PATH.finditer(code(text)):
        head, tail = m.group(1), m.group(2)
        base = () if head == "crate" else (parent[:-1] if head == "super" else parent)
        if tail == "::{":
            # `super::{a::b, c}`: the first name of each item.
            group = text_after(code(text), m.end())
            for item in group.split(","):
                first = item.strip().split("::")[0].strip()
                if re.fullmatch(r"\w+", first):
                    yield base + (first,)
            continue
        yield base + tuple(p for p in tail.split("::") if p)


def text_after(text, at):
    depth, out = 1, []
    for ch in text[at:]:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1:
            out.append(ch)
    return "".join(out)


def edges(root):
    mods = modules(root)
    graph = {f: set() for f in mods.values()}
    for module, name in mods.items():
        is_dir = name.endswith(("/mod.rs", "/lib.rs", "/main.rs"))
        for path in named((ROOT / name).read_text(), module, is_dir):
            while path and path not in mods:
                path = path[:-1]
            if not path or path[: len(module)] == module or module[: len(path)] == path:
                continue
            graph[name].add(mods[path])
    return graph


def circles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                out.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    broken, files = [], 0
    for root in ROOTS:
        graph = edges(root)
        files += len(graph)
        broken += [" <-> ".join(part) + ": these files import each other" for part in circles(graph)]
    fail_if(broken, "Rust files import each other in a circle (scripts/import-check.py says why)")
    print(f"import-check: no circle among {files} Rust files")


if __name__ == "__main__":
    main()
