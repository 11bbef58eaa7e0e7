//! Writes a static site for the crawl throughput benchmark (served by nginx):
//! `bench_site DIR PAGES [SEED]`. Pages `/p/I.html` form a tree (page I links to its eight
//! children 8I-6..8I+1 and to two other pages), each with a template and 2-4 kB of prose; one
//! leaf page in ten is a near-duplicate of another page (a few words changed), so the dedup
//! stage has work to do without changing which pages are reachable.

use std::io::Write;

use nearcrawl_demo_web::Writer;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: bench_site DIR PAGES [SEED]";
    let dir = std::path::PathBuf::from(args.next().ok_or_else(|| std::io::Error::other(usage))?);
    let pages: usize = args
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| std::io::Error::other(usage))?;
    let seed: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    std::fs::create_dir_all(dir.join("p"))?;
    let mut writer = Writer::new(seed, 5000);
    let mut bodies: Vec<String> = Vec::with_capacity(pages + 1);
    bodies.push(String::new());
    for i in 1..=pages {
        let first_child = 8 * i - 6;
        let is_leaf = first_child > pages;
        let body = if is_leaf && i % 10 == 0 && i > 20 {
            // A near-duplicate of an earlier page.
            let original = writer.below(i - 1) + 1;
            writer.change_words(&bodies[original], 0.02)
        } else {
            (0..3)
                .map(|_| format!("<p>{}</p>", writer.paragraph()))
                .collect()
        };
        let mut links = String::new();
        for child in first_child..first_child + 8 {
            if child <= pages {
                links.push_str(&format!(
                    "<li><a href=\"/p/{child}.html\">page {child}</a></li>"
                ));
            }
        }
        for _ in 0..2 {
            let other = writer.below(pages) + 1;
            links.push_str(&format!(
                "<li><a href=\"/p/{other}.html\">see also {other}</a></li>"
            ));
        }
        let html = format!(
            "<!doctype html><html><head><meta charset=utf-8><title>Page {i}</title></head><body>\
             <header><nav><a href=\"/p/1.html\">Home</a> <a href=\"/p/2.html\">Section</a></nav></header>\
             <main><article><h1>Page {i}</h1>{body}</article></main>\
             <aside><ul>{links}</ul></aside><footer>Benchmark site, page {i} of {pages}.</footer></body></html>"
        );
        let mut file =
            std::io::BufWriter::new(std::fs::File::create(dir.join(format!("p/{i}.html")))?);
        file.write_all(html.as_bytes())?;
        bodies.push(body);
    }
    Ok(())
}
