//! Pair-level quality of `nearcrawl compare`: labelled pairs drawn from the web, and
//! precision/recall as the simhash distance k and the LCS thresholds vary.

use std::collections::{BTreeMap, HashMap};

use nearcrawl_dedup::{Analyzer, PageAnalysis};
use nearcrawl_verify::{Verifier, VerifyConfig};
use serde::{Deserialize, Serialize};

use crate::real::RealLabelledWeb;
use crate::truth::Kind;
use crate::web::LabelledWeb;

/// One labelled pair, measured once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeasuredPair {
    /// The pages.
    pub urls: (String, String),
    /// Same content group.
    pub duplicate: bool,
    /// The kind of the second page (what variant, or what negative).
    pub kind: Kind,
    /// Simhash Hamming distance.
    pub distance: u32,
    /// LCS resemble rate.
    pub resemblance: f64,
    /// LCS contain rate.
    pub containment: f64,
    /// The truth's diff ratio of the two main texts (real webs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<f64>,
}

impl MeasuredPair {
    /// The pair of pages `a` and `b` (URL, analysis), with their verification `v`.
    fn of(
        a: (&str, &PageAnalysis),
        b: (&str, &PageAnalysis),
        v: &nearcrawl_verify::Verification,
        duplicate: bool,
        kind: Kind,
        ratio: Option<f64>,
    ) -> MeasuredPair {
        MeasuredPair {
            urls: (a.0.to_owned(), b.0.to_owned()),
            duplicate,
            kind,
            distance: a.1.simhash.distance(b.1.simhash),
            resemblance: v.resemblance,
            containment: v.contained,
            ratio,
        }
    }
}

/// A point of a precision-recall curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    /// The threshold.
    pub threshold: f64,
    /// Precision of "duplicate" at this threshold.
    pub precision: f64,
    /// Recall.
    pub recall: f64,
    /// F1.
    pub f1: f64,
}

/// The pairs and the curves.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairReport {
    /// Positive pairs.
    pub positives: usize,
    /// Negative pairs.
    pub negatives: usize,
    /// Simhash alone: duplicate when distance ≤ k, k = 0..=16.
    pub simhash_k: Vec<CurvePoint>,
    /// LCS verification: duplicate when r ≥ t (contain-rate test off).
    pub lcs_resemblance: Vec<CurvePoint>,
    /// LCS verification: duplicate when c ≥ t (resemble-rate test off).
    pub lcs_containment: Vec<CurvePoint>,
    /// The thresholds of the defaults: (r, c).
    pub default_thresholds: (f64, f64),
    /// The defaults (r ≥ min_resemblance or c ≥ min_containment) on all pairs.
    pub defaults: CurvePoint,
    /// The defaults on the pairs other than the template-heavy shop's: what `compare`, which
    /// has no host context, can and cannot see (the crawler's host template model handles the
    /// shop).
    pub defaults_without_template_pairs: CurvePoint,
    /// The defaults by kind: (pairs, judged duplicate).
    pub default_by_kind: BTreeMap<Kind, (usize, usize)>,
    /// The measured pairs.
    pub pairs: Vec<MeasuredPair>,
}

/// Draws labelled pairs from `web` and measures them with `analyzer`: every pair within a
/// content group (positives), and three kinds of negatives: consecutive product pages of the
/// template-heavy shop, each page's nearest other-group page by simhash, and pages of the same
/// site.
pub fn measure_pairs(web: &LabelledWeb, analyzer: &Analyzer) -> PairReport {
    let mut pages: Vec<(String, Kind, u64, PageAnalysis)> = Vec::new();
    for (site_url, truth) in web.truth.pages() {
        if !truth.scored || matches!(truth.kind, Kind::Index | Kind::Disallowed) {
            continue;
        }
        let Some((site, path)) = web.site_and_path(&site_url) else {
            continue;
        };
        let reply = site.site.reply(&path);
        if reply.status != 200 {
            continue;
        }
        let content_type = reply
            .headers
            .iter()
            .find(|(n, _)| n == "content-type")
            .map(|(_, v)| v.as_str());
        let Ok(url) = url::Url::parse(&site_url) else {
            continue;
        };
        let body = if reply
            .headers
            .iter()
            .any(|(n, v)| n == "content-encoding" && v == "gzip")
        {
            continue;
        } else {
            reply.body.clone()
        };
        pages.push((
            site_url,
            truth.kind,
            truth.group,
            analyzer.analyze_html(&body, content_type, &url),
        ));
    }
    pages.sort_by(|a, b| a.0.cmp(&b.0));
    let mut chosen: Vec<(usize, usize)> = Vec::new();
    let mut by_group: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, page) in pages.iter().enumerate() {
        by_group.entry(page.2).or_default().push(i);
    }
    for members in by_group.values() {
        for (x, &a) in members.iter().enumerate() {
            for &b in &members[x + 1..] {
                chosen.push((a, b));
            }
        }
    }
    let products: Vec<usize> = (0..pages.len())
        .filter(|&i| pages[i].1 == Kind::TemplateNegative)
        .collect();
    chosen.extend(products.windows(2).map(|w| (w[0], w[1])));
    for a in 0..pages.len() {
        let nearest = (0..pages.len())
            .filter(|&b| pages[b].2 != pages[a].2)
            .min_by_key(|&b| pages[a].3.simhash.distance(pages[b].3.simhash));
        if let Some(b) = nearest {
            chosen.push((a.min(b), a.max(b)));
        }
        // Same site, next page in order: an ordinary negative.
        if let Some(b) = (a + 1..pages.len())
            .find(|&b| pages[b].2 != pages[a].2 && same_site(&pages[a].0, &pages[b].0))
        {
            chosen.push((a, b));
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    let mut open = open_verifier(analyzer);
    let mut measured = Vec::new();
    for (a, b) in chosen {
        let (pa, pb) = (&pages[a], &pages[b]);
        let v = open.verify(&pa.3.units(), &pb.3.units());
        let duplicate = pa.2 == pb.2;
        let kind = if duplicate && pa.1 != Kind::Origin {
            pa.1
        } else {
            pb.1
        };
        measured.push(MeasuredPair::of(
            (&pa.0, &pa.3),
            (&pb.0, &pb.3),
            &v,
            duplicate,
            kind,
            None,
        ));
    }
    report_of(measured, analyzer.config().verify_config)
}

/// A verifier that reports every pair's full rates: no threshold, so no skeleton-bound
/// shortcut.
fn open_verifier(analyzer: &Analyzer) -> Verifier {
    Verifier::new(VerifyConfig {
        min_resemblance: 0.0,
        min_containment: 0.0,
        ..analyzer.config().verify_config
    })
}

/// The curves over measured pairs, and the figures of the `defaults` thresholds.
fn report_of(measured: Vec<MeasuredPair>, defaults: VerifyConfig) -> PairReport {
    let mut default_by_kind: BTreeMap<Kind, (usize, usize)> = BTreeMap::new();
    for p in measured.iter().filter(|p| p.duplicate) {
        let entry = default_by_kind.entry(p.kind).or_default();
        entry.0 += 1;
        if p.resemblance >= defaults.min_resemblance || p.containment >= defaults.min_containment {
            entry.1 += 1;
        }
    }
    let curve_over = |pairs: &[&MeasuredPair],
                      thresholds: &[f64],
                      predict: &dyn Fn(&MeasuredPair, f64) -> bool|
     -> Vec<CurvePoint> {
        thresholds
            .iter()
            .map(|&t| {
                let (mut tp, mut fp, mut fnn) = (0.0, 0.0, 0.0);
                for p in pairs {
                    match (predict(p, t), p.duplicate) {
                        (true, true) => tp += 1.0,
                        (true, false) => fp += 1.0,
                        (false, true) => fnn += 1.0,
                        _ => {}
                    }
                }
                let precision = if tp + fp > 0.0 { tp / (tp + fp) } else { 1.0 };
                let recall = if tp + fnn > 0.0 { tp / (tp + fnn) } else { 1.0 };
                let f1 = if precision + recall > 0.0 {
                    2.0 * precision * recall / (precision + recall)
                } else {
                    0.0
                };
                CurvePoint {
                    threshold: t,
                    precision,
                    recall,
                    f1,
                }
            })
            .collect()
    };
    let all: Vec<&MeasuredPair> = measured.iter().collect();
    let without: Vec<&MeasuredPair> = measured
        .iter()
        .filter(|p| p.kind != Kind::TemplateNegative)
        .collect();
    let curve = |thresholds: &[f64], predict: &dyn Fn(&MeasuredPair, f64) -> bool| {
        curve_over(&all, thresholds, predict)
    };
    let by_defaults = |p: &MeasuredPair, _: f64| {
        p.resemblance >= defaults.min_resemblance || p.containment >= defaults.min_containment
    };
    let ks: Vec<f64> = (0..=16).map(f64::from).collect();
    let rates: Vec<f64> = (1..=19).map(|i| f64::from(i) * 0.05).collect();
    PairReport {
        positives: measured.iter().filter(|p| p.duplicate).count(),
        negatives: measured.iter().filter(|p| !p.duplicate).count(),
        simhash_k: curve(&ks, &|p, k| f64::from(p.distance) <= k),
        lcs_resemblance: curve(&rates, &|p, t| p.resemblance >= t),
        lcs_containment: curve(&rates, &|p, t| p.containment >= t),
        default_thresholds: (defaults.min_resemblance, defaults.min_containment),
        defaults: curve_over(&all, &[0.0], &by_defaults)[0],
        defaults_without_template_pairs: curve_over(&without, &[0.0], &by_defaults)[0],
        default_by_kind,
        pairs: measured,
    }
}

/// Labelled pairs drawn from a real web, measured with `analyzer`: every page with each of its
/// counterparts on the other sites, and with the pages the index would bring up as candidates
/// (its nearest simhash, and those sharing most sentence fingerprints with it). Labels from
/// the truth's diff ratio: duplicate at 0.8 or more, distinct at 0.5 or less, others left out.
pub fn measure_real_pairs(web: &RealLabelledWeb, analyzer: &Analyzer) -> PairReport {
    let mut pages: Vec<(String, Kind, PageAnalysis)> = Vec::new();
    for (url, truth) in web.truth.pages() {
        if truth.kind == Kind::Empty {
            continue;
        }
        let (Some((body, content_type)), Ok(parsed)) = (web.body(&url), url::Url::parse(&url))
        else {
            continue;
        };
        let analysis = if content_type.starts_with("text/html") {
            analyzer.analyze_html(&body, Some(&content_type), &parsed)
        } else {
            analyzer.analyze_text(&String::from_utf8_lossy(&body))
        };
        pages.push((url, truth.kind, analysis));
    }
    let index: HashMap<&str, usize> = pages
        .iter()
        .enumerate()
        .map(|(i, p)| (p.0.as_str(), i))
        .collect();
    let mut chosen: Vec<(usize, usize)> = Vec::new();
    let config = nearcrawl_dedup::stage_sentence_config();
    let mut sentences = nearcrawl_verify::CandidateIndex::new(Default::default());
    let fingerprints: Vec<_> = pages
        .iter()
        .map(|p| nearcrawl_verify::sentence_fingerprints(&p.2.text, &config))
        .collect();
    for (i, f) in fingerprints.iter().enumerate() {
        sentences.insert(i as u64, "web", f);
    }
    for (a, page) in pages.iter().enumerate() {
        for other in web.truth.counterparts(&page.0) {
            if let Some(&b) = index.get(other.as_str()) {
                chosen.push((a.min(b), a.max(b)));
            }
        }
        let nearest = (0..pages.len())
            .filter(|&b| b != a)
            .min_by_key(|&b| page.2.simhash.distance(pages[b].2.simhash));
        chosen.extend(nearest.map(|b| (a.min(b), a.max(b))));
        for (b, _) in sentences.candidates(&fingerprints[a]).into_iter().take(5) {
            let b = b as usize;
            if b != a {
                chosen.push((a.min(b), a.max(b)));
            }
        }
    }
    chosen.sort_unstable();
    chosen.dedup();
    let mut open = open_verifier(analyzer);
    let mut measured = Vec::new();
    for (a, b) in chosen {
        let (pa, pb) = (&pages[a], &pages[b]);
        let Some(ratio) = web.truth.pair_ratio(&pa.0, &pb.0) else {
            continue;
        };
        let duplicate = if ratio >= crate::real::NEAR_RATIO {
            true
        } else if ratio <= crate::real::DISTINCT_RATIO {
            false
        } else {
            continue;
        };
        let v = open.verify(&pa.2.units(), &pb.2.units());
        let kind = if pa.1 == Kind::RealFirst { pb.1 } else { pa.1 };
        let pair = MeasuredPair::of(
            (&pa.0, &pa.2),
            (&pb.0, &pb.2),
            &v,
            duplicate,
            kind,
            Some(ratio),
        );
        measured.push(pair);
    }
    report_of(measured, analyzer.config().verify_config)
}

fn same_site(a: &str, b: &str) -> bool {
    let host = |u: &str| u.split('/').nth(2).map(str::to_owned);
    host(a) == host(b)
}

impl PairReport {
    /// The curves as a table.
    pub fn summary(&self) -> String {
        let mut out = format!(
            "{} positive and {} negative pairs\n",
            self.positives, self.negatives
        );
        for (name, curve) in [
            ("simhash k", &self.simhash_k),
            ("LCS r >=", &self.lcs_resemblance),
            ("LCS c >=", &self.lcs_containment),
        ] {
            out.push_str(&format!("{name:<10} precision recall  F1\n"));
            for p in curve {
                out.push_str(&format!(
                    "{:<10.2} {:>9.3} {:>6.3} {:>5.3}\n",
                    p.threshold, p.precision, p.recall, p.f1
                ));
            }
        }
        out.push_str(&format!(
            "defaults (r >= {} or c >= {}): precision {:.3} recall {:.3} F1 {:.3}; without the shop's template-heavy pairs: precision {:.3} recall {:.3}\n",
            self.default_thresholds.0,
            self.default_thresholds.1,
            self.defaults.precision,
            self.defaults.recall,
            self.defaults.f1,
            self.defaults_without_template_pairs.precision,
            self.defaults_without_template_pairs.recall
        ));
        out.push_str("defaults by kind of duplicate: pairs, judged duplicate\n");
        for (kind, (n, yes)) in &self.default_by_kind {
            out.push_str(&format!("  {kind:?}: {n}, {yes}\n"));
        }
        out
    }

    /// The three curves as an SVG precision-recall plot.
    pub fn svg(&self) -> String {
        let (w, h, m) = (640.0, 480.0, 60.0);
        let x = |r: f64| m + r * (w - 2.0 * m);
        let y = |p: f64| h - m - p * (h - 2.0 * m);
        let mut svg = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        );
        svg.push_str(&format!("<line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n<line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>\n", h - m, w - m, h - m, h - m));
        for i in 0..=10 {
            let v = f64::from(i) / 10.0;
            svg.push_str(&format!(
                "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">{v:.1}</text>\n",
                x(v),
                h - m + 18.0
            ));
            svg.push_str(&format!(
                "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"end\">{v:.1}</text>\n",
                m - 6.0,
                y(v) + 4.0
            ));
        }
        svg.push_str(&format!(
            "<text x=\"{:.0}\" y=\"{:.0}\" text-anchor=\"middle\">recall</text>\n",
            w / 2.0,
            h - 15.0
        ));
        svg.push_str(&format!("<text x=\"15\" y=\"{:.0}\" transform=\"rotate(-90 15 {:.0})\" text-anchor=\"middle\">precision</text>\n", h / 2.0, h / 2.0));
        for (i, (name, curve, color)) in [
            (
                "simhash, distance &lt;= k (k = 0..16)",
                &self.simhash_k,
                "#d62728",
            ),
            (
                "LCS resemble rate r &gt;= t",
                &self.lcs_resemblance,
                "#1f77b4",
            ),
            (
                "LCS contain rate c &gt;= t",
                &self.lcs_containment,
                "#2ca02c",
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let points: Vec<String> = curve
                .iter()
                .map(|p| format!("{:.1},{:.1}", x(p.recall), y(p.precision)))
                .collect();
            svg.push_str(&format!(
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>\n",
                points.join(" ")
            ));
            for p in curve {
                svg.push_str(&format!(
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\" fill=\"{color}\"/>\n",
                    x(p.recall),
                    y(p.precision)
                ));
            }
            let ly = m + 16.0 * i as f64;
            svg.push_str(&format!("<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{name}</text>\n", m + 10.0, m + 30.0, m + 36.0, ly + 4.0));
        }
        svg.push_str(&format!("<text x=\"{:.0}\" y=\"20\" text-anchor=\"middle\">nearcrawl compare on {} labelled pairs</text>\n</svg>\n", w / 2.0, self.positives + self.negatives));
        svg
    }
}
