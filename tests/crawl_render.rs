//! A site whose pages a script writes, crawled with `render.mode = "always"` in Debian's
//! chromium (`NEARCRAWL_CHROMIUM` names it, else `chromium` on the PATH;
//! scripts/browser-deps.sh installs it): every page is found, judged on what the browser
//! shows, its copies found; every request a page makes goes through the crawl's rules and is
//! counted in its record. Without rendering, the same site shows one page and a link. In
//! `auto`, the pages of text beside them are not rendered, nor a host's pages once its renders
//! added nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a panic is a failure with a backtrace

#[path = "support/crawl.rs"]
mod crawl_support;

use std::path::PathBuf;

use crawl_support::{chromium, count, local_config, prose, record, records, run, serve_at};
use nearcrawl_demo_web::{Reply, Site};
use nearcrawl_records::Verdict;
use nearcrawl_render::RenderMode;

/// Pages written by the script, `/p/0.html` to `/p/9.html`; 8 and 9 carry 2's and 3's text.
const PAGES: u64 = 10;

/// The script every page loads: it writes the article and links its page's data names, and
/// asks for a counter at a private address and for a file robots.txt disallows (both refused
/// by the crawl).
const APP: &str = r#"
const data = JSON.parse(document.getElementById('data').textContent);
const links = data.links.map(l => '<a href="' + l + '">' + l + '</a>').join(' ');
document.getElementById('root').innerHTML =
    '<article><h1>' + data.title + '</h1><p>' + data.text + '</p></article><nav>' + links + '</nav>';
fetch('http://10.9.9.9/count').catch(() => {});
fetch('/secret/count.json').catch(() => {});
"#;

/// A page whose HTML holds nothing but "Loading..." and its data for the script.
fn shell(title: &str, text: &str, links: &[String]) -> Reply {
    let data = serde_json::json!({ "title": title, "text": text, "links": links });
    Reply::html(format!(
        "<html><head><title>{title}</title></head><body><div id=\"root\">Loading...</div>\
         <script id=\"data\" type=\"application/json\">{data}</script>\
         <script src=\"/app.js\"></script></body></html>"
    ))
}

/// A local crawl's configuration that renders as `mode` says, in Debian's chromium.
fn rendering(mode: RenderMode) -> nearcrawl_engine::CrawlConfig {
    let mut config = local_config();
    config.render.mode = mode;
    config.render.chromium = chromium();
    config
}

fn site() -> Site {
    let mut site = Site::new()
        .page("/app.js", Reply::ok("application/javascript", APP))
        .page(
            "/robots.txt",
            Reply::ok("text/plain", "User-agent: *\nDisallow: /secret/\n"),
        )
        .page("/secret/count.json", Reply::ok("application/json", "{}"));
    // The entry page links to one page itself and writes the links to two more.
    site.insert(
        "/",
        Reply::html(
            "<html><head><title>Home</title></head><body><a href=\"/p/0.html\">first</a>\
             <script>document.write('<a href=\"/p/1.html\">second</a> \
             <a href=\"/p/2.html\">third</a>');</script></body></html>",
        ),
    );
    for n in 0..PAGES {
        let text = prose(match n {
            8 => 2,
            9 => 3,
            n => n,
        });
        // Each page links to the next two.
        let links: Vec<String> = [n + 1, n + 2]
            .into_iter()
            .filter(|m| *m < PAGES)
            .map(|m| format!("/p/{m}.html"))
            .collect();
        site.insert(
            &format!("/p/{n}.html"),
            shell(&format!("Page {n}"), &text, &links),
        );
    }
    site
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_a_script_writes_is_crawled_on_what_the_browser_shows() {
    let running = serve_at(site(), "127.0.0.91").await;
    let seeds = format!("{}\n", running.url("/"));
    let dir = tempfile::tempdir().expect("a temporary directory");

    // Static: the entry page and the one page it links to itself, judged on "Loading...".
    let out = dir.path().join("static");
    let mut config = local_config();
    config.render.mode = RenderMode::Never;
    run(&seeds, &out, config).await;
    let seen = records(&out);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert!(seen.iter().all(|r| r.rendered.is_none()));

    // Rendered: every page, judged on its article.
    let out = dir.path().join("rendered");
    let mut config = rendering(RenderMode::Always);
    config.render.tabs = 2;
    let report = run(&seeds, &out, config).await;
    let renders = report.render.as_ref().expect("the report counts renders");
    assert_eq!(
        (renders.rendered, renders.failed),
        (PAGES + 1, 0),
        "{renders:?}"
    );
    let seen = records(&out);
    let pages: Vec<_> = seen.iter().filter(|r| r.url.contains("/p/")).collect();
    assert_eq!(pages.len() as u64, PAGES, "{seen:#?}");
    for n in [8, 9] {
        let copy = record(&seen, &format!("/p/{n}.html"));
        assert!(copy.verdict.is_duplicate(), "{copy:#?}");
        let original = format!("/p/{}.html", n - 6);
        assert!(
            copy.duplicate_of
                .as_deref()
                .is_some_and(|o| o.ends_with(&original)),
            "{copy:#?}"
        );
    }
    assert_eq!(
        count(&seen, Verdict::Unique),
        (PAGES - 2 + 1) as usize,
        "{seen:#?}"
    );
    // Every page was rendered: its script fetched through the crawl, its calls to a private
    // address and to what robots.txt disallows refused.
    for page in &pages {
        let rendered = page.rendered.as_ref().expect("rendered");
        assert_eq!(rendered.error, None, "{page:#?}");
        assert!(rendered.requests >= 3 && rendered.refused >= 2, "{page:#?}");
        assert!(rendered.bytes >= APP.len() as u64, "{page:#?}");
        // Its text was in its response, as the script's data.
        assert_eq!(rendered.static_text, Some(true), "{page:#?}");
    }
    // The browser reached the site only through the crawler: a page's document is the
    // response the crawler fetched (a page only the rendered crawl found was asked once), its
    // script fetched by the crawler for each page.
    assert_eq!(running.site.hits("/p/4.html"), 1);
    assert_eq!(running.site.hits("/secret/count.json"), 0);
    // The WARC keeps each page's response as fetched and, referring to it, what the browser
    // showed, and the responses of the requests it made: valid WARC/1.1.
    let files = crawl_support::warc_files(&out);
    let check = std::process::Command::new(crawl_support::warcio())
        .arg("check")
        .args(&files)
        .output()
        .expect("warcio runs");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let index = std::process::Command::new(crawl_support::warcio())
        .args(["index", "-f", "warc-type,warc-target-uri,warc-refers-to"])
        .args(&files)
        .output()
        .expect("warcio runs");
    let index = String::from_utf8_lossy(&index.stdout);
    // The responses a page's requests were answered with, beside it.
    let scripts = (index.lines())
        .filter(|l| l.contains("\"response\"") && l.contains("/app.js"))
        .count();
    assert!(scripts as u64 >= PAGES, "{index}");
    let converted = index
        .lines()
        .filter(|l| l.contains("\"conversion\""))
        .count();
    assert_eq!(converted as u64, PAGES + 1, "{index}");
    assert!(
        index
            .lines()
            .filter(|l| l.contains("\"conversion\""))
            .all(|l| l.contains("warc-refers-to")),
        "{index}"
    );
    assert!(running.site.hits("/app.js") >= PAGES as usize);
}

/// Pages of text (`/s/0.html` to `/s/5.html`), every other one loading an analytics script.
fn with_text(mut site: Site) -> Site {
    for n in 0..6u64 {
        let script = match n % 2 {
            0 => "<script src=\"/analytics.js\"></script>",
            _ => "",
        };
        let next = format!("<a href=\"/s/{}.html\">next</a>", n + 1);
        site.insert(
            &format!("/s/{n}.html"),
            Reply::html(format!(
                "<html><head><title>Text {n}</title>{script}</head><body><article><h1>Text \
                 {n}</h1><p>{}</p></article>{next}</body></html>",
                prose(100 + n)
            )),
        );
    }
    site.insert(
        "/analytics.js",
        Reply::ok("application/javascript", "void 0;"),
    );
    let home = site.reply("/");
    let body = String::from_utf8_lossy(&home.body).replace(
        "<a href=\"/p/0.html\">first</a>",
        "<a href=\"/p/0.html\">first</a> <a href=\"/s/0.html\">text</a>",
    );
    site.insert("/", Reply::html(body));
    site
}

/// A host whose pages load a script that writes nothing: short pages, each linking on.
fn scripts_that_write_nothing() -> Site {
    let mut site = Site::new();
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    for (n, word) in words.iter().enumerate() {
        let next = format!("/n/{}.html", n + 1);
        let path = if n == 0 {
            "/".to_owned()
        } else {
            format!("/n/{n}.html")
        };
        site.insert(
            &path,
            Reply::html(format!(
                "<html><head><title>{word}</title></head><body><p>The {word} page.</p>\
                 <script>console.log('{word}');</script><a href=\"{next}\">next</a></body></html>"
            )),
        );
    }
    site
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_renders_the_pages_that_need_it_and_stops_where_rendering_adds_nothing() {
    let running = serve_at(with_text(site()), "127.0.0.92").await;
    let idle = serve_at(scripts_that_write_nothing(), "127.0.0.93").await;
    let seeds = format!("{}\n{}\n", running.url("/"), idle.url("/"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("auto");
    let mut config = rendering(RenderMode::Auto);
    config.limits.concurrency = 1;
    run(&seeds, &out, config).await;
    let seen = records(&out);
    // Every script-built page found and rendered, for having a script and little text.
    for n in 0..PAGES {
        let page = record(&seen, &format!("/p/{n}.html"));
        let rendered = page.rendered.as_ref().expect("rendered");
        let why = rendered.why.as_deref().unwrap_or_default();
        assert!(
            why.starts_with("a script and") && rendered.ms > 0,
            "{page:#?}"
        );
    }
    // The pages of text, an analytics script or not: none rendered.
    for n in 0..6 {
        let page = record(&seen, &format!("/s/{n}.html"));
        assert_eq!(page.rendered, None, "{page:#?}");
    }
    // The host whose scripts write nothing: three renders, then no more (its other five pages
    // say why), its pages all crawled all the same (eight, and a 404).
    let idle_pages: Vec<_> = seen
        .iter()
        .filter(|r| r.url.contains("127.0.0.93"))
        .collect();
    assert_eq!(idle_pages.len(), 9, "{idle_pages:#?}");
    let rendered = idle_pages
        .iter()
        .filter(|r| r.rendered.as_ref().is_some_and(|x| x.ms > 0));
    assert_eq!(rendered.count(), 3, "{idle_pages:#?}");
    let declined = idle_pages.iter().filter(|r| {
        (r.rendered.as_ref()).is_some_and(|x| {
            x.why
                .as_deref()
                .is_some_and(|w| w.contains("first 3 renders added no text"))
        })
    });
    assert_eq!(declined.count(), 5, "{idle_pages:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_that_cannot_start_stops_always_and_auto_goes_on_without_it() {
    let running = serve_at(site(), "127.0.0.94").await;
    let seeds = format!("{}\n", running.url("/"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let missing = PathBuf::from("/no/such/chromium");
    // `auto`: the crawl goes on, judging static HTML; a page it would render says why not.
    let out = dir.path().join("auto");
    let mut config = local_config();
    config.render.mode = RenderMode::Auto;
    config.render.chromium = missing.clone();
    run(&seeds, &out, config.clone()).await;
    let seen = records(&out);
    assert_eq!(seen.len(), 2, "{seen:#?}");
    let shell = record(&seen, "/p/0.html");
    let error = (shell.rendered.as_ref())
        .and_then(|r| r.error.clone())
        .unwrap_or_default();
    assert!(
        error.contains("no browser at /no/such/chromium"),
        "{shell:#?}"
    );
    // `always`: an error before anything is fetched, naming what is missing.
    config.render.mode = RenderMode::Always;
    let job = nearcrawl_engine::Job {
        seeds: nearcrawl_frontier::parse_seeds(&seeds, std::path::Path::new("seeds.txt"))
            .expect("a seed list"),
        out_dir: dir.path().join("always"),
        config,
        analyzer: nearcrawl_dedup::AnalyzerConfig::default(),
        shared_index: None,
        redis: None,
    };
    let progress = std::sync::Arc::new(nearcrawl_engine::Progress::default());
    let error = nearcrawl_engine::crawl(job, std::future::pending(), progress)
        .await
        .expect_err("no browser");
    assert!(
        error
            .to_string()
            .contains("no browser at /no/such/chromium"),
        "{error}"
    );
    assert_eq!(running.site.hits("/p/1.html"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_cut_at_the_body_cap_is_not_rendered_and_says_so() {
    let padding = "<!-- padding -->".repeat(400);
    let site = Site::new()
        .page("/app.js", Reply::ok("application/javascript", APP))
        .page(
            "/",
            Reply::html(format!(
                "<html><body><div id=\"root\">Loading...</div>{padding}\
                 <script src=\"/app.js\"></script></body></html>"
            )),
        );
    let running = serve_at(site, "127.0.0.95").await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("cut");
    let mut config = rendering(RenderMode::Always);
    config.fetch.max_body_bytes = 2_048;
    run(&format!("{}\n", running.url("/")), &out, config).await;
    let seen = records(&out);
    let page = record(&seen, "/");
    assert!(page.truncated, "{page:#?}");
    let why = (page.rendered.as_ref())
        .and_then(|r| r.why.clone())
        .unwrap_or_default();
    assert!(why.contains("cut at fetch.max_body_bytes"), "{page:#?}");
    assert_eq!(running.site.hits("/app.js"), 0);
}

/// Two workers of a job shared through Redis, each with its own browser, crawl the
/// script-built site whole between them, each page fetched and rendered once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_of_a_shared_job_render_with_a_browser_each() {
    let server = nearcrawl_redis_job::server::LocalRedis::start(false).expect("redis-server");
    let running = serve_at(site(), "127.0.0.96").await;
    let seeds = format!("{}\n", running.url("/"));
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut config = crawl_support::shared_config();
    config.render.mode = RenderMode::Auto;
    config.render.chromium = chromium();
    let redis = server.url();
    tokio::join!(
        crawl_support::shared_worker(
            &seeds,
            dirs[0].path(),
            (&redis, "rendered", "w0"),
            config.clone()
        ),
        crawl_support::shared_worker(&seeds, dirs[1].path(), (&redis, "rendered", "w1"), config),
    );
    let seen: Vec<_> = dirs.iter().flat_map(|d| records(d.path())).collect();
    for n in 0..PAGES {
        let page = record(&seen, &format!("/p/{n}.html"));
        assert!(
            page.rendered.as_ref().is_some_and(|r| r.ms > 0),
            "{page:#?}"
        );
        assert_eq!(running.site.hits(&format!("/p/{n}.html")), 1);
    }
}

/// A page's requests to one host go at most `politeness.max_connections_per_host` at a time
/// (no delay between them): six answers of 200 ms each, two at a time, take three rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_s_requests_to_its_host_share_the_host_s_connections() {
    let script = "<html><body><div id=\"root\">Loading...</div><script>\
                  Promise.all([0, 1, 2, 3, 4, 5].map(i => fetch('/item/' + i)))\
                  .then(() => { document.getElementById('root').textContent = 'all six'; });\
                  </script></body></html>";
    let mut site = Site::new().page("/", Reply::html(script));
    for i in 0..6 {
        let reply =
            Reply::ok("application/json", "{}").delayed(std::time::Duration::from_millis(200));
        site.insert(&format!("/item/{i}"), reply);
    }
    let running = serve_at(site, "127.0.0.97").await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("connections");
    let mut config = rendering(RenderMode::Always);
    config.politeness.max_connections_per_host = 2;
    run(&format!("{}\n", running.url("/")), &out, config).await;
    let arrivals: Vec<std::time::Instant> = (running.site.requests().into_iter())
        .filter(|(path, _)| path.starts_with("/item/"))
        .map(|(_, at)| at)
        .collect();
    assert_eq!(arrivals.len(), 6, "{:#?}", records(&out));
    let (first, last) = (arrivals.iter().min(), arrivals.iter().max());
    let span = last
        .zip(first)
        .map(|(l, f)| l.duration_since(*f))
        .unwrap_or_default();
    assert!(span >= std::time::Duration::from_millis(350), "{span:?}");
    let seen = records(&out);
    let page = record(&seen, "/");
    // (And the browser's own request for a favicon.)
    let requests = page.rendered.as_ref().map_or(0, |r| r.requests);
    assert!(requests >= 6, "{page:#?}");
}

/// A hostile page: its script asks for five thousand URLs, three thousand of its own host and
/// two thousand on as many other hosts. The page's budget (`render.max_subresources`) caps
/// what reaches any server, the other hosts are refused by the crawl's scope without a
/// request, the page is still judged on what the browser shows within its time, and the
/// crawl goes on to the page it links to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_asking_for_thousands_of_urls_across_hosts_gets_its_budget() {
    let script = "<html><body><a href=\"/next.html\">next</a><div id=\"root\">Loading...</div>\
                  <script>\
                  for (let i = 0; i < 3000; i++) fetch('/flood/' + i).catch(() => {});\
                  for (let i = 0; i < 2000; i++) fetch('http://h' + i + '.invalid/x').catch(() => {});\
                  document.getElementById('root').textContent = 'asked for five thousand';\
                  </script></body></html>";
    let mut site = Site::new().page("/", Reply::html(script)).page(
        "/next.html",
        Reply::html(format!("<html><body><p>{}</p></body></html>", prose(7))),
    );
    for i in 0..3000 {
        site.insert(&format!("/flood/{i}"), Reply::ok("application/json", "{}"));
    }
    let running = serve_at(site, "127.0.0.98").await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("flood");
    let mut config = rendering(RenderMode::Always);
    config.render.max_subresources = 40;
    // Each of the 5,000 requests is answered (refused) over the DevTools connection: about
    // 10 s on two busy cores, so the page's limit leaves room for a loaded machine.
    config.render.timeout_ms = 30_000;
    run(&format!("{}\n", running.url("/")), &out, config).await;
    let flooded = (running.site.requests().into_iter())
        .filter(|(path, _)| path.starts_with("/flood/"))
        .count();
    assert!(
        flooded <= 40,
        "{flooded} of the page's requests reached its server"
    );
    let seen = records(&out);
    let page = record(&seen, "/");
    let rendered = page.rendered.as_ref().expect("rendered");
    assert!(rendered.error.is_none(), "{page:#?}");
    assert!(rendered.requests >= 100, "{page:#?}");
    assert!(
        rendered.refused + 40 >= rendered.requests,
        "past its budget, every request is refused: {page:#?}"
    );
    assert!(rendered.ms <= 32_000, "{page:#?}");
    let next = record(&seen, "/next.html");
    assert_eq!(next.verdict, Verdict::Unique, "{next:#?}");
}

/// A single-page application's script: it asks for its page's text by a data request
/// (`/data/a/3.json` for `/a/3.html`) and writes it.
const SPA: &str = r#"
fetch('/data' + location.pathname.replace('.html', '.json'))
  .then(r => r.json())
  .then(d => {
    const links = d.links.map(l => '<a href="' + l + '">' + l + '</a>').join(' ');
    document.getElementById('root').innerHTML =
      '<article><h1>' + d.title + '</h1><p>' + d.text + '</p></article><nav>' + links + '</nav>';
  });
"#;

/// The mirror's pages whose text is not their original's.
const REWRITTEN: [u64; 3] = [14, 17, 19];

/// A single-page application's site: every page's HTML is the same shell, with [`SPA`].
/// `/a/N.html` are the originals, `/m/N.html` their mirror, whose pages in [`REWRITTEN`]
/// carry other text; each page links to the next of its side.
fn spa(pages: u64) -> Site {
    let shell = "<html><head><title>App</title></head><body><div id=\"root\">Loading...</div>\
                 <script src=\"/spa.js\"></script></body></html>";
    let mut site = Site::new().page("/spa.js", Reply::ok("application/javascript", SPA));
    let mut home = String::from("<html><head><title>Home</title></head><body>");
    for side in ["a", "m"] {
        for n in 0..pages {
            home.push_str(&format!("<a href=\"/{side}/{n}.html\">{side} {n}</a> "));
            site.insert(&format!("/{side}/{n}.html"), Reply::html(shell));
            let text = match side == "m" && REWRITTEN.contains(&n) {
                true => prose(500 + n),
                false => prose(200 + n),
            };
            let data = serde_json::json!({
                "title": format!("Chapter {n}"),
                "text": text,
                "links": [format!("/{side}/{}.html", (n + 1) % pages)],
            });
            site.insert(
                &format!("/data/{side}/{n}.json"),
                Reply::ok("application/json", data.to_string()),
            );
        }
    }
    home.push_str("</body></html>");
    site.insert("/", Reply::html(home));
    site
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_text_comes_by_a_data_request_is_not_judged_on_its_shell() {
    let pages = 20;
    let running = serve_at(spa(pages), "127.0.0.97").await;
    let seeds = format!("{}\n", running.url("/"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let out = dir.path().join("spa");
    let mut config = rendering(RenderMode::Auto);
    config.limits.concurrency = 1;
    run(&seeds, &out, config).await;
    let seen = records(&out);
    // The shells carry no text: a HEAD's length, the same for every page, decides none
    // `unchanged`; a page a rule predicted is fetched after its HEAD and rendered.
    assert_eq!(count(&seen, Verdict::Unchanged), 0, "{seen:#?}");
    let shell = record(&seen, "/a/0.html").rendered.as_ref();
    assert_eq!(shell.and_then(|r| r.static_text), Some(false), "{seen:#?}");
    let checked = (seen.iter()).filter(|r| r.fate.as_ref().is_some_and(|f| f.check.is_some()));
    assert!(
        checked.count() > 0,
        "the rule's predictions were checked: {seen:#?}"
    );
    for n in 0..pages {
        let copy = record(&seen, &format!("/m/{n}.html"));
        let rewritten = REWRITTEN.contains(&n);
        assert_eq!(
            copy.verdict.is_duplicate() || copy.verdict == Verdict::Predicted,
            !rewritten,
            "{copy:#?}"
        );
    }
}
