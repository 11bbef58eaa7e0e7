#!/usr/bin/env bash
# The speed issue's two-core proxy: the coordinator's own CPU per decision. Crawls PAGES
# generated pages (scripts/lib/endless.sh: endless_site, dedup and WARC on, 32 connections,
# no delay) with the judge on a thread of its own (`[limits] judge_thread = "on"`, as on the
# many-core machines the proxy stands for), reads the coordinator's thread (the process's
# main thread, which blocks on the crawl) `utime + stime` from /proc and the decisions made
# (the --metrics endpoint's nearcrawl_decisions_total) every 0.2 s until the crawl ends, and
# prints two figures: its CPU over the whole run per record written (the reports written
# after the crawl included), and its CPU per decision between a tenth and nine tenths of
# the decisions (the crawl's steady state: what bounds its pages/s where the coordinator is
# the bottleneck).
# Usage: scripts/bench-coordinator.sh [PAGES] [RUNS]      (defaults: 100000, 3)
# NEARCRAWL_BINS="old/nearcrawl target/release/nearcrawl" alternates builds, RUNS rounds each,
# and prints each one's rounds and median (default: target/release/nearcrawl alone).
set -euo pipefail
cd "$(dirname "$0")/.."
pages="${1:-100000}"
runs="${2:-3}"
bins="${NEARCRAWL_BINS:-target/release/nearcrawl}"
source scripts/lib/workdir.sh
work_dir bench-coordinator
out="$work"
printf '[limits]\njudge_thread = "on"\n' > "$out/job.toml"
export CONFIG="$out/job.toml"
source scripts/lib/endless.sh
ticks=$(getconf CLK_TCK)
declare -A rounds
for ((round = 1; round <= runs; round++)); do
    for bin in $bins; do
        NEARCRAWL="$bin" endless_crawl "$pages" "$out" 18520 18521
        cpu=0
        : > "$out/samples.txt"
        while kill -0 "$crawler" 2>/dev/null; do
            # Fields 14 and 15 of the thread's stat, counted after the name's closing ")".
            stat=$(cat "/proc/$crawler/task/$crawler/stat" 2>/dev/null || true)
            if [ -n "$stat" ]; then
                cpu=$(printf '%s' "${stat##*) }" | awk '{print $12 + $13}')
                decided=$( (curl -s 127.0.0.1:18521/metrics || true) | awk '/^nearcrawl_decisions_total/ {print $2}')
                echo "$cpu ${decided:-}" >> "$out/samples.txt"
            fi
            sleep 0.2
        done
        wait "$crawler" || { echo "$bin: the crawl failed (see $out/crawl.txt)" >&2; exit 1; }
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
        records=$(wc -l < "$out/crawl/records.jsonl")
        # The steady state: the samples nearest a tenth and nine tenths of the decisions.
        steady=$(awk -v r="$records" -v t="$ticks" '
            NF == 2 && !lo && $2 >= r / 10 { lo = 1; c0 = $1; d0 = $2 }
            NF == 2 && $2 <= 9 * r / 10 { c1 = $1; d1 = $2 }
            END { if (d1 > d0) printf "%.4f", 1000 * (c1 - c0) / t / (d1 - d0); else print "-" }
        ' "$out/samples.txt")
        line=$(awk -v c="$cpu" -v t="$ticks" -v r="$records" -v s="$steady" \
            'BEGIN {printf "%.2f %d %.4f %s", c / t, r, 1000 * c / t / r, s}')
        echo "round $round, $bin: coordinator CPU s, records, ms per record, steady ms per decision: $line" >&2
        rounds[$bin]+="$line"$'\n'
    done
done
echo "| build | coordinator CPU s (each round) | median | ms per record | steady ms per decision (each round) | median |"
echo "|---|---|---|---|---|---|"
for bin in $bins; do
    # Medians as the lower middle round (of four rounds, the second).
    printf '%s' "${rounds[$bin]}" | python3 -c "
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
cpu, steady = [r[0] for r in rows], [r[3] for r in rows]
low = lambda xs: sorted(xs, key=lambda x: float(x) if x != '-' else 0)[(len(xs) - 1) // 2]
records = int(low([r[1] for r in rows]))
print('| %s | %s | %s | %.4f | %s | %s |' % (sys.argv[1], ', '.join(cpu), low(cpu),
      1000 * float(low(cpu)) / records, ', '.join(steady), low(steady)))
" "$bin"
done
