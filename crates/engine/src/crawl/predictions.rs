//! The link policy's URL rules in the crawl (`dedup.predict`): what the crawl learned
//! ([`nearcrawl_link_policy::Learned`], held by the policy's [`Decider`]: the URL rules its
//! duplicates teach, the session parameters) kept in the store as blobs when it says so, or in
//! a job shared through Redis in the job's rule log ([`nearcrawl_redis_job::RuleLog`],
//! `predictions/log.rs`); a fate carried out on a queue entry, and a predicted duplicate's
//! record.

use nearcrawl_dedup::{DedupStageConfig, Predict};
use nearcrawl_link_policy::{Decider, Fate, Held, Learned, RuleLog};
use nearcrawl_records::{Prediction, Probe};
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

/// Starts the link policy's learning (`links`) with the job's `dedup` settings, going on with
/// what `store` kept, if anything, or in a job shared through Redis with the job's log
/// (`shared`: what is learned is the log replayed, and the store keeps none). Off in a
/// baseline crawl (it fetches everything: its rules would only be measured).
pub(super) fn start(
    links: &mut Decider,
    dedup: &DedupStageConfig,
    shared: Option<SharedRules>,
    store: &dyn CrawlStore,
) -> Result<(), EngineError> {
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
    let mut learned = Learned::new(config, kept.as_deref()).map_err(|e| corrupt(URL_RULES, e))?;
    if shared.is_none()
        && let Some(bytes) = store.blob(SESSION_PARAMS)?
    {
        (learned.adopt_sessions(&bytes)).map_err(|e| corrupt(SESSION_PARAMS, e))?;
    }
    let log = shared.map(|log| Box::new(log) as Box<dyn RuleLog>);
    (links.start_learning(learned, dedup.enabled, log)).map_err(EngineError::Shared)
}

/// What the crawl holds of a rule's counterpart, for the link policy: what its server
/// declared ([`Declarations::counterpart`]).
pub(super) fn held(declarations: &Declarations) -> impl Fn(&Url) -> Option<Held> + '_ {
    |counterpart: &Url| declarations.counterpart(counterpart)
}

/// The fate of a queued URL about to be handed out ([`Decider::at_dispatch`]): the reason
/// it is not fetched, when a trusted prediction skips it.
pub(super) fn at_dispatch(
    links: &mut Decider,
    declarations: &Declarations,
    entry: &QueuedUrl,
) -> Option<String> {
    let decided = entry.probe.is_some()
        || entry.predicted.as_ref().is_some_and(|p| p.fate != "check")
        || entry.sitemap
        || entry.redirects > 0;
    links.at_dispatch(&entry.url, decided, &held(declarations))
}

/// The queued URL `entry`, handed out to be fetched or decided, with what
/// [`at_dispatch`] decided for it ([`apply`]).
pub(super) fn dispatched(links: &mut Decider, mut entry: QueuedUrl) -> QueuedUrl {
    if let Some(fate) = links.dispatched(&entry.url) {
        apply(fate, &mut entry);
    }
    entry
}

/// A page whose URL had `prediction` was decided: a duplicate of `duplicate_of`, or not
/// (`None`); by its probe (`unchanged`) or fetched whole ([`Decider::checked`]). The
/// prediction with its answer, for the page's record.
pub(super) fn check(
    links: &mut Decider,
    mut prediction: Prediction,
    duplicate_of: Option<&str>,
    unchanged: bool,
) -> Result<Prediction, EngineError> {
    let rule = (prediction.rule_id, prediction.counterpart.as_str());
    let verify = prediction.fate == "verify";
    let right = links.checked(rule, verify, duplicate_of, unchanged);
    prediction.right = Some(right.map_err(EngineError::Shared)?);
    Ok(prediction)
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
