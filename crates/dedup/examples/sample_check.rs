//! A probe's sample by hand: `sample_check NEW.html OLD.html` cuts NEW as a probe's sample
//! would ask for it (`sample_ranges` of its length), compares each part with OLD's shingles as
//! a crawl keeps them (`shingle_filter`), and prints each part's text and whether it matched.
//! For looking into a sample's verdict on two files (docs/QUALITY.md, probes).

use nearcrawl_dedup::{check_sample, fragment_text, sample_ranges, shingle_filter};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: sample_check NEW.html OLD.html";
    let mut args = std::env::args().skip(1);
    let new = std::fs::read(args.next().ok_or(usage)?)?;
    let old = shingle_filter(&std::fs::read(args.next().ok_or(usage)?)?);
    let parts: Vec<Vec<u8>> = sample_ranges(new.len() as u64)
        .into_iter()
        .map(|(a, b)| new[a as usize..=b as usize].to_vec())
        .collect();
    for part in &parts {
        let check = check_sample(std::slice::from_ref(part), &old);
        let text = fragment_text(part);
        let words: Vec<&str> = text.split_whitespace().collect();
        println!(
            "part: informative {} matched {}\n  {}",
            check.informative,
            check.matched,
            words.join(" ")
        );
    }
    println!("{:?}", check_sample(&parts, &old));
    Ok(())
}
