//! Tests of `job/analysis`: the template log.

use super::*;
use nearcrawl_dedup::stage_template_config;

#[test]
fn the_template_log_replays_to_the_same_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = TemplateModel::new(stage_template_config());
    let mut log = Vec::new();
    // Letters, not digits: a block's key masks digits.
    let key = |n: u64| {
        let letter = |i: u64| char::from(b'a' + (i % 26) as u8);
        BlockKey::of(&format!("block {}{}", letter(n / 26), letter(n)))
    };
    let mut pages = Vec::new();
    for page in 0..40u64 {
        let host = if page % 3 == 0 {
            "a.example"
        } else {
            "b.example"
        };
        // Blocks on every page, on most, on a few, and the page's own.
        let keys: Vec<BlockKey> = [0, 1 + page % 4 / 3, 10 + page % 7, 100 + page]
            .into_iter()
            .map(key)
            .collect();
        model.observe_keys(host, &keys);
        log_observation(&mut log, host, &keys);
        pages.push((host, keys));
    }
    let path = dir.path().join("templates.bin");
    std::fs::write(&path, &log).unwrap();
    let mut replayed = TemplateModel::new(stage_template_config());
    replay_observations(&path, log.len() as u64, &mut replayed).unwrap();
    let mut templates = 0;
    for (host, keys) in &pages {
        for &k in keys {
            assert_eq!(
                model.is_template_key(host, k),
                replayed.is_template_key(host, k)
            );
            templates += usize::from(model.is_template_key(host, k));
        }
    }
    assert!(templates > 0 && templates < pages.len() * 4);
    // Replaying a prefix is the model of the pages before it; a cut in an entry is named.
    let mut first = TemplateModel::new(stage_template_config());
    let err = replay_observations(&path, 5, &mut first).unwrap_err();
    assert!(
        err.to_string().contains("templates.bin: offset 0: damaged"),
        "{err}"
    );
}
