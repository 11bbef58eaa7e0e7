#!/usr/bin/env python3
"""No numbered work periods in the repository (the house issue): a reader outside the team
has no calendar of the team's working periods, so a figure is dated or names its commit.
Fails, naming file:line, on the word for such a period followed by a number or preceded by an
ordinal (the PATTERNS below) in any tracked text file: prose, comments, scripts. The
product's own sessions (its ids, `SessionParams`, a parameter) are never numbered.

Usage: scripts/check-work-periods.py [ROOT]   (default: the current directory)
"""

import re
import subprocess
import sys

ORDINALS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
    r"\d+(?:st|nd|rd|th)"
)
PATTERNS = [
    re.compile(r"\bsessions? #?\d+\b", re.IGNORECASE),
    re.compile(rf"\b(?:{ORDINALS}) (?:work )?sessions?\b", re.IGNORECASE),
    re.compile(r"\bwork (?:periods?|sessions?) #?\d+\b", re.IGNORECASE),
]
TEXT = (".md", ".rs", ".sh", ".py", ".toml", ".txt", ".yml", ".yaml", ".lua")
# Inputs, not prose: fuzzing seeds, benchmark texts and the generated entity table.
SKIP = ("fuzz/corpus/", "benches/data/", "crates/extract/src/entities.rs")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = subprocess.run(
        ["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True
    ).stdout.split("\n")
    found = []
    checked = 0
    for name in files:
        if not name.endswith(TEXT) or name.startswith(SKIP) or name == "scripts/check-work-periods.py":
            continue
        checked += 1
        try:
            with open(f"{root}/{name}", encoding="utf-8") as f:
                lines = f.readlines()
        except (OSError, UnicodeDecodeError):
            continue
        for n, line in enumerate(lines, 1):
            for pattern in PATTERNS:
                for match in pattern.finditer(line):
                    found.append(f"{name}:{n}: \"{match.group(0)}\": date it or name its commit")
    for line in found:
        print(line, file=sys.stderr)
    if found:
        sys.exit(1)
    print(f"{checked} text files, no numbered work period")


if __name__ == "__main__":
    main()
