//! Tests of `content`.

use super::scoring::is_comma;
use super::*;

proptest::proptest! {
    /// The byte-at-a-time counts of ASCII text are the character counts.
    #[test]
    fn text_counts_are_the_character_counts(text in "[ -~\t\n\x0b\x0c\r\x1c-\x1f,]{0,80}|.{0,40}") {
        let chars = text.chars().filter(|c| !c.is_whitespace()).count() as u32;
        let commas = text.chars().filter(|&c| is_comma(c)).count() as u32;
        proptest::prop_assert_eq!(text_counts(&text), (chars, commas));
    }
}

const ARTICLE: &str = r#"<html><head><title>Rivers</title><style>p { color: red }</style></head><body>
      <header class="site-header"><a href="/">Home</a> <a href="/news">News</a></header>
      <nav><ul><li><a href="/a">Section A</a></li><li><a href="/b">Section B</a></li></ul></nav>
      <div id="main-content" class="container">
        <h1>How rivers shape valleys</h1>
        <div class="byline">By A. Writer, 3 May 2024, 10:31</div>
        <p>Rivers carve valleys over thousands of years, moving sediment from the mountains to the sea, and the shape they leave depends on the rock, the climate and the slope.</p>
        <p>In hard rock, a river cuts a narrow gorge with steep walls, while in soft rock, the walls slump, and the valley widens into a gentle V.</p>
        <div class="share-tools"><a href="/share/fb">Share on Facebook</a> <a href="/share/x">Share on X</a></div>
        <p>Glaciers, by contrast, leave U-shaped valleys, because the ice grinds the floor and the walls at once, as it did in Yosemite.</p>
        <script>var counter = 12345;</script>
      </div>
      <aside class="sidebar"><p>Most read: ten things about the sea, with many commas, lists, and words.</p></aside>
      <div class="comments"><p>Great article, I loved it, thanks, really, it was great.</p></div>
      <footer>Copyright 2024 Example News. All rights reserved, everywhere, always.</footer>
    </body></html>"#;

#[test]
fn keeps_the_article_and_drops_the_template() {
    let doc = Document::parse(ARTICLE);
    let extraction = ContentExtractor::new().extract(&doc);
    let main = extraction.main_text();
    assert!(main.starts_with("Rivers carve valleys"), "{main}");
    assert!(
        main.contains("gentle V.") && main.ends_with("as it did in Yosemite."),
        "{main}"
    );
    for boilerplate in [
        "Home",
        "Section A",
        "Share on",
        "Most read",
        "Great article",
        "Copyright",
        "counter",
        "How rivers",
    ] {
        assert!(
            !main.contains(boilerplate),
            "{boilerplate} leaked into {main}"
        );
    }
    let rest = extraction.boilerplate_text();
    assert!(
        rest.contains("Share on Facebook") && rest.contains("How rivers shape valleys"),
        "{rest}"
    );
    assert!(
        !extraction.full_text().contains("counter"),
        "scripts are not text"
    );
}

#[test]
fn a_listing_in_a_contents_div_is_not_the_article() {
    // DocBook: prose in `div.para` blocks, a listing in `div.example-contents`, whose
    // class looks positive. The section's paragraphs are the article.
    let para = |i: usize| {
        format!(
            "<div class=para>Paragraph {i} explains the source package, its control \
                 file and how it is signed, with a reference to <a href=x.html>Section \
                 {i}</a> for details.</div>"
        )
    };
    let html = format!(
        "<body><div class=banner><a href=/>Download the ebook</a></div><div class=section>\
             <div class=section>{}{}<div class=example><p class=title>Example 1</p>\
             <div class=example-contents><pre>Format: 3.0, Source: zim, Binary: zim, \
             Build-Depends: debhelper, python3, python3-gi, python3-xdg, dh-python\n{}</pre>\
             </div></div>{}{}</div></div></body>",
        para(1),
        para(2),
        "Checksums-Sha1: 80d43d5c1c6a47c695079eb02bc8ad36b84d6e57 2159901\n".repeat(8),
        para(3),
        para(4),
    );
    let extraction = ContentExtractor::new().extract(&Document::parse(&html));
    let main = extraction.main_text();
    for i in 1..=4 {
        assert!(main.contains(&format!("Paragraph {i} explains")), "{main}");
    }
    assert!(!extraction.listing);
}

#[test]
fn prose_in_a_sidebar_inside_the_article_is_the_articles() {
    // DocBook's tip boxes are `div.sidebar`; a site's sidebar outside the article, and a
    // list of links inside one, stay out.
    let para = |i: usize| {
        format!(
            "<div class=para>Paragraph {i} of the chapter says how real-time clients \
                 work, which protocols they speak, and what to configure first.</div>"
        )
    };
    let html = format!(
        "<body><div class=sidebar><p>Site news: the handbook has a new edition out, \
             read all about it today.</p></div><div class=section>{}{}<div class=sidebar>\
             <div class=para>Tip: look for clients supporting ICE and TURN, as they cross \
             firewalls and NAT without trouble.</div><ul><li><a href=a>Related one</a></li>\
             <li><a href=b>Related two</a></li></ul></div>{}</div></body>",
        para(1),
        para(2),
        para(3),
    );
    let main = ContentExtractor::new()
        .extract(&Document::parse(&html))
        .main_text();
    assert!(main.contains("Tip: look for clients"), "{main}");
    assert!(main.contains("Paragraph 3"), "{main}");
    for outside in ["Site news", "Related one"] {
        assert!(!main.contains(outside), "{outside} in {main}");
    }
}

#[test]
fn a_table_of_contents_is_a_listing() {
    let items: String = (0..40)
        .map(|i| format!("<li><a href=p{i}.html>Chapter {i} of the manual</a></li>"))
        .collect();
    let html = format!(
        "<body><div class=content><div class=section><h1>Contents</h1><ul>{items}</ul>\
             </div></div></body>"
    );
    let extraction = ContentExtractor::new().extract(&Document::parse(&html));
    assert!(extraction.listing);
    let article = ContentExtractor::new().extract(&Document::parse(ARTICLE));
    assert!(!article.listing);
}

#[test]
fn short_pages_fall_back_to_fewer_rules() {
    // All text sits in an element whose class looks like an ad wrapper.
    let html = format!(
        r#"<body><div class="page-ad-margins"><p>{}</p><p>{}</p></div></body>"#,
        "Some real text, with commas, that is long enough to count as a paragraph of prose."
            .repeat(4),
        "More of the same article, in a second paragraph, with a few more words in it.".repeat(4),
    );
    let main = ContentExtractor::new()
        .extract(&Document::parse(&html))
        .main_text();
    assert!(
        main.contains("Some real text") && main.contains("second paragraph"),
        "{main}"
    );
}

#[test]
fn empty_and_textless_pages() {
    let extractor = ContentExtractor::new();
    for html in [
        "",
        "<html><body></body></html>",
        "<img src=x>",
        "<script>x</script>",
    ] {
        let extraction = extractor.extract(&Document::parse(html));
        assert_eq!(extraction.main_text(), "", "{html}");
    }
    assert_eq!(
        extractor.extract(&Document::parse("just text")).full_text(),
        "just text"
    );
}
