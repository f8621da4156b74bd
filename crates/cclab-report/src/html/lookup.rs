//! Lookups over results documents shared by the report's sections: swept parameters and
//! their labels, controllers of a run, goodput/FCT/share per controller, published
//! references, seed statistics and unfinished flows.

use crate::units;
use cclab_results::{median, FlowResult, ResultsDoc, RunResult};
use serde_json::Value;

pub(crate) fn is_cc_key(k: &str) -> bool {
    k.rsplit('.').next() == Some("cc")
}

/// A param key as a reader would say it: `loss`, `rtt`, `cc`, `size`, `flows.1.start`.
pub fn key_name(k: &str) -> String {
    if let Some(r) = k.strip_prefix("link.") {
        return r.to_string();
    }
    if let Some(r) = k.strip_prefix("flows.") {
        if !r.contains('.') {
            return r.to_string();
        }
    }
    k.to_string()
}

pub(crate) fn params_label(run: &RunResult, skip: &dyn Fn(&str) -> bool) -> String {
    run.params
        .iter()
        .filter(|(k, _)| !skip(k))
        .map(|(k, v)| format!("{} {}", key_name(k), units::param(k, v)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Controllers of a run, in flow order.
pub(crate) fn ccs_of(run: &RunResult) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for f in &run.flows {
        if !v.contains(&f.cc) {
            v.push(f.cc.clone());
        }
    }
    v
}

/// Sum of the goodputs of a run's flows running `cc`.
pub(crate) fn goodput_of(run: &RunResult, cc: &str) -> f64 {
    run.flows
        .iter()
        .filter(|f| f.cc == cc)
        .map(|f| f.goodput_bps)
        .sum()
}

/// Mean FCT of a run's completed flows running `cc`.
pub(crate) fn fct_of(run: &RunResult, cc: &str) -> Option<f64> {
    let v: Vec<f64> = run
        .flows
        .iter()
        .filter(|f| f.cc == cc)
        .filter_map(|f| f.fct_s)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The published goodput that applies to `cc` in this run.
pub(crate) fn reference_for(run: &RunResult, cc: &str) -> Option<f64> {
    let r = run.reference.as_ref()?;
    let bps = r.get("goodput_bps")?.as_f64()?;
    match r.get("flows.cc").and_then(Value::as_str) {
        Some(c) if !c.eq_ignore_ascii_case(cc) => None,
        Some(_) => Some(bps),
        None => (ccs_of(run).len() == 1).then_some(bps),
    }
}

pub(crate) fn reference_text(run: &RunResult, bps: f64) -> String {
    let unit = run
        .reference
        .as_ref()
        .and_then(|r| r.get("unit"))
        .and_then(Value::as_str)
        .unwrap_or("Mbit/s");
    let own = units::rate_in(bps, unit);
    if own.ends_with("bit/s") {
        own
    } else {
        format!("{} ({own})", units::rate(bps))
    }
}

pub(crate) fn min_max_mean(v: &[f64]) -> (f64, f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi, v.iter().sum::<f64>() / v.len().max(1) as f64)
}

pub(crate) fn slug(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.ends_with('-') {
            o.push('-');
        }
    }
    o.trim_matches('-').to_string()
}

/// What a run is, for its charts' titles and file names: its matrix point (the swept values
/// other than the controller), its controllers (`cubic+bbr`) and, when the document runs a
/// point over several seeds, its seed. `["loss 1%", "cubic", "seed 2"]`.
pub(crate) fn run_tag(doc: &ResultsDoc, run: &RunResult) -> Vec<String> {
    let mut parts = Vec::new();
    let point = params_label(run, &is_cc_key);
    if !point.is_empty() {
        parts.push(point);
    }
    let ccs = ccs_of(run);
    if !ccs.is_empty() {
        parts.push(ccs.join("+"));
    }
    if doc.runs.iter().any(|r| r.seed != run.seed) {
        parts.push(format!("seed {}", run.seed));
    }
    parts
}

/// A run's charts' title prefix (`#4 loss 1%, cubic, seed 2: `) and the stem of their
/// names (`NAME-run4-loss-1-cubic-seed-2`): which run, point and controller a chart file
/// shows, without opening it.
pub(crate) fn run_names(name: &str, n: usize, tag: &[String]) -> (String, String) {
    if tag.is_empty() {
        return (format!("#{n}: "), format!("{name}-run{n}"));
    }
    let stem = format!("{name}-run{n}-{}", slug(&tag.join(" ")));
    (format!("#{n} {}: ", tag.join(", ")), stem)
}

/// Groups runs that differ only in seed: (params, run indices), in first-seen order.
pub(crate) fn points(doc: &ResultsDoc) -> Vec<(serde_json::Map<String, Value>, Vec<usize>)> {
    let mut out: Vec<(serde_json::Map<String, Value>, Vec<usize>)> = Vec::new();
    for (i, r) in doc.runs.iter().enumerate() {
        match out.iter_mut().find(|(p, _)| *p == r.params) {
            Some((_, v)) => v.push(i),
            None => out.push((r.params.clone(), vec![i])),
        }
    }
    out
}

/// The label of a matrix point's bar group: its swept values other than the controller, one
/// per line, or the scenario's name when nothing else is swept.
pub(crate) fn point_label(doc: &ResultsDoc, params: &serde_json::Map<String, Value>) -> String {
    let label = params
        .iter()
        .filter(|(k, _)| !is_cc_key(k))
        .map(|(k, v)| format!("{} {}", key_name(k), units::param(k, v)))
        .collect::<Vec<_>>()
        .join("\n");
    if label.is_empty() {
        doc.scenario.clone()
    } else {
        label
    }
}

/// Position of `x` in `v`, appended first when absent.
pub(crate) fn index_of(v: &mut Vec<String>, x: String) -> usize {
    match v.iter().position(|k| *k == x) {
        Some(i) => i,
        None => {
            v.push(x);
            v.len() - 1
        }
    }
}

/// Median, min and max of a non-empty set of values.
pub(crate) fn median_min_max(v: &[f64]) -> (f64, f64, f64) {
    let (lo, hi, _) = min_max_mean(v);
    (median(&mut v.to_vec()), lo, hi)
}

/// What `--repeat` folded into a value: "median of N seeds" (the terminal table's words).
pub(crate) fn median_of(n: usize) -> String {
    format!("median of {n} seeds")
}

/// ", median of N seeds" for a chart's title when points fold several seeds (", median
/// over seeds" when their numbers differ); empty otherwise.
pub(crate) fn seeds_note(counts: impl Iterator<Item = usize>) -> String {
    let mut c: Vec<usize> = counts.filter(|n| *n > 1).collect();
    c.sort();
    c.dedup();
    match c[..] {
        [] => String::new(),
        [n] => format!(", {}", median_of(n)),
        _ => ", median over seeds".into(),
    }
}

/// A bar's tooltip: `what: value`, or `what: median of N seeds value [min – max]`, and the
/// published figure with cclab / published.
pub(crate) fn bar_tip(what: &str, vals: &[f64], published: Option<(f64, String)>) -> String {
    let (med, lo, hi) = median_min_max(vals);
    let mut tip = if vals.len() > 1 {
        format!(
            "{what}: {} {} [{} – {}]",
            median_of(vals.len()),
            units::rate(med),
            units::rate(lo),
            units::rate(hi)
        )
    } else {
        format!("{what}: {}", units::rate(med))
    };
    if let Some((r, text)) = published {
        tip.push_str(&format!(
            " · published {text} · cclab / published ×{:.2}",
            med / r
        ));
    }
    tip
}

/// A run's goodput over all its flows.
pub(crate) fn total_goodput(run: &RunResult) -> f64 {
    run.flows.iter().map(|f| f.goodput_bps).sum()
}

/// A controller's share of the run's goodput (its flows' goodput over all flows'); None
/// when nothing got through.
pub(crate) fn share_of(run: &RunResult, cc: &str) -> Option<f64> {
    let t = total_goodput(run);
    (t > 0.0).then(|| goodput_of(run, cc) / t)
}

/// Sized flows that did not complete in the run.
pub(crate) fn unfinished(run: &RunResult) -> impl Iterator<Item = &FlowResult> {
    run.flows
        .iter()
        .filter(|f| f.size_bytes.is_some() && f.fct_s.is_none())
}

/// "unfinished: 2.30 MB of 50.0 MB delivered in the 2.00 s run" for a sized flow without FCT.
pub(crate) fn unfinished_note(run: &RunResult, f: &FlowResult) -> String {
    let size = f.size_bytes.unwrap_or(0) as f64;
    format!(
        "unfinished: {} of {} delivered ({}) in the {} run",
        units::size(f.bytes_delivered as f64),
        units::size(size),
        units::pct(if size > 0.0 {
            f.bytes_delivered as f64 / size
        } else {
            0.0
        }),
        units::secs(run.duration_s)
    )
}

pub(crate) fn fmt_metric(what: &str, v: f64) -> String {
    match what {
        "fct" => units::secs(v),
        "share" => units::pct(v),
        "jain" => format!("{v:.3}"),
        _ => units::rate(v),
    }
}
