#!/usr/bin/env bash
# Installs the baselines the corpus-dedup benchmark runs against, under target/bench-tools/
# (nothing system-wide): datasketch's MinHashLSH, warcio to read the WARC files, trafilatura
# for the pages' main text. Idempotent; prints the path of the venv's python.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-tools/venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import datasketch, warcio, trafilatura' 2>/dev/null; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check \
        'datasketch==1.6.5' 'warcio==1.7.5' 'trafilatura==2.0.0' 'lxml_html_clean==0.4.6' >&2
fi
echo "$PWD/$venv/bin/python"
