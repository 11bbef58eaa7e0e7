#!/usr/bin/env bash
# Side-by-side with the Python packages the issue names, on the same data, in one run:
#  1. simhash throughput: nearcrawl vs PyPI `simhash` 2.1.2 (pure Python) on benches/data/articles.txt
#  2. all near pairs at k = 3: nearcrawl near_pairs (20 tables) vs `simhash-pybind` 0.0.3 find_all
#     (seomoz/simhash-cpp, 6 blocks = the same 20 tables) on the same 2^LOG2 fingerprints.
# Installs both packages in their own virtualenvs under target/pybench (both are imported as
# `simhash`). Usage: scripts/bench-python.sh [LOG2]   (default 20); REPEATS=1 for one timed run
# per side instead of the median of 3 (2^24 takes minutes per run).
set -euo pipefail
cd "$(dirname "$0")/.."
log2=${1:-20}
venvs=target/pybench
for name in simhash pybind; do
  [ -x "$venvs/$name/bin/python" ] || python3 -m venv "$venvs/$name"
done
"$venvs/simhash/bin/pip" install -q 'simhash==2.1.2'
"$venvs/pybind/bin/pip" install -q 'simhash-pybind==0.0.3'

echo "== simhash throughput on benches/data/articles.txt"
rust=$(cargo bench -q --bench simhash -- 'tokens-to-fingerprint' 2>/dev/null | grep -A2 'tokens-to-fingerprint' | grep thrpt | sed -E 's/.*\[[^ ]+ [^ ]+ ([0-9.]+) MiB\/s.*/\1/')
py=$("$venvs/simhash/bin/python" scripts/bench_python.py simhash benches/data/articles.txt)
echo "nearcrawl: ${rust} MiB/s (criterion median)"
echo "python simhash 2.1.2: ${py} MiB/s (median of 5)"
python3 -c "print(f'ratio: {float(\"$rust\") / float(\"$py\"):.0f}x')"

echo "== all near pairs, k = 3, 2^$log2 fingerprints"
ours=$(cargo bench -q --bench index_scale -- --near-pairs "$log2" 2>/dev/null | grep '^{')
echo "$ours"
file=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['file'])" "$ours")
theirs=$("$venvs/pybind/bin/python" scripts/bench_python.py find_all "$file")
echo "$theirs"
python3 - "$ours" "$theirs" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a["pairs"] == b["pairs"], f"pair counts differ: {a['pairs']} vs {b['pairs']}"
print(f"same {a['pairs']} pairs; nearcrawl {b['median_s'] / a['median_s']:.1f}x faster")
PY
