#!/usr/bin/env bash
# Rendered pages per second (issue "render", its speed floor): nearcrawl `--render always`
# against Crawlee's PlaywrightCrawler on the same script-built site, both in Debian's chromium
# (scripts/browser-deps.sh), no per-host delay, CONCURRENCY pages at once each, RUNS rounds
# alternating. The site is the text-rich web of scripts/bench-text.sh (HOSTS nginx hosts of
# PAGES pages of real documentation sentences) with every page turned into a script's shell:
# "Loading...", the page's body as JSON data and /app.js, which writes it into the document
# (as `nearcrawl-lab quality --scripted` does). Output under BENCH_DIR (default /dev/shm,
# scripts/lib/workdir.sh), removed at the end unless KEEP=1. Installs Crawlee and Playwright
# from npm under target/bench-peers/ (PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: no browser
# downloaded). Prints one row per crawl and the medians: pages, wall s, pages/s, CPU ms per
# page (the browsers' included), peak RSS of the crawler's own process.
# Usage: scripts/bench-render.sh [HOSTS] [PAGES] [RUNS] [CONCURRENCY]   (defaults: 2 150 3 4)
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-2}"
pages="${2:-150}"
runs="${3:-3}"
concurrency="${4:-4}"
port=18300
CRAWLEE_VERSION=3.18.1
PLAYWRIGHT_VERSION=1.57.0

source scripts/lib/bench.sh
cargo build --release --locked --bin nearcrawl -p nearcrawl --example text_site -p nearcrawl-quality >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"
chromium="$(./scripts/browser-deps.sh)"

tools="$PWD/target/bench-peers"
mkdir -p "$tools"
if [ ! -d "$tools/node_modules/playwright" ] || [ ! -d "$tools/node_modules/crawlee" ]; then
    (cd "$tools" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund \
        "crawlee@$CRAWLEE_VERSION" "playwright@$PLAYWRIGHT_VERSION" >&2)
fi

source scripts/lib/nginx.sh
work_dir bench-render /dev/shm
serve_text_site "$work" "$hosts" "$pages" "$port"
# Every page a script's shell; the script on every host.
python3 - "$work/site" <<'PY'
import json, pathlib, re, sys
app = ("const page = JSON.parse(document.getElementById('page').textContent);\n"
       "document.title = page.title;\ndocument.body.innerHTML = page.body;\n")
for host in pathlib.Path(sys.argv[1]).iterdir():
    (host / "app.js").write_text(app)
    for page in host.rglob("*.html"):
        html = page.read_text(errors="replace")
        title = re.search(r"<title>(.*?)</title>", html, re.S)
        body = re.search(r"<body[^>]*>(.*)</body>", html, re.S)
        data = json.dumps({"title": title.group(1) if title else "",
                           "body": body.group(1) if body else html}).replace("</", "<\\/")
        page.write_text('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Loading</title>'
                        '</head><body><div id="root">Loading...</div>'
                        f'<script id="page" type="application/json">{data}</script>'
                        '<script src="/app.js"></script></body></html>')
PY
chmod -R a+rX "$work/site"

crawl_nearcrawl() {
    out_dir
    rm -rf "$bench_out/nearcrawl"
    read -r wall user sys rss < <(measure "$nearcrawl" crawl --seeds "$work/seeds.txt" --out "$bench_out/nearcrawl" \
        --render always --concurrency "$concurrency" --per-host-delay-ms 0 --per-address-delay-ms 0)
    local fetched
    fetched=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['render']['rendered'])" \
        "$bench_out/nearcrawl/report.json")
    record "nearcrawl --render always" "$fetched" "$wall" "$user" "$sys" "$rss"
}

crawl_playwright() {
    out_dir
    rm -rf "$bench_out/crawlee"; mkdir -p "$bench_out/crawlee"
    cp scripts/peers/crawlee_playwright.mjs "$tools/crawlee_playwright.mjs"
    read -r wall user sys rss < <(cd "$bench_out/crawlee" && CRAWLEE_STORAGE_DIR="$bench_out/crawlee/storage" \
        measure node "$tools/crawlee_playwright.mjs" "$work/seeds.txt" "$bench_out/crawlee/pages.txt" "$concurrency" "$chromium")
    record "Crawlee (PlaywrightCrawler)" "$(cat "$bench_out/crawlee/pages.txt")" "$wall" "$user" "$sys" "$rss"
}

for ((round = 1; round <= runs; round++)); do
    crawl_nearcrawl
    crawl_playwright
done

echo "| crawler | pages rendered | wall s | pages/s | CPU ms per page | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for name in "nearcrawl --render always" "Crawlee (PlaywrightCrawler)"; do
    median_row "$name" "${rows[$name]}"
done
