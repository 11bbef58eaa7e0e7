//! Inverse document frequencies: learned from a corpus (a crawl's own pages), or jieba's
//! built-in table for Chinese words.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufWriter, Write};
use std::path::Path;
use std::sync::{OnceLock, RwLock};

use jieba_rs::{KeywordExtract, KeywordExtractConfig, TfIdf};

use crate::error::TextError;
use crate::tokenize::jieba;

/// First line of an IDF file: the format name and version, then the document count.
const HEADER: &str = "nearcrawl-idf 1";

/// Document frequencies learned from a corpus.
///
/// `idf(t) = ln((1 + N) / (1 + df(t))) + 1`, the smoothed form: a term in every document
/// weighs 1, an unseen term weighs `ln(1 + N) + 1`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IdfTable {
    documents: u64,
    frequencies: HashMap<String, u32>,
}

impl IdfTable {
    /// An empty table.
    pub fn new() -> IdfTable {
        IdfTable::default()
    }

    /// Counts one document's terms (each distinct term once).
    pub fn add_document<'a>(&mut self, terms: impl IntoIterator<Item = &'a str>) {
        self.documents += 1;
        let distinct: HashSet<&str> = terms.into_iter().collect();
        for term in distinct {
            let count = self.frequencies.entry(term.to_owned()).or_insert(0);
            *count = count.saturating_add(1);
        }
    }

    /// Distinct terms counted.
    pub fn terms(&self) -> usize {
        self.frequencies.len()
    }

    /// Documents counted.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// Documents that contained `term`.
    pub fn document_frequency(&self, term: &str) -> u32 {
        self.frequencies.get(term).copied().unwrap_or(0)
    }

    /// The smoothed inverse document frequency of `term`.
    pub fn idf(&self, term: &str) -> f32 {
        let n = self.documents as f32;
        ((1.0 + n) / (1.0 + self.document_frequency(term) as f32)).ln() + 1.0
    }

    /// Writes the table: a header line `nearcrawl-idf 1<TAB>documents`, then one
    /// `df<TAB>term` line per term, most frequent first. The file is replaced atomically.
    pub fn save(&self, path: &Path) -> Result<(), TextError> {
        let io = |source| TextError::Io {
            path: path.to_owned(),
            source,
        };
        let tmp = path.with_extension("tmp");
        let file = std::fs::File::create(&tmp).map_err(io)?;
        let mut out = BufWriter::new(file);
        let mut rows: Vec<(&String, &u32)> = self.frequencies.iter().collect();
        rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        writeln!(out, "{HEADER}\t{}", self.documents).map_err(io)?;
        for (term, df) in rows {
            writeln!(out, "{df}\t{term}").map_err(io)?;
        }
        out.into_inner()
            .map_err(|e| io(e.into_error()))?
            .sync_all()
            .map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Reads a table written by [`IdfTable::save`]; a malformed line is an error naming the
    /// file and line.
    pub fn load(path: &Path) -> Result<IdfTable, TextError> {
        let file = std::fs::File::open(path).map_err(|source| TextError::Io {
            path: path.to_owned(),
            source,
        })?;
        let parse = |line: usize, message: String| TextError::Parse {
            path: path.to_owned(),
            line,
            message,
        };
        let mut table = IdfTable::new();
        let mut saw_header = false;
        for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
            let number = index + 1;
            let line = line.map_err(|source| TextError::Io {
                path: path.to_owned(),
                source,
            })?;
            if index == 0 {
                let documents = line
                    .strip_prefix(HEADER)
                    .and_then(|rest| rest.strip_prefix('\t'))
                    .ok_or_else(|| {
                        parse(
                            number,
                            format!("expected the header `{HEADER}<TAB>documents`"),
                        )
                    })?;
                table.documents = documents
                    .parse()
                    .map_err(|_| parse(number, format!("bad document count `{documents}`")))?;
                saw_header = true;
                continue;
            }
            let (df, term) = line
                .split_once('\t')
                .ok_or_else(|| parse(number, "expected `df<TAB>term`".into()))?;
            let df: u32 = df
                .parse()
                .map_err(|_| parse(number, format!("bad document frequency `{df}`")))?;
            if u64::from(df) > table.documents {
                return Err(parse(
                    number,
                    format!("document frequency {df} exceeds the document count"),
                ));
            }
            table.frequencies.insert(term.to_owned(), df);
        }
        if !saw_header {
            return Err(parse(1, "empty file".into()));
        }
        Ok(table)
    }
}

/// jieba-rs's built-in IDF table for Chinese words (the one its TF-IDF keyword extractor
/// uses). Loaded once per process on first use; lookups are cached.
pub struct JiebaIdf {
    extractor: TfIdf,
    cache: RwLock<HashMap<String, f32>>,
}

impl JiebaIdf {
    /// The shared instance.
    pub fn get() -> &'static JiebaIdf {
        static INSTANCE: OnceLock<JiebaIdf> = OnceLock::new();
        INSTANCE.get_or_init(|| {
            let mut extractor = TfIdf::default();
            // Score every word, single characters and stop words included: the caller filters.
            let mut builder = KeywordExtractConfig::builder().min_keyword_length(1);
            for word in KeywordExtractConfig::default().stop_words() {
                builder = builder.remove_stop_word(word);
            }
            *extractor.config_mut() = builder.build();
            JiebaIdf {
                extractor,
                cache: RwLock::new(HashMap::new()),
            }
        })
    }

    /// The IDF of a Chinese word (jieba's median IDF for words not in its table).
    pub fn idf(&self, word: &str) -> f32 {
        if let Some(idf) = self
            .cache
            .read()
            .ok()
            .and_then(|cache| cache.get(word).copied())
        {
            return idf;
        }
        // A one-word text has tf = 1, so its TF-IDF weight is the word's IDF.
        let keywords = self
            .extractor
            .extract_keywords(jieba(), word, 1, Vec::new());
        let idf = keywords
            .first()
            .filter(|k| k.keyword == word)
            .map_or(self.median(), |k| k.weight as f32);
        if let Ok(mut cache) = self.cache.write() {
            cache.insert(word.to_owned(), idf);
        }
        idf
    }

    fn median(&self) -> f32 {
        static MEDIAN: OnceLock<f32> = OnceLock::new();
        // A string jieba cuts as one unknown word gets the median IDF.
        *MEDIAN.get_or_init(|| {
            let keywords = self
                .extractor
                .extract_keywords(jieba(), "zzqxjv", 1, Vec::new());
            keywords.first().map_or(10.0, |k| k.weight as f32)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learned_idf_orders_terms_by_rarity_and_round_trips() {
        let mut table = IdfTable::new();
        table.add_document(["the", "river", "the"]);
        table.add_document(["the", "valley"]);
        table.add_document(["the", "river", "glacier"]);
        assert_eq!(table.documents(), 3);
        assert_eq!(table.document_frequency("the"), 3);
        assert_eq!(table.idf("the"), 1.0);
        assert!(table.idf("glacier") > table.idf("river") && table.idf("river") > table.idf("the"));
        assert!(table.idf("unseen") > table.idf("glacier"));

        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("idf.tsv");
        table.save(&path).expect("save");
        assert_eq!(IdfTable::load(&path).expect("load"), table);
    }

    #[test]
    fn bad_files_name_the_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("idf.tsv");
        let cases = [
            ("", ":1: empty file"),
            ("not a header\n", ":1: expected the header"),
            ("nearcrawl-idf 1\tmany\n", ":1: bad document count"),
            (
                "nearcrawl-idf 1\t2\n1\tok\nnotab\n",
                ":3: expected `df<TAB>term`",
            ),
            (
                "nearcrawl-idf 1\t2\nx\tterm\n",
                ":2: bad document frequency",
            ),
            (
                "nearcrawl-idf 1\t2\n3\tterm\n",
                ":2: document frequency 3 exceeds",
            ),
        ];
        for (content, want) in cases {
            std::fs::write(&path, content).expect("write");
            let message = IdfTable::load(&path).expect_err(content).to_string();
            assert!(
                message.contains(want) && message.contains("idf.tsv"),
                "{message}"
            );
        }
        let missing = IdfTable::load(&dir.path().join("missing")).expect_err("missing file");
        assert!(missing.to_string().contains("missing"));
    }

    #[test]
    fn jieba_idf_separates_common_and_rare_words() {
        let idf = JiebaIdf::get();
        let common = idf.idf("中国");
        let rare = idf.idf("劳动防护");
        assert!((rare - 13.900_678).abs() < 1e-3, "{rare}");
        assert!(common < rare, "{common} < {rare}");
        assert_eq!(idf.idf("劳动防护"), rare, "cached");
    }
}
