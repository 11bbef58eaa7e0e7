//! Serves a generated site of any size from memory, pages made on request (for the memory
//! benchmark of a million-page crawl, scripts/bench-million.sh; the scale-out benchmark,
//! scripts/bench-scale.sh, with a delay): `endless_site ADDR PAGES [DELAY_MS [SEED [SHARING]]]`,
//! each page answered after DELAY_MS (default 0), its text drawn from the pool of SEED (default
//! 1: sites of different seeds share no text).
//! Pages `/p/I.html` (I = 1..=PAGES) form a tree (page I links to its eight children 8I-6..8I+1
//! and to two other pages) in a template; each holds three paragraphs, and one page in ten
//! repeats the paragraphs of an earlier page (a near-duplicate under another address). With
//! SHARING `pool` (the default) the paragraphs are chosen by I from a pool of 20,000 generated
//! ones, so the more pages, the more each paragraph is repeated (about 150 times a paragraph
//! at a million pages). With `stationary` each paragraph is new except that one in four is
//! taken from a page numbered before it, chosen at random: a page shares about as much with the
//! pages numbered before it at the millionth page as at the thousandth (for stage times over a
//! long crawl, scripts/bench-stages.sh; a crawl in link order finds more of that sharing as it
//! goes, docs/BENCHMARKS.md). Runs until killed.

use std::net::SocketAddr;
use std::sync::Arc;

use nearcrawl_demo_web::{Reply, Site, Writer, serve_on};

/// A well-mixed 64-bit hash of `n` (splitmix64's finaliser).
fn mix(mut n: u64) -> u64 {
    n = (n ^ (n >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    n = (n ^ (n >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    n ^ (n >> 31)
}

/// Where a page's paragraphs come from.
enum Paragraphs {
    /// Chosen from a fixed pool.
    Pool(Vec<String>),
    /// Numbered: page I's own are 3I..3I+2, and one in four is another page's.
    Stationary(Box<std::sync::Mutex<Writer>>, u64),
}

impl Paragraphs {
    /// Paragraph `k` (0..3) of page `source`.
    fn get(&self, source: u64, k: u64) -> std::borrow::Cow<'_, str> {
        match self {
            Paragraphs::Pool(pool) => std::borrow::Cow::Borrowed(
                &pool[(mix(source * 3 + k) % pool.len() as u64) as usize],
            ),
            Paragraphs::Stationary(writer, seed) => {
                let draw = mix(source * 3 + k + 0x5eed);
                let owner = if source > 1 && draw.is_multiple_of(4) {
                    (draw >> 2) % (source - 1) + 1
                } else {
                    source
                };
                let number = mix(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (owner * 3 + k));
                std::borrow::Cow::Owned(
                    writer
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .numbered_paragraph(number),
                )
            }
        }
    }
}

fn page(i: u64, pages: u64, paragraphs: &Paragraphs) -> String {
    // One page in ten copies the paragraphs of an earlier page.
    let source = if i > 20 && i.is_multiple_of(10) {
        mix(i) % (i - 1) + 1
    } else {
        i
    };
    let body: String = (0..3u64)
        .map(|k| format!("<p>{}</p>", paragraphs.get(source, k)))
        .collect();
    let mut links = String::new();
    for child in (8 * i - 6..8 * i + 2).filter(|&c| c <= pages) {
        links.push_str(&format!(
            "<li><a href=\"/p/{child}.html\">page {child}</a></li>"
        ));
    }
    for k in 0..2 {
        let other = mix(i * 7 + k) % pages + 1;
        links.push_str(&format!(
            "<li><a href=\"/p/{other}.html\">see also {other}</a></li>"
        ));
    }
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>Page {i}</title></head><body>\
         <header><nav><a href=\"/p/1.html\">Home</a> <a href=\"/p/2.html\">Section</a></nav>\
         </header><main><article><h1>Page {i}</h1>{body}</article></main><aside><ul>{links}\
         </ul></aside><footer>Endless benchmark site, page {i} of {pages}.</footer></body></html>"
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: endless_site ADDR PAGES [DELAY_MS [SEED [pool|stationary]]]";
    let mut args = std::env::args().skip(1);
    let addr: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let pages: u64 = args.next().and_then(|n| n.parse().ok()).ok_or(usage)?;
    let delay = match args.next() {
        Some(ms) => std::time::Duration::from_millis(ms.parse().map_err(|_| usage)?),
        None => std::time::Duration::ZERO,
    };
    let seed: u64 = match args.next() {
        Some(seed) => seed.parse().map_err(|_| usage)?,
        None => 1,
    };
    let mut writer = Writer::new(seed, 5000);
    let paragraphs = Arc::new(match args.next().as_deref() {
        None | Some("pool") => Paragraphs::Pool((0..20_000).map(|_| writer.paragraph()).collect()),
        Some("stationary") => Paragraphs::Stationary(Box::new(std::sync::Mutex::new(writer)), seed),
        Some(_) => return Err(usage.into()),
    });
    let site = Site::new().generated(Arc::new(move |path: &str| {
        let n: u64 = path
            .strip_prefix("/p/")?
            .strip_suffix(".html")?
            .parse()
            .ok()?;
        (1..=pages)
            .contains(&n)
            .then(|| Reply::html(page(n, pages, &paragraphs)).delayed(delay))
    }));
    let running = serve_on(site, addr).await?;
    eprintln!("serving {pages} pages at {}", running.url("/p/1.html"));
    std::future::pending::<()>().await;
    Ok(())
}
