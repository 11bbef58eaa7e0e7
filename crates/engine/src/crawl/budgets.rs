//! The trap rules with the per-host budgets they spend. Counts live in the store's counters,
//! so a resumed crawl keeps spending the same budgets; the most recent are cached.

use std::collections::HashMap;

use super::*;

/// Budget counts cached at most; past this the cache is emptied between decisions.
const CACHED: usize = 1 << 16;

pub(super) struct Traps {
    pub(super) rules: TrapRules,
    store: Arc<dyn CrawlStore>,
    /// Counter name to count, including what the decision being built has spent.
    counts: HashMap<String, u64>,
}

impl Traps {
    pub(super) fn new(rules: TrapRules, store: Arc<dyn CrawlStore>) -> Traps {
        Traps {
            rules,
            store,
            counts: HashMap::new(),
        }
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
    use std::fmt::Write as _;
    let mut name = format!("{kind}:");
    for byte in url_key(key) {
        let _ = write!(name, "{byte:02x}");
    }
    name
}
