# Sourced by the crawl benchmarks (bench-crawl.sh, bench-text.sh).
# Installs wget2 (and nginx-light) from Debian when missing; needs $work set before
# `measure` is called.
if ! command -v nginx >/dev/null || ! command -v wget2 >/dev/null; then
    apt-get install -y --no-install-recommends nginx-light wget2 >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends nginx-light wget2 >/dev/null; }
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
