//! `cclab advise`: which controller and sender settings serve an objective best on a path.
//!
//! The scenario describes the path and its current hosts. Every candidate (a controller of
//! the simulator's registry x the sender-side settings a server operator controls: the
//! initial window, pacing, the send buffer's limit, the minimum RTO) runs on the simulator
//! with `repeat` seeds of every matrix point, in parallel; candidates are ranked by the
//! objective's value (the mean over matrix points of the per-point median across seeds,
//! with the range over seeds likewise) against the current setting: the scenario's own
//! hosts and its first controller, or the one `--current` names. `verify` re-runs the best
//! three and the current setting on the kernel backend, with the same seeds.
//!
//! Settings that make no difference are folded into one row (`collapse`); each row says
//! what it takes on a Linux server (`candidate`: commands where a stock kernel runs it, a
//! caveat where it cannot); `text` writes it for a person. docs/advise.md is the guide.
//!
//! Receiver-side settings (`tcp_rmem`, `init_rwnd`) are not varied: on a download they
//! belong to the client, not to the server being tuned.

mod candidate;
mod collapse;
mod text;

pub use candidate::Candidate;
pub use collapse::Spread;
pub use text::text;

use crate::runner::{execute, plan, Error, RunOptions};
use cclab_results::ResultsDoc;
use serde::Serialize;

/// What to optimise.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Objective {
    /// Completion time of a transfer of this many bytes (lower is better).
    Fct(u64),
    /// Bulk goodput (higher is better).
    Goodput,
    /// 99th percentile RTT of a bulk flow (lower is better).
    RttP99,
}

impl Objective {
    /// `fct:640kb`, `goodput` or `rtt_p99`; `fct` alone is `Fct(0)`: the size comes from
    /// `--size` or the scenario's sized flows (see [`advise`]).
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s == "fct" {
            return Ok(Objective::Fct(0));
        }
        if let Some(size) = s.strip_prefix("fct:") {
            let b = cclab_scenario::units::parse_size(size)
                .map_err(|e| format!("objective {s}: {e}"))?;
            if b == 0 {
                return Err("objective fct: the size must be positive (e.g. fct:640kb)".into());
            }
            return Ok(Objective::Fct(b));
        }
        match s {
            "goodput" => Ok(Objective::Goodput),
            "rtt_p99" => Ok(Objective::RttP99),
            _ => Err(format!(
                "unknown objective \"{s}\": use fct:SIZE (e.g. fct:640kb), goodput or rtt_p99"
            )),
        }
    }

    pub fn name(&self) -> String {
        match self {
            Objective::Fct(b) => format!("fct:{}", cclab_report::units::size(*b as f64)),
            Objective::Goodput => "goodput".into(),
            Objective::RttP99 => "rtt_p99".into(),
        }
    }

    pub fn lower_is_better(&self) -> bool {
        !matches!(self, Objective::Goodput)
    }

    /// The objective's value of one run (first flow group, first flow), in its unit
    /// (seconds, bit/s, milliseconds).
    fn value(&self, r: &cclab_results::RunResult) -> Option<f64> {
        let f = r.flows.first()?;
        match self {
            Objective::Fct(_) => f.fct_s,
            Objective::Goodput => Some(f.goodput_bps),
            Objective::RttP99 => Some(f.rtt_ms.p99),
        }
    }

    /// Mean over matrix points of the per-point median (and min, max) across seeds; `None`
    /// if a sized transfer never completed.
    fn score(&self, doc: &ResultsDoc) -> Option<Spread> {
        let mut by_point: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for r in &doc.runs {
            let key = serde_json::to_string(&r.params).unwrap_or_default();
            by_point.entry(key).or_default().push(self.value(r)?);
        }
        if by_point.is_empty() {
            return None;
        }
        let n = by_point.len() as f64;
        let mut s = Spread {
            median: 0.0,
            min: 0.0,
            max: 0.0,
        };
        for mut v in by_point.into_values() {
            v.sort_by(f64::total_cmp);
            s.median += v[v.len() / 2] / n;
            s.min += v[0] / n;
            s.max += v[v.len() - 1] / n;
        }
        Some(s)
    }

    /// How much better `v` is than `base`, as a fraction (+0.4 = 40% better: 40% more
    /// goodput, or a completion time / RTT 1.4x shorter).
    pub fn gain(&self, base: f64, v: f64) -> f64 {
        if self.lower_is_better() {
            base / v - 1.0
        } else {
            v / base - 1.0
        }
    }

    pub fn fmt(&self, v: f64) -> String {
        match self {
            Objective::Fct(_) => cclab_report::units::secs(v),
            Objective::Goodput => cclab_report::units::rate(v),
            Objective::RttP99 => cclab_report::units::ms(v),
        }
    }
}

/// How `advise` runs.
#[derive(Clone, Debug)]
pub struct AdviseOptions {
    pub objective: Objective,
    /// Seeds per matrix point and candidate.
    pub repeat: u32,
    pub jobs: usize,
    pub progress: bool,
    /// Re-run the best three and the current setting on the kernel backend.
    pub verify: bool,
    /// `--set` overrides applied before anything else.
    pub overrides: Vec<String>,
    /// The controller in use now (`--current`); `None`: the scenario's first.
    pub current_cc: Option<String>,
    /// Every flow becomes a transfer of this many bytes (`--size`; `fct:SIZE` sets it too).
    pub size: Option<u64>,
}

/// A candidate with its predicted (and, with `verify`, measured) value.
#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    pub candidate: Candidate,
    /// The objective's value on the simulator (seconds, bit/s or ms): the median over seeds.
    pub predicted: f64,
    /// The range over seeds of the simulator's value.
    pub predicted_min: f64,
    pub predicted_max: f64,
    /// Gain over the current setting on the simulator (+0.4 = 40% better).
    pub predicted_gain: f64,
    pub measured: Option<f64>,
    pub measured_gain: Option<f64>,
}

/// Settings whose results are equivalent, as one row of advice.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The settings in words: "bbr, iw 40, any pacing, any send buffer, any rto_min".
    pub setting: String,
    /// The controllers of the row (several where the controller makes no difference).
    pub controllers: Vec<String>,
    /// Settings that make no difference here (every value tried gave the same result).
    pub any: Vec<&'static str>,
    /// How many of the settings searched the row stands for.
    pub settings: usize,
    /// Median over the row's settings of their medians over seeds, and the widest range.
    pub predicted: f64,
    pub predicted_min: f64,
    pub predicted_max: f64,
    pub predicted_gain: f64,
    /// The change against the current setting in words and units ("735 ms less, 52% less
    /// time"; "+45 Mbit/s, 45% more").
    pub change: String,
    /// Whether the current setting is one of this row's.
    pub current: bool,
    /// Whether a stock Linux kernel runs its controller.
    pub stock_kernel: bool,
    /// The row's setting that changes the fewest things from the current one.
    pub apply: Candidate,
    /// Commands that apply it on a Linux server, as root (what differs from the current).
    pub commands: Vec<String>,
    /// What the commands cannot do (a controller a stock kernel lacks; what the client needs).
    pub caveats: Vec<String>,
    pub measured: Option<f64>,
    pub measured_gain: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Advice {
    pub scenario: String,
    pub objective: String,
    pub lower_is_better: bool,
    pub candidates: usize,
    pub runs: usize,
    pub repeat: u32,
    /// The values of each setting searched, in words.
    pub searched: Vec<String>,
    /// Controllers not searched, and why, in words (empty: none left out).
    pub left_out: String,
    /// Where the current setting comes from, in words.
    pub current_from: String,
    /// The workload every setting ran, in words (and whether it replaced the scenario's).
    pub workload: String,
    /// The receiver-side settings held at the scenario's values, in words (the client's).
    pub held: String,
    pub current: Scored,
    /// Every setting, best first.
    pub ranked: Vec<Scored>,
    /// Equivalent settings folded, best first.
    pub rows: Vec<Row>,
}

fn mib(n: u64) -> u64 {
    n << 20
}

/// The scenario's flows in words: "1 bulk flow (cubic)", "3 flows of 25 MB".
fn flows_text(sc: &cclab_scenario::Scenario) -> String {
    let n: u32 = sc.flows.iter().map(|f| f.count).sum();
    let sizes: Vec<Option<u64>> = sc.flows.iter().map(|f| f.size_bytes).collect();
    let what = match sizes.first().copied().flatten() {
        Some(b) if sizes.iter().all(|s| *s == Some(b)) => {
            format!(
                "transfer{} of {}",
                plural(n),
                cclab_report::units::size(b as f64)
            )
        }
        _ if sizes.iter().all(Option::is_none) => format!("bulk flow{}", plural(n)),
        _ => format!("flow{} (bulk and sized)", plural(n)),
    };
    format!("{n} {what}")
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Rank every candidate for the scenario at `path`.
pub fn advise(path: &str, opts: &AdviseOptions) -> Result<Advice, Error> {
    let ropts = |overrides: Vec<String>, backend: &str| RunOptions {
        backend: backend.into(),
        overrides,
        repeat: opts.repeat.max(1),
        jobs: opts.jobs,
        progress: opts.progress,
        ..RunOptions::default()
    };
    // The scenario as written (with --set), to say what the workload was and is.
    let given = plan(path, &ropts(opts.overrides.clone(), "sim"))?;
    let sc0 = &given.points[0].scenario;
    let scenario_size = sc0.flows.iter().map(|f| f.size_bytes).collect::<Vec<_>>();
    let mut obj = opts.objective;
    let size = match (obj, opts.size) {
        (Objective::Fct(a), Some(b)) if a != 0 && a != b => {
            return Err(Error::new(format!(
                "the objective fct:{} and --size {} disagree: give the size once",
                cclab_report::units::size(a as f64),
                cclab_report::units::size(b as f64)
            )))
        }
        (_, Some(b)) => Some(b),
        (Objective::Fct(0), None) => match scenario_size.first().copied().flatten() {
            Some(b) if scenario_size.iter().all(|s| *s == Some(b)) => None,
            _ => {
                return Err(Error::new(format!(
                    "{path}: the objective fct needs a transfer size and the scenario's flows \
                     are bulk (or of several sizes): give one with --size 640kb or fct:640kb"
                )))
            }
        },
        (Objective::Fct(a), None) => Some(a),
        (_, None) => None,
    };
    if let Objective::Fct(0) = obj {
        obj = Objective::Fct(size.or(scenario_size[0]).unwrap_or(0));
    }
    let mut base_overrides = opts.overrides.clone();
    let workload = match size {
        Some(b) if scenario_size.iter().any(|s| *s != Some(b)) => {
            base_overrides.push(format!("flows.size={b}"));
            let n: u32 = sc0.flows.iter().map(|f| f.count).sum();
            format!(
                "{n} transfer{} of {} per run, in place of the scenario's {} (--size sets the size)",
                plural(n),
                cclab_report::units::size(b as f64),
                flows_text(sc0)
            )
        }
        _ => format!("the scenario's {}", flows_text(sc0)),
    };
    if let Some(cc) = &opts.current_cc {
        let c = cclab_core::cc::find(cc).ok_or_else(|| {
            Error::new(format!(
                "--current {cc}: not a controller of the simulator (it has: {})",
                cclab_core::cc::CONTROLLERS
                    .iter()
                    .map(|c| c.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
        base_overrides.push(format!("flows.cc={}", c.name));
    }
    // The current setting: the scenario's hosts and its first controller.
    let first = plan(path, &ropts(base_overrides.clone(), "sim"))?;
    // The gain is over one current host: a scenario that sweeps its hosts has several.
    if let Some(k) = first.points[0]
        .params
        .keys()
        .find(|k| k.starts_with("hosts."))
    {
        return Err(Error::new(format!(
            "{path}: advise compares settings with the scenario's one current host, and it \
             sweeps {k}: pick one value with --set {k}=VALUE"
        )));
    }
    let sc = &first.points[0].scenario;
    let current = Candidate {
        cc: sc.flows[0].cc.clone(),
        init_cwnd: sc.flows[0].init_cwnd,
        pacing: sc.hosts.pacing,
        tcp_wmem: sc.hosts.tcp.tcp_wmem,
        rto_min_ms: sc.hosts.tcp.rto_min / 1_000_000,
    };
    let current_from = match &opts.current_cc {
        Some(_) => "controller from --current, the rest from the scenario's [hosts]".to_string(),
        None => {
            let mut ccs: Vec<String> = Vec::new();
            for p in &given.points {
                for f in &p.scenario.flows {
                    if !ccs.contains(&f.cc) {
                        ccs.push(f.cc.clone());
                    }
                }
            }
            if ccs.len() > 1 {
                format!(
                    "the first of the scenario's controllers {} and its [hosts] (--current CC \
                     names the one in use)",
                    ccs.join(", ")
                )
            } else {
                "the scenario's controller and [hosts] (--current CC names another)".to_string()
            }
        }
    };
    let t = &sc.hosts.tcp;
    let held = format!(
        "the client's receive side, not varied (a server cannot set it): tcp_rmem up to {}{}",
        cclab_report::units::size(t.tcp_rmem[2] as f64),
        t.init_rwnd
            .map(|n| format!(", initial receive window {n} packets"))
            .unwrap_or_default()
    );
    let mut grid = vec![current.clone()];
    let w = current.tcp_wmem;
    let iws = [10, 20, 40];
    let wmaxes = [w[2], mib(16), mib(64)];
    let rtos = [current.rto_min_ms, 50];
    // (The external controller is driven from outside: nothing to recommend.) Controllers
    // that need ECN (DCTCP, Prague) are candidates only where the bottleneck marks it: on
    // another path they fall back to Reno on loss, and neither is meant for one.
    let marks = sc.link.path.ecn_threshold_ns.is_some() || sc.link.path.aqm.marks_ecn();
    let needs_ecn = |cc: &str| {
        cclab_core::cc::find(cc).is_some_and(|c| (c.build)(&c.defaults(), 0).needs_ecn())
    };
    let mut left_out: Vec<String> = Vec::new();
    let ccs = cclab_core::cc::CONTROLLERS.iter().map(|c| c.name);
    for cc in ccs.filter(|&c| c != cclab_core::cc::external::CONTROLLER.name) {
        if !marks && needs_ecn(cc) && cc != current.cc {
            left_out.push(cc.to_string());
            continue;
        }
        for iw in iws {
            for pacing in [false, true] {
                for wmax in wmaxes {
                    for rto in rtos {
                        let c = Candidate {
                            cc: cc.to_string(),
                            init_cwnd: iw,
                            pacing,
                            tcp_wmem: [w[0], w[1].min(wmax), wmax.max(w[1])],
                            rto_min_ms: rto,
                        };
                        if !grid.contains(&c) {
                            grid.push(c);
                        }
                    }
                }
            }
        }
    }
    let searched = searched_text(&grid);
    let mut plans = Vec::new();
    for c in &grid {
        let mut o = base_overrides.clone();
        o.extend(c.overrides());
        plans.push(plan(path, &ropts(o, "sim"))?);
    }
    let runs: usize = plans.iter().map(|p| p.points.len()).sum::<usize>() * opts.repeat as usize;
    if opts.progress {
        eprintln!(
            "advise: {} settings x {} matrix point(s) x {} seed(s) = {runs} simulator runs",
            grid.len(),
            plans[0].points.len(),
            opts.repeat
        );
    }
    let docs = execute(&plans, &ropts(Vec::new(), "sim"))?;
    let mut scored: Vec<(Candidate, Spread)> = grid
        .iter()
        .zip(&docs)
        .filter_map(|(c, d)| obj.score(d).map(|v| (c.clone(), v)))
        .collect();
    let base = scored
        .iter()
        .find(|(c, _)| *c == current)
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            Error::new(format!(
                "{path}: with its own hosts the transfer does not complete within the run; \
                 give the scenario a longer duration"
            ))
        })?;
    // Best first; settings within 0.5% of each other count as equal, and then the one
    // that changes fewer settings comes first.
    let key = |v: f64| {
        let q = (v.abs().max(1e-12).ln() / 0.005_f64.ln_1p()).round() as i64;
        if obj.lower_is_better() {
            q
        } else {
            -q
        }
    };
    scored.sort_by_key(|(c, v)| (key(v.median), c.changes(&current)));
    let mk = |c: &Candidate, v: Spread| Scored {
        candidate: c.clone(),
        predicted: v.median,
        predicted_min: v.min,
        predicted_max: v.max,
        predicted_gain: obj.gain(base.median, v.median),
        measured: None,
        measured_gain: None,
    };
    let mut current_s = mk(&current, base);
    let mut ranked: Vec<Scored> = scored.iter().map(|(c, v)| mk(c, *v)).collect();
    let mut rows = rows(&scored, &current, obj, base.median);
    if opts.verify {
        let mut which: Vec<Candidate> = rows.iter().take(3).map(|r| r.apply.clone()).collect();
        which.push(current.clone());
        let mut kplans = Vec::new();
        for c in &which {
            let mut o = base_overrides.clone();
            o.extend(c.overrides());
            kplans.push(plan(path, &ropts(o, "kernel"))?);
        }
        let kdocs = execute(&kplans, &ropts(Vec::new(), "kernel"))?;
        let measured: Vec<Option<f64>> = kdocs
            .iter()
            .map(|d| obj.score(d).map(|s| s.median))
            .collect();
        let kbase = *measured.last().unwrap_or(&None);
        for (i, c) in which.iter().enumerate() {
            let m = measured[i];
            let g = match (kbase, m) {
                (Some(b), Some(v)) => Some(obj.gain(b, v)),
                _ => None,
            };
            if *c == current {
                current_s.measured = m;
                current_s.measured_gain = g;
            }
            if let Some(s) = ranked.iter_mut().find(|s| s.candidate == *c) {
                s.measured = m;
                s.measured_gain = g;
            }
            if let Some(r) = rows.iter_mut().find(|r| r.apply == *c) {
                r.measured = m;
                r.measured_gain = g;
            }
        }
    }
    Ok(Advice {
        scenario: first.name.clone(),
        objective: obj.name(),
        lower_is_better: obj.lower_is_better(),
        candidates: grid.len(),
        runs,
        repeat: opts.repeat,
        searched,
        left_out: if left_out.is_empty() {
            String::new()
        } else {
            format!(
                "{}: they need a bottleneck that marks ECN (link.ecn_threshold, or an AQM that \
                 marks: fq_codel/codel/pie with ecn = true, dualpi2)",
                left_out.join(", ")
            )
        },
        current_from,
        workload,
        held,
        current: current_s,
        ranked,
        rows,
    })
}

/// The values of each setting in the grid, in words.
fn searched_text(grid: &[Candidate]) -> Vec<String> {
    let u = collapse::universe(grid);
    let mut ccs: Vec<&str> = Vec::new();
    for c in grid {
        if !ccs.contains(&c.cc.as_str()) {
            ccs.push(&c.cc);
        }
    }
    let mut out = vec![format!("controller {}", ccs.join(" / "))];
    for (d, name) in collapse::SETTINGS.iter().enumerate().take(collapse::CC) {
        let vals: Vec<String> = u[d].iter().map(|&v| text::value(d, v)).collect();
        out.push(format!("{name} {}", vals.join(" / ")));
    }
    out
}

/// The scored candidates folded into rows of equivalent settings, best first.
fn rows(
    scored: &[(Candidate, Spread)],
    current: &Candidate,
    obj: Objective,
    base: f64,
) -> Vec<Row> {
    let cands: Vec<Candidate> = scored.iter().map(|(c, _)| c.clone()).collect();
    let spreads: Vec<Spread> = scored.iter().map(|(_, s)| *s).collect();
    let u = collapse::universe(&cands);
    let mut groups = collapse::collapse(&cands, &spreads);
    // Best first, as the candidates are (ties: the simpler change).
    let best_rank = |g: &collapse::Group| *g.members.iter().min().unwrap_or(&0);
    groups.sort_by_key(best_rank);
    groups
        .iter()
        .map(|g| {
            // The setting to apply: one a stock kernel runs if the row has one, then the
            // one with the fewest changes.
            let apply = g
                .members
                .iter()
                .map(|&i| &cands[i])
                .min_by_key(|c| (!c.stock_kernel(), c.changes(current)))
                .cloned()
                .unwrap_or_else(|| current.clone());
            let any: Vec<&'static str> = (0..collapse::SETTINGS.len())
                .filter(|&d| g.any(d, &u))
                .map(|d| collapse::SETTINGS[d])
                .collect();
            Row {
                setting: text::setting(g, &u),
                controllers: g.values[collapse::CC]
                    .iter()
                    .map(|&v| collapse::cc_name(v).to_string())
                    .collect(),
                any,
                settings: g.members.len(),
                predicted: g.spread.median,
                predicted_min: g.spread.min,
                predicted_max: g.spread.max,
                predicted_gain: obj.gain(base, g.spread.median),
                change: text::change(obj, base, g.spread.median),
                current: g.members.iter().any(|&i| cands[i] == *current),
                stock_kernel: apply.stock_kernel(),
                commands: apply.commands(current),
                caveats: apply.caveats(current),
                apply,
                measured: None,
                measured_gain: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_and_compare() {
        assert_eq!(Objective::parse("fct:640kb"), Ok(Objective::Fct(640_000)));
        assert_eq!(Objective::parse("fct"), Ok(Objective::Fct(0)));
        assert_eq!(Objective::parse("goodput"), Ok(Objective::Goodput));
        assert!(Objective::parse("fast").unwrap_err().contains("fct:SIZE"));
        assert!(Objective::parse("fct:0kb").is_err());
        // A completion time half as long is a 100% gain; 10% more goodput is 10%.
        assert!((Objective::Fct(1).gain(2.0, 1.0) - 1.0).abs() < 1e-9);
        assert!((Objective::Goodput.gain(100.0, 110.0) - 0.1).abs() < 1e-9);
    }
}
