#!/usr/bin/env bash
# Throughput on text-rich pages (issue: throughput). Builds HOSTS sites of PAGES pages each
# (crates/quality/examples/text_site.rs: 4-5 kB of real documentation sentences per page,
# drawn from one pool shared by all pages, as real sites share boilerplate sentences), serves
# each with nginx on its own loopback address (127.0.1.H, one port), and crawls them all, RUNS rounds, alternating:
#   nearcrawl (dedup and WARC on), nearcrawl --no-dedup (WARC on), wget2 -r --max-threads=16,
#   and wget -r --warc-file (Wget 1.x archiving as nearcrawl does, one page at a time).
# nearcrawl's politeness is opened for these hosts by flags: 16 connections per host, no
# delay, 16 requests in flight in all (wget2's 16 threads).
# Prints one row per crawl (pages, wall s, pages/s, CPU ms per page, peak RSS MB), the medians
# per crawler, and nearcrawl's time per page by stage (report.json run_stages).
# Installs python3.11-doc (scripts/quality-deps.sh), nginx-light, wget2 and wget when missing.
# Usage: scripts/bench-text.sh [HOSTS] [PAGES] [RUNS]       (defaults: 12 1500 3)
# NEARCRAWL=path/to/nearcrawl measures another build (default: target/release/nearcrawl).
# The crawlers write to tmpfs (/dev/shm; BENCH_DIR=DIR for another place, scripts/lib/workdir.sh; KEEP=1 keeps it).
# Before/after: NEARCRAWL_BINS="old/nearcrawl target/release/nearcrawl" crawls with each binary
# in turn (dedup on), alternating, RUNS rounds, and prints their medians; wget2 and wget are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-12}"
pages="${2:-1500}"
runs="${3:-3}"
port=18200

source scripts/lib/bench.sh
cargo build --release --locked --bin nearcrawl -p nearcrawl --example text_site -p nearcrawl-quality >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"

source scripts/lib/nginx.sh
work_dir bench-text /dev/shm
serve_text_site "$work" "$hosts" "$pages" "$port"

if [ -n "${NEARCRAWL_BINS:-}" ]; then
    for ((round = 1; round <= runs; round++)); do
        for bin in $NEARCRAWL_BINS; do
            nearcrawl="$bin"
            crawl dedup
            last="$(printf '%s' "${rows[nearcrawl (dedup)]}" | tail -n 1)"
            rows[$bin]+="$last"$'\n'
            stages[$bin]+="$(stage_line "$bench_out/crawl/report.json")"$'\n'
        done
    done
    echo "| build | pages fetched | wall s | pages/s | CPU ms per page | peak RSS MB |"
    echo "|---|---|---|---|---|---|"
    for bin in $NEARCRAWL_BINS; do
        median_row "$bin" "${rows[$bin]}"
    done
    for bin in $NEARCRAWL_BINS; do
        echo "$bin, us per page by stage, each round:"
        printf '%s' "${stages[$bin]}"
    done
    exit 0
fi

for ((round = 1; round <= runs; round++)); do
    crawl dedup
    crawl no-dedup
    # Every seed is its own host: --span-hosts lets wget2 recurse into each of them (links
    # are relative, so none leads elsewhere).
    crawl_wget2 --span-hosts
    crawl_wget_warc --span-hosts
done

print_rows
