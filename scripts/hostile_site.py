"""Writes the memory benchmark's hostile site (scripts/bench-memory.sh): DIR/index.html links
a page of a million links, one of 100,000, six 9 MiB pages of prose, a page of a million
nested <div>s, a 9 MiB text node without a space, and a gzip bomb (1 GiB of text in 1 MB,
served as bomb.html with Content-Encoding: gzip). Usage: hostile_site.py DIR"""
import os, random, gzip, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
random.seed(7)
words = open('/usr/share/dict/words').read().split() if os.path.exists('/usr/share/dict/words') else [f"w{i}" for i in range(50000)]
def prose(n):
    return " ".join(random.choice(words) for _ in range(n))
links = ['<a href="/million.html">million</a>', '<a href="/links100k.html">100k</a>', '<a href="/nest.html">nest</a>', '<a href="/bomb.html">bomb</a>', '<a href="/blob.html">blob</a>']
links += [f'<a href="/big{i}.html">big {i}</a>' for i in range(1, 7)]
open(f"{out}/index.html", "w").write(f"<html><body><p>{prose(200)}</p>{' '.join(links)}</body></html>")
with open(f"{out}/million.html", "w") as f:
    f.write("<html><body>")
    for i in range(1_000_000):
        f.write(f'<a href="/m/{i}.html">l{i}</a>\n')
    f.write("</body></html>")
with open(f"{out}/links100k.html", "w") as f:
    f.write("<html><body>")
    for i in range(100_000):
        f.write(f'<a href="/k/{i}.html">k{i}</a>\n')
    f.write("</body></html>")
for i in range(1, 7):
    with open(f"{out}/big{i}.html", "w") as f:
        f.write("<html><body>")
        while f.tell() < 9 << 20:
            f.write(f"<p>{prose(500)}</p>\n")
        f.write("</body></html>")
with open(f"{out}/nest.html", "w") as f:
    f.write("<html><body>" + "<div>" * 1_000_000 + "deep" + "</div>" * 1_000_000 + "</body></html>")
with open(f"{out}/blob.html", "w") as f:
    f.write("<html><body><p>" + "x" * (9 << 20) + "</p></body></html>")
with gzip.open(f"{out}/bomb.html.gz", "wb", compresslevel=9) as f:
    chunk = b"<p>" + b"a" * (1 << 20)
    for _ in range(1024):
        f.write(chunk)
open(f"{out}/bomb.html", "w").write("<html>not this one</html>")
