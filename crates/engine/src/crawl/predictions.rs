//! The link policy's rules in the crawl (`dedup.predict`): what the crawl learned
//! ([`nearcrawl_link_policy::Learned`]: the URL rules its duplicates teach, the session
//! parameters) kept in the store as blobs when it says so, or in a job shared through Redis
//! appended to the job's rule log ([`nearcrawl_redis_job::RuleLog`]) and replayed by every
//! worker in the log's order (`predictions/log.rs`); a fate carried out on a queue entry, and
//! a predicted duplicate's record.

use nearcrawl_dedup::{DedupStageConfig, Predict};
use nearcrawl_frontier::CanonicalUrl;
use nearcrawl_link_policy::{CopyFacts, Fate, Learned, RuleEvent};
use nearcrawl_records::{Prediction, Probe, Verdict};
use nearcrawl_store::{CrawlStore, QueuedUrl, StoreError};
use url::Url;

use super::declarations::Declarations;
use crate::error::EngineError;

mod log;

pub(super) use log::SharedRules;

/// The store's name for the rule book.
pub(super) const URL_RULES: &str = "url_rules";

/// The store's name for the session parameters learned: (host, name) pairs, as JSON.
pub(super) const SESSION_PARAMS: &str = "session_params";

/// What the crawl learned ([`Learned`]: the URL rules, the session parameters) and where its
/// changes go: made here, or appended to a shared job's log and replayed.
#[derive(Debug)]
pub(super) struct Predictions {
    learned: Learned,
    /// What was decided for the URL about to be handed out ([`Predictions::at_dispatch`]),
    /// until its step is taken: its URL and that.
    dispatched: Option<(String, Fate)>,
    /// A shared job's log, which the book replays (none: the book is this process's).
    shared: Option<SharedRules>,
}

impl Predictions {
    /// The policy of the job's `dedup` settings, going on with the book `store` kept, if
    /// any, or in a job shared through Redis with the job's log (`shared`: the book is the
    /// log replayed, and the store keeps none). Off in a baseline crawl (it fetches
    /// everything: its rules would only be measured).
    pub(super) fn open(
        dedup: &DedupStageConfig,
        shared: Option<SharedRules>,
        store: &dyn CrawlStore,
    ) -> Result<Predictions, EngineError> {
        let mut config = dedup.policy();
        if !dedup.enabled {
            config.predict = Predict::Off;
        }
        let corrupt = |name: &str, e: String| StoreError::Corrupt {
            table: "blobs",
            reason: format!("{name}: {e}"),
        };
        let kept = match shared {
            Some(_) => None,
            None => store.blob(URL_RULES)?,
        };
        let mut learned =
            Learned::new(config, kept.as_deref()).map_err(|e| corrupt(URL_RULES, e))?;
        if shared.is_none()
            && let Some(bytes) = store.blob(SESSION_PARAMS)?
        {
            (learned.adopt_sessions(&bytes)).map_err(|e| corrupt(SESSION_PARAMS, e))?;
        }
        let mut predictions = Predictions {
            learned,
            dispatched: None,
            shared: None,
        };
        if dedup.enabled {
            predictions.learned.start(shared.is_some());
            predictions.shared = shared;
            predictions.catch_up(true)?;
        }
        Ok(predictions)
    }

    /// What the crawl learned, as it stands.
    pub(super) fn learned(&self) -> &Learned {
        &self.learned
    }

    /// What the crawl learned, to take what is to be kept or journaled.
    pub(super) fn learned_mut(&mut self) -> &mut Learned {
        &mut self.learned
    }

    /// A shared job: replays the events the job's log gained since the book last read it,
    /// when it was last read more than a moment ago (or `now`).
    pub(super) fn catch_up(&mut self, now: bool) -> Result<(), EngineError> {
        match &mut self.shared {
            Some(shared) => shared.catch_up(&mut self.learned, now),
            None => Ok(()),
        }
    }

    /// A change: made here, or in a shared job appended to the job's log and made by
    /// replaying it (with whatever other workers appended before it).
    fn change(&mut self, event: RuleEvent) -> Result<(), EngineError> {
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
    pub(super) fn observe_session(
        &mut self,
        duplicate: &str,
        original: Option<&str>,
    ) -> Result<Option<String>, EngineError> {
        let (Ok(duplicate), Some(Ok(original))) = (
            CanonicalUrl::parse(duplicate),
            original.map(CanonicalUrl::parse),
        ) else {
            return Ok(None);
        };
        let Some(name) = self.learned.observe_session(&duplicate, &original) else {
            return Ok(None);
        };
        let host = duplicate.authority();
        tracing::info!(%host, param = %name, "learned a session parameter");
        if self.shared.is_some() {
            let name = name.clone();
            self.change(RuleEvent::Session { host, name })?;
        }
        Ok(Some(format!(
            "trap: session parameter {name} learned for this host ({} duplicates differ from \
             their originals only in its value); stripped from its URLs from now on",
            nearcrawl_frontier::EVIDENCE
        )))
    }

    /// The policy's fate for a URL not fetched yet ([`Learned::fate`]), the counterpart a
    /// rule names counting when the crawl holds that page ([`Declarations::counterpart`]). [`apply`] carries it
    /// out on the URL's queue entry.
    pub(super) fn for_url(&mut self, declarations: &Declarations, url: &Url) -> Fate {
        (self.learned).fate(url, &|counterpart: &Url| {
            declarations.counterpart(counterpart)
        })
    }

    /// The fate of a queued URL about to be handed out that no rule had a prediction to act
    /// on for when it was found (its link was found before the pairs that teach the rule
    /// were judged, or while its rule was only to be checked: a language's chapters found on
    /// its second page, their rule trusted enough to sample by the time they are handed
    /// out): a trusted prediction to skip it is the reason it is not fetched (the frontier's
    /// veto); any other prediction waits for its step ([`Predictions::dispatched`]).
    pub(super) fn at_dispatch(
        &mut self,
        declarations: &Declarations,
        entry: &QueuedUrl,
    ) -> Option<(Verdict, String)> {
        self.dispatched = None;
        if !self.learned.has_rules()
            || entry.probe.is_some()
            || entry.predicted.as_ref().is_some_and(|p| p.fate != "check")
            || entry.sitemap
            || entry.redirects > 0
        {
            return None;
        }
        let url = Url::parse(&entry.url).ok()?;
        let decided = self.for_url(declarations, &url);
        let veto = match (&decided, decided.rule()) {
            (Fate::Skip { .. }, Some(e)) => Some((
                Verdict::Predicted,
                format!(
                    "predicted: {} copies {} by the URL rule {}",
                    entry.url,
                    e.page(),
                    e.rule_text
                ),
            )),
            _ => None,
        };
        self.dispatched = Some((entry.url.clone(), decided));
        veto
    }

    /// The queued URL `entry`, handed out to be fetched or decided, with what
    /// [`Predictions::at_dispatch`] decided for it ([`apply`]).
    pub(super) fn dispatched(&mut self, mut entry: QueuedUrl) -> QueuedUrl {
        if let Some((url, decided)) = self.dispatched.take()
            && url == entry.url
        {
            apply(decided, &mut entry);
        }
        entry
    }

    /// `copy` was judged to have the content of `original` (the two URLs as recorded), with
    /// what is known of it ([`Learned::learned`]).
    pub(super) fn learn(
        &mut self,
        copy: &str,
        original: &str,
        facts: CopyFacts,
    ) -> Result<(), EngineError> {
        match self.learned.learned(copy, original, facts) {
            Some(event) => self.change(event),
            None => Ok(()),
        }
    }

    /// A page whose URL had `prediction` was decided: a duplicate of `duplicate_of`, or
    /// not (`None`); by its probe (`unchanged`) or fetched whole ([`Learned::checked`]).
    /// The prediction with its answer, for the page's record.
    pub(super) fn check(
        &mut self,
        mut prediction: Prediction,
        duplicate_of: Option<&str>,
        unchanged: bool,
    ) -> Result<Prediction, EngineError> {
        let rule = (prediction.rule_id, prediction.counterpart.as_str());
        let verify = prediction.fate == "verify";
        let (right, event) = self.learned.checked(rule, verify, duplicate_of, unchanged);
        prediction.right = Some(right);
        self.change(event)?;
        Ok(prediction)
    }
}

/// Carries the link policy's fate for a URL (see [`Predictions::for_url`]) out on its queue
/// entry: its prediction, checked when the page is decided, and for a verification or a
/// sample its probe against the counterpart (a HEAD must find a length the rule's copies
/// have had before parts are asked). Returns the prediction of a URL not to be
/// requested ([`Fate::Skip`]), for its record ([`crate::record::predicted`]). A fate no rule decided
/// changes nothing.
pub(super) fn apply(fate: Fate, entry: &mut QueuedUrl) -> Option<Prediction> {
    let (name, e) = fate.prediction()?;
    let (window, copies) = match name {
        "verify" => (None, e.sample_window()),
        _ => (e.sample_window(), None),
    };
    let probe = matches!(fate, Fate::Check { .. }).then(|| {
        Box::new(Probe {
            counterpart: e.page(),
            window,
            copies,
            ..Probe::default()
        })
    });
    let prediction = Prediction::of(name, e);
    entry.predicted = Some(Box::new(prediction.clone()));
    match fate {
        Fate::Skip { .. } => Some(prediction),
        _ => {
            entry.probe = probe;
            None
        }
    }
}

#[cfg(test)]
mod tests;
