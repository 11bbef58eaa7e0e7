//! The link policy in the crawl (`dedup.predict`, crates/link-policy): the rules this crawl's
//! duplicates teach, the fate of each link they name a counterpart for, what became of each
//! prediction, and the book kept in the store.
//!
//! The book is kept as a blob with the decision that first relies on a rule it has not kept
//! yet (a queued URL naming that rule by its number), and otherwise every so many changes,
//! so that a resumed crawl numbers its rules as the queue it finds does; a resumed crawl
//! may have lost the last few changes' counts, never a rule a queued URL names.
//!
//! In a job shared through Redis the book is the job's: every change (a pair learned, a
//! prediction checked) is an event appended to the job's rule log
//! ([`nearcrawl_redis_job::RuleLog`]), and each worker's book is the log replayed in its
//! order, its own events included, so that every worker numbers the rules alike and a queued
//! URL's rule is the same rule to whichever worker takes it.

use nearcrawl_dedup::{DedupStageConfig, Predict};
use nearcrawl_frontier::{CanonicalUrl, SessionParams};
use nearcrawl_link_policy::{
    By, CopyFacts, Evidence, Fate, Held, How, Known, LinkPolicy, PolicyConfig, RuleBook,
};
use nearcrawl_records::{Prediction, Probe, Record, Verdict};
use nearcrawl_store::{CrawlStore, QueuedUrl, StoreError};
use url::Url;

use super::declarations::Declarations;
use crate::error::EngineError;

mod log;

pub(super) use log::SharedRules;
use log::{Book, RuleEvent};

/// The store's name for the rule book.
pub(super) const URL_RULES: &str = "url_rules";

/// The store's name for the session parameters learned: (host, name) pairs, as JSON.
pub(super) const SESSION_PARAMS: &str = "session_params";

/// Rules held at most: past it, pairs add support to the rules held and teach no new one.
const MAX_RULES: usize = 10_000;

/// Changes (pairs learned, predictions checked) after which the book is kept again, at
/// least; or an eighth of its rules, when more.
const KEEP_EVERY: u32 = 64;

/// The policy and what of it the store holds.
#[derive(Debug)]
pub(super) struct Predictions {
    policy: LinkPolicy,
    /// Rules in the book the store holds.
    kept_rules: usize,
    /// The highest rule number a queued URL relies on since the book was kept (+1).
    relied_on: usize,
    /// Changes since the book was kept.
    changes: u32,
    /// What was decided for the URL about to be handed out ([`Predictions::at_dispatch`]),
    /// until its step is taken: its URL and that.
    dispatched: Option<(String, Fate)>,
    /// A shared job's log, which the book replays (none: the book is this process's).
    shared: Option<SharedRules>,
    /// Session parameters learned per host from duplicates: a rule book of their own (a
    /// parameter whose value changes nothing), shared and kept like the URL rules.
    sessions: SessionParams,
    /// Whether a session parameter was learned since the store last kept them.
    sessions_changed: bool,
    /// Whether session parameters are learned at all (from duplicates: not in a baseline).
    learns_sessions: bool,
}

impl Predictions {
    /// The policy of `config`, going on with the book the store kept (`kept`), if any.
    pub(super) fn new(config: PolicyConfig, kept: Option<&[u8]>) -> Result<Predictions, String> {
        let mut book: RuleBook = match kept {
            Some(bytes) => serde_json::from_slice(bytes).map_err(|e| e.to_string())?,
            None => RuleBook::new(),
        };
        book.set_limit(MAX_RULES);
        let kept_rules = book.len();
        Ok(Predictions {
            policy: LinkPolicy::with_book(config, book),
            kept_rules,
            relied_on: 0,
            changes: 0,
            dispatched: None,
            shared: None,
            sessions: SessionParams::default(),
            sessions_changed: false,
            learns_sessions: false,
        })
    }

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
        let kept = match shared {
            Some(_) => None,
            None => store.blob(URL_RULES)?,
        };
        let mut predictions =
            Predictions::new(config, kept.as_deref()).map_err(|e| StoreError::Corrupt {
                table: "blobs",
                reason: format!("{URL_RULES}: {e}"),
            })?;
        if shared.is_none()
            && let Some(bytes) = store.blob(SESSION_PARAMS)?
        {
            let learned: Vec<(String, String)> =
                serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
                    table: "blobs",
                    reason: format!("{SESSION_PARAMS}: {e}"),
                })?;
            for (host, name) in learned {
                predictions.sessions.adopt(&host, &name);
            }
        }
        if dedup.enabled {
            predictions.learns_sessions = true;
            predictions.shared = shared;
            predictions.catch_up(true)?;
        }
        Ok(predictions)
    }

    /// A shared job: replays the events the job's log gained since the book last read it,
    /// when it was last read more than a moment ago (or `now`).
    pub(super) fn catch_up(&mut self, now: bool) -> Result<(), EngineError> {
        match self.book_and_log() {
            (book, Some(shared)) => shared.catch_up(book, now),
            (_, None) => Ok(()),
        }
    }

    /// What a change is made in, and the shared job's log it goes through, if any.
    fn book_and_log(&mut self) -> (Book<'_>, Option<&mut SharedRules>) {
        let book = Book {
            policy: &mut self.policy,
            sessions: &mut self.sessions,
        };
        (book, self.shared.as_mut())
    }

    /// A change to the book: made here, or in a shared job appended to the job's log and
    /// made by replaying it (with whatever other workers appended before it).
    fn change(&mut self, event: RuleEvent) -> Result<(), EngineError> {
        self.changes += 1;
        match self.book_and_log() {
            (mut book, None) => {
                event.apply(&mut book);
                Ok(())
            }
            (book, Some(shared)) => shared.append(book, &event),
        }
    }

    /// The session parameters learned, this process's and (in a shared job) the other
    /// workers'.
    pub(super) fn sessions(&self) -> &SessionParams {
        &self.sessions
    }

    /// A duplicate at `duplicate` of the page at `original`: evidence of a session
    /// parameter ([`SessionParams::observe`]). One learned is the job's: appended to a
    /// shared job's log, or kept in the store with the next decision. Returns its name.
    pub(super) fn observe_session(
        &mut self,
        duplicate: &CanonicalUrl,
        original: &CanonicalUrl,
    ) -> Result<Option<String>, EngineError> {
        let Some(name) = self.sessions.observe(duplicate, original) else {
            return Ok(None);
        };
        self.sessions_changed = true;
        if self.shared.is_some() {
            let host = duplicate.authority();
            let event = RuleEvent::Session {
                host,
                name: name.clone(),
            };
            self.change(event)?;
        }
        Ok(Some(name))
    }

    /// The page at `url` was fetched whole: remembered for a session parameter learned
    /// later ([`SessionParams::fetched`]).
    pub(super) fn fetched(&mut self, url: &str) {
        if self.learns_sessions {
            self.sessions.fetched(url);
        }
    }

    /// The URLs, without a session parameter learned since, of pages fetched under it
    /// before: seen already, to be taken with the decision being applied.
    pub(super) fn take_stripped(&mut self) -> Vec<CanonicalUrl> {
        self.sessions.take_stripped()
    }

    /// The session parameters to keep with the decision being applied, when one was
    /// learned since they were last kept (a shared job's log keeps them).
    pub(super) fn sessions_to_keep(&mut self) -> Option<Vec<u8>> {
        if !std::mem::take(&mut self.sessions_changed) || self.shared.is_some() {
            return None;
        }
        // Strings only: serialising cannot fail.
        Some(serde_json::to_vec(&self.sessions.learned()).unwrap_or_default())
    }

    /// From now on, the policy journals what it is fed ([`LinkPolicy::keep_journal`]).
    pub(super) fn keep_journal(&mut self) {
        self.policy.keep_journal();
    }

    /// The policy's events journaled since last taken.
    pub(super) fn take_events(&mut self) -> Vec<nearcrawl_link_policy::Event> {
        self.policy.take_events()
    }

    /// Whether rules are learned and asked at all.
    pub(super) fn enabled(&self) -> bool {
        self.policy.enabled()
    }

    /// The policy's fate for a URL not fetched yet (see [`LinkPolicy::fate`]): the
    /// counterpart a rule names counts when the crawl holds that page ([`held`]). A rule
    /// learned before a session parameter was (its counterpart carrying one) names the page
    /// without it. [`apply`] carries it out on the URL's queue entry.
    pub(super) fn for_url(&mut self, declarations: &Declarations, url: &Url) -> Fate {
        if !self.enabled() {
            return Fate::Fetch { by: By::New };
        }
        let sessions = &self.sessions;
        let page = |counterpart: &Url| match sessions.strip_str(counterpart.as_str()) {
            Some(stripped) => stripped.url.into_url(),
            None => counterpart.clone(),
        };
        let held = |counterpart: &Url| held(declarations, &page(counterpart));
        let mut fate = fate(&mut self.policy, &mut self.relied_on, url, &held);
        if let Some(e) = fate.rule_mut() {
            e.counterpart = page(&e.counterpart);
        }
        if let Fate::Check { against, .. } = &mut fate {
            *against = page(against);
        }
        fate
    }

    /// The page the most trusted rule says `url` copies, whatever its trust (`None` with
    /// rules off or none matching).
    pub(super) fn counterpart_of(&self, url: &Url) -> Option<Url> {
        if !self.enabled() || self.policy.book().is_empty() {
            return None;
        }
        self.policy.book().predict(url).map(|p| p.counterpart)
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
        if !self.enabled()
            || self.policy.book().is_empty()
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
                    counterpart(e),
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
    /// what is known of it. A session parameter the crawl learned is no part of either URL:
    /// the rule maps the pages, not the visits.
    pub(super) fn learn(
        &mut self,
        copy: &str,
        original: &str,
        facts: CopyFacts,
    ) -> Result<(), EngineError> {
        if !self.enabled() || Url::parse(copy).is_err() || Url::parse(original).is_err() {
            return Ok(());
        }
        self.change(RuleEvent::Learned {
            copy: without_sessions(&self.sessions, copy),
            original: without_sessions(&self.sessions, original),
            facts,
        })
    }

    /// A page whose URL had `prediction` was decided: a duplicate of `duplicate_of`, or
    /// not (`None`); by its probe (`unchanged`) or fetched whole. The prediction with its
    /// answer, for the page's record. A prediction verified by length that was right tells
    /// whether the length did (found it unchanged) or not (said it changed).
    pub(super) fn check(
        &mut self,
        mut prediction: Prediction,
        duplicate_of: Option<&str>,
        unchanged: bool,
    ) -> Result<Prediction, EngineError> {
        // The page it was found to copy, as a rule names pages.
        let without = |url: &str| without_sessions(&self.sessions, url);
        let right = duplicate_of.map(without) == Some(without(&prediction.counterpart));
        prediction.right = Some(right);
        self.change(RuleEvent::Checked {
            rule: prediction.rule_id,
            right,
            verified: (right && prediction.fate == "verify").then_some(unchanged),
        })?;
        Ok(prediction)
    }

    /// The book to keep with the decision being applied, when a queued URL relies on a rule
    /// the store does not hold yet, or enough changed.
    pub(super) fn take_to_keep(&mut self) -> Option<Vec<u8>> {
        if self.shared.is_some() {
            // The job's log is the book.
            return None;
        }
        let book = self.policy.book();
        let due = KEEP_EVERY.max(u32::try_from(book.len() / 8).unwrap_or(u32::MAX));
        if self.relied_on <= self.kept_rules && self.changes < due {
            return None;
        }
        self.kept_rules = book.len();
        self.relied_on = 0;
        self.changes = 0;
        // Strings and integers only: serialising cannot fail.
        Some(serde_json::to_vec(book).unwrap_or_default())
    }

    /// [`LinkPolicy::fate`], noting the rule a queued URL will rely on.
    #[cfg(test)]
    fn fate(&mut self, url: &Url, known: &dyn Known) -> Fate {
        fate(&mut self.policy, &mut self.relied_on, url, known)
    }

    /// The book, as it stands.
    #[cfg(test)]
    pub(super) fn book(&self) -> &RuleBook {
        self.policy.book()
    }
}

/// Carries the link policy's fate for a URL (see [`Predictions::for_url`]) out on its queue
/// entry: its prediction, checked when the page is decided, and for a verification or a
/// sample its probe against the counterpart (a sample's HEAD must find a length the rule's
/// copies have had before its parts are asked). Returns the prediction of a URL not to be
/// requested ([`Fate::Skip`]), for its record ([`predicted_record`]). A fate no rule decided
/// changes nothing.
pub(super) fn apply(fate: Fate, entry: &mut QueuedUrl) -> Option<Prediction> {
    let probe = |e: &Evidence, window| {
        Some(Box::new(Probe {
            counterpart: counterpart(e),
            window,
            ..Probe::default()
        }))
    };
    let (name, e) = fate.prediction()?;
    let probe = match &fate {
        Fate::Check {
            how: How::Verify, ..
        } => probe(e, None),
        Fate::Check { .. } => probe(e, e.sample_window()),
        _ => None,
    };
    let prediction = prediction(name, e);
    entry.predicted = Some(Box::new(prediction.clone()));
    match fate {
        Fate::Skip { .. } => Some(prediction),
        _ => {
            entry.probe = probe;
            None
        }
    }
}

/// [`LinkPolicy::fate`], noting in `relied_on` the rule a queued URL will rely on.
fn fate(policy: &mut LinkPolicy, relied_on: &mut usize, url: &Url, known: &dyn Known) -> Fate {
    let fate = policy.fate(url, known);
    if let Some(e) = fate.rule() {
        *relied_on = (*relied_on).max(e.rule.index() + 1);
    }
    fate
}

/// `url` as a URL rule names pages: without the session parameters the crawl learned (a
/// rule maps pages, not visits).
fn without_sessions(sessions: &SessionParams, url: &str) -> String {
    sessions
        .strip_str(url)
        .map_or_else(|| url.to_string(), |s| s.url.to_string())
}

/// The record of `entry`, decided without a request as a duplicate of the page its
/// prediction names (verdict `predicted`, `duplicate_of` that page, the rule in
/// `prediction`).
pub(super) fn predicted_record(seq: u64, entry: &QueuedUrl) -> Record {
    Record {
        duplicate_of: entry.predicted.as_ref().map(|p| p.counterpart.clone()),
        error: None,
        ..crate::record::refused(seq, entry, Verdict::Predicted, String::new())
    }
}

/// What the crawl holds of the page at `counterpart`, when it was fetched whole and its
/// length is known (what a probe of a link predicted to copy it is compared with): that
/// length, and what a sample compared with its text would cost when its text's shingles
/// were kept. (A store or a shared job's Redis that cannot answer: nothing held, so the link
/// is fetched.)
pub(super) fn held(declarations: &Declarations, counterpart: &Url) -> Option<Held> {
    let c = CanonicalUrl::from_url(counterpart.clone()).ok()?;
    let declared = declarations.get(c.as_str()).ok()??;
    (!declared.is_redirect()).then(|| Held {
        length: declared.length,
        sample_cost: (!declared.shingles.is_empty())
            .then(|| nearcrawl_dedup::sample_cost(declared.length)),
        head_cost: nearcrawl_dedup::HEAD_COST,
    })
}

/// The counterpart a fate's evidence names, as the crawl writes URLs (canonical), so that it
/// compares with `duplicate_of` and finds the counterpart's stored length.
fn counterpart(evidence: &Evidence) -> String {
    CanonicalUrl::from_url(evidence.counterpart.clone())
        .map_or_else(|_| evidence.counterpart.to_string(), |c| c.to_string())
}

/// What a link's record and queue entry keep of a fate's evidence.
pub(super) fn prediction(fate: &str, evidence: &Evidence) -> Prediction {
    Prediction {
        fate: fate.to_string(),
        rule: evidence.rule_text.clone(),
        rule_id: evidence.rule.number(),
        counterpart: counterpart(evidence),
        support: evidence.stats.support,
        checked: evidence.stats.checked,
        confirmed: evidence.stats.confirmed,
        right: None,
    }
}

#[cfg(test)]
mod tests;
