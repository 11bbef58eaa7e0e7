#!/usr/bin/env bash
# Corpus dedup speed: `nearcrawl dedup` against datasketch's MinHashLSH
# (scripts/minhash-dedup.py, installed by scripts/bench-tools.sh) on the same WARC files, in
# the same run, alternating, RUNS rounds; reports the median wall seconds, pages/s, CPU
# seconds per 1,000 pages and peak RSS of each. Release build.
# The WARC files: a real web crawled by `nearcrawl-lab dedup-quality --web NAME --out DIR`
# (DIR/baseline/warc/), or any others.
# Usage: scripts/bench-corpus-dedup.sh WARC... (RUNS=3 by default; TOOLS="0 2" runs only
# those of the tools below, by number: the trafilatura baseline takes a minute per run)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -gt 0 ] || { echo "usage: $0 WARC..." >&2; exit 2; }
runs="${RUNS:-3}"
chosen="${TOOLS:-0 1 2}"
python="$(./scripts/bench-tools.sh)"
cargo build --release --locked --bin nearcrawl >&2
source scripts/lib/workdir.sh
work_dir bench-corpus-dedup

measure() {
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >"$work/out.txt" 2>"$work/err.txt" \
        || { cat "$work/err.txt" >&2; exit 1; }
    cat "$work/time.txt"
}

# The tools: name, then the command (pages are counted from each one's own output).
tools=(
    "nearcrawl dedup"
    "MinHashLSH, trafilatura text, threshold 0.7"
    "MinHashLSH, all text (lxml), threshold 0.8"
)
run_tool() {
    case "$1" in
        0) rm -rf "$work/dedup"; measure target/release/nearcrawl dedup "${@:2}" --out "$work/dedup" ;;
        1) measure "$python" scripts/minhash-dedup.py "${@:2}" --out "$work/m.jsonl" --threshold 0.7 --extract trafilatura ;;
        2) measure "$python" scripts/minhash-dedup.py "${@:2}" --out "$work/m.jsonl" --threshold 0.8 --extract text ;;
    esac
}
pages_of() {
    case "$1" in
        0) python3 -c "import json; print(json.load(open('$work/dedup/summary.json'))['pages'])" ;;
        *) python3 -c "import json; print(json.load(open('$work/out.txt'))['pages'])" ;;
    esac
}

for round in $(seq 1 "$runs"); do
    for i in $chosen; do
        read -r wall user sys rss < <(run_tool "$i" "$@")
        echo "$i $(pages_of "$i") $wall $user $sys $rss" >> "$work/rows.txt"
    done
done

echo "| tool | pages | wall s (median of $runs) | pages/s | CPU s per 1,000 pages | peak RSS MB |"
echo "|---|---|---|---|---|---|"
for i in $chosen; do
    awk -v i="$i" -v name="${tools[$i]}" '$1 == i { n++; p = $2; w[n] = $3; c[n] = ($4 + $5) * 1000 / $2; r[n] = $6 }
        END {
            # Medians (of 3 or any count) by sorting.
            for (a = 1; a <= n; a++) for (b = a + 1; b <= n; b++) {
                if (w[b] < w[a]) { t = w[a]; w[a] = w[b]; w[b] = t }
                if (c[b] < c[a]) { t = c[a]; c[a] = c[b]; c[b] = t }
                if (r[b] < r[a]) { t = r[a]; r[a] = r[b]; r[b] = t }
            }
            m = int((n + 1) / 2)
            printf "| %s | %d | %.2f | %.0f | %.2f | %.0f |\n", name, p, w[m], p / w[m], c[m], r[m] / 1024
        }' "$work/rows.txt"
done
