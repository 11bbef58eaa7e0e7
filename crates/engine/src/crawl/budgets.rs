//! The trap rules with the per-host budgets they spend. Counts live in the store's counters,
//! so a resumed crawl keeps spending the same budgets; the most recent are cached.

use std::collections::HashMap;

use nearcrawl_frontier::SameText;

use super::{
    Arc, CanonicalUrl, Commit, CrawlStore, EngineError, Scope, Trap, TrapRules, UrlPattern,
    Verdict, url_key,
};

/// Budget counts cached at most; past this the cache is emptied between decisions.
const CACHED: usize = 1 << 16;

pub(super) struct Traps {
    pub(super) rules: TrapRules,
    store: Arc<dyn CrawlStore>,
    /// Counter name to count, including what the decision being built has spent.
    counts: HashMap<String, u64>,
    /// What each host's pages of too little text to judge said (kept in memory only).
    same_text: SameText,
}

impl Traps {
    /// Whether a discovered URL, `depth` links from a seed, may be queued: `scope`, then the
    /// trap rules. If not, the verdict and the reason to record.
    pub(super) fn admits(
        &self,
        scope: &Scope,
        url: &CanonicalUrl,
        depth: u32,
    ) -> Result<(), (Verdict, String)> {
        scope
            .check(url, depth)
            .map_err(|reason| (Verdict::OutOfScope, reason.to_string()))?;
        self.rules
            .check(url)
            .map_err(|trap| (Verdict::Trap, trap.to_string()))
    }

    pub(super) fn new(rules: TrapRules, store: Arc<dyn CrawlStore>) -> Traps {
        Traps {
            rules,
            store,
            counts: HashMap::new(),
            same_text: SameText::default(),
        }
    }

    /// A page of `host` with too little text to judge said `fingerprint`: whether its links
    /// may still be followed ([`SameText::note`]).
    pub(super) fn same_text(&mut self, host: &str, fingerprint: u64) -> Result<(), Trap> {
        let max = self.rules.max_same_text();
        self.same_text.note(host, fingerprint, max)
    }

    /// Spends one URL of its host's budget for `pattern` and, for a URL found on a
    /// duplicate of `host`, one of the host's budget of duplicates' links: both, or neither
    /// and the rule that refused. The new counts go into `commit`.
    pub(super) fn spend(
        &mut self,
        pattern: &UrlPattern,
        duplicate_of_host: Option<&str>,
        commit: &mut Commit,
    ) -> Result<Result<(), Trap>, EngineError> {
        // A pattern that masks nothing is a single URL: no budget to keep (and no counter
        // per URL in the store).
        let patterns = if pattern.is_family() {
            let name = counter_name("pattern", pattern.as_str());
            let queued = self.count(&name)?;
            let distinct = match self.rules.grows() {
                true => self.count(&counter_name(DISTINCT, pattern.as_str()))?,
                false => 0,
            };
            if let Err(trap) = self.rules.check_pattern_budget(pattern, queued, distinct) {
                return Ok(Err(trap));
            }
            Some((name, queued))
        } else {
            None
        };
        let links = match duplicate_of_host {
            Some(host) => {
                let name = counter_name("duplicate-links", host);
                let queued = self.count(&name)?;
                if let Err(trap) = self.rules.check_duplicate_links(queued) {
                    return Ok(Err(trap));
                }
                Some((name, queued))
            }
            None => None,
        };
        for (name, queued) in patterns.into_iter().chain(links) {
            self.counts.insert(name.clone(), queued + 1);
            commit.counters.push((name.into(), queued + 1));
        }
        Ok(Ok(()))
    }

    /// A distinct page (kept, not near-empty) of `pattern` was fetched: the pattern's budget
    /// grows (`traps.pattern_growth`). The new count goes into `commit`.
    pub(super) fn distinct(
        &mut self,
        pattern: &UrlPattern,
        commit: &mut Commit,
    ) -> Result<(), EngineError> {
        if pattern.is_family() && self.rules.grows() {
            let name = counter_name(DISTINCT, pattern.as_str());
            let distinct = self.count(&name)? + 1;
            self.counts.insert(name.clone(), distinct);
            commit.counters.push((name.into(), distinct));
        }
        Ok(())
    }

    /// Called between decisions: keeps the cache bounded (everything in it is committed).
    pub(super) fn trim(&mut self) {
        if self.counts.len() > CACHED {
            self.counts.clear();
        }
    }

    fn count(&mut self, name: &str) -> Result<u64, EngineError> {
        if let Some(count) = self.counts.get(name) {
            return Ok(*count);
        }
        let count = self.store.counter(name)?.unwrap_or(0);
        self.counts.insert(name.to_string(), count);
        Ok(count)
    }
}

/// The counter of a pattern's distinct pages.
const DISTINCT: &str = "pattern-distinct";

/// A budget's counter: the kind and a hash of what it counts (patterns can be long).
fn counter_name(kind: &str, key: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = url_key(key);
    let mut name = String::with_capacity(kind.len() + 1 + 2 * hash.len());
    name.push_str(kind);
    name.push(':');
    for byte in hash {
        name.push(char::from(HEX[usize::from(byte >> 4)]));
        name.push(char::from(HEX[usize::from(byte & 15)]));
    }
    name
}

#[cfg(test)]
mod tests {
    use nearcrawl_frontier::{CanonicalUrl, TrapConfig};
    use nearcrawl_store::MemoryStore;

    use super::*;

    /// A counter's name is its kind and the key's hash in lower-case hex, two digits a byte.
    #[test]
    fn a_counter_is_named_by_its_kind_and_its_keys_hash_in_hex() {
        let key = "http://h.test/p/*.html";
        let hex: String = url_key(key).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(counter_name("pattern", key), format!("pattern:{hex}"));
        assert_eq!(
            counter_name(DISTINCT, "").len(),
            DISTINCT.len() + 1 + hex.len()
        );
    }

    fn traps(store: &Arc<MemoryStore>, config: TrapConfig) -> Traps {
        let store: Arc<dyn CrawlStore> = Arc::clone(store) as Arc<dyn CrawlStore>;
        Traps::new(TrapRules::new(config), store)
    }

    /// A new store, and its trap budgets under the rules' defaults but for these: URLs of a
    /// pattern per host, how many more each distinct page of it adds, duplicates' links
    /// per host.
    fn budgets(
        per_pattern: u32,
        growth: u32,
        duplicate_links: u32,
    ) -> (Arc<MemoryStore>, TrapConfig) {
        let config = TrapConfig {
            max_pages_per_pattern: per_pattern,
            pattern_growth: growth,
            max_duplicate_links: duplicate_links,
            ..TrapConfig::default()
        };
        (Arc::new(MemoryStore::default()), config)
    }

    fn pattern(url: &str) -> UrlPattern {
        UrlPattern::of(&CanonicalUrl::parse(url).unwrap())
    }

    /// Spends one URL of `url`'s pattern in a commit of its own, which is stored.
    fn spend(
        traps: &mut Traps,
        store: &MemoryStore,
        url: &str,
        duplicate_of: Option<&str>,
    ) -> Result<(), Trap> {
        let mut commit = Commit::default();
        let spent = traps
            .spend(&pattern(url), duplicate_of, &mut commit)
            .unwrap();
        store.commit(commit).unwrap();
        traps.trim();
        spent
    }

    #[test]
    fn a_pattern_s_budget_is_spent_then_refused_and_grows_with_distinct_pages() {
        let (store, config) = budgets(2, 1, 0);
        let mut traps = traps(&store, config);
        let calendar = |day: u32| format!("http://a.example/cal/{day}");
        assert_eq!(spend(&mut traps, &store, &calendar(1), None), Ok(()));
        assert_eq!(spend(&mut traps, &store, &calendar(2), None), Ok(()));
        let refused = spend(&mut traps, &store, &calendar(3), None);
        assert!(
            matches!(
                refused,
                Err(Trap::PatternBudget {
                    max: 2,
                    distinct: 0,
                    budget: 2,
                    ..
                })
            ),
            "{refused:?}"
        );
        // A single URL is no family: no budget.
        assert_eq!(
            spend(&mut traps, &store, "http://a.example/about", None),
            Ok(())
        );
        // A distinct page of the pattern fetched: one more URL of it.
        let mut commit = Commit::default();
        traps.distinct(&pattern(&calendar(1)), &mut commit).unwrap();
        store.commit(commit).unwrap();
        assert_eq!(spend(&mut traps, &store, &calendar(4), None), Ok(()));
        assert!(spend(&mut traps, &store, &calendar(5), None).is_err());
    }

    #[test]
    fn duplicates_links_spend_their_host_s_budget_and_a_refusal_spends_nothing() {
        let (store, config) = budgets(3, 0, 1);
        let mut traps = traps(&store, config);
        let from_copy = Some("b.example");
        assert_eq!(
            spend(&mut traps, &store, "http://b.example/p/1", from_copy),
            Ok(())
        );
        let refused = spend(&mut traps, &store, "http://b.example/p/2", from_copy);
        assert_eq!(refused, Err(Trap::DuplicateLinks { max: 1 }));
        // Refused by the duplicates' budget: the pattern's was not spent either.
        assert_eq!(
            spend(&mut traps, &store, "http://b.example/p/3", None),
            Ok(())
        );
        assert_eq!(
            spend(&mut traps, &store, "http://b.example/p/4", None),
            Ok(())
        );
        assert!(spend(&mut traps, &store, "http://b.example/p/5", None).is_err());
    }

    #[test]
    fn a_resumed_crawl_goes_on_spending_the_budgets_the_store_kept() {
        let (store, config) = budgets(2, 0, 0);
        let mut first = traps(&store, config.clone());
        assert_eq!(
            spend(&mut first, &store, "http://a.example/n/1", None),
            Ok(())
        );
        drop(first);
        let mut resumed = traps(&store, config);
        assert_eq!(
            spend(&mut resumed, &store, "http://a.example/n/2", None),
            Ok(())
        );
        assert!(spend(&mut resumed, &store, "http://a.example/n/3", None).is_err());
    }
}
