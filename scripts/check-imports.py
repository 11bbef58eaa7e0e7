#!/usr/bin/env python3
"""No import circle between the files of a crate (the house issue): a file that names
`crate::a` (a `use` or a path in code, not in comments) imports the file of module `a`
(`a.rs`, `a/mod.rs`, or for `crate::a::b` the file of `a::b` when there is one). A loop of
such imports between files of one crate fails. Imports of the crate root (`crate::Thing`,
a re-export) and `super::` paths are not counted: a root re-exports its modules, and a
child's `super::` is its parent's business (crates/engine's `crawl/*.rs` are the steps of
the coordinator in `crawl.rs`, and its components).

Usage: scripts/check-imports.py [CRATES_DIR]   (default: crates)
"""

import os
import re
import sys

PATH = re.compile(r"\bcrate((?:::[a-z_][a-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+crate::\{([^}]*)\}", re.S)


def module_files(src):
    """Module path (tuple) -> file, for every .rs file under src."""
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)[: -len(".rs")].split(os.sep)
            if rel[-1] in ("lib", "main") and len(rel) == 1:
                continue
            if rel[-1] == "mod":
                rel = rel[:-1]
            files[tuple(rel)] = path
    return files


def code_of(path):
    """The file's text without comments and string literals' contents."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return text


def imports(path, modules):
    """The files `path` imports through `crate::` paths."""
    code = code_of(path)
    named = [m.group(1).split("::")[1:] for m in PATH.finditer(code)]
    for group in USE_GROUP.finditer(code):
        for item in group.group(1).split(","):
            parts = [p for p in item.strip().split("::") if p]
            if parts:
                named.append(parts)
    found = set()
    for parts in named:
        # The longest module path the named path starts with.
        for n in range(len(parts), 0, -1):
            target = modules.get(tuple(parts[:n]))
            if target:
                if target != path:
                    found.add(target)
                break
    return found


def cycles(graph):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    crates = sys.argv[1] if len(sys.argv) > 1 else "crates"
    failed = False
    for name in sorted(os.listdir(crates)):
        src = os.path.join(crates, name, "src")
        if not os.path.isdir(src):
            continue
        modules = module_files(src)
        graph = {path: imports(path, modules) for path in modules.values()}
        for component in cycles(graph):
            failed = True
            print(f"import circle in crates/{name}: " + " <-> ".join(component))
    if failed:
        sys.exit(1)
    print("no import circle between the files of a crate")


if __name__ == "__main__":
    main()
