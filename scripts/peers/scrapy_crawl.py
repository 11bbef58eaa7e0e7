"""Scrapy 2.x crawling the benchmark's seeds as a user would: every link on each seed's host
followed, 16 requests at once, robots.txt not read, Scrapy's own duplicate-URL filter (no
content dedup). Writes the number of pages it parsed to OUT (argv[2]). With --warc PATH it
also writes each response to a gzipped WARC file through warcio (WARC/1.0 response records),
as nearcrawl archives.
Usage: python scrapy_crawl.py SEEDS OUT [--warc PATH]"""
import sys
from urllib.parse import urlparse

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.linkextractors import LinkExtractor

seeds = [l.strip() for l in open(sys.argv[1]) if l.strip()]
out = sys.argv[2]
warc_path = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--warc" else None
pages = 0
writer = None
if warc_path:
    from io import BytesIO
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    warc_file = open(warc_path, "wb")
    writer = WARCWriter(warc_file, gzip=True)


class Site(scrapy.Spider):
    name = "site"
    start_urls = seeds
    allowed_domains = sorted({urlparse(s).hostname for s in seeds})
    links = LinkExtractor()

    def parse(self, response):
        global pages
        pages += 1
        if writer is not None:
            headers = StatusAndHeaders(
                f"{response.status} OK",
                [(k.decode(), b", ".join(v).decode()) for k, v in response.headers.items()],
                protocol="HTTP/1.1",
            )
            record = writer.create_warc_record(
                response.url, "response", payload=BytesIO(response.body), http_headers=headers
            )
            writer.write_record(record)
        for link in self.links.extract_links(response):
            if urlparse(link.url).hostname in self.allowed_domains:
                yield response.follow(link.url, self.parse)


process = CrawlerProcess(
    settings={
        "CONCURRENT_REQUESTS": 16,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 16,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "LOG_LEVEL": "ERROR",
        "TELNETCONSOLE_ENABLED": False,
        "DEPTH_LIMIT": 0,
    }
)
process.crawl(Site)
process.start()
if writer is not None:
    warc_file.close()
open(out, "w").write(f"{pages}\n")
