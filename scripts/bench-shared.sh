#!/usr/bin/env bash
# Scale-out (issue: scale-out): the text-rich site of bench-text.sh (HOSTS sites of PAGES pages
# of real documentation sentences, nginx on 127.0.1.H) crawled, RUNS rounds, alternating, by:
#   one process (no Redis), one worker of a shared job, and WORKERS workers of a shared job
#   (separate processes on this machine, one redis-server on loopback, dedup and WARC on).
# Politeness opened as in bench-text.sh (16 connections per host across the job, no delay),
# 16 requests in flight per process. Prints, per crawl: pages (all workers), wall s (until the
# last worker ends), pages/s, CPU ms per page (all workers' user + system; redis-server's
# apart), peak RSS MB (the largest worker), and the medians; then the job's Redis memory.
# Each crawl's line on stderr also gives the pages each worker fetched (the balance).
# Installs python3.11-doc (scripts/quality-deps.sh), nginx-light and redis-server when missing.
# Usage: scripts/bench-shared.sh [HOSTS] [PAGES] [RUNS] [WORKERS]   (defaults: 12 1500 3 2)
# BENCH_FLAGS="--config FILE" passes more flags to every crawl.
set -euo pipefail
cd "$(dirname "$0")/.."
hosts="${1:-12}"
pages="${2:-1500}"
runs="${3:-3}"
workers="${4:-2}"
port=18200
redis_port=18379

source scripts/lib/bench.sh
cargo build --release --locked --bin nearcrawl -p nearcrawl --example text_site -p nearcrawl-quality >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"
redis_server="$(scripts/debian-tool.sh redis-server)"

source scripts/lib/nginx.sh
work_dir bench-shared /dev/shm
serve_text_site "$work" "$hosts" "$pages" "$port"
"$redis_server" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no \
    --daemonize yes --pidfile "$work/redis.pid" --logfile "$work/redis.log" --dir "$work"
on_exit "kill \$(cat '$work/redis.pid' 2>/dev/null) 2>/dev/null; sleep 0.5"
sleep 0.3
redis="redis://127.0.0.1:$redis_port/"
flags=(--per-host-delay-ms 0 --max-connections-per-host 16 --concurrency 16)
# BENCH_FLAGS: more flags for every crawl (e.g. "--config FILE").
read -r -a extra <<<"${BENCH_FLAGS:-}"
flags+=("${extra[@]}")

# rows and median_row come from scripts/lib/bench.sh; crawl is this script's own.
pages_of() { python3 -c "import json;print(json.load(open('$1/report.json'))['pages_fetched'])"; }

# crawl NAME N: N=0 one process without Redis; else N workers of a new shared job.
crawl() {
    local name="$1" n="$2" job="bench-$RANDOM-$RANDOM"
    rm -rf "$work"/crawl*
    local start end
    start=$(date +%s.%N)
    if [ "$n" = 0 ]; then
        /usr/bin/time -f "%U %S %M" -o "$work/time0.txt" "$nearcrawl" crawl --seeds "$work/seeds.txt" \
            --out "$work/crawl0" "${flags[@]}" >/dev/null 2>"$work/err0.txt" || { cat "$work/err0.txt" >&2; exit 1; }
    else
        local pids=()
        for ((w = 0; w < n; w++)); do
            /usr/bin/time -f "%U %S %M" -o "$work/time$w.txt" "$nearcrawl" crawl --seeds "$work/seeds.txt" \
                --out "$work/crawl$w" --redis "$redis" --job "$job" --worker "w$w" "${flags[@]}" \
                >/dev/null 2>"$work/err$w.txt" &
            pids+=($!)
        done
        for pid in "${pids[@]}"; do wait "$pid" || { cat "$work"/err*.txt >&2; exit 1; }; done
    fi
    end=$(date +%s.%N)
    local total=0 cpu=0 rss=0 count=$((n > 0 ? n : 1)) each=""
    for ((w = 0; w < count; w++)); do
        each+=" $(pages_of "$work/crawl$w")"
        total=$((total + $(pages_of "$work/crawl$w")))
        read -r user sys maxrss < "$work/time$w.txt"
        cpu=$(python3 -c "print($cpu + $user + $sys)")
        rss=$((maxrss > rss ? maxrss : rss))
    done
    local line
    line=$(python3 -c "w = $end - $start; print('%d %.2f %.1f %.3f %.0f' % ($total, w, $total / w, $cpu * 1000 / $total, $rss / 1024))")
    rows[$name]+="$line"$'\n'
    echo "$name: $line (pages by worker:$each)" >&2
}

for ((round = 1; round <= runs; round++)); do
    crawl "one process" 0
    crawl "1 shared worker" 1
    crawl "$workers shared workers" "$workers"
done
echo "| crawl | pages fetched | wall s | pages/s | CPU ms per page | peak RSS MB (largest worker) |"
echo "|---|---|---|---|---|---|"
for name in "one process" "1 shared worker" "$workers shared workers"; do
    median_row "$name" "${rows[$name]}"
done
echo "redis-server: $(redis-cli -p "$redis_port" info memory | grep -E '^used_memory_human' | tr -d '\r'), $(redis-cli -p "$redis_port" dbsize) keys (all jobs of the run)"
