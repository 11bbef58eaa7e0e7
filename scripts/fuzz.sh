#!/usr/bin/env bash
# Fuzzes every parser nearcrawl feeds with web or disk bytes (fuzz/fuzz_targets/): URL
# canonicalisation, HTML parsing and extraction, robots.txt, sitemaps, charset decoding, the
# index file reader. libFuzzer through cargo-fuzz on the stable toolchain (RUSTC_BOOTSTRAP=1).
# New inputs go to target/fuzz-corpus/TARGET; the seeds in fuzz/corpus/ are read, never written.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default 60 s, every target)
# A crash is saved under fuzz/artifacts/TARGET/ and stops the script with its reproducer.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
export RUSTC_BOOTSTRAP=1
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked >&2
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cd fuzz && cargo fuzz list)
fi
for target in "${targets[@]}"; do
    work="target/fuzz-corpus/$target"
    mkdir -p "$work"
    echo "== $target: ${seconds}s" >&2
    (cd fuzz && cargo fuzz run --release "$target" "../$work" "corpus/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1)
done
