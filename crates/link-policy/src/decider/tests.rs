//! The decider's tables: a page's facts, a parked link released, the settings, a mirror's
//! sample settled.

use super::*;

fn url(s: &str) -> Url {
    Url::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Every mechanism on, at the values a crawl runs with.
const ON: LinkSettings = crate::settings::MEASURED;

#[test]
fn a_page_s_links_are_sampled_hubbed_and_probed_as_the_settings_and_the_page_say() {
    let (mirror, origin) = (url("http://m.test/story/1/"), url("http://o.test/a/1.html"));
    let (release, old) = (url("http://new.test/a.html"), url("http://old.test/a.html"));
    let page = |copy_of, matched_by, trapped, declared, local| PageFacts {
        copy_of,
        matched_by,
        trapped,
        original_declared: declared,
        local,
        page: None,
    };
    let anchor = Some(LinkMatch::Anchor);
    let off = LinkSettings::default();
    // (what it protects, settings, the page) -> (mirror, hubs on, probing)
    let cases = [
        (
            "a mirror's copy (links matched by anchor text, another site): its samples",
            ON,
            page(Some((&mirror, &origin)), anchor, false, true, true),
            (true, true, true),
        ),
        (
            "links matched by where they lead: no mirror",
            ON,
            page(
                Some((&release, &old)),
                Some(LinkMatch::Target),
                false,
                true,
                true,
            ),
            (false, true, true),
        ),
        (
            "a copy on its original's site: no mirror",
            ON,
            page(Some((&mirror, &mirror)), anchor, false, true, true),
            (false, true, true),
        ),
        (
            "a trap stops the page's links: no samples",
            ON,
            page(Some((&mirror, &origin)), anchor, true, true, true),
            (false, true, true),
        ),
        (
            "a shared job's worker samples no mirror",
            ON,
            page(Some((&mirror, &origin)), anchor, false, true, false),
            (false, true, true),
        ),
        (
            "an original that declared no length: nothing to probe against",
            ON,
            page(Some((&mirror, &origin)), anchor, false, false, true),
            (true, true, false),
        ),
        (
            "every mechanism off",
            off,
            page(Some((&mirror, &origin)), anchor, false, true, true),
            (false, false, false),
        ),
    ];
    for (what, settings, facts, (mirror, hubs, probing)) in cases {
        let on = Decider::new(settings).found_on(facts);
        assert_eq!(
            (on.mirror, on.hubs.on(), on.probing),
            (mirror, hubs, probing),
            "{what}"
        );
    }
}

#[test]
fn a_parked_link_is_released_as_what_it_waited_for_was_decided() {
    use crate::{By, How, Parked, Until, Waited};
    let checked = |by| Fate::Check {
        against: "c",
        how: How::Length,
        by,
    };
    // (what it protects, what was decided, the link always followed, probed, this
    // process's frontier) -> (its fate, whether the frontier marks the key followed)
    let cases = [
        (
            "a probed link of a hub whose worth is to be known waits for the hub's links",
            Waited::Page { hub: Some(7) },
            (false, true, true),
            Fate::Wait {
                until: Until::HubLinks {
                    on: crate::hub_links_key(7),
                },
                probe: Some("c"),
                always: false,
            },
            true,
        ),
        (
            "a shared job's worker checks it: it cannot know what the hub led to",
            Waited::Page { hub: Some(7) },
            (false, true, false),
            checked(By::LedToLess),
            true,
        ),
        (
            "a page decided, no hub: a probed link is checked against it",
            Waited::Page { hub: None },
            (false, true, true),
            checked(By::Original),
            false,
        ),
        (
            "a page decided, no hub: an unprobed link is dropped",
            Waited::Page { hub: None },
            (false, false, true),
            Fate::Drop { by: By::Original },
            false,
        ),
        (
            "a hub that led to less than itself: its counterpart's link is checked",
            Waited::HubLinks { worth: false },
            (false, true, true),
            checked(By::LedToLess),
            false,
        ),
        (
            "a mirror whose copies add pages: its candidates are fetched",
            Waited::Mirror { adds: true },
            (false, false, true),
            Fate::Fetch { by: By::Mirror },
            true,
        ),
        (
            "the crawl's end: followed rather than lost",
            Waited::CrawlEnd,
            (false, true, true),
            Fate::Fetch { by: By::CrawlEnd },
            true,
        ),
    ];
    let decider = Decider::new(ON);
    for (what, waited, (always, probed, local), fate, followed) in cases {
        let link = Parked {
            always,
            probe: probed.then_some("c"),
        };
        assert_eq!(decider.released(waited, link, local), fate, "{what}");
        assert_eq!(waited.followed(), followed, "{what}");
    }
}

#[test]
fn the_settings_are_answered_by_the_decider() {
    let decider = Decider::new(ON);
    assert_eq!(decider.mirror_budget().of(14), 4);
    assert!(decider.hubs().is_hub(3) && !decider.hubs().is_hub(2));
    assert!(decider.hubs().declines());
    assert!(decider.probes() && decider.samples());
    assert_eq!(
        decider.copy_facts(Some(1_020), Some(1_000)).same_length,
        Some(true)
    );
    assert_eq!(
        decider.copy_facts(Some(1_021), Some(1_000)).same_length,
        Some(false)
    );
    let off = Decider::default();
    assert!(!off.hubs().is_hub(1_000) && !off.hubs().declines());
    assert_eq!(off.mirror_budget().of(14), 0);
}

#[test]
fn a_mirror_s_sample_settles_its_pair_when_decided() {
    // A mirror with one sample drawn of one candidate.
    let sampled = sampling;
    let (sample, target) = (crate::key("sample"), crate::key("target"));
    let pair = crate::key("mirror http://m.test of http://o.test");
    // (what it protects, its links added a page, decided as a redirect, its queued target)
    let cases = [
        (
            "a sample that added nothing: the mirror's links dropped",
            false,
            false,
            None,
            Some((pair, false)),
        ),
        (
            "a sample that added a page: the mirror's links followed",
            true,
            false,
            None,
            Some((pair, true)),
        ),
        (
            "a sample that redirected elsewhere: taken as adding, nothing lost",
            false,
            true,
            None,
            Some((pair, true)),
        ),
        (
            "a sample that redirected to a URL queued with it: that page is the sample",
            false,
            true,
            Some(target),
            None,
        ),
    ];
    for (what, adds, redirect, queued_target, settled) in cases {
        let mut decider = sampled(sample);
        decider.links_followed(&sample, adds);
        assert_eq!(
            decider.sample_decided(&sample, redirect, queued_target),
            settled,
            "{what}"
        );
    }
    // The redirect's target decided in its place settles the pair.
    let mut decider = sampled(sample);
    assert_eq!(decider.sample_decided(&sample, true, Some(target)), None);
    decider.links_followed(&target, true);
    assert_eq!(
        decider.sample_decided(&target, false, None),
        Some((pair, true))
    );
    // A page that is no sample settles nothing.
    assert_eq!(
        decider.sample_decided(&crate::key("other"), false, None),
        None
    );
}

/// A decider sampling the mirror `http://m.test` of `http://o.test`, its one sample drawn
/// as `sample`.
pub(super) fn sampling(sample: Key) -> Decider {
    let (copy, original) = (url("http://m.test/story/1/"), url("http://o.test/a/1.html"));
    let mut decider = Decider::new(ON);
    decider.note_copy(&copy, &original);
    let on = decider.found_on(PageFacts {
        copy_of: Some((&copy, &original)),
        matched_by: Some(LinkMatch::Anchor),
        trapped: false,
        original_declared: false,
        local: true,
        page: None,
    });
    assert!(on.mirror);
    let crate::Fate::<Url>::Wait {
        until: crate::Until::Samples { pair, .. },
        ..
    } = decider.mirrors.link(&copy, &original)
    else {
        panic!("a candidate");
    };
    decider.candidate(pair, sample, "http://m.test/story/2/");
    let drawn = decider.draw(true, |_, _| Ok::<_, ()>(crate::Cost::Unknown));
    assert_eq!(drawn.map(|d| d.len()), Ok(1));
    decider.sampled(pair, sample);
    decider
}
