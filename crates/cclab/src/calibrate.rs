//! `cclab calibrate`: how well the simulator predicts the kernel.
//!
//! Runs every scenario of a calibration directory on the `sim` backend once and on the
//! `kernel` backend `repeat` times (consecutive seeds), then compares, per matrix point and
//! flow, three metrics: goodput, retransmit ratio and RTT p50. For each the kernel's median and
//! min-max range are reported beside the simulator's value and the relative error
//! `(sim - kernel median) / kernel median`.
//!
//! Acceptance (issue #5): goodput within 10% of the kernel median (or inside the kernel's own
//! min-max range where that is wider) at >= 80% of the points and within 25% at all of them;
//! retransmit ratio within 1.5x where the kernel's is above 0.1%; RTT p50 within 15%.

use crate::runner::{self, Backend, Error, Plan, RunOptions};
use cclab_results::{median, ResultsDoc, RunResult};
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
    pub progress: bool,
}

/// Kernel statistics of one metric over the repeats.
#[derive(Clone, Debug, Serialize)]
pub struct KernelStats {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub n: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct MetricCal {
    pub metric: &'static str,
    pub sim: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelStats>,
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
}

fn scenario_files(dir: &Path) -> Result<Vec<String>, Error> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| Error::new(format!("cannot read calibration directory {}: {e}", dir.display())))?;
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    v.sort();
    if v.is_empty() {
        return Err(Error::new(format!("{}: no .toml scenarios in the calibration directory", dir.display())));
    }
    Ok(v)
}

fn metrics_of(r: &RunResult, flow: usize) -> [(&'static str, f64); 3] {
    let f = &r.flows[flow];
    [("goodput_bps", f.goodput_bps), ("retrans_ratio", f.retrans_ratio), ("rtt_p50_ms", f.rtt_ms.p50)]
}

/// Compare one point's simulator run with its kernel repeats.
fn compare_point(scenario: &str, params: String, sim: &RunResult, kernel: &[&RunResult]) -> Vec<FlowCal> {
    let mut out = Vec::new();
    for (fi, f) in sim.flows.iter().enumerate() {
        let mut metrics = Vec::new();
        for (mi, (name, sv)) in metrics_of(sim, fi).into_iter().enumerate() {
            let mut ks: Vec<f64> = kernel
                .iter()
                .filter(|k| k.flows.len() > fi)
                .map(|k| metrics_of(k, fi)[mi].1)
                .collect();
            let (stats, error, ok) = if ks.is_empty() {
                (None, None, None)
            } else {
                let med = median(&mut ks);
                let (min, max) = (ks[0], ks[ks.len() - 1]);
                let err = if med.abs() > 0.0 { Some((sv - med) / med) } else { None };
                let in_range = sv >= min && sv <= max;
                let ok = match name {
                    "goodput_bps" => Some(in_range || err.is_some_and(|e| e.abs() <= 0.10)),
                    "retrans_ratio" if med > 0.001 => {
                        let r = sv / med;
                        Some((1.0 / 1.5..=1.5).contains(&r))
                    }
                    "rtt_p50_ms" => Some(err.is_some_and(|e| e.abs() <= 0.15)),
                    _ => None,
                };
                (Some(KernelStats { median: med, min, max, n: ks.len() }), err, ok)
            };
            metrics.push(MetricCal { metric: name, sim: sv, kernel: stats, error, ok });
        }
        out.push(FlowCal { scenario: scenario.to_string(), params: params.clone(), flow: f.id, cc: f.cc.clone(), metrics });
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
            let (Some(k), Some(e)) = (&m.kernel, m.error) else { continue };
            errs.entry((p.cc.clone(), m.metric)).or_default().push(e.abs());
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
            ErrorSummary { points: n, median_abs_error: med, worst_abs_error: worst },
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
    let sim_opts = RunOptions { backend: Backend::Sim, progress: opts.progress, ..RunOptions::default() };
    let plans: Vec<Plan> = files.iter().map(|f| runner::plan(f, &sim_opts)).collect::<Result<_, _>>()?;
    let sim_docs = runner::execute(&plans, &sim_opts)?;
    let mut repeat = opts.repeat.max(1);
    let kernel_docs = if opts.sim_only {
        Vec::new()
    } else if let Some(dir) = &opts.kernel_from {
        let docs = plans.iter().map(|p| load_kernel_doc(dir, p)).collect::<Result<Vec<_>, _>>()?;
        repeat = docs.first().map_or(1, |(_, r)| *r);
        if docs.iter().any(|(_, r)| *r != repeat) {
            return Err(Error::new(format!(
                "{}: the stored kernel results have different repeat counts; re-run `cclab calibrate --out {}`",
                dir.display(),
                dir.display()
            )));
        }
        docs.into_iter().map(|(d, _)| d).collect()
    } else {
        let k_opts = RunOptions {
            backend: Backend::Kernel,
            repeat: opts.repeat.max(1),
            progress: opts.progress,
            ..RunOptions::default()
        };
        runner::execute(&plans, &k_opts)?
    };
    let mut points = Vec::new();
    for (pi, plan) in plans.iter().enumerate() {
        for (i, pt) in plan.points.iter().enumerate() {
            let sim = &sim_docs[pi].runs[i];
            let kernel: Vec<&RunResult> = kernel_docs
                .get(pi)
                .map(|d| {
                    let r = repeat as usize;
                    d.runs[i * r..(i + 1) * r].iter().collect()
                })
                .unwrap_or_default();
            let label = if pt.label().is_empty() { "-".to_string() } else { pt.label() };
            points.extend(compare_point(&plan.name, label, sim, &kernel));
        }
    }
    let summary = summarize(&points);
    let cal = Calibration {
        cclab: cclab_results::VERSION.to_string(),
        repeat,
        kernel: !opts.sim_only,
        kernel_from: opts.kernel_from.as_ref().map(|d| d.display().to_string()),
        points,
        summary,
    };
    Ok((cal, sim_docs, kernel_docs))
}

/// The stored kernel results of `plan` in `dir` and its repeats per point; checks that they
/// belong to the same matrix (same points, in order).
fn load_kernel_doc(dir: &Path, plan: &Plan) -> Result<(ResultsDoc, u32), Error> {
    let path = dir.join(format!("kernel-{}.json", plan.name));
    let redo = format!("re-run `cclab calibrate --out {}` as root to store them", dir.display());
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::new(format!("{}: {e}; {redo}", path.display())))?;
    let doc: ResultsDoc = serde_json::from_str(&text)
        .map_err(|e| Error::new(format!("{}: not a cclab results document ({e}); {redo}", path.display())))?;
    let n = plan.points.len();
    if doc.backend != "kernel" || n == 0 || doc.runs.is_empty() || doc.runs.len() % n != 0 {
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
        if doc.runs[i * r..(i + 1) * r].iter().any(|run| run.params != pt.params) {
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

/// The calibration as Markdown: summary first, then one table per metric.
pub fn markdown(cal: &Calibration) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Calibration: simulator vs kernel\n");
    let _ = writeln!(
        s,
        "Produced by `cclab calibrate --repeat {} --out docs/calibration` (cclab {}). Kernel values are the median [min-max] of {} runs with consecutive seeds; error = (sim - kernel median) / kernel median.\n",
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
        let _ = writeln!(s, "| goodput within 10% (or kernel range) at >= 80% of points | {:.0}% of {} | {} |", sm.goodput_within_10pct * 100.0, sm.goodput_points, yes(sm.goodput_within_10pct >= 0.8));
        let _ = writeln!(s, "| goodput within 25% (or kernel range) at all points | {} | {} |", if sm.goodput_all_within_25pct { "all" } else { "not all" }, yes(sm.goodput_all_within_25pct));
        let _ = writeln!(s, "| retransmit ratio within 1.5x where kernel > 0.1% | {:.0}% of {} | {} |", sm.retrans_within_1_5x * 100.0, sm.retrans_points, yes(sm.retrans_points == 0 || sm.retrans_within_1_5x >= 1.0));
        let _ = writeln!(s, "| RTT p50 within 15% | {:.0}% of {} | {} |\n", sm.rtt_within_15pct * 100.0, sm.rtt_points, yes(sm.rtt_points == 0 || sm.rtt_within_15pct >= 1.0));
        let _ = writeln!(s, "| controller | metric | points | median abs error | worst abs error |\n|---|---|---|---|---|");
        for (cc, m) in &sm.per_cc {
            for (metric, e) in m {
                let _ = writeln!(s, "| {cc} | {metric} | {} | {:.1}% | {:.1}% |", e.points, e.median_abs_error * 100.0, e.worst_abs_error * 100.0);
            }
        }
        s.push('\n');
    }
    for metric in ["goodput_bps", "retrans_ratio", "rtt_p50_ms"] {
        let _ = writeln!(s, "## {metric}\n\n| scenario | params | flow | sim | kernel median [min-max] | error | ok |\n|---|---|---|---|---|---|---|");
        for p in &cal.points {
            let Some(m) = p.metrics.iter().find(|m| m.metric == metric) else { continue };
            let k = m.kernel.as_ref().map_or("-".to_string(), |k| {
                format!("{} [{} - {}]", fmt_metric(metric, k.median), fmt_metric(metric, k.min), fmt_metric(metric, k.max))
            });
            let e = m.error.map_or("-".to_string(), |e| format!("{:+.1}%", e * 100.0));
            let ok = match m.ok {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "n/a",
            };
            let _ = writeln!(s, "| {} | {} | {} {} | {} | {k} | {e} | {ok} |", p.scenario, p.params, p.flow, p.cc, fmt_metric(metric, m.sim));
        }
        s.push('\n');
    }
    s
}

/// One line per point and flow for the terminal.
pub fn text(cal: &Calibration) -> String {
    let mut s = String::new();
    for p in &cal.points {
        let _ = write!(s, "{:<26} {:<40} {} {:<5}", p.scenario, p.params, p.flow, p.cc);
        for m in &p.metrics {
            let k = m.kernel.as_ref().map_or(String::new(), |k| format!(" k {}", fmt_metric(m.metric, k.median)));
            let e = m.error.map_or(String::new(), |e| format!(" {:+.0}%", e * 100.0));
            let _ = write!(s, " | {} {}{k}{e}", m.metric.split('_').next().unwrap_or(""), fmt_metric(m.metric, m.sim));
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
                rtt_ms: Percentiles { min: rtt, p50: rtt, p95: rtt, p99: rtt },
                ..Default::default()
            }],
            link: LinkResult::default(),
            jain: 1.0,
            reference: None,
            series: None,
        }
    }

    #[test]
    fn errors_ranges_and_targets() {
        let sim = run_with(95.0, 0.02, 50.0);
        let k = [run_with(100.0, 0.01, 40.0), run_with(80.0, 0.012, 41.0), run_with(120.0, 0.0125, 42.0)];
        let kr: Vec<&RunResult> = k.iter().collect();
        let p = compare_point("s", "-".into(), &sim, &kr);
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
        let sim = run_with(119.0, 0.0, 41.0);
        let p = compare_point("s", "-".into(), &sim, &kr);
        assert_eq!(p[0].metrics[0].ok, Some(true));
        assert_eq!(p[0].metrics[1].ok, Some(false), "kernel 1.2% vs sim 0%");
    }
}
