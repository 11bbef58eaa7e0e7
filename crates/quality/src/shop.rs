//! The shop web: one template-heavy shop of the kind a crawler meets everywhere, built from
//! Debian documentation text. Its category listings take sort, stock-filter and page
//! parameters; every link of a listing carries a session id (`visit`, a fresh token for each
//! link, as a shop hands out to a client without cookies); each product has a print version
//! and colour variants (parameters that change nothing but a word), a reviews page of its
//! own, and a cart robots.txt disallows.
//!
//! The truth: a product, its print version, its colour variants and every session-id URL of
//! any of them are one content group (the variants scored as copies); each reviews page its
//! own group; listings and the home page not scored (the same products in other orders and
//! groupings are borderline); the cart disallowed.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use nearcrawl_demo_web::{Article, Reply, Site, serve_on};
use nearcrawl_frontier::CanonicalUrl;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::corpus::Corpus;
use crate::truth::{Kind, PageTruth, Truth};
use crate::web::LabelledWeb;

/// Sizes and seed of a shop web.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShopConfig {
    /// Seed of every random choice (prices, stock, tokens, text).
    pub seed: u64,
    /// Product categories.
    pub categories: usize,
    /// Products in each.
    pub per_category: usize,
    /// Products on a listing page.
    pub page_size: usize,
    /// The address after 127.0.0. the shop is served on.
    pub address: u8,
}

impl ShopConfig {
    /// The CI variant: a few hundred URLs.
    pub fn small(seed: u64) -> ShopConfig {
        ShopConfig {
            seed,
            categories: 3,
            per_category: 8,
            page_size: 4,
            address: 70,
        }
    }

    /// The benchmark variant: a few thousand URLs.
    pub fn large(seed: u64) -> ShopConfig {
        ShopConfig {
            seed,
            categories: 6,
            per_category: 30,
            page_size: 10,
            address: 71,
        }
    }

    /// English articles the generator needs (descriptions, reviews, the template's text).
    pub fn english_needed(&self) -> usize {
        self.categories * self.per_category / 2 + 4
    }
}

/// The orders a listing is sorted in.
const SORTS: [&str; 3] = ["name", "price", "new"];
/// Sentences of a product's description and reviews together.
const SENTENCES_PER_PRODUCT: usize = 7;
/// A product's colour variants.
const COLOURS: [&str; 3] = ["red", "green", "blue"];

struct Product {
    id: usize,
    category: usize,
    name: String,
    price: u32,
    in_stock: bool,
    description: String,
    reviews: String,
}

/// One page of the shop before it is served: its base path (no session id), its text and
/// its links (base paths; the session ids are added when it is rendered), and its truth.
#[derive(Clone)]
struct Page {
    title: String,
    body: String,
    links: Vec<(String, String)>,
    truth: PageTruth,
}

/// Builds and serves the shop web from English text.
pub async fn build_shop(config: ShopConfig, english: &Corpus) -> std::io::Result<LabelledWeb> {
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
    let need = config.english_needed();
    if english.articles.len() < need {
        return Err(std::io::Error::other(format!(
            "the corpus is too small: {} English articles (need {need})",
            english.articles.len()
        )));
    }
    let mut articles: Vec<Article> = english.articles.clone();
    articles.shuffle(&mut rng);
    let (template_text, text) = articles.split_at(2);
    let sentences: Vec<String> = text
        .iter()
        .flat_map(|a| a.paragraphs.iter())
        .flat_map(|p| p.split(". ").map(str::to_owned))
        .filter(|s| s.split_whitespace().count() >= 8)
        .collect();
    // Every product's text its own: no sentence is used twice.
    let wanted = config.categories * config.per_category * SENTENCES_PER_PRODUCT;
    if sentences.len() < wanted {
        return Err(std::io::Error::other(format!(
            "the corpus is too small: {} sentences of 8 words or more (need {wanted})",
            sentences.len()
        )));
    }
    let mut unused = sentences.into_iter();
    let mut take = |n: usize| unused.by_ref().take(n).collect::<Vec<_>>().join(". ") + ".";
    let mut products = Vec::new();
    for category in 0..config.categories {
        for k in 0..config.per_category {
            let id = products.len();
            products.push(Product {
                id,
                category,
                name: format!("Item {} of range {}", k + 1, category + 1),
                price: rng.random_range(5..500),
                in_stock: rng.random_bool(0.7),
                description: take(4),
                reviews: take(3),
            });
        }
    }
    let header: String = template_text[0]
        .paragraphs
        .iter()
        .take(2)
        .cloned()
        .collect();
    let legal: String = template_text[1]
        .paragraphs
        .iter()
        .take(3)
        .cloned()
        .collect();

    let mut pages: BTreeMap<String, Page> = BTreeMap::new();
    let mut groups = 0u64;
    let mut group = || {
        groups += 1;
        groups
    };
    let home_links: Vec<(String, String)> = (0..config.categories)
        .map(|c| (format!("/c/{c}"), format!("Range {}", c + 1)))
        .collect();
    pages.insert(
        "/".into(),
        Page {
            title: "All ranges".into(),
            body: String::new(),
            links: home_links,
            truth: PageTruth::index(group()),
        },
    );
    for category in 0..config.categories {
        listings(&config, &products, category, &mut pages, &mut group);
    }
    for product in &products {
        let g = group();
        let base = format!("/p/{}", product.id);
        let mut links = vec![
            (format!("{base}?print=1"), "Print".to_string()),
            (format!("{base}/reviews"), "Reviews".to_string()),
            (
                format!("/cart/add?id={}", product.id),
                "Add to cart".to_string(),
            ),
        ];
        for colour in COLOURS {
            links.push((format!("{base}?colour={colour}"), colour.to_string()));
        }
        let body = format!(
            "<p>{}</p><p class=\"price\">Price: {} EUR</p>",
            escape(&product.description),
            product.price
        );
        pages.insert(
            base.clone(),
            Page {
                title: product.name.clone(),
                body: body.clone(),
                links: links.clone(),
                truth: PageTruth::scored(g, Kind::TemplateNegative),
            },
        );
        for colour in COLOURS {
            // The same page with the colour picked: one word more.
            pages.insert(
                format!("{base}?colour={colour}"),
                Page {
                    title: product.name.clone(),
                    body: format!("{body}<p>Colour: {colour}</p>"),
                    links: links.clone(),
                    truth: PageTruth::scored(g, Kind::UrlVariant),
                },
            );
        }
        // The print version: the text without the shop around it.
        pages.insert(
            format!("{base}?print=1"),
            Page {
                title: product.name.clone(),
                body: body.clone(),
                links: Vec::new(),
                truth: PageTruth::scored(g, Kind::UrlVariant),
            },
        );
        pages.insert(
            format!("{base}/reviews"),
            Page {
                title: format!("Reviews of {}", product.name),
                body: format!("<p>{}</p>", escape(&product.reviews)),
                links: vec![(base.clone(), product.name.clone())],
                truth: PageTruth::scored(group(), Kind::TemplateNegative),
            },
        );
        pages.insert(
            format!("/cart/add?id={}", product.id),
            Page {
                title: "Cart".into(),
                body: "<p>Added.</p>".into(),
                links: Vec::new(),
                truth: PageTruth::disallowed(group()),
            },
        );
    }
    serve_shop(&config, pages, &header, &legal, &mut rng).await
}

/// The listings of `category`: every sort order, with and without the stock filter, page by
/// page; `/c/{category}` is the first page by name, unfiltered.
fn listings(
    config: &ShopConfig,
    products: &[Product],
    category: usize,
    pages: &mut BTreeMap<String, Page>,
    group: &mut impl FnMut() -> u64,
) {
    let path = |sort: &str, stock: bool, page: usize| {
        let stock = if stock { "&stock=1" } else { "" };
        format!("/c/{category}?page={page}&sort={sort}{stock}")
    };
    for sort in SORTS {
        for stock in [false, true] {
            let mut items: Vec<&Product> = products
                .iter()
                .filter(|p| p.category == category && (!stock || p.in_stock))
                .collect();
            match sort {
                "price" => items.sort_by_key(|p| (p.price, p.id)),
                "new" => items.sort_by_key(|p| std::cmp::Reverse(p.id)),
                _ => items.sort_by(|a, b| a.name.cmp(&b.name)),
            }
            let chunks: Vec<&[&Product]> = items.chunks(config.page_size.max(1)).collect();
            for (n, chunk) in chunks.iter().enumerate() {
                let mut links: Vec<(String, String)> = chunk
                    .iter()
                    .map(|p| (format!("/p/{}", p.id), p.name.clone()))
                    .collect();
                let body: String = chunk
                    .iter()
                    .map(|p| format!("<li>{}: {} EUR</li>", escape(&p.name), p.price))
                    .collect();
                if n > 0 {
                    links.push((path(sort, stock, n), "Previous".into()));
                }
                if n + 1 < chunks.len() {
                    links.push((path(sort, stock, n + 2), "Next".into()));
                }
                for other in SORTS {
                    links.push((path(other, stock, 1), format!("By {other}")));
                }
                let filter = match stock {
                    false => "In stock only",
                    true => "All items",
                };
                links.push((path(sort, !stock, 1), filter.into()));
                let page = Page {
                    title: format!("Range {}, page {}", category + 1, n + 1),
                    body: format!("<ul>{body}</ul>"),
                    links,
                    truth: PageTruth::index(group()),
                };
                if (sort, stock, n) == ("name", false, 0) {
                    let first = Page {
                        truth: PageTruth::index(group()),
                        ..page.clone()
                    };
                    pages.insert(format!("/c/{category}"), first);
                }
                pages.insert(path(sort, stock, n + 1), page);
            }
        }
    }
}

/// Renders every page, and every URL a link of it names with its session id, and serves
/// them; the truth of each URL is its page's.
async fn serve_shop(
    config: &ShopConfig,
    pages: BTreeMap<String, Page>,
    header: &str,
    legal: &str,
    rng: &mut ChaCha8Rng,
) -> std::io::Result<LabelledWeb> {
    let ip = IpAddr::V4(Ipv4Addr::new(127, 0, 0, config.address));
    // Canonical forms of the pages' paths (the crawler asks for URLs as it canonicalises
    // them): the server's table and the links use those.
    let canonical = |path: &str| -> String {
        let url = format!("http://shop.invalid{path}");
        CanonicalUrl::parse(&url).map_or(path.to_string(), |c| {
            c.as_str()["http://shop.invalid".len()..].to_string()
        })
    };
    let mut site = Site::new();
    site.insert(
        "/robots.txt",
        Reply::ok("text/plain", "User-agent: *\nDisallow: /cart/\n"),
    );
    // Each URL served, with the base path whose page it is, and each page's answer.
    let mut served: Vec<(String, String)> = Vec::new();
    let mut replies: BTreeMap<String, Reply> = BTreeMap::new();
    for (path, page) in &pages {
        // A listing or the home hands out a fresh session id in every link; a product page
        // keeps the one it was asked with, as its own links show it (here: none, so a
        // product's URLs of any session are the same page).
        let sessions = page.truth.kind == Kind::Index;
        let links: String = page
            .links
            .iter()
            .map(|(target, text)| {
                let href = match sessions {
                    true => {
                        let token: u64 = rng.random();
                        let joint = if target.contains('?') { '&' } else { '?' };
                        canonical(&format!("{target}{joint}visit={token:016x}"))
                    }
                    false => canonical(target),
                };
                if href != canonical(target) {
                    served.push((href.clone(), target.clone()));
                }
                format!("<li><a href=\"{href}\">{}</a></li>", escape(text))
            })
            .collect();
        let html = format!(
            "<html><head><title>{t} | TextShop</title></head><body><div class=\"header\">{h}</div>\
             <div class=\"content\"><h1>{t}</h1>{b}</div><ul class=\"links\">{links}</ul>\
             <div class=\"legal\">{l}</div></body></html>",
            t = escape(&page.title),
            h = escape(header),
            b = page.body,
            l = escape(legal),
        );
        let html = if path.ends_with("print=1") {
            format!(
                "<html><head><title>{}</title></head><body>{}</body></html>",
                escape(&page.title),
                page.body
            )
        } else {
            html
        };
        replies.insert(canonical(path), Reply::html(html));
        served.push((canonical(path), path.clone()));
    }
    // A session URL answers its page.
    for (href, target) in &served {
        if let Some(reply) = replies.get(&canonical(target)) {
            site.insert(href, reply.clone());
        }
    }
    let running = serve_on(site, SocketAddr::new(ip, 0)).await?;
    let mut truth = Truth::default();
    for (href, target) in served {
        if let Some(page) = pages.get(&target) {
            truth.insert(running.url(&href), page.truth);
        }
    }
    let seeds = running.url("/") + "\n";
    Ok(LabelledWeb {
        sites: vec![running],
        truth,
        seeds,
    })
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
