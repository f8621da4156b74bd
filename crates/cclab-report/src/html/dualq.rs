//! The dual-queue view (L4S at a glance): for a document whose bottleneck is a DualQ AQM
//! (DualPI2: results carry `data.queue.l` and `data.queue.c`), per matrix point the share each
//! controller got and the delay each queue kept, as a table with a one-line answer, and the
//! two queues' p99 delays as bars. The L4S question ("what does a scalable sender get in a
//! DualQ queue, and what does it do to classic traffic beside it?") is answered by these two
//! numbers side by side: the rate ratio (the coupling aims for rate parity, RFC 9332's k = 2)
//! and the L queue's delay against the C queue's.

use super::lookup::{
    ccs_of, goodput_of, median_min_max, point_label, points, seeds_note, share_of,
};
use super::page::Page;
use crate::plot::{self, esc, Axis, Bar, BarChart, Unit};
use crate::units;
use cclab_results::{ResultsDoc, RunResult};
use std::fmt::Write;

/// The results' names of a dual queue's two queues.
const L: &str = "data.queue.l";
const C: &str = "data.queue.c";
/// Colours of the L and C queues, as in the runs' queue charts.
pub(super) const L_COLOR: &str = "#1f6feb";
pub(super) const C_COLOR: &str = "#bc4c00";

/// Whether any run of `doc` went through a dual queue.
pub(crate) fn has_dual_queue(doc: &ResultsDoc) -> bool {
    doc.runs.iter().any(|r| r.link.queues.contains_key(L))
}

/// One point's figures, medians over its seeds.
struct PointFigures {
    label: String,
    seeds: usize,
    /// (controller, goodput median, share median).
    ccs: Vec<(String, f64, Option<f64>)>,
    /// p50 and p99 delay of the L and C queues, ms: ((p50, p99), (p50, p99)).
    l: (f64, f64),
    c: (f64, f64),
    /// L queue marks (all, step) and C queue drops, medians.
    l_marks: f64,
    step_marks: f64,
    c_drops: f64,
}

fn med(runs: &[&RunResult], f: impl Fn(&RunResult) -> f64) -> f64 {
    let v: Vec<f64> = runs.iter().map(|r| f(r)).collect();
    median_min_max(&v).0
}

fn queue(r: &RunResult, name: &str) -> (f64, f64) {
    r.link
        .queues
        .get(name)
        .map(|q| (q.p50, q.p99))
        .unwrap_or((0.0, 0.0))
}

fn counter(r: &RunResult, name: &str) -> f64 {
    r.link
        .elements
        .get("data.queue")
        .and_then(|e| e.get(name))
        .copied()
        .unwrap_or(0) as f64
}

fn figures(doc: &ResultsDoc) -> Vec<PointFigures> {
    points(doc)
        .into_iter()
        .filter_map(|(params, idx)| {
            let runs: Vec<&RunResult> = idx
                .iter()
                .map(|&i| &doc.runs[i])
                .filter(|r| r.link.queues.contains_key(L))
                .collect();
            let first = runs.first()?;
            let ccs = ccs_of(first)
                .into_iter()
                .map(|cc| {
                    let g = med(&runs, |r| goodput_of(r, &cc));
                    let shares: Vec<f64> = runs.iter().filter_map(|r| share_of(r, &cc)).collect();
                    let s = (!shares.is_empty()).then(|| median_min_max(&shares).0);
                    (cc, g, s)
                })
                .collect();
            // The controllers name the point ("prague + cubic"), after any other swept value.
            let pair = ccs_of(first).join(" + ");
            let swept = point_label(doc, &params);
            let label = if swept == doc.scenario {
                pair
            } else {
                format!("{}, {pair}", swept.replace('\n', ", "))
            };
            Some(PointFigures {
                label,
                seeds: runs.len(),
                ccs,
                l: (med(&runs, |r| queue(r, L).0), med(&runs, |r| queue(r, L).1)),
                c: (med(&runs, |r| queue(r, C).0), med(&runs, |r| queue(r, C).1)),
                l_marks: med(&runs, |r| counter(r, "l_marked")),
                step_marks: med(&runs, |r| counter(r, "step_marked")),
                c_drops: med(&runs, |r| counter(r, "c_dropped")),
            })
        })
        .collect()
}

/// The one-line answer for a point: the rate ratio between its two controllers (when it has
/// two) and the two queues' p99 delays.
fn answer(p: &PointFigures) -> String {
    let delays = format!(
        "L queue p99 {}, C queue p99 {}",
        units::ms(p.l.1),
        units::ms(p.c.1)
    );
    match &p.ccs[..] {
        [(a, ga, _), (b, gb, _)] if *ga > 0.0 && *gb > 0.0 => {
            let (hi, ghi, lo, glo) = if ga >= gb {
                (a, ga, b, gb)
            } else {
                (b, gb, a, ga)
            };
            let ratio = ghi / glo;
            format!(
                "{hi} gets {ratio:.1}x {lo}'s rate ({}); {delays}",
                if ratio <= 2.0 {
                    "within the 0.5-2x the coupling aims for"
                } else {
                    "outside the 0.5-2x the coupling aims for"
                }
            )
        }
        _ => delays,
    }
}

/// The section: a table of every point and a bar chart of the queues' p99 delays. Nothing
/// for a document without a dual queue.
pub(crate) fn section(page: &mut Page, doc: &ResultsDoc, name: &str) {
    if !has_dual_queue(doc) {
        return;
    }
    let pts = figures(doc);
    if pts.is_empty() {
        return;
    }
    let note = seeds_note(pts.iter().map(|p| p.seeds));
    let _ = write!(
        page.body,
        "<h3>Dual queue (L4S) at a glance</h3><p class=\"muted note\">Each controller's goodput and share, and the delay each of DualPI2's queues kept (L: ECT(1) and CE, the scalable senders; C: classic traffic){}. The coupling aims for rate parity between a scalable and a classic flow; the L queue's delay should sit near the step threshold (1 ms by default) while the C queue's sits near its target (15 ms).</p>",
        esc(&note)
    );
    page.body.push_str("<div class=\"tablewrap\"><table class=\"summary dualq\"><thead><tr><th>point</th><th>controllers: goodput (share)</th><th class=\"n\">L queue p50 / p99</th><th class=\"n\">C queue p50 / p99</th><th class=\"n\" title=\"CE marks in the L queue (of which step marks: the L packets that waited past the step threshold)\">L marks (step)</th><th class=\"n\" title=\"C queue packets dropped by the AQM\">C drops</th><th>answer</th></tr></thead><tbody>");
    for p in &pts {
        let ccs = p
            .ccs
            .iter()
            .map(|(cc, g, s)| {
                format!(
                    "{} {}{}",
                    esc(cc),
                    units::rate(*g),
                    s.map(|s| format!(" ({})", units::pct(s)))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("<br>");
        let _ = write!(
            page.body,
            "<tr><td>{}</td><td>{ccs}</td><td class=\"n\">{} / {}</td><td class=\"n\">{} / {}</td><td class=\"n\">{:.0} ({:.0})</td><td class=\"n\">{:.0}</td><td>{}</td></tr>",
            esc(&p.label),
            units::ms(p.l.0),
            units::ms(p.l.1),
            units::ms(p.c.0),
            units::ms(p.c.1),
            p.l_marks,
            p.step_marks,
            p.c_drops,
            esc(&answer(p))
        );
    }
    page.body.push_str("</tbody></table></div>");
    // The two queues' p99 delays per point.
    let mut bars = Vec::new();
    let groups: Vec<String> = pts.iter().map(|p| p.label.replace(", ", "\n")).collect();
    for (g, p) in pts.iter().enumerate() {
        for (series, color, v) in [
            ("L queue p99", L_COLOR, p.l.1),
            ("C queue p99", C_COLOR, p.c.1),
        ] {
            bars.push(Bar {
                group: g,
                color: color.to_string(),
                series: series.to_string(),
                value: v,
                spread: None,
                reference: None,
                label: units::ms(v),
                tip: format!("{} · {series}: {}", p.label, units::ms(v)),
            });
        }
    }
    let chart = BarChart {
        title: format!(
            "{}: queue delay p99 of the L and C queues{note}",
            doc.scenario
        ),
        y: Axis::new("queue delay", Unit::Ms),
        groups,
        x_label: String::new(),
        bars,
        width: 640.0,
        height: 300.0,
    };
    let id = page.id();
    let svg = plot::bar_chart(&chart, &id);
    page.body.push_str("<div class=\"grid\">");
    page.figure(&format!("{name}-dual-queue-delay"), svg, false);
    page.body.push_str("</div>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};
    use cclab_results::QueuePercentiles;

    /// A run of `flows` (cc, goodput) through a dual queue with the given p99 delays, or
    /// through a single queue when `dual` is None.
    fn run(seed: u64, cc2: &str, flows: &[(&str, f64)], dual: Option<(f64, f64)>) -> RunResult {
        let mut r = RunBuilder::new()
            .seed(seed)
            .duration(10.0)
            .param("flows.1.cc", cc2)
            .link_rate(50e6)
            .flows(flows)
            .build();
        if let Some((l99, c99)) = dual {
            for (q, p99) in [(L, l99), (C, c99)] {
                let p = QueuePercentiles {
                    p50: p99 / 3.0,
                    p95: p99 / 2.0,
                    p99,
                };
                r.link.queues.insert(q.to_string(), p);
            }
            let e = r.link.elements.entry("data.queue".into()).or_default();
            e.insert("l_marked".into(), 2000 + seed);
            e.insert("step_marked".into(), 5);
            e.insert("c_dropped".into(), 17);
        }
        r
    }

    fn doc(runs: Vec<RunResult>) -> ResultsDoc {
        DocBuilder::new()
            .cclab("0")
            .scenario("l4s")
            .runs(runs)
            .build()
    }

    fn rendered(d: &ResultsDoc) -> String {
        let mut page = Page::new();
        section(&mut page, d, "l4s");
        page.body
    }

    #[test]
    fn a_dual_queue_gets_shares_delays_and_an_answer_per_point() {
        let d = doc(vec![
            run(
                1,
                "cubic",
                &[("prague", 30e6), ("cubic", 15e6)],
                Some((0.5, 23.0)),
            ),
            run(
                2,
                "cubic",
                &[("prague", 32e6), ("cubic", 16e6)],
                Some((0.4, 25.0)),
            ),
            run(
                1,
                "bbr3",
                &[("prague", 20e6), ("bbr3", 26e6)],
                Some((0.6, 50.0)),
            ),
        ]);
        let html = rendered(&d);
        assert!(html.contains("Dual queue (L4S) at a glance"));
        // Points named by their controllers, medians over the two seeds.
        assert!(html.contains("prague + cubic") && html.contains("prague + bbr3"));
        assert!(html.contains("prague 31.0 Mbit/s"), "{html}");
        assert!(
            html.contains("prague gets 2.0x cubic&#39;s rate (within"),
            "{html}"
        );
        assert!(
            html.contains("bbr3 gets 1.3x prague&#39;s rate (within"),
            "{html}"
        );
        assert!(html.contains("C queue p99 24.0 ms"), "{html}");
        // The bars: one L and one C per point.
        assert_eq!(html.matches("L queue p99:").count(), 2, "{html}");
        assert!(html.contains("data-name=\"l4s-dual-queue-delay\""));
    }

    #[test]
    fn a_ratio_past_two_is_called_outside_the_coupling_s_aim() {
        let d = doc(vec![run(
            1,
            "cubic",
            &[("prague", 40e6), ("cubic", 8e6)],
            Some((0.5, 20.0)),
        )]);
        assert!(rendered(&d).contains("prague gets 5.0x cubic&#39;s rate (outside"));
    }

    #[test]
    fn no_section_without_a_dual_queue() {
        let d = doc(vec![run(
            1,
            "cubic",
            &[("prague", 30e6), ("cubic", 15e6)],
            None,
        )]);
        assert!(!has_dual_queue(&d));
        assert!(rendered(&d).is_empty());
    }
}
