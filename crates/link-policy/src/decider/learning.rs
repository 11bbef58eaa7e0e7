//! What the crawl learns, in the [`Decider`]: the URL rules and session parameters
//! ([`Learned`]), changed only by [`RuleEvent`]s, made here or, in a job shared through a log
//! ([`RuleLog`]), appended to the job's log and made by replaying it; and the fate the rules
//! give a URL when it is found or handed out.

use nearcrawl_frontier::CanonicalUrl;
use url::Url;

use super::Decider;
use crate::evidence::CopyFacts;
use crate::fate::Fate;
use crate::learned::{Learned, RuleEvent};
use crate::rule_log::{RuleLog, Shared};
use crate::rules::Known;

impl Decider {
    /// Goes on with `learned` (what a store kept, or nothing), learning from now on when
    /// `learning` (not in a baseline crawl: it fetches everything, its rules would only be
    /// measured) and, in a job shared through a log, from the job's `log`, replayed at once
    /// (the store keeps nothing then).
    pub fn start_learning(
        &mut self,
        learned: Learned,
        learning: bool,
        log: Option<Box<dyn RuleLog>>,
    ) -> Result<(), String> {
        self.learned = learned;
        self.shared = None;
        if learning {
            self.learned.start(log.is_some());
            self.shared = log.map(Shared::new);
            self.catch_up(true)?;
        }
        Ok(())
    }

    /// What the crawl learned, as it stands.
    pub fn learned(&self) -> &Learned {
        &self.learned
    }

    /// What the crawl learned, to take what is to be kept.
    pub fn learned_mut(&mut self) -> &mut Learned {
        &mut self.learned
    }

    /// A shared job: replays the events the job's log gained since it was last read, when
    /// the log says that is due (or `now`).
    pub fn catch_up(&mut self, now: bool) -> Result<(), String> {
        match &mut self.shared {
            Some(shared) => shared.catch_up(&mut self.learned, now),
            None => Ok(()),
        }
    }

    /// A change: made here, or in a shared job appended to the job's log and made by
    /// replaying it (with whatever other workers appended before it).
    fn change(&mut self, event: RuleEvent) -> Result<(), String> {
        match &mut self.shared {
            None => {
                self.learned.apply(event);
                Ok(())
            }
            Some(shared) => shared.append(&mut self.learned, &event),
        }
    }

    /// A duplicate at `duplicate` of the page at `original`: evidence of a session
    /// parameter ([`Learned::observe_session`]), appended to a shared job's log once
    /// learned. What to record when one is.
    pub fn observe_session(
        &mut self,
        duplicate: &str,
        original: Option<&str>,
    ) -> Result<Option<String>, String> {
        let (Ok(duplicate), Some(Ok(original))) = (
            CanonicalUrl::parse(duplicate),
            original.map(CanonicalUrl::parse),
        ) else {
            return Ok(None);
        };
        let Some(name) = self.learned.observe_session(&duplicate, &original) else {
            return Ok(None);
        };
        if self.shared.is_some() {
            let host = duplicate.authority();
            self.change(RuleEvent::Session {
                host,
                name: name.clone(),
            })?;
        }
        Ok(Some(format!(
            "trap: session parameter {name} learned for this host ({} duplicates differ from \
             their originals only in its value); stripped from its URLs from now on",
            nearcrawl_frontier::EVIDENCE
        )))
    }

    /// A page at `url` was rendered; `static_text`: its static response carried the text
    /// the browser showed. When it did not, its host serves shells, learned
    /// ([`RuleEvent::Shells`]; in a shared job appended to the job's log): a cheap check of a
    /// static response there tells nothing of a page's text ([`Decider::static_text`]).
    pub fn rendered(&mut self, url: &str, static_text: bool) -> Result<(), String> {
        let Ok(url) = Url::parse(url) else {
            return Ok(());
        };
        let host = nearcrawl_frontier::authority(&url);
        if static_text || self.learned.serves_shells(&host) {
            return Ok(());
        }
        self.change(RuleEvent::Shells { host })
    }

    /// Whether a cheap check of the static responses at `urls` (a page's and its
    /// counterpart's: their lengths, a sample) can tell their text: not on a host that serves
    /// shells ([`Decider::rendered`]).
    pub fn static_text(&self, urls: &[&str]) -> bool {
        let serves_shells = |url: &&str| {
            Url::parse(url).map_or(true, |url| {
                (self.learned).serves_shells(&nearcrawl_frontier::authority(&url))
            })
        };
        !self.learned.knows_shells() || !urls.iter().any(serves_shells)
    }

    /// The URL rules' fate for a URL not fetched yet ([`Learned::fate`]), the counterpart a
    /// rule names counting when the crawl holds that page (`known`).
    pub fn rule_fate(&mut self, url: &Url, known: &dyn Known) -> Fate {
        self.learned.fate(url, known)
    }

    /// The fate of a queued URL about to be handed out (`decided`: its entry carries a
    /// decision already: a probe, a prediction other than to check, a sitemap, a redirect)
    /// that no rule had a prediction to act on for when it was found (its link was found
    /// before the pairs that teach the rule were judged, or while its rule was only to be
    /// checked: a language's chapters found on its second page, their rule trusted enough to
    /// sample by the time they are handed out). A trusted prediction to skip it is the reason
    /// it is not fetched, returned (the frontier's veto); any other prediction waits for its
    /// step ([`Decider::dispatched`]).
    pub fn at_dispatch(&mut self, url: &str, decided: bool, known: &dyn Known) -> Option<String> {
        self.dispatched = None;
        if !self.learned.has_rules() || decided {
            return None;
        }
        let parsed = Url::parse(url).ok()?;
        let fate = self.learned.fate(&parsed, known);
        let veto = match (&fate, fate.rule()) {
            (Fate::Skip { .. }, Some(e)) => Some(format!(
                "predicted: {url} copies {} by the URL rule {}",
                e.page(),
                e.rule_text
            )),
            _ => None,
        };
        self.dispatched = Some((url.to_owned(), fate));
        veto
    }

    /// What [`Decider::at_dispatch`] decided for the queued URL `url`, handed out now to be
    /// fetched or decided.
    pub fn dispatched(&mut self, url: &str) -> Option<Fate> {
        match self.dispatched.take() {
            Some((at, fate)) if at == url => Some(fate),
            _ => None,
        }
    }

    /// `copy` was judged to have the content of `original` (the two URLs as recorded), with
    /// what is known of it ([`Learned::learned`]) and the pages it linked to that its original
    /// does not (`added`, when it adds pages). A copy that added pages holds its rules back
    /// until each of those is decided; one that turns out a copy too lets go of the copies
    /// waiting on it alone ([`Learned::copy_decided`]).
    pub fn learn(
        &mut self,
        copy: &str,
        original: &str,
        facts: CopyFacts,
        added: &[String],
    ) -> Result<(), String> {
        if let Some(event) = self.learned.learned(copy, original, facts) {
            self.change(event)?;
            if facts.adds_pages == Some(true) {
                self.learned.added(copy, original, added);
            }
        }
        for event in self.learned.copy_decided(copy) {
            self.change(event)?;
        }
        Ok(())
    }

    /// A page whose URL rule `rule` (its number) predicted to copy `counterpart` was decided:
    /// a duplicate of `duplicate_of`, or not (`None`); by its probe (`unchanged`) or fetched
    /// whole; `verify`: the prediction was to be verified by length ([`Learned::checked`]).
    /// Whether the prediction was right.
    pub fn checked(
        &mut self,
        rule: (u32, &str),
        verify: bool,
        duplicate_of: Option<&str>,
        unchanged: bool,
    ) -> Result<bool, String> {
        let (right, event) = self.learned.checked(rule, verify, duplicate_of, unchanged);
        self.change(event)?;
        Ok(right)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::evidence::{Held, PolicyConfig, Predict};
    use crate::settings::LinkSettings;
    use nearcrawl_url_rules::RuleId;

    /// A job's log in memory, shared by the workers given it; `due`: whether a worker reads
    /// it when not told to.
    #[derive(Debug, Clone, Default)]
    struct Log {
        events: Arc<Mutex<Vec<Vec<u8>>>>,
        due: bool,
    }

    impl RuleLog for Log {
        fn due(&self) -> bool {
            self.due
        }
        fn read(&mut self, from: u64, max: usize) -> Result<Vec<Vec<u8>>, String> {
            let events = self.events.lock().map_err(|e| e.to_string())?;
            let from = usize::try_from(from)
                .unwrap_or(usize::MAX)
                .min(events.len());
            Ok(events[from..].iter().take(max).cloned().collect())
        }
        fn append(&mut self, event: &[u8]) -> Result<(), String> {
            (self.events.lock().map_err(|e| e.to_string())?).push(event.to_vec());
            Ok(())
        }
    }

    /// Rules trusted from their first pair, taken without a request.
    const SKIP: PolicyConfig = PolicyConfig {
        predict: Predict::Skip,
        min_support: 1,
        min_trust: 0.0,
        explore: 0,
        probes: false,
    };

    fn worker(log: Option<&Log>) -> Decider {
        let mut decider = Decider::new(LinkSettings::default());
        let learned = Learned::new(SKIP, None).unwrap_or_default();
        let log = log.map(|log| Box::new(log.clone()) as Box<dyn RuleLog>);
        assert_eq!(decider.start_learning(learned, true, log), Ok(()));
        decider
    }

    fn held(_: &Url) -> Option<Held> {
        Some(Held {
            length: 2_000,
            sample_cost: None,
            head_cost: 256,
        })
    }

    #[test]
    fn workers_of_a_shared_job_learn_through_its_log_and_read_it_when_due() {
        let log = Log::default();
        let (mut a, mut b) = (worker(Some(&log)), worker(Some(&log)));
        let pair = ("http://m.test/story/1/", "http://o.test/a/1.html");
        assert_eq!(a.learn(pair.0, pair.1, CopyFacts::default(), &[]), Ok(()));
        // Made by replaying the log (each pair teaches its rule both ways).
        let rules = a.learned().book().len();
        assert!(rules > 0);
        assert_eq!(b.learned().book().len(), 0);
        // Not due: b's copy lags the log a moment.
        assert_eq!(b.catch_up(false), Ok(()));
        assert_eq!(b.learned().book().len(), 0);
        assert_eq!(b.catch_up(true), Ok(()));
        assert_eq!(b.learned().book().len(), rules);
        // A worker joining later replays it all; one of its own job learns alone.
        assert_eq!(worker(Some(&log)).learned().book().len(), rules);
        let mut alone = worker(None);
        assert_eq!(
            alone.learn(pair.0, pair.1, CopyFacts::default(), &[]),
            Ok(())
        );
        let logged = log.events.lock().map(|e| e.len()).unwrap_or(0);
        assert_eq!((alone.learned().book().len(), logged), (rules, 1));
        // A log that cannot be read is an error naming the event.
        log.events
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(b"garbled".to_vec());
        let err = b.catch_up(true).unwrap_err();
        assert!(err.starts_with("the job's rule log, event 1:"), "{err}");
    }

    #[test]
    fn a_host_serving_shells_is_learned_once_by_every_worker() {
        let log = Log::default();
        let (mut a, mut b) = (worker(Some(&log)), worker(Some(&log)));
        let (page, other) = ("http://spa.test/a/1.html", "http://spa.test/m/2.html");
        // A page whose static response carried its text teaches nothing.
        assert_eq!(a.rendered(page, true), Ok(()));
        assert!(a.static_text(&[other]));
        // A shell's: its host's responses tell nothing of their text, to every worker.
        assert_eq!(a.rendered(page, false), Ok(()));
        assert!(!a.static_text(&[other]));
        assert!(a.static_text(&["http://text.test/a.html"]));
        assert_eq!(b.catch_up(true), Ok(()));
        assert!(!b.static_text(&[other]));
        // Learned once: a second shell appends nothing.
        assert_eq!(a.rendered(other, false), Ok(()));
        assert_eq!(log.events.lock().map(|e| e.len()).unwrap_or(0), 1);
        // A URL that is none can tell nothing.
        assert!(!a.static_text(&["not a url"]));
    }

    #[test]
    fn a_queued_url_a_trusted_rule_skips_is_vetoed_when_handed_out() {
        let mut decider = worker(None);
        let pair = ("http://m.test/story/1/", "http://o.test/a/1.html");
        assert_eq!(
            decider.learn(pair.0, pair.1, CopyFacts::default(), &[]),
            Ok(())
        );
        let url = "http://m.test/story/2/";
        // (what it protects, its entry decided already, the veto, the fate it is handed out
        // with)
        let cases = [
            (
                "a URL no rule acted on when found: skipped now",
                false,
                true,
            ),
            (
                "an entry that carries a decision: asked nothing",
                true,
                false,
            ),
        ];
        for (what, decided, vetoed) in cases {
            let veto = decider.at_dispatch(url, decided, &held);
            assert_eq!(veto.is_some(), vetoed, "{what}");
            if let Some(veto) = veto {
                assert!(
                    veto.starts_with(
                        "predicted: http://m.test/story/2/ copies http://o.test/a/2.html"
                    ),
                    "{veto}"
                );
                assert!(
                    decider.dispatched("http://m.test/story/3/").is_none(),
                    "{what}: another URL"
                );
            } else {
                assert!(decider.dispatched(url).is_none(), "{what}");
            }
        }
        assert!(decider.at_dispatch(url, false, &held).is_some());
        assert!(matches!(decider.dispatched(url), Some(Fate::Skip { .. })));
        assert!(decider.dispatched(url).is_none(), "taken once");
    }

    #[test]
    fn a_copy_whose_own_links_led_to_other_copies_lets_its_rules_go() {
        let adds = CopyFacts {
            adds_pages: Some(true),
            ..CopyFacts::default()
        };
        // Whether a rule the pairs taught is held back by a copy adding pages.
        let held_back = |decider: &Decider| {
            let book = decider.learned().book();
            (0..book.len())
                .filter_map(|n| book.stats(RuleId::from_number(n as u32)))
                .any(|stats| stats.adding > 0)
        };
        let story = |n: u32| format!("http://m.test/story/{n}/");
        let article = |n: u32| format!("http://o.test/a/{n}.html");
        // (what it protects, what the first copy's own links led to, judged copies after it,
        // whether its rules are still held back)
        let cases: [(&str, &[u32], &[u32], bool); 4] = [
            (
                "a mirror's related links, each to another of its copies",
                &[2, 3],
                &[2, 3],
                false,
            ),
            (
                "a related link not decided yet holds the rules back",
                &[2, 3],
                &[2],
                true,
            ),
            (
                "a copy that adds a chapter nothing else names",
                &[9],
                &[2],
                true,
            ),
            (
                "a copy said to add pages, none named, holds them back",
                &[],
                &[2],
                true,
            ),
        ];
        for (what, added, copies, want) in cases {
            let mut decider = worker(None);
            let added: Vec<String> = added.iter().map(|&n| story(n)).collect();
            let first = (story(1), article(1));
            assert_eq!(decider.learn(&first.0, &first.1, adds, &added), Ok(()));
            for &n in copies {
                let learned = decider.learn(&story(n), &article(n), CopyFacts::default(), &[]);
                assert_eq!(learned, Ok(()), "{what}");
            }
            assert_eq!(held_back(&decider), want, "{what}");
        }
    }
}
