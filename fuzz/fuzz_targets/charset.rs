//! Charset decoding never panics, whatever the declared charset; the first byte picks one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nearcrawl_extract::decode;

const TYPES: [Option<&str>; 8] = [
    None,
    Some("text/html"),
    Some("text/html; charset=utf-8"),
    Some("text/html; charset=gbk"),
    Some("text/html; charset=shift_jis"),
    Some("text/html; charset=utf-16le"),
    Some("text/html; charset=\"iso-8859-1\""),
    Some("text/html; charset=x-unknown-charset"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let tld = if pick & 0x80 != 0 { Some("cn") } else { None };
    let decoded = decode(body, TYPES[usize::from(pick) % TYPES.len()], tld);
    assert!(decoded.text.len() <= body.len() * 3 + 3 || body.is_empty());
});
