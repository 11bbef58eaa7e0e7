//! Prints the text blocks of an HTML file with their content flags: `cargo run -p nearcrawl-extract --example debug_extract FILE`.
use std::io::Read;
fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let mut bytes = Vec::new();
    std::fs::File::open(&path)
        .expect("open")
        .read_to_end(&mut bytes)
        .expect("read");
    if path.ends_with(".gz") {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .expect("gzip");
        bytes = out;
    }
    let text = nearcrawl_extract::decode(&bytes, None, None).text;
    let doc = nearcrawl_extract::Document::parse(&text);
    if std::env::var("OUTLINE").is_ok() {
        outline(&doc);
    }
    let ex = nearcrawl_extract::ContentExtractor::new().extract(&doc);
    for b in &ex.blocks {
        let mut chain = Vec::new();
        let mut id = b.node;
        while id != 0 {
            let t = doc
                .node(id)
                .tag
                .map(|t| format!("{t:?}"))
                .unwrap_or_default();
            let c = doc
                .attr(id, nearcrawl_extract::Attr::Class)
                .or(doc.attr(id, nearcrawl_extract::Attr::Id))
                .unwrap_or("");
            chain.push(format!("{t}.{}", c.chars().take(20).collect::<String>()));
            id = doc.node(id).parent;
        }
        chain.reverse();
        let t: String = b.text.chars().take(80).collect();
        println!(
            "{} {} | {}",
            if b.in_content { "+" } else { "-" },
            t,
            chain[chain.len().saturating_sub(4)..].join(">")
        );
    }
}
#[allow(dead_code)]
fn outline(doc: &nearcrawl_extract::Document) {
    for id in 0..doc.len() as u32 {
        let n = doc.node(id);
        if let Some(t) = n.tag {
            let mut d = 0;
            let mut p = id;
            while p != 0 {
                p = doc.node(p).parent;
                d += 1;
            }
            if d < 14 && n.end - id > 5 {
                println!(
                    "{}{:?} {} {} {:?}",
                    " ".repeat(d),
                    t,
                    id,
                    n.end,
                    doc.attr(id, nearcrawl_extract::Attr::Class)
                );
            }
        }
    }
}
