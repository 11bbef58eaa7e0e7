#!/usr/bin/env bash
# Scale-out under latency (issue: scale-out): HOSTS generated sites (crates/demo-web/examples/
# endless_site.rs, one per loopback address 127.0.2.H) of PAGES pages each, every page answered
# after DELAY_MS, so the crawl is bound by latency and politeness, not by this machine's cores.
# Crawled, RUNS rounds, alternating, by 1, 2 and 4 workers (separate processes) of a shared
# job on one redis-server on loopback, each worker 8 requests in flight, the job 4 connections
# per host and no delay, dedup and WARC on. Prints per crawl: pages (all workers), wall s
# (until the last worker ends), pages/s, and per worker count the median and its ratio to
# N x one worker's median; on stderr, per crawl, the URLs fetched by two workers (none without
# a crash) and Redis's memory per page.
# Usage: scripts/bench-scale.sh [HOSTS] [PAGES] [DELAY_MS] [RUNS]   (defaults: 8 600 50 3)
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-8}"
pages="${2:-600}"
delay="${3:-50}"
runs="${4:-3}"
port=18300
redis_port=18380

cargo build --release --locked --bin nearcrawl -p nearcrawl --example endless_site -p nearcrawl-demo-web >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"
redis_server="$(scripts/debian-tool.sh redis-server)"
source scripts/lib/workdir.sh
work_dir bench-scale
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
    sleep 0.5
}
on_exit cleanup
: > "$work/seeds.txt"
for ((h = 0; h < hosts; h++)); do
    addr="127.0.2.$((h + 1))"
    target/release/examples/endless_site "$addr:$port" "$pages" "$delay" "$((h + 1))" 2>/dev/null &
    pids+=($!)
    echo "http://$addr:$port/p/1.html" >> "$work/seeds.txt"
done
"$redis_server" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize yes --logfile "$work/redis.log" --dir "$work"
sleep 0.5
redis="redis://127.0.0.1:$redis_port/"
flags=(--per-host-delay-ms 0 --max-connections-per-host 4 --concurrency 8)

declare -A rows
crawl() { # N workers
    local n="$1" job="scale-$RANDOM-$RANDOM" w
    rm -rf "$work"/crawl*
    redis-cli -p "$redis_port" flushall >/dev/null
    local before start end total=0
    before=$(redis-cli -p "$redis_port" info memory | awk -F: '/^used_memory:/ {print $2}' | tr -d '\r')
    start=$(date +%s.%N)
    local workers=()
    for ((w = 0; w < n; w++)); do
        "$nearcrawl" crawl --seeds "$work/seeds.txt" --out "$work/crawl$w" --redis "$redis" \
            --job "$job" --worker "w$w" "${flags[@]}" >/dev/null 2>"$work/err$w.txt" &
        workers+=($!)
    done
    for pid in "${workers[@]}"; do wait "$pid" || { cat "$work"/err*.txt >&2; exit 1; }; done
    end=$(date +%s.%N)
    for ((w = 0; w < n; w++)); do
        total=$((total + $(python3 -c "import json;print(json.load(open('$work/crawl$w/report.json'))['pages_fetched'])")))
    done
    local twice
    twice=$(python3 -c "
import json, glob, collections
urls = collections.Counter()
for f in glob.glob('$work/crawl*/records.jsonl'):
    for l in open(f):
        r = json.loads(l)
        if r.get('status') is not None: urls[r['url']] += 1
print(sum(1 for n in urls.values() if n > 1))")
    local after
    after=$(redis-cli -p "$redis_port" info memory | awk -F: '/^used_memory:/ {print $2}' | tr -d '\r')
    local line
    line=$(python3 -c "w = $end - $start; print('%d %.2f %.1f' % ($total, w, $total / w))")
    rows[$n]+="$line"$'\n'
    echo "$n workers: $line; URLs fetched twice: $twice; redis used_memory +$(( (after - before) / 1024 )) kB, $(( (after - before) / total )) bytes per page" >&2
}

for ((round = 1; round <= runs; round++)); do
    for n in 1 2 4; do crawl "$n"; done
done
echo "| workers | pages fetched | wall s | pages/s (median of $runs) | x one worker | floor 0.8 x N |"
echo "|---|---|---|---|---|---|"
one=$(printf '%s' "${rows[1]}" | python3 -c "import sys,statistics; print(statistics.median(float(l.split()[2]) for l in sys.stdin if l.strip()))")
for n in 1 2 4; do
    printf '%s' "${rows[$n]}" | python3 -c "
import sys, statistics
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
p, w, r = (statistics.median(c) for c in zip(*rows))
n, one = int(sys.argv[1]), float(sys.argv[2])
print('| %d | %d | %.2f | %.1f | %.2f | %s |' % (n, p, w, r, r / one, 'holds' if r >= 0.8 * n * one else 'missed'))
" "$n" "$one"
done
