"""Python side of scripts/bench-python.sh: times one package on the same data as the Rust side."""
import json
import os
import re
import statistics
import sys
import time


def bench_simhash(path):
    from simhash import Simhash

    text = open(path, encoding="utf-8").read()
    # The Rust bench's tokens: runs of alphanumeric characters.
    docs = [re.findall(r"[^\W_]+", line) for line in text.splitlines()]
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for tokens in docs:
            Simhash(tokens)
        times.append(time.perf_counter() - start)
    print(f"{len(text.encode()) / statistics.median(times) / 2**20:.3f}")


def bench_find_all(path):
    import simhash

    hashes = {int(line) for line in open(path)}
    times, pairs = [], 0
    for _ in range(max(1, int(os.environ.get("REPEATS", "3")))):
        start = time.perf_counter()
        pairs = len(simhash.find_all(hashes, 6, 3))
        times.append(time.perf_counter() - start)
    print(json.dumps({"tool": "simhash-pybind find_all (6 blocks)", "fingerprints": len(hashes),
                      "pairs": pairs, "median_s": round(statistics.median(times), 3)}))


if __name__ == "__main__":
    {"simhash": bench_simhash, "find_all": bench_find_all}[sys.argv[1]](sys.argv[2])
