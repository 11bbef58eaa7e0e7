//! The inputs read as one stream of items, in batches, and the analysing stage: extraction
//! on every core, the template model shown the pages in corpus order, each page's template
//! decided once the model has seen the items after it, then the pages' own text analysed on
//! every core; the template log that replays the model on resume.

use std::io;
use std::path::Path;

use nearcrawl_dedup::{Analyzer, Extracted, PageAnalysis, analyze_marked, block_keys};
use nearcrawl_extract::{BlockKey, TemplateModel};
use rayon::prelude::*;
use url::Url;

use crate::input::{Content, Cursor, Document, InputReader, Item, JsonlFields, Revisit};

use super::{CorpusError, InputState, io_error};

/// A batch read and analysed, waiting to be judged.
pub(super) struct Prepared {
    pub(super) entries: Vec<Entry>,
    /// Records passed over as no pages after the last entry (the corpus's end).
    pub(super) trailing_skipped: u64,
    /// The corpus ends with it.
    pub(super) last: bool,
}

/// An item to judge, with what it takes to resume after it.
pub(super) struct Entry {
    pub(super) input: usize,
    /// Records passed over as no pages just before it.
    pub(super) skipped_before: u64,
    /// Where reading goes on after it.
    pub(super) after: (usize, Cursor),
    pub(super) kind: EntryKind,
}

pub(super) enum EntryKind {
    Page {
        doc: Box<Document>,
        host: String,
        /// Its blocks' keys, when it has blocks: the template log's observation.
        keys: Option<Vec<BlockKey>>,
        analysis: Box<PageAnalysis>,
    },
    Revisit(Box<Revisit>),
    Bad {
        at: Cursor,
        message: String,
    },
}

/// An item read, tagged with its input and what it takes to resume after it.
pub(super) struct Read {
    pub(super) input: usize,
    pub(super) item: Item,
    pub(super) skipped_before: u64,
    pub(super) after: (usize, Cursor),
}

/// Items read together.
pub(super) struct Batch {
    pub(super) items: Vec<Read>,
    /// Records passed over as no pages after the last item (the corpus's end).
    pub(super) trailing_skipped: u64,
    /// The corpus ends with them.
    pub(super) last: bool,
}

/// A document extracted: its host, its blocks and their keys.
pub(super) struct ExtractedPage {
    pub(super) host: String,
    pub(super) page: Extracted,
    pub(super) keys: Vec<BlockKey>,
}

/// An item read and extracted, waiting for the template model to see the pages after it.
pub(super) struct Waiting {
    pub(super) read: Read,
    pub(super) page: Option<ExtractedPage>,
}

/// Items the template model sees after a page before the page's template is decided, by
/// default: the blocks repeated over a site's pages are known as its template from the site's
/// first pages on, whatever the batch size.
pub const TEMPLATE_LOOKAHEAD: usize = 512;

/// Default [`CorpusConfig::batch`]: large enough that the pool's threads seldom wait for
/// each other at a batch's end (256 took 9 % less wall time than 64 over the five real webs,
/// for 40 MB more peak memory: docs/BENCHMARKS.md).
pub const DEFAULT_BATCH: usize = 256;

/// The inputs as one stream of items.
pub(super) struct Reading<'a> {
    pub(super) inputs: &'a [InputState],
    pub(super) fields: &'a JsonlFields,
    pub(super) input: usize,
    pub(super) reader: Option<InputReader>,
    pub(super) cursor: Cursor,
    /// Records passed over since the last item.
    pub(super) skipped: u64,
}

impl Reading<'_> {
    /// Up to `n` items (pages, revisits, bad records; skipped records counted), tagged with
    /// their input.
    pub(super) fn read(&mut self, n: usize) -> Result<Batch, CorpusError> {
        let mut items = Vec::with_capacity(n);
        while items.len() < n {
            let Some(input) = self.inputs.get(self.input) else {
                return Ok(Batch {
                    items,
                    trailing_skipped: std::mem::take(&mut self.skipped),
                    last: true,
                });
            };
            let reader = match &mut self.reader {
                Some(reader) => reader,
                None => self.reader.insert(
                    InputReader::open(&input.path, input.format, self.fields, self.cursor)
                        .map_err(io_error(&input.path))?,
                ),
            };
            match reader.next_item().map_err(io_error(&input.path))? {
                Some(Item::Skipped) => self.skipped += 1,
                Some(item) => items.push(Read {
                    input: self.input,
                    item,
                    skipped_before: std::mem::take(&mut self.skipped),
                    after: (self.input, reader.resume_point()),
                }),
                None => {
                    self.reader = None;
                    self.input += 1;
                    self.cursor = Cursor::default();
                }
            }
        }
        Ok(Batch {
            items,
            trailing_skipped: 0,
            last: false,
        })
    }
}

/// The URL a document without one is analysed under.
pub(super) fn no_url() -> Url {
    Url::parse("http://corpus.invalid/").expect("a valid URL")
}

/// The analysing stage: extraction on every core, the template model shown the pages in
/// corpus order, each page's template decided once the model has seen the items after it
/// ([`CorpusConfig::template_lookahead`]), then the pages' own text analysed on every core.
pub(super) struct Analysis<'a> {
    pub(super) analyzer: &'a Analyzer,
    pub(super) lookahead: usize,
    pub(super) templates: TemplateModel,
    pub(super) window: std::collections::VecDeque<Waiting>,
}

impl Analysis<'_> {
    /// Takes a batch in; hands `send` the items whose template is decided, analysed, in
    /// chunks of at most `chunk` (the judge starts on one while the next is analysed: the
    /// corpus's end decides a whole window at once). Stops, and says `false`, when `send` says
    /// the judge is gone.
    pub(super) fn prepare(
        &mut self,
        batch: Batch,
        chunk: usize,
        mut send: impl FnMut(Prepared) -> bool,
    ) -> bool {
        let analyzer = self.analyzer;
        let fallback = no_url();
        let extracted: Vec<Waiting> = batch
            .items
            .into_par_iter()
            .map(|mut read| {
                let page = match &mut read.item {
                    Item::Document(doc) => {
                        let url = doc.url.as_ref().unwrap_or(&fallback);
                        let host = doc
                            .url
                            .as_ref()
                            .and_then(|u| u.host_str())
                            .unwrap_or_default()
                            .to_owned();
                        // The content is read once: the body is dropped here (items waiting
                        // hold their blocks, not their bodies too).
                        let extracted = match &mut doc.content {
                            Content::Body {
                                bytes,
                                content_type,
                            } => {
                                let page =
                                    analyzer.extract_body(bytes, content_type.as_deref(), url);
                                *bytes = Vec::new();
                                page
                            }
                            Content::Text(text) => Extracted::plain(std::mem::take(text)),
                        };
                        // Han text ahead: jieba's dictionary loads while the window fills.
                        nearcrawl_text::preload_jieba_for(&extracted.text);
                        let keys = block_keys(&extracted);
                        Some(ExtractedPage {
                            host,
                            page: extracted,
                            keys,
                        })
                    }
                    _ => None,
                };
                Waiting { read, page }
            })
            .collect();
        let mut ready = Vec::new();
        for waiting in extracted {
            if let Some(page) = &waiting.page
                && page.page.extraction.is_some()
            {
                self.templates.observe_keys(&page.host, &page.keys);
            }
            self.window.push_back(waiting);
            if self.window.len() > self.lookahead {
                ready.extend(self.decide(1));
            }
        }
        if batch.last {
            ready.extend(self.decide(self.window.len()));
        }
        let chunk = chunk.max(1);
        let chunks = ready.len().div_ceil(chunk).max(1);
        let mut ready = ready.into_iter();
        for n in 0..chunks {
            let last_chunk = n + 1 == chunks;
            let entries = analyze_entries(analyzer, ready.by_ref().take(chunk).collect());
            let prepared = Prepared {
                entries,
                trailing_skipped: if last_chunk {
                    batch.trailing_skipped
                } else {
                    0
                },
                last: last_chunk && batch.last,
            };
            if !send(prepared) {
                return false;
            }
        }
        true
    }

    /// The first `n` items waiting, each page's template marks decided by the model as it
    /// stands.
    pub(super) fn decide(&mut self, n: usize) -> Vec<(Waiting, Vec<bool>)> {
        self.window
            .drain(..n)
            .map(|waiting| {
                let marks = match &waiting.page {
                    Some(page) => page
                        .keys
                        .iter()
                        .map(|&key| self.templates.is_template_key(&page.host, key))
                        .collect(),
                    None => Vec::new(),
                };
                (waiting, marks)
            })
            .collect()
    }
}

/// Items whose template is decided, analysed on every core, in order.
pub(super) fn analyze_entries(analyzer: &Analyzer, ready: Vec<(Waiting, Vec<bool>)>) -> Vec<Entry> {
    ready
        .into_par_iter()
        .map(|(waiting, marks)| {
            let Read {
                input,
                item,
                skipped_before,
                after,
            } = waiting.read;
            let kind = match (item, waiting.page) {
                (Item::Document(doc), Some(page)) => {
                    let blocks = page.page.extraction.is_some();
                    let analysis = analyze_marked(analyzer, page.page, &marks);
                    EntryKind::Page {
                        doc,
                        host: page.host,
                        keys: blocks.then_some(page.keys),
                        analysis: Box::new(analysis),
                    }
                }
                (Item::Revisit(revisit), _) => EntryKind::Revisit(revisit),
                (Item::Bad { at, message }, _) => EntryKind::Bad { at, message },
                (Item::Document(doc), None) => EntryKind::Bad {
                    at: doc.at,
                    message: "not analysed".into(),
                },
                (Item::Skipped, _) => unreachable!("skipped items are not batched"),
            };
            Entry {
                input,
                skipped_before,
                after,
                kind,
            }
        })
        .collect()
}

/// One observation in the template log: host length, host, key count, keys.
pub(super) fn log_observation(log: &mut Vec<u8>, host: &str, keys: &[BlockKey]) {
    let host = &host.as_bytes()[..host.len().min(u16::MAX as usize)];
    log.extend_from_slice(&(host.len() as u16).to_le_bytes());
    log.extend_from_slice(host);
    log.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    for key in keys {
        log.extend_from_slice(&key.to_bits().to_le_bytes());
    }
}

/// Replays a template log into `model`.
pub(super) fn replay_observations(
    path: &Path,
    len: u64,
    model: &mut TemplateModel,
) -> Result<(), CorpusError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound && len == 0 => return Ok(()),
        Err(e) => return Err(io_error(path)(e)),
    };
    let bad = |at: usize| CorpusError::State(format!("{}: offset {at}: damaged", path.display()));
    let len = usize::try_from(len).map_err(|_| bad(0))?;
    let mut data = bytes.get(..len).ok_or_else(|| bad(bytes.len()))?;
    let mut keys = Vec::new();
    while !data.is_empty() {
        let at = len - data.len();
        let take = |data: &mut &[u8], n: usize| -> Result<Vec<u8>, CorpusError> {
            let (head, rest) = data.split_at_checked(n).ok_or_else(|| bad(at))?;
            *data = rest;
            Ok(head.to_vec())
        };
        let host_len = u16::from_le_bytes(take(&mut data, 2)?.try_into().expect("2 bytes"));
        let host = String::from_utf8(take(&mut data, host_len as usize)?).map_err(|_| bad(at))?;
        let count = u32::from_le_bytes(take(&mut data, 4)?.try_into().expect("4 bytes"));
        let raw = take(&mut data, count as usize * 8)?;
        keys.clear();
        keys.extend(
            raw.chunks_exact(8)
                .map(|c| BlockKey::from_bits(u64::from_le_bytes(c.try_into().expect("8 bytes")))),
        );
        model.observe_keys(&host, &keys);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
