//! Inline SVG charts: cumulative lines and bar histograms, axes labelled, no script. Each
//! chart is a `<figure>` holding an `<svg role="img">` with a `<title>`, and a caption.

use std::fmt::Write as _;

use crate::escape;

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 70.0;
const BOTTOM: f64 = 30.0;
const TOP: f64 = 10.0;

/// One line of a line chart.
pub struct Series {
    pub name: &'static str,
    pub colour: &'static str,
    pub values: Vec<f64>,
}

/// A chart of lines over the same `x` (increasing), with a legend.
pub fn lines(title: &str, x_label: &str, x: &[f64], series: &[Series]) -> String {
    let x_max = x.last().copied().unwrap_or(0.0).max(1.0);
    let max = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0f64, f64::max)
        .max(1.0);
    let mut svg = open(title);
    axes(&mut svg, max, x_label);
    let plot_w = WIDTH - LEFT - 10.0;
    let plot_h = HEIGHT - BOTTOM - TOP;
    for s in series {
        let points: Vec<String> = x
            .iter()
            .zip(&s.values)
            .map(|(x, v)| {
                let x = LEFT + plot_w * x / x_max;
                let y = TOP + plot_h * (1.0 - v / max);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        let _ = write!(
            svg,
            "<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>",
            s.colour,
            points.join(" "),
            escape(s.name)
        );
    }
    close(svg, title, series)
}

/// A histogram: one bar per label.
pub fn bars(title: &str, labels: &[String], counts: &[u64]) -> String {
    let max = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let mut svg = open(title);
    axes(&mut svg, max, "");
    let plot_w = WIDTH - LEFT - 10.0;
    let plot_h = HEIGHT - BOTTOM - TOP;
    let slot = plot_w / counts.len().max(1) as f64;
    for (i, (label, count)) in labels.iter().zip(counts).enumerate() {
        let h = plot_h * *count as f64 / max;
        let x = LEFT + slot * i as f64;
        let _ = write!(
            svg,
            "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#2b7bb9\"><title>{}: {count}</title></rect>",
            x + 1.0,
            TOP + plot_h - h,
            (slot - 2.0).max(1.0),
            escape(label)
        );
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
            x + slot / 2.0,
            HEIGHT - BOTTOM + 14.0,
            escape(label)
        );
    }
    close(svg, title, &[])
}

fn open(title: &str) -> String {
    format!(
        "<figure><svg role=\"img\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
        escape(title)
    )
}

fn axes(svg: &mut String, max: f64, x_label: &str) {
    let bottom = HEIGHT - BOTTOM;
    let _ = write!(
        svg,
        "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{bottom}\" stroke=\"#444\"/><line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"#444\"/>",
        WIDTH - 10.0
    );
    let _ = write!(
        svg,
        "<text x=\"{}\" y=\"{}\" font-size=\"10\" text-anchor=\"end\">{}</text><text x=\"{}\" y=\"{bottom}\" font-size=\"10\" text-anchor=\"end\">0</text>",
        LEFT - 4.0,
        TOP + 10.0,
        human(max),
        LEFT - 4.0
    );
    if !x_label.is_empty() {
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            LEFT + (WIDTH - LEFT) / 2.0,
            HEIGHT - 8.0,
            escape(x_label)
        );
    }
}

/// Ends the chart with its caption: the title and the legend.
fn close(mut svg: String, title: &str, series: &[Series]) -> String {
    svg.push_str("</svg><figcaption>");
    svg.push_str(&escape(title));
    for s in series {
        let _ = write!(
            svg,
            " <span style=\"color:{}\">&#9632; {}</span>",
            s.colour,
            escape(s.name)
        );
    }
    svg.push_str("</figcaption></figure>\n");
    svg
}

fn human(n: f64) -> String {
    match n {
        n if n >= 1e9 => format!("{:.1}G", n / 1e9),
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e3 => format!("{:.1}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}
