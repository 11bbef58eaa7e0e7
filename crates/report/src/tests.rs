//! Tests of the crate's root module.

use super::*;
use nearcrawl_records::{Record, Verdict};

fn record(seq: u64, url: &str, verdict: Verdict) -> Record {
    let mut json = serde_json::json!({
        "seq": seq, "url": url, "depth": 1, "verdict": verdict.as_str(), "bytes": 1000,
        "status": 200, "dedup_us": 100 + seq * 50,
    });
    if verdict.is_duplicate() {
        json["cluster"] = 0.into();
        json["duplicate_of"] = "http://a.test/".into();
        json["distance"] = (seq % 4).into();
        json["similarity"] = serde_json::json!(0.9);
        json["dropped"] = 2.into();
    }
    serde_json::from_value(json).unwrap()
}

/// Four records; a.test and b.test on one server, the robots refusal went nowhere.
fn crawl() -> Vec<Record> {
    let mut records = vec![
        record(0, "http://a.test/", Verdict::Unique),
        record(1, "http://a.test/copy?x=<b>", Verdict::Near),
        record(2, "http://b.test/copy", Verdict::Exact),
        record(3, "http://b.test/private", Verdict::RobotsDisallowed),
    ];
    for record in &mut records[..3] {
        record.address = Some("192.0.2.1".into());
    }
    records
}

#[test]
fn the_url_rules_a_mirror_teaches_are_listed_with_what_they_predicted() {
    let mut records = Vec::new();
    for n in 0..4 {
        let mut page = record(n, &format!("http://a.test/a/{n}.html"), Verdict::Unique);
        page.cluster = Some(n);
        records.push(page);
    }
    for n in 0..4 {
        let mut copy = record(4 + n, &format!("http://m.test/story/{n}/"), Verdict::Near);
        copy.duplicate_of = Some(format!("http://a.test/a/{n}.html"));
        copy.cluster = Some(n);
        records.push(copy);
    }
    let html = render(&Inputs {
        tally: Tally::of(&records),
        ..Inputs::default()
    });
    let section = &html[html.find("<h2>URL rules learned</h2>").unwrap()..];
    // The template, and the affix the same pairs teach (`story/*/`), never asked before it.
    assert!(
        section.contains("2 rules; pages predicted right 3000 bytes, wrong 0 bytes"),
        "{section}"
    );
    assert!(section.contains(concat!(
        "<tr><td class=\"url\">http://m.test/story/{1}/ -&gt; http://a.test/a/{1}.html</td>",
        "<td>4</td><td>3</td><td>3</td><td>3000</td><td>0</td></tr>"
    )));
}

#[test]
fn a_focused_crawl_gets_its_harvest_curve() {
    let plain = render(&Inputs {
        tally: Tally::of(&crawl()),
        ..Inputs::default()
    });
    assert!(!plain.contains("Focused crawl"));
    let mut records = crawl();
    for (r, (relevance, run)) in records.iter_mut().zip([(0.4, 0), (0.05, 1), (0.3, 0)]) {
        r.relevance = Some(relevance);
        r.off_topic = Some(run);
    }
    let tally = Tally::of(&records);
    let last = tally.points().last().cloned().unwrap();
    assert_eq!((last.scored, last.on_topic), (3, 2));
    let html = render(&Inputs {
        tally,
        ..Inputs::default()
    });
    assert!(html.contains("Focused crawl: pages scored"));
    assert_eq!(html.matches("<svg role=\"img\"").count(), 7);
}

#[test]
fn a_corpus_run_is_reported_as_a_corpus() {
    let summary = serde_json::json!({
        "inputs": ["a.warc.gz", "b.jsonl"],
        "pages": 4,
        "near": 1,
        "pages_per_second": 1234.5678,
        "stage_nanos": {"parse": 8000, "tokenize": 4000},
    });
    let html = render(&Inputs {
        tally: Tally::of(&crawl()),
        corpus: summary.as_object().cloned(),
        ..Inputs::default()
    });
    assert!(html.contains("<h1>nearcrawl dedup report</h1>"));
    assert!(html.contains("<h2>Over the corpus</h2>") && !html.contains("Over the crawl"));
    assert!(
        !html.contains("Outlinks of duplicates"),
        "a corpus has no links to follow"
    );
    assert!(html.contains("<tr><td>inputs</td><td>a.warc.gz, b.jsonl</td></tr>"));
    assert!(html.contains("<tr><td>pages per second</td><td>1234.57</td></tr>"));
    // Time per page by stage, from the summary's nanoseconds over its pages.
    assert!(html.contains("<h2>Where the time went</h2>"));
    assert!(
        html.contains(">parse<") && html.contains(">tokenize<"),
        "{html}"
    );
    assert!(html.contains("Largest duplicate clusters"));
}

#[test]
fn every_section_and_chart_is_drawn_from_the_records() {
    let html = render(&Inputs {
        tally: Tally::of(&crawl()),
        ..Inputs::default()
    });
    for section in [
        "Summary",
        "Over the crawl",
        "Duplicates",
        "Largest duplicate clusters",
        "Hosts",
    ] {
        assert!(html.contains(&format!("<h2>{section}</h2>")), "{section}");
    }
    assert_eq!(html.matches("<svg role=\"img\"").count(), 6);
    assert_eq!(html.matches("class=\"series\"").count(), 3 + 3 + 1);
    assert!(html.matches("class=\"bar\"").count() >= 4 + 10);
    assert!(!html.contains("<script"), "no script");
    assert!(
        html.contains("http://a.test/copy?x=&lt;b&gt;"),
        "URLs escaped"
    );
    // The cluster of page 0: its original and both duplicates.
    let clusters = &html[html.find("Largest duplicate clusters").unwrap()..];
    assert!(clusters.contains("<td class=\"url\">http://a.test/</td><td>2</td>"));
    // Hosts: a.test has a near duplicate, b.test an exact one and a robots refusal.
    let hosts = &html[html.find("<h2>Hosts</h2>").unwrap()..];
    assert!(
            hosts.contains(
                "<tr><td>a.test</td><td>192.0.2.1</td><td>2</td><td>2000</td><td>1</td><td>0</td><td>0</td></tr>"
            ),
            "{hosts}"
        );
    assert!(
            hosts.contains(
                "<tr><td>b.test</td><td>192.0.2.1</td><td>2</td><td>2000</td><td>1</td><td>1</td><td>0</td></tr>"
            ),
            "{hosts}"
        );
}

#[test]
fn addresses_gather_their_names_with_the_run_s_back_offs() {
    let mut records = crawl();
    let mut v6 = record(4, "http://c.test/", Verdict::Error);
    v6.status = None;
    v6.retries = Some(2);
    v6.address = Some("2001:db8:0:1::5".into());
    records.push(v6);
    let backoffs = [nearcrawl_records::AddressSummary {
        address: "2001:db8:0:1::/64".into(),
        names: 1,
        backoffs: 1,
    }];
    let mut html = String::new();
    addresses(&mut html, &Tally::of(&records), &backoffs);
    assert!(
        html.contains(
            "<tr><td>192.0.2.1</td><td>2</td><td>3</td><td>3000</td><td>0</td><td>0</td></tr>"
        ),
        "{html}"
    );
    assert!(
        html.contains(
            "<tr><td>2001:db8:0:1::/64</td><td>1</td><td>0</td><td>0</td><td>3</td><td>1</td></tr>"
        ),
        "{html}"
    );
    let mut none = String::new();
    addresses(&mut none, &Tally::of(&records[3..4]), &[]);
    assert!(
        none.is_empty(),
        "no section when no record names an address"
    );
}

#[test]
fn a_recrawl_s_cost_and_classes_are_drawn() {
    let mut figures = nearcrawl_records::RecrawlFigures {
        previous_pages: 20,
        previous_bytes: 200_000,
        asked: 20,
        bytes: 30_000,
        new_pages: 1,
        new_bytes: 9_000,
        ..Default::default()
    };
    let classes = [
        ("not-modified", 17, 3_000),
        ("changed", 2, 27_000),
        ("gone", 1, 0),
    ];
    for (class, pages, bytes) in classes {
        let f = nearcrawl_records::ChangeFigures { pages, bytes };
        figures.by_change.insert(class.to_string(), f);
    }
    let host = nearcrawl_records::HostRevisits {
        asked: 20,
        not_modified: 17,
    };
    figures.hosts.insert("docs.test".into(), host);
    let mut html = String::new();
    recrawl(&mut html, &figures);
    assert!(html.contains("15.0 % of the 200000 bytes"), "{html}");
    assert!(html.contains("<tr><td>changed</td><td>2</td><td>27000</td></tr>"));
    assert!(html.contains("<tr><td>docs.test</td><td>20</td><td>17</td></tr>"));
    let order: Vec<usize> = ["not-modified", "changed", "gone"]
        .iter()
        .map(|c| html.find(&format!("<td>{c}</td>")).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "in class order");
}

#[test]
fn the_time_by_stage_is_drawn_when_the_report_has_it() {
    let mut html = String::new();
    stages(&mut html, &[]);
    assert!(html.is_empty(), "no section without figures");
    let times: Vec<StageTime> = ["fetch", "parse", "verify"]
        .iter()
        .zip([250.4, 12.0, 150.6])
        .map(|(stage, us)| StageTime {
            stage: stage.to_string(),
            total_ms: us,
            per_page_us: us,
        })
        .collect();
    stages(&mut html, &times);
    assert!(html.contains("<h2>Where the time went</h2>"));
    assert_eq!(html.matches("class=\"bar\"").count(), 3);
    assert!(html.contains("<title>verify: 151</title>"), "{html}");
}

#[test]
fn a_job_directory_becomes_report_html_and_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = crawl()
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    std::fs::write(dir.path().join("records.jsonl"), lines.join("\n") + "\n").unwrap();
    let path = write(dir.path()).unwrap();
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.contains("<td>records</td><td>4</td>"));
    std::fs::write(dir.path().join("records.jsonl"), "{\"seq\": 0}\nnot json\n").unwrap();
    let err = write(dir.path()).unwrap_err().to_string();
    assert!(err.contains("records.jsonl:1:"), "{err}");
}
