//! Block compression of sorted tables (Manku et al. §3.2).
//!
//! Consecutive keys of a sorted table share their leading bits. Each 1024-byte block stores its
//! first key whole; every following key is stored as the Huffman-coded position h of the most
//! significant 1-bit of (key XOR previous key), followed by the h bits below it (bit h itself is
//! known to be 1, the bits above are the previous key's). The block's key is its last key, so a
//! probe binary-searches the block keys and decodes only the blocks its prefix range touches.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::ControlFlow;

use nearcrawl_fingerprint::Fingerprint;

use crate::layout::Layout;
use crate::{HammingIndex, IndexParams, Match};

const BLOCK_BYTES: usize = 1024;
const BLOCK_BITS: usize = BLOCK_BYTES * 8;
/// Reads and writes touch 16 bytes from a bit position; padding keeps them inside the buffer.
const PAD: usize = 16;
/// Symbol for "equal to the previous key" (h takes 0..=63).
const EQUAL: usize = 64;
const SYMBOLS: usize = 65;
const MAX_CODE_LEN: u32 = 30;

/// The permuted tables of an index in compressed form: a read-only, smaller copy that answers
/// the same queries. Payloads stay uncompressed, in table 0's order.
#[derive(Clone, Debug)]
pub struct CompressedTables {
    params: IndexParams,
    layouts: Vec<Layout>,
    tables: Vec<CompressedTable>,
    payloads: Vec<u64>,
}

/// Sizes of a compressed index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompressionStats {
    /// Stored fingerprints.
    pub len: usize,
    /// Tables.
    pub tables: usize,
    /// Bytes per fingerprint per table, uncompressed (a 64-bit key).
    pub raw_bytes_per_fingerprint_per_table: f64,
    /// Bytes per fingerprint per table, compressed (blocks plus block keys and offsets).
    pub compressed_bytes_per_fingerprint_per_table: f64,
}

#[derive(Clone, Debug)]
struct CompressedTable {
    code: Huffman,
    /// `BLOCK_BYTES` per block, then `PAD` zero bytes.
    blocks: Vec<u8>,
    /// The last key of every block.
    block_last: Vec<u64>,
    /// Index of every block's first key; one more entry holding the total.
    block_start: Vec<u32>,
}

impl CompressedTables {
    /// Compresses the tables of `index`.
    pub fn new(index: &HammingIndex) -> CompressedTables {
        let run = index.as_one_run();
        CompressedTables {
            params: index.params().clone(),
            layouts: index.layouts().to_vec(),
            tables: run
                .tables
                .iter()
                .map(|t| CompressedTable::new(&t.keys))
                .collect(),
            payloads: run.payloads.clone(),
        }
    }

    /// The design.
    pub fn params(&self) -> &IndexParams {
        &self.params
    }

    /// The sizes.
    pub fn stats(&self) -> CompressionStats {
        let len = self.payloads.len();
        let bytes: usize = self.tables.iter().map(CompressedTable::bytes).sum();
        CompressionStats {
            len,
            tables: self.tables.len(),
            raw_bytes_per_fingerprint_per_table: 8.0,
            compressed_bytes_per_fingerprint_per_table: bytes as f64
                / (len.max(1) * self.tables.len()) as f64,
        }
    }

    /// Every stored entry within distance k, each once.
    pub fn query(&self, fingerprint: Fingerprint) -> Vec<Match> {
        let mut out = Vec::new();
        let _ = self.search(fingerprint.bits(), true, &mut |m| {
            out.push(m);
            ControlFlow::Continue(())
        });
        out
    }

    /// Some stored entry within distance k, if there is one.
    pub fn first_match(&self, fingerprint: Fingerprint) -> Option<Match> {
        let mut found = None;
        let _ = self.search(fingerprint.bits(), false, &mut |m| {
            found = Some(m);
            ControlFlow::Break(())
        });
        found
    }

    fn search(
        &self,
        fp: u64,
        canonical: bool,
        visit: &mut impl FnMut(Match) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let k = self.params.k();
        let mut decoded = Vec::new();
        for (j, (layout, table)) in self.layouts.iter().zip(&self.tables).enumerate() {
            let query = layout.apply(fp);
            let low = u64::MAX.checked_shr(layout.prefix_bits).unwrap_or(0);
            let (lo, hi) = (query & !low, query | low);
            let mut block = table.block_last.partition_point(|&last| last < lo);
            let mut previous_key = None;
            while block < table.block_last.len()
                && (block == 0 || table.block_last[block - 1] <= hi)
            {
                table.decode(block, &mut decoded);
                let start = table.block_start[block] as usize;
                for (offset, &key) in decoded.iter().enumerate() {
                    let distance = (key ^ query).count_ones();
                    if key < lo || key > hi || distance > k {
                        continue;
                    }
                    if canonical && layout.earlier_table_agrees(key ^ query) {
                        continue;
                    }
                    let found = layout.invert(key);
                    let mut emit = |payload| {
                        visit(Match {
                            fingerprint: Fingerprint::new(found),
                            payload,
                            distance,
                        })
                    };
                    if j == 0 {
                        emit(self.payloads[start + offset])?;
                    } else if previous_key != Some(key) {
                        previous_key = Some(key);
                        for index in self.tables[0].equal_indices(self.layouts[0].apply(found)) {
                            emit(self.payloads[index])?;
                        }
                    }
                }
                block += 1;
            }
        }
        ControlFlow::Continue(())
    }
}

impl CompressedTable {
    fn new(keys: &[u64]) -> CompressedTable {
        let mut freq = [0u64; SYMBOLS];
        for pair in keys.windows(2) {
            freq[symbol(pair[0], pair[1])] += 1;
        }
        let code = Huffman::new(&freq);
        let mut blocks = Vec::new();
        let mut block_last = Vec::new();
        let mut block_start = Vec::new();
        let mut i = 0;
        while i < keys.len() {
            let base = blocks.len();
            blocks.resize(base + BLOCK_BYTES + PAD, 0);
            block_start.push(i as u32);
            let buf = &mut blocks[base..];
            let mut pos = 0;
            write_bits(buf, &mut pos, keys[i], 64);
            i += 1;
            while i < keys.len() {
                let sym = symbol(keys[i - 1], keys[i]);
                let (bits, len) = code.codes[sym];
                let low_bits = if sym == EQUAL { 0 } else { sym as u32 };
                if pos + (len + low_bits) as usize > BLOCK_BITS {
                    break;
                }
                write_bits(buf, &mut pos, bits, len);
                write_bits(buf, &mut pos, keys[i] & low_mask(low_bits), low_bits);
                i += 1;
            }
            block_last.push(keys[i - 1]);
            blocks.truncate(base + BLOCK_BYTES);
        }
        blocks.resize(blocks.len() + PAD, 0);
        block_start.push(keys.len() as u32);
        CompressedTable {
            code,
            blocks,
            block_last,
            block_start,
        }
    }

    fn bytes(&self) -> usize {
        self.blocks.len() + self.block_last.len() * 8 + self.block_start.len() * 4
    }

    fn decode(&self, block: usize, out: &mut Vec<u64>) {
        out.clear();
        let count = (self.block_start[block + 1] - self.block_start[block]) as usize;
        let buf = &self.blocks[block * BLOCK_BYTES..];
        let mut pos = 0;
        let mut key = read_bits(buf, &mut pos, 64);
        out.push(key);
        for _ in 1..count {
            let sym = self.code.decode(buf, &mut pos);
            if sym != EQUAL {
                let h = sym as u32;
                let low = read_bits(buf, &mut pos, h);
                key = (key & !low_mask(h + 1)) | 1 << h | low;
            }
            out.push(key);
        }
    }

    /// Indices of the entries equal to `key`.
    fn equal_indices(&self, key: u64) -> Vec<usize> {
        let mut out = Vec::new();
        let mut decoded = Vec::new();
        let mut block = self.block_last.partition_point(|&last| last < key);
        while block < self.block_last.len() {
            self.decode(block, &mut decoded);
            let start = self.block_start[block] as usize;
            out.extend(
                decoded
                    .iter()
                    .enumerate()
                    .filter(|(_, k)| **k == key)
                    .map(|(i, _)| start + i),
            );
            if self.block_last[block] != key {
                break;
            }
            block += 1;
        }
        out
    }
}

fn symbol(previous: u64, key: u64) -> usize {
    let diff = previous ^ key;
    if diff == 0 {
        EQUAL
    } else {
        63 - diff.leading_zeros() as usize
    }
}

fn low_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn write_bits(buf: &mut [u8], pos: &mut usize, value: u64, bits: u32) {
    if bits == 0 {
        return;
    }
    let (byte, offset) = (*pos / 8, (*pos % 8) as u32);
    let mut word = [0u8; 16];
    word.copy_from_slice(&buf[byte..byte + 16]);
    let merged =
        u128::from_be_bytes(word) | (u128::from(value & low_mask(bits)) << (128 - offset - bits));
    buf[byte..byte + 16].copy_from_slice(&merged.to_be_bytes());
    *pos += bits as usize;
}

fn read_bits(buf: &[u8], pos: &mut usize, bits: u32) -> u64 {
    if bits == 0 {
        return 0;
    }
    let (byte, offset) = (*pos / 8, (*pos % 8) as u32);
    let mut word = [0u8; 16];
    word.copy_from_slice(&buf[byte..byte + 16]);
    *pos += bits as usize;
    ((u128::from_be_bytes(word) << offset) >> (128 - bits)) as u64
}

/// A canonical Huffman code over the 65 symbols.
#[derive(Clone, Debug)]
struct Huffman {
    /// (code, length) per symbol; length 0 for unused symbols.
    codes: [(u64, u32); SYMBOLS],
    /// Per length: the first code, how many codes, and where their symbols start in `sorted`.
    first: [u64; MAX_CODE_LEN as usize + 1],
    count: [u64; MAX_CODE_LEN as usize + 1],
    offset: [usize; MAX_CODE_LEN as usize + 1],
    sorted: Vec<usize>,
}

impl Huffman {
    fn new(freq: &[u64; SYMBOLS]) -> Huffman {
        let mut freq = *freq;
        let lengths = loop {
            let lengths = code_lengths(&freq);
            if lengths.iter().all(|&l| l <= MAX_CODE_LEN) {
                break lengths;
            }
            // Flatten the distribution until the longest code fits.
            freq.iter_mut()
                .filter(|f| **f > 0)
                .for_each(|f| *f = *f / 2 + 1);
        };
        let mut sorted: Vec<usize> = (0..SYMBOLS).filter(|&s| lengths[s] > 0).collect();
        sorted.sort_by_key(|&s| (lengths[s], s));
        let mut codes = [(0u64, 0u32); SYMBOLS];
        let mut first = [0u64; MAX_CODE_LEN as usize + 1];
        let mut count = [0u64; MAX_CODE_LEN as usize + 1];
        let mut offset = [0usize; MAX_CODE_LEN as usize + 1];
        let mut code = 0u64;
        let mut previous_len = 0;
        for (i, &s) in sorted.iter().enumerate() {
            let len = lengths[s];
            code <<= len - previous_len;
            if count[len as usize] == 0 {
                first[len as usize] = code;
                offset[len as usize] = i;
            }
            count[len as usize] += 1;
            codes[s] = (code, len);
            code += 1;
            previous_len = len;
        }
        Huffman {
            codes,
            first,
            count,
            offset,
            sorted,
        }
    }

    fn decode(&self, buf: &[u8], pos: &mut usize) -> usize {
        let mut code = 0u64;
        for len in 1..=MAX_CODE_LEN as usize {
            code = code << 1 | read_bits(buf, pos, 1);
            if self.count[len] > 0
                && code >= self.first[len]
                && code - self.first[len] < self.count[len]
            {
                return self.sorted[self.offset[len] + (code - self.first[len]) as usize];
            }
        }
        unreachable!("the encoder only writes codes of this table")
    }
}

/// Huffman code lengths; a lone used symbol gets length 1.
fn code_lengths(freq: &[u64; SYMBOLS]) -> [u32; SYMBOLS] {
    let mut lengths = [0u32; SYMBOLS];
    let mut heap: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    // Nodes 0..SYMBOLS are leaves; later ones are internal, with their children recorded.
    let mut parent: Vec<usize> = vec![usize::MAX; SYMBOLS];
    for (s, &f) in freq.iter().enumerate().filter(|(_, f)| **f > 0) {
        heap.push(Reverse((f, s)));
    }
    if heap.len() == 1 {
        if let Some(Reverse((_, s))) = heap.pop() {
            lengths[s] = 1;
        }
        return lengths;
    }
    while heap.len() > 1 {
        let (Some(Reverse((fa, a))), Some(Reverse((fb, b)))) = (heap.pop(), heap.pop()) else {
            break;
        };
        let node = parent.len();
        parent.push(usize::MAX);
        parent[a] = node;
        parent[b] = node;
        heap.push(Reverse((fa + fb, node)));
    }
    for (s, length) in lengths.iter_mut().enumerate() {
        let mut node = s;
        while parent[node] != usize::MAX {
            *length += 1;
            node = parent[node];
        }
    }
    lengths
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn blocks_decode_to_the_original_keys(mut keys in prop::collection::vec(any::<u64>(), 1..3000), dense in any::<bool>()) {
            if dense {
                keys.iter_mut().for_each(|k| *k &= 0xFFFF);
            }
            keys.sort_unstable();
            let table = CompressedTable::new(&keys);
            let mut all = Vec::new();
            let mut decoded = Vec::new();
            for block in 0..table.block_last.len() {
                table.decode(block, &mut decoded);
                prop_assert_eq!(decoded.last().copied(), Some(table.block_last[block]));
                all.extend_from_slice(&decoded);
            }
            prop_assert_eq!(all, keys);
        }
    }
}
