// Crawlee's CheerioCrawler crawling the benchmark's seeds as a user would: every link on each
// seed's host followed (enqueueLinks, same hostname), 16 requests at once, storage in memory.
// Writes the number of pages it handled to OUT.
// Usage: node crawlee_crawl.mjs SEEDS OUT
import { readFileSync, writeFileSync } from 'node:fs';
import { CheerioCrawler, Configuration, log } from 'crawlee';

const [seedsFile, out] = process.argv.slice(2);
const seeds = readFileSync(seedsFile, 'utf8').split('\n').filter((l) => l.trim());
log.setLevel(log.LEVELS.ERROR);
let pages = 0;
const crawler = new CheerioCrawler(
    {
        maxConcurrency: 16,
        minConcurrency: 16,
        maxRequestRetries: 0,
        maxRequestsPerMinute: 1_000_000,
        async requestHandler({ enqueueLinks }) {
            pages += 1;
            await enqueueLinks({ strategy: 'same-hostname' });
        },
    },
    new Configuration({ persistStorage: false, purgeOnStart: true }),
);
await crawler.run(seeds);
writeFileSync(out, `${pages}\n`);
