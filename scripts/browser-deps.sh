#!/usr/bin/env bash
# Installs Debian's chromium for the HTML report's browser test (tests/report_browser.rs),
# when it is missing. Idempotent; prints the path of the chromium binary.
set -euo pipefail
exec "$(dirname "$0")/debian-tool.sh" chromium
