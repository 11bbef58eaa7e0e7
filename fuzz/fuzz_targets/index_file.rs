//! Loading an index file never panics or allocates without bound: any bytes are an index or
//! an error naming the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nearcrawl_hamming_index::HammingIndex;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("nearcrawl-fuzz-index-{}", std::process::id()));
    std::fs::write(&path, data).expect("temp file");
    if let Err(e) = HammingIndex::load(&path) {
        assert!(e.to_string().contains("nearcrawl-fuzz-index"), "{e}");
    }
    // Nothing left behind in the temporary directory (a failing input stays, for a look).
    let _ = std::fs::remove_file(&path);
});
