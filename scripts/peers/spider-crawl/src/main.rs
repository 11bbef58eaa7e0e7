//! spider-rs (the `spider` crate) on the peers benchmark: every seed of a file crawled at
//! once, one `Website` per seed (spider crawls one site per `Website`), CONCURRENCY requests
//! in flight in all shared among them (rounded up per site), robots.txt not asked (the
//! benchmark's sites have none).
//! Prints the pages it fetched (the links each site's crawl visited).
//! Usage: spider-crawl SEEDS [CONCURRENCY]

use std::time::Duration;

use spider::website::Website;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: spider-crawl SEEDS [CONCURRENCY]");
        std::process::exit(2);
    };
    let seeds = match std::fs::read_to_string(path) {
        Ok(seeds) => seeds,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let concurrency: usize = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(16);
    let seeds: Vec<&str> = seeds.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let per_site = concurrency.div_ceil(seeds.len().max(1));
    let mut crawls = Vec::new();
    for seed in seeds {
        let seed = seed.to_string();
        crawls.push(tokio::spawn(async move {
            let mut website = Website::new(&seed);
            website
                .with_concurrency_limit(Some(per_site))
                .with_request_timeout(Some(Duration::from_secs(30)))
                .with_respect_robots_txt(false);
            website.crawl().await;
            website.get_links().len()
        }));
    }
    let mut pages = 0;
    for crawl in crawls {
        match crawl.await {
            Ok(n) => pages += n,
            Err(e) => eprintln!("a crawl failed: {e}"),
        }
    }
    println!("{pages}");
}
