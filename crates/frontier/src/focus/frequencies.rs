//! The crawl's own document frequencies, the IDF of a focused crawl's tf-idf vectors: a
//! count-min sketch of a fixed mebibyte ([`DocFrequencies`]).

use super::TermCounts;

/// Rows and columns of the document-frequency sketch: 4 x 65,536 counters of 4 bytes.
const SKETCH_ROWS: usize = 4;
const SKETCH_BITS: u32 = 16;

/// Document frequencies of the pages seen so far, as a count-min sketch with conservative
/// update: an estimate is never below the true count and, with the fixed 1 MiB of counters,
/// close to it for the terms that matter (the frequent ones are the ones it overestimates
/// least, relatively).
#[derive(Debug, Clone)]
pub struct DocFrequencies {
    counters: Vec<u32>,
    documents: u64,
}

impl Default for DocFrequencies {
    fn default() -> DocFrequencies {
        DocFrequencies {
            counters: vec![0; SKETCH_ROWS << SKETCH_BITS],
            documents: 0,
        }
    }
}

impl DocFrequencies {
    fn cells(hash: u64) -> [usize; SKETCH_ROWS] {
        const SEEDS: [u64; SKETCH_ROWS] = [
            0x9e37_79b9_7f4a_7c15,
            0xc2b2_ae3d_27d4_eb4f,
            0x1656_67b1_9e37_79f9,
            0x27d4_eb2f_1656_67c5,
        ];
        std::array::from_fn(|row| {
            let mixed = (hash ^ SEEDS[row]).wrapping_mul(0xff51_afd7_ed55_8ccd);
            (row << SKETCH_BITS) | (mixed >> (64 - SKETCH_BITS)) as usize
        })
    }

    /// Counts one more document with these terms.
    pub fn add(&mut self, terms: &TermCounts) {
        self.documents += 1;
        for (hash, _) in terms.iter() {
            let cells = DocFrequencies::cells(hash);
            let least = cells.iter().map(|c| self.counters[*c]).min().unwrap_or(0);
            for cell in cells {
                if self.counters[cell] == least {
                    self.counters[cell] = least.saturating_add(1);
                }
            }
        }
    }

    /// Documents counted.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// The (over-)estimated number of documents with the term.
    pub fn frequency(&self, hash: u64) -> u32 {
        DocFrequencies::cells(hash)
            .iter()
            .map(|c| self.counters[*c])
            .min()
            .unwrap_or(0)
    }

    /// The sketch as bytes, to keep with a job's state: `NCDF`, a format version (1), the
    /// document count, then the counters, all little-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.counters.len() * 4);
        out.extend_from_slice(b"NCDF");
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&self.documents.to_le_bytes());
        for c in &self.counters {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out
    }

    /// A sketch written by [`DocFrequencies::to_bytes`]; what is wrong with other bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<DocFrequencies, String> {
        let cells = SKETCH_ROWS << SKETCH_BITS;
        if bytes.len() != 16 + cells * 4 {
            return Err(format!(
                "document frequencies of {} bytes, not {}",
                bytes.len(),
                16 + cells * 4
            ));
        }
        if &bytes[..4] != b"NCDF" || bytes[4..8] != 1u32.to_le_bytes() {
            return Err("document frequencies: unknown format".into());
        }
        let documents = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
        let counters = bytes[16..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect();
        Ok(DocFrequencies {
            counters,
            documents,
        })
    }

    /// Smoothed inverse document frequency, `ln((1 + N) / (1 + df)) + 1`.
    pub fn idf(&self, hash: u64) -> f32 {
        let n = self.documents as f32;
        let df = (self.frequency(hash) as f32).min(n);
        ((1.0 + n) / (1.0 + df)).ln() + 1.0
    }
}
