//! Charts and sections of one run: its flows table and its time-series charts.

use super::lookup::{
    ccs_of, goodput_of, params_label, run_names, run_tag, share_of, unfinished, unfinished_note,
};
use super::page::Page;
use super::palette::{Palette, NEUTRAL, TOTAL};
use crate::plot::{self, esc, Axis, Marker, RightAxis, Unit};
use crate::ts::{self, TsChart, TsLine};
use crate::units;
use cclab_results::{ResultsDoc, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write;

/// One run's part in a run section: the run, its document's label (overlays) and dash.
pub(crate) struct RunRef<'a> {
    pub run: &'a RunResult,
    pub label: Option<&'a str>,
    pub dash: &'static str,
    /// Whether the run's link fields are known (an emulated link), else its queue and link
    /// rate are not drawn ([`crate::host::link_known`]).
    pub link_known: bool,
}

/// The time-series charts of a run, or of the same run in several documents (overlaid: each
/// document's lines in its own dash, the flows' colours shared).
pub(crate) fn run_charts<'a>(
    runs: &[RunRef<'a>],
    pal: &Palette,
    t: &str,
) -> Vec<(&'static str, TsChart<'a>)> {
    let overlay = runs.len() > 1;
    let with: Vec<(&RunRef, &cclab_results::TimeSeries)> = runs
        .iter()
        .filter_map(|r| r.run.series.as_ref().map(|ts| (r, ts)))
        .collect();
    let Some((first, ts0)) = with.first().copied() else {
        return Vec::new();
    };
    let dur = runs
        .iter()
        .map(|r| {
            if r.run.duration_s > 0.0 {
                r.run.duration_s
            } else {
                r.run
                    .series
                    .as_ref()
                    .and_then(|s| s.t_s.last().copied())
                    .unwrap_or(1.0)
            }
        })
        .fold(0.0, f64::max);
    let many = ts0.flows.len() > 8;
    let colors = |ts: &cclab_results::TimeSeries| -> Vec<String> {
        let mut shade_k: BTreeMap<&str, usize> = BTreeMap::new();
        ts.flows
            .iter()
            .map(|f| {
                let k = shade_k.entry(f.cc.as_str()).or_insert(0);
                *k += 1;
                pal.shade(&f.cc, *k - 1)
            })
            .collect()
    };
    let flow_name = |f: &cclab_results::FlowSeries| format!("flow {} · {}", f.id, f.cc);
    let suffix = |r: &RunRef| r.label.map(|l| format!(" · {l}")).unwrap_or_default();
    let notes = || -> Vec<(String, String, Marker, &'static str)> {
        let mut v = Vec::new();
        if many {
            for cc in ccs_of(first.run) {
                let n = ts0.flows.iter().filter(|f| f.cc == cc).count();
                v.push((
                    format!("{cc} ({n} flow{})", if n == 1 { "" } else { "s" }),
                    pal.color(&cc),
                    Marker::None,
                    "",
                ));
            }
        }
        if overlay {
            for (r, _) in &with {
                v.push((
                    r.label.unwrap_or("").to_string(),
                    NEUTRAL.to_string(),
                    Marker::None,
                    r.dash,
                ));
            }
        }
        v
    };
    let per_flow = |title: &str,
                    yl: &str,
                    unit: Unit,
                    get: &dyn Fn(&cclab_results::FlowSeries) -> &Vec<f64>|
     -> TsChart<'a> {
        let mut c = TsChart::new(title, Axis::new(yl, unit), dur);
        for (di, (r, ts)) in with.iter().enumerate() {
            for (f, col) in ts.flows.iter().zip(colors(ts)) {
                let mut l = TsLine::new(
                    &format!("{}{}", flow_name(f), suffix(r)),
                    &col,
                    &ts.t_s,
                    get(f).clone(),
                );
                l.dash = r.dash;
                l.legend = !many && di == 0;
                if overlay {
                    // The static legend names flows once (their colour), documents by dash.
                    l.legend_name = Some(flow_name(f));
                }
                if ts.flows.len() > 3 {
                    l.width = 1.2;
                }
                c.lines.push(l);
            }
        }
        c.notes = notes();
        c
    };
    let mut charts: Vec<(&'static str, TsChart)> = Vec::new();
    let mut gp = per_flow(
        &format!(
            "{t}goodput per flow (in-order data per {} bin)",
            bin_text(ts0.interval_s)
        ),
        "goodput",
        Unit::Rate,
        &|f| &f.goodput_bps,
    );
    if !overlay {
        delivery_rate_lines(&mut gp, ts0, &colors(ts0));
    }
    charts.push(("goodput", gp));
    if overlay {
        charts.push((
            "cwnd",
            per_flow(
                &format!("{t}congestion window"),
                "cwnd (packets)",
                Unit::Plain,
                &|f| &f.cwnd_pkts,
            ),
        ));
    } else {
        // cwnd solid, inflight dashed.
        let mut cw = per_flow(
            &format!("{t}cwnd (solid) and packets in flight (dashed)"),
            "packets",
            Unit::Plain,
            &|f| &f.cwnd_pkts,
        );
        for (f, col) in ts0.flows.iter().zip(colors(ts0)) {
            let mut l = TsLine::new(
                &format!("{} inflight", flow_name(f)),
                &col,
                &ts0.t_s,
                f.inflight_pkts.clone(),
            );
            l.dash = plot::DASH;
            l.width = 1.2;
            l.legend = false;
            cw.lines.push(l);
        }
        cw.notes
            .push(("cwnd".into(), NEUTRAL.into(), Marker::None, ""));
        cw.notes
            .push(("inflight".into(), NEUTRAL.into(), Marker::None, plot::DASH));
        charts.push(("cwnd", cw));
    }
    // The flows' smoothed RTT; with latency probes (`kind = "probe"`), each probe's RTT on
    // the same axis: what a ping beside the bulk flows saw.
    let probes: Vec<&cclab_results::ProbeResult> = if overlay {
        Vec::new()
    } else {
        first
            .run
            .probes
            .iter()
            .filter(|p| p.series.is_some())
            .collect()
    };
    let mut rtt = per_flow(
        &format!(
            "{t}smoothed RTT (srtt){}",
            if probes.is_empty() {
                ""
            } else {
                " and each latency probe's RTT (dotted)"
            }
        ),
        if probes.is_empty() { "srtt" } else { "RTT" },
        Unit::Ms,
        &|f| &f.srtt_ms,
    );
    for p in probes {
        let Some(s) = &p.series else { continue };
        let mut l = TsLine::new(
            &format!(
                "probe flows.{} (every {})",
                p.group,
                units::ms(p.interval_s * 1e3)
            ),
            NEUTRAL,
            &s.t_s,
            s.rtt_ms.clone(),
        );
        l.dash = plot::DOT;
        l.width = 1.0;
        rtt.lines.push(l);
    }
    charts.push(("rtt", rtt));
    // The link's charts, of the runs whose link is known: a real path's queue and rate are
    // unknown, not zero.
    let with: Vec<(&RunRef, &cclab_results::TimeSeries)> =
        with.into_iter().filter(|(r, _)| r.link_known).collect();
    let Some((first, ts0)) = with.first().copied() else {
        return charts;
    };
    // Queue: each queue's measured delay when the results have it (per element); else the
    // bottleneck's backlog converted to delay at the link rate, bytes on the right axis.
    let rate0 = first.run.link.rate_bps;
    let mut q = if !ts0.queue_delay_ms.is_empty() {
        TsChart::new(
            &format!("{t}queueing delay per queue (mean per bin)"),
            Axis::new("queue delay", Unit::Ms),
            dur,
        )
    } else if rate0 > 0.0 {
        let mut c = TsChart::new(
            &format!(
                "{t}bottleneck queue (backlog ÷ link rate {})",
                units::rate(rate0)
            ),
            Axis::new("queue delay", Unit::Ms),
            dur,
        );
        if !overlay {
            c.y2 = Some(RightAxis {
                label: "backlog".into(),
                unit: Unit::Bytes,
                factor: rate0 / 8.0 / 1e3,
            });
        }
        c
    } else {
        TsChart::new(
            &format!("{t}bottleneck queue"),
            Axis::new("backlog", Unit::Bytes),
            dur,
        )
    };
    let by_delay = !ts0.queue_delay_ms.is_empty() || rate0 > 0.0;
    for (r, ts) in &with {
        let rate = r.run.link.rate_bps;
        let mut lines: Vec<(String, Vec<f64>)> = Vec::new();
        if !ts.queue_delay_ms.is_empty() && by_delay {
            for (name, v) in &ts.queue_delay_ms {
                let label = name.strip_prefix("data.").unwrap_or(name);
                let label = match label {
                    "queue" => "bottleneck",
                    // A dual queue's (DualPI2's) two queues.
                    "queue.l" => "bottleneck L queue",
                    "queue.c" => "bottleneck C queue",
                    other => other,
                };
                lines.push((label.to_string(), v.clone()));
                if overlay {
                    break; // the bottleneck's
                }
            }
        } else if by_delay && rate > 0.0 {
            lines.push((
                "queue".into(),
                ts.link_queue_bytes
                    .iter()
                    .map(|b| b * 8.0 / rate * 1e3)
                    .collect(),
            ));
        } else if !by_delay {
            lines.push(("queue".into(), ts.link_queue_bytes.clone()));
        }
        let nq = lines.len();
        for (k, (name, v)) in lines.into_iter().enumerate() {
            let mut l = TsLine::new(
                &format!("{name}{}", suffix(r)),
                match k {
                    0 => NEUTRAL,
                    _ if name.starts_with("bottleneck L") => super::dualq::L_COLOR,
                    _ => super::dualq::C_COLOR,
                },
                &ts.t_s,
                v,
            );
            l.dash = r.dash;
            l.legend = nq > 1 || overlay;
            if k == 0 {
                l.width = 1.4;
            }
            q.lines.push(l);
        }
    }
    if !q.lines.is_empty() {
        charts.push(("queue", q));
    }
    // A varying rate (a schedule, a trace): the link's capacity and what crossed it.
    if !ts0.link_rate_bps.is_empty() {
        let mut c = TsChart::new(
            &format!("{t}link rate (capacity per bin) and total goodput"),
            Axis::new("rate", Unit::Rate),
            dur,
        );
        for (r, ts) in &with {
            if ts.link_rate_bps.is_empty() {
                continue;
            }
            let mut cap = TsLine::new(
                &format!("capacity{}", suffix(r)),
                NEUTRAL,
                &ts.t_s,
                ts.link_rate_bps.clone(),
            );
            cap.width = 1.6;
            cap.dash = r.dash;
            c.lines.push(cap);
            let total: Vec<f64> = (0..ts.t_s.len()).map(|i| ts.total_goodput_bps(i)).collect();
            let mut gl = TsLine::new(
                &format!("goodput (all flows){}", suffix(r)),
                TOTAL,
                &ts.t_s,
                total,
            );
            gl.dash = if overlay { r.dash } else { plot::DASH };
            c.lines.push(gl);
        }
        charts.push(("rate", c));
    }
    charts
}

/// A time bin's length as text: `100 ms`, `1 s`.
pub(crate) fn bin_text(interval_s: f64) -> String {
    if interval_s <= 0.0 {
        "time".into()
    } else if interval_s < 1.0 {
        format!("{} ms", (interval_s * 1e3 * 10.0).round() / 10.0)
    } else {
        format!("{} s", (interval_s * 100.0).round() / 100.0)
    }
}

/// What a goodput chart's bins mean, said once above a page's runs: why a bin can top the
/// link's capacity, and what the dotted delivery-rate lines are.
pub(crate) const GOODPUT_NOTE: &str = "Goodput over time is the data the receiver delivered in order to the application in each bin, as a rate. A bin can exceed the link's capacity: after a loss the receiver holds back what arrives behind the hole, and releases it all at once when the retransmission fills it. Dotted lines, where the results have them, are the sender's delivery-rate estimate (what the ACKs say got through), which does not jump that way.";

/// The flows' delivery-rate samples as dotted lines in the goodput chart (the ones the
/// results have: a document without them draws none), named once in the legend.
fn delivery_rate_lines<'a>(
    c: &mut TsChart<'a>,
    ts: &'a cclab_results::TimeSeries,
    cols: &[String],
) {
    let mut any = false;
    for (f, col) in ts.flows.iter().zip(cols) {
        if f.delivery_rate_bps.len() != ts.t_s.len()
            || f.delivery_rate_bps.iter().all(|v| *v <= 0.0)
        {
            continue;
        }
        let mut l = TsLine::new(
            &format!("flow {} · {} delivery rate", f.id, f.cc),
            col,
            &ts.t_s,
            f.delivery_rate_bps.clone(),
        );
        l.dash = plot::DOT;
        l.width = 1.0;
        l.legend = false;
        c.lines.push(l);
        any = true;
    }
    if any {
        c.notes
            .push(("goodput".into(), NEUTRAL.into(), Marker::None, ""));
        c.notes.push((
            "delivery rate".into(),
            NEUTRAL.into(),
            Marker::None,
            plot::DOT,
        ));
    }
}

/// Add a run's time-series charts to the page, each as a static SVG with the data of its
/// interactive chart; `sync` ties the run's charts together (cursor and zoom).
/// `lazy`: the data only, drawn when the section opens ([`Page::figure_lazy`]).
pub(crate) fn ts_figures(
    page: &mut Page,
    charts: Vec<(&'static str, TsChart)>,
    per_line: usize,
    name: &str,
    sync: &str,
    lazy: bool,
) {
    page.body.push_str("<div class=\"grid\">");
    for (what, c) in charts {
        let id = page.id();
        let (svg, data) = ts::render(&c, per_line, &id, sync);
        if lazy {
            page.figure_lazy(&format!("{name}-{what}"), &data);
        } else {
            page.figure_data(&format!("{name}-{what}"), svg, &data);
        }
    }
    page.body.push_str("</div>");
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_section(
    page: &mut Page,
    _di: usize,
    ri: usize,
    doc: &ResultsDoc,
    run: &RunResult,
    pal: &Palette,
    per_line: usize,
    open: bool,
    lazy: bool,
    name: &str,
) {
    let label = params_label(run, &|_| false);
    let multi_seed = doc.runs.iter().any(|r| r.seed != run.seed);
    let mut head = format!("#{}", ri + 1);
    if !label.is_empty() {
        head.push_str(&format!(" · {label}"));
    }
    if multi_seed {
        head.push_str(&format!(" · seed {}", run.seed));
    }
    let ccs = ccs_of(run);
    let gp: Vec<String> = ccs
        .iter()
        .map(|cc| {
            let mut t = format!("{cc} {}", units::rate(goodput_of(run, cc)));
            if let Some(sh) = share_of(run, cc).filter(|_| ccs.len() > 1) {
                t.push_str(&format!(" ({} of the goodput)", units::pct(sh)));
            }
            t
        })
        .collect();
    let fair = if run.flows.len() > 1 {
        format!("; Jain {:.3}", run.jain)
    } else {
        String::new()
    };
    let open_flows: Vec<String> = unfinished(run)
        .map(|f| format!("flow {} ({}) {}", f.id, f.cc, unfinished_note(run, f)))
        .collect();
    let link_known = crate::host::link_known(doc);
    let link = if link_known {
        format!(
            "; link {} used, queue p99 {}",
            units::pct(run.link.utilization),
            units::ms(run.link.queue_delay_ms.p99)
        )
    } else {
        String::new()
    };
    let _ = write!(
        page.body,
        "<details class=\"run\"{}><summary><strong>{}</strong> <span class=\"muted\">— {}{}{}</span>{}</summary>",
        if open { " open" } else { "" },
        esc(&head),
        esc(&gp.join(", ")),
        fair,
        link,
        if open_flows.is_empty() {
            String::new()
        } else {
            format!(" <span class=\"warn\">⚠ {}</span>", esc(&open_flows.join("; ")))
        }
    );
    if run.series.is_none() {
        page.body.push_str("<p class=\"muted\">No time series for this run (results.json without series/run-N.csv).</p></details>");
        return;
    }
    let (title, sync) = run_names(name, ri + 1, &run_tag(doc, run));
    let charts = run_charts(
        &[RunRef {
            run,
            label: None,
            dash: "",
            link_known,
        }],
        pal,
        &title,
    );
    ts_figures(page, charts, per_line, &sync, &sync, lazy && !open);
    page.body.push_str("</details>");
}
