//! A recrawl's pages ([`crate::recrawl`]) as the coordinator decides them: a 304 archived as
//! a revisit of the previous capture, whose text joins this job's index; and each revisited
//! page's record marked with how it came back, a changed one measured against its previous
//! text.

use super::{
    Commit, Coordinator, Decided, Decision, EngineError, Fetched, Original, Record, Verdict,
};
use nearcrawl_store::Previous;

impl Coordinator {
    /// The decision on a page the server answered 304 for, asked with `previous`'s
    /// validators: the previous capture stands; the answer is archived as a revisit of it.
    pub(super) fn decide_not_modified(
        &mut self,
        page: &Fetched,
        url: &str,
        previous: &Previous,
    ) -> Result<Decided, EngineError> {
        let date = previous.fetched_at.clone().unwrap_or_default();
        let original =
            Original::not_modified(url, &date).in_record(previous.warc_record_id.as_deref());
        let verdict = Verdict::NotModified.as_str();
        self.archive
            .response(page, Some(original), &[("verdict", verdict.into())])?;
        Ok(Decided::new(Decision::new(Verdict::NotModified)))
    }

    /// Marks `record`, a revisited page's (`previous`, its capture then), with how it came
    /// back: a 304's previous text kept in this job's index when unique; a changed page's
    /// similarity to its previous text measured.
    pub(super) fn compare_with_previous(
        &mut self,
        record: &mut Record,
        previous: &Previous,
        commit: &mut Commit,
    ) -> Result<(), EngineError> {
        // A shared job's index is the job's, and the previous texts stay with the process
        // that crawled them: neither is read here.
        let local = self.job.redis.is_none();
        if record.verdict == Verdict::NotModified && local {
            self.keep_not_modified(record.seq, &record.url, previous, commit)?;
        }
        crate::recrawl::mark(record, previous);
        if record.change == Some(nearcrawl_records::Change::Changed)
            && local
            && let (Some((_, text)), Some(dir)) = (&commit.unique_text, &self.job.config.previous)
        {
            let units = |text: &str| nearcrawl_text::unit_hashes(text);
            record.change_similarity =
                self.previous_texts
                    .similarity(dir, previous, &units(text), units)?;
        }
        Ok(())
    }

    /// A recrawl's page the server answered 304 for (`seq`, at `url`): its previous capture's
    /// text, when the previous job kept it, is judged against this crawl's kept pages and,
    /// unique, kept as this page's, so that a copy of it found later is judged a duplicate
    /// and the next recrawl compares with it. Returns whether it was kept.
    fn keep_not_modified(
        &mut self,
        seq: u64,
        url: &str,
        previous: &Previous,
        commit: &mut Commit,
    ) -> Result<bool, EngineError> {
        let Some(dir) = self.job.config.previous.clone() else {
            return Ok(false);
        };
        let Some(text) = self.previous_texts.text(&dir, previous)? else {
            return Ok(false);
        };
        // A recrawl's judge is here (see `Coordinator::run`).
        let judged = self.judge.local()?.judge_text(&text)?;
        let judgement = judged.judgement;
        if judgement.verdict != nearcrawl_dedup::Likeness::Unique {
            return Ok(false);
        }
        let host = url::Url::parse(url)
            .map(|u| nearcrawl_frontier::authority(&u))
            .unwrap_or_default();
        self.keep_unique(seq, &host, &judgement, judged.postings, commit)?;
        Ok(true)
    }
}
