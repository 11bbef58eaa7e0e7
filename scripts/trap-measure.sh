#!/usr/bin/env bash
# Measures the [traps] rules on a real site (issue 21): about 20,000 pages of Debian
# documentation (OpenJDK's javadoc, libstdc++'s and Eigen's doxygen, the PostgreSQL, LLVM,
# Python and git manuals, GLib and GTK's gtk-doc) served as one host by nginx on 127.0.0.1,
# crawled twice with dedup on: with the default trap rules and with every rule off. The
# rules must lose nothing: every URL the rules-off crawl fetched, the default crawl fetched.
# Prints both crawls' figures, the URLs only one of them fetched, and the trap records.
# Run by hand (downloads about 60 MB of .deb files with apt-get download; release build).
# Usage: scripts/trap-measure.sh [WORKDIR]   (WORKDIR is kept for reruns: the .deb files
# are not downloaded again; without it, a new directory removed at the end, KEEP=1 keeps it)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/workdir.sh
if [ -n "${1:-}" ]; then work="$(realpath -m "$1")"; else work_dir trap-measure; fi
port=18091
packages=(openjdk-17-doc libstdc++-12-doc libeigen3-doc postgresql-doc-15 llvm-14-doc
    python3.11-doc git-doc libglib2.0-doc libgtk-3-doc)
source scripts/lib/nginx.sh
cargo build --release --locked --bin nearcrawl >&2
mkdir -p "$work/debs" "$work/root"
for p in "${packages[@]}"; do
    if [ ! -d "$work/root/$p" ]; then
        (cd "$work/debs" && ls "${p}"_*.deb >/dev/null 2>&1 || apt-get download "$p" >/dev/null 2>&1)
        dpkg-deb -x "$(ls "$work/debs/${p}"_*.deb)" "$work/root/$p"
    fi
done
site="$work/site"
rm -rf "$site" && mkdir -p "$site"
r="$work/root"
ln -s "$r/openjdk-17-doc/usr/share/doc/openjdk-17-jre-headless" "$site/jdk"
ln -s "$r/libstdc++-12-doc/usr/share/doc/gcc-12-base/libstdc++" "$site/libstdc++"
ln -s "$r/libeigen3-doc/usr/share/doc/libeigen3-dev/html" "$site/eigen"
ln -s "$r/postgresql-doc-15/usr/share/doc/postgresql-doc-15/html" "$site/postgresql"
ln -s "$r/llvm-14-doc/usr/share/doc/llvm-14-doc/html" "$site/llvm"
ln -s "$r/python3.11-doc/usr/share/doc/python3.11/html" "$site/python"
ln -s "$r/git-doc/usr/share/doc/git-doc" "$site/git"
ln -s "$r/libglib2.0-doc/usr/share/gtk-doc/html" "$site/gtk-doc"
ln -s "$r/libgtk-3-doc/usr/share/gtk-doc/html/gtk3" "$site/gtk3"
{
    echo "<html><head><title>Documentation</title></head><body><h1>Documentation</h1><ul>"
    for index in jdk/api/index.html libstdc++/index.html eigen/index.html postgresql/index.html \
        llvm/index.html python/index.html git/git.html gtk-doc/glib/index.html \
        gtk-doc/gio/index.html gtk-doc/gobject/index.html gtk3/index.html; do
        echo "<li><a href=\"/$index\">$index</a></li>"
    done
    echo "</ul></body></html>"
} > "$site/index.html"
echo "html files served: $(find -L "$site" -name '*.html' | wc -l)" >&2
start_nginx "$work" "$site" "$port"
echo "http://127.0.0.1:$port/index.html" > "$work/seeds.txt"
for rules in default off; do
    {
        printf '[politeness]\nmax_connections_per_host = 8\nper_host_delay_ms = 0\n'
        printf '[limits]\nconcurrency = 8\n'
        if [ "$rules" = off ]; then
            printf '[traps]\nmax_path_segments = 0\nmax_repeats = 0\nmax_duplicate_chain = 0\n'
            printf 'max_pattern_on_path = 0\nmax_pages_per_pattern = 0\nmax_duplicate_links = 0\n'
        fi
    } > "$work/$rules.toml"
    rm -rf "$work/crawl-$rules"
    target/release/nearcrawl crawl --seeds "$work/seeds.txt" --out "$work/crawl-$rules" \
        --config "$work/$rules.toml" >/dev/null 2>"$work/crawl-$rules.log"
done
python3 - "$work" <<'PY'
import json, sys, collections
work = sys.argv[1]
def load(rules):
    return [json.loads(l) for l in open(f"{work}/crawl-{rules}/records.jsonl")]
runs = {r: load(r) for r in ("default", "off")}
fetched = {r: {x["url"] for x in recs if x.get("status")} for r, recs in runs.items()}
for r, recs in runs.items():
    verdicts = collections.Counter(x["verdict"] for x in recs)
    trapped = sum(x.get("link_fates", {}).get("trapped", 0) for x in recs)
    named = sum(1 for x in recs if x.get("trap"))
    print(f"{r}: {len(recs)} records, {len(fetched[r])} URLs fetched, verdicts {dict(verdicts)}, "
          f"links trapped {trapped}, records naming a trap rule {named}")
lost = sorted(fetched["off"] - fetched["default"])
extra = sorted(fetched["default"] - fetched["off"])
print(f"fetched with the rules off but not with the defaults: {len(lost)}")
for u in lost[:20]:
    print("  lost", u)
print(f"fetched with the defaults but not with the rules off: {len(extra)}")
for u in extra[:20]:
    print("  extra", u)
named = [x for x in runs["default"] if x.get("trap") or x["verdict"] == "trap"]
for x in named:
    print("  trap", x["verdict"], x["url"], x.get("trap") or x.get("error"))
if not named:
    print("no rule fired in the default crawl: the URLs only one crawl fetched differ by the "
          "order of concurrent fetches (which of two near-duplicates is the original)")

# The margin of max_pattern_on_path: the most pages of one URL pattern on any page's path
# of links (the whole path, an upper bound of what the rule counts), and of the path rules.
import re
from urllib.parse import urlsplit
def mask(text):
    def token(m):
        t = m.group(0)
        if len(t) >= 8 and re.search(r"[0-9]", t):
            return "*"
        return re.sub(r"[0-9]+", "#", t)
    return re.sub(r"[A-Za-z0-9]+", token, text)
def pattern(url):
    u = urlsplit(url)
    q = "&".join(p.split("=")[0] + ("=*" if "=" in p else "") for p in u.query.split("&") if p)
    return u.netloc + mask(u.path) + ("?" + q if q else "")
recs = {x["seq"]: x for x in runs["default"]}
worst, worst_url, depths, segments = 0, "", [], []
for x in runs["default"]:
    if not x.get("status"):
        continue
    own = pattern(x["url"])
    n, at = 0, x
    while at is not None:
        n += pattern(at["url"]) == own
        at = recs.get(at.get("parent"))
    if n > worst:
        worst, worst_url = n, x["url"]
    depths.append(x.get("depth", 0))
    segments.append(len([s for s in urlsplit(x["url"]).path.split("/") if s]))
print(f"most pages of one pattern on a path: {worst} ({worst_url}); "
      f"deepest link path {max(depths)}; most path segments {max(segments)}")
PY
