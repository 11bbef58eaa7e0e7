//! A rule learned from a pair of URLs of the same content, and where the book looks it up
//! ([`Key`]); the book itself is `book.rs`.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::template::{Cut, Piece, Template, Value};

/// A rewrite from the URLs of copies to the URLs of their originals.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Rule(Kind);

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
enum Kind {
    /// `from` and `to` share their variables (`http://mirror/story/{1}/` ->
    /// `http://origin/a/{1}.html`): URLs of `from`'s shape.
    Template { from: Template, to: Template },
    /// A URL that starts with `from` (an origin and whole path segments) has `to` in its
    /// place (`http://new/` -> `http://old/`, `http://h/es/` -> `http://h/en/`), whatever
    /// follows: DUST's substring substitution, anchored at the start.
    Prefix { from: String, to: String },
    /// A URL that starts with `from` and ends with `from_end`, something between, has `to`
    /// and `to_end` in their places (`http://mirror/story/*/` -> `http://origin/en/*.html`):
    /// a prefix rule for two URLs that do not end alike, whatever their paths' depth or
    /// words ([`Rule::learn_affix`]).
    Affix {
        from: String,
        from_end: String,
        to: String,
        to_end: String,
    },
}

impl Rule {
    /// The rule that puts `original`'s start in place of `copy`'s where the two end alike:
    /// the longest common end of the two URLs that begins a path segment (after a `/`) and
    /// holds a word. `None` when they share no such end, or share all but their origin's
    /// scheme (nothing a crawl would ask for differently).
    pub fn learn_prefix(copy: &Url, original: &Url) -> Option<Rule> {
        let (copy, original) = (copy.as_str(), original.as_str());
        let common = copy
            .bytes()
            .rev()
            .zip(original.bytes().rev())
            .take_while(|(a, b)| a == b)
            .count();
        // Within the path: after the origin's "scheme://host/" on both sides.
        let (copy_path, original_path) = (path_start(copy)?, path_start(original)?);
        let max = common
            .min(copy.len() - copy_path)
            .min(original.len() - original_path);
        // The longest end that starts a segment: the end of `copy` from just after a '/'.
        let tail = &copy[copy.len() - max..];
        let start =
            match tail.starts_with(|c| c != '/') && copy.as_bytes()[copy.len() - max - 1] == b'/' {
                true => 0,
                false => tail.find('/')? + 1,
            };
        let end = &tail[start..];
        if !end.chars().any(|c| c.is_ascii_alphanumeric()) {
            return None;
        }
        let from = &copy[..copy.len() - end.len()];
        let to = &original[..original.len() - end.len()];
        (from != to).then(|| {
            Rule(Kind::Prefix {
                from: from.to_string(),
                to: to.to_string(),
            })
        })
    }

    /// The rule that puts `original`'s start and end in place of `copy`'s where the two do
    /// not end alike, around the longest run of text they share (a mirror's
    /// `/story/mod/core/` for `/en/mod/core.html`: `/story/*/` -> `/en/*.html`): the run
    /// starts a path segment on both sides, holds a word, and ends where a word does on both.
    /// `None` when they end alike ([`Rule::learn_prefix`]'s) or share no such run.
    pub fn learn_affix(copy: &Url, original: &Url) -> Option<Rule> {
        let (copy, original) = (copy.as_str(), original.as_str());
        let (c, o) = (copy.as_bytes(), original.as_bytes());
        if c.last() == o.last() {
            return None;
        }
        let (copy_path, original_path) = (path_start(copy)?, path_start(original)?);
        let word = |b: u8| b.is_ascii_alphanumeric();
        // (start in copy, start in original, length) of the longest run.
        let mut best: Option<(usize, usize, usize)> = None;
        for i in (copy_path..c.len()).filter(|&i| c[i - 1] == b'/') {
            for j in (original_path..o.len()).filter(|&j| o[j - 1] == b'/') {
                let same = (c[i..].iter().zip(&o[j..]))
                    .take_while(|(a, b)| a == b)
                    .count();
                // Back to where a word ends on both sides.
                let ends = |n: usize| {
                    n > 0
                        && c.get(i + n).is_none_or(|&b| !word(b))
                        && o.get(j + n).is_none_or(|&b| !word(b))
                };
                let Some(n) = (1..=same).rev().find(|&n| ends(n)) else {
                    continue;
                };
                if c[i..i + n].iter().any(|&b| word(b)) && best.is_none_or(|(_, _, m)| n > m) {
                    best = Some((i, j, n));
                }
            }
        }
        let (i, j, n) = best?;
        Some(Rule(Kind::Affix {
            from: copy[..i].to_string(),
            from_end: copy[i + n..].to_string(),
            to: original[..j].to_string(),
            to_end: original[j + n..].to_string(),
        }))
    }

    /// The rule that rewrites `copy` into `original`, two URLs of the same content: the
    /// words they share (the longest common subsequence of their path words and query
    /// values) become variables, the rest stays as it is, and a parameter of the copy's that
    /// the original lacks may take any value. `None` when the two are one URL, when either
    /// has no host or too many pieces, or when the rule would hold for `copy` alone (no word
    /// shared, no parameter dropped: nothing to carry to another URL).
    pub fn learn(copy: &Url, original: &Url) -> Option<Rule> {
        if copy == original {
            return None;
        }
        let (copy, original) = (Cut::of(copy)?, Cut::of(original)?);
        let copy_words = words(&copy);
        let original_words = words(&original);
        let pairs = common_subsequence(&copy_words, &original_words);
        // Variable ids, 1-based, by position in each URL's list of words.
        let mut copy_var: HashMap<usize, u8> = HashMap::new();
        let mut original_var: HashMap<usize, u8> = HashMap::new();
        for (n, (i, j)) in pairs.iter().enumerate() {
            let id = u8::try_from(n + 1).ok()?;
            copy_var.insert(copy_words[*i].0, id);
            original_var.insert(original_words[*j].0, id);
        }
        // One side of the rule; `other`, the original, when it is the copy's: a number in
        // its path that the original lacks may be any number, and a parameter the original
        // lacks may take any value.
        let side = |cut: &Cut, vars: &HashMap<usize, u8>, other: Option<&Cut>| -> Template {
            let path = cut
                .path
                .iter()
                .enumerate()
                .map(|(at, piece)| match vars.get(&at) {
                    Some(id) => Piece::Var(*id),
                    None if other.is_some() && is_number(piece) => Piece::Any,
                    None => Piece::Lit(piece.clone()),
                })
                .collect();
            let query = cut
                .query
                .iter()
                .enumerate()
                .map(|(k, (name, value))| {
                    let value = match (vars.get(&(cut.path.len() + k)), other) {
                        (Some(id), _) => Value::Var(*id),
                        (None, Some(other)) if !other.query.iter().any(|(n, _)| n == name) => {
                            Value::Any
                        }
                        (None, _) => Value::Lit(value.clone()),
                    };
                    (name.clone(), value)
                })
                .collect();
            Template {
                origin: cut.origin.clone(),
                path,
                query,
            }
        };
        let from = side(&copy, &copy_var, Some(&original));
        let to = side(&original, &original_var, None);
        // A number the copy's URL has in its path and the original's has another of in its
        // own (`/p/5.html` for `/p/7.html`: a copy at another id) ties the rule to the copy's
        // URL alone: nothing to carry to another URL.
        let number = |piece: &Piece| matches!(piece, Piece::Lit(w) if is_number(w));
        let one_off = from.path.contains(&Piece::Any) && to.path.iter().any(number);
        let general = !pairs.is_empty() || from.query.iter().any(|(_, v)| *v == Value::Any);
        (general && !one_off).then_some(Rule(Kind::Template { from, to }))
    }

    /// The same correspondence read the other way, from originals to copies, when it can be
    /// (a URL of either shape has one of the other): a prefix rule always, a template whose
    /// `from` side takes no value of its own (`*`, any number or any parameter value the
    /// original lacks). Two URLs of the same content are copies of each other: whichever was
    /// fetched first is the original of that pair.
    pub fn reversed(&self) -> Option<Rule> {
        match &self.0 {
            Kind::Template { from, to } => {
                let any = from.path.contains(&Piece::Any)
                    || from.query.iter().any(|(_, v)| *v == Value::Any);
                (!any).then(|| {
                    Rule(Kind::Template {
                        from: to.clone(),
                        to: from.clone(),
                    })
                })
            }
            Kind::Prefix { from, to } => Some(Rule(Kind::Prefix {
                from: to.clone(),
                to: from.clone(),
            })),
            Kind::Affix {
                from,
                from_end,
                to,
                to_end,
            } => Some(Rule(Kind::Affix {
                from: to.clone(),
                from_end: to_end.clone(),
                to: from.clone(),
                to_end: from_end.clone(),
            })),
        }
    }

    /// The counterpart this rule gives `url`, when `url` matches its `from` side.
    pub fn apply(&self, url: &Url) -> Option<Url> {
        self.apply_cut(&Cut::of(url)?)
    }

    pub(crate) fn apply_cut(&self, cut: &Cut) -> Option<Url> {
        match &self.0 {
            Kind::Template { from, to } => to.fill(&from.bind(cut)?),
            Kind::Prefix { from, to } => {
                let rest = cut.url.strip_prefix(from.as_str())?;
                Url::parse(&format!("{to}{rest}")).ok()
            }
            Kind::Affix {
                from,
                from_end,
                to,
                to_end,
            } => {
                let rest = cut.url.strip_prefix(from.as_str())?;
                let middle = rest.strip_suffix(from_end.as_str())?;
                (!middle.is_empty())
                    .then(|| Url::parse(&format!("{to}{middle}{to_end}")).ok())
                    .flatten()
            }
        }
    }

    /// Where the book looks it up: the shape of the URLs a template's `from` side matches,
    /// or the origin a prefix starts with.
    pub(crate) fn key(&self) -> Key {
        match &self.0 {
            Kind::Template { from, .. } => Key::Shape {
                origin: from.origin.clone(),
                path: from.path.len(),
                query: from.query.len(),
            },
            Kind::Prefix { from, .. } | Kind::Affix { from, .. } => {
                Key::Origin(origin_of(from).to_string())
            }
        }
    }
}

/// Where a URL's text's path starts: just after the `/` that follows its origin (`None`
/// without one).
fn path_start(url: &str) -> Option<usize> {
    let after = url.find("://")? + 3;
    url[after..].find('/').map(|i| after + i + 1)
}

/// The origin a URL's text starts with (up to its path).
fn origin_of(url: &str) -> &str {
    let after = url.find("://").map_or(0, |i| i + 3);
    match url[after..].find('/') {
        Some(i) => &url[..after + i],
        None => url,
    }
}

impl fmt::Display for Rule {
    /// `from -> to`; a prefix rule with `*` for whatever follows.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Template { from, to } => write!(f, "{from} -> {to}"),
            Kind::Prefix { from, to } => write!(f, "{from}* -> {to}*"),
            Kind::Affix {
                from,
                from_end,
                to,
                to_end,
            } => write!(f, "{from}*{from_end} -> {to}*{to_end}"),
        }
    }
}

/// Whether a path piece is a number (a word of ASCII digits).
fn is_number(piece: &str) -> bool {
    !piece.is_empty() && piece.bytes().all(|b| b.is_ascii_digit())
}

/// The words of a cut URL, in order: (position, text), path words at their piece's index,
/// query values at the path's length plus their parameter's index. Empty values are no words.
fn words(cut: &Cut) -> Vec<(usize, &str)> {
    let path = cut
        .path
        .iter()
        .enumerate()
        .filter(|(_, piece)| Cut::is_word(piece))
        .map(|(at, piece)| (at, piece.as_str()));
    let query = cut
        .query
        .iter()
        .enumerate()
        .filter(|(_, (_, value))| !value.is_empty())
        .map(|(k, (_, value))| (cut.path.len() + k, value.as_str()));
    path.chain(query).collect()
}

/// The index pairs of a longest common subsequence of `a` and `b` by text (the earliest
/// alignment on ties).
fn common_subsequence(a: &[(usize, &str)], b: &[(usize, &str)]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    // lengths[i][j]: the LCS of a[i..] and b[j..].
    let mut lengths = vec![vec![0u16; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i][j] = if a[i].1 == b[j].1 {
                lengths[i + 1][j + 1] + 1
            } else {
                lengths[i + 1][j].max(lengths[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut pairs = Vec::new();
    while i < n && j < m {
        if a[i].1 == b[j].1 {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[i + 1][j] >= lengths[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// Where a rule is looked up.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
    /// A template's: URLs of this origin with as many path pieces and parameters.
    Shape {
        origin: String,
        path: usize,
        query: usize,
    },
    /// A prefix's: URLs of this origin.
    Origin(String),
}
