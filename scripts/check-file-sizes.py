#!/usr/bin/env python3
"""No file too long to read as one idea (the house issue): every Rust file of the crawler
(crates/engine/src), of the dedup stage (crates/dedup/src), of the link policy
(crates/link-policy/src) and of the tests (tests/,
tests/support/) is at most 600 lines. A file
over it is named with its length and what to do.

Usage: scripts/check-file-sizes.py [ROOT]   (default: the current directory)
"""

import os
import sys

LIMIT = 600

# (directory, whether its subdirectories count too, what to do when a file is over)
CHECKED = [
    ("crates/engine/src", True, "split it into a component that owns its state, or a step"),
    ("crates/dedup/src", True, "split it into the stage's steps"),
    ("crates/link-policy/src", True, "split it by the link's fate it decides"),
    ("tests", False, "split it by topic"),
    ("tests/support", False, "split it by topic"),
]


def rust_files(directory, recursive):
    if not os.path.isdir(directory):
        return
    if not recursive:
        for name in sorted(os.listdir(directory)):
            if name.endswith(".rs"):
                yield os.path.join(directory, name)
        return
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        for name in sorted(names):
            if name.endswith(".rs"):
                yield os.path.join(root, name)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    over = []
    checked = 0
    for directory, recursive, advice in CHECKED:
        path = os.path.join(root, directory)
        if not os.path.isdir(path):
            over.append(f"{directory}: not found (the check names directories that exist)")
            continue
        for file in rust_files(path, recursive):
            checked += 1
            with open(file, encoding="utf-8") as f:
                lines = sum(1 for _ in f)
            if lines > LIMIT:
                name = os.path.relpath(file, root)
                over.append(f"{name}: {lines} lines, over {LIMIT}; {advice}")
    for line in over:
        print(line, file=sys.stderr)
    if over:
        sys.exit(1)
    print(f"{checked} files, none over {LIMIT} lines")


if __name__ == "__main__":
    main()
