//! `cclab calibrate`: how well the simulator predicts the kernel.
//!
//! Runs every scenario of a calibration directory on the `sim` and the `kernel` backend
//! `repeat` times each, with the same consecutive seeds, then compares, per matrix point and
//! flow, three metrics: goodput, retransmit ratio and RTT p50. For each, both backends' median
//! and min-max range are reported with the relative error `(sim median - kernel median) /
//! kernel median`. The simulator is compared by its median, not one run, because a seed
//! decides where random losses fall; the kernel varies from run to run even without loss.
//!
//! Flows the scenario makes identical (same controller, start, size, RTT and initial window)
//! are exchangeable: which of two identical CUBIC flows ends up ahead is chance, on either
//! backend. They are compared by rank (the faster with the faster), not by flow id.
//!
//! Acceptance (issue #5): goodput within 10% of the kernel median (or inside the kernel's own
//! min-max range where that is wider) at >= 80% of the points and within 25% at all of them;
//! retransmit ratio within 1.5x where the kernel's is above 0.1%; RTT p50 within 15%.

use crate::runner::{self, Error, Plan, RunOptions};
use cclab_results::{median, ResultsDoc, RunResult};
use cclab_scenario::Scenario;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where the calibration matrix lives.
pub const DEFAULT_DIR: &str = "scenarios/calibration";

#[derive(Clone, Debug)]
pub struct CalOptions {
    pub dir: PathBuf,
    /// Kernel repeats per point (>= 3 for the acceptance numbers).
    pub repeat: u32,
    /// Only check that the matrix loads and runs on the simulator.
    pub sim_only: bool,
    /// Compare against the kernel results stored in this directory (`kernel-<scenario>.json`,
    /// as `--out` writes them) instead of running the kernel: seconds instead of half an hour,
    /// for iterating on the model.
    pub kernel_from: Option<PathBuf>,
    /// Keep kernel runs whose machine was disturbed (CPU steal, element stalls: see
    /// [`cclab_results::LabConditions::disturbed`]) in the comparison. By default they are
    /// left out of a point (with the simulator's runs of the same seeds) while at least one
    /// undisturbed run of it remains, and listed in the report.
    pub keep_disturbed: bool,
    /// Re-run a disturbed kernel run (after a pause) up to this many times before judging
    /// its point ([`RunOptions::retry_disturbed`]).
    pub retry_disturbed: u32,
    pub progress: bool,
}

/// A kernel run the comparison left out (or would have, see `kept`).
#[derive(Clone, Debug, Serialize)]
pub struct DisturbedRun {
    pub scenario: String,
    pub params: String,
    pub seed: u64,
    pub why: String,
    /// Whether it stayed in the comparison (`--keep-disturbed`, or no undisturbed run of
    /// its point was left).
    pub kept: bool,
}

/// Statistics of one metric over a backend's seeds.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

impl Stats {
    fn of(mut v: Vec<f64>) -> Option<Stats> {
        if v.is_empty() {
            return None;
        }
        let median = median(&mut v);
        Some(Stats {
            median,
            min: v[0],
            max: v[v.len() - 1],
            n: v.len(),
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct MetricCal {
    pub metric: &'static str,
    /// The simulator's value: its median over the same seeds as the kernel's.
    pub sim: f64,
    /// The simulator's median and range over its seeds.
    pub sim_stats: Stats,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<Stats>,
    /// (sim - kernel median) / kernel median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<f64>,
    /// Whether the point meets this metric's target; `None` where the target does not apply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowCal {
    pub scenario: String,
    pub params: String,
    pub flow: u32,
    pub cc: String,
    /// Among `identical` flows (same controller and parameters, start, size, RTT, initial
    /// window and ECN), this
    /// row is the one ranked `rank` by goodput in each run (1 = the fastest): which of two
    /// identical flows wins is chance, so they are compared rank by rank, not by id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    pub identical: u32,
    pub metrics: Vec<MetricCal>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ErrorSummary {
    pub points: usize,
    /// Median and worst absolute relative error.
    pub median_abs_error: f64,
    pub worst_abs_error: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// controller -> metric -> errors.
    pub per_cc: BTreeMap<String, BTreeMap<String, ErrorSummary>>,
    pub goodput_points: usize,
    /// Fraction of points with goodput within 10% (or inside the kernel's range).
    pub goodput_within_10pct: f64,
    /// Whether every point is within 25% (or inside the kernel's range).
    pub goodput_all_within_25pct: bool,
    pub retrans_points: usize,
    pub retrans_within_1_5x: f64,
    pub rtt_points: usize,
    pub rtt_within_15pct: f64,
    /// All acceptance targets met.
    pub pass: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    pub cclab: String,
    pub repeat: u32,
    pub kernel: bool,
    /// Where the kernel results came from when they were not run now (`--kernel-from`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_from: Option<String>,
    pub points: Vec<FlowCal>,
    pub summary: Summary,
    /// Kernel runs whose machine was disturbed during the run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disturbed: Vec<DisturbedRun>,
    /// Kernel runs that were run again because the machine disturbed an attempt
    /// (`--retry-disturbed`), and the attempts that were run again in all.
    pub rerun_runs: usize,
    pub rerun_attempts: u64,
}

fn scenario_files(dir: &Path) -> Result<Vec<String>, Error> {
    let rd = std::fs::read_dir(dir).map_err(|e| {
        Error::new(format!(
            "cannot read calibration directory {}: {e}",
            dir.display()
        ))
    })?;
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(Error::new(format!(
            "{}: no .toml scenarios in the calibration directory",
            dir.display()
        )));
    }
    Ok(v)
}

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
fn compare_point(
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

fn summarize(points: &[FlowCal]) -> Summary {
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

/// Run the calibration matrix. Returns the comparison and the raw results documents
/// (sim first, then kernel, one per scenario file).
pub fn run(opts: &CalOptions) -> Result<(Calibration, Vec<ResultsDoc>, Vec<ResultsDoc>), Error> {
    let files = scenario_files(&opts.dir)?;
    let load_opts = RunOptions {
        backend: "sim".into(),
        ..RunOptions::default()
    };
    let plans: Vec<Plan> = files
        .iter()
        .map(|f| runner::plan(f, &load_opts))
        .collect::<Result<_, _>>()?;
    // Stored kernel runs decide the seeds; load them before running anything.
    let stored = match &opts.kernel_from {
        Some(dir) if !opts.sim_only => {
            let docs = plans
                .iter()
                .map(|p| load_kernel_doc(dir, p))
                .collect::<Result<Vec<_>, _>>()?;
            // Each scenario file keeps the repeat count it was measured with (a point added
            // later may have been measured with fewer seeds than the rest).
            let repeats: Vec<u32> = docs.iter().map(|(_, r)| *r).collect();
            Some((
                docs.into_iter().map(|(d, _)| d).collect::<Vec<_>>(),
                repeats,
            ))
        }
        _ => None,
    };
    let repeats: Vec<u32> = stored
        .as_ref()
        .map_or_else(|| vec![opts.repeat.max(1); plans.len()], |(_, r)| r.clone());
    // The simulator runs the same seeds as the kernel: its value is a median too.
    let mut sim_docs = Vec::new();
    for (plan, &repeat) in plans.iter().zip(&repeats) {
        let sim_opts = RunOptions {
            backend: "sim".into(),
            repeat,
            progress: opts.progress,
            ..RunOptions::default()
        };
        sim_docs.extend(runner::execute(std::slice::from_ref(plan), &sim_opts)?);
    }
    let kernel_docs = if opts.sim_only {
        Vec::new()
    } else if let Some((docs, _)) = stored {
        docs
    } else {
        let k_opts = RunOptions {
            backend: "kernel".into(),
            repeat: opts.repeat.max(1),
            progress: opts.progress,
            retry_disturbed: opts.retry_disturbed,
            ..RunOptions::default()
        };
        runner::execute(&plans, &k_opts)?
    };
    let mut points = Vec::new();
    let mut disturbed = Vec::new();
    for (pi, plan) in plans.iter().enumerate() {
        let r = repeats[pi] as usize;
        for (i, pt) in plan.points.iter().enumerate() {
            let mut sim: Vec<&RunResult> = sim_docs[pi].runs[i * r..(i + 1) * r].iter().collect();
            let mut kernel: Vec<&RunResult> = kernel_docs
                .get(pi)
                .map(|d| d.runs[i * r..(i + 1) * r].iter().collect())
                .unwrap_or_default();
            let label = if pt.label().is_empty() {
                "-".to_string()
            } else {
                pt.label()
            };
            for (seed, why, kept) in leave_out_disturbed(&mut sim, &mut kernel, opts.keep_disturbed)
            {
                disturbed.push(DisturbedRun {
                    scenario: plan.name.clone(),
                    params: label.clone(),
                    seed,
                    why,
                    kept,
                });
            }
            let class = identical_flows(&pt.scenario);
            points.extend(compare_point(&plan.name, label, &class, &sim, &kernel));
        }
    }
    let summary = summarize(&points);
    let retries: Vec<u32> = kernel_docs
        .iter()
        .flat_map(|d| &d.runs)
        .filter_map(|r| r.lab.as_ref().map(|l| l.retries))
        .filter(|&n| n > 0)
        .collect();
    let cal = Calibration {
        cclab: cclab_results::VERSION.to_string(),
        repeat: repeats.iter().copied().max().unwrap_or(1),
        kernel: !opts.sim_only,
        kernel_from: opts.kernel_from.as_ref().map(|d| d.display().to_string()),
        points,
        summary,
        disturbed,
        rerun_runs: retries.len(),
        rerun_attempts: retries.iter().map(|&n| n as u64).sum(),
    };
    Ok((cal, sim_docs, kernel_docs))
}

/// Finds a point's disturbed kernel runs and, unless `keep` or none of its runs was quiet,
/// removes them and the simulator runs of the same seeds (same index) from the comparison.
/// Returns (seed, what happened, kept) per disturbed run.
fn leave_out_disturbed(
    sim: &mut Vec<&RunResult>,
    kernel: &mut Vec<&RunResult>,
    keep: bool,
) -> Vec<(u64, String, bool)> {
    let why: Vec<Option<String>> = kernel
        .iter()
        .map(|k| k.lab.as_ref().and_then(|l| l.disturbed(k.duration_s)))
        .collect();
    let quiet = why.iter().filter(|w| w.is_none()).count();
    let drop = !keep && quiet > 0 && quiet < kernel.len();
    let out = kernel
        .iter()
        .zip(&why)
        .filter_map(|(k, w)| w.as_ref().map(|w| (k.seed, w.clone(), !drop)))
        .collect();
    if drop {
        let quiet = |i: usize| why.get(i).is_none_or(Option::is_none);
        *kernel = kernel
            .iter()
            .enumerate()
            .filter(|&(i, _)| quiet(i))
            .map(|(_, r)| *r)
            .collect();
        *sim = sim
            .iter()
            .enumerate()
            .filter(|&(i, _)| quiet(i))
            .map(|(_, r)| *r)
            .collect();
    }
    out
}

/// The stored kernel results of `plan` in `dir` and its repeats per point; checks that they
/// belong to the same matrix (same points, in order).
fn load_kernel_doc(dir: &Path, plan: &Plan) -> Result<(ResultsDoc, u32), Error> {
    let path = dir.join(format!("kernel-{}.json", plan.name));
    let redo = format!(
        "re-run `cclab calibrate --out {}` as root to store them",
        dir.display()
    );
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::new(format!("{}: {e}; {redo}", path.display())))?;
    let doc: ResultsDoc = serde_json::from_str(&text).map_err(|e| {
        Error::new(format!(
            "{}: not a cclab results document ({e}); {redo}",
            path.display()
        ))
    })?;
    let n = plan.points.len();
    if doc.backend != "kernel" || n == 0 || doc.runs.is_empty() || !doc.runs.len().is_multiple_of(n)
    {
        return Err(Error::new(format!(
            "{}: {} {} runs do not fit the {n} points of {}; {redo}",
            path.display(),
            doc.runs.len(),
            doc.backend,
            plan.name
        )));
    }
    let r = doc.runs.len() / n;
    for (i, pt) in plan.points.iter().enumerate() {
        if doc.runs[i * r..(i + 1) * r]
            .iter()
            .any(|run| run.params != pt.params)
        {
            return Err(Error::new(format!(
                "{}: the stored runs are not the matrix points of {} (point {} is {}); {redo}",
                path.display(),
                plan.name,
                i,
                pt.label()
            )));
        }
    }
    Ok((doc, r as u32))
}

fn fmt_metric(name: &str, v: f64) -> String {
    match name {
        "goodput_bps" => cclab_report::units::rate(v),
        "retrans_ratio" => cclab_report::units::pct(v),
        _ => cclab_report::units::ms(v),
    }
}

/// `0 cubic`, or `cubic #1/2` for the faster of two identical CUBIC flows.
fn flow_label(p: &FlowCal) -> String {
    match p.rank {
        Some(r) => format!("{} #{r}/{}", p.cc, p.identical),
        None => format!("{} {}", p.flow, p.cc),
    }
}

/// The calibration as Markdown: summary first, then one table per metric.
pub fn markdown(cal: &Calibration) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Calibration: simulator vs kernel\n");
    let _ = writeln!(
        s,
        "Produced by `cclab calibrate --repeat {}` (cclab {}). Each point runs on both backends with the same consecutive seeds ({} per point, or as many as a scenario's stored kernel runs have); values are the median [min-max] over them; error = (sim median - kernel median) / kernel median. Identical flows (same controller, start, size, RTT and ECN) are compared by rank: `cubic #1/2` is whichever of the two identical CUBIC flows got more goodput in that run.\n",
        cal.repeat, cal.cclab, cal.repeat
    );
    if let Some(dir) = &cal.kernel_from {
        let _ = writeln!(s, "The simulator was re-run against the kernel results stored in `{dir}` (`--kernel-from`); they were not re-measured.\n");
    }
    let sm = &cal.summary;
    let _ = writeln!(s, "## Summary\n");
    if !cal.kernel {
        let _ = writeln!(s, "Simulator only (no kernel runs): nothing to compare.\n");
    } else {
        let _ = writeln!(s, "| target | result | met |\n|---|---|---|");
        let yes = |b: bool| if b { "yes" } else { "no" };
        let _ = writeln!(
            s,
            "| goodput within 10% (or kernel range) at >= 80% of points | {:.0}% of {} | {} |",
            sm.goodput_within_10pct * 100.0,
            sm.goodput_points,
            yes(sm.goodput_within_10pct >= 0.8)
        );
        let _ = writeln!(
            s,
            "| goodput within 25% (or kernel range) at all points | {} | {} |",
            if sm.goodput_all_within_25pct {
                "all"
            } else {
                "not all"
            },
            yes(sm.goodput_all_within_25pct)
        );
        let _ = writeln!(
            s,
            "| retransmit ratio within 1.5x where kernel > 0.1% | {:.0}% of {} | {} |",
            sm.retrans_within_1_5x * 100.0,
            sm.retrans_points,
            yes(sm.retrans_points == 0 || sm.retrans_within_1_5x >= 1.0)
        );
        let _ = writeln!(
            s,
            "| RTT p50 within 15% | {:.0}% of {} | {} |\n",
            sm.rtt_within_15pct * 100.0,
            sm.rtt_points,
            yes(sm.rtt_points == 0 || sm.rtt_within_15pct >= 1.0)
        );
        let _ = writeln!(s, "| controller | metric | points | median abs error | worst abs error |\n|---|---|---|---|---|");
        for (cc, m) in &sm.per_cc {
            for (metric, e) in m {
                let _ = writeln!(
                    s,
                    "| {cc} | {metric} | {} | {:.1}% | {:.1}% |",
                    e.points,
                    e.median_abs_error * 100.0,
                    e.worst_abs_error * 100.0
                );
            }
        }
        s.push('\n');
    }
    for metric in ["goodput_bps", "retrans_ratio", "rtt_p50_ms"] {
        let _ = writeln!(s, "## {metric}\n\n| scenario | params | flow | sim median [min-max] | kernel median [min-max] | error | ok |\n|---|---|---|---|---|---|---|");
        for p in &cal.points {
            let Some(m) = p.metrics.iter().find(|m| m.metric == metric) else {
                continue;
            };
            let range = |k: &Stats| {
                format!(
                    "{} [{} - {}]",
                    fmt_metric(metric, k.median),
                    fmt_metric(metric, k.min),
                    fmt_metric(metric, k.max)
                )
            };
            let k = m.kernel.as_ref().map_or("-".to_string(), range);
            let e = m
                .error
                .map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0));
            let ok = match m.ok {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "n/a",
            };
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {k} | {e} | {ok} |",
                p.scenario,
                p.params,
                flow_label(p),
                range(&m.sim_stats)
            );
        }
        s.push('\n');
    }
    if cal.rerun_runs > 0 {
        let _ = writeln!(
            s,
            "{} kernel runs were run again (after a pause) because the machine disturbed an attempt: {} attempts were set aside in all (`--retry-disturbed`).\n",
            cal.rerun_runs, cal.rerun_attempts
        );
    }
    if !cal.disturbed.is_empty() {
        let _ = writeln!(s, "## Disturbed kernel runs\n\nRuns during which this machine was busy elsewhere (over 5% of its CPU time taken by the hypervisor, or the link element stalling more than twice a second): they measured the machine as much as the path. `left out` runs are excluded from their point's kernel and simulator statistics (same seed); `kept` ones were the only runs of their point or `--keep-disturbed` was given.\n\n| scenario | params | seed | what happened | |\n|---|---|---|---|---|");
        for d in &cal.disturbed {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                d.scenario,
                d.params,
                d.seed,
                d.why,
                if d.kept { "kept" } else { "left out" }
            );
        }
        s.push('\n');
    }
    s
}

/// The calibration page (`report.html`): the targets on top, then per metric a scatter of
/// the simulator against the kernel (see [`cclab_report::calpage`]).
pub fn html(cal: &Calibration) -> String {
    use cclab_report::calpage::{self, CalPoint, CalReport, CalStats};
    let st = |s: &Stats| CalStats {
        median: s.median,
        min: s.min,
        max: s.max,
        n: s.n,
    };
    let mut intro = vec![format!(
        "Produced by `cclab calibrate --repeat {}` (cclab {}). Each point runs on both backends with the same consecutive seeds; values are medians over them; error = (sim median - kernel median) / kernel median. Identical flows are compared by rank (`cubic #1/2`: the faster of two identical CUBIC flows in each run).",
        cal.repeat, cal.cclab
    )];
    if let Some(dir) = &cal.kernel_from {
        intro.push(format!(
            "The simulator was re-run against the kernel results stored in {dir} (--kernel-from); they were not re-measured."
        ));
    }
    let mut targets = Vec::new();
    let mut per_cc = Vec::new();
    if cal.kernel {
        let sm = &cal.summary;
        targets = vec![
            (
                "goodput within 10% (or kernel range) at >= 80% of points".to_string(),
                format!(
                    "{:.0}% of {}",
                    sm.goodput_within_10pct * 100.0,
                    sm.goodput_points
                ),
                sm.goodput_within_10pct >= 0.8,
            ),
            (
                "goodput within 25% (or kernel range) at all points".to_string(),
                if sm.goodput_all_within_25pct {
                    "all"
                } else {
                    "not all"
                }
                .to_string(),
                sm.goodput_all_within_25pct,
            ),
            (
                "retransmit ratio within 1.5x where kernel > 0.1%".to_string(),
                format!(
                    "{:.0}% of {}",
                    sm.retrans_within_1_5x * 100.0,
                    sm.retrans_points
                ),
                sm.retrans_points == 0 || sm.retrans_within_1_5x >= 1.0,
            ),
            (
                "RTT p50 within 15%".to_string(),
                format!("{:.0}% of {}", sm.rtt_within_15pct * 100.0, sm.rtt_points),
                sm.rtt_points == 0 || sm.rtt_within_15pct >= 1.0,
            ),
        ];
        for (cc, m) in &sm.per_cc {
            for (metric, e) in m {
                per_cc.push((
                    cc.clone(),
                    metric.clone(),
                    e.points,
                    e.median_abs_error,
                    e.worst_abs_error,
                ));
            }
        }
    }
    let points = cal
        .points
        .iter()
        .flat_map(|p| {
            p.metrics.iter().map(move |m| CalPoint {
                scenario: p.scenario.clone(),
                params: p.params.clone(),
                flow: flow_label(p),
                cc: p.cc.clone(),
                metric: m.metric.to_string(),
                sim: m.sim,
                sim_stats: st(&m.sim_stats),
                kernel: m.kernel.as_ref().map(st),
                error: m.error,
                ok: m.ok,
            })
        })
        .collect();
    calpage::render(&CalReport {
        title: "Calibration: simulator vs kernel".into(),
        version: cal.cclab.clone(),
        intro,
        targets,
        per_cc,
        points,
    })
}

/// One line per point and flow for the terminal.
pub fn text(cal: &Calibration) -> String {
    let mut s = String::new();
    for p in &cal.points {
        let _ = write!(
            s,
            "{:<26} {:<40} {:<10}",
            p.scenario,
            p.params,
            flow_label(p)
        );
        for m in &p.metrics {
            let k = m.kernel.as_ref().map_or(String::new(), |k| {
                format!(" k {}", fmt_metric(m.metric, k.median))
            });
            let e = m
                .error
                .map_or(String::new(), |e| format!(" {:+.0}%", e * 100.0));
            let _ = write!(
                s,
                " | {} {}{k}{e}",
                m.metric.split('_').next().unwrap_or(""),
                fmt_metric(m.metric, m.sim)
            );
        }
        s.push('\n');
    }
    if cal.kernel {
        let sm = &cal.summary;
        let _ = writeln!(
            s,
            "\ngoodput within 10%: {:.0}% of {} points (target 80%); all within 25%: {}; retrans within 1.5x: {:.0}% of {}; RTT p50 within 15%: {:.0}% of {}; pass: {}",
            sm.goodput_within_10pct * 100.0,
            sm.goodput_points,
            sm.goodput_all_within_25pct,
            sm.retrans_within_1_5x * 100.0,
            sm.retrans_points,
            sm.rtt_within_15pct * 100.0,
            sm.rtt_points,
            sm.pass
        );
    }
    if cal.rerun_runs > 0 {
        let _ = writeln!(
            s,
            "kernel runs run again because the machine disturbed them: {} ({} attempts set aside)",
            cal.rerun_runs, cal.rerun_attempts
        );
    }
    if !cal.disturbed.is_empty() {
        let left = cal.disturbed.iter().filter(|d| !d.kept).count();
        let _ = writeln!(
            s,
            "disturbed kernel runs (CPU steal or element stalls): {}, {left} left out of the comparison (see calibration.md)",
            cal.disturbed.len()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::{FlowResult, LinkResult, Percentiles};

    fn run_with(goodput: f64, retrans: f64, rtt: f64) -> RunResult {
        RunResult {
            params: Default::default(),
            seed: 1,
            duration_s: 1.0,
            flows: vec![FlowResult {
                cc: "bbr".into(),
                goodput_bps: goodput,
                retrans_ratio: retrans,
                rtt_ms: Percentiles {
                    min: rtt,
                    p50: rtt,
                    p95: rtt,
                    p99: rtt,
                },
                ..Default::default()
            }],
            link: LinkResult::default(),
            jain: 1.0,
            reference: None,
            series: None,
            lab: None,
            ..Default::default()
        }
    }

    fn two_flows(a: f64, b: f64) -> RunResult {
        let mut r = run_with(a, 0.01, 10.0);
        let mut f = r.flows[0].clone();
        f.id = 1;
        f.goodput_bps = b;
        f.retrans_ratio = 0.02;
        r.flows.push(f);
        r
    }

    #[test]
    fn errors_ranges_and_targets() {
        let sim = [run_with(95.0, 0.02, 50.0)];
        let sr: Vec<&RunResult> = sim.iter().collect();
        let k = [
            run_with(100.0, 0.01, 40.0),
            run_with(80.0, 0.012, 41.0),
            run_with(120.0, 0.0125, 42.0),
        ];
        let kr: Vec<&RunResult> = k.iter().collect();
        let p = compare_point("s", "-".into(), &[0], &sr, &kr);
        let g = &p[0].metrics[0];
        assert_eq!(g.kernel.as_ref().unwrap().median, 100.0);
        assert!((g.error.unwrap() + 0.05).abs() < 1e-12);
        assert_eq!(g.ok, Some(true));
        // Retransmits 0.02 vs median 0.012: 1.67x, outside 1.5x.
        assert_eq!(p[0].metrics[1].ok, Some(false));
        // RTT 50 vs 41: +22%, outside 15%.
        assert_eq!(p[0].metrics[2].ok, Some(false));
        let s = summarize(&p);
        assert!(!s.pass);
        assert_eq!(s.goodput_within_10pct, 1.0);
        // Outside 10% but inside the kernel's range still counts.
        let sim = [run_with(119.0, 0.0, 41.0)];
        let sr: Vec<&RunResult> = sim.iter().collect();
        let p = compare_point("s", "-".into(), &[0], &sr, &kr);
        assert_eq!(p[0].metrics[0].ok, Some(true));
        assert_eq!(p[0].metrics[1].ok, Some(false), "kernel 1.2% vs sim 0%");
    }

    #[test]
    fn the_simulator_value_is_its_median_over_seeds() {
        let sim = [
            run_with(50.0, 0.01, 10.0),
            run_with(100.0, 0.01, 10.0),
            run_with(300.0, 0.01, 10.0),
        ];
        let sr: Vec<&RunResult> = sim.iter().collect();
        let k = [run_with(105.0, 0.01, 10.0)];
        let kr: Vec<&RunResult> = k.iter().collect();
        let g = &compare_point("s", "-".into(), &[0], &sr, &kr)[0].metrics[0];
        assert_eq!(g.sim, 100.0);
        assert_eq!(
            (g.sim_stats.min, g.sim_stats.max, g.sim_stats.n),
            (50.0, 300.0, 3)
        );
        assert_eq!(g.ok, Some(true));
    }

    #[test]
    fn disturbed_kernel_runs_are_left_out_with_their_seeds() {
        use cclab_results::LabConditions;
        let with = |mut r: RunResult, seed: u64, steal_ms: f64| {
            r.seed = seed;
            r.duration_s = 20.0;
            r.lab = Some(LabConditions {
                steal_ms: Some(steal_ms),
                cpus: 2,
                element_stalls: 0,
                retries: 0,
            });
            r
        };
        // Seed 2's kernel run lost 22% of the CPU and its figure went the other way.
        let sim = [
            run_with(84.0, 0.01, 34.0),
            run_with(80.0, 0.01, 34.0),
            run_with(83.0, 0.01, 34.0),
        ];
        let k = [
            with(run_with(82.0, 0.01, 34.0), 1, 300.0),
            with(run_with(30.0, 0.01, 26.0), 2, 8900.0),
            with(run_with(83.0, 0.01, 34.0), 3, 500.0),
        ];
        let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
            (sim.iter().collect(), k.iter().collect());
        let d = leave_out_disturbed(&mut sr, &mut kr, false);
        assert_eq!(d.len(), 1);
        assert_eq!((d[0].0, d[0].2), (2, false));
        assert!(d[0].1.contains("22%"), "{}", d[0].1);
        assert_eq!(kr.iter().map(|r| r.seed).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(
            sr.iter()
                .map(|r| r.flows[0].goodput_bps)
                .collect::<Vec<_>>(),
            [84.0, 83.0],
            "the simulator's seed 2 goes too"
        );
        let g = &compare_point("s", "-".into(), &[0], &sr, &kr)[0].metrics[0];
        assert_eq!((g.kernel.as_ref().unwrap().n, g.ok), (2, Some(true)));
        // --keep-disturbed keeps everything, and so does a point with no quiet run.
        let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
            (sim.iter().collect(), k.iter().collect());
        assert!(leave_out_disturbed(&mut sr, &mut kr, true)[0].2);
        assert_eq!((sr.len(), kr.len()), (3, 3));
        let all_bad = [with(run_with(30.0, 0.01, 26.0), 1, 9000.0)];
        let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
            (sim[..1].iter().collect(), all_bad.iter().collect());
        assert!(leave_out_disturbed(&mut sr, &mut kr, false)[0].2);
        assert_eq!(kr.len(), 1);
        // Simulator-only or stored pre-`lab` kernel documents: nothing is disturbed.
        let plain = [run_with(82.0, 0.01, 34.0)];
        let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
            (sim[..1].iter().collect(), plain.iter().collect());
        assert!(leave_out_disturbed(&mut sr, &mut kr, false).is_empty());
    }

    #[test]
    fn identical_flows_are_compared_by_rank() {
        // Flow 0 wins in the simulator, flow 1 in the kernel: by id both rows would be 70%
        // off; by rank they agree.
        let sim = [two_flows(60.0, 30.0)];
        let k = [two_flows(31.0, 61.0)];
        let (sr, kr): (Vec<&RunResult>, Vec<&RunResult>) =
            (sim.iter().collect(), k.iter().collect());
        let p = compare_point("s", "-".into(), &[0, 0], &sr, &kr);
        assert_eq!(
            (p[0].rank, p[1].rank, p[0].identical),
            (Some(1), Some(2), 2)
        );
        assert_eq!(p[0].metrics[0].kernel.as_ref().unwrap().median, 61.0);
        assert_eq!(p[1].metrics[0].kernel.as_ref().unwrap().median, 31.0);
        assert!(p.iter().all(|f| f.metrics[0].ok == Some(true)));
        // Each row's other metrics follow its flow: the kernel's faster flow had 2% retransmits.
        assert_eq!(p[0].metrics[1].kernel.as_ref().unwrap().median, 0.02);
        assert_eq!(p[0].metrics[1].sim, 0.01);
        assert_eq!(flow_label(&p[0]), "bbr #1/2");
        // Different flows keep their ids.
        let p = compare_point("s", "-".into(), &[0, 1], &sr, &kr);
        assert_eq!(p[0].rank, None);
        assert_eq!(p[0].metrics[0].kernel.as_ref().unwrap().median, 31.0);
        assert_eq!(p[0].metrics[0].ok, Some(false));
    }

    #[test]
    fn identical_means_same_controller_start_size_and_rtt() {
        let text = "name = \"x\"\nduration = \"5s\"\n[link]\nrate = \"10mbit\"\nrtt = \"10ms\"\n\
            [[flows]]\ncc = \"cubic\"\ncount = 2\n[[flows]]\ncc = \"cubic\"\n\
            [[flows]]\ncc = \"cubic\"\nstart = \"1s\"\n[[flows]]\ncc = \"bbr\"\n";
        let file = cclab_scenario::ScenarioFile::from_str(text, "x.toml").unwrap();
        let pts = file.expand().unwrap();
        assert_eq!(identical_flows(&pts[0].scenario), vec![0, 0, 0, 3, 4]);
    }
}
