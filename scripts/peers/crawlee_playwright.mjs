// Crawlee's PlaywrightCrawler crawling the benchmark's seeds as a user would: each page
// rendered in Debian's chromium (Playwright's executablePath, no browser downloaded), every
// link on each seed's host followed (enqueueLinks, same hostname), CONCURRENCY pages at once,
// storage in memory. Writes the number of pages it handled to OUT.
// Usage: node crawlee_playwright.mjs SEEDS OUT CONCURRENCY CHROMIUM
import { readFileSync, writeFileSync } from 'node:fs';
import { Configuration, PlaywrightCrawler, log } from 'crawlee';
import { chromium } from 'playwright';

const [seedsFile, out, concurrency, executablePath] = process.argv.slice(2);
const seeds = readFileSync(seedsFile, 'utf8').split('\n').filter((l) => l.trim());
const n = Number(concurrency);
log.setLevel(log.LEVELS.ERROR);
let pages = 0;
const crawler = new PlaywrightCrawler(
    {
        maxConcurrency: n,
        minConcurrency: n,
        maxRequestRetries: 0,
        maxRequestsPerMinute: 1_000_000,
        headless: true,
        launchContext: {
            launcher: chromium,
            launchOptions: {
                executablePath,
                args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
            },
        },
        async requestHandler({ enqueueLinks }) {
            pages += 1;
            await enqueueLinks({ strategy: 'same-hostname' });
        },
    },
    new Configuration({ persistStorage: false, purgeOnStart: true }),
);
await crawler.run(seeds);
writeFileSync(out, `${pages}\n`);
