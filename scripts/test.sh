#!/usr/bin/env bash
# Runs every test of the project: the README's test command and what .ci/run calls.
# Debug builds (fast to compile); benchmarks are only compiled and smoke-run, never timed here.
set -euo pipefail
cd "$(dirname "$0")/.."

# jemalloc, the binary's allocator, is built from source with make (tikv-jemalloc-sys).
./scripts/debian-tool.sh make >/dev/null
# Tools the tests call (warcio for WARC validity), installed under target/test-tools/.
NEARCRAWL_WARCIO="$(./scripts/test-tools.sh)"
export NEARCRAWL_WARCIO
# Debian documentation packages: the labelled web's text (tests/quality_floors.rs).
./scripts/quality-deps.sh
# Debian's chromium: the HTML report is opened in a real browser (tests/report_browser.rs).
NEARCRAWL_CHROMIUM="$(./scripts/browser-deps.sh)"
export NEARCRAWL_CHROMIUM
# Debian's GNU wget: `nearcrawl dedup` reads the WARC files it writes (tests/cli_dedup.rs).
NEARCRAWL_WGET="$(./scripts/debian-tool.sh wget)"
export NEARCRAWL_WGET
# Debian's redis-server: the job shared by several workers runs on it (crates/redis-job).
NEARCRAWL_REDIS_SERVER="$(./scripts/debian-tool.sh redis-server)"
export NEARCRAWL_REDIS_SERVER
# Debian's nginx: recrawls meet a real server's validators and 304s (tests/crawl_recrawl.rs).
NEARCRAWL_NGINX="$(./scripts/debian-tool.sh nginx nginx-light)"
export NEARCRAWL_NGINX

# A clean CI checkout builds once: incremental caches would only take disk.
if [ "${CI:-}" = true ]; then export CARGO_INCREMENTAL=0; fi
# The house first: formatting and lints fail the run before anything is built for tests.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# No import circle between the files of a crate (the house issue's structural floor).
./scripts/check-imports.py
# The crates that read a job's outputs need none of the crawler's machinery, and only the
# binary and the evaluation harness depend on the engine (the house issue).
./scripts/check-crate-graph.py
# No Rust file over 600 lines (the house issue), but a generated one and those not split
# yet, each held at its length.
./scripts/check-file-sizes.py
# No numbered work periods in prose, comments or scripts: a figure is dated or names its
# commit (the house issue).
./scripts/check-work-periods.py
# The link policy decides every link's fate: the engine reads no link setting of its own.
./scripts/check-link-settings.py
# One enum for a link's fate (the policy's `Fate`), and ratchets on the link code left in the
# crawler and on the coordinator's methods, toward the one-decider floors.
./scripts/check-link-fates.py
cargo test --workspace --locked
# Benchmarks must keep compiling; `--benches` in test mode runs each once without timing.
cargo test --workspace --locked --benches
# Fuzz smoke run: every committed seed and crash reproducer of fuzz/corpus/, then 10 s of
# libFuzzer per target (the long campaigns are scripts/fuzz.sh, run by hand).
./scripts/fuzz.sh --smoke
# Benchmark scripts leave nothing behind unless KEEP=1 (the house issue): the shortest run
# of one, on a debug build.
./scripts/check-bench-cleanup.sh
