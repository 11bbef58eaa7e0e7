//! A link of one page carried to where its copy (or its original) is: the correspondence a
//! single pair makes plain, without a rule learned.

use url::Url;

/// `target`, a URL on the site of `from`, carried to the site of `to`, a page with `from`'s
/// content: under `to`'s scheme, host and port, and with the start of `from`'s path that
/// the two paths do not share put in place of `to`'s, when `target`'s path starts with it
/// (`/cs-CZ/sect.backup.html` linked from `/cs-CZ/packaging-system.html`, carried to
/// `/en-US/packaging-system.html`, is `/en-US/sect.backup.html`); otherwise its path as it
/// is (a new release's host for the old one's). The paths are compared by whole segments
/// from their ends. `None` for a target on another site than `from`'s.
pub fn carry(target: &Url, from: &Url, to: &Url) -> Option<Url> {
    // Scheme, host and port (the default one where none is given).
    if target.origin() != from.origin() {
        return None;
    }
    let (from_path, to_path) = (from.path(), to.path());
    // The longest common ending made of whole segments: from a '/' on.
    let shared = common_suffix_at_slash(from_path, to_path);
    let (from_start, to_start) = (
        &from_path[..from_path.len() - shared],
        &to_path[..to_path.len() - shared],
    );
    let path = match target.path().strip_prefix(from_start) {
        Some(rest) if !from_start.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
            format!("{to_start}{rest}")
        }
        _ => target.path().to_string(),
    };
    let mut carried = to.clone();
    carried.set_path(&path);
    carried.set_query(target.query());
    carried.set_fragment(None);
    Some(carried)
}

/// The length of the longest common ending of `a` and `b` that starts with a '/'.
fn common_suffix_at_slash(a: &str, b: &str) -> usize {
    let common = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    // Back to the first '/' within the common ending.
    let ending = &a[a.len() - common..];
    match ending.find('/') {
        Some(at) => common - at,
        None => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn a_link_goes_where_the_pair_says() {
        // (target, from, to, carried)
        let cases = [
            // A language's path prefix for another's, on another host.
            (
                "http://cs.example/cs-CZ/sect.backup.html",
                "http://cs.example/cs-CZ/packaging-system.html",
                "http://en.example/en-US/packaging-system.html",
                Some("http://en.example/en-US/sect.backup.html"),
            ),
            // And back.
            (
                "http://en.example/en-US/sect.backup.html",
                "http://en.example/en-US/packaging-system.html",
                "http://cs.example/cs-CZ/packaging-system.html",
                Some("http://cs.example/cs-CZ/sect.backup.html"),
            ),
            // A release's host for the old one's: the same path.
            (
                "http://llvm15.example/docs/Passes.html?x=1#top",
                "http://llvm15.example/docs/index.html",
                "http://llvm16.example/docs/index.html",
                Some("http://llvm16.example/docs/Passes.html?x=1"),
            ),
            // A deeper prefix: a release's version in the path.
            (
                "http://h.example/15/docs/a/b.html",
                "http://h.example/15/docs/index.html",
                "http://h.example/16.0/docs/index.html",
                Some("http://h.example/16.0/docs/a/b.html"),
            ),
            // A target outside the differing start: its path kept.
            (
                "http://cs.example/images/logo.png",
                "http://cs.example/cs-CZ/index.html",
                "http://en.example/en-US/index.html",
                Some("http://en.example/images/logo.png"),
            ),
            // Only whole segments: `/cs-CZX/` does not start with `/cs-CZ/`.
            (
                "http://cs.example/cs-CZX/a.html",
                "http://cs.example/cs-CZ/index.html",
                "http://en.example/en-US/index.html",
                Some("http://en.example/cs-CZX/a.html"),
            ),
            // Names that end alike are not cut inside a segment.
            (
                "http://m.example/story/7",
                "http://m.example/astory",
                "http://o.example/bstory",
                Some("http://o.example/story/7"),
            ),
            // Another site than the page's: not carried.
            (
                "http://other.example/a.html",
                "http://cs.example/cs-CZ/index.html",
                "http://en.example/en-US/index.html",
                None,
            ),
        ];
        for (target, from, to, want) in cases {
            let got = carry(&url(target), &url(from), &url(to));
            assert_eq!(got.as_ref().map(Url::as_str), want, "{target} {from} {to}");
        }
    }
}
