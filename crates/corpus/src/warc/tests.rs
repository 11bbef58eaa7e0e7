use super::*;
use std::io::Write;

fn record(kind: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

fn read_all(path: &Path, from: RecordOffset) -> Vec<Result<(RecordOffset, String), RecordOffset>> {
    let mut reader = WarcReader::open(path, from).unwrap();
    let mut out = Vec::new();
    while let Some(item) = reader.next_item().unwrap() {
        out.push(match item {
            WarcItem::Record(r) => Ok((r.at, r.header("WARC-Target-URI").unwrap().to_owned())),
            WarcItem::Bad(b) => Err(b.at),
        });
    }
    out
}

fn uris(items: &[Result<(RecordOffset, String), RecordOffset>]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            Ok((_, u)) => u.clone(),
            Err(at) => format!("bad@{}", at.offset),
        })
        .collect()
}

#[test]
fn plain_and_gzip_per_record_read_alike() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Vec<u8>> = (0..3)
        .map(|i| {
            record(
                "response",
                &format!("http://a/{i}"),
                format!("body {i}").as_bytes(),
            )
        })
        .collect();
    let plain = dir.path().join("a.warc");
    std::fs::write(&plain, records.concat()).unwrap();
    let gz = dir.path().join("a.warc.gz");
    let members: Vec<Vec<u8>> = records.iter().map(|r| gzip(r)).collect();
    std::fs::write(&gz, members.concat()).unwrap();
    let want = vec!["http://a/0", "http://a/1", "http://a/2"];
    assert_eq!(uris(&read_all(&plain, RecordOffset::default())), want);
    let items = read_all(&gz, RecordOffset::default());
    assert_eq!(uris(&items), want);
    // Offsets are the members' starts.
    let second = members[0].len() as u64;
    assert_eq!(
        items[1].as_ref().unwrap().0,
        RecordOffset {
            offset: second,
            within: 0
        }
    );
    // Resuming from a record's offset reads from that record.
    assert_eq!(
        uris(&read_all(
            &gz,
            RecordOffset {
                offset: second,
                within: 0
            }
        )),
        want[1..]
    );
    let plain_items = read_all(&plain, RecordOffset::default());
    let at = plain_items[2].as_ref().unwrap().0;
    assert_eq!(at.offset, (records[0].len() + records[1].len()) as u64);
    assert_eq!(uris(&read_all(&plain, at)), want[2..]);
}

#[test]
fn whole_file_gzip_stream_and_resume_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let records: Vec<Vec<u8>> = (0..3)
        .map(|i| record("resource", &format!("http://b/{i}"), b"x"))
        .collect();
    let path = dir.path().join("b.warc.gz");
    std::fs::write(&path, gzip(&records.concat())).unwrap();
    let items = read_all(&path, RecordOffset::default());
    assert_eq!(uris(&items), vec!["http://b/0", "http://b/1", "http://b/2"]);
    assert_eq!(
        items[2].as_ref().unwrap().0,
        RecordOffset {
            offset: 0,
            within: 2
        }
    );
    let mut reader = WarcReader::open(&path, RecordOffset::default()).unwrap();
    reader.next_item().unwrap();
    let point = reader.resume_point();
    assert_eq!(
        point,
        RecordOffset {
            offset: 0,
            within: 1
        }
    );
    assert_eq!(
        uris(&read_all(&path, point)),
        vec!["http://b/1", "http://b/2"]
    );
}

#[test]
fn damaged_records_are_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let good = |i: u32| record("response", &format!("http://c/{i}"), b"hello");
    // Plain: garbage between records, a bad Content-Length.
    let mut plain = good(0);
    let bad_at = plain.len() as u64;
    plain.extend_from_slice(
        b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: x\r\n\r\nzz\r\n\r\n",
    );
    plain.extend_from_slice(b"garbage line\n");
    plain.extend_from_slice(&good(1));
    let path = dir.path().join("c.warc");
    std::fs::write(&path, &plain).unwrap();
    assert_eq!(
        uris(&read_all(&path, RecordOffset::default())),
        vec![
            "http://c/0".to_string(),
            format!("bad@{bad_at}"),
            "http://c/1".into()
        ]
    );
    // Gzip: a member with its deflate data damaged, then a good one.
    let first = gzip(&good(0));
    let mut broken = gzip(&good(1));
    let mid = broken.len() / 2;
    for b in &mut broken[12..mid] {
        *b ^= 0x5a;
    }
    let last = gzip(&good(2));
    let path = dir.path().join("c.warc.gz");
    std::fs::write(&path, [first.clone(), broken, last].concat()).unwrap();
    let items = uris(&read_all(&path, RecordOffset::default()));
    assert_eq!(items.first().unwrap(), "http://c/0");
    assert_eq!(items[1], format!("bad@{}", first.len()));
    assert_eq!(items.last().unwrap(), "http://c/2");
    // Truncated at the end: reported, nothing after.
    let mut cut = good(0);
    cut.extend_from_slice(&good(1)[..40]);
    let path = dir.path().join("d.warc");
    std::fs::write(&path, &cut).unwrap();
    let items = read_all(&path, RecordOffset::default());
    assert_eq!(items.len(), 2);
    assert!(items[1].is_err());
}
