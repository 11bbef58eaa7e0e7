//! A cheap check's answers (a link checked against its counterpart, [`crate::Fate::Check`]):
//! what its HEAD's answer decides ([`Decider::after_head`]: the page has its counterpart's
//! length, a sample of its text is asked first, or it is fetched whole), and when a sample's
//! parts are compared at all ([`Head::comparable`]).
//!
//! A length says little on its own: a release's page whose code is highlighted anew changes
//! by 5 to 13 % with the same text, while a rewritten one can keep its length within 5 %. So a
//! large page ([`SAMPLE_MIN_LENGTH`]) is sampled whatever its length, and a URL rule's sample
//! is asked only of a page whose length its rule's copies have had.

use crate::Decider;

/// Pages shorter than this (their declared length) are fetched whole rather than sampled:
/// a sample with its answer's headers costs about a tenth of such a page.
pub const SAMPLE_MIN_LENGTH: u64 = 32 * 1024;

/// A page shorter than this share of its counterpart is taken to have changed: a sample
/// could find all its parts inside the longer counterpart (a release's index of fewer
/// entries). A longer page is sampled up to [`SAMPLE_MAX_GROWTH`] times its counterpart: its
/// parts fall in its new text as often as there is new text, which the sample sees.
pub const SAMPLE_MIN_LENGTH_RATIO: f64 = 0.75;
/// See [`SAMPLE_MIN_LENGTH_RATIO`].
pub const SAMPLE_MAX_GROWTH: f64 = 2.0;

/// Whether a page of `length` bytes may be told unchanged from a sample against a
/// counterpart of `counterpart` bytes: not much shorter ([`SAMPLE_MIN_LENGTH_RATIO`]: its
/// parts could all fall inside the longer counterpart) nor much longer
/// ([`SAMPLE_MAX_GROWTH`]).
pub fn comparable_lengths(length: u64, counterpart: u64) -> bool {
    let (length, counterpart) = (length as f64, counterpart as f64);
    length >= SAMPLE_MIN_LENGTH_RATIO * counterpart && length <= SAMPLE_MAX_GROWTH * counterpart
}

/// Whether a page of `length` bytes (as declared) is sampled against a counterpart of
/// `counterpart` bytes: large enough ([`SAMPLE_MIN_LENGTH`]), not much shorter
/// ([`SAMPLE_MIN_LENGTH_RATIO`]) nor much longer ([`SAMPLE_MAX_GROWTH`]).
pub fn worth_sampling(length: u64, counterpart: u64) -> bool {
    length >= SAMPLE_MIN_LENGTH && comparable_lengths(length, counterpart)
}

/// A check's HEAD answered, with what the crawl knows of its counterpart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Head {
    /// Its status (none: the request failed).
    pub status: Option<u16>,
    /// The length it declared.
    pub length: Option<u64>,
    /// The counterpart's length, as its server declared it (none: not fetched yet, and
    /// waited for long enough).
    pub counterpart_length: Option<u64>,
    /// A URL rule's sample: the lengths the rule's copies have had.
    pub window: Option<(u64, u64)>,
    /// A URL rule's verification: the lengths the rule's copies have had, when known. A
    /// page of another length is never sampled: one longer than its rule's copies have been
    /// may hold new text and links that four parts miss.
    pub copies: Option<(u64, u64)>,
    /// The counterpart's text was kept to compare a sample with.
    pub counterpart_text: bool,
    /// The page's and its counterpart's static responses carry their text, as far as the
    /// crawl knows ([`Decider::static_text`]): not on a host whose rendered pages' text came
    /// by their scripts' own requests, where every page's response is the same shell.
    pub static_text: bool,
}

/// What a check's HEAD's answer decides ([`Decider::after_head`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterHead {
    /// Some of its text is asked before all of it.
    Sample,
    /// Its counterpart's length: decided `unchanged` without a GET.
    Unchanged,
    /// Fetched whole.
    Fetch,
}

impl Head {
    /// Whether it has its counterpart's length, within `tolerance` of it (a fraction). A
    /// counterpart of length 0 is a redirect: never this page's text.
    pub fn same_length(&self, tolerance: f64) -> bool {
        match (self.status, self.length, self.counterpart_length) {
            (Some(200), Some(length), Some(counterpart)) if counterpart > 0 => {
                length.abs_diff(counterpart) as f64 <= tolerance * counterpart as f64
            }
            _ => false,
        }
    }

    /// Whether a sample's parts are compared with the counterpart's text at all: the
    /// lengths of a URL rule's copies for its sample (the window it was asked within, by
    /// [`Decider::after_head`]: a syndication's copies, its main region only, are half their
    /// originals' length), else [`comparable_lengths`].
    pub fn comparable(&self) -> bool {
        match (self.length, self.counterpart_length, self.window) {
            (Some(length), Some(_), Some((low, high))) => (low..=high).contains(&length),
            (Some(length), Some(counterpart), None) => comparable_lengths(length, counterpart),
            _ => false,
        }
    }
}

impl Decider {
    /// What a check's HEAD's answer decides: a large page (or a URL rule's sample of a
    /// length its copies have had) is sampled when samples are on and the counterpart's text
    /// was kept, whatever its length (a rewritten page can keep its length), but a rule's
    /// verification of a page whose length its copies never had; else a page of
    /// its counterpart's length (within the probes' tolerance) is unchanged, except a rule's
    /// (a length alone tells nothing of it); anything else is fetched, and so is a page whose
    /// static response, or its counterpart's, does not carry its text (a shell).
    pub fn after_head(&self, head: &Head) -> AfterHead {
        if !head.static_text {
            return AfterHead::Fetch;
        }
        let sample = self.samples()
            && head.counterpart_text
            && head.status == Some(200)
            && match (head.length, head.counterpart_length, head.window) {
                (Some(length), Some(_), Some((low, high))) => (low..=high).contains(&length),
                (Some(length), Some(counterpart), None) => {
                    worth_sampling(length, counterpart)
                        && head
                            .copies
                            .is_none_or(|(low, high)| (low..=high).contains(&length))
                }
                _ => false,
            };
        if sample {
            AfterHead::Sample
        } else if head.window.is_none() && head.same_length(self.probe_tolerance()) {
            AfterHead::Unchanged
        } else {
            AfterHead::Fetch
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LinkSettings;

    #[test]
    fn a_check_s_head_samples_decides_or_fetches() {
        let head = |length, counterpart_length, window, counterpart_text| Head {
            status: Some(200),
            length,
            counterpart_length,
            window,
            copies: None,
            counterpart_text,
            static_text: true,
        };
        let verified = |length, copies| Head {
            copies: Some(copies),
            ..head(Some(length), Some(55_104), None, true)
        };
        let on = Decider::new(crate::settings::MEASURED);
        let off = Decider::new(LinkSettings {
            probe_samples: false,
            ..crate::settings::MEASURED
        });
        // (what it protects, the decider, the HEAD's answer) -> what follows
        let cases = [
            (
                "a large page of its counterpart's length: sampled, not trusted to its length",
                &on,
                head(Some(40_000), Some(40_000), None, true),
                AfterHead::Sample,
            ),
            (
                "the same, samples off: unchanged by its length",
                &off,
                head(Some(40_000), Some(40_000), None, true),
                AfterHead::Unchanged,
            ),
            (
                "no text kept of the counterpart: nothing to sample against",
                &on,
                head(Some(40_000), Some(40_000), None, false),
                AfterHead::Unchanged,
            ),
            (
                "a large page twice its counterpart and more: fetched",
                &on,
                head(Some(90_000), Some(40_000), None, true),
                AfterHead::Fetch,
            ),
            (
                "another length, too short to sample: fetched",
                &on,
                head(Some(900), Some(2_000), None, true),
                AfterHead::Fetch,
            ),
            (
                "a small page of its counterpart's length: unchanged",
                &on,
                head(Some(2_010), Some(2_000), None, true),
                AfterHead::Unchanged,
            ),
            (
                "a rule's sample, a length its copies have had: sampled",
                &on,
                head(Some(3_000), Some(2_000), Some((2_900, 3_100)), true),
                AfterHead::Sample,
            ),
            (
                "a rule's sample, another length: fetched, never unchanged by length",
                &on,
                head(Some(2_000), Some(2_000), Some((2_900, 3_100)), true),
                AfterHead::Fetch,
            ),
            (
                "a rule's verification, a length its copies have had: sampled",
                &on,
                verified(57_000, (54_000, 58_000)),
                AfterHead::Sample,
            ),
            (
                "a rule's verification, 13 % longer than its copies have been: fetched",
                &on,
                verified(62_446, (54_000, 58_000)),
                AfterHead::Fetch,
            ),
            (
                "a rule's verification, shorter than its copies have been: fetched",
                &on,
                verified(50_000, (54_000, 58_000)),
                AfterHead::Fetch,
            ),
            (
                "a rule's verification of its counterpart's length, samples off: unchanged",
                &off,
                Head {
                    copies: Some((56_000, 58_000)),
                    ..head(Some(55_104), Some(55_104), None, true)
                },
                AfterHead::Unchanged,
            ),
            (
                "a shell of its counterpart's length, the text by the script's requests: fetched",
                &on,
                Head {
                    static_text: false,
                    ..head(Some(119), Some(119), None, true)
                },
                AfterHead::Fetch,
            ),
            (
                "a large shell, the same: fetched, not sampled",
                &on,
                Head {
                    static_text: false,
                    ..head(Some(40_000), Some(40_000), None, true)
                },
                AfterHead::Fetch,
            ),
            (
                "no length declared: fetched",
                &on,
                head(None, Some(2_000), None, true),
                AfterHead::Fetch,
            ),
            (
                "the counterpart not fetched (waited for long enough): fetched",
                &on,
                head(Some(2_000), None, None, false),
                AfterHead::Fetch,
            ),
            (
                "a counterpart that was a redirect (length 0): fetched",
                &on,
                head(Some(0), Some(0), None, false),
                AfterHead::Fetch,
            ),
            (
                "another status: fetched",
                &on,
                Head {
                    status: Some(404),
                    ..head(Some(40_000), Some(40_000), None, true)
                },
                AfterHead::Fetch,
            ),
        ];
        for (what, decider, head, next) in cases {
            assert_eq!(decider.after_head(&head), next, "{what}");
        }
    }

    #[test]
    fn a_head_has_its_counterpart_s_length_only_when_answered_200_within_the_tolerance() {
        let answered = |status, length, counterpart_length| Head {
            status: Some(status),
            length,
            counterpart_length,
            ..Head::default()
        };
        // (what it protects, the answer, the tolerance) -> the same length
        let cases = [
            (
                "the same length, no tolerance",
                answered(200, Some(1_000), Some(1_000)),
                0.0,
                true,
            ),
            (
                "longer, within the tolerance",
                answered(200, Some(1_020), Some(1_000)),
                0.02,
                true,
            ),
            (
                "shorter, within the tolerance",
                answered(200, Some(980), Some(1_000)),
                0.02,
                true,
            ),
            (
                "past the tolerance",
                answered(200, Some(1_021), Some(1_000)),
                0.02,
                false,
            ),
            (
                "another status",
                answered(404, Some(1_000), Some(1_000)),
                0.02,
                false,
            ),
            (
                "no length declared",
                answered(200, None, Some(1_000)),
                0.02,
                false,
            ),
            (
                "the counterpart's length unknown",
                answered(200, Some(1_000), None),
                0.02,
                false,
            ),
            (
                "a redirect's (length 0)",
                answered(200, Some(0), Some(0)),
                0.02,
                false,
            ),
            (
                "the request failed",
                Head {
                    status: None,
                    ..answered(200, Some(1_000), Some(1_000))
                },
                0.02,
                false,
            ),
        ];
        for (what, head, tolerance, same) in cases {
            assert_eq!(head.same_length(tolerance), same, "{what}");
        }
    }

    #[test]
    fn a_sample_is_compared_only_against_a_counterpart_of_about_its_length_or_its_rule_s_copies() {
        let head = |length, counterpart_length| Head {
            length,
            counterpart_length,
            ..Head::default()
        };
        // (what it protects, the lengths) -> compared
        let cases = [
            ("the same length", head(Some(40_000), Some(40_000)), true),
            ("grown, up to twice", head(Some(80_000), Some(40_000)), true),
            ("more than twice", head(Some(80_001), Some(40_000)), false),
            (
                "shorter than three quarters",
                head(Some(29_999), Some(40_000)),
                false,
            ),
            ("no length", head(None, Some(40_000)), false),
            // A URL rule's sample, asked within the lengths its copies have had: a
            // syndication's copy, its original's main region, half its length.
            (
                "a rule's copy as short as its copies have been",
                Head {
                    window: Some((18_000, 24_000)),
                    ..head(Some(20_000), Some(40_000))
                },
                true,
            ),
            (
                "a rule's copy outside its copies' lengths",
                Head {
                    window: Some((38_000, 42_000)),
                    ..head(Some(80_000), Some(40_000))
                },
                false,
            ),
        ];
        for (what, head, comparable) in cases {
            assert_eq!(head.comparable(), comparable, "{what}");
        }
        assert!(worth_sampling(SAMPLE_MIN_LENGTH, SAMPLE_MIN_LENGTH));
        assert!(!worth_sampling(
            SAMPLE_MIN_LENGTH - 1,
            SAMPLE_MIN_LENGTH - 1
        ));
    }
}
