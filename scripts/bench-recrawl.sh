#!/usr/bin/env bash
# Recrawls (issue: recrawls) on a real manual: Debian's HTML documentation of PostgreSQL 15
# (postgresql-doc-15) or Python 3.11 (python3.11-doc), copied and served by nginx on
# 127.0.0.1 twice: on one port as nginx serves files (ETag and Last-Modified, 304s to
# conditional requests), on another with `etag off; if_modified_since off;` (a server that
# honours no validators). For each server:
#   1. a first crawl of the whole manual;
#   2. a recrawl with nothing changed (`--previous` the first): its bytes against the first's;
#   3. the copy edited: one page in ten gets a few words changed, one in fifty is removed,
#      and one in fifty gets a new page linked from it; a recrawl against the first crawl
#      (then the copy is put back): every edited page must come back `changed`, every removed
#      one `gone`, every new one fetched, and nothing else downloaded whole (with validators).
# Prints, per server and step: pages fetched, bytes, the share of the first crawl's bytes, the
# pages by class, and the checks of step 3. Dedup and WARC on, politeness opened by flags as
# in bench-manual.sh.
# Usage: scripts/bench-recrawl.sh [postgresql|python]     (default postgresql)
# Installs the manual's package and nginx-light when missing. NEARCRAWL=path measures another
# build.
set -euo pipefail
cd "$(dirname "$0")/.."
manual="${1:-postgresql}"
port=18310
source scripts/lib/manual.sh
manual_root "$manual" || { echo "usage: $0 [postgresql|python]" >&2; exit 2; }

cargo build --release --locked --bin nearcrawl >&2
nearcrawl="${NEARCRAWL:-target/release/nearcrawl}"

source scripts/lib/nginx.sh
work_dir bench-recrawl
cp -rL "$(readlink -f "$root")" "$work/site"
cp -r "$work/site" "$work/pristine"
chmod -R a+rX "$work"
start_nginx_servers "$work" 2 "server { listen 127.0.0.1:$port; root $work/site; } \
    server { listen 127.0.0.1:$((port + 1)); root $work/site; etag off; if_modified_since off; }"
flags=(--per-host-delay-ms 0 --max-connections-per-host 16 --concurrency 16)

# edit: changes the copy (one page in ten edited, one in fifty removed, one in fifty given a
# new page) and writes the expected URL paths to $work/expected.json.
edit() {
    python3 - "$work/site" "$work/expected.json" <<'PY'
import json, os, re, sys
site, expected = sys.argv[1], sys.argv[2]
pages = sorted(os.path.relpath(os.path.join(d, f), site)
               for d, _, fs in os.walk(site) for f in fs if f.endswith('.html'))
pages = [p for p in pages if p != 'index.html']
edited, removed, added = [], [], []
for i, page in enumerate(pages):
    path = os.path.join(site, page)
    if i % 50 == 25:
        os.remove(path)
        removed.append(page)
        continue
    html = open(path, encoding='utf-8', errors='surrogateescape').read()
    before = html
    if i % 10 == 3:
        # A few words inserted in the first paragraph's text.
        new = re.sub(r'(<p[^>]*>)', r'\1Revised in this edition: ', html, count=1)
        if new != html:
            html = new
            edited.append(page)
    if i % 50 == 13:
        name = os.path.join(os.path.dirname(page), 'added-%d.html' % i)
        with open(os.path.join(site, name), 'w') as f:
            f.write('<html><head><title>Added %d</title></head><body><p>A page added to the '
                    'manual after its first crawl, number %d, with words of its own about '
                    'recrawls and what changed since.</p></body></html>' % (i, i))
        html = html.replace('</body>', '<a href="%s">added</a></body>' % os.path.basename(name), 1)
        added.append(name)
        if page not in edited:
            edited.append(page)
    if html != before:
        # Only edited files are written: the others keep their date (and ETag).
        open(path, 'w', encoding='utf-8', errors='surrogateescape').write(html)
json.dump({'edited': edited, 'removed': removed, 'added': added}, open(expected, 'w'))
print('edited %d, removed %d, added %d of %d pages' % (len(edited), len(removed), len(added), len(pages)), file=sys.stderr)
PY
}

# crawl NAME PORT [FLAGS...]: crawls the copy into $work/NAME.
crawl() {
    local name="$1" at="$2"
    shift 2
    echo "http://127.0.0.1:$at/index.html" > "$work/seeds.txt"
    "$nearcrawl" crawl --seeds "$work/seeds.txt" --out "$work/$name" "${flags[@]}" "$@" \
        >/dev/null 2>"$work/$name.err" || { cat "$work/$name.err" >&2; exit 1; }
}

# row NAME FIRST: the crawl's figures against the first crawl's bytes.
row() {
    python3 - "$work/$1/report.json" "$work/$2/report.json" "$1" <<'PY'
import json, sys
r, first, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
total = r['bytes_fetched'] + r['robots_bytes']
base = first['bytes_fetched'] + first['robots_bytes']
rc = r.get('recrawl') or {}
classes = ', '.join('%s %d' % (c, f['pages']) for c, f in sorted(rc.get('by_change', {}).items()))
print('| %s | %d | %d | %.2f %% | %s | %d |' % (name, r['pages_fetched'], total, 100.0 * total / base,
      classes or '-', rc.get('new_pages', 0)))
PY
}

# check NAME: step 3's checks against $work/expected.json.
check() {
    python3 - "$work/$1/records.jsonl" "$work/expected.json" "$1" <<'PY'
import json, sys, urllib.parse
records = [json.loads(l) for l in open(sys.argv[1])]
expected = json.load(open(sys.argv[2]))
path = lambda r: urllib.parse.urlparse(r['url']).path.lstrip('/')
by = {path(r): r for r in records}
edited = set(expected['edited']); removed = set(expected['removed']); added = set(expected['added'])
bad = []
bad += ['edited %s came back %s' % (p, by.get(p, {}).get('change')) for p in edited if by.get(p, {}).get('change') != 'changed']
bad += ['removed %s came back %s' % (p, by.get(p, {}).get('change')) for p in removed if by.get(p, {}).get('change') != 'gone']
bad += ['added %s not fetched' % p for p in added if by.get(p, {}).get('status') != 200]
whole = {path(r) for r in records if r.get('status') == 200}
extra = whole - edited - added
print('%s: %d edited, %d removed, %d added; downloaded whole: %d (%d beyond edited and added); %d problems'
      % (sys.argv[3], len(edited), len(removed), len(added), len(whole), len(extra), len(bad)))
for line in bad[:10]:
    print('  ' + line)
if extra and sys.argv[3].endswith('validators'):
    print('  beyond: ' + ', '.join(sorted(extra)[:10]))
PY
}

echo "| crawl | pages fetched | bytes (robots.txt included) | of the first crawl's | pages by change | new pages |"
echo "|---|---|---|---|---|---|"
for server in validators none; do
    at=$port
    [ "$server" = none ] && at=$((port + 1))
    rm -rf "$work/site" && cp -r "$work/pristine" "$work/site"
    crawl "first-$server" "$at"
    row "first-$server" "first-$server"
    crawl "same-$server" "$at" --previous "$work/first-$server"
    row "same-$server" "first-$server"
    edit
    crawl "edited-$server" "$at" --previous "$work/first-$server"
    row "edited-$server" "first-$server"
    check "edited-$server" >> "$work/checks.txt"
done
cat "$work/checks.txt"
