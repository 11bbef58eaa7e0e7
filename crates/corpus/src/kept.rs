//! The pages kept so far (originals), on disk: an append-only file of each kept page's
//! simhash, exact key, site and verification text, with the maps the dedup stage asks in
//! memory (exact key, simhash, where each text is, the sentence-fingerprint index). Texts are
//! read back only to verify against them (the stage caches the latest).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use nearcrawl_dedup::{Admission, Originals, stage_sentence_cutoff};
use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_text::ExactKey;
use nearcrawl_verify::CandidateIndex;

/// One kept page as the file holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct KeptPage {
    /// Its sequence number in the run.
    pub seq: u64,
    /// Its simhash.
    pub simhash: Fingerprint,
    /// Its exact-duplicate key.
    pub exact: ExactKey,
    /// Its site (the sentence index counts sites).
    pub site: String,
    /// Its verification text (empty without verification).
    pub text: String,
}

/// Kept pages: the file and the maps.
pub struct KeptPages {
    path: PathBuf,
    writer: BufWriter<File>,
    reader: File,
    /// Bytes written (the file's logical length).
    len: u64,
    exact: HashMap<u128, u64>,
    simhash: HashMap<u64, Fingerprint>,
    /// Where each kept text is: offset and length.
    texts: HashMap<u64, (u64, u32)>,
    /// Texts kept since the buffer was last written out.
    pending: HashMap<u64, String>,
    /// Kept pages by sentence fingerprint.
    sentences: CandidateIndex,
}

impl KeptPages {
    /// Opens `path`, cut to `len` bytes (what the last checkpoint covered), calling `each`
    /// with every page it holds.
    pub fn open(path: &Path, len: u64, mut each: impl FnMut(&KeptPage)) -> io::Result<KeptPages> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?;
        file.set_len(len)?;
        let mut kept = KeptPages {
            path: path.to_path_buf(),
            writer: BufWriter::with_capacity(1 << 20, file.try_clone()?),
            reader: file.try_clone()?,
            len: 0,
            exact: HashMap::new(),
            simhash: HashMap::new(),
            texts: HashMap::new(),
            pending: HashMap::new(),
            sentences: CandidateIndex::new(stage_sentence_cutoff()),
        };
        let mut input = BufReader::with_capacity(1 << 20, file);
        while kept.len < len {
            let page = read_page(&mut input).map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!("{}: offset {}: {e}", path.display(), kept.len),
                )
            })?;
            let size = page_size(&page);
            kept.remember(&page, kept.len);
            kept.len += size;
            each(&page);
        }
        use std::io::Seek;
        kept.writer.seek(io::SeekFrom::Start(len))?;
        Ok(kept)
    }

    /// Appends an admitted page (one with a fingerprint; others are not originals).
    pub fn keep(&mut self, admission: &Admission, site: &str) -> io::Result<()> {
        let Some((simhash, exact)) = admission.fingerprint else {
            return Ok(());
        };
        let page = KeptPage {
            seq: admission.seq,
            simhash,
            exact,
            site: site.to_owned(),
            text: admission.text.clone().unwrap_or_default(),
        };
        write_page(&mut self.writer, &page)?;
        let at = self.len;
        self.len += page_size(&page);
        self.remember(&page, at);
        self.pending.insert(page.seq, page.text);
        if let Some(sentences) = &admission.sentences {
            self.index_sentences(admission.seq, &sentences.site, &sentences.fingerprints);
        }
        Ok(())
    }

    /// Indexes a kept page's sentence fingerprints (on resume, those of the pages
    /// [`KeptPages::open`] read back).
    pub fn index_sentences(&mut self, seq: u64, site: &str, fingerprints: &[u128]) {
        self.sentences.insert(seq, site, fingerprints);
    }

    /// Writes out what is buffered, so texts are read back from the file.
    pub fn write_out(&mut self) -> io::Result<()> {
        self.writer.flush()?;
        self.pending.clear();
        Ok(())
    }

    /// Writes out what is buffered and makes it durable; returns the file's length (for the
    /// checkpoint).
    pub fn sync(&mut self) -> io::Result<u64> {
        self.write_out()?;
        self.writer.get_ref().sync_data()?;
        Ok(self.len)
    }

    /// Kept pages.
    pub fn len(&self) -> usize {
        self.simhash.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.simhash.is_empty()
    }

    fn remember(&mut self, page: &KeptPage, at: u64) {
        self.exact.entry(page.exact.0).or_insert(page.seq);
        self.simhash.insert(page.seq, page.simhash);
        let text_at = at + page_size(page) - page.text.len() as u64;
        self.texts
            .insert(page.seq, (text_at, page.text.len() as u32));
    }
}

/// Header: seq, simhash, exact key, site length, text length.
const HEADER: u64 = 8 + 8 + 16 + 2 + 4;

fn page_size(page: &KeptPage) -> u64 {
    HEADER + page.site.len() as u64 + page.text.len() as u64
}

fn write_page(out: &mut impl Write, page: &KeptPage) -> io::Result<()> {
    let site = &page.site.as_bytes()[..page.site.len().min(u16::MAX as usize)];
    out.write_all(&page.seq.to_le_bytes())?;
    out.write_all(&page.simhash.bits().to_le_bytes())?;
    out.write_all(&page.exact.0.to_le_bytes())?;
    out.write_all(&(site.len() as u16).to_le_bytes())?;
    out.write_all(&(page.text.len() as u32).to_le_bytes())?;
    out.write_all(site)?;
    out.write_all(page.text.as_bytes())
}

fn read_page(input: &mut impl Read) -> io::Result<KeptPage> {
    let mut header = [0u8; HEADER as usize];
    input.read_exact(&mut header)?;
    let u64_at = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().expect("8 bytes"));
    let seq = u64_at(0);
    let simhash = Fingerprint::new(u64_at(8));
    let exact = ExactKey(u128::from_le_bytes(
        header[16..32].try_into().expect("16 bytes"),
    ));
    let site_len = u16::from_le_bytes([header[32], header[33]]) as usize;
    let text_len = u32::from_le_bytes(header[34..38].try_into().expect("4 bytes")) as usize;
    let mut site = vec![0u8; site_len];
    input.read_exact(&mut site)?;
    let mut text = vec![0u8; text_len];
    input.read_exact(&mut text)?;
    let invalid =
        |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("{what} is not UTF-8"));
    Ok(KeptPage {
        seq,
        simhash,
        exact,
        site: String::from_utf8(site).map_err(|_| invalid("a site"))?,
        text: String::from_utf8(text).map_err(|_| invalid("a text"))?,
    })
}

impl Originals for KeptPages {
    type Error = io::Error;

    fn text(&self, seq: u64) -> io::Result<Option<String>> {
        if let Some(text) = self.pending.get(&seq) {
            return Ok(Some(text.clone()));
        }
        let Some(&(at, len)) = self.texts.get(&seq) else {
            return Ok(None);
        };
        let mut text = vec![0u8; len as usize];
        self.reader.read_exact_at(&mut text, at).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("{}: offset {at}: {e}", self.path.display()),
            )
        })?;
        String::from_utf8(text)
            .map(Some)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a kept text is not UTF-8"))
    }

    fn exact(&self, key: ExactKey) -> io::Result<Option<u64>> {
        Ok(self.exact.get(&key.0).copied())
    }

    fn simhash(&self, seq: u64) -> io::Result<Option<Fingerprint>> {
        Ok(self.simhash.get(&seq).copied())
    }

    fn link_keys(&self, _seq: u64) -> io::Result<Option<Vec<u64>>> {
        // A corpus has no links to follow.
        Ok(None)
    }

    fn sentence_candidates(&self, fingerprints: &[u128]) -> io::Result<Vec<(u64, usize)>> {
        Ok(self.sentences.candidates(fingerprints))
    }
}
