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
//!
//! Its parts: this module runs the matrix (or loads the stored kernel results) and leaves
//! out disturbed kernel runs; `compare` holds each point's flows against each other and sums
//! up the targets; `report` writes the comparison as Markdown, HTML and terminal lines.

mod compare;
mod report;
#[cfg(test)]
mod tests;

pub use compare::identical_flows;
pub use report::{html, markdown, text};

use crate::runner::{self, Error, Plan, RunOptions};
use cclab_results::{median, ResultsDoc, RunResult};
use compare::{compare_point, summarize};
use serde::Serialize;
use std::collections::BTreeMap;
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
