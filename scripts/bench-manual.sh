#!/usr/bin/env bash
# Throughput on a real manual (issue: throughput): Debian's HTML documentation of PostgreSQL
# 15 (postgresql-doc-15, 1,169 pages) or Python 3.11 (python3.11-doc, 530 pages), served by
# nginx on 127.0.0.1, crawled whole from its index page, RUNS rounds, alternating:
#   nearcrawl (dedup and WARC on), nearcrawl --no-dedup (WARC on), wget2 -r --max-threads=16,
#   and wget -r --warc-file (Wget 1.x archiving as nearcrawl does, one page at a time).
# nearcrawl's politeness is opened by flags as in bench-text.sh (16 connections, no delay).
# Prints one row per crawl, the medians per crawler (pages, wall s, pages/s, CPU ms per page,
# peak RSS MB) and nearcrawl's time per page by stage (report.json run_stages).
# Usage: scripts/bench-manual.sh [postgresql|python] [RUNS]      (defaults: postgresql 3)
# Installs the manual's package (scripts/quality-deps.sh has both), nginx-light, wget2 and
# wget when missing. NEARCRAWL=path/to/nearcrawl measures another build. The crawlers write to
# tmpfs (/dev/shm; BENCH_DIR=DIR for another place, scripts/lib/workdir.sh; KEEP=1 keeps it).
set -euo pipefail
cd "$(dirname "$0")/.."
manual="${1:-postgresql}"
runs="${2:-3}"
port=18300
source scripts/lib/manual.sh
manual_root "$manual" || { echo "usage: $0 [postgresql|python] [RUNS]" >&2; exit 2; }

source scripts/lib/bench.sh
cargo build --release --locked --bin nearcrawl >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"

source scripts/lib/nginx.sh
work_dir bench-manual /dev/shm
# The manual's directory is a symbolic link into another package's (python3.11-doc).
start_nginx "$work" "$(readlink -f "$root")" "$port"
echo "http://127.0.0.1:$port/index.html" > "$work/seeds.txt"

for ((round = 1; round <= runs; round++)); do
    crawl dedup
    crawl no-dedup
    crawl_wget2
    crawl_wget_warc
done
print_rows
