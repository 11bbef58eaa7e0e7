#!/usr/bin/env bash
# Bytes saved against coverage for each `dedup.predict` setting (off, check, verify, skip) on
# each web (issue 43): runs `nearcrawl-lab quality` per web and setting, and draws one panel per
# web in OUT/predict-curve.svg: the share of the `--no-dedup` crawl's bytes each setting saved
# (x) against its coverage of the content groups (y), beside the two bounds (the full-coverage
# oracle's and the content-aware bound's savings, as vertical lines). Figures in
# OUT/predict-curve.csv.
# Usage: scripts/predict-curve.sh [OUT]    (default: a new directory under /tmp, removed
# at the end unless KEEP=1; an OUT given is kept)
# NEARCRAWL_LAB=path/to/nearcrawl-lab measures another build (default:
# target/release/nearcrawl-lab).
# The webs need scripts/quality-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/workdir.sh
if [ -n "${1:-}" ]; then out="$1"; else work_dir predict-curve; out="$work"; fi
bin="${NEARCRAWL_LAB:-target/release/nearcrawl-lab}"
[ -n "${NEARCRAWL_LAB:-}" ] || cargo build --release --locked -p nearcrawl-quality --bin nearcrawl-lab >&2
mkdir -p "$out"
webs=(
    "llvm-15-16|--web llvm-15-16 --size large"
    "clang-14-16|--web clang-14-16 --size large"
    "handbook-held-out|--web handbook-held-out --size large"
    "reference-languages|--web reference-languages --size large"
    "generated-git-1|--corpus git --seed 1"
    "generated-large-4|--size large --seed 4"
)
echo "web,predict,baseline_bytes,dedup_bytes,oracle_bytes,content_bound_bytes,coverage,predicted,predicted_wrong" > "$out/predict-curve.csv"
for web in "${webs[@]}"; do
    name="${web%%|*}"
    args="${web#*|}"
    for predict in off check verify skip; do
        printf '[dedup]\npredict = "%s"\n' "$predict" > "$out/$predict.toml"
        dir="$out/$name-$predict"
        # shellcheck disable=SC2086
        "$bin" quality $args --config "$out/$predict.toml" --out "$dir" > "$dir.txt" 2>&1
        python3 - "$dir/quality.json" "$name" "$predict" >> "$out/predict-curve.csv" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(",".join(str(x) for x in [sys.argv[2], sys.argv[3], m["baseline_bytes"], m["dedup_bytes"],
      m["oracle_bytes"], m["content_bound_bytes"], m["coverage"], m["predicted"], m["predicted_wrong"]]))
PY
        echo "$name $predict: $(grep -E '^bytes' "$dir.txt" | cut -c1-120)" >&2
    done
done
python3 - "$out" <<'PY'
import csv, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/predict-curve.csv")))
webs = list(dict.fromkeys(r["web"] for r in rows))
colours = {"off": "#8a8a8a", "check": "#2b7bb9", "verify": "#3a9d5d", "skip": "#d9822b"}
pw, ph, pad = 260, 220, 40
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{pw * len(webs) + 20}" height="{ph + 70}" font-family="sans-serif" font-size="10">',
       "<title>Bytes saved against coverage for each dedup.predict setting, with the two bounds</title>"]
for i, web in enumerate(webs):
    x0 = 10 + i * pw
    part = [r for r in rows if r["web"] == web]
    base = float(part[0]["baseline_bytes"]) or 1
    saved = lambda b: (base - float(b)) / base
    oracle, bound = saved(part[0]["oracle_bytes"]), saved(part[0]["content_bound_bytes"])
    xmax = max([oracle, bound] + [saved(r["dedup_bytes"]) for r in part]) * 1.1 or 1
    ymin = min([0.98] + [float(r["coverage"]) for r in part])
    X = lambda v: x0 + pad + (pw - pad - 15) * v / xmax
    Y = lambda c: 20 + (ph - 40) * (1 - (c - ymin) / (1 - ymin or 1))
    svg.append(f'<text x="{x0 + pw / 2}" y="12" text-anchor="middle">{web}</text>')
    svg.append(f'<line x1="{X(0)}" y1="{Y(1)}" x2="{X(0)}" y2="{Y(ymin)}" stroke="#444"/>')
    svg.append(f'<line x1="{X(0)}" y1="{Y(ymin)}" x2="{X(xmax)}" y2="{Y(ymin)}" stroke="#444"/>')
    svg.append(f'<text x="{X(0) - 3}" y="{Y(1) + 3}" text-anchor="end">1.00</text>')
    svg.append(f'<text x="{X(0) - 3}" y="{Y(ymin) + 3}" text-anchor="end">{ymin:.2f}</text>')
    svg.append(f'<text x="{X(xmax)}" y="{Y(ymin) + 12}" text-anchor="end">{100 * xmax:.0f} % of bytes saved</text>')
    for value, label, dash in [(oracle, "oracle", "4 2"), (bound, "content-aware", "1 2")]:
        svg.append(f'<line x1="{X(value)}" y1="{Y(1)}" x2="{X(value)}" y2="{Y(ymin)}" stroke="#b94a48" stroke-dasharray="{dash}"/>')
        svg.append(f'<text x="{X(value) + 2}" y="{Y(1) + 10 + (10 if dash == "1 2" else 0)}" fill="#b94a48">{label}</text>')
    for r in part:
        svg.append(f'<circle cx="{X(saved(r["dedup_bytes"])):.1f}" cy="{Y(float(r["coverage"])):.1f}" r="4" fill="{colours[r["predict"]]}" fill-opacity="0.8"><title>{r["predict"]}: {100 * saved(r["dedup_bytes"]):.2f} % saved, coverage {float(r["coverage"]):.3f}</title></circle>')
for j, (name, c) in enumerate(colours.items()):
    svg.append(f'<circle cx="{20 + 90 * j}" cy="{ph + 45}" r="4" fill="{c}"/><text x="{28 + 90 * j}" y="{ph + 49}">predict = {name}</text>')
svg.append("</svg>")
open(f"{out}/predict-curve.svg", "w").write("\n".join(svg))
print(f"{out}/predict-curve.csv and {out}/predict-curve.svg")
PY
