//! A WARC record's gzip member ([`Gzip`]), deflated by libdeflate at the job's [`Level`].

/// How hard each record's gzip member is deflated (`[output] warc_compression`): libdeflate's
/// level, from 0 (stored) and 1 (fastest) to 12 (smallest). The default, 1, writes members a
/// quarter smaller than the fixed-Huffman deflate it replaced (22 % on a real manual and
/// the text site) for 3.5 % more CPU a page on the text site; 6, zlib's default size, is a
/// further 1 to 8 % smaller for 10 % fewer pages/s there (docs/BENCHMARKS.md, "WARC
/// compression"): a crawl waiting on its hosts' politeness, whose CPU is idle, keeps smaller
/// archives with 6 or 9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Level(u8);

impl Level {
    /// The most a level may be.
    pub const MAX: u8 = 12;

    /// Level `level`, if libdeflate has it (0 to 12).
    pub fn new(level: u8) -> Option<Level> {
        (level <= Level::MAX).then_some(Level(level))
    }

    /// The number.
    pub fn get(self) -> u8 {
        self.0
    }
}

impl Default for Level {
    fn default() -> Level {
        Level(1)
    }
}

impl<'de> serde::Deserialize<'de> for Level {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Level, D::Error> {
        let level = u8::deserialize(deserializer)?;
        Level::new(level).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{level} is no compression level: 0 (stored), 1 (fastest) to {} (smallest)",
                Level::MAX
            ))
        })
    }
}

/// A thread's gzip members, one per record, deflated by libdeflate at one level (its
/// compressor allocated once and reused; the record's parts joined into a buffer kept too).
pub(super) struct Gzip {
    pub(super) level: Level,
    compressor: libdeflater::Compressor,
    /// The record's parts, joined.
    input: Vec<u8>,
}

impl Gzip {
    pub(super) fn new(level: Level) -> Gzip {
        // Level::new admits only libdeflate's levels.
        let lvl = libdeflater::CompressionLvl::new(i32::from(level.get()))
            .unwrap_or_else(|_| libdeflater::CompressionLvl::default());
        Gzip {
            level,
            compressor: libdeflater::Compressor::new(lvl),
            input: Vec::new(),
        }
    }

    /// One gzip member holding `parts`, joined.
    pub(super) fn member(&mut self, parts: &[&[u8]]) -> Vec<u8> {
        self.input.clear();
        parts
            .iter()
            .for_each(|part| self.input.extend_from_slice(part));
        let mut member = vec![0; self.compressor.gzip_compress_bound(self.input.len())];
        // The bound is what libdeflate says a member of this input may take at most.
        let written = self
            .compressor
            .gzip_compress(&self.input, &mut member)
            .unwrap_or_else(|e| unreachable!("a gzip member within its bound: {e:?}"));
        member.truncate(written);
        member
    }
}
