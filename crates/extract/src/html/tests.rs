use super::*;

fn outline(doc: &Document) -> String {
    // Elements as `tag(children)`, text as its collapsed content in quotes.
    fn walk(doc: &Document, id: NodeId, out: &mut String) {
        match doc.node(id).tag {
            None => {
                let mut t = String::new();
                push_collapsed(&mut t, doc.text(id));
                out.push_str(&format!("{:?}", t.trim()));
            }
            Some(tag) => {
                out.push_str(&format!("{tag:?}").to_lowercase());
                let children: Vec<_> = doc.children(id).collect();
                if !children.is_empty() {
                    out.push('(');
                    for (i, c) in children.into_iter().enumerate() {
                        if i > 0 {
                            out.push(' ');
                        }
                        walk(doc, c, out);
                    }
                    out.push(')');
                }
            }
        }
    }
    let mut out = String::new();
    let children: Vec<_> = doc.children(0).collect();
    for (i, c) in children.into_iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        walk(doc, c, &mut out);
    }
    out
}

#[test]
fn implied_end_tags_shape_the_tree() {
    let cases = [
        ("<p>a<p>b", r#"p("a") p("b")"#),
        ("<p>a<div>b</div>", r#"p("a") div("b")"#),
        ("<ul><li>a<li>b</ul>c", r#"ul(li("a") li("b")) "c""#),
        (
            "<ul><li>a<ul><li>b</ul><li>c</ul>",
            r#"ul(li("a" ul(li("b"))) li("c"))"#,
        ),
        (
            "<table><tr><td>a<td>b<tr><td>c</table>",
            r#"table(tr(td("a") td("b")) tr(td("c")))"#,
        ),
        ("<div><span>a</div>b", r#"div(span("a")) "b""#),
        ("<b>a</i>b</b>", r#"b("ab")"#),
        ("<a href=x>a<a>b</a>", r#"a("a") a("b")"#),
        ("<h1>a<h2>b</h2>", r#"h1("a") h2("b")"#),
        ("a<br>b</br>c", r#""a" br "b" br "c""#),
        ("<dl><dt>a<dd>b<dt>c</dl>", r#"dl(dt("a") dd("b") dt("c"))"#),
        (
            "<select><option>a<option>b</select>",
            r#"select(option("a") option("b"))"#,
        ),
        (
            "<svg><path/><text>t</text></svg>x",
            r#"svg(other other("t")) "x""#,
        ),
        ("<div/>a", r#"div("a")"#),
        ("<x-a><x-b>t</X-B>u</x-a>v", r#"other(other("t") "u") "v""#),
        ("<div><x-a>t</div>u</x-a>", r#"div(other("t")) "u""#),
    ];
    for (html, want) in cases {
        assert_eq!(outline(&Document::parse(html)), want, "{html}");
    }
}

#[test]
fn raw_text_comments_and_references() {
    let doc = Document::parse(
        "<title>A &amp; B</title><script>if (a<b) x='</div>'</script><style>p{}</STYLE >\
         <!-- <p>gone</p> -->caf&eacute;<textarea><b>x</b></textarea>",
    );
    assert_eq!(
        outline(&doc),
        r#"title("A & B") script style "café" textarea("<b>x</b>")"#
    );
}

#[test]
fn attributes_are_decoded_and_filtered() {
    let doc =
        Document::parse(r#"<a HREF="/x?a=1&amp;b=2" data-x=1 class=big rel='nofollow'>t</a>"#);
    let a = doc.first(Tag::A).expect("a");
    assert_eq!(doc.attr(a, Attr::Href), Some("/x?a=1&b=2"));
    assert_eq!(doc.attr(a, Attr::Class), Some("big"));
    assert_eq!(doc.attr(a, Attr::Rel), Some("nofollow"));
    assert_eq!(doc.attributes(a).len(), 3);
}

#[test]
fn malformed_input_still_parses() {
    for html in [
        "<",
        "<a",
        "<a href=\"x",
        "</",
        "</a",
        "<!--",
        "<!doctype",
        "<script>x",
        "a < b > c",
        "<p><<>>",
    ] {
        let doc = Document::parse(html);
        assert_eq!(doc.node(0).end as usize, doc.len(), "{html}");
    }
    assert_eq!(Document::parse("a < b").subtree_text(0), "a < b");
}

#[test]
fn deep_nesting_is_bounded() {
    let html = "<div>".repeat(10_000) + "x";
    let doc = Document::parse(&html);
    assert_eq!(doc.subtree_text(0), "x");
}

/// The reference [`push_collapsed`]: split at every whitespace character.
fn push_collapsed_reference(out: &mut String, text: &str) {
    for (i, piece) in text.split(|c: char| c.is_whitespace()).enumerate() {
        if i > 0 && !out.is_empty() && !out.ends_with(' ') {
            out.push(' ');
        }
        out.push_str(piece);
    }
}

proptest::proptest! {
    /// The ASCII fast path of `push_collapsed` is the reference, whatever is already out.
    #[test]
    fn push_collapsed_is_the_reference(before in "[a ]{0,3}", text in "[ab ,\t\n\x0b\x0c\r\x1c\u{85}\u{a0}\u{a9}\u{1680}\u{1e00}\u{2003}\u{2019}\u{2028}\u{205f}\u{3000}\u{3001}é]{0,24}") {
        let (mut got, mut want) = (before.clone(), before);
        push_collapsed(&mut got, &text);
        push_collapsed_reference(&mut want, &text);
        proptest::prop_assert_eq!(got, want);
    }

    #[test]
    fn subtrees_nest_properly(html in "(<(p|div|li|ul|a|b|td|tr|table|br|script|svg)( class=x)?/?>|</(p|div|li|ul|a|b|td|tr|table|script|svg)>|[a-z &;<>]{0,4}){0,40}") {
        let doc = Document::parse(&html);
        for (i, node) in doc.nodes().iter().enumerate().skip(1) {
            let parent = doc.node(node.parent);
            proptest::prop_assert!((node.parent as usize) < i);
            proptest::prop_assert!(node.end as usize > i && node.end <= parent.end);
        }
    }
}
