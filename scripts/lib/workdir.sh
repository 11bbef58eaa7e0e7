# Sourced by every benchmark script: what a run writes goes under one directory it names,
# removed when the script exits unless KEEP=1 asks to keep it; either way the script says
# what it left. Sourcing twice is harmless.
#
# on_exit COMMAND: runs COMMAND when the script exits, the last registered first (a server
# is stopped before its directory is removed).
# work_dir NAME: sets $work to a new directory NAME.XXXXXX under $BENCH_DIR (default /tmp;
# a crawl benchmark passes its own default, tmpfs) and removes it on exit, unless KEEP=1.
if [ -z "${workdir_sourced:-}" ]; then
    workdir_sourced=1
    exit_commands=()
    on_exit() { exit_commands+=("$1"); }
    run_exit_commands() {
        local i
        for ((i = ${#exit_commands[@]} - 1; i >= 0; i--)); do eval "${exit_commands[i]}" || true; done
    }
    trap run_exit_commands EXIT

    work_dir() {
        local base="${BENCH_DIR:-${2:-/tmp}}"
        [ -d "$base" ] && [ -w "$base" ] || base=/tmp
        work="$(mktemp -d "$base/nearcrawl-$1.XXXXXX")"
        echo "$(basename "$0"): writing under $work" >&2
        on_exit "leave_work_dir '$work'"
    }

    # leave_work_dir DIR: removes DIR, or with KEEP=1 keeps it; says which, and how much.
    leave_work_dir() {
        [ -d "$1" ] || return 0
        if [ "${KEEP:-0}" = 1 ]; then
            echo "$(basename "$0"): left $1 ($(du -sh "$1" | cut -f1), KEEP=1)" >&2
        else
            rm -rf "$1"
            echo "$(basename "$0"): removed $1, nothing left (KEEP=1 keeps it)" >&2
        fi
    }
fi
