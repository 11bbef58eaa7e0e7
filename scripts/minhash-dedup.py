#!/usr/bin/env python3
"""The baseline `nearcrawl dedup` is benchmarked against: datasketch's MinHashLSH over the
pages of WARC files, as corpus-dedup pipelines use it (main text by trafilatura, word
5-gram shingles, 128 permutations, each page queried against the pages before it, then
inserted; clusters by union-find over the pairs found).

Usage: minhash-dedup.py --out CLUSTERS.jsonl [--pairs PAIRS.jsonl] [--threshold 0.8]
                        [--extract trafilatura|text] WARC...

Writes one JSON list of URLs per cluster of two pages or more (and, with --pairs, one per
pair LSH found, before any closure), and prints JSON with the page count and seconds (reading and extraction, MinHash and LSH, total). Run with the venv of
scripts/bench-tools.sh. Pages: `response` records, status 2xx, HTML, robots.txt excluded,
the same pages `nearcrawl dedup` judges.
"""

import argparse
import json
import re
import sys
import time

from datasketch import MinHash, MinHashLSH
from warcio.archiveiterator import ArchiveIterator

WORD = re.compile(r"\w+", re.UNICODE)


def pages(paths):
    for path in paths:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                status = record.http_headers.get_statuscode()
                ctype = (record.http_headers.get_header("Content-Type") or "").lower()
                url = record.rec_headers.get_header("WARC-Target-URI")
                if not status.startswith("2") or "html" not in ctype:
                    continue
                if url.endswith("/robots.txt"):
                    continue
                yield url, record.content_stream().read()


def text_of(html, how):
    if how == "trafilatura":
        import trafilatura

        return trafilatura.extract(html, include_comments=False) or ""
    import lxml.html

    try:
        return lxml.html.fromstring(html).text_content()
    except Exception:
        return ""


def shingles(text, n=5):
    words = WORD.findall(text.lower())
    if len(words) < n:
        return {" ".join(words).encode()} if words else set()
    return {" ".join(words[i : i + n]).encode() for i in range(len(words) - n + 1)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("warc", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--pairs")
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("--num-perm", type=int, default=128)
    parser.add_argument("--extract", choices=["trafilatura", "text"], default="trafilatura")
    args = parser.parse_args()

    start = time.perf_counter()
    texts = []
    for url, html in pages(args.warc):
        texts.append((url, text_of(html, args.extract)))
    read = time.perf_counter()

    lsh = MinHashLSH(threshold=args.threshold, num_perm=args.num_perm)
    parent = list(range(len(texts)))
    pairs = []

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (url, text) in enumerate(texts):
        grams = shingles(text)
        if not grams:
            continue
        m = MinHash(num_perm=args.num_perm)
        m.update_batch(list(grams))
        for j in lsh.query(m):
            pairs.append((j, i))
            a, b = root(i), root(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
        lsh.insert(i, m)
    hashed = time.perf_counter()

    clusters = {}
    for i in range(len(texts)):
        clusters.setdefault(root(i), []).append(texts[i][0])
    with open(args.out, "w") as out:
        for members in clusters.values():
            if len(members) > 1:
                out.write(json.dumps(members) + "\n")
    done = time.perf_counter()
    if args.pairs:
        with open(args.pairs, "w") as out:
            for j, i in pairs:
                out.write(json.dumps([texts[j][0], texts[i][0]]) + "\n")
    json.dump(
        {
            "pages": len(texts),
            "seconds_read_extract": read - start,
            "seconds_minhash_lsh": hashed - read,
            "seconds": done - start,
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()
