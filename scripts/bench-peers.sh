#!/usr/bin/env bash
# nearcrawl against the crawlers users pick instead (issue 47, "against the crawlers users pick
# instead"), on the text-rich web of scripts/bench-text.sh: HOSTS nginx hosts of PAGES pages
# of real documentation sentences, 16 requests in flight, output on disk (BENCH_DIR, default
# /dev/shm: scripts/lib/workdir.sh; removed at the end unless KEEP=1), RUNS rounds alternating:
#   nearcrawl (dedup and WARC on), spider-rs (the `spider` crate, scripts/peers/spider-crawl:
#   one process, a `Website` per host, 16 requests in flight shared among them; exact-URL
#   dedup only, no WARC), wget2 -r --max-threads=16,
#   wget -r --warc-file, Scrapy 2.x (16 requests; and writing WARC through warcio), and
#   Crawlee's CheerioCrawler (16 at once).
# Installs what is missing under target/bench-peers/ (nothing system-wide but wget, wget2 and
# nginx from Debian): Scrapy and warcio from PyPI in a venv, Crawlee from npm, the `spider`
# crate from crates.io (scripts/peers/spider-crawl built with its lock file, a few minutes the
# first time; spider_cli too for PEERS=spider-cli).
# Prints one row per crawl and the medians: pages, wall s, pages/s, CPU ms per page, peak RSS.
# Check the pages column: spider_cli 2.53.9 (PEERS=spider-cli, a process per host) fetched only
# part of the web in most rounds here (docs/BENCHMARKS.md, "Against the crawlers users pick
# instead"); the crate (default features) fetches all of it.
# Usage: scripts/bench-peers.sh [HOSTS] [PAGES] [RUNS]       (defaults: 12 1500 4)
# PEERS="nearcrawl spider wget2" runs only those (names: nearcrawl spider spider-cli wget2
# wget-warc scrapy scrapy-warc crawlee).
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-12}"
pages="${2:-1500}"
runs="${3:-4}"
port=18200
peers="${PEERS:-nearcrawl spider wget2 wget-warc scrapy scrapy-warc crawlee}"
SPIDER_VERSION=2.53.9
SCRAPY_VERSION=2.19.0
CRAWLEE_VERSION=3.18.1

source scripts/lib/bench.sh
cargo build --release --locked --bin nearcrawl -p nearcrawl --example text_site -p nearcrawl-quality >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"

tools="$PWD/target/bench-peers"
mkdir -p "$tools"
wants() { [[ " $peers " == *" $1 "* ]]; }
if wants spider-cli && [ ! -x "$tools/bin/spider" ]; then
    cargo install --quiet --locked spider_cli --version "$SPIDER_VERSION" --root "$tools" >&2
fi
if wants spider; then
    cargo build --quiet --release --locked --manifest-path scripts/peers/spider-crawl/Cargo.toml \
        --target-dir "$tools/spider-crawl" >&2
fi
if { wants scrapy || wants scrapy-warc; } && ! "$tools/venv/bin/python" -c 'import scrapy, warcio' 2>/dev/null; then
    python3 -m venv "$tools/venv" >&2
    "$tools/venv/bin/pip" install --quiet --disable-pip-version-check "scrapy==$SCRAPY_VERSION" 'warcio==1.7.5' >&2
fi
if wants crawlee && [ ! -d "$tools/node_modules/crawlee" ]; then
    (cd "$tools" && npm install --silent --no-audit --no-fund "crawlee@$CRAWLEE_VERSION" >&2)
fi

source scripts/lib/nginx.sh
work_dir bench-peers /dev/shm
serve_text_site "$work" "$hosts" "$pages" "$port"

# spider-rs: the `spider` crate, every host at once in one process (scripts/peers/spider-crawl).
crawl_spider() {
    out_dir
    read -r wall user sys rss < <(measure "$tools/spider-crawl/release/spider-crawl" "$work/seeds.txt" 16)
    record "spider-rs (spider crate)" "$(cat "$work/out.txt")" "$wall" "$user" "$sys" "$rss"
}

# spider_cli: one process per host, all at once; pages: the links it visited.
crawl_spider_cli() {
    out_dir
    rm -rf "$bench_out/spider"; mkdir -p "$bench_out/spider"
    read -r wall user sys rss < <(measure sh -c '
        i=0; while read -r url; do i=$((i+1)); "$1" --url "$url" crawl -o > "$2/links-$i.txt" & done < "$3"; wait' \
        spider "$tools/bin/spider" "$bench_out/spider" "$work/seeds.txt")
    fetched=$(cat "$bench_out/spider"/links-*.txt | grep -c 'http' || true)
    record "spider-rs (spider_cli)" "$fetched" "$wall" "$user" "$sys" "$rss"
}

# crawl_scrapy [--warc]: the Scrapy spider of scripts/peers/scrapy_crawl.py.
crawl_scrapy() {
    out_dir
    rm -rf "$bench_out/scrapy"; mkdir -p "$bench_out/scrapy"
    local name="Scrapy" extra=()
    if [ "${1:-}" = --warc ]; then name="Scrapy + warcio WARC"; extra=(--warc "$bench_out/scrapy/archive.warc.gz"); fi
    read -r wall user sys rss < <(measure "$tools/venv/bin/python" scripts/peers/scrapy_crawl.py \
        "$work/seeds.txt" "$bench_out/scrapy/pages.txt" "${extra[@]}")
    record "$name" "$(cat "$bench_out/scrapy/pages.txt")" "$wall" "$user" "$sys" "$rss"
}

# crawl_crawlee: Crawlee's CheerioCrawler, scripts/peers/crawlee_crawl.mjs.
crawl_crawlee() {
    out_dir
    rm -rf "$bench_out/crawlee"; mkdir -p "$bench_out/crawlee"
    cp scripts/peers/crawlee_crawl.mjs "$tools/crawlee_crawl.mjs"
    read -r wall user sys rss < <(cd "$bench_out/crawlee" && CRAWLEE_STORAGE_DIR="$bench_out/crawlee/storage" \
        measure node "$tools/crawlee_crawl.mjs" "$work/seeds.txt" "$bench_out/crawlee/pages.txt")
    record "Crawlee (CheerioCrawler)" "$(cat "$bench_out/crawlee/pages.txt")" "$wall" "$user" "$sys" "$rss"
}

names=()
for ((round = 1; round <= runs; round++)); do
    for peer in $peers; do
        case "$peer" in
            nearcrawl) crawl dedup; names+=("nearcrawl (dedup)") ;;
            spider) crawl_spider; names+=("spider-rs (spider crate)") ;;
            spider-cli) crawl_spider_cli; names+=("spider-rs (spider_cli)") ;;
            wget2) crawl_wget2 --span-hosts; names+=("wget2 -r") ;;
            wget-warc) crawl_wget_warc --span-hosts; names+=("wget -r --warc-file") ;;
            scrapy) crawl_scrapy; names+=("Scrapy") ;;
            scrapy-warc) crawl_scrapy --warc; names+=("Scrapy + warcio WARC") ;;
            crawlee) crawl_crawlee; names+=("Crawlee (CheerioCrawler)") ;;
            *) echo "unknown peer: $peer" >&2; exit 2 ;;
        esac
    done
done

echo "| crawler | pages fetched | wall s | pages/s | CPU ms per page | peak RSS MB |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${names[@]}" | awk '!seen[$0]++' | while read -r name; do
    median_row "$name" "${rows[$name]}"
done
