//! One matrix point's simulator runs against its kernel runs, flow by flow (identical flows
//! by rank), metric by metric, with each metric's target; and the summary of every point
//! against the acceptance targets.

use super::{ErrorSummary, FlowCal, MetricCal, Stats, Summary};
use cclab_results::{median, RunResult};
use cclab_scenario::Scenario;
use std::collections::BTreeMap;

const METRICS: [&str; 3] = ["goodput_bps", "retrans_ratio", "rtt_p50_ms"];

fn metric(r: &RunResult, flow: usize, m: usize) -> f64 {
    let f = &r.flows[flow];
    match m {
        0 => f.goodput_bps,
        1 => f.retrans_ratio,
        _ => f.rtt_ms.p50,
    }
}

/// For each flow of a matrix point, the index of the first flow it is identical to (same
/// controller and parameters, start, size, extra RTT, initial window and ECN): such flows
/// are exchangeable.
pub fn identical_flows(sc: &Scenario) -> Vec<usize> {
    let mut keys = Vec::new();
    for g in &sc.flows {
        for _ in 0..g.count {
            keys.push((
                &g.cc,
                g.start_ns,
                g.size_bytes,
                g.rtt_extra_ns,
                g.init_cwnd,
                g.ecn,
                &g.cc_params,
            ));
        }
    }
    (0..keys.len())
        .map(|i| keys.iter().position(|k| *k == keys[i]).unwrap_or(i))
        .collect()
}

/// The flows of `r` in comparison order: position `i` holds the index of the flow that
/// stands for row `i`. A flow with no identical peer stands for itself; a set of identical
/// flows fills its rows (its members' positions, in order) fastest first.
fn ranked(r: &RunResult, class: &[usize]) -> Vec<usize> {
    let n = r.flows.len().min(class.len());
    let mut order: Vec<usize> = (0..n).collect();
    let mut seen = vec![false; n];
    for i in 0..n {
        if seen[i] {
            continue;
        }
        let members: Vec<usize> = (0..n).filter(|&j| class[j] == class[i]).collect();
        let mut by_goodput = members.clone();
        by_goodput.sort_by(|&a, &b| {
            r.flows[b]
                .goodput_bps
                .total_cmp(&r.flows[a].goodput_bps)
                .then(a.cmp(&b))
        });
        for (slot, flow) in members.iter().zip(by_goodput) {
            order[*slot] = flow;
            seen[*slot] = true;
        }
    }
    order
}

/// Compare one point's simulator runs with its kernel runs (both over the same seeds).
pub(super) fn compare_point(
    scenario: &str,
    params: String,
    class: &[usize],
    sim: &[&RunResult],
    kernel: &[&RunResult],
) -> Vec<FlowCal> {
    let mut out = Vec::new();
    let Some(first) = sim.first() else { return out };
    let sim_order: Vec<Vec<usize>> = sim.iter().map(|r| ranked(r, class)).collect();
    let k_order: Vec<Vec<usize>> = kernel.iter().map(|r| ranked(r, class)).collect();
    for (fi, f) in first.flows.iter().enumerate() {
        let peers: Vec<usize> = (0..first.flows.len())
            .filter(|&j| class.get(j) == class.get(fi))
            .collect();
        let rank =
            (peers.len() > 1).then(|| peers.iter().position(|&j| j == fi).unwrap_or(0) as u32 + 1);
        let mut metrics = Vec::new();
        for (mi, name) in METRICS.into_iter().enumerate() {
            let values = |runs: &[&RunResult], order: &[Vec<usize>]| -> Vec<f64> {
                runs.iter()
                    .zip(order)
                    .filter(|(_, o)| o.len() > fi)
                    .map(|(r, o)| metric(r, o[fi], mi))
                    .collect()
            };
            let s = Stats::of(values(sim, &sim_order)).expect("at least one simulator run");
            let k = Stats::of(values(kernel, &k_order));
            let sv = s.median;
            let (error, ok) = match &k {
                None => (None, None),
                Some(k) => {
                    let med = k.median;
                    let err = if med.abs() > 0.0 {
                        Some((sv - med) / med)
                    } else {
                        None
                    };
                    let in_range = sv >= k.min && sv <= k.max;
                    let ok = match name {
                        "goodput_bps" => Some(in_range || err.is_some_and(|e| e.abs() <= 0.10)),
                        "retrans_ratio" if med > 0.001 => {
                            let r = sv / med;
                            Some((1.0 / 1.5..=1.5).contains(&r))
                        }
                        "rtt_p50_ms" => Some(err.is_some_and(|e| e.abs() <= 0.15)),
                        _ => None,
                    };
                    (err, ok)
                }
            };
            metrics.push(MetricCal {
                metric: name,
                sim: sv,
                sim_stats: s,
                kernel: k,
                error,
                ok,
            });
        }
        out.push(FlowCal {
            scenario: scenario.to_string(),
            params: params.clone(),
            flow: f.id,
            cc: f.cc.clone(),
            rank,
            identical: peers.len() as u32,
            metrics,
        });
    }
    out
}

pub(super) fn summarize(points: &[FlowCal]) -> Summary {
    let mut s = Summary::default();
    let mut errs: BTreeMap<(String, &'static str), Vec<f64>> = BTreeMap::new();
    let (mut g10, mut g_all25, mut gn) = (0usize, true, 0usize);
    let (mut rx_ok, mut rxn, mut rtt_ok, mut rttn) = (0usize, 0usize, 0usize, 0usize);
    for p in points {
        for m in &p.metrics {
            let (Some(k), Some(e)) = (&m.kernel, m.error) else {
                continue;
            };
            errs.entry((p.cc.clone(), m.metric))
                .or_default()
                .push(e.abs());
            match m.metric {
                "goodput_bps" => {
                    gn += 1;
                    let in_range = m.sim >= k.min && m.sim <= k.max;
                    if m.ok == Some(true) {
                        g10 += 1;
                    }
                    if !(in_range || e.abs() <= 0.25) {
                        g_all25 = false;
                    }
                }
                "retrans_ratio" => {
                    if let Some(ok) = m.ok {
                        rxn += 1;
                        rx_ok += ok as usize;
                    }
                }
                "rtt_p50_ms" => {
                    rttn += 1;
                    rtt_ok += (m.ok == Some(true)) as usize;
                }
                _ => {}
            }
        }
    }
    for ((cc, metric), mut v) in errs {
        let worst = v.iter().cloned().fold(0.0, f64::max);
        let n = v.len();
        let med = median(&mut v);
        s.per_cc.entry(cc).or_default().insert(
            metric.to_string(),
            ErrorSummary {
                points: n,
                median_abs_error: med,
                worst_abs_error: worst,
            },
        );
    }
    let frac = |a: usize, n: usize| if n == 0 { 0.0 } else { a as f64 / n as f64 };
    s.goodput_points = gn;
    s.goodput_within_10pct = frac(g10, gn);
    s.goodput_all_within_25pct = gn > 0 && g_all25;
    s.retrans_points = rxn;
    s.retrans_within_1_5x = frac(rx_ok, rxn);
    s.rtt_points = rttn;
    s.rtt_within_15pct = frac(rtt_ok, rttn);
    s.pass = gn > 0
        && s.goodput_within_10pct >= 0.8
        && s.goodput_all_within_25pct
        && (rxn == 0 || rx_ok == rxn)
        && (rttn == 0 || rtt_ok == rttn);
    s
}
