//! The generated web's shop (a robots.txt area, a template heavier than its text) and its
//! trap site (an endless calendar).

use std::sync::Arc;

use nearcrawl_demo_web::{Article, Reply, Site};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Groups, SiteSpec, escape, listing, paragraphs_html};
use crate::truth::{Kind, PageTruth};

pub(super) fn shop(
    fillers: &[Article],
    products: usize,
    groups: &mut Groups,
    rng: &mut ChaCha8Rng,
) -> SiteSpec {
    let mut site = SiteSpec::new();
    site.robots = Some("User-agent: *\nDisallow: /cart/\n".into());
    // The template: most of every page's bytes and words, the same on every page.
    let categories: Vec<String> = fillers
        .iter()
        .take(6)
        .flat_map(|a| {
            a.paragraphs[0]
                .split_whitespace()
                .take(10)
                .map(str::to_owned)
        })
        .collect();
    let menu: String = categories
        .iter()
        .map(|c| format!("<li><a href=\"/\">{}</a></li>", escape(c)))
        .collect();
    let legal = paragraphs_html(&fillers[fillers.len() - 1].paragraphs[..3]);
    let sentences: Vec<String> = fillers[6..fillers.len() - 1]
        .iter()
        .flat_map(|a| a.paragraphs.iter())
        .flat_map(|p| p.split(". ").map(str::to_owned))
        .filter(|s| s.split_whitespace().count() >= 8)
        .collect();
    let template = |title: &str, body: &str, rng: &mut ChaCha8Rng| {
        format!(
            r#"<html><head><title>{t} | MegaShop</title></head><body><div class="header">MegaShop - free shipping over 50</div>
<ul class="categories">{menu}</ul><div class="product"><h1>{t}</h1>{body}<p class="price">Price: {p}.{c:02} EUR</p></div>
<div class="legal">{legal}</div><div class="footer">Session {s:x}</div></body></html>"#,
            t = escape(title),
            p = rng.random_range(5..500),
            c = rng.random_range(0..100),
            s = rng.random::<u32>(),
        )
    };
    let mut links = Vec::new();
    for i in 0..products {
        // A short, distinct description: three sentences of its own.
        let description: Vec<String> = (0..3)
            .map(|j| sentences[(i * 3 + j) % sentences.len()].clone())
            .collect();
        let body = format!(
            "<p>{}.</p><p><a href=\"/cart/add?id={i}\">Add to cart</a></p>",
            escape(&description.join(". "))
        );
        let title = format!("Product {i}");
        site.add(
            format!("/product/{i}"),
            Reply::html(template(&title, &body, rng)),
            PageTruth::scored(groups.next(), Kind::TemplateNegative),
        );
        site.add(
            format!("/cart/add?id={i}"),
            Reply::html(template("Cart", "<p>Added.</p>", rng)),
            PageTruth::disallowed(groups.next()),
        );
        links.push((format!("/product/{i}"), title));
    }
    site.add(
        "/".into(),
        Reply::html(template(
            "All products",
            &format!("<ul>{}</ul>", listing(&links)),
            rng,
        )),
        PageTruth::index(groups.next()),
    );
    site
}

pub(super) fn trap_site(rng: &mut ChaCha8Rng) -> Site {
    let banner = rng.random_range(1000..9999);
    Site::new().generated(Arc::new(move |path: &str| {
        let date = path.strip_prefix("/events/")?;
        let mut parts = date.split('-').map(|p| p.parse::<u32>().ok());
        let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
        let next = if d < 28 { format!("{y}-{m:02}-{:02}", d + 1) } else if m < 12 { format!("{y}-{:02}-01", m + 1) } else { format!("{}-01-01", y + 1) };
        Some(Reply::html(format!(
            r#"<html><head><title>Events on {date}</title></head><body><h1>Community events</h1>
<div class="day"><p>Events on {date}: nothing is scheduled for this day yet. Check back later, or browse to the next day to see what is planned. Organisers can submit events through the form on the main page; submissions are reviewed within two working days.</p></div>
<p><a href="/events/{next}">Next day</a></p><div class="b">Banner {banner}</div></body></html>"#
        )))
    }))
}
