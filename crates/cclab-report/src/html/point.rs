//! Controllers side by side: per matrix point, every controller's run on one time axis
//! (goodput, cwnd, RTT), each controller in its colour. The question "what does BBR do that
//! CUBIC does not, on this path?" answered by one chart instead of two run sections.

use super::lookup::{ccs_of, is_cc_key, params_label, points, slug};
use super::page::Page;
use super::palette::Palette;
use super::run::{bin_text, ts_figures};
use crate::plot::{Axis, Unit};
use crate::ts::{TsChart, TsLine};
use crate::units;
use cclab_results::{FlowSeries, ResultsDoc, RunResult};
use std::fmt::Write;

/// One point's runs to overlay: its label and, per controller (in first-seen order), the
/// run of the lowest seed that has time series.
pub(crate) struct PointRuns<'a> {
    pub label: String,
    pub runs: Vec<(String, &'a RunResult)>,
}

/// The points of `doc` whose runs differ in controller (two or more controllers with time
/// series), in matrix order. A point whose runs each mix several controllers (flows of
/// CUBIC and BBR in one run) already shows them together in its run section: not listed.
pub(crate) fn point_runs(doc: &ResultsDoc) -> Vec<PointRuns<'_>> {
    // Group by the params without the controller keys.
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (_, idx) in points(doc) {
        let first = &doc.runs[idx[0]];
        let label = params_label(first, &is_cc_key);
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, v)) => v.extend(idx),
            None => groups.push((label, idx)),
        }
    }
    let mut out = Vec::new();
    for (label, idx) in groups {
        let mut runs: Vec<(String, &RunResult)> = Vec::new();
        for &i in &idx {
            let r = &doc.runs[i];
            let ccs = ccs_of(r);
            if r.series.is_none() || ccs.is_empty() {
                continue;
            }
            let key = ccs.join("+");
            match runs.iter_mut().find(|(k, _)| *k == key) {
                Some((_, best)) if r.seed < best.seed => *best = r,
                Some(_) => {}
                None => runs.push((key, r)),
            }
        }
        if runs.len() >= 2 {
            out.push(PointRuns { label, runs });
        }
    }
    out
}

/// What a point's chart titles say of its seeds: nothing when the document ran one seed,
/// else the seed drawn (" (seed 1)"), so a chart file read without the page says which of
/// the `--repeat` runs it shows.
pub(crate) fn seed_note(p: &PointRuns, doc: &ResultsDoc) -> String {
    let first = doc.runs.first().map(|r| r.seed);
    if doc.runs.iter().all(|r| Some(r.seed) == first) {
        return String::new();
    }
    let mut seeds: Vec<u64> = p.runs.iter().map(|(_, r)| r.seed).collect();
    seeds.sort_unstable();
    seeds.dedup();
    let list: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
    let s = if seeds.len() == 1 { "" } else { "s" };
    format!(" (seed{s} {})", list.join(", "))
}

/// The point's three charts: goodput, cwnd and smoothed RTT of every flow of every
/// controller's run, `t` prefixing their titles.
pub(crate) fn charts<'a>(
    p: &PointRuns<'a>,
    pal: &Palette,
    t: &str,
) -> Vec<(&'static str, TsChart<'a>)> {
    let dur = p.runs.iter().map(|(_, r)| r.duration_s).fold(0.0, f64::max);
    let bin = p
        .runs
        .iter()
        .find_map(|(_, r)| r.series.as_ref().map(|s| s.interval_s))
        .unwrap_or(0.0);
    type Get = fn(&FlowSeries) -> &Vec<f64>;
    let specs: [(&'static str, String, Axis, Get); 3] = [
        (
            "goodput",
            format!(
                "{t}goodput per flow (in-order data per {} bin)",
                bin_text(bin)
            ),
            Axis::new("goodput", Unit::Rate),
            |f| &f.goodput_bps,
        ),
        (
            "cwnd",
            format!("{t}congestion window"),
            Axis::new("cwnd (packets)", Unit::Plain),
            |f| &f.cwnd_pkts,
        ),
        (
            "rtt",
            format!("{t}smoothed RTT (srtt)"),
            Axis::new("srtt", Unit::Ms),
            |f| &f.srtt_ms,
        ),
    ];
    specs
        .into_iter()
        .map(|(what, title, axis, get)| {
            let mut c = TsChart::new(&title, axis, dur);
            for (_, r) in &p.runs {
                let Some(ts) = r.series.as_ref() else {
                    continue;
                };
                let mut k = std::collections::BTreeMap::<&str, usize>::new();
                for f in &ts.flows {
                    let n = k.entry(f.cc.as_str()).or_insert(0);
                    let mut l = TsLine::new(
                        &format!("flow {} · {} (seed {})", f.id, f.cc, r.seed),
                        &pal.shade(&f.cc, *n),
                        &ts.t_s,
                        get(f).clone(),
                    );
                    *n += 1;
                    l.legend_name = Some(format!("flow {} · {}", f.id, f.cc));
                    if ts.flows.len() > 3 {
                        l.width = 1.2;
                    }
                    c.lines.push(l);
                }
            }
            if what == "rtt" {
                add_probes(&mut c, p, pal);
            }
            (what, c)
        })
        .collect()
}

/// Each controller's latency probes (`kind = "probe"`) on the RTT chart, dotted in the
/// controller's colour: the RTT a ping saw beside each controller's flows.
fn add_probes<'a>(c: &mut TsChart<'a>, p: &PointRuns<'a>, pal: &Palette) {
    let mut any = false;
    for (key, r) in &p.runs {
        let cc = r.flows.first().map_or(key.as_str(), |f| f.cc.as_str());
        for pr in &r.probes {
            let Some(s) = &pr.series else { continue };
            let every = units::ms(pr.interval_s * 1e3);
            let mut l = TsLine::new(
                &format!(
                    "probe flows.{} (every {every}) · {key} (seed {})",
                    pr.group, r.seed
                ),
                &pal.color(cc),
                &s.t_s,
                s.rtt_ms.clone(),
            );
            l.legend_name = Some(format!("probe · {key}"));
            l.dash = crate::plot::DOT;
            l.width = 1.0;
            c.lines.push(l);
            any = true;
        }
    }
    if any {
        c.title = c.title.replace(
            "smoothed RTT (srtt)",
            "smoothed RTT (srtt) and each controller's latency probe RTT (dotted)",
        );
        c.y = Axis::new("RTT", Unit::Ms);
    }
}

/// The section "Controllers side by side" of a document: per point with several
/// controllers, their runs overlaid. The first points start expanded (as the runs do);
/// the others, collapsed, carry data only when `lazy`.
pub(crate) fn section(
    page: &mut Page,
    doc: &ResultsDoc,
    pal: &Palette,
    per_line: usize,
    name: &str,
    opts: &super::Options,
) {
    let pts = point_runs(doc);
    if pts.is_empty() {
        return;
    }
    page.body.push_str("<h3>Controllers side by side</h3><p class=\"muted note\">Per matrix point, each controller's run (its lowest seed) on one time axis, every controller in its colour.</p>");
    let n = pts.len();
    for (pi, p) in pts.iter().enumerate() {
        let ccs: Vec<&str> = p.runs.iter().map(|(k, _)| k.as_str()).collect();
        let head = if p.label.is_empty() {
            ccs.join(" vs ")
        } else {
            format!("{}: {}", p.label, ccs.join(" vs "))
        };
        let open = opts.open(pi, n);
        let _ = write!(
            page.body,
            "<details class=\"run point\"{}><summary><strong>{}</strong></summary>",
            if open { " open" } else { "" },
            crate::plot::esc(&head)
        );
        let stem = format!(
            "{name}-{}",
            slug(&format!("{} {}", p.label, ccs.join(" vs ")))
        );
        let charts = charts(p, pal, &format!("{head}{}: ", seed_note(p, doc)));
        ts_figures(page, charts, per_line, &stem, &stem, opts.lazy && !open);
        page.body.push_str("</details>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};
    use cclab_results::TimeSeries;

    fn ts(cc: &str) -> TimeSeries {
        TimeSeries {
            interval_s: 0.1,
            t_s: vec![0.1, 0.2],
            flows: vec![FlowSeries {
                id: 0,
                cc: cc.into(),
                goodput_bps: vec![1e6, 2e6],
                cwnd_pkts: vec![10.0, 20.0],
                srtt_ms: vec![40.0, 41.0],
                ..FlowSeries::default()
            }],
            ..TimeSeries::default()
        }
    }

    #[test]
    fn points_pair_the_controllers_of_each_point() {
        let mut b = DocBuilder::new().scenario("s");
        for loss in [0.0, 0.01] {
            for cc in ["cubic", "bbr"] {
                for seed in [2, 1] {
                    b = b.run(
                        RunBuilder::new()
                            .seed(seed)
                            .param("link.loss", loss)
                            .param("flows.cc", cc)
                            .flow(cc, 1e6)
                            .series(ts(cc)),
                    );
                }
            }
        }
        let doc = b.build();
        let pts = point_runs(&doc);
        assert_eq!(pts.len(), 2);
        let ccs: Vec<&str> = pts[1].runs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(ccs, ["cubic", "bbr"]);
        // The lowest seed of each controller, and the titles say so.
        assert!(pts[1].runs.iter().all(|(_, r)| r.seed == 1));
        assert_eq!(seed_note(&pts[1], &doc), " (seed 1)");
        assert!(pts[1].label.contains("loss"), "{}", pts[1].label);
        let c = charts(&pts[0], &Palette::new(["cubic", "bbr"]), "");
        let whats: Vec<&str> = c.iter().map(|(w, _)| *w).collect();
        assert_eq!(whats, ["goodput", "cwnd", "rtt"]);
        // One line per controller, each in its controller's colour.
        let pal = Palette::new(["cubic", "bbr"]);
        let cols: Vec<&str> = c[0].1.lines.iter().map(|l| l.color.as_str()).collect();
        assert_eq!(cols, [pal.color("cubic"), pal.color("bbr")]);
    }

    #[test]
    fn one_controller_has_no_overlay() {
        let doc = DocBuilder::new()
            .run(
                RunBuilder::new()
                    .param("link.loss", 0.0)
                    .flow("cubic", 1e6)
                    .series(ts("cubic")),
            )
            .run(
                RunBuilder::new()
                    .param("link.loss", 0.01)
                    .flow("cubic", 1e6)
                    .series(ts("cubic")),
            )
            .build();
        assert!(point_runs(&doc).is_empty());
    }

    #[test]
    fn each_controllers_probe_rtt_is_dotted_in_its_colour_on_the_rtt_chart() {
        let run = |cc: &str, rtt: f64| {
            let mut r: RunResult = RunBuilder::new()
                .param("flows.cc", cc)
                .flow(cc, 1e6)
                .series(ts(cc))
                .build();
            r.probes.push(cclab_results::ProbeResult {
                group: 1,
                interval_s: 0.02,
                series: Some(cclab_results::probe::ProbeSeries {
                    t_s: vec![0.0, 0.02],
                    rtt_ms: vec![rtt, rtt + 1.0],
                }),
                ..Default::default()
            });
            r
        };
        let pal = Palette::new(["cubic", "bbr"]);
        let doc = DocBuilder::new()
            .scenario("s")
            .run(run("cubic", 90.0))
            .run(run("bbr", 45.0))
            .build();
        let pts = point_runs(&doc);
        let c = charts(&pts[0], &pal, "");
        let rtt = &c.iter().find(|(w, _)| *w == "rtt").unwrap().1;
        let dotted: Vec<_> = rtt
            .lines
            .iter()
            .filter(|l| l.dash == crate::plot::DOT)
            .collect();
        assert_eq!(dotted.len(), 2);
        assert_eq!(dotted[0].color, pal.color("cubic"));
        assert_eq!(dotted[1].color, pal.color("bbr"));
        assert_eq!(dotted[1].v, [45.0, 46.0]);
        assert!(
            rtt.title.contains("latency probe RTT (dotted)"),
            "{}",
            rtt.title
        );
        // Without probes, the chart is the flows' srtt alone.
        let mut bare = doc.clone();
        for r in &mut bare.runs {
            r.probes.clear();
        }
        let c = charts(&point_runs(&bare)[0], &pal, "");
        let rtt = &c.iter().find(|(w, _)| *w == "rtt").unwrap().1;
        assert!(rtt.lines.iter().all(|l| l.dash != crate::plot::DOT));
        assert_eq!(rtt.title, "smoothed RTT (srtt)");
    }

    #[test]
    fn one_seed_in_the_document_goes_unsaid() {
        let mut b = DocBuilder::new();
        for cc in ["cubic", "bbr"] {
            b = b.run(
                RunBuilder::new()
                    .param("flows.cc", cc)
                    .flow(cc, 1e6)
                    .series(ts(cc)),
            );
        }
        let doc = b.build();
        let pts = point_runs(&doc);
        assert_eq!(pts.len(), 1);
        assert_eq!(seed_note(&pts[0], &doc), "");
    }
}
