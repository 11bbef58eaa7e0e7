//! The policy fed a crawl's journal alone ([`Replay`]): each event's decision made again from
//! what the crawl knew, the crawl's answers given back in the order they were given
//! (`Answers`), and compared with the fate the crawl carried out.

use std::cell::RefCell;
use std::collections::VecDeque;

use url::Url;

use crate::decider::Decider;
use crate::evidence::CopyPair;
use crate::found::{Crawl, FoundOn};
use crate::hubs::HubYield;
use crate::journal::{Answer, Event, FateRecord, FoundEvent};
use crate::keys::Key;
use crate::mirrors::Mirrors;
use crate::rules::LinkPolicy;
use nearcrawl_url_rules::{RuleBook, RuleId};

/// Where a replay decided otherwise than the crawl did, or could not go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diverged(pub String);

impl std::fmt::Display for Diverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Diverged {}

/// The crawl's answers, given back in the order they were given.
struct Answers {
    left: RefCell<VecDeque<Answer>>,
    /// How a question that cannot fail ([`Crawl::counterpart`]) went otherwise, if it did.
    diverged: RefCell<Option<Diverged>>,
}

impl Answers {
    /// The page the URL rules mapped `target` to, as the crawl's journal says.
    fn rule(&self, target: &Url) -> Option<Url> {
        self.url_answer(Answer::Rule {
            target: target.to_string(),
            answer: None,
        })
    }

    /// The URL answered to `asked` (a question answered by a URL or none, which cannot fail
    /// in the crawl), as the journal says; a divergence is kept for the event's verdict.
    fn url_answer(&self, asked: Answer) -> Option<Url> {
        let answer = match self.next(&asked) {
            Ok(Answer::Rule { answer, .. } | Answer::Counterpart { answer, .. }) => answer,
            Ok(_) => unreachable!("next answers the question asked"),
            Err(diverged) => {
                self.diverged.borrow_mut().get_or_insert(diverged);
                None
            }
        };
        answer.and_then(|u| Url::parse(&u).ok())
    }

    /// The next answer, which must be to the question `asked` (the same kind, the same URL).
    fn next(&self, asked: &Answer) -> Result<Answer, Diverged> {
        let next = self.left.borrow_mut().pop_front();
        let same = |a: &Answer, b: &Answer| match (a, b) {
            (Answer::Counterpart { target: x, .. }, Answer::Counterpart { target: y, .. })
            | (Answer::Hub { url: x, .. }, Answer::Hub { url: y, .. })
            | (Answer::HubYield { url: x, .. }, Answer::HubYield { url: y, .. })
            | (Answer::Seen { url: x, .. }, Answer::Seen { url: y, .. })
            | (Answer::SeenHere { url: x, .. }, Answer::SeenHere { url: y, .. })
            | (Answer::Rule { target: x, .. }, Answer::Rule { target: y, .. }) => x == y,
            _ => false,
        };
        match next {
            Some(answer) if same(&answer, asked) => Ok(answer),
            Some(answer) => Err(Diverged(format!(
                "the policy asked {asked:?} where the crawl had answered {answer:?}"
            ))),
            None => Err(Diverged(format!(
                "the policy asked {asked:?}, which the crawl was never asked"
            ))),
        }
    }
}

fn parse(url: &str) -> Result<Url, Diverged> {
    Url::parse(url).map_err(|e| Diverged(format!("a URL of the journal, {url:?}: {e}")))
}

impl Crawl for Answers {
    type Url = Url;
    type Error = Diverged;

    fn url<'u>(&self, url: &'u Url) -> &'u Url {
        url
    }

    fn counterpart(
        &self,
        _sessions: &nearcrawl_frontier::SessionParams,
        _page: &Url,
        _original: &Url,
        target: &Url,
    ) -> Option<Url> {
        self.url_answer(Answer::Counterpart {
            target: target.to_string(),
            answer: None,
        })
    }

    fn hub(&self, url: &Url) -> Result<Option<bool>, Diverged> {
        let url = url.to_string();
        match self.next(&Answer::Hub { url, answer: None })? {
            Answer::Hub { answer, .. } => Ok(answer),
            _ => unreachable!("next answers the question asked"),
        }
    }

    fn hub_yield(&self, url: &Url) -> Result<Option<(u64, HubYield)>, Diverged> {
        let url = url.to_string();
        match self.next(&Answer::HubYield { url, answer: None })? {
            Answer::HubYield { answer, .. } => Ok(answer),
            _ => unreachable!("next answers the question asked"),
        }
    }

    fn seen(&self, url: &Url) -> Result<bool, Diverged> {
        let url = url.to_string();
        match self.next(&Answer::Seen { url, answer: false })? {
            Answer::Seen { answer, .. } => Ok(answer),
            _ => unreachable!("next answers the question asked"),
        }
    }

    fn canonical(&self, url: Url) -> Option<Url> {
        nearcrawl_frontier::CanonicalUrl::from_url(url)
            .ok()
            .map(nearcrawl_frontier::CanonicalUrl::into_url)
    }

    fn seen_here(&self, url: &Url) -> Result<bool, Diverged> {
        let url = url.to_string();
        match self.next(&Answer::SeenHere { url, answer: false })? {
            Answer::SeenHere { answer, .. } => Ok(answer),
            _ => unreachable!("next answers the question asked"),
        }
    }
}

/// The policy fed a crawl's journal alone: each event's decision made again from what the
/// crawl knew, and compared with the one the crawl carried out.
#[derive(Debug, Default)]
pub struct Replay {
    decider: Decider,
    /// The URL rules' policy, once started ([`Event::Rules`]).
    rules: Option<LinkPolicy>,
    /// Fates decided again (links found, samples drawn and settled).
    pub fates: u64,
    /// Events fed.
    pub events: u64,
}

impl Replay {
    /// A replay not started yet (the journal's first event is [`Event::Start`]).
    pub fn new() -> Replay {
        Replay::default()
    }

    /// Feeds one event; an error says how the policy decided otherwise.
    pub fn feed(&mut self, event: Event) -> Result<(), Diverged> {
        self.events += 1;
        match event {
            Event::Start { settings, mirrors } => {
                self.decider = Decider::new(settings);
                if let Some(stored) = mirrors {
                    let mirrors = Mirrors::from_bytes(stored.as_bytes())
                        .map_err(|e| Diverged(format!("the mirrors resumed from: {e}")))?;
                    self.decider.resume_mirrors(mirrors);
                }
            }
            Event::Resume { listed } => {
                let listed = |on: &Key| {
                    let links = listed.iter().find(|(key, _)| key == on);
                    Ok::<_, Diverged>(links.map(|(_, links)| links.clone()).unwrap_or_default())
                };
                self.decider.mirrors.resume_candidates(listed)?;
            }
            Event::Rules {
                config,
                book,
                limit,
            } => {
                let mut book: RuleBook = serde_json::from_str(&book)
                    .map_err(|e| Diverged(format!("the rule book resumed from: {e}")))?;
                if let Some(limit) = limit {
                    book.set_limit(limit);
                }
                self.rules = Some(LinkPolicy::with_book(config, book));
            }
            Event::Learned(CopyPair {
                copy,
                original,
                facts,
            }) => {
                let (copy, original) = (parse(&copy)?, parse(&original)?);
                self.rules()?.learn(&copy, &original, facts);
            }
            Event::Checked { rule, right } => {
                self.rules()?.checked(RuleId::from_number(rule), right);
            }
            Event::Retracted { copy, original } => {
                let (copy, original) = (parse(&copy)?, parse(&original)?);
                self.rules()?.retract(&copy, &original);
            }
            Event::Verified { rule, told } => {
                self.rules()?.verified(RuleId::from_number(rule), told);
            }
            Event::RuleFate { url, held, fate } => {
                let asked = RefCell::new(VecDeque::from(held));
                let diverged = RefCell::new(None);
                let known = |counterpart: &Url| {
                    let next = asked.borrow_mut().pop_front();
                    match next {
                        Some((was, held)) if was == counterpart.as_str() => held,
                        other => {
                            diverged.borrow_mut().get_or_insert(format!(
                                "the policy asked what the crawl held of {counterpart}, the \
                                 crawl had answered {other:?}"
                            ));
                            None
                        }
                    }
                };
                let again = FateRecord::of(&self.rules()?.fate(&parse(&url)?, &known));
                self.fates += 1;
                if let Some(why) = diverged.into_inner() {
                    return Err(Diverged(format!("{url} asked of the rules: {why}")));
                }
                if again != fate {
                    return Err(Diverged(format!(
                        "{url} asked of the rules: {again:?}, where the crawl decided {fate:?}"
                    )));
                }
            }
            Event::Copy { page, original } => {
                self.decider.note_copy(&parse(&page)?, &parse(&original)?);
            }
            Event::Found(found) => self.found(*found)?,
            Event::Candidate { pair, link, url } => self.decider.candidate(pair, link, &url),
            Event::Draw { now, costs, drawn } => {
                let mut answers = costs.into_iter();
                let mut cost = |url: &str| match answers.next() {
                    Some((asked, cost)) if asked == url => Ok(cost),
                    other => Err(Diverged(format!(
                        "the policy asked the cost of {url}, the crawl had answered {other:?}"
                    ))),
                };
                let again = self.decider.draw(now, |url, _| cost(url))?;
                self.fates += 1;
                if again != drawn {
                    return Err(Diverged(format!(
                        "drew {again:?}, where the crawl drew {drawn:?}"
                    )));
                }
            }
            Event::Sampled { pair, link } => self.decider.sampled(pair, link),
            Event::LinksFollowed { key, adds } => self.decider.links_followed(&key, adds),
            Event::SampleDecided {
                key,
                redirect,
                target,
                settled,
            } => {
                let again = self.decider.sample_decided(&key, redirect, target);
                self.fates += 1;
                if again != settled {
                    return Err(Diverged(format!(
                        "a sample settled {again:?}, where the crawl's settled {settled:?}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The URL rules' policy, started.
    fn rules(&mut self) -> Result<&mut LinkPolicy, Diverged> {
        (self.rules.as_mut())
            .ok_or_else(|| Diverged("a rule's event before the rules started".into()))
    }

    fn found(&mut self, event: FoundEvent) -> Result<(), Diverged> {
        let copy_of = match &event.copy_of {
            Some((page, original)) => Some((parse(page)?, parse(original)?)),
            None => None,
        };
        let on = FoundOn {
            copy_of: copy_of.as_ref().map(|(page, original)| (page, original)),
            trapped: event.trapped,
            hubs: event.hubs,
            probing: event.probing,
            local: event.local,
            mirror: event.mirror,
            page: event.page,
        };
        let answers = Answers {
            left: RefCell::new(event.answers.into()),
            diverged: RefCell::new(None),
        };
        let url = parse(&event.url)?;
        let learned = &self.decider.learned;
        let counterpart_of = |target: &Url| answers.rule(target);
        let again = crate::found::found_link(
            &answers,
            (learned.sessions(), &counterpart_of),
            &self.decider.sites,
            &mut self.decider.mirrors,
            &on,
            &url,
            event.followed,
        )?;
        self.fates += 1;
        if let Some(Diverged(why)) = answers.diverged.into_inner() {
            return Err(Diverged(format!("{} found: {why}", event.url)));
        }
        let again = again.map(|u| u.to_string());
        if again != event.fate {
            return Err(Diverged(format!(
                "{} found: {again:?}, where the crawl decided {:?}",
                event.url, event.fate
            )));
        }
        if let Some(left) = answers.left.borrow().front() {
            return Err(Diverged(format!(
                "{} found: the crawl had been asked {left:?} besides",
                event.url
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
