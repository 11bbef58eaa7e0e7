#!/usr/bin/env bash
# Installs a Debian package when its command is missing; prints the command's path.
# Usage: scripts/debian-tool.sh COMMAND [PACKAGE]   (PACKAGE defaults to COMMAND)
set -euo pipefail
command_name="$1"
package="${2:-$1}"
if ! command -v "$command_name" >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "$package" >&2 \
        || { apt-get update >&2 && apt-get install -y --no-install-recommends "$package" >&2; }
fi
command -v "$command_name"
