//! Real text for the labelled web, read at test time from Debian documentation packages
//! (installed by `scripts/quality-deps.sh`; nothing of it is committed).

use std::fmt;
use std::path::{Path, PathBuf};

use nearcrawl_demo_web::Article;
use nearcrawl_extract::{Document, Tag};

/// A documentation package used as a text source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `python3.11-doc`: the Python library and language reference (English). Used for tuning.
    PythonDocs,
    /// `git-doc`: the Git manual pages and guides (English). Held out: checks, not tuning.
    GitDocs,
    /// `debian-reference-zh-cn`: the Debian Reference in Simplified Chinese.
    DebianReferenceZh,
}

impl Source {
    /// The Debian package that provides it.
    pub fn package(self) -> &'static str {
        match self {
            Source::PythonDocs => "python3.11-doc",
            Source::GitDocs => "git-doc",
            Source::DebianReferenceZh => "debian-reference-zh-cn",
        }
    }

    fn files(self) -> Vec<PathBuf> {
        let (dir, suffix) = match self {
            Source::PythonDocs => ("/usr/share/doc/python3.11/html/library", ".html"),
            Source::GitDocs => ("/usr/share/doc/git/html", ".html"),
            Source::DebianReferenceZh => ("/usr/share/debian-reference", ".zh-cn.html"),
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.to_string_lossy().ends_with(suffix))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        files
    }

    /// Paragraphs shorter than this are headings, captions or code: skipped.
    fn long_enough(self, paragraph: &str) -> bool {
        match self {
            Source::DebianReferenceZh => paragraph.chars().count() >= 40,
            _ => paragraph.split_whitespace().count() >= 20,
        }
    }
}

/// The text source is not installed.
#[derive(Debug)]
pub struct CorpusError {
    /// The missing package.
    pub package: &'static str,
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the Debian package {} is not installed (run scripts/quality-deps.sh): it provides the labelled web's text",
            self.package
        )
    }
}

impl std::error::Error for CorpusError {}

/// Articles of 6 to 9 real paragraphs each, in a fixed order.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Where the text came from.
    pub source: Source,
    /// The articles.
    pub articles: Vec<Article>,
}

impl Corpus {
    /// Reads up to `max_articles` articles from `source`.
    pub fn load(source: Source, max_articles: usize) -> Result<Corpus, CorpusError> {
        let files = source.files();
        if files.is_empty() {
            return Err(CorpusError {
                package: source.package(),
            });
        }
        let mut articles = Vec::new();
        // Documentation repeats itself (shared option lists, notes, licence text); a paragraph
        // used twice would make two "distinct" articles near-duplicates in truth. Keep each
        // paragraph, and each long sentence, once.
        let mut seen_paragraphs = std::collections::HashSet::new();
        let mut seen_sentences = std::collections::HashSet::new();
        'files: for file in files {
            let Ok(html) = std::fs::read_to_string(&file) else {
                continue;
            };
            let doc = Document::parse(&html);
            let title = doc
                .first(Tag::Title)
                .map(|id| doc.subtree_text(id))
                .unwrap_or_else(|| name_of(&file));
            let paragraphs: Vec<String> = (0..doc.len() as u32)
                .filter(|&id| doc.node(id).tag == Some(Tag::P))
                .map(|id| doc.subtree_text(id))
                .filter(|p| source.long_enough(p))
                .filter(|p| seen_paragraphs.insert(p.to_lowercase()))
                .filter(|p| {
                    // Drop paragraphs that repeat a long sentence already used elsewhere.
                    let long: Vec<String> = p
                        .split(['.', '。', '!', '?'])
                        .map(|s| s.trim().to_lowercase())
                        .filter(|s| s.chars().count() > 40)
                        .collect();
                    let fresh = long.iter().all(|s| !seen_sentences.contains(s));
                    if fresh {
                        seen_sentences.extend(long);
                    }
                    fresh
                })
                .collect();
            for (part, chunk) in paragraphs.chunks(8).enumerate() {
                if chunk.len() < 6 {
                    continue;
                }
                articles.push(Article {
                    title: format!("{title} ({})", part + 1),
                    paragraphs: chunk.to_vec(),
                });
                if articles.len() == max_articles {
                    break 'files;
                }
            }
        }
        Ok(Corpus { source, articles })
    }
}

fn name_of(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
