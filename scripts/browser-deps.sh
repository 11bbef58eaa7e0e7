#!/usr/bin/env bash
# Installs Debian's chromium for the HTML report's browser test (tests/report_browser.rs),
# when it is missing. Idempotent; prints the path of the chromium binary.
set -euo pipefail
if ! command -v chromium >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends chromium >&2 \
        || { apt-get update >&2 && apt-get install -y --no-install-recommends chromium >&2; }
fi
command -v chromium
