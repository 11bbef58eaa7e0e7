#!/usr/bin/env bash
# Fuzzes every parser nearcrawl feeds with web or disk bytes (fuzz/fuzz_targets/): URL
# canonicalisation, HTML parsing and extraction, robots.txt, sitemaps, charset decoding, the
# index file reader. libFuzzer through cargo-fuzz on the stable toolchain (RUSTC_BOOTSTRAP=1).
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60 s, every target)
#        scripts/fuzz.sh --smoke    (CI: every seed of fuzz/corpus/, then 10 s per target)
#
# All targets are built once, then run one after the other, so a long campaign fuzzes the
# code as it was when it started. New inputs go to target/fuzz-corpus/TARGET; the seeds in
# fuzz/corpus/ are read, never written. Each run appends "date commit target seconds runs"
# to target/fuzz-corpus/campaign.log (the running total per target is what RELIABILITY.md
# reports). A crash is saved under fuzz/artifacts/TARGET/ and stops the script.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=false
if [ "${1:-}" = --smoke ]; then
    smoke=true
    shift
    seconds=10
else
    seconds="${1:-60}"
    shift || true
fi
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked >&2
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
(cd fuzz && cargo fuzz build --release) >&2
bin="fuzz/target/x86_64-unknown-linux-gnu/release"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
mkdir -p target/fuzz-corpus
for target in "${targets[@]}"; do
    flags=(-rss_limit_mb=2048 -max_len=262144 -artifact_prefix="fuzz/artifacts/$target/")
    mkdir -p "fuzz/artifacts/$target"
    if $smoke; then
        # Every committed seed (crash reproducers included) must run clean.
        echo "== $target: seeds" >&2
        "$bin/$target" "${flags[@]}" -runs=0 "fuzz/corpus/$target" >&2
    fi
    work="target/fuzz-corpus/$target"
    mkdir -p "$work"
    echo "== $target: ${seconds}s" >&2
    log="target/fuzz-corpus/$target.$$.log"
    "$bin/$target" "${flags[@]}" -max_total_time="$seconds" -print_final_stats=1 \
        "$work" "fuzz/corpus/$target" 2>"$log" || { tail -40 "$log" >&2; exit 1; }
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    rm -f "$log"
    echo "$(date -u +%FT%TZ) $commit $target $seconds ${runs:-?}" | tee -a target/fuzz-corpus/campaign.log >&2
done
