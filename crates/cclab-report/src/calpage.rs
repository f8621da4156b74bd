//! The calibration page (`report.html` of `cclab calibrate`): how well the simulator predicts
//! the kernel, at a glance. The targets' summary on top, then per metric (goodput,
//! retransmit ratio, RTT p50) a scatter of the simulator's value against the kernel's median
//! on log axes, with the y = x line, the ±10% band around it and the kernel's min–max range
//! as a horizontal error bar; each point coloured by controller, its scenario, parameters and
//! values on hover. The full tables follow, collapsed.
//!
//! The data comes in plain structs ([`CalReport`]) that `cclab calibrate` fills from its
//! calibration, so this crate does not depend on the runner.

use crate::html::{shell, Page, Palette};
use crate::plot::{self, esc, Scatter, ScatterPoint, Unit};
use crate::units;
use std::fmt::Write;

/// Median and range of one metric over a backend's seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct CalStats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

/// One matrix point, flow and metric.
#[derive(Clone, Debug)]
pub struct CalPoint {
    pub scenario: String,
    pub params: String,
    /// The flow as the tables name it (`0 cubic`, `cubic #1/2`).
    pub flow: String,
    pub cc: String,
    /// `goodput_bps`, `retrans_ratio` or `rtt_p50_ms`.
    pub metric: String,
    /// The simulator's value (its median over the kernel's seeds).
    pub sim: f64,
    pub sim_stats: CalStats,
    pub kernel: Option<CalStats>,
    /// (sim - kernel median) / kernel median.
    pub error: Option<f64>,
    /// Whether the point meets its metric's target (None: the target does not apply).
    pub ok: Option<bool>,
}

/// The whole page's data.
#[derive(Clone, Debug, Default)]
pub struct CalReport {
    pub title: String,
    pub version: String,
    /// Paragraphs under the title (plain text).
    pub intro: Vec<String>,
    /// (target, result, met).
    pub targets: Vec<(String, String, bool)>,
    /// (controller, metric, points, median abs error, worst abs error).
    pub per_cc: Vec<(String, String, usize, f64, f64)>,
    pub points: Vec<CalPoint>,
}

/// The metrics drawn, in order: (key, title, unit).
const METRICS: [(&str, &str, Unit); 3] = [
    ("goodput_bps", "goodput", Unit::Rate),
    ("retrans_ratio", "retransmit ratio", Unit::Loss),
    ("rtt_p50_ms", "RTT p50", Unit::Ms),
];

fn fmt(metric: &str, v: f64) -> String {
    match metric {
        "goodput_bps" => units::rate(v),
        "retrans_ratio" => units::pct(v),
        _ => units::ms(v),
    }
}

fn range(metric: &str, s: &CalStats) -> String {
    format!(
        "{} [{} – {}]",
        fmt(metric, s.median),
        fmt(metric, s.min),
        fmt(metric, s.max)
    )
}

/// Render the calibration page.
pub fn render(c: &CalReport) -> String {
    let pal = Palette::new(c.points.iter().map(|p| p.cc.as_str()));
    let mut ccs: Vec<&str> = Vec::new();
    for p in &c.points {
        if !ccs.contains(&p.cc.as_str()) {
            ccs.push(&p.cc);
        }
    }
    let mut page = Page::new();
    let b = &mut page.body;
    for p in &c.intro {
        let _ = write!(b, "<p class=\"desc\">{}</p>", esc(p));
    }
    b.push_str("<h2>Summary</h2>");
    if c.targets.is_empty() {
        b.push_str("<p>Simulator only (no kernel runs): nothing to compare.</p>");
    } else {
        b.push_str("<div class=\"tablewrap\"><table class=\"summary targets\"><thead><tr><th>target</th><th>result</th><th>met</th></tr></thead><tbody>");
        for (t, r, met) in &c.targets {
            let _ = write!(
                b,
                "<tr class=\"runstart\"><td>{}</td><td>{}</td><td class=\"{}\">{}</td></tr>",
                esc(t),
                esc(r),
                if *met { "ok" } else { "off" },
                if *met { "yes" } else { "no" }
            );
        }
        b.push_str("</tbody></table></div>");
    }
    if !c.per_cc.is_empty() {
        b.push_str("<div class=\"tablewrap\"><table class=\"summary\"><thead><tr><th>controller</th><th>metric</th><th class=\"n\">points</th><th class=\"n\">median |error|</th><th class=\"n\">worst |error|</th></tr></thead><tbody>");
        for (cc, m, n, med, worst) in &c.per_cc {
            let _ = write!(
                b,
                "<tr class=\"runstart\"><td><span class=\"dot\" style=\"background:{}\"></span>{}</td><td>{}</td><td class=\"n\">{n}</td><td class=\"n\">{:.1}%</td><td class=\"n\">{:.1}%</td></tr>",
                pal.color(cc),
                esc(cc),
                esc(m),
                med * 100.0,
                worst * 100.0
            );
        }
        b.push_str("</tbody></table></div>");
    }
    b.push_str("<h2>Simulator against kernel</h2><p class=\"muted\">One point per matrix point and flow: x the kernel's median over its seeds (bar: its min–max), y the simulator's median over the same seeds. On the dashed line the simulator predicts the kernel exactly; the green band is ±10%. Hover a point for its scenario and values; a point at the axis minimum drawn hollow has 0 on one side.</p><div class=\"grid\">");
    for (key, title, unit) in METRICS {
        let pts: Vec<&CalPoint> = c
            .points
            .iter()
            .filter(|p| p.metric == key && p.kernel.is_some())
            .collect();
        if pts.is_empty() {
            continue;
        }
        let off = pts.iter().filter(|p| p.ok == Some(false)).count();
        let s = Scatter {
            title: format!(
                "{title}: simulator vs kernel ({} points{})",
                pts.len(),
                if off > 0 {
                    format!(", {off} off target")
                } else {
                    String::new()
                }
            ),
            x_label: format!("kernel {title}"),
            y_label: format!("simulator {title}"),
            unit,
            points: pts
                .iter()
                .map(|p| {
                    let k = p.kernel.as_ref().expect("filtered");
                    let mut tip = format!(
                        "{} · {} · flow {}\nsimulator {}\nkernel {}",
                        p.scenario,
                        p.params,
                        p.flow,
                        range(key, &p.sim_stats),
                        range(key, k)
                    );
                    if let Some(e) = p.error {
                        tip.push_str(&format!("\nerror {:+.1}%", e * 100.0));
                    }
                    match p.ok {
                        Some(true) => tip.push_str(" · meets the target"),
                        Some(false) => tip.push_str(" · misses the target"),
                        None => {}
                    }
                    ScatterPoint {
                        x: k.median,
                        y: p.sim,
                        x_range: (k.max > k.min).then_some((k.min, k.max)),
                        color: pal.color(&p.cc),
                        tip,
                    }
                })
                .collect(),
            band: 0.1,
            legend: ccs
                .iter()
                .filter(|cc| pts.iter().any(|p| p.cc == **cc))
                .map(|cc| (cc.to_string(), pal.color(cc)))
                .collect(),
            width: 600.0,
            height: 540.0,
        };
        let id = page.id();
        let svg = plot::scatter(&s, &id);
        page.figure(
            &format!("calibration-{}", key.replace('_', "-")),
            svg,
            false,
        );
    }
    let b = &mut page.body;
    b.push_str("</div>");
    for (key, title, _) in METRICS {
        let pts: Vec<&CalPoint> = c.points.iter().filter(|p| p.metric == key).collect();
        if pts.is_empty() {
            continue;
        }
        let _ = write!(
            b,
            "<details class=\"run\"><summary><strong>{title}</strong> <span class=\"muted\">— every point ({})</span></summary><div class=\"tablewrap\"><table class=\"summary\"><thead><tr><th>scenario</th><th>params</th><th>flow</th><th class=\"n\">simulator median [min – max]</th><th class=\"n\">kernel median [min – max]</th><th class=\"n\">error</th><th>ok</th></tr></thead><tbody>",
            pts.len()
        );
        for p in pts {
            let _ = write!(
                b,
                "<tr class=\"runstart\"><td>{}</td><td>{}</td><td><span class=\"dot\" style=\"background:{}\"></span>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"{}\">{}</td></tr>",
                esc(&p.scenario),
                esc(&p.params),
                pal.color(&p.cc),
                esc(&p.flow),
                esc(&range(key, &p.sim_stats)),
                p.kernel.as_ref().map_or("–".into(), |k| esc(&range(key, k))),
                p.error.map_or("–".into(), |e| format!("{:+.1}%", e * 100.0)),
                match p.ok {
                    Some(true) => "ok",
                    Some(false) => "off",
                    None => "muted",
                },
                match p.ok {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "n/a",
                }
            );
        }
        b.push_str("</tbody></table></div></details>");
    }
    let meta = format!(
        "{} points · cclab {} · every plot can be downloaded as SVG or PNG (buttons under it)",
        c.points
            .iter()
            .map(|p| (&p.scenario, &p.params, &p.flow))
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        esc(&c.version)
    );
    shell(
        &c.title,
        &meta,
        &c.version,
        &page,
        "cclab calibrate --kernel-from DIR --out DIR",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(m: f64, lo: f64, hi: f64) -> CalStats {
        CalStats {
            median: m,
            min: lo,
            max: hi,
            n: 5,
        }
    }

    fn point(sc: &str, cc: &str, metric: &str, sim: f64, k: f64, ok: bool) -> CalPoint {
        CalPoint {
            scenario: sc.into(),
            params: "link.loss=0.01".into(),
            flow: format!("0 {cc}"),
            cc: cc.into(),
            metric: metric.into(),
            sim,
            sim_stats: stats(sim, sim * 0.9, sim * 1.1),
            kernel: Some(stats(k, k * 0.8, k * 1.2)),
            error: Some((sim - k) / k),
            ok: Some(ok),
        }
    }

    #[test]
    fn page_has_targets_and_a_scatter_per_metric() {
        let c = CalReport {
            title: "Calibration: simulator vs kernel".into(),
            version: "0.1.0".into(),
            intro: vec!["Synthetic.".into()],
            targets: vec![("goodput within 10%".into(), "93% of 55".into(), true)],
            per_cc: vec![("cubic".into(), "goodput_bps".into(), 2, 0.01, 0.3)],
            points: vec![
                point("cal-a", "cubic", "goodput_bps", 9.5e6, 9.6e6, true),
                point("cal-b", "bbr", "goodput_bps", 50e6, 40e6, false),
                point("cal-a", "cubic", "retrans_ratio", 0.01, 0.012, true),
                point("cal-a", "cubic", "rtt_p50_ms", 21.0, 20.5, true),
            ],
        };
        let html = render(&c);
        assert!(html.starts_with("<!DOCTYPE html>"));
        // Summary on top of the scatters.
        let t = html.find("table class=\"summary targets\"").unwrap();
        let s = html.find("data-name=\"calibration-goodput-bps\"").unwrap();
        assert!(t < s);
        for m in ["goodput-bps", "retrans-ratio", "rtt-p50-ms"] {
            assert!(
                html.contains(&format!("data-name=\"calibration-{m}\"")),
                "{m}"
            );
        }
        let g = &html[s..s + html[s..].find("</figure>").unwrap()];
        assert_eq!(g.matches("class=\"pt\"").count(), 2);
        assert_eq!(g.matches("class=\"eb\"").count(), 2, "kernel ranges");
        assert!(g.contains("class=\"diag\"") && g.contains("±10%"));
        // Colour per controller, scenario and params on hover.
        assert!(g.contains("fill=\"#1c64d8\"") && g.contains("fill=\"#e8590c\""));
        assert!(g.contains("<title>cal-b · link.loss=0.01 · flow 0 bbr"));
        assert!(g.contains("misses the target"));
        assert!(g.contains("1 off target"));
        // No interactive library needed here.
        assert!(!html.contains("leeoniya"));
    }
}
