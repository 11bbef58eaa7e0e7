//! Pages rendered in Debian's chromium (`NEARCRAWL_CHROMIUM` names it, else `chromium` on
//! the PATH; scripts/browser-deps.sh installs it), every request answered by the test: what a
//! script writes is read, a request to a refused address is refused, a page's requests past
//! its budget are refused, a script that loops times out, a dialog does not block.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use nearcrawl_render::{
    Answer, Fetched, RenderConfig, RenderError, Renderer, Requested, Subresources,
};
use url::Url;

fn chromium() -> PathBuf {
    std::env::var_os("NEARCRAWL_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("chromium"))
}

/// A site in memory: a response per URL; any other host is refused as the crawl refuses a
/// private address, any other path of the site is a 404.
struct Site(HashMap<String, Fetched>);

impl Subresources for Site {
    fn fetch(&self, url: Url) -> Answer<'_> {
        let answer = match (url.host_str(), self.0.get(url.as_str())) {
            (Some("site.test"), Some(fetched)) => Ok(fetched.clone()),
            (Some("site.test"), None) => Ok(Fetched {
                status: 404,
                ..Fetched::default()
            }),
            _ => Err(format!("{url}: a private address, not fetched")),
        };
        Box::pin(async move { answer })
    }
}

fn html(body: &str) -> Fetched {
    typed("text/html; charset=utf-8", body)
}

fn typed(content_type: &str, body: &str) -> Fetched {
    Fetched {
        status: 200,
        headers: vec![("Content-Type".into(), content_type.into())],
        body: body.as_bytes().to_vec(),
    }
}

fn site(files: &[(&str, Fetched)]) -> Arc<dyn Subresources> {
    let files = files
        .iter()
        .map(|(path, fetched)| (format!("http://site.test{path}"), fetched.clone()))
        .collect();
    Arc::new(Site(files))
}

async fn renderer(timeout: Duration, max_subresources: u32) -> Renderer {
    let config = RenderConfig {
        chromium: chromium(),
        tabs: 2,
        timeout,
        max_subresources,
        // Longer than a crawl's: what a page's script does once its last request is answered
        // must be done on a loaded machine too.
        settle: Duration::from_millis(300),
    };
    Renderer::start(config)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

fn url(path: &str) -> Url {
    Url::parse(&format!("http://site.test{path}")).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const SHELL: &str = r#"<html><head><title>shell</title></head><body>
<div id="root">Loading...</div><script src="/app.js"></script></body></html>"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_script_writes_is_read_and_every_request_goes_through_the_crawler() {
    let renderer = renderer(Duration::from_secs(10), 16).await;
    let app = r#"
        document.getElementById('root').innerHTML =
            '<article><p>The article a reader sees.</p><a href="/two.html">two</a></article>';
        document.write('<a href="/three.html">three</a>');
        alert('a dialog does not block the page');
        fetch('/data.json').then(r => r.json()).then(d => {
            document.body.insertAdjacentHTML('beforeend', '<p id="data">' + d.text + '</p>');
        });
        fetch('http://10.0.0.1/private').catch(() => {});
        window.open('http://site.test/popup.html');
    "#;
    let files = [
        ("/app.js", typed("application/javascript", app)),
        (
            "/data.json",
            typed("application/json", r#"{"text": "from the XHR"}"#),
        ),
    ];
    let rendered = renderer
        .render(&url("/"), html(SHELL), site(&files))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for text in [
        "The article a reader sees.",
        r#"<a href="/two.html">two</a>"#,
        r#"<a href="/three.html">three</a>"#,
        "from the XHR",
    ] {
        assert!(rendered.html.contains(text), "{text}: {}", rendered.html);
    }
    assert!(!rendered.html.contains("Loading..."), "{}", rendered.html);
    let asked: Vec<&Requested> = rendered.requests.iter().collect();
    let fetched = |path: &str| {
        asked.iter().any(
            |r| matches!(r, Requested::Fetched { url, status: 200, .. } if url.ends_with(path)),
        )
    };
    assert!(fetched("/app.js") && fetched("/data.json"), "{asked:?}");
    assert!(
        asked.iter().any(|r| matches!(
            r,
            Requested::Refused { url, reason } if url.starts_with("http://10.0.0.1/")
                && reason.contains("private address")
        )),
        "{asked:?}"
    );
    assert!(
        !asked.iter().any(|r| format!("{r:?}").contains("popup")),
        "no pop-up: {asked:?}"
    );
    let bytes: u64 = asked.iter().map(|r| r.bytes()).sum();
    assert_eq!(
        bytes,
        (app.len() + r#"{"text": "from the XHR"}"#.len()) as u64
    );
    renderer.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_s_requests_past_its_budget_are_refused_without_asking() {
    let renderer = renderer(Duration::from_secs(10), 3).await;
    let page = r#"<html><body><p id="n">none</p><script>
        let done = 0;
        for (let i = 0; i < 10; i++) {
            fetch('/item/' + i).finally(() => { done++; document.getElementById('n').textContent = 'answered ' + done; });
        }
    </script></body></html>"#;
    let rendered = renderer
        .render(&url("/many.html"), html(page), site(&[]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // (The browser's own request for a favicon comes last, over the budget too.)
    let items = || (rendered.requests.iter()).filter(|r| format!("{r:?}").contains("/item/"));
    let over = items()
        .filter(|r| matches!(r, Requested::OverBudget { .. }))
        .count();
    assert_eq!(
        (items().count() - over, over),
        (3, 7),
        "{:?}",
        rendered.requests
    );
    // The page went on: its script saw its requests answered or refused.
    assert!(rendered.html.contains("answered "), "{}", rendered.html);
    renderer.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_that_loops_times_out_and_the_next_page_renders() {
    let renderer = renderer(Duration::from_secs(2), 16).await;
    let endless = "<html><body><p>before</p><script>while (true) {}</script></body></html>";
    let error = renderer
        .render(&url("/endless.html"), html(endless), site(&[]))
        .await
        .unwrap_err();
    assert!(matches!(error, RenderError::TimedOut { .. }), "{error}");
    assert!(
        error.to_string().starts_with("not rendered within 2000 ms"),
        "{error}"
    );
    let next = renderer
        .render(&url("/next.html"), html("<p>the next page</p>"), site(&[]))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(next.html.contains("the next page"), "{}", next.html);
    renderer.close().await;
}

#[tokio::test]
async fn a_browser_that_is_not_there_is_named() {
    let config = RenderConfig {
        chromium: PathBuf::from("/no/such/chromium"),
        ..RenderConfig::default()
    };
    let error = Renderer::start(config).await.unwrap_err();
    assert!(
        error
            .to_string()
            .contains("no browser at /no/such/chromium"),
        "{error}"
    );
}
