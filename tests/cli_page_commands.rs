//! `nearcrawl fingerprint`, `nearcrawl compare` and `nearcrawl idf` from the command line.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn nearcrawl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
        .args(args)
        .output()
        .expect("run nearcrawl")
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write fixture");
    path
}

const ARTICLE: [&str; 4] = [
    "Rivers carve valleys over thousands of years, moving sediment from the mountains to the sea, and the shape they leave depends on the rock, the climate and the slope of the land.",
    "In hard rock, a river cuts a narrow gorge with steep walls, while in soft rock the walls slump and the valley widens into a gentle V that farmers have settled for centuries.",
    "Glaciers, by contrast, leave U-shaped valleys, because the ice grinds the floor and the walls at once, as it did in Yosemite and in the fjords of Norway long ago.",
    "Where a glacier met the sea, the valley flooded when the ice retreated, leaving the deep and narrow inlets that ships now use as sheltered harbours through the winter.",
];

fn page(template: &str, paragraphs: &[&str]) -> String {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    match template {
        "origin" => format!(
            "<html lang=en><head><title>Valleys</title></head><body><nav><a href=/>Home</a> <a href=/geo>Geography</a></nav>\
             <div id=content><h1>How valleys form</h1>{body}</div><footer>(c) Origin Press, 1,024 readers</footer></body></html>"
        ),
        _ => format!(
            "<html><head><title>Mirror</title><meta charset=utf-8></head><body><header class=site-header>Mirror Site | Login</header>\
             <article class=post>{body}</article><aside class=sidebar><a href=/x>Popular: cats</a></aside>\
             <div class=footer>Mirror footer, 17 Nov 2024</div></body></html>"
        ),
    }
}

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("compare prints JSON")
}

#[test]
fn compare_gives_exact_near_and_distinct_verdicts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let origin = write(
        dir.path(),
        "origin.html",
        page("origin", &ARTICLE).as_bytes(),
    );
    let mirror = write(
        dir.path(),
        "mirror.html",
        page("mirror", &ARTICLE).as_bytes(),
    );
    let mut edited: Vec<String> = ARTICLE.iter().map(|p| p.to_string()).collect();
    edited[1] = edited[1].replace("narrow gorge", "deep canyon");
    edited.swap(2, 3);
    let edited_refs: Vec<&str> = edited.iter().map(String::as_str).collect();
    let syndicated = write(
        dir.path(),
        "syndicated.html",
        page("mirror", &edited_refs).as_bytes(),
    );
    let other_text = [
        "The city council met on Tuesday evening to debate the new budget for schools, roads and the public library, which had been closed since the spring floods damaged its roof.",
        "After four hours of discussion the council approved a smaller plan that repairs the library first and delays the new bus lanes until next year, to the anger of cyclists.",
    ];
    let other = write(
        dir.path(),
        "other.html",
        page("origin", &other_text).as_bytes(),
    );

    let exact = json(&nearcrawl(&[
        "compare",
        origin.to_str().unwrap(),
        mirror.to_str().unwrap(),
    ]));
    assert_eq!(exact["verdict"], "exact", "{exact}");
    assert_eq!(exact["exact_key_equal"], true);

    let near = json(&nearcrawl(&[
        "compare",
        origin.to_str().unwrap(),
        syndicated.to_str().unwrap(),
    ]));
    assert_eq!(near["verdict"], "near", "{near}");
    assert!(near["lcs_resemblance"].as_f64().unwrap() > 0.5, "{near}");

    let distinct = json(&nearcrawl(&[
        "compare",
        origin.to_str().unwrap(),
        other.to_str().unwrap(),
    ]));
    assert_eq!(distinct["verdict"], "distinct", "{distinct}");
    assert_eq!(distinct["rejected_by_skeleton"], true, "{distinct}");

    let explained = nearcrawl(&[
        "compare",
        "--explain",
        origin.to_str().unwrap(),
        syndicated.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&explained.stderr);
    assert!(
        text.contains("trustable LCS") && text.contains("verdict: near"),
        "{text}"
    );
    assert!(
        text.contains("host context: compare sees each page as the only page of its host"),
        "what compare lacks is said: {text}"
    );
}

#[test]
fn fingerprint_is_the_same_in_every_encoding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chinese = "近似重复网页检测是搜索引擎的重要组成部分，它能节省大量的带宽和存储空间。北京大学的研究者提出了基于最长公共子序列的方法，准确率达到百分之九十五。";
    let html = |charset: &str| {
        format!(
            "<html><head><meta charset=\"{charset}\"><title>网页去重</title></head><body><div><p>{chinese}</p><p>{chinese}</p></div></body></html>"
        )
    };
    let utf8 = write(dir.path(), "utf8.html", html("utf-8").as_bytes());
    let gbk_html = html("gbk");
    let (gbk_bytes, _, unmappable) = encoding_rs::GBK.encode(&gbk_html);
    assert!(!unmappable);
    let gbk = write(dir.path(), "gbk.html", &gbk_bytes);

    let out = nearcrawl(&["fingerprint", utf8.to_str().unwrap(), gbk.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<Vec<&str>> = stdout.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(
        lines[0][0], lines[1][0],
        "same simhash in UTF-8 and GBK: {stdout}"
    );
    assert_eq!(lines[0][0].len(), 16);
    assert!(
        lines[0][1].parse::<usize>().unwrap() > 30,
        "jieba tokens: {stdout}"
    );
    assert_eq!(lines[0][2], "zh", "{stdout}");

    let explained = nearcrawl(&["fingerprint", "--explain", utf8.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&explained.stdout);
    assert!(
        text.contains("heaviest features") && text.contains("网页"),
        "{text}"
    );
}

#[test]
fn explain_lists_what_was_removed_as_boilerplate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let origin = write(
        dir.path(),
        "origin.html",
        page("origin", &ARTICLE).as_bytes(),
    );
    let out = nearcrawl(&["fingerprint", "--explain", origin.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("removed as boilerplate") && text.contains("Origin Press"),
        "{text}"
    );
    let first = text.lines().next().unwrap();
    assert!(
        first.contains(" en ") && first.ends_with("origin.html"),
        "{text}"
    );
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let origin = write(
        dir.path(),
        "origin.html",
        page("origin", &ARTICLE).as_bytes(),
    );
    let missing = dir.path().join("missing.html");
    let out = nearcrawl(&["fingerprint", missing.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.html"));

    let config = write(dir.path(), "job.toml", b"[dedup]\nmax_distanc = 3\n");
    let out = nearcrawl(&[
        "compare",
        "--config",
        config.to_str().unwrap(),
        origin.to_str().unwrap(),
        origin.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("job.toml") && stderr.contains("max_distanc"),
        "{stderr}"
    );

    let config = write(
        dir.path(),
        "tf.toml",
        b"[dedup.features]\nweighting = \"bm25\"\n",
    );
    let out = nearcrawl(&[
        "fingerprint",
        "--config",
        config.to_str().unwrap(),
        origin.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("bm25"));
}

#[test]
fn the_shipped_default_config_loads() {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("config/default.toml");
    let dir = tempfile::tempdir().expect("tempdir");
    let origin = write(
        dir.path(),
        "origin.html",
        page("origin", &ARTICLE).as_bytes(),
    );
    let out = nearcrawl(&[
        "compare",
        "--config",
        config.to_str().unwrap(),
        origin.to_str().unwrap(),
        origin.to_str().unwrap(),
    ]);
    assert_eq!(json(&out)["verdict"], "exact");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_fetches_urls_served_locally() {
    use nearcrawl_demo_web::{Reply, Site, serve};
    let body = "Rivers carve valleys over thousands of years, moving sediment from the mountains to the sea. In hard rock a river cuts a narrow gorge with steep walls; in soft rock the walls slump and the valley widens into a gentle V.";
    let site = serve(
        Site::new()
            .page("/a", Reply::html(format!("<html><body><nav>Home | News</nav><article><p>{body}</p></article></body></html>")))
            .page("/b", Reply::html(format!("<html><body><div class=menu>Index</div><main><p>{body}</p></main></body></html>")).gzipped())
            .page("/img", Reply::ok("image/png", vec![1, 2, 3])),
    )
    .await
    .unwrap();
    let (a, b, img) = (site.url("/a"), site.url("/b"), site.url("/img"));
    let output = tokio::task::spawn_blocking(move || {
        let same = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
            .args(["compare", &a, &b])
            .output()
            .unwrap();
        let bad = Command::new(env!("CARGO_BIN_EXE_nearcrawl"))
            .args(["fingerprint", &img])
            .output()
            .unwrap();
        (same, bad, img)
    })
    .await
    .unwrap();
    let (same, bad, img) = output;
    assert!(
        same.status.success(),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(json["verdict"], "exact", "{json}");
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains(&img) && stderr.contains("not HTML or text"),
        "{stderr}"
    );
}

#[test]
fn idf_is_learned_from_a_crawls_own_pages_and_files_and_then_weights_features() {
    let dir = tempfile::tempdir().unwrap();
    let crawl = dir.path().join("crawl");
    let demo = nearcrawl(&["demo", "--out", crawl.to_str().unwrap()]);
    assert!(
        demo.status.success(),
        "{}",
        String::from_utf8_lossy(&demo.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(crawl.join("report.json")).unwrap()).unwrap();
    let unique = report["by_verdict"]["unique"].as_u64().unwrap();
    let article = write(
        dir.path(),
        "valleys.html",
        page("origin", &ARTICLE).as_bytes(),
    );
    let table_path = dir.path().join("idf.tsv");

    let learned = nearcrawl(&[
        "idf",
        "--out",
        table_path.to_str().unwrap(),
        "--crawl",
        crawl.to_str().unwrap(),
        article.to_str().unwrap(),
    ]);
    assert!(
        learned.status.success(),
        "{}",
        String::from_utf8_lossy(&learned.stderr)
    );
    let table = nearcrawl_text::IdfTable::load(&table_path).unwrap();
    // Every unique page with text is one document, and the file one more.
    assert!(
        table.documents() > unique / 2 && table.documents() <= unique + 1,
        "{} of {unique}",
        table.documents()
    );
    let stdout = String::from_utf8_lossy(&learned.stdout);
    assert!(
        stdout.starts_with(&format!(
            "{} documents, {} terms -> ",
            table.documents(),
            table.terms()
        )),
        "{stdout}"
    );
    assert_eq!(
        table.document_frequency("glaciers"),
        1,
        "the file's own word"
    );
    // The crawl's own vocabulary is there: some words are on nearly every page, and weigh least.
    let text = std::fs::read_to_string(&table_path).unwrap();
    let rows = text
        .lines()
        .skip(1)
        .filter_map(|line| line.split_once('\t'));
    let (df, word) = rows
        .max_by_key(|(df, _)| df.parse::<u64>().unwrap())
        .unwrap();
    assert!(
        df.parse::<u64>().unwrap() > table.documents() / 2,
        "{word} on {df} pages"
    );
    assert!(table.idf(word) < table.idf("glaciers"));

    // The table in use: learned weights move the fingerprint.
    let config = write(
        dir.path(),
        "learned.toml",
        b"[dedup.features]\nweighting = \"learned\"\nidf_table = \"idf.tsv\"\n",
    );
    let simhash = |args: &[&str]| {
        let out = nearcrawl(args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap()
            .to_owned()
    };
    let default = simhash(&["fingerprint", article.to_str().unwrap()]);
    let weighted = simhash(&[
        "fingerprint",
        "--config",
        config.to_str().unwrap(),
        article.to_str().unwrap(),
    ]);
    assert_ne!(default, weighted);
}

#[test]
fn idf_names_what_it_cannot_learn_from() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("idf.tsv");
    let none = nearcrawl(&["idf", "--out", out.to_str().unwrap()]);
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("nothing to learn from"));
    let missing = dir.path().join("no-such-crawl");
    let bad = nearcrawl(&[
        "idf",
        "--out",
        out.to_str().unwrap(),
        "--crawl",
        missing.to_str().unwrap(),
    ]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("no-such-crawl: not a crawl output directory"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(!out.exists(), "no table written on error");
}
