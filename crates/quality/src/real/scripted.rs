//! Pages written by a script, made from a real web's pages for the render issue: about half of
//! each site's pages (by a hash of the path, so a page and its copies need not agree) are
//! served as a shell, a `<div id="root">Loading...</div>`, the page's body as JSON data and
//! a script (`/app.js`, served on every site) that writes that body into the document. A
//! browser shows the page as it was; its static HTML shows "Loading..." and no link. The
//! others are served as they are: the site is mixed, as `render.mode = "auto"` meets sites.
//! The truth is the page's own, computed on its original HTML.

use scraper::{Html, Selector};

/// The script every site serves at `/app.js`: the page's body, from its data, written into
/// the document.
pub(super) const APP: &str = "const page = JSON.parse(document.getElementById('page').textContent);\n\
     document.title = page.title;\n\
     document.body.innerHTML = page.body;\n";

/// Whether the page at `path` is served as a script's shell.
pub fn is_shell(path: &str) -> bool {
    // FNV-1a: any hash that spreads paths will do.
    let hash = (path.bytes()).fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % 2 == 0
}

/// `html` as a script's shell: its title, "Loading...", its body as data, and the script.
pub(super) fn shell(html: &str) -> String {
    let doc = Html::parse_document(html);
    let select = |s: &str| Selector::parse(s).expect("a valid selector");
    let title = (doc.select(&select("title")).next())
        .map(|t| t.text().collect::<String>())
        .unwrap_or_default();
    let body = (doc.select(&select("body")).next())
        .map(|b| b.inner_html())
        .unwrap_or_default();
    let data = serde_json::json!({ "title": title, "body": body });
    // Inside a script element, `</` would end it.
    let data = data.to_string().replace("</", "<\\/");
    let title = title.replace('&', "&amp;").replace('<', "&lt;");
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><div id=\"root\">Loading...</div>\
         <script id=\"page\" type=\"application/json\">{data}</script>\
         <script src=\"/app.js\"></script></body></html>"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_holds_its_page_as_data_and_shows_none_of_it() {
        let page = "<html><head><title>A &amp; B</title></head><body><p>Text of the page, \
                    with </script> in it.</p><a href=\"b.html\">b</a></body></html>";
        let shell = shell(page);
        assert!(
            shell.contains("<div id=\"root\">Loading...</div>"),
            "{shell}"
        );
        let start = shell.find("type=\"application/json\">").unwrap_or(0) + 24;
        let end = shell[start..].find("</script>").unwrap_or(0) + start;
        let shown = format!("{}{}", &shell[..start], &shell[end..]);
        assert!(!shown.contains("<a "), "no link shown: {shown}");
        assert!(!shell.contains("</script> in it"), "{shell}");
        let data: serde_json::Value = serde_json::from_str(&shell[start..end]).unwrap_or_default();
        assert_eq!(data["title"], "A & B");
        assert!(
            data["body"]
                .as_str()
                .unwrap_or("")
                .contains("<a href=\"b.html\">b</a>")
        );
    }

    #[test]
    fn about_half_the_pages_are_shells() {
        let shells = (0..1000)
            .filter(|n| is_shell(&format!("/p/{n}.html")))
            .count();
        assert!((400..600).contains(&shells), "{shells}");
    }
}
