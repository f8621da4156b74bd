//! The verdict of a comparison: per matrix point (scenario and swept params) and controller,
//! each side's median over its seeds with [min-max], and B's shift from A with its 95%
//! interval over seeds ([`super::shift`]), marked significant when the interval excludes 0.
//!
//! - A controller's figure in one run is the mean over its flows (flows match by id; a flow
//!   whose controller differs between A and B is named "cubic vs bbr"): goodput, retransmits,
//!   RTT p50/p99, FCT when every run has one.
//! - The point's figures: total goodput and Jain's index (several flows), and when both
//!   sides' links are known (not a real path) utilisation, queue delay p50/p99 and drops at
//!   the queue (full buffer, AQM and policer; the random losses asked for are left out).
//! - Every run of a point counts, whatever its pairing in the per-seed rows.

use super::shift::{self, Shift};
use crate::units;
use cclab_results::metrics::{
    Kind, MetricDef, FCT, GOODPUT, JAIN, LINK_UTILIZATION, QUEUE_P50, QUEUE_P99, RETRANSMITS,
    RTT_P50, RTT_P99, TOTAL_GOODPUT,
};
use cclab_results::{median, ResultsDoc, RunResult};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// The method, in the words of the legend and the JSON.
pub const METHOD: &str = "Hodges-Lehmann shift (median of the differences between every B seed and every A seed) with its exact Mann-Whitney 95% interval over seeds; no resampling, deterministic";

/// One figure of a point: each side's value per seed and B's shift.
#[derive(Clone, Debug)]
pub struct Row {
    /// The controller ("cubic", "cubic vs bbr"); None for the point's own figures.
    pub controller: Option<String>,
    pub metric: &'static str,
    pub kind: Kind,
    /// One value per seed.
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub shift: Option<Shift>,
}

/// One matrix point present on both sides.
#[derive(Clone, Debug)]
pub struct Point {
    pub scenario: String,
    pub params: Map<String, Value>,
    /// The point's first run in A (0-based), to name it as the tables do.
    pub run_a: usize,
    pub seeds_a: usize,
    pub seeds_b: usize,
    pub rows: Vec<Row>,
}

/// A drop at the queue: full buffer, AQM or policer.
const QUEUE_DROPS: MetricDef = MetricDef {
    key: "queue_drops",
    name: "drops at the queue",
    heading: "drops at the queue",
    kind: Kind::Count,
    csv_decimals: 0,
    get: cclab_results::metrics::Get::Link(|l| {
        (l.drops_buffer + l.drops_aqm + l.drops_policer) as f64
    }),
    ..QUEUE_P50
};

/// Steady-state figures (`cclab compare --from T`, [`crate::steady`]): over the time-series
/// bins from T on, as `cclab run --from` puts them beside the whole-run ones.
const STEADY_GOODPUT: MetricDef = MetricDef {
    key: "steady_goodput_bps",
    name: "goodput from T",
    heading: "goodput from T",
    ..GOODPUT
};
const STEADY_SRTT_P99: MetricDef = MetricDef {
    key: "steady_srtt_p99_ms",
    name: "srtt p99 from T",
    heading: "srtt p99 from T",
    ..RTT_P99
};
const STEADY_QUEUE_P99: MetricDef = MetricDef {
    key: "steady_queue_p99_ms",
    name: "queue delay p99 from T",
    heading: "queue delay p99 from T",
    ..QUEUE_P99
};

/// Add to each point the steady-state rows from `from_s` on: per controller its goodput and
/// smoothed-RTT p99, for the point the bottleneck queue's p99 (of its per-bin mean delay).
/// A row needs every run of both sides to have series with bins after `from_s`.
pub fn add_steady(points: &mut [Point], a: &[ResultsDoc], b: &[ResultsDoc], from_s: f64) {
    let (ga, gb) = (group(a), group(b));
    for p in points.iter_mut() {
        let same = |x: &&Group<'_>| x.0 == p.scenario && x.2[0].params == p.params;
        let (Some(xa), Some(xb)) = (ga.iter().find(same), gb.iter().find(same)) else {
            continue;
        };
        let (ra, rb) = (&xa.2, &xb.2);
        let steady = |r: &RunResult| crate::steady::of_run(r, from_s);
        let mut rows = Vec::new();
        for (cc, ids) in controllers(ra[0], rb[0]) {
            let mean = |r: &RunResult, pick: fn(&(f64, f64, f64)) -> f64| -> Option<f64> {
                let s = steady(r)?;
                let v: Vec<f64> = r
                    .flows
                    .iter()
                    .zip(&s.flows)
                    .filter(|(f, _)| ids.contains(&f.id))
                    .filter_map(|(_, x)| x.as_ref().map(pick))
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            rows.extend(row(Some(&cc), &STEADY_GOODPUT, ra, rb, |r| {
                mean(r, |x| x.0)
            }));
            rows.extend(row(Some(&cc), &STEADY_SRTT_P99, ra, rb, |r| {
                mean(r, |x| x.2)
            }));
        }
        rows.extend(row(None, &STEADY_QUEUE_P99, ra, rb, |r| {
            steady(r)?.queue_p99_ms
        }));
        p.rows.extend(rows);
    }
}

/// The runs of each (scenario, params), in order of first appearance: (scenario, first
/// index, runs, link known).
type Group<'a> = (&'a str, usize, Vec<&'a RunResult>, bool);

fn group(docs: &[ResultsDoc]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for d in docs {
        let link = crate::host::link_known(d);
        for (i, r) in d.runs.iter().enumerate() {
            match out
                .iter_mut()
                .find(|g| g.0 == d.scenario && g.2[0].params == r.params)
            {
                Some(g) => g.2.push(r),
                None => out.push((d.scenario.as_str(), i, vec![r], link)),
            }
        }
    }
    out
}

/// The controllers of a point: (label, flow ids), from each side's first run.
fn controllers(a: &RunResult, b: &RunResult) -> Vec<(String, Vec<u32>)> {
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for fa in &a.flows {
        let Some(fb) = b.flows.iter().find(|f| f.id == fa.id) else {
            continue;
        };
        let label = if fa.cc == fb.cc {
            fa.cc.clone()
        } else {
            format!("{} vs {}", fa.cc, fb.cc)
        };
        match out.iter_mut().find(|(l, _)| *l == label) {
            Some((_, ids)) => ids.push(fa.id),
            None => out.push((label, vec![fa.id])),
        }
    }
    out
}

/// The mean of a flow metric over the flows `ids` of a run; None when none has a value.
fn flows_mean(r: &RunResult, ids: &[u32], m: &MetricDef) -> Option<f64> {
    let v: Vec<f64> = r
        .flows
        .iter()
        .filter(|f| ids.contains(&f.id))
        .filter_map(|f| m.of_flow(f))
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// A row when every run of both sides has a value.
fn row(
    controller: Option<&str>,
    m: &MetricDef,
    ga: &[&RunResult],
    gb: &[&RunResult],
    get: impl Fn(&RunResult) -> Option<f64>,
) -> Option<Row> {
    let a: Option<Vec<f64>> = ga.iter().map(|r| get(r)).collect();
    let b: Option<Vec<f64>> = gb.iter().map(|r| get(r)).collect();
    let (a, b) = (a?, b?);
    let shift = shift::shift(&a, &b);
    Some(Row {
        controller: controller.map(str::to_string),
        metric: m.name,
        kind: m.kind,
        a,
        b,
        shift,
    })
}

/// The verdict of every matrix point both sides ran.
pub fn points(a: &[ResultsDoc], b: &[ResultsDoc]) -> Vec<Point> {
    let gb = group(b);
    let mut out = Vec::new();
    for (scenario, first, ra, link_a) in group(a) {
        let Some((_, _, rb, link_b)) = gb
            .iter()
            .find(|g| g.0 == scenario && g.2[0].params == ra[0].params)
        else {
            continue;
        };
        let mut rows = Vec::new();
        for (cc, ids) in controllers(ra[0], rb[0]) {
            for m in [&GOODPUT, &RETRANSMITS, &RTT_P50, &RTT_P99, &FCT] {
                rows.extend(row(Some(&cc), m, &ra, rb, |r| flows_mean(r, &ids, m)));
            }
        }
        let several = ra[0].flows.len() > 1 || rb[0].flows.len() > 1;
        let mut point_metrics: Vec<&MetricDef> = Vec::new();
        if several {
            point_metrics.push(&TOTAL_GOODPUT);
        }
        if link_a && *link_b {
            point_metrics.extend([&LINK_UTILIZATION, &QUEUE_P50, &QUEUE_P99, &QUEUE_DROPS]);
        }
        if several {
            point_metrics.push(&JAIN);
        }
        for m in point_metrics {
            rows.extend(row(None, m, &ra, rb, |r| m.of_run(r)));
        }
        out.push(Point {
            scenario: scenario.to_string(),
            params: ra[0].params.clone(),
            run_a: first,
            seeds_a: ra.len(),
            seeds_b: rb.len(),
            rows,
        });
    }
    out
}

/// How a difference of this kind is shown: in % of A's median (rates, times, counts),
/// percentage points (ratios) or by its plain difference (Jain).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    Percent(f64),
    Points,
    Plain,
    /// A's median is 0: the difference in the metric's own unit.
    Own,
}

fn scale(r: &Row) -> Scale {
    match r.kind {
        Kind::Ratio => Scale::Points,
        Kind::Plain => Scale::Plain,
        _ => {
            let m = median(&mut r.a.clone());
            if m != 0.0 && m.is_finite() {
                Scale::Percent(m.abs())
            } else {
                Scale::Own
            }
        }
    }
}

fn scaled(s: Scale, v: f64) -> f64 {
    match s {
        Scale::Percent(m) => v / m * 100.0,
        Scale::Points => v * 100.0,
        _ => v,
    }
}

fn show(s: Scale, kind: Kind, v: f64) -> String {
    let x = scaled(s, v);
    match s {
        Scale::Percent(_) if x == 0.0 => "0%".into(),
        Scale::Percent(_) if x.abs() >= 100.0 => format!("{x:+.0}%"),
        Scale::Percent(_) => format!("{x:+.1}%"),
        Scale::Points => format!("{x:+.2} pp"),
        Scale::Plain => format!("{x:+.3}"),
        Scale::Own => {
            let t = units::of(kind, v.abs());
            if v < 0.0 {
                format!("-{t}")
            } else {
                format!("+{t}")
            }
        }
    }
}

/// Why a point has no interval.
fn no_interval(p: &Point) -> &'static str {
    if p.seeds_a == 1 && p.seeds_b == 1 {
        "none: one seed per side"
    } else {
        "none: too few seeds (4 per side give one)"
    }
}

/// The verdict as text: a legend, then per point its seeds and one row per figure.
pub fn render(o: &mut String, points: &[Point], several_scenarios: bool) {
    if points.is_empty() {
        return;
    }
    let has = |k: Kind| points.iter().flat_map(|p| &p.rows).any(|r| r.kind == k);
    let mut scales = vec!["rates, times and counts in % of A's median"];
    if has(Kind::Ratio) {
        scales.push("utilisation in percentage points");
    }
    if has(Kind::Plain) {
        scales.push("Jain by difference");
    }
    let _ = writeln!(
        o,
        "\nsummary per matrix point (A, B: median over seeds [min-max]; a controller's figure is the mean over its flows)\n\
         B - A: the median of the differences between every B seed and every A seed, with its 95% interval\n\
         (Hodges-Lehmann shift, exact Mann-Whitney interval, no resampling); * = significant: the interval\n\
         excludes 0; runs are not paired by seed: identical runs on both sides get an interval as wide as\n\
         the spread over seeds;\n\
         {}",
        scales.join(", ")
    );
    for p in points {
        let mut name = if several_scenarios {
            format!("{} #{}", p.scenario, p.run_a + 1)
        } else {
            format!("#{}", p.run_a + 1)
        };
        name.push(' ');
        name.push_str(&super::params_label(&p.params));
        let conf = p
            .rows
            .iter()
            .find_map(|r| r.shift.as_ref()?.interval.map(|i| i.2));
        let _ = writeln!(
            o,
            "\n  {name}: {} seed{} in A, {} in B{}",
            p.seeds_a,
            if p.seeds_a == 1 { "" } else { "s" },
            p.seeds_b,
            match conf {
                Some(c) if c > shift::LEVEL + 1e-9 => format!(
                    " (the interval's exact level with these seeds: {:.1}%)",
                    c * 100.0
                ),
                _ => String::new(),
            }
        );
        let mut rows = vec![["", "A", "B", "B - A", "95% interval"]
            .map(String::from)
            .to_vec()];
        for r in &p.rows {
            let s = scale(r);
            // One value when the seeds agree (no drops anywhere: "0", not "0 [0-0]").
            let fmt = |v: &Vec<f64>| {
                if v.iter().all(|x| *x == v[0]) {
                    units::of(r.kind, v[0])
                } else {
                    crate::table::agg(v.clone(), |x| units::of(r.kind, x))
                }
            };
            let (est, int) = match &r.shift {
                Some(sh) => (
                    show(s, r.kind, sh.estimate),
                    match sh.interval {
                        Some((lo, hi, _)) => format!(
                            "[{}, {}]{}",
                            show(s, r.kind, lo),
                            show(s, r.kind, hi),
                            if sh.significant() { " *" } else { "" }
                        ),
                        None => no_interval(p).into(),
                    },
                ),
                None => (String::new(), String::new()),
            };
            let label = match &r.controller {
                Some(cc) => format!("{cc} {}", r.metric),
                None => r.metric.to_string(),
            };
            rows.push(vec![label, fmt(&r.a), fmt(&r.b), est, int]);
        }
        let right = [false, true, true, true, false];
        crate::table::layout(o, &rows, &right, "    ");
    }
}

fn side_json(v: &[f64]) -> Value {
    let mut s = v.to_vec();
    let m = median(&mut s);
    json!({"median": m, "min": s[0], "max": s[s.len() - 1], "values": v})
}

/// The verdict for scripts: `{method, level, points: [{scenario, params, seeds_a, seeds_b,
/// rows: [{controller, metric, a: {median, min, max, values}, b, diff: {estimate, low,
/// high, confidence, significant, unit}}]}]}`; `unit` is "pct" (% of A's median), "pp",
/// "plain" or "own" (the metric's unit); low, high and confidence are null without an
/// interval, `no_interval` says why.
pub fn to_json(points: &[Point]) -> Value {
    let pts: Vec<Value> = points
        .iter()
        .map(|p| {
            let rows: Vec<Value> = p
                .rows
                .iter()
                .map(|r| {
                    let s = scale(r);
                    let unit = match s {
                        Scale::Percent(_) => "pct",
                        Scale::Points => "pp",
                        Scale::Plain => "plain",
                        Scale::Own => "own",
                    };
                    let diff = r.shift.as_ref().map(|sh| {
                        let (lo, hi, c) = match sh.interval {
                            Some((lo, hi, c)) => {
                                (Some(scaled(s, lo)), Some(scaled(s, hi)), Some(c))
                            }
                            None => (None, None, None),
                        };
                        let mut d = json!({
                            "estimate": scaled(s, sh.estimate),
                            "low": lo,
                            "high": hi,
                            "confidence": c,
                            "significant": sh.significant(),
                            "unit": unit,
                        });
                        if sh.interval.is_none() {
                            d["no_interval"] = no_interval(p).into();
                        }
                        d
                    });
                    json!({
                        "controller": r.controller,
                        "metric": r.metric.replace(' ', "_"),
                        "a": side_json(&r.a),
                        "b": side_json(&r.b),
                        "diff": diff,
                    })
                })
                .collect();
            json!({
                "scenario": p.scenario,
                "params": p.params,
                "run_a": p.run_a + 1,
                "seeds_a": p.seeds_a,
                "seeds_b": p.seeds_b,
                "rows": rows,
            })
        })
        .collect();
    json!({"method": METHOD, "level": shift::LEVEL, "points": pts})
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};

    /// Five seeds of one point: a CUBIC and a BBR flow, goodputs from `cubic` and `bbr`
    /// (Mbit/s), the queue's p99 from `queue` (ms, through a link with 1% utilisation steps).
    fn side(cubic: [f64; 5], bbr: [f64; 5]) -> ResultsDoc {
        let runs = (0..5).map(|i| {
            RunBuilder::new()
                .seed(i as u64 + 1)
                .param("link.aqm", "x")
                .flow("cubic", cubic[i] * 1e6)
                .flow("bbr", bbr[i] * 1e6)
                .utilization(0.9)
        });
        DocBuilder::new().scenario("s").runs(runs).build()
    }

    fn find<'a>(p: &'a Point, cc: Option<&str>, metric: &str) -> &'a Row {
        p.rows
            .iter()
            .find(|r| r.controller.as_deref() == cc && r.metric == metric)
            .unwrap_or_else(|| panic!("no {cc:?} {metric}"))
    }

    #[test]
    fn a_real_difference_is_significant_and_noise_is_not() {
        // CUBIC gains about 5 Mbit/s on every seed; BBR's values only shuffle.
        let a = side(
            [10.0, 11.0, 9.5, 10.4, 10.8],
            [40.0, 38.0, 41.0, 39.0, 40.5],
        );
        let b = side(
            [15.2, 16.0, 14.9, 15.5, 15.1],
            [39.5, 40.2, 38.5, 40.8, 39.2],
        );
        let pts = points(std::slice::from_ref(&a), std::slice::from_ref(&b));
        assert_eq!(pts.len(), 1);
        let p = &pts[0];
        assert_eq!((p.seeds_a, p.seeds_b), (5, 5));
        let cubic = find(p, Some("cubic"), "goodput");
        let s = cubic.shift.as_ref().unwrap();
        assert!(s.significant(), "{s:?}");
        assert!(s.interval.unwrap().0 > 0.0);
        let bbr = find(p, Some("bbr"), "goodput").shift.as_ref().unwrap();
        assert!(!bbr.significant(), "{bbr:?}");
        // Jain and total goodput for several flows; the link's figures for known links.
        for m in [
            "total goodput",
            "jain",
            "queue delay p99",
            "drops at the queue",
        ] {
            find(p, None, m);
        }
        let mut t = String::new();
        render(&mut t, &pts, false);
        let line = |name: &str| {
            t.lines()
                .find(|l| l.trim_start().starts_with(name))
                .unwrap()
                .to_string()
        };
        assert!(line("cubic goodput").trim_end().ends_with('*'), "{t}");
        assert!(!line("bbr goodput").trim_end().ends_with('*'), "{t}");
        assert!(t.contains("10.4 Mbit/s [9.50-11.0]"), "{t}");
        assert!(t.contains("exact level with these seeds: 96.8%"), "{t}");
        // The same in JSON, and deterministic.
        let j = to_json(&pts);
        let row = j["points"][0]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["controller"] == "cubic" && r["metric"] == "goodput")
            .unwrap()
            .clone();
        assert_eq!(row["diff"]["significant"], true);
        assert_eq!(row["diff"]["unit"], "pct");
        assert_eq!(row["a"]["median"].as_f64(), Some(10.4e6));
        assert_eq!(to_json(&points(&[a], &[b])), j);
    }

    #[test]
    fn one_seed_per_side_has_no_interval() {
        let one = |g: f64| {
            DocBuilder::new()
                .scenario("s")
                .run(RunBuilder::new().flow("cubic", g))
                .build()
        };
        let pts = points(&[one(10e6)], &[one(20e6)]);
        let r = find(&pts[0], Some("cubic"), "goodput");
        let s = r.shift.as_ref().unwrap();
        assert_eq!((s.estimate, s.interval), (10e6, None));
        // One flow: no Jain, no total.
        assert!(pts[0].rows.iter().all(|r| r.metric != "jain"));
        let mut t = String::new();
        render(&mut t, &pts, false);
        assert!(
            t.contains("+100%") && t.contains("none: one seed per side"),
            "{t}"
        );
        let j = to_json(&pts);
        let d = &j["points"][0]["rows"][0]["diff"];
        assert!(d["low"].is_null() && d["no_interval"].is_string(), "{d}");
    }
}
