#!/usr/bin/env bash
# Memory over a long crawl (issue: throughput, "flat memory"). Serves PAGES generated pages
# from memory (crates/demo-web/examples/endless_site.rs: a tree of 2-4 kB pages, one in ten a
# copy of an earlier one) on 127.0.0.1, crawls them all with dedup and WARC on and politeness
# opened (32 connections, no delay), and samples the crawler every 2 seconds: pages fetched
# (from its --metrics endpoint) and resident memory (VmRSS). Prints the peak RSS, the store's
# disk bytes per page, the fingerprint index's bytes per entry (report.json), and writes
# OUT/rss.csv and OUT/rss.svg (RSS against pages fetched).
# Usage: scripts/bench-million.sh [PAGES] [OUT]     (defaults: 1000000, a new directory under /tmp,
# removed at the end unless KEEP=1; an OUT given is kept)
# NEARCRAWL=path/to/nearcrawl measures another build (default: target/release/nearcrawl).
set -euo pipefail
cd "$(dirname "$0")/.."
pages="${1:-1000000}"
source scripts/lib/workdir.sh
if [ -n "${2:-}" ]; then out="$2"; else work_dir bench-million; out="$work"; fi
metrics=18501
source scripts/lib/endless.sh
rm -f "$out/rss.csv"
endless_crawl "$pages" "$out" 18500 "$metrics"
echo "seconds,pages,rss_kb" > "$out/rss.csv"
start=$(date +%s)
while kill -0 "$crawler" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$crawler/status" 2>/dev/null || true)
    fetched=$(curl -s "127.0.0.1:$metrics/metrics" | awk '/^nearcrawl_pages_fetched_total/ {print $2}' || true)
    [ -n "$rss" ] && [ -n "$fetched" ] && echo "$(( $(date +%s) - start )),$fetched,$rss" >> "$out/rss.csv"
    sleep 2
done
wait "$crawler"
python3 - "$out" <<'PY'
import csv, json, os, sys
out = sys.argv[1]
rows = [(int(r["seconds"]), int(float(r["pages"])), int(r["rss_kb"])) for r in csv.DictReader(open(f"{out}/rss.csv"))]
report = json.load(open(f"{out}/crawl/report.json"))
state = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(f"{out}/crawl/state") for f in fs)
pages = report["pages_fetched"]
peak = max(r[2] for r in rows) / 1024 if rows else 0
print(f"pages fetched {pages}, {report['run_seconds']:.0f} s, {report['run_pages_per_second']:.0f} pages/s")
print(f"peak RSS {peak:.0f} MB (sampled every 2 s); store {state / 1e6:.0f} MB on disk, {state / max(pages, 1):.0f} bytes per page")
index = report.get("fingerprint_index", {})
if index:
    print(f"fingerprint index: {index['entries']} entries in {index['tables']} tables, {index['heap_bytes'] / 1e6:.0f} MB, {index['bytes_per_entry']:.1f} bytes each")
# RSS against pages, as an SVG line.
w, h, left, bottom = 640, 320, 60, 40
xmax = max((r[1] for r in rows), default=1) or 1
ymax = max((r[2] for r in rows), default=1) / 1024 or 1
pts = " ".join(f"{left + (w - left - 10) * p / xmax:.1f},{h - bottom - (h - bottom - 10) * (kb / 1024) / ymax:.1f}" for _, p, kb in rows)
svg = f'''<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">
<title>Resident memory against pages fetched</title>
<line x1="{left}" y1="10" x2="{left}" y2="{h - bottom}" stroke="#444"/><line x1="{left}" y1="{h - bottom}" x2="{w - 10}" y2="{h - bottom}" stroke="#444"/>
<text x="{left - 5}" y="14" text-anchor="end">{ymax:.0f} MB</text><text x="{left - 5}" y="{h - bottom}" text-anchor="end">0</text>
<text x="{w - 10}" y="{h - bottom + 15}" text-anchor="end">{xmax} pages</text>
<polyline fill="none" stroke="#2b7bb9" stroke-width="1.5" points="{pts}"/>
</svg>
'''
open(f"{out}/rss.svg", "w").write(svg)
print(f"{out}/rss.csv and {out}/rss.svg")
PY
