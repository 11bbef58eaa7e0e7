//! Gzip members (RFC 1952) for WARC records: a `.warc.gz` file holds each record as a gzip
//! member of its own, so a crawl writes three short members a page (request, response,
//! metadata), each of a few hundred bytes to a few kilobytes.
//!
//! zlib's fastest level (as zlib-rs gives it: one probe of a hash table, fixed Huffman codes)
//! is what such members need, but a zlib stream is reset for each member, and its reset
//! clears a 128 KiB hash table and a 64 KiB symbol buffer: 2 % of a text-rich crawl's CPU,
//! more than compressing a request record takes (docs/BENCHMARKS.md). [`Members`] deflates
//! the same way (RFC 1951: one block of fixed Huffman codes, matches of 4 to 258 bytes found
//! by one probe of a table of 4-byte hashes) with a table that is never cleared. An entry
//! holds the low 16 bits of a position; the distance it gives is taken only when it points
//! inside the current member's input and within deflate's window, and then its bytes are
//! compared like any candidate's, so an entry left by an earlier member costs a missed match
//! at worst, never a wrong one. Each member uses as much of the table as its length calls
//! for, swept into the cache first (a cold table cost what zlib's reset had). Input that
//! does not compress is written in stored blocks, at 5 bytes per 65,535 of overhead.
//!
//! ```
//! use std::io::Read;
//!
//! let mut members = nearcrawl_gzip::Members::new();
//! let mut file = Vec::new();
//! members.append(&[b"WARC/1.1\r\n", b"a record's text, a record's text\r\n"], &mut file);
//! members.append(&[b"another record"], &mut file);
//! let mut text = String::new();
//! flate2::read::MultiGzDecoder::new(&file[..]).read_to_string(&mut text).unwrap();
//! assert_eq!(text, "WARC/1.1\r\na record's text, a record's text\r\nanother record");
//! ```

/// Bits of a 4-byte hash, at most: a table of 8,192 positions of 16 bits (16 KiB, allocated
/// once). A member uses as much of it as its length calls for (a request record of 600
/// bytes: 1,024 positions), read through once before it starts: the table is cold by the time
/// the next record comes (the thread analysed a page meanwhile), and a probe of a cold line
/// costs more than a sweep over all of them, which the processor's prefetcher runs ahead of.
const HASH_BITS: u32 = 13;
/// The least a member uses.
const MIN_HASH_BITS: u32 = 8;
/// The window deflate allows a match to reach back.
const WINDOW: usize = 32 * 1024;
/// The shortest match taken (the bytes hashed).
const MIN_MATCH: usize = 4;
/// The longest match deflate codes.
const MAX_MATCH: usize = 258;
/// The most bytes a stored block holds.
const STORED_MAX: usize = 65_535;
/// Inputs from this size on are written stored: positions are kept in 32 bits.
const MAX_DEFLATED: usize = 1 << 31;

/// Writes gzip members, keeping its match table from one to the next (see the crate's doc).
pub struct Members {
    table: Box<[u16]>,
    /// The current member's input, its parts joined.
    input: Vec<u8>,
}

impl Default for Members {
    fn default() -> Self {
        Members::new()
    }
}

impl std::fmt::Debug for Members {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Members").finish_non_exhaustive()
    }
}

impl Members {
    /// A writer with its table allocated (and cleared, once).
    pub fn new() -> Members {
        Members {
            table: vec![0; 1 << HASH_BITS].into_boxed_slice(),
            input: Vec::new(),
        }
    }

    /// Appends to `out` one gzip member holding `parts` joined.
    pub fn append(&mut self, parts: &[&[u8]], out: &mut Vec<u8>) {
        let data: &[u8] = match parts {
            [one] => one,
            _ => {
                self.input.clear();
                for part in parts {
                    self.input.extend_from_slice(part);
                }
                &self.input
            }
        };
        // Header: magic, deflate, no flags, no mtime, no extra flags, OS unknown.
        out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        let start = out.len();
        if data.len() < MAX_DEFLATED {
            deflate_fixed(&mut self.table, data, out);
        }
        if data.len() >= MAX_DEFLATED || out.len() - start > stored_len(data.len()) {
            out.truncate(start);
            deflate_stored(data, out);
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(data);
        out.extend_from_slice(&crc.finalize().to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    }

    /// One gzip member holding `parts` joined.
    pub fn member(&mut self, parts: &[&[u8]]) -> Vec<u8> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut out = Vec::with_capacity(total - total / 4 + 64);
        self.append(parts, &mut out);
        out
    }
}

/// Bytes of `len` bytes in stored blocks.
fn stored_len(len: usize) -> usize {
    len + 5 * len.div_ceil(STORED_MAX).max(1)
}

/// `data` as stored blocks, the last one final (one empty block for no data).
fn deflate_stored(data: &[u8], out: &mut Vec<u8>) {
    let mut chunks = data.chunks(STORED_MAX).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
        return;
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
}

/// Bits written least significant first, as deflate packs them.
struct Bits<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    count: u32,
}

impl Bits<'_> {
    /// Writes the low `count` bits of `bits` (at most 32).
    #[inline(always)]
    fn put(&mut self, bits: u32, count: u32) {
        self.acc |= u64::from(bits) << self.count;
        self.count += count;
        if self.count >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.count -= 32;
        }
    }

    /// Writes what is left, padded to a byte.
    fn finish(self) {
        let bytes = self.count.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
    }
}

/// `code`'s low `len` bits in reverse order: Huffman codes are packed most significant bit
/// first.
const fn reverse(code: u32, len: u32) -> u32 {
    code.reverse_bits() >> (32 - len)
}

/// The fixed literal/length code of symbol `sym` (RFC 1951, 3.2.6), reversed, and its length.
const fn fixed_code(sym: u32) -> (u32, u32) {
    match sym {
        0..=143 => (reverse(0x30 + sym, 8), 8),
        144..=255 => (reverse(0x190 + sym - 144, 9), 9),
        256..=279 => (reverse(sym - 256, 7), 7),
        _ => (reverse(0xc0 + sym - 280, 8), 8),
    }
}

/// The codes of the literals and the end of block.
const LITERALS: [(u32, u32); 257] = {
    let mut table = [(0, 0); 257];
    let mut sym = 0;
    while sym < 257 {
        table[sym] = fixed_code(sym as u32);
        sym += 1;
    }
    table
};

/// The first length of each length symbol 257..=285, and its extra bits.
const LENGTH_BASE: [u32; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u32; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];

/// Each match length's code and extra bits together, and their count, by length - 3.
const LENGTHS: [(u32, u32); 256] = {
    let mut table = [(0, 0); 256];
    let mut i = 0;
    while i < 29 {
        let (code, len) = fixed_code(257 + i as u32);
        let last = if i + 1 < 29 { LENGTH_BASE[i + 1] } else { 259 };
        let mut length = LENGTH_BASE[i];
        // 258 has a symbol of its own (285), not 284's last extra value.
        while length < last && length <= 258 {
            let extra = length - LENGTH_BASE[i];
            table[(length - 3) as usize] = (code | (extra << len), len + LENGTH_EXTRA[i]);
            length += 1;
        }
        i += 1;
    }
    table
};

/// The first distance of each distance code 0..=29, and its extra bits.
const DISTANCE_BASE: [u32; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DISTANCE_EXTRA: [u32; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// The distance code of `distance - 1` below 256 (`[d]`), and of `(distance - 1) >> 7` from
/// there (`[256 + ((d) >> 7)]`), as zlib tabulates it.
const DISTANCE_CODE: [u8; 512] = {
    let mut table = [0u8; 512];
    let mut code = 0;
    while code < 30 {
        let mut d = DISTANCE_BASE[code] - 1;
        let end = DISTANCE_BASE[code] - 1 + (1 << DISTANCE_EXTRA[code]);
        while d < end {
            if d < 256 {
                table[d as usize] = code as u8;
            } else {
                table[256 + (d >> 7) as usize] = code as u8;
            }
            d += 1;
        }
        code += 1;
    }
    table
};

/// A match's distance code and extra bits together, and their count.
#[inline(always)]
fn distance_bits(distance: usize) -> (u32, u32) {
    let d = distance - 1;
    let code = if d < 256 {
        DISTANCE_CODE[d]
    } else {
        DISTANCE_CODE[256 + (d >> 7)]
    } as usize;
    let extra = distance as u32 - DISTANCE_BASE[code];
    (
        reverse(code as u32, 5) | (extra << 5),
        5 + DISTANCE_EXTRA[code],
    )
}

/// The four bytes at `at` (one load, one bounds check).
#[inline(always)]
fn read_u32(data: &[u8], at: usize) -> u32 {
    data.get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

#[inline(always)]
fn hash(word: u32, bits: u32) -> usize {
    (word.wrapping_mul(0x9e37_79b1) >> (32 - bits)) as usize
}

/// How many bytes at `a` and `b` (`a < b`) agree, up to `max`, from `MIN_MATCH` on (the first
/// four are known to).
#[inline(always)]
fn match_len(data: &[u8], a: usize, b: usize, max: usize) -> usize {
    let mut len = MIN_MATCH;
    while len + 8 <= max {
        let x = u64::from_le_bytes(data[a + len..a + len + 8].try_into().unwrap_or([0; 8]));
        let y = u64::from_le_bytes(data[b + len..b + len + 8].try_into().unwrap_or([0; 8]));
        let diff = x ^ y;
        if diff != 0 {
            return len + (diff.trailing_zeros() / 8) as usize;
        }
        len += 8;
    }
    while len < max && data[a + len] == data[b + len] {
        len += 1;
    }
    len
}

/// `data` as one final block of fixed Huffman codes, matches found by one probe of `table`
/// at each position not inside a match. The table holds the low 16 bits of positions: an
/// entry names the latest position before the current one with those bits, checked by its
/// bytes like any candidate.
fn deflate_fixed(table: &mut [u16], data: &[u8], out: &mut Vec<u8>) {
    // Text deflates to about two thirds of itself with fixed codes.
    out.reserve(data.len() - data.len() / 4 + 16);
    let bits_used = (usize::BITS - data.len().leading_zeros()).clamp(MIN_HASH_BITS, HASH_BITS);
    let table = &mut table[..1 << bits_used];
    let mask = table.len() - 1;
    // Brought into the cache a line after another (see HASH_BITS).
    std::hint::black_box(table.chunks(32).fold(0u16, |a, line| a ^ line[0]));
    let mut bits = Bits {
        out,
        acc: 0,
        count: 0,
    };
    // Final block, fixed codes.
    bits.put(0b011, 3);
    let mut pos = 0;
    while pos + MIN_MATCH <= data.len() {
        let word = read_u32(data, pos);
        let slot = &mut table[hash(word, bits_used) & mask];
        let distance = usize::from((pos as u16).wrapping_sub(*slot));
        *slot = pos as u16;
        if distance != 0
            && distance <= WINDOW
            && distance <= pos
            && read_u32(data, pos - distance) == word
        {
            let len = match_len(data, pos - distance, pos, MAX_MATCH.min(data.len() - pos));
            let (code, count) = LENGTHS[len - 3];
            let (distance, distance_count) = distance_bits(distance);
            bits.put(code, count);
            bits.put(distance, distance_count);
            pos += len;
        } else {
            let (code, count) = LITERALS[data[pos] as usize];
            bits.put(code, count);
            pos += 1;
        }
    }
    for &byte in &data[pos..] {
        let (code, count) = LITERALS[byte as usize];
        bits.put(code, count);
    }
    let (end, count) = LITERALS[256];
    bits.put(end, count);
    bits.finish();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Read;

    fn inflate(member: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(member)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    /// A text of `words` words drawn from a small vocabulary: it repeats, as pages do.
    fn text(seed: u64, words: usize) -> Vec<u8> {
        let vocabulary = [
            "the",
            "crawler",
            "page",
            "duplicate",
            "<a href=\"/p/",
            "\">",
            "</a>",
            "\r\n",
            "record",
            "WARC-Type: ",
            "of",
            "and",
            "é",
            "日本",
        ];
        let mut state = seed | 1;
        let mut out = Vec::new();
        for _ in 0..words {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.extend_from_slice(
                vocabulary[(state % vocabulary.len() as u64) as usize].as_bytes(),
            );
            out.push(b' ');
        }
        out
    }

    #[test]
    fn members_read_back_whatever_their_size() {
        let mut members = Members::new();
        for data in [
            Vec::new(),
            b"a".to_vec(),
            b"abc".to_vec(),
            b"abcd".to_vec(),
            b"abcdabcdabcdabcd".to_vec(),
            vec![0u8; 100_000],
            vec![b'x'; 259],
            text(1, 5),
            text(2, 3_000),
            text(3, 40_000),
        ] {
            let member = members.member(&[&data]);
            assert_eq!(inflate(&member), data, "{} bytes", data.len());
        }
    }

    #[test]
    fn text_compresses_and_noise_is_stored() {
        let mut members = Members::new();
        let page = text(7, 2_000);
        let member = members.member(&[&page]);
        assert!(
            member.len() * 2 < page.len(),
            "{} of {}",
            member.len(),
            page.len()
        );
        // Bytes no match shortens: each literal of 144 and more takes 9 bits.
        let mut noise = Vec::new();
        let mut state = 88172645463325252u64;
        for _ in 0..70_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            noise.push(state as u8);
        }
        let member = members.member(&[&noise]);
        assert_eq!(member.len(), 10 + stored_len(noise.len()) + 8);
        assert_eq!(inflate(&member), noise);
    }

    #[test]
    fn every_match_length_and_distance_codes_as_deflate_reads_it() {
        let mut members = Members::new();
        for len in 4..=300 {
            for distance in [1, 2, 3, 4, 5, 100, 256, 257, 1000, 4097, 32_767, 32_768] {
                // `distance` bytes of noise, then a run repeating them, `len` long.
                let mut data: Vec<u8> = (0..distance).map(|i| (i * 131 % 251) as u8).collect();
                for i in 0..len {
                    data.push(data[i % distance]);
                }
                let member = members.member(&[&data]);
                assert_eq!(inflate(&member), data, "len {len}, distance {distance}");
            }
        }
    }

    proptest::proptest! {
        /// Any parts, after any earlier members (whose table entries are stale): read back.
        #[test]
        fn any_parts_read_back_after_any_members(
            earlier in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..3_000), 0..4),
            parts in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2_000), 0..4),
            seed in 0u64..1_000,
        ) {
            let mut members = Members::new();
            for data in &earlier {
                let member = members.member(&[data]);
                proptest::prop_assert_eq!(&inflate(&member), data);
            }
            let mut parts = parts;
            parts.push(text(seed, 300));
            let slices: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            let mut file = b"before".to_vec();
            members.append(&slices, &mut file);
            proptest::prop_assert_eq!(inflate(&file[6..]), parts.concat());
        }
    }
}
