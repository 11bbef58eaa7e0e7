//! robots.txt as RFC 9309 says to treat it: a parsed file on 2xx, allow-all on 4xx,
//! disallow-all while the file is unavailable (5xx, network errors), up to five redirects.

use std::time::Duration;

use texting_robots::Robot;
use url::Url;

use crate::fetched::Fetched;
use crate::fetcher::Fetcher;

/// How the robots.txt request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RobotsSource {
    /// 2xx: the rules come from the file.
    Parsed,
    /// 2xx, but nothing in it could be parsed: everything allowed.
    Unparsable,
    /// 4xx: no rules, everything allowed.
    Missing(u16),
    /// 5xx, a network error or too many redirects: nothing allowed until it is fetched
    /// again.
    Unavailable(String),
}

/// A host's robots rules for our agent.
#[derive(Debug)]
pub struct RobotsRules {
    robot: Option<Robot>,
    /// Where the rules came from.
    pub source: RobotsSource,
    /// `Crawl-delay` for our agent.
    pub crawl_delay: Option<Duration>,
    /// `Sitemap:` lines.
    pub sitemaps: Vec<String>,
    /// The file's text when it was parsed (2xx): what [`RobotsRules::to_shared`] hands to
    /// other workers of a shared job.
    body: Vec<u8>,
}

impl RobotsRules {
    /// Rules from a robots.txt response (`status`, `body`) for `agent`.
    pub fn from_response(agent: &str, status: u16, body: &[u8]) -> RobotsRules {
        match status {
            200..=299 => match Robot::new(agent, body) {
                Ok(robot) => RobotsRules {
                    crawl_delay: robot
                        .delay
                        .filter(|d| d.is_finite() && *d >= 0.0)
                        .map(|d| Duration::from_secs_f32(d.min(86_400.0))),
                    sitemaps: robot.sitemaps.clone(),
                    robot: Some(robot),
                    source: RobotsSource::Parsed,
                    body: body.to_vec(),
                },
                Err(_) => RobotsRules::allow_all(RobotsSource::Unparsable),
            },
            400..=499 => RobotsRules::allow_all(RobotsSource::Missing(status)),
            _ => RobotsRules::unavailable(format!("robots.txt answered HTTP {status}")),
        }
    }

    /// No rules: everything allowed.
    pub fn allow_all(source: RobotsSource) -> RobotsRules {
        RobotsRules {
            robot: None,
            source,
            crawl_delay: None,
            sitemaps: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The rules as bytes another worker turns back into the same rules
    /// ([`RobotsRules::from_shared`]): `200` and the file for parsed rules, `allow` for none.
    /// Unavailable rules are not shared (the host backs off instead).
    pub fn to_shared(&self) -> Vec<u8> {
        match self.source {
            RobotsSource::Parsed => [&b"200\n"[..], &self.body].concat(),
            _ => b"allow\n".to_vec(),
        }
    }

    /// Rules for `agent` from [`RobotsRules::to_shared`]'s bytes; bytes of another shape
    /// allow everything, as an unparsable file does.
    pub fn from_shared(agent: &str, bytes: &[u8]) -> RobotsRules {
        match bytes.strip_prefix(b"200\n") {
            Some(body) => RobotsRules::from_response(agent, 200, body),
            None if bytes == b"allow\n" => RobotsRules::allow_all(RobotsSource::Missing(404)),
            None => RobotsRules::allow_all(RobotsSource::Unparsable),
        }
    }

    /// The file could not be had: nothing allowed for now.
    pub fn unavailable(reason: String) -> RobotsRules {
        RobotsRules::allow_all(RobotsSource::Unavailable(reason))
    }

    /// Whether the host is off-limits until robots.txt is fetched again.
    pub fn is_unavailable(&self) -> bool {
        matches!(self.source, RobotsSource::Unavailable(_))
    }

    /// Whether `url` may be fetched. `/robots.txt` itself is always allowed.
    pub fn allows(&self, url: &Url) -> bool {
        self.allows_text(url.as_str())
    }

    /// [`RobotsRules::allows`] for a URL as its text (a parsed URL's serialization, as a
    /// crawl's queue holds it), without parsing it here.
    pub fn allows_text(&self, url: &str) -> bool {
        if self.is_unavailable() {
            return false;
        }
        match &self.robot {
            Some(robot) => path_of(url) == "/robots.txt" || robot.allowed(url),
            None => true,
        }
    }
}

/// The path of a URL's serialization: from the first `/` after its authority up to its
/// query or fragment (`/` when it has none).
fn path_of(url: &str) -> &str {
    let Some(after_scheme) = url.find("://").map(|i| &url[i + 3..]) else {
        return url;
    };
    let rest = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
    let path = &rest[..rest.find(['?', '#']).unwrap_or(rest.len())];
    if path.is_empty() { "/" } else { path }
}

/// The robots.txt fetch for one host: the rules, and the responses that carried them (for
/// bandwidth accounting and the WARC files).
#[derive(Debug)]
pub struct RobotsFetch {
    /// The rules.
    pub rules: RobotsRules,
    /// Each response received, redirects included.
    pub responses: Vec<Fetched>,
}

const MAX_ROBOTS_REDIRECTS: usize = 5;

impl Fetcher {
    /// Fetches and parses `/robots.txt` of the host of `site`, following up to five redirects.
    pub async fn fetch_robots(&self, site: &Url) -> RobotsFetch {
        let agent = self.config().robots_agent().to_string();
        let mut responses = Vec::new();
        let mut url = match site.join("/robots.txt") {
            Ok(url) => url,
            Err(e) => {
                return RobotsFetch {
                    rules: RobotsRules::unavailable(e.to_string()),
                    responses,
                };
            }
        };
        for _ in 0..=MAX_ROBOTS_REDIRECTS {
            let fetched = match self
                .fetch_capped(&url, self.config().max_robots_bytes)
                .await
            {
                Ok(fetched) => fetched,
                // The message names the URL: after a redirect it is not the robots.txt asked for.
                Err(failure) => {
                    return RobotsFetch {
                        rules: RobotsRules::unavailable(failure.to_string()),
                        responses,
                    };
                }
            };
            let status = fetched.status;
            if (300..400).contains(&status) {
                match fetched.location() {
                    // Each hop is a request of its own, so the fetcher's address policy
                    // applies to it: a hop to an internal service is refused, not sent.
                    Some(Ok(next)) => {
                        url = next;
                        responses.push(fetched);
                        continue;
                    }
                    // A redirect without a usable Location: treat like a missing file.
                    _ => {
                        responses.push(fetched);
                        return RobotsFetch {
                            rules: RobotsRules::allow_all(RobotsSource::Missing(status)),
                            responses,
                        };
                    }
                }
            }
            let rules = RobotsRules::from_response(&agent, status, &fetched.body);
            responses.push(fetched);
            return RobotsFetch { rules, responses };
        }
        RobotsFetch {
            rules: RobotsRules::unavailable("robots.txt redirects more than 5 times".into()),
            responses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(rules: &RobotsRules, path: &str) -> bool {
        rules.allows(&Url::parse(&format!("http://example.com{path}")).unwrap())
    }

    /// The path read from a URL's text is the one its parse gives.
    #[test]
    fn path_of_a_url_text_is_its_parsed_path() {
        for text in [
            "http://example.com",
            "http://example.com/",
            "http://example.com/robots.txt",
            "http://example.com/robots.txt?x=1",
            "https://user:pw@example.com:8080/a/b.html?q=/c#frag",
            "http://example.com?x=/robots.txt",
            "http://[::1]:80/robots.txt#top",
            "http://example.com/%E2%82%AC/x;y",
        ] {
            let url = Url::parse(text).unwrap();
            assert_eq!(path_of(url.as_str()), url.path(), "{text}");
        }
    }

    proptest::proptest! {
        #[test]
        fn path_of_agrees_with_the_parse(
            host in "[a-z]{1,8}(\\.[a-z]{1,4})?",
            path in "(/[a-zA-Z0-9._~%!$&'()*+,;=:@-]{0,6}){0,4}",
            query in proptest::option::of("[a-zA-Z0-9=&/?:@-]{0,10}"),
        ) {
            let text = format!("http://{host}{path}{}", query.map(|q| format!("?{q}")).unwrap_or_default());
            if let Ok(url) = Url::parse(&text) {
                proptest::prop_assert_eq!(path_of(url.as_str()), url.path());
            }
        }
    }

    #[test]
    fn rules_by_status() {
        let body = b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: http://example.com/sm.xml\n\nUser-agent: nearcrawl\nDisallow: /no-bots/\nAllow: /no-bots/yes\nCrawl-delay: 0.5\n";
        let ours = RobotsRules::from_response("nearcrawl", 200, body);
        assert!(
            allows(&ours, "/private/x"),
            "our group replaces the * group"
        );
        assert!(!allows(&ours, "/no-bots/x"));
        assert!(allows(&ours, "/no-bots/yes"), "longest match wins");
        assert_eq!(ours.crawl_delay, Some(Duration::from_millis(500)));
        assert_eq!(ours.sitemaps, ["http://example.com/sm.xml"]);
        let other = RobotsRules::from_response("otherbot", 200, body);
        assert!(!allows(&other, "/private/x"));
        assert_eq!(other.crawl_delay, Some(Duration::from_secs(2)));

        let missing = RobotsRules::from_response("nearcrawl", 404, b"");
        assert!(allows(&missing, "/anything"));
        assert_eq!(missing.source, RobotsSource::Missing(404));
        let down = RobotsRules::from_response("nearcrawl", 503, b"");
        assert!(!allows(&down, "/anything"), "5xx: disallow for now");
        assert!(down.is_unavailable());
        // Shared with another worker, the rules are the same.
        let shared = RobotsRules::from_shared("nearcrawl", &ours.to_shared());
        assert!(!allows(&shared, "/no-bots/x"));
        assert!(allows(&shared, "/no-bots/yes"));
        assert_eq!(shared.crawl_delay, ours.crawl_delay);
        assert!(allows(
            &RobotsRules::from_shared("nearcrawl", &missing.to_shared()),
            "/x"
        ));
    }

    #[test]
    fn disallow_all_and_empty() {
        let all = RobotsRules::from_response("nearcrawl", 200, b"User-agent: *\nDisallow: /\n");
        assert!(!allows(&all, "/"));
        assert!(allows(&all, "/robots.txt"));
        let empty = RobotsRules::from_response("nearcrawl", 200, b"");
        assert!(allows(&empty, "/x"));
    }
}
