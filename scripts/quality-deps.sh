#!/usr/bin/env bash
# Installs the Debian documentation packages the labelled webs are built from (nothing of it
# is committed): python3.11-doc (English, used for tuning), git-doc (English, held out),
# debian-reference-zh-cn (Chinese) for the generated web; llvm-14-doc, llvm-15-doc,
# llvm-16-doc, clang-14-doc, clang-16-doc and debian-handbook for the real webs
# (`nearcrawl quality --web NAME`). Idempotent.
set -euo pipefail
packages=(python3.11-doc git-doc debian-reference-zh-cn
    llvm-14-doc llvm-15-doc llvm-16-doc clang-14-doc clang-16-doc debian-handbook)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
fi
