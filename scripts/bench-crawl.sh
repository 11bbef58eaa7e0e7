#!/usr/bin/env bash
# Crawl throughput benchmark (issue: the crawler). Serves a generated static site of PAGES
# pages with nginx on 127.0.0.1 and crawls it with politeness off for that host:
#   nearcrawl with dedup on, nearcrawl --no-dedup, and wget2 -r, in the same run.
# Reports wall seconds, pages/s, CPU seconds per 1,000 pages and peak RSS for each.
# Installs nginx-light and wget2 from Debian when missing. Release build.
# Usage: scripts/bench-crawl.sh [PAGES] [CONCURRENCY]
# Before/after: NEARCRAWL_BINS="old/nearcrawl target/release/nearcrawl" RUNS=3 crawls with
# each binary in turn (dedup on), alternating, RUNS rounds, one row per crawl; wget2 is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
pages="${1:-20000}"
concurrency="${2:-32}"
port=18089

source scripts/lib/bench.sh
cargo build --release --locked --bin nearcrawl --example bench_site -p nearcrawl-demo-web -p nearcrawl >&2

source scripts/lib/nginx.sh
work_dir bench-crawl /dev/shm
target/release/examples/bench_site "$work/site" "$pages"
chmod -R a+rX "$work"
start_nginx "$work" "$work/site" "$port"
seed="http://127.0.0.1:$port/p/1.html"
echo "$seed" > "$work/seeds.txt"

declare -A stages
row() { # name fetched wall user sys rss
    awk -v n="$1" -v p="$2" -v w="$3" -v u="$4" -v s="$5" -v r="$6" 'BEGIN {
        printf "| %s | %d | %.2f | %.0f | %.2f | %.0f |\n", n, p, w, p / w, (u + s) * 1000 / p, r / 1024 }'
}

echo "| crawler | pages fetched | wall s | pages/s | CPU s per 1,000 pages | peak RSS MB |"
echo "|---|---|---|---|---|---|"
if [ -n "${NEARCRAWL_BINS:-}" ]; then
    for round in $(seq 1 "${RUNS:-3}"); do
        for bin in $NEARCRAWL_BINS; do
            rm -rf "$work/crawl"
            read -r wall user sys rss < <(measure "$bin" crawl --seeds "$work/seeds.txt" --out "$work/crawl" \
                --per-host-delay-ms 0 --concurrency "$concurrency")
            fetched=$(python3 -c "import json;print(json.load(open('$work/crawl/report.json'))['pages_fetched'])")
            row "$bin (round $round)" "$fetched" "$wall" "$user" "$sys" "$rss"
        done
    done
    exit 0
fi
for mode in dedup no-dedup; do
    rm -rf "$work/crawl"
    flag=""
    [ "$mode" = no-dedup ] && flag="--no-dedup"
    read -r wall user sys rss < <(measure target/release/nearcrawl crawl --seeds "$work/seeds.txt" --out "$work/crawl" \
        --per-host-delay-ms 0 --concurrency "$concurrency" $flag)
    fetched=$(python3 -c "import json;print(json.load(open('$work/crawl/report.json'))['pages_fetched'])")
    row "nearcrawl ($mode)" "$fetched" "$wall" "$user" "$sys" "$rss"
    stages[$mode]="$(stage_line "$work/crawl/report.json")"
done
rm -rf "$work/wget"
read -r wall user sys rss < <(measure wget2 -r -l inf -q --robots=off --max-threads="$concurrency" -P "$work/wget" "$seed")
fetched=$(find "$work/wget" -name '*.html' | wc -l)
row "wget2 -r" "$fetched" "$wall" "$user" "$sys" "$rss"
echo
for mode in dedup no-dedup; do
    echo "nearcrawl ($mode), us per page by stage (report.json run_stages; fetch is wall time): ${stages[$mode]}"
done
