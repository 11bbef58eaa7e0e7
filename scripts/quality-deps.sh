#!/usr/bin/env bash
# Installs the Debian documentation packages whose text the labelled web is built from
# (nothing of it is committed): python3.11-doc (English, used for tuning), git-doc (English,
# held out), debian-reference-zh-cn (Chinese). Idempotent.
set -euo pipefail
packages=(python3.11-doc git-doc debian-reference-zh-cn)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
fi
