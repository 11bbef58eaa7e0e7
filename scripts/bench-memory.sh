#!/usr/bin/env bash
# Memory benchmark (issue 21): peak RSS of nearcrawl on a hostile site served by nginx on
# 127.0.0.1 (scripts/hostile_site.py: a page of a million links, one of 100,000, six 9 MiB
# pages, a million nested elements, a 9 MiB word, a gzip bomb), each page crawled alone and
# then the whole site with 16 connections at once (its 100,000 404 links included).
# Memory is bounded by configuration: links.max_per_page, dedup.max_text_bytes,
# fetch.max_body_bytes, fetch.large_body_bytes and fetch.max_large_bodies.
# Usage: scripts/bench-memory.sh [NEARCRAWL_BINARY]   (default: a release build of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
port=18097
bin="${1:-}"
if [ -z "$bin" ]; then
    cargo build --release --locked --bin nearcrawl >&2
    bin=target/release/nearcrawl
fi
source scripts/lib/nginx.sh
work_dir bench-memory
python3 scripts/hostile_site.py "$work/site"
chmod -R a+rX "$work"
start_nginx "$work" "$work/site" "$port" "location /bomb.html { gzip_static always; }"
politeness='[politeness]
max_connections_per_host = 16
per_host_delay_ms = 0
[limits]
concurrency = 16'
printf '%s\nmax_pages = 1\n' "$politeness" > "$work/one.toml"
printf '%s\n' "$politeness" > "$work/all.toml"
echo "| crawl | wall s | peak RSS MB |"
echo "|---|---|---|"
for page in million links100k big1 nest blob bomb; do
    echo "http://127.0.0.1:$port/$page.html" > "$work/seeds.txt"
    rm -rf "$work/out"
    /usr/bin/time -f "%e %M" -o "$work/time" "$bin" crawl --seeds "$work/seeds.txt" \
        --out "$work/out" --config "$work/one.toml" >/dev/null 2>&1
    read -r wall rss < "$work/time"
    echo "| $page.html alone | $wall | $((rss / 1024)) |"
done
echo "http://127.0.0.1:$port/index.html" > "$work/seeds.txt"
rm -rf "$work/out"
/usr/bin/time -f "%e %M" -o "$work/time" "$bin" crawl --seeds "$work/seeds.txt" \
    --out "$work/out" --config "$work/all.toml" >/dev/null 2>&1
read -r wall rss < "$work/time"
pages=$(wc -l < "$work/out/records.jsonl")
echo "| the whole site ($pages records) | $wall | $((rss / 1024)) |"
