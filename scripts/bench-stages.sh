#!/usr/bin/env bash
# Time per page of each pipeline stage over a long crawl (issue: speed, "no collapse"). Serves
# PAGES generated pages from memory (crates/demo-web/examples/endless_site.rs: a tree of
# 2-4 kB pages, one in ten a copy of an earlier one) on 127.0.0.1, crawls them all with dedup
# and WARC on and politeness opened (32 connections, no delay), and samples the crawler's
# --metrics endpoint every 2 seconds: pages fetched and the seconds spent in each stage
# (nearcrawl_stage_seconds_total). Between samples, each stage's microseconds per page
# fetched, and the sentence matches per page (nearcrawl_sentence_matches_total: the work
# verification's time follows); printed per tenth of the crawl, and written to OUT/stages.csv and OUT/stages.svg
# (microseconds per page of each stage against pages crawled).
# Usage: scripts/bench-stages.sh [PAGES] [OUT]     (defaults: 200000, a new directory under /tmp,
# removed at the end unless KEEP=1; an OUT given is kept)
# NEARCRAWL=path/to/nearcrawl measures another build (default: target/release/nearcrawl);
# TASKSET="taskset -c 0-1" pins the crawler (the server is not pinned); SHARING=stationary
# serves pages that share as much text with lower-numbered ones at the millionth page as at
# the thousandth (a crawl in link order still finds more of it as it goes; by default the three paragraphs of a page come from one pool of 20,000, so the
# later the page, the more earlier pages share each of them); CONFIG=file.toml configures the job.
set -euo pipefail
cd "$(dirname "$0")/.."
pages="${1:-200000}"
source scripts/lib/workdir.sh
if [ -n "${2:-}" ]; then out="$2"; else work_dir bench-stages; out="$work"; fi
metrics=18511
source scripts/lib/endless.sh
rm -f "$out/samples.txt"
endless_crawl "$pages" "$out" 18510 "$metrics"
start=$(date +%s.%N)
while kill -0 "$crawler" 2>/dev/null; do
    now=$(date +%s.%N)
    body=$(curl -s "127.0.0.1:$metrics/metrics" || true)
    if [ -n "$body" ]; then
        printf "sample %s\n%s\n" "$(awk "BEGIN {print $now - $start}")" "$body" >> "$out/samples.txt"
    fi
    sleep 2
done
wait "$crawler"
python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
samples, cur = [], None
for line in open(f"{out}/samples.txt"):
    if line.startswith("sample "):
        cur = {"t": float(line.split()[1]), "pages": 0.0, "matches": 0.0, "stages": {}}
        samples.append(cur)
    elif line.startswith("nearcrawl_pages_fetched_total"):
        cur["pages"] = float(line.split()[-1])
    elif line.startswith("nearcrawl_sentence_matches_total"):
        cur["matches"] = float(line.split()[-1])
    elif line.startswith("nearcrawl_stage_seconds_total"):
        stage = re.search(r'stage="([^"]+)"', line).group(1)
        cur["stages"][stage] = float(line.split()[-1])
samples = [s for s in samples if s["pages"] > 0]
stages = sorted({k for s in samples for k in s["stages"]})
rows = []
for a, b in zip(samples, samples[1:]):
    dp = b["pages"] - a["pages"]
    if dp < 100:
        continue
    us = {k: 1e6 * (b["stages"].get(k, 0) - a["stages"].get(k, 0)) / dp for k in stages}
    rows.append((b["pages"], dp / (b["t"] - a["t"]), us, (b["matches"] - a["matches"]) / dp))
with open(f"{out}/stages.csv", "w") as f:
    f.write("pages,pages_per_second," + ",".join(stages) + ",sentence_matches_per_page\n")
    for p, rate, us, matches in rows:
        f.write(f"{p:.0f},{rate:.0f}," + ",".join(f"{us[k]:.1f}" for k in stages) + f",{matches:.2f}\n")
# Per tenth of the crawl: the mean of the samples in it, weighted by pages.
total = rows[-1][0] if rows else 0
print("pages".rjust(9), "pages/s".rjust(8), *(k.rjust(9) for k in stages), "matches".rjust(8))
for tenth in range(10):
    lo, hi = total * tenth / 10, total * (tenth + 1) / 10
    part = [r for r in rows if lo < r[0] <= hi]
    if not part:
        continue
    n = len(part)
    print(f"{hi:9.0f} {sum(r[1] for r in part) / n:8.0f}",
          *(f"{sum(r[2][k] for r in part) / n:9.1f}" for k in stages),
          f"{sum(r[3] for r in part) / n:8.2f}")
# One line per stage against pages, as an SVG.
w, h, left, bottom = 720, 360, 60, 40
colours = ["#2b7bb9", "#d9822b", "#8a8a8a", "#3a9d5d", "#b94a48", "#7a5fb0", "#c7a500",
           "#1b9e9e", "#e377c2", "#555555", "#9c6b30", "#17becf", "#bcbd22"]
xmax = total or 1
ymax = max((max(r[2].values()) for r in rows), default=1) or 1
lines, legend = [], []
for i, k in enumerate(stages):
    c = colours[i % len(colours)]
    pts = " ".join(f"{left + (w - left - 130) * p / xmax:.1f},{h - bottom - (h - bottom - 10) * us[k] / ymax:.1f}" for p, _, us, _ in rows)
    lines.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{pts}"/>')
    legend.append(f'<text x="{w - 120}" y="{20 + 14 * i}" fill="{c}">{k}</text>')
svg = f'''<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">
<title>Microseconds per page of each stage against pages crawled</title>
<line x1="{left}" y1="10" x2="{left}" y2="{h - bottom}" stroke="#444"/><line x1="{left}" y1="{h - bottom}" x2="{w - 130}" y2="{h - bottom}" stroke="#444"/>
<text x="{left - 5}" y="14" text-anchor="end">{ymax:.0f} us</text><text x="{left - 5}" y="{h - bottom}" text-anchor="end">0</text>
<text x="{w - 130}" y="{h - bottom + 15}" text-anchor="end">{xmax:.0f} pages</text>
{chr(10).join(lines)}
{chr(10).join(legend)}
</svg>
'''
open(f"{out}/stages.svg", "w").write(svg)
print(f"{out}/stages.csv and {out}/stages.svg")
PY
