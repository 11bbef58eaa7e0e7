//! Redis memory of a shared job, per structure (docs/SCALE.md): starts a redis-server of its
//! own, then measures `used_memory` before and after
//! - queueing URLS URLs over 100 hosts (queue entry, seen-set member, queued entry as the
//!   engine writes it: about 80 bytes of JSON), and
//! - admitting PAGES unique pages to the near-duplicate index (4 simhash blocks, 28 sentence
//!   postings, an exact key, and a 3,000-byte verification text: the page hash).
//!
//! `cargo run --release -p nearcrawl-redis-job --example redis_memory [URLS] [PAGES]`
//! (defaults 200000 20000).

use std::sync::Arc;

use nearcrawl_redis_job::server::LocalRedis;
use nearcrawl_redis_job::{
    Admission, JobName, Offer, PageKeys, Patience, Redis, RedisIndex, RedisTarget, Settings,
    SharedFrontier,
};

fn used_memory(redis: &mut Redis) -> Result<u64, Box<dyn std::error::Error>> {
    let info: String = redis.run("info", |con| redis::cmd("INFO").arg("memory").query(con))?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| "no used_memory in INFO".into())
}

/// A deterministic pseudo-random sequence (splitmix64).
fn mix(mut n: u64) -> u64 {
    n = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    n = (n ^ (n >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    n = (n ^ (n >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    n ^ (n >> 31)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let urls: u64 = args.next().map_or(Ok(200_000), |a| a.parse())?;
    let pages: u64 = args.next().map_or(Ok(20_000), |a| a.parse())?;
    let server = LocalRedis::start(false)?;
    let connect = || {
        Redis::connect(
            RedisTarget::parse(&server.url())?,
            Patience::default(),
            Arc::default(),
        )
    };
    let mut probe = connect()?;
    let job = JobName::new("memory")?;
    let (mut frontier, _, _) =
        SharedFrontier::join(connect()?, job.clone(), "w", Settings::default())?;

    let before = used_memory(&mut probe)?;
    let hosts = 100;
    for host in 0..hosts {
        let origin = format!("http://host{host}.example.org/");
        let offers: Vec<Offer> = (0..urls / hosts)
            .map(|i| {
                let n = host * urls + i;
                let mut key = [0u8; 16];
                key[..8].copy_from_slice(&mix(n).to_be_bytes());
                key[8..].copy_from_slice(&mix(n + 1).to_be_bytes());
                let entry = format!(
                    "{{\"url\":\"{origin}docs/section-{}/page-{i}.html\",\"depth\":4,\"parent\":{}}}",
                    i % 50,
                    mix(n) % 1_000_000
                );
                Offer {
                    key,
                    priority: 4,
                    entry: entry.into_bytes(),
                }
            })
            .collect();
        for chunk in offers.chunks(1000) {
            frontier.offer(&origin, chunk)?;
        }
    }
    let queued = used_memory(&mut probe)? - before;
    println!(
        "queued URLs: {urls}, {} bytes, {:.0} bytes per URL",
        queued,
        queued as f64 / urls as f64
    );

    let mut index = RedisIndex::open(connect()?, job, "w", 3)?;
    let text: String = (0..3000).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let before = used_memory(&mut probe)?;
    for n in 0..pages {
        let id = index.reserve()?;
        let sentences: Vec<u128> = {
            let mut s: Vec<u128> = (0..28)
                .map(|k| (u128::from(mix(n * 31 + k)) << 64) | u128::from(mix(n * 37 + k)))
                .collect();
            s.sort_unstable();
            s
        };
        let probe_page = PageKeys {
            fingerprint: mix(n * 7),
            exact: Some(mix(n * 11).to_be_bytes().to_vec()),
            sentences,
        };
        let snapshot = index.query(&probe_page)?;
        // A posting as the stage writes it for one document: a few bytes.
        let postings: Vec<Vec<u8>> = probe_page
            .sentences
            .iter()
            .map(|_| [1u8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1].to_vec())
            .collect();
        let links: Vec<u8> = (0..40u64).flat_map(|k| mix(n + k).to_be_bytes()).collect();
        index.admit(
            &probe_page,
            snapshot.version,
            &Admission {
                id,
                fingerprint: probe_page.fingerprint,
                exact: probe_page.exact.as_deref(),
                url: &format!("http://host{}.example.org/docs/page-{n}.html", n % 100),
                text: &text,
                links: &links,
                postings: &postings,
            },
        )?;
    }
    let kept = used_memory(&mut probe)? - before;
    println!(
        "kept pages: {pages}, {} bytes, {:.0} bytes per page ({} of them the 3,000-byte text and \
         40 link keys)",
        kept,
        kept as f64 / pages as f64,
        3000 + 40 * 8
    );
    Ok(())
}
