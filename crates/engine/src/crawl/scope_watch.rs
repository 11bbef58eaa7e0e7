//! The scope's answers to the first links a crawl finds, and the warning when it refuses
//! nearly all of them.

/// Links whose scope answer the watch looks at: the first this many a crawl finds.
const FIRST_LINKS: u32 = 100;

/// The scope's answers to the first links a crawl finds. A scope that refuses nearly all of
/// them is most likely not the one the user meant (`--include` on another host than the
/// seeds', without `--hosts`), and the crawl says so.
#[derive(Debug, Default)]
pub(super) struct ScopeWatch {
    seen: u32,
    refused: u32,
    reasons: std::collections::BTreeMap<String, u32>,
    warned: bool,
}

impl ScopeWatch {
    /// Notes the scope's answer to a link found on a page ([`ScopeWatch::note`]); warns (in
    /// the log) as soon as the first links show a scope that refuses nearly everything.
    pub(super) fn watch(&mut self, refusal: Option<&str>) {
        if let Some(warning) = self.note(refusal) {
            tracing::warn!("{warning}");
        }
    }

    /// One more link, refused by the scope for `refusal` or not. Returns the warning once,
    /// when the first [`FIRST_LINKS`] links are in and it applies.
    pub(super) fn note(&mut self, refusal: Option<&str>) -> Option<String> {
        if self.seen >= FIRST_LINKS {
            return None;
        }
        self.seen += 1;
        if let Some(reason) = refusal {
            self.refused += 1;
            *self.reasons.entry(reason.to_string()).or_insert(0) += 1;
        }
        if self.seen < FIRST_LINKS || self.warned {
            return None;
        }
        self.warning().inspect(|_| self.warned = true)
    }

    /// The warning, if more than nine in ten of the links seen (at least 10) were refused.
    pub(super) fn warning(&self) -> Option<String> {
        if self.seen < 10 || u64::from(self.refused) * 10 <= u64::from(self.seen) * 9 {
            return None;
        }
        let reasons: Vec<String> = self
            .reasons
            .iter()
            .map(|(reason, n)| format!("{reason}: {n}"))
            .collect();
        Some(format!(
            "the scope refused {} of the first {} links this crawl found ({}); if those are \
             pages you meant to crawl, widen it: --hosts seed-domains or any (--include only \
             narrows the hosts rule), --include, --exclude, or [scope] in the configuration",
            self.refused,
            self.seen,
            reasons.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::ScopeWatch;

    #[test]
    fn nine_in_ten_refused_is_a_warning_once() {
        let mut watch = ScopeWatch::default();
        for i in 0..99 {
            let refusal = (i % 20 != 0).then_some("host not in scope");
            assert_eq!(watch.note(refusal), None);
        }
        let warning = watch.note(Some("host not in scope")).expect("95 of 100");
        assert!(warning.contains("refused 95 of the first 100"), "{warning}");
        assert!(warning.contains("host not in scope: 95"), "{warning}");
        assert_eq!(watch.note(Some("host not in scope")), None, "once");

        let mut fine = ScopeWatch::default();
        for i in 0..100 {
            fine.note((i % 10 == 0).then_some("excluded"));
        }
        assert_eq!(
            fine.warning(),
            None,
            "one in ten refused is a scope doing its job"
        );
        let mut few = ScopeWatch::default();
        for _ in 0..9 {
            few.note(Some("host not in scope"));
        }
        assert_eq!(few.warning(), None, "too few links to tell");
    }
}
