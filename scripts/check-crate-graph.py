#!/usr/bin/env python3
"""The crate graph tells the truth (the house issue), checked on `cargo metadata`:

- the crates that read a job's outputs (`nearcrawl-records`, `nearcrawl-corpus`,
  `nearcrawl-report`) and the link policy (`nearcrawl-link-policy`, a pure state machine)
  pull in none of the crawler's machinery: no async runtime, HTTP client, store engine or
  Redis client, through any normal dependency;
- no crate depends on `nearcrawl-engine` (the crawler) but the `nearcrawl` binary and the
  evaluation harness (`nearcrawl-quality`, which runs crawls to measure them);
- the shipped `nearcrawl` binary carries no evaluation harness: `nearcrawl-quality` (its own
  binary, `nearcrawl-lab`) and what only it uses are not among its normal dependencies.

Exits 1 naming each breach and the path of dependencies that causes it.

Usage: scripts/check-crate-graph.py
"""

import json
import subprocess
import sys

READERS = ["nearcrawl-records", "nearcrawl-corpus", "nearcrawl-report"]
# The link policy is a pure state machine: no runtime, HTTP, store engine or Redis either.
PURE = ["nearcrawl-link-policy"]
CRAWLER_ONLY = ["tokio", "reqwest", "hyper", "fjall", "redis"]
ENGINE = "nearcrawl-engine"
MAY_USE_ENGINE = {"nearcrawl", "nearcrawl-quality"}
SHIPPED = "nearcrawl"
LAB_ONLY = ["nearcrawl-quality", "scraper", "similar"]


def main():
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    name = {p["id"]: p["name"] for p in meta["packages"]}
    # Normal (not dev, not build) dependencies of every package, by name.
    uses = {}
    for node in meta["resolve"]["nodes"]:
        deps = []
        for dep in node["deps"]:
            if any(k["kind"] is None for k in dep["dep_kinds"]):
                deps.append(name[dep["pkg"]])
        uses.setdefault(name[node["id"]], set()).update(deps)

    def reached(root):
        """Every crate `root` pulls in, with the path of dependencies to it (breadth-first)."""
        path = {root: [root]}
        queue = [root]
        while queue:
            crate = queue.pop(0)
            for dep in sorted(uses.get(crate, ())):
                if dep not in path:
                    path[dep] = path[crate] + [dep]
                    queue.append(dep)
        return path

    breaches = []
    checked = [(r, CRAWLER_ONLY) for r in READERS + PURE] + [(SHIPPED, LAB_ONLY)]
    for crate, banned_list in checked:
        path = reached(crate)
        for banned in banned_list:
            if banned in path:
                breaches.append(f"{crate} pulls in {banned}: {' -> '.join(path[banned])}")
    for crate, deps in sorted(uses.items()):
        if ENGINE in deps and crate not in MAY_USE_ENGINE:
            breaches.append(f"{crate} depends on {ENGINE} (only {sorted(MAY_USE_ENGINE)} may)")
    for breach in breaches:
        print(breach, file=sys.stderr)
    if breaches:
        sys.exit(1)
    print(f"crate graph: {', '.join(READERS + PURE)} without {', '.join(CRAWLER_ONLY)}; "
          f"{ENGINE} used only by {', '.join(sorted(MAY_USE_ENGINE))}; "
          f"{SHIPPED} without {', '.join(LAB_ONLY)}")


if __name__ == "__main__":
    main()
