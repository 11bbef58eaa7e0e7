#!/usr/bin/env python3
"""The link policy decides every link's fate (issue: one decider): the crawler
(crates/engine/src) reads none of the link settings itself. It hands them to the policy
(`DedupStageConfig::links`, `DedupStageConfig::policy`) and asks the policy's `Decider`
what they mean. A line of the engine's code (comments aside) that reads one of them, as
`dedup.NAME`, is named with its file and line (its tests aside).

Usage: scripts/check-link-settings.py [ROOT]   (default: the current directory)
"""

import os
import re
import sys

SETTINGS = [
    "duplicate_outlinks", "hub_min_links", "hub_min_yield", "mirror_samples",
    "mirror_sample_share", "probe_links", "probe_tolerance", "probe_samples", "predict",
    "predict_min_support", "predict_min_trust", "predict_explore", "tuning",
]
READ = re.compile(r"\bdedup\s*\.\s*(" + "|".join(SETTINGS) + r")\b(?!\s*\()")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    engine = os.path.join(root, "crates/engine/src")
    breaches = []
    files = 0
    for directory, dirs, names in os.walk(engine):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(".rs"):
                continue
            files += 1
            path = os.path.join(directory, name)
            if name == "tests.rs":
                continue
            with open(path, encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    if line.startswith("#[cfg(test)]"):
                        # The file's tests may read a setting to check what it does.
                        break
                    code = line.split("//", 1)[0]
                    match = READ.search(code)
                    if match:
                        breaches.append(
                            f"{os.path.relpath(path, root)}:{number}: reads the link setting "
                            f"dedup.{match.group(1)}: ask the link policy's Decider instead"
                        )
    for breach in breaches:
        print(breach, file=sys.stderr)
    if breaches:
        sys.exit(1)
    print(f"link settings: none read by the engine ({files} files)")


if __name__ == "__main__":
    main()
