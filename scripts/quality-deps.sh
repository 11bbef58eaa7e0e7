#!/usr/bin/env bash
# Installs the Debian documentation packages the labelled webs are built from (nothing of it
# is committed): python3.11-doc (English, used for tuning), git-doc (English, held out),
# debian-reference-zh-cn (Chinese) for the generated web; llvm-14-doc, llvm-15-doc,
# llvm-16-doc, clang-14-doc, clang-16-doc, debian-handbook and the Debian Reference in its
# eleven languages (debian-reference-en, -de, ...) for the real webs
# (`nearcrawl-lab quality --web NAME`); apache2-doc and postgresql-doc-15 (with python3.11-doc and
# llvm-16-doc) for the focused web (`nearcrawl-lab focus-quality`). Idempotent.
set -euo pipefail
packages=(python3.11-doc git-doc debian-reference-zh-cn
    llvm-14-doc llvm-15-doc llvm-16-doc clang-14-doc clang-16-doc debian-handbook
    debian-reference-en debian-reference-de debian-reference-es debian-reference-fr
    debian-reference-id debian-reference-it debian-reference-ja debian-reference-pt
    debian-reference-pt-br debian-reference-zh-tw
    apache2-doc postgresql-doc-15)
missing=()
for p in "${packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
fi
