//! Charts across runs: the headline bar chart and the sweep charts, one per swept numeric
//! parameter and metric (median over seeds with a min-max band).

use super::lookup::{
    bar_tip, ccs_of, fct_of, fmt_metric, goodput_of, index_of, is_cc_key, key_name, median_min_max,
    median_of, min_max_mean, params_label, point_label, points, reference_for, reference_text,
    seeds_note, share_of, slug, unfinished,
};
use super::palette::{Palette, NEUTRAL};
use crate::plot::{self, Axis, Bar, BarChart, Line, LineChart, Marker, Unit};
use crate::units;
use cclab_results::{ResultsDoc, RunResult};
use serde_json::Value;
use std::collections::BTreeMap;

/// Goodput per run and controller as bars, the published figure as a marker; (svg, wide).
pub(super) fn headline(doc: &ResultsDoc, pal: &Palette, id: &str) -> (String, bool) {
    let pts = points(doc);
    let mut groups: Vec<String> = Vec::new();
    let mut bars = Vec::new();
    let multi_flow = doc.runs.iter().any(|r| r.flows.len() > 1);
    for (params, runs) in &pts {
        let first = &doc.runs[runs[0]];
        let g = index_of(&mut groups, point_label(doc, params));
        for cc in ccs_of(first) {
            let vals: Vec<f64> = runs
                .iter()
                .map(|&i| goodput_of(&doc.runs[i], &cc))
                .collect();
            let (med, lo, hi) = median_min_max(&vals);
            let refv = reference_for(first, &cc);
            let tip = bar_tip(
                &format!("{} · {cc}", groups[g].replace('\n', " · ")),
                &vals,
                refv.map(|r| (r, reference_text(first, r))),
            );
            bars.push(Bar {
                group: g,
                color: pal.color(&cc),
                series: cc.clone(),
                value: med,
                spread: (vals.len() > 1).then_some((lo, hi)),
                reference: refv,
                label: units::rate(med),
                tip,
            });
        }
    }
    let has_ref = bars.iter().any(|b| b.reference.is_some());
    let title = format!(
        "{}: goodput per run{}{}{}",
        doc.scenario,
        if multi_flow {
            " (sum over each controller's flows)"
        } else {
            ""
        },
        if has_ref { " vs published" } else { "" },
        seeds_note(pts.iter().map(|p| p.1.len()))
    );
    let c = BarChart {
        title,
        y: Axis::new("goodput", Unit::Rate),
        groups,
        x_label: String::new(),
        bars,
        width: 0.0,
        height: 0.0,
    };
    // Up to 10 bars fit beside the other charts; more get the full width.
    let wide = c.bars.len() > 10;
    let c = BarChart {
        width: if wide {
            (140.0 + 90.0 * c.bars.len() as f64).min(1300.0)
        } else {
            640.0
        },
        height: if wide { 360.0 } else { 300.0 },
        ..c
    };
    (plot::bar_chart(&c, id), wide)
}

/// How to draw a swept numeric parameter on an axis. The axis ends at the data.
fn param_axis(key: &str, vals: &[f64]) -> Axis {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let name = key_name(key);
    let span = log_span(vals);
    let a = match leaf {
        "loss" | "ack_loss" => Axis::new(&name, Unit::Loss).log(),
        "rate" => Axis::new(&name, Unit::Rate).log_if(span > 20.0),
        "rtt" | "rtt_extra" | "duration" | "start" => {
            Axis::new(&name, Unit::Secs).log_if(span > 50.0)
        }
        _ if is_size_leaf(leaf) => Axis::new(&name, Unit::Bytes).log_if(span > 20.0),
        _ => Axis::new(&name, Unit::Plain).log_if(span > 50.0),
    };
    Axis {
        from_zero: false,
        ..a
    }
}

/// Largest over smallest positive value (1 when there are none).
fn log_span(vals: &[f64]) -> f64 {
    let pos: Vec<f64> = vals.iter().copied().filter(|v| *v > 0.0).collect();
    if pos.is_empty() {
        return 1.0;
    }
    pos.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        / pos.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Keys whose values are sizes in bytes (or a buffer: bytes, packets or BDPs): these, and
/// the path elements' settings declared in bytes (the queue disciplines', the token
/// buckets').
fn is_size_leaf(leaf: &str) -> bool {
    let aqms = cclab_path::AQMS.iter().flat_map(|a| a.settings);
    let buckets = cclab_path::BUCKETS.iter().flat_map(|b| b.settings);
    matches!(
        leaf,
        "size" | "buffer" | "rcvbuf" | "sndbuf" | "notsent_lowat"
    ) || aqms
        .chain(buckets)
        .any(|s| s.name == leaf && s.unit == "bytes")
}

/// A size as text (`"64kb"`, `"2mib"`, `"3000b"`) in bytes; None for anything else.
pub(super) fn parse_bytes(t: &str) -> Option<f64> {
    let t = t.trim().to_ascii_lowercase();
    let at = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = t.split_at(at);
    let mult = match unit.trim() {
        "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    num.parse::<f64>().ok().map(|n| n * mult)
}

/// The number in a buffer's text with the given unit suffix (`"0.5bdp"` -> 0.5).
fn buffer_multiple(t: &str, units: &[&str]) -> Option<f64> {
    let t = t.trim().to_ascii_lowercase();
    units
        .iter()
        .find_map(|u| t.strip_suffix(u))
        .and_then(|n| n.trim().parse().ok())
}

/// A swept key drawn on a numeric axis: each run's x value (in `runs`' order) and the axis.
/// Numbers as they are; a swept size given as text (`link.buffer = ["0.5bdp", "1bdp",
/// "4bdp"]`, `"100pkt"`, `"64kb"`) as a number too: in BDPs when every value is in BDPs, in
/// packets when every value is in packets, else in bytes. A buffer's value comes from the
/// run's resolved `link.buffer_bytes` (over `link.bdp_bytes` or `link.packet_bytes`), so
/// values given in different units line up; without them, from the text when the units
/// agree. None when the key is not numeric in every run.
pub(crate) fn numeric_x(key: &str, runs: &[&RunResult]) -> Option<(Vec<f64>, Axis)> {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let nums: Option<Vec<f64>> = runs
        .iter()
        .map(|r| r.params.get(key).and_then(Value::as_f64))
        .collect();
    if let Some(v) = nums {
        let axis = param_axis(key, &v);
        return Some((v, axis));
    }
    if !is_size_leaf(leaf) {
        return None;
    }
    let texts: Vec<&str> = runs
        .iter()
        .map(|r| r.params.get(key).and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let resolved = |r: &RunResult, k: &str| -> Option<f64> {
        let prefix = key.rsplit_once('.').map_or("", |p| p.0);
        r.resolved
            .get(&format!("{prefix}.{k}"))
            .and_then(Value::as_f64)
    };
    let is_buffer = leaf == "buffer";
    let name = key_name(key);
    let all = |units: &[&str]| texts.iter().all(|t| buffer_multiple(t, units).is_some());
    let per = |unit_key: &str, units: &[&str]| -> Vec<f64> {
        runs.iter()
            .zip(&texts)
            .map(|(r, t)| {
                match (resolved(r, "buffer_bytes"), resolved(r, unit_key)) {
                    (Some(b), Some(u)) if is_buffer && u > 0.0 => Some(b / u),
                    _ => buffer_multiple(t, units),
                }
                .unwrap_or(f64::NAN)
            })
            .collect()
    };
    const BDP: &[&str] = &["xbdp", "bdp"];
    const PKT: &[&str] = &["packets", "packet", "pkts", "pkt", "p"];
    let (v, axis) = if is_buffer && all(BDP) {
        let v = per("bdp_bytes", BDP);
        let a = Axis::new(&format!("{name} (× BDP)"), Unit::Plain);
        (v, a)
    } else if is_buffer && all(PKT) {
        let v = per("packet_bytes", PKT);
        (v, Axis::new(&name, Unit::Pkts))
    } else {
        let v: Vec<f64> = runs
            .iter()
            .zip(&texts)
            .map(|(r, t)| {
                is_buffer
                    .then(|| resolved(r, "buffer_bytes"))
                    .flatten()
                    .or_else(|| parse_bytes(t))
                    .unwrap_or(f64::NAN)
            })
            .collect();
        (v, Axis::new(&name, Unit::Bytes))
    };
    if v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let span = log_span(&v);
    let axis = Axis {
        from_zero: false,
        ..axis.log_if(span > 20.0)
    };
    Some((v, axis))
}

/// One x value of a line: (x, values over seeds, published figure).
pub(crate) type XPoint = (f64, Vec<f64>, Option<f64>);

/// One chart per (swept numeric parameter, metric): goodput always; FCT when flows are
/// sized; each controller's share of the goodput when runs mix controllers, else Jain's
/// index when runs have several flows. A swept size (a buffer in BDPs, packets or bytes) is
/// a numeric axis too ([`numeric_x`]). Lines show the median over seeds with a min-max band.
/// Several documents (an overlay: `(doc, label, dash)`) draw their lines in one chart, a
/// line's colour shared by the documents and its dash telling them apart.
pub(crate) fn matrix_charts(
    docs: &[(&ResultsDoc, Option<&str>, &'static str)],
    pal: &Palette,
) -> Vec<(String, LineChart)> {
    let doc0 = docs[0].0;
    let keys: Vec<String> = doc0.runs[0].params.keys().cloned().collect();
    let mut out = Vec::new();
    let all: Vec<&RunResult> = docs.iter().flat_map(|d| d.0.runs.iter()).collect();
    let has_fct = all
        .iter()
        .any(|r| r.flows.iter().any(|f| f.fct_s.is_some()));
    let multi_cc = all.iter().any(|r| ccs_of(r).len() > 1);
    let multi_flow = all.iter().any(|r| r.flows.len() > 1);
    for x in &keys {
        if is_cc_key(x) {
            continue;
        }
        let Some((xs, xaxis)) = numeric_x(x, &all) else {
            continue; // not numeric in every run
        };
        let mut distinct = xs.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        // Each run's x value, and the text of the value as given (for tooltips).
        let x_of: BTreeMap<*const RunResult, f64> = all
            .iter()
            .zip(&xs)
            .map(|(r, v)| (*r as *const RunResult, *v))
            .collect();
        let mut x_text: BTreeMap<u64, String> = BTreeMap::new();
        for (r, v) in all.iter().zip(&xs) {
            x_text
                .entry(v.to_bits())
                .or_insert_with(|| units::param_in(&r.params, x));
        }
        let mut metrics: Vec<(&str, &str, Unit)> = vec![("goodput", "goodput", Unit::Rate)];
        if has_fct {
            metrics.push(("fct", "flow completion time", Unit::Secs));
        }
        if multi_cc {
            metrics.push(("share", "share of the goodput", Unit::Share));
        } else if multi_flow {
            metrics.push(("jain", "Jain's fairness index", Unit::Plain));
        }
        for (what, ylabel, yunit) in metrics {
            // Lines: (cc, other params) x document -> x -> values over seeds (+ reference).
            type LineData = (String, String, BTreeMap<u64, XPoint>);
            let mut lines: BTreeMap<(usize, usize), LineData> = BTreeMap::new();
            let mut order: Vec<(String, String)> = Vec::new();
            let mut skipped = 0usize;
            for (di, (doc, _, _)) in docs.iter().enumerate() {
                for r in &doc.runs {
                    let xv = x_of[&(r as *const RunResult)];
                    let other = params_label(r, &|k: &str| k == x || is_cc_key(k));
                    let series: Vec<String> = if what == "jain" {
                        vec![String::new()]
                    } else {
                        ccs_of(r)
                    };
                    for cc in series {
                        let y = match what {
                            "fct" => {
                                skipped += unfinished(r).filter(|f| f.cc == cc).count();
                                fct_of(r, &cc)
                            }
                            "share" => share_of(r, &cc),
                            "jain" => Some(r.jain),
                            _ => Some(goodput_of(r, &cc)),
                        };
                        let Some(y) = y else { continue };
                        let name = match (cc.is_empty(), other.is_empty()) {
                            (true, true) => "Jain's index".to_string(),
                            (true, false) => other.clone(),
                            (false, true) => cc.clone(),
                            (false, false) => format!("{cc} · {other}"),
                        };
                        let oi = match order.iter().position(|o| o.0 == name) {
                            Some(i) => i,
                            None => {
                                order.push((name.clone(), cc.clone()));
                                order.len() - 1
                            }
                        };
                        let e = lines
                            .entry((oi, di))
                            .or_insert_with(|| (name.clone(), cc.clone(), BTreeMap::new()));
                        let slot = e.2.entry(xv.to_bits()).or_insert((xv, Vec::new(), None));
                        slot.1.push(y);
                        if what == "goodput" && di == 0 && slot.2.is_none() {
                            slot.2 = reference_for(r, &cc);
                        }
                    }
                }
            }
            if lines.is_empty() {
                continue;
            }
            // A line's colour: its controller's, shaded by its place among that controller's.
            let shade_of: Vec<String> = {
                let mut per_cc: BTreeMap<&str, usize> = BTreeMap::new();
                order
                    .iter()
                    .map(|(_, cc)| {
                        let k = per_cc.entry(cc.as_str()).or_insert(0);
                        *k += 1;
                        pal.shade(cc, *k - 1)
                    })
                    .collect()
            };
            let mut yaxis = Axis::new(ylabel, yunit);
            match what {
                "fct" => {
                    let ys: Vec<f64> = lines
                        .values()
                        .flat_map(|l| l.2.values().flat_map(|s| s.1.iter().copied()))
                        .filter(|v| *v > 0.0)
                        .collect();
                    let (lo, hi, _) = min_max_mean(&ys);
                    if hi / lo > 20.0 {
                        yaxis = yaxis.log();
                    }
                }
                "share" | "jain" => yaxis = yaxis.range(0.0, 1.0),
                _ => {}
            }
            let title = format!("{}: {} vs {}", doc0.scenario, ylabel, key_name(x));
            let mut c = LineChart::new(&title, xaxis.clone(), yaxis);
            let mut any_ref = false;
            let mut seeds: Vec<usize> = Vec::new();
            for ((oi, di), (base, _, pts)) in &lines {
                let color = shade_of[*oi].clone();
                let (_, label, dash) = docs[*di];
                let name = match label {
                    Some(l) => format!("{base} · {l}"),
                    None => base.clone(),
                };
                let mut pts: Vec<&XPoint> = pts.values().collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mut l = Line::new(&name, &color, Vec::new());
                l.marker = Marker::Dot;
                l.width = 2.0;
                l.dash = dash;
                let mut refs = Vec::new();
                let xt = |xv: f64| {
                    format!(
                        "{} {}",
                        key_name(x),
                        x_text.get(&xv.to_bits()).cloned().unwrap_or_default()
                    )
                };
                for (xv, ys, r) in &pts {
                    let (med, lo, hi) = median_min_max(ys);
                    l.points.push((*xv, med));
                    let mut tip = format!("{name}, {}: {}", xt(*xv), fmt_metric(what, med));
                    if ys.len() > 1 {
                        if !seeds.contains(&ys.len()) {
                            seeds.push(ys.len());
                        }
                        l.band.push((*xv, lo, hi));
                        tip = format!(
                            "{name}, {}: {} {} [{} – {}]",
                            xt(*xv),
                            median_of(ys.len()),
                            fmt_metric(what, med),
                            fmt_metric(what, lo),
                            fmt_metric(what, hi)
                        );
                    }
                    if let Some(r) = r {
                        tip.push_str(&format!(
                            " · published {} (cclab / published ×{:.2})",
                            units::rate(*r),
                            med / r
                        ));
                    }
                    l.tips.push(tip);
                    if let Some(r) = r {
                        refs.push((*xv, *r, med));
                    }
                }
                c.lines.push(l);
                if !refs.is_empty() {
                    any_ref = true;
                    let pts = refs.iter().map(|(xv, r, _)| (*xv, *r)).collect();
                    let mut rl = Line::new(&format!("{base} published"), &color, pts);
                    rl.line = false;
                    rl.marker = Marker::Diamond;
                    rl.legend = false;
                    rl.tips = refs
                        .iter()
                        .map(|(xv, r, med)| {
                            format!(
                                "{base}, {}: published {}; cclab / published ×{:.2}",
                                xt(*xv),
                                units::rate(*r),
                                med / r
                            )
                        })
                        .collect();
                    c.lines.push(rl);
                }
            }
            if any_ref {
                c.notes.push((
                    "published figure".into(),
                    NEUTRAL.into(),
                    Marker::Diamond,
                    "",
                ));
            }
            if !seeds.is_empty() {
                let n = if seeds.len() == 1 {
                    median_of(seeds[0])
                } else {
                    "median over seeds".into()
                };
                c.notes.push((
                    format!("line: {n}; band: min–max"),
                    "#adb5bd".into(),
                    Marker::None,
                    "",
                ));
            }
            if skipped > 0 && what == "fct" {
                c.notes.push((
                    format!(
                        "{skipped} unfinished flow{} not drawn",
                        if skipped == 1 { "" } else { "s" }
                    ),
                    "#cf222e".into(),
                    Marker::None,
                    "",
                ));
            }
            out.push((format!("{what}-vs-{}", slug(&key_name(x))), c));
        }
    }
    out
}
