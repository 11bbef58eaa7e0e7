//! The index file: round trip, and every kind of damage is a clear error, never a panic or a
//! partial load.

#![allow(clippy::unwrap_used)] // test helpers: a panic is a failure with a backtrace

use nearcrawl_fingerprint::Fingerprint;
use nearcrawl_hamming_index::{HammingIndex, IndexError, IndexParams};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn sample(n: usize) -> HammingIndex {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut index = HammingIndex::new(IndexParams::manku_10_tables());
    for i in 0..n {
        let fp: u64 = if i % 5 == 0 { 42 } else { rng.random() };
        index.insert(Fingerprint::new(fp), i as u64);
    }
    index
}

fn temp_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "nearcrawl-persist-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn save_and_load_round_trip() {
    let dir = temp_dir();
    let path = dir.join("index.nchi");
    let index = sample(3_000); // not compacted: buffer plus several runs
    index.save(&path).unwrap();
    let loaded = HammingIndex::load(&path).unwrap();
    assert_eq!(loaded.len(), index.len());
    assert_eq!(loaded.params(), index.params());
    let mut a: Vec<_> = index.entries().collect();
    let mut b: Vec<_> = loaded.entries().collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
    for (fp, _) in a.iter().step_by(13) {
        let mut x = index.query(*fp);
        let mut y = loaded.query(*fp);
        x.sort_unstable();
        y.sort_unstable();
        assert_eq!(x, y);
    }
    // Loaded indexes keep accepting inserts.
    let mut loaded = loaded;
    loaded.insert(Fingerprint::new(7), 99);
    assert_eq!(
        loaded.first_match(Fingerprint::new(6)).map(|m| m.payload),
        Some(99)
    );
    // An empty index round-trips too.
    HammingIndex::new(IndexParams::manku_4_tables())
        .save(&path)
        .unwrap();
    assert!(HammingIndex::load(&path).unwrap().is_empty());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn damaged_files_are_errors_naming_the_file() {
    let dir = temp_dir();
    let path = dir.join("index.nchi");
    sample(500).save(&path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let check = |bytes: &[u8], what: &str, expect: fn(&IndexError) -> bool| {
        let bad = dir.join(format!("{what}.nchi"));
        std::fs::write(&bad, bytes).unwrap();
        let err = HammingIndex::load(&bad).unwrap_err();
        assert!(expect(&err), "{what}: {err:?}");
        assert!(
            err.to_string().contains(&bad.display().to_string()),
            "{what}: {err}"
        );
    };
    check(&good[..good.len() - 1], "truncated", |e| {
        matches!(e, IndexError::Truncated { .. })
    });
    check(&good[..10], "header-only", |e| {
        matches!(e, IndexError::Truncated { .. })
    });
    check(&[], "empty", |e| matches!(e, IndexError::Truncated { .. }));
    let mut longer = good.clone();
    longer.push(0);
    check(&longer, "trailing", |e| {
        matches!(e, IndexError::Truncated { .. })
    });
    let mut magic = good.clone();
    magic[0] = b'X';
    check(&magic, "magic", |e| {
        matches!(e, IndexError::NotAnIndex { .. })
    });
    let mut version = good.clone();
    version[8] = 9;
    check(&version, "version", |e| {
        matches!(e, IndexError::UnsupportedVersion { version: 9, .. })
    });
    let mut params = good.clone();
    params[20] = 2; // 2 blocks with k = 3
    check(&params, "params", |e| {
        matches!(e, IndexError::Corrupt { .. })
    });
    let mut count = good.clone();
    count[28..36].copy_from_slice(&u64::MAX.to_le_bytes());
    check(&count, "count", |e| {
        matches!(e, IndexError::Truncated { .. })
    });
    // A flipped bit anywhere in the body is caught by the checksum.
    for offset in [36, good.len() / 2, good.len() - 9, good.len() - 1] {
        let mut flipped = good.clone();
        flipped[offset] ^= 0x10;
        check(&flipped, &format!("flip{offset}"), |e| {
            matches!(e, IndexError::Corrupt { .. })
        });
    }
    let missing = HammingIndex::load(dir.join("missing.nchi")).unwrap_err();
    assert!(
        matches!(missing, IndexError::Io { .. }) && missing.to_string().contains("missing.nchi")
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn saving_over_a_file_replaces_it_whole() {
    let dir = temp_dir();
    let path = dir.join("index.nchi");
    sample(100).save(&path).unwrap();
    sample(2_000).save(&path).unwrap();
    assert_eq!(HammingIndex::load(&path).unwrap().len(), 2_000);
    assert!(!dir.join("index.nchi.tmp").exists());
    std::fs::remove_dir_all(dir).unwrap();
}
