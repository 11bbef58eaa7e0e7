#!/usr/bin/env python3
"""Where a link's fate is decided (issue: one decider), guarded:

- One enum encodes a link's fate in crates/: `Fate` in crates/link-policy/src/fate.rs. Any
  other enum (tests aside) with two or more variants named as fates are (Fetch, Drop, Skip,
  Wait, Park, Probe, Follow, Queue) is named with its file and line: carry the policy's
  `Fate` instead (NOT_A_LINK lists the two that are about scheduling, not a link).
- Ratchets toward the floors not met yet: the link code left in the crawler (the files below,
  their tests and their `use` declarations aside) has at most ENGINE_LINK_LINES lines
  (floor: 800), and `impl Coordinator`
  has at most COORDINATOR_METHODS methods (floor: 30). Lower a ratchet when you cut below
  it; never raise it.

Usage: scripts/check-link-fates.py [ROOT]   (default: the current directory)
"""

import os
import re
import sys

FATE_VERBS = {"Fetch", "Drop", "Skip", "Wait", "Park", "Probe", "Follow", "Queue"}
THE_FATE = ("crates/link-policy/src/fate.rs", "Fate")
# Enums named as fates are that are not about a link: the frontier's answer when asked for
# work (a URL to fetch now, or when to ask again).
NOT_A_LINK = {
    ("crates/engine/src/frontier.rs", "Step"),
    ("crates/redis-job/src/frontier/answers.rs", "Next"),
}

ENGINE_LINK_FILES = [
    "crates/engine/src/crawl/links.rs",
    "crates/engine/src/crawl/links/follow.rs",
    "crates/engine/src/crawl/release.rs",
    "crates/engine/src/crawl/unchanged.rs",
    "crates/engine/src/crawl/predictions.rs",
    "crates/engine/src/crawl/predictions/log.rs",
]
ENGINE_LINK_LINES = 1380
COORDINATOR_METHODS = 30

ENUM = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?enum\s+(\w+)")
VARIANT = re.compile(r"^\s*([A-Z]\w*)\s*(\{|\(|,|$)")
METHOD = re.compile(r"^    (pub(\([^)]*\))? )?(async )?fn ")


def code_lines(path):
    """The file's lines before its test module (`#[cfg(test)]` at the start of a line)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("#[cfg(test)]"):
            return lines[:i]
    return lines


def without_imports(lines):
    """The lines that are not part of a `use` declaration (an import list is no link code)."""
    kept, inside = [], False
    for line in lines:
        if not inside and re.match(r"^\s*(pub(\([^)]*\))?\s+)?use\s", line):
            inside = True
        if inside:
            if line.rstrip().endswith(";"):
                inside = False
            continue
        kept.append(line)
    return kept


def rust_files(root):
    crates = os.path.join(root, "crates")
    for directory, dirs, names in os.walk(crates):
        dirs.sort()
        parts = directory.split(os.sep)
        if "tests" in parts or "benches" in parts or "target" in parts:
            continue
        for name in sorted(names):
            if name.endswith(".rs") and name != "tests.rs":
                yield os.path.join(directory, name)


def fate_enums(root):
    found = []
    for path in rust_files(root):
        lines = code_lines(path)
        for i, line in enumerate(lines):
            m = ENUM.match(line.split("//", 1)[0])
            if not m:
                continue
            name, depth, variants = m.group(3), 0, set()
            for body in lines[i:]:
                code = body.split("//", 1)[0]
                if depth == 1:
                    v = VARIANT.match(code)
                    if v:
                        variants.add(v.group(1))
                depth += code.count("{") - code.count("}")
                if depth == 0 and "}" in code:
                    break
            rel = os.path.relpath(path, root)
            if len(variants & FATE_VERBS) >= 2 and (rel, name) != THE_FATE and (rel, name) not in NOT_A_LINK:
                found.append(f"{rel}:{i + 1}: enum {name} ({', '.join(sorted(variants & FATE_VERBS))})")
    return found


def coordinator_methods(root):
    n = 0
    for path in rust_files(root):
        if not path.startswith(os.path.join(root, "crates", "engine")):
            continue
        inside, depth = False, 0
        for line in code_lines(path):
            if re.match(r"^impl Coordinator\b", line):
                inside, depth = True, 0
            if inside:
                depth += line.count("{") - line.count("}")
                if METHOD.match(line):
                    n += 1
                if depth == 0 and "}" in line:
                    inside = False
    return n


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems = [f"{e}: a second enum for a link's fate" for e in fate_enums(root)]
    if not any(True for _ in rust_files(root)) or not os.path.exists(os.path.join(root, THE_FATE[0])):
        problems.append(f"{THE_FATE[0]}: not found (the check names files that exist)")
    lines = 0
    for rel in ENGINE_LINK_FILES:
        path = os.path.join(root, rel)
        if os.path.exists(path):
            lines += len(without_imports(code_lines(path)))
    if lines > ENGINE_LINK_LINES:
        problems.append(
            f"the crawler's link code is {lines} lines, past its ratchet {ENGINE_LINK_LINES} "
            "(floor 800): move the decision into crates/link-policy"
        )
    methods = coordinator_methods(root)
    if methods > COORDINATOR_METHODS:
        problems.append(
            f"Coordinator has {methods} methods, past its ratchet {COORDINATOR_METHODS} "
            "(floor 30): give the state a component that owns it"
        )
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print(
        f"one enum for a link's fate; the crawler's link code {lines} lines "
        f"(ratchet {ENGINE_LINK_LINES}, floor 800); Coordinator {methods} methods "
        f"(ratchet {COORDINATOR_METHODS}, floor 30)"
    )


if __name__ == "__main__":
    main()
