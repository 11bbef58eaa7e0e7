#!/usr/bin/env bash
# Installs the tools the tests call, under target/test-tools/ (nothing system-wide):
# warcio (PyPI) for checking WARC files. Idempotent; prints the path of warcio.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/test-tools/venv
if [ ! -x "$venv/bin/warcio" ]; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'warcio==1.7.5' >&2
fi
echo "$PWD/$venv/bin/warcio"
