//! A crawl's journal fed to the policy alone: the same fates, and a changed answer noticed.

use std::convert::Infallible;

use super::*;
use crate::{By, Decider, Fate, Followed, How, LinkSettings, PageFacts};

/// A crawl that holds the old release's chapter, decided and no hub, seen.
struct Old;

impl Crawl for Old {
    type Url = Url;
    type Error = Infallible;
    fn url<'u>(&self, url: &'u Url) -> &'u Url {
        url
    }
    fn counterpart(
        &self,
        _sessions: &nearcrawl_frontier::SessionParams,
        page: &Url,
        original: &Url,
        target: &Url,
    ) -> Option<Url> {
        nearcrawl_url_rules::carry(target, page, original)
    }
    fn hub(&self, _: &Url) -> Result<Option<bool>, Infallible> {
        Ok(Some(false))
    }
    fn hub_yield(&self, _: &Url) -> Result<Option<(u64, HubYield)>, Infallible> {
        Ok(None)
    }
    fn seen(&self, _: &Url) -> Result<bool, Infallible> {
        Ok(true)
    }
    fn seen_here(&self, _: &Url) -> Result<bool, Infallible> {
        Ok(true)
    }
    fn canonical(&self, url: Url) -> Option<Url> {
        Some(url)
    }
}

fn url(s: &str) -> Url {
    Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn a_journal_replays_to_the_same_fates_and_a_changed_answer_diverges() {
    let settings = LinkSettings {
        hub_min_links: 3,
        hub_min_yield: 1.0,
        probe_links: true,
        ..LinkSettings::default()
    };
    let mut decider = Decider::new(settings);
    decider.keep_journal();
    let (new, old) = (url("http://new.test/a.html"), url("http://old.test/a.html"));
    decider.note_copy(&new, &old);
    let on = decider.found_on(PageFacts {
        copy_of: Some((&new, &old)),
        matched_by: Some(crate::LinkMatch::Target),
        trapped: false,
        original_declared: true,
        local: true,
        page: None,
    });
    let link = url("http://new.test/b.html");
    let Ok(found) = decider.found(&Old, &on, &link, Followed::No);
    assert!(
        matches!(
            found,
            Fate::Check {
                how: How::Length,
                ..
            }
        ),
        "{found:?}"
    );
    let events = decider.take_events();
    assert!(matches!(events[0], Event::Start { .. }));
    assert_eq!(
        events.len(),
        4,
        "start, copy, found, then the URL rules' start"
    );
    // Fed alone, through their JSON lines.
    let lines: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .collect();
    let mut replay = Replay::new();
    for line in &lines {
        let event: Event = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(replay.feed(event), Ok(()));
    }
    assert_eq!((replay.events, replay.fates), (4, 1));
    // The counterpart said not seen: the policy drops the link, where the crawl probed it.
    let mut replay = Replay::new();
    for event in events {
        let event = match event {
            Event::Found(mut found) => {
                for answer in &mut found.answers {
                    if let Answer::Seen { answer, .. } = answer {
                        *answer = false;
                    }
                }
                Event::Found(found)
            }
            other => other,
        };
        let found = matches!(event, Event::Found(_));
        let fed = replay.feed(event);
        if found {
            let Err(Diverged(why)) = fed else {
                panic!("the changed answer went unnoticed");
            };
            assert!(why.contains("http://new.test/b.html found"), "{why}");
        }
    }
}

#[test]
fn the_url_rules_journal_replays_to_the_same_fates() {
    use crate::{CopyFacts, Held, LinkPolicy, PolicyConfig, Predict};
    let config = PolicyConfig {
        predict: Predict::Skip,
        min_support: 2,
        min_trust: 0.5,
        explore: 3,
        probes: true,
    };
    let mut policy = LinkPolicy::new(config);
    policy.keep_journal();
    let facts = CopyFacts::default();
    for n in [1, 2] {
        let (copy, original) = (
            url(&format!("http://m.test/{n}")),
            url(&format!("http://o.test/{n}")),
        );
        policy.learn(&copy, &original, facts);
    }
    let held = |u: &Url| (u.as_str() != "http://o.test/9").then_some(Held::default());
    let fates: Vec<_> = (3..10)
        .map(|n| policy.fate(&url(&format!("http://m.test/{n}")), &held))
        .collect();
    assert!(
        fates
            .iter()
            .any(|f| matches!(f, Fate::Skip { by: By::Rule(_) })),
        "{fates:?}"
    );
    let events = policy.take_events();
    let mut replay = Replay::new();
    for event in events.clone() {
        assert_eq!(replay.feed(event), Ok(()));
    }
    assert_eq!(replay.fates, 7);
    // What the crawl held of a counterpart told otherwise: the policy decides otherwise.
    let mut replay = Replay::new();
    let mut diverged = None;
    for event in events {
        let event = match event {
            Event::RuleFate {
                url,
                mut held,
                fate,
            } if url == "http://m.test/4" => {
                held[0].1 = None;
                Event::RuleFate { url, held, fate }
            }
            other => other,
        };
        if let Err(Diverged(why)) = replay.feed(event) {
            diverged = Some(why);
            break;
        }
    }
    let why = diverged.unwrap_or_default();
    assert!(why.contains("http://m.test/4 asked of the rules"), "{why}");
}
