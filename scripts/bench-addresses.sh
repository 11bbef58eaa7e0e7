#!/usr/bin/env bash
# Politeness per address (issue: politeness per server): does keeping a budget per server
# address cost a crawl whose names are each on an address of their own? The text-rich site of
# bench-text.sh, HOSTS hosts of PAGES pages, host h served by nginx on 127.0.1.(h+1), crawled
# RUNS rounds, alternating, by:
#   before     NEARCRAWL_BEFORE (a build without budgets per address), seeds by address;
#   addresses  this build, the same seeds (each literal address its own budget);
#   names      this build, seeds by name (h{h}.bench.test), each resolved to its address with
#              --resolve: a resolution per name ahead of its first request, as on the web.
# Politeness opened as in bench-text.sh (16 connections per host, no delay), so the budget
# per address (unset: what one host is allowed) never binds here: the figures are its cost.
# Dedup and WARC on. Prints per crawl: pages, wall s, pages/s, CPU ms per page, peak RSS MB,
# and the medians.
# Installs python3.11-doc (scripts/quality-deps.sh), nginx-light when missing.
# Usage: NEARCRAWL_BEFORE=path scripts/bench-addresses.sh [HOSTS] [PAGES] [RUNS]
#        (defaults: 100 180 3)
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-100}"
pages="${2:-180}"
runs="${3:-3}"
port=18300
before="${NEARCRAWL_BEFORE:?NEARCRAWL_BEFORE=path of a nearcrawl build to compare with}"

source scripts/lib/bench.sh
cargo build --release --locked --bin nearcrawl -p nearcrawl --example text_site -p nearcrawl-quality >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"

source scripts/lib/nginx.sh
work_dir bench-addresses /dev/shm
serve_text_site "$work" "$hosts" "$pages" "$port"
resolve=()
: > "$work/names.txt"
for ((h = 0; h < hosts; h++)); do
    resolve+=(--resolve "h$h.bench.test=127.0.1.$((h + 1))")
    echo "http://h$h.bench.test:$port/p/1.html" >> "$work/names.txt"
done
flags=(--per-host-delay-ms 0 --max-connections-per-host 16 --concurrency 16)

# one NAME BINARY SEEDS [FLAGS...]
one() {
    local name="$1" binary="$2" seeds="$3"
    shift 3
    out_dir
    rm -rf "$bench_out/crawl"
    local fetched
    read -r wall user sys rss < <(measure "$binary" crawl --seeds "$seeds" --out "$bench_out/crawl" \
        "${flags[@]}" "$@")
    fetched=$(python3 -c "import json;print(json.load(open('$bench_out/crawl/report.json'))['pages_fetched'])")
    record "$name" "$fetched" "$wall" "$user" "$sys" "$rss"
}

for ((round = 1; round <= runs; round++)); do
    one before "$before" "$work/seeds.txt"
    one addresses "$nearcrawl" "$work/seeds.txt"
    one names "$nearcrawl" "$work/names.txt" "${resolve[@]}"
done
echo "| crawl | pages fetched | wall s | pages/s | CPU ms per page | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for name in before addresses names; do
    median_row "$name" "${rows[$name]}"
done
