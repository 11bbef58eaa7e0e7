# Sourced by the benchmarks on a real manual (bench-manual.sh, bench-recrawl.sh).
# manual_root NAME: sets $root to the HTML directory of Debian's manual NAME (postgresql:
# postgresql-doc-15, 1,169 pages; python: python3.11-doc, 530 pages), installing its package
# when missing; returns 2 for another name.
manual_root() {
    local package
    case "$1" in
        postgresql) package=postgresql-doc-15 root=/usr/share/doc/postgresql-doc-15/html ;;
        python) package=python3.11-doc root=/usr/share/doc/python3.11-doc/html ;;
        *) return 2 ;;
    esac
    [ -e "$root/index.html" ] || apt-get install -y --no-install-recommends "$package" >/dev/null \
        || { apt-get update >/dev/null && apt-get install -y --no-install-recommends "$package" >/dev/null; }
}
