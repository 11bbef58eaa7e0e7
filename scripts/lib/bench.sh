# Sourced by the crawl benchmarks (bench-crawl.sh, bench-text.sh, bench-manual.sh).
# Installs wget2, wget (and nginx-light) from Debian when missing; needs $work set before
# `measure` is called.
if ! command -v nginx >/dev/null || ! command -v wget2 >/dev/null || ! command -v wget >/dev/null; then
    apt-get install -y --no-install-recommends nginx-light wget2 wget >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends nginx-light wget2 wget >/dev/null; }
fi

# measure COMMAND...: runs it under /usr/bin/time; prints "wall user sys maxrss_kb".
measure() {
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$@" >"$work/out.txt" 2>"$work/err.txt" || { cat "$work/err.txt" >&2; exit 1; }
    cat "$work/time.txt"
}

# stage_line REPORT_JSON: "stage us, ..." per page, from report.json's run_stages.
stage_line() {
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(', '.join('%s %.0f' % (s['stage'], s['per_page_us']) for s in r.get('run_stages', [])))" "$1"
}

# The crawl benchmarks' rows: `record NAME FETCHED WALL USER SYS RSS_KB` adds one (pages,
# wall s, pages/s, CPU ms per page, peak RSS MB) under NAME; `median_row NAME ROWS` prints a
# table row of each column's median.
declare -A rows stages
record() { # name fetched wall user sys rss
    local line
    line=$(awk -v p="$2" -v w="$3" -v u="$4" -v s="$5" -v r="$6" 'BEGIN {
        printf "%d %.2f %.1f %.3f %.0f", p, w, p / w, (u + s) * 1000 / p, r / 1024 }')
    rows[$1]+="$line"$'\n'
    echo "$1: $line" >&2
}
median_row() { # name rows: one table row, each column's median over the rows
    printf '%s' "$2" | python3 -c "
import sys, statistics
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
cols = [statistics.median(c) for c in zip(*rows)]
print('| %s (median of %d) | %d | %.2f | %.1f | %.3f | %.0f |' % (sys.argv[1], len(rows), *cols))
" "$1"
}

# Where the crawlers write (the store, WARC files, wget2's copies): $work/out, $work being on
# tmpfs (/dev/shm) unless BENCH_DIR names another place (scripts/lib/workdir.sh; the
# benchmarks that source this file call `work_dir NAME /dev/shm`). On this machine's ext4,
# creating files where the last round's were just deleted cost wget2 up to 0.7 ms of system
# CPU per page (the inode allocator's `recently_deleted` checks) and nearcrawl's new store
# some too: the figures would measure the file system's state, not the crawlers.
bench_out=""
out_dir() {
    if [ -z "$bench_out" ]; then
        bench_out="$work/out"
        mkdir -p "$bench_out"
    fi
}

# crawl MODE: $nearcrawl over $work/seeds.txt, dedup on ("dedup") or off ("no-dedup"), WARC
# on, politeness opened for the benchmark's hosts; records the row and the time by stage.
crawl() {
    out_dir
    rm -rf "$bench_out/crawl"
    local flag=""
    [ "$1" = no-dedup ] && flag="--no-dedup"
    read -r wall user sys rss < <(measure "$nearcrawl" crawl --seeds "$work/seeds.txt" --out "$bench_out/crawl" \
        --per-host-delay-ms 0 --max-connections-per-host 16 --concurrency 16 $flag)
    fetched=$(python3 -c "import json;print(json.load(open('$bench_out/crawl/report.json'))['pages_fetched'])")
    record "nearcrawl ($1)" "$fetched" "$wall" "$user" "$sys" "$rss"
    stages[$1]+="$(stage_line "$bench_out/crawl/report.json")"$'\n'
}

# crawl_wget2 [FLAGS...]: wget2 -r with 16 threads over $work/seeds.txt; records the row
# (pages: the .html files it saved).
crawl_wget2() {
    out_dir
    rm -rf "$bench_out/wget"
    read -r wall user sys rss < <(measure wget2 -r -l inf -q --no-robots --max-threads=16 "$@" \
        -P "$bench_out/wget" -i "$work/seeds.txt")
    fetched=$(find "$bench_out/wget" -name '*.html' | wc -l)
    record "wget2 -r" "$fetched" "$wall" "$user" "$sys" "$rss"
}

# crawl_wget_warc [FLAGS...]: GNU Wget 1.x -r writing a WARC file (gzip per record, SHA-1
# digests: the archiving nearcrawl does, which wget2 does not) over $work/seeds.txt; records
# the row. Wget 1.x fetches one page at a time: compare its CPU per page, not its pages/s.
crawl_wget_warc() {
    out_dir
    rm -rf "$bench_out/wget-warc"
    mkdir -p "$bench_out/wget-warc"
    # Exit status 8: some link answered with an error (the manual links a few missing
    # pages), which wget2 does not count as a failure either.
    read -r wall user sys rss < <(measure sh -c 'wget "$@"; s=$?; [ $s -eq 0 ] || [ $s -eq 8 ]' wget \
        -r -l inf -q -e robots=off "$@" --warc-file="$bench_out/wget-warc/archive" \
        -P "$bench_out/wget-warc" -i "$work/seeds.txt")
    fetched=$(find "$bench_out/wget-warc" -name '*.html' | wc -l)
    record "wget -r --warc-file" "$fetched" "$wall" "$user" "$sys" "$rss"
}

# print_rows: the crawlers' median rows and nearcrawl's time per page by stage.
print_rows() {
    echo "| crawler | pages fetched | wall s | pages/s | CPU ms per page | peak RSS MB |"
    echo "|---|---|---|---|---|---|"
    local name mode
    for name in "nearcrawl (dedup)" "nearcrawl (no-dedup)" "wget2 -r" "wget -r --warc-file"; do
        median_row "$name" "${rows[$name]}"
    done
    echo
    for mode in dedup no-dedup; do
        echo "nearcrawl ($mode), us per page by stage, each round (fetch is wall time per request):"
        printf '%s' "${stages[$mode]}"
    done
}
