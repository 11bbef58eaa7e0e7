//! URL templates: a URL cut into pieces, some of them variables.

use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

/// Longest path, in pieces, a template is made of: longer URLs (generated traps, query
/// strings of hundreds of parameters) learn nothing.
pub(crate) const MAX_PIECES: usize = 64;

/// One piece of a path: literal text, or a variable bound by the URL it is matched against.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum Piece {
    /// Text that must be there as it is.
    Lit(String),
    /// A word the two URLs of a pair shared: any word, carried over.
    Var(u8),
    /// Any number (a word of digits), not carried over: a number only one URL of the pair
    /// had (a mirror's section: `/m/3/story.php?id={1}` and `/m/5/...` are one rule).
    Any,
}

/// The value of a query parameter in a template.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum Value {
    /// This value only.
    Lit(String),
    /// A value the two URLs of a pair shared: any value, carried over.
    Var(u8),
    /// Any value, not carried over: a parameter the other URL of the pair did not have
    /// (a session id, a sort order, a print switch).
    Any,
}

/// One side of a rule: an origin (scheme, host and port, as they are), a path of pieces and
/// query parameters (name and value, in the URL's order).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) struct Template {
    pub(crate) origin: String,
    pub(crate) path: Vec<Piece>,
    pub(crate) query: Vec<(String, Value)>,
}

/// A URL cut the way templates are: its origin, its path in words (runs of ASCII letters and
/// digits, or any non-ASCII character) and the separators between them, and its query's
/// parameters, each `name=value` as written (not decoded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    /// The whole URL, as it is written.
    pub(crate) url: String,
    pub(crate) origin: String,
    pub(crate) path: Vec<String>,
    pub(crate) query: Vec<(String, String)>,
}

impl Cut {
    /// `None` for a URL that cannot be a template's (no host, or too many pieces).
    pub(crate) fn of(url: &Url) -> Option<Cut> {
        url.host_str()?;
        let origin = url.origin().ascii_serialization();
        let path = split_words(url.path());
        let query: Vec<(String, String)> = match url.query() {
            None | Some("") => Vec::new(),
            Some(query) => query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(|pair| match pair.split_once('=') {
                    Some((name, value)) => (name.to_string(), value.to_string()),
                    None => (pair.to_string(), String::new()),
                })
                .collect(),
        };
        (path.len() + query.len() <= MAX_PIECES).then(|| Cut {
            url: url.to_string(),
            origin,
            path,
            query,
        })
    }

    /// Whether the path piece at `i` is a word (the pieces alternate words and separators).
    pub(crate) fn is_word(piece: &str) -> bool {
        piece.chars().next().is_some_and(is_word_char)
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || !c.is_ascii()
}

/// A path as alternating runs of word characters and of others, each kept.
fn split_words(path: &str) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut last: Option<bool> = None;
    for c in path.chars() {
        let word = is_word_char(c);
        match pieces.last_mut() {
            Some(piece) if last == Some(word) => piece.push(c),
            _ => pieces.push(c.to_string()),
        }
        last = Some(word);
    }
    pieces
}

impl Template {
    /// Binds `cut` to this template: the value of each variable, or `None` when it does not
    /// match (another origin, another shape, a literal that differs).
    pub(crate) fn bind(&self, cut: &Cut) -> Option<Vec<Option<String>>> {
        if cut.origin != self.origin
            || cut.path.len() != self.path.len()
            || cut.query.len() != self.query.len()
        {
            return None;
        }
        let mut vars: Vec<Option<String>> = Vec::new();
        let mut set = |id: u8, value: &str| -> bool {
            let i = usize::from(id);
            if vars.len() <= i {
                vars.resize(i + 1, None);
            }
            match &vars[i] {
                Some(bound) => bound == value,
                None => {
                    vars[i] = Some(value.to_string());
                    true
                }
            }
        };
        for (piece, have) in self.path.iter().zip(&cut.path) {
            let ok = match piece {
                Piece::Lit(text) => text == have,
                Piece::Var(id) => Cut::is_word(have) && set(*id, have),
                Piece::Any => !have.is_empty() && have.bytes().all(|b| b.is_ascii_digit()),
            };
            if !ok {
                return None;
            }
        }
        // Parameters match by name, in any order; a name given twice must be given as often.
        let mut wanted: Vec<&(String, Value)> = self.query.iter().collect();
        wanted.sort();
        let mut given: Vec<&(String, String)> = cut.query.iter().collect();
        given.sort();
        for ((name, value), (have_name, have)) in wanted.into_iter().zip(given) {
            let ok = name == have_name
                && match value {
                    Value::Lit(text) => text == have,
                    Value::Var(id) => set(*id, have),
                    Value::Any => true,
                };
            if !ok {
                return None;
            }
        }
        Some(vars)
    }

    /// The URL this template gives with `vars` bound (`None` when one is unbound or the text
    /// is no URL).
    pub(crate) fn fill(&self, vars: &[Option<String>]) -> Option<Url> {
        let var = |id: u8| vars.get(usize::from(id)).and_then(|v| v.as_deref());
        let mut text = self.origin.clone();
        for piece in &self.path {
            match piece {
                Piece::Lit(lit) => text.push_str(lit),
                Piece::Var(id) => text.push_str(var(*id)?),
                Piece::Any => return None,
            }
        }
        for (i, (name, value)) in self.query.iter().enumerate() {
            text.push(if i == 0 { '?' } else { '&' });
            text.push_str(name);
            text.push('=');
            match value {
                Value::Lit(lit) => text.push_str(lit),
                Value::Var(id) => text.push_str(var(*id)?),
                Value::Any => return None,
            }
        }
        Url::parse(&text).ok()
    }
}

impl fmt::Display for Template {
    /// `http://host/story/{1}/?sid=*`: literals as they are, variables by number, a value
    /// that may be anything as `*`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.origin)?;
        for piece in &self.path {
            match piece {
                Piece::Lit(lit) => f.write_str(lit)?,
                Piece::Var(id) => write!(f, "{{{id}}}")?,
                Piece::Any => f.write_str("*")?,
            }
        }
        for (i, (name, value)) in self.query.iter().enumerate() {
            f.write_str(if i == 0 { "?" } else { "&" })?;
            match value {
                Value::Lit(lit) => write!(f, "{name}={lit}")?,
                Value::Var(id) => write!(f, "{name}={{{id}}}")?,
                Value::Any => write!(f, "{name}=*")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_cut_into_words_and_separators() {
        let cases: &[(&str, &[&str])] = &[
            ("/", &["/"]),
            ("/story/123/", &["/", "story", "/", "123", "/"]),
            ("/a/123.html", &["/", "a", "/", "123", ".", "html"]),
            (
                "/docs/Lang-Ref_2.html",
                &["/", "docs", "/", "Lang", "-", "Ref", "_", "2", ".", "html"],
            ),
            ("/%E4%B8%AD", &["/%", "E4", "%", "B8", "%", "AD"]),
            ("/中文/x", &["/", "中文", "/", "x"]),
        ];
        for (path, want) in cases {
            assert_eq!(split_words(path), *want, "{path}");
        }
    }

    #[test]
    fn a_cut_keeps_the_query_as_written() {
        let url = Url::parse("http://h:8080/p?b=2&a=&c&a=1").unwrap();
        let cut = Cut::of(&url).unwrap();
        assert_eq!(cut.origin, "http://h:8080");
        let query: Vec<(&str, &str)> = cut
            .query
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(query, [("b", "2"), ("a", ""), ("c", ""), ("a", "1")]);
    }
}
