#!/usr/bin/env bash
# Benchmark scripts leave nothing behind (the house issue): the shortest run of
# scripts/bench-stages.sh (300 pages, a debug build: nothing installed that the tests do not
# install) writes under a fresh BENCH_DIR, which must be empty once it ends; with KEEP=1 its
# work directory must be there, and say so. Every benchmark script takes its directory from
# scripts/lib/workdir.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$(mktemp -d /tmp/nearcrawl-cleanup-check.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
run() {
    mkdir -p "$dir/bench"
    if ! BENCH_DIR="$dir/bench" BENCH_PROFILE=dev "$@" ./scripts/bench-stages.sh 300 >"$dir/log" 2>&1; then
        cat "$dir/log" >&2
        echo "scripts/bench-stages.sh 300 failed" >&2
        exit 1
    fi
}
run env
left="$(find "$dir/bench" -mindepth 1 -maxdepth 1)"
if [ -n "$left" ]; then
    echo "scripts/bench-stages.sh left $left behind" >&2
    exit 1
fi
run env KEEP=1
kept="$(find "$dir/bench" -mindepth 1 -maxdepth 1)"
if [ -z "$kept" ] || ! grep -q "left $kept" "$dir/log"; then
    echo "scripts/bench-stages.sh with KEEP=1 kept nothing, or did not say so" >&2
    exit 1
fi
# Every benchmark script makes its directory through scripts/lib/workdir.sh.
for script in scripts/bench-*.sh scripts/predict-curve.sh scripts/trap-measure.sh; do
    if grep -q 'mktemp' "$script"; then
        echo "$script makes a directory of its own: use work_dir (scripts/lib/workdir.sh)" >&2
        exit 1
    fi
done
echo "benchmark scripts: bench-stages.sh 300 left nothing behind, and kept its directory with KEEP=1"
