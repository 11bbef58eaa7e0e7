# Sourced by the long-crawl benchmarks (bench-million.sh, bench-stages.sh,
# bench-coordinator.sh), after scripts/lib/workdir.sh.
# endless_crawl PAGES OUT PORT METRICS: builds nearcrawl and endless_site (release; the CI's
# smoke run sets BENCH_PROFILE=dev for a debug build), serves
# PAGES generated pages (2-4 kB, one in ten a copy of an earlier one) on 127.0.0.1:PORT and
# starts crawling them all into OUT/crawl in the background, dedup and WARC on, politeness
# opened (32 connections, no delay), metrics on 127.0.0.1:METRICS. Sets $server and $crawler
# (the server is killed on exit). NEARCRAWL=path measures another build; TASKSET="taskset -c
# 0-1" pins the crawler; CONFIG=file.toml gives the crawl a job configuration; SHARING=stationary
# serves the site whose pages share as much text at a million pages as at a thousand.
endless_crawl() {
    local pages="$1" out="$2" port="$3" metrics="$4"
    local profile="${BENCH_PROFILE:-release}" dir=release
    [ "$profile" = dev ] && dir=debug
    cargo build --profile "$profile" --locked --bin nearcrawl -p nearcrawl --example endless_site -p nearcrawl-demo-web >&2
    mkdir -p "$out"
    rm -rf "$out/crawl"
    "target/$dir/examples/endless_site" "127.0.0.1:$port" "$pages" 0 1 "${SHARING:-pool}" 2>"$out/server.log" &
    server=$!
    on_exit "kill $server 2>/dev/null"
    nearcrawl_bin="${NEARCRAWL:-target/$dir/nearcrawl}"
    sleep 1
    echo "http://127.0.0.1:$port/p/1.html" > "$out/seeds.txt"
    # Every page is /p/N.html, one URL pattern: the trap rules' defaults crawl it whole, each
    # distinct page earning the pattern more budget (traps.pattern_growth).
    ${TASKSET:-} "$nearcrawl_bin" crawl --seeds "$out/seeds.txt" \
        --out "$out/crawl" --max-depth 100 ${CONFIG:+--config "$CONFIG"} \
        --per-host-delay-ms 0 --max-connections-per-host 32 --concurrency 32 \
        --metrics "127.0.0.1:$metrics" >"$out/crawl.txt" 2>&1 &
    crawler=$!
}
