//! `cclab advise`: which controller and sender settings serve an objective best on a path.
//!
//! The scenario describes the path and its current hosts. Every candidate (a controller of
//! the simulator's registry x the sender-side settings a server operator controls: the
//! initial window, pacing, the send buffer's limit, the minimum RTO) runs on the simulator
//! with `repeat` seeds of every matrix point, in parallel; candidates are ranked by the
//! objective's value (the mean over matrix points of the per-point median across seeds)
//! against the scenario's own hosts and first controller. `verify` re-runs the best three
//! and the current setting on the kernel backend, with the same seeds.
//!
//! Receiver-side settings (`tcp_rmem`, `init_rwnd`) are not varied: on a download they
//! belong to the client, not to the server being tuned.

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
    /// `fct:640kb`, `goodput` or `rtt_p99`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
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

    fn lower_is_better(&self) -> bool {
        !matches!(self, Objective::Goodput)
    }

    /// Overrides that set the workload up: a transfer of the objective's size.
    fn overrides(&self) -> Vec<String> {
        match self {
            Objective::Fct(b) => vec![format!("flows.size={b}")],
            // The scenario's own flows (bulk or sized).
            Objective::Goodput | Objective::RttP99 => Vec::new(),
        }
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

    /// Mean over matrix points of the per-point median across seeds; `None` if a sized
    /// transfer never completed.
    fn score(&self, doc: &ResultsDoc) -> Option<f64> {
        let mut by_point: std::collections::BTreeMap<String, Vec<f64>> = Default::default();
        for r in &doc.runs {
            let key = serde_json::to_string(&r.params).unwrap_or_default();
            by_point.entry(key).or_default().push(self.value(r)?);
        }
        if by_point.is_empty() {
            return None;
        }
        let n = by_point.len() as f64;
        Some(
            by_point
                .into_values()
                .map(|mut v| {
                    v.sort_by(f64::total_cmp);
                    v[v.len() / 2]
                })
                .sum::<f64>()
                / n,
        )
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

/// One combination of sender settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    pub cc: String,
    pub init_cwnd: u32,
    pub pacing: bool,
    /// `tcp_wmem` triple.
    pub tcp_wmem: [u64; 3],
    /// Route `rto_min`, ms.
    pub rto_min_ms: u64,
}

impl Candidate {
    fn overrides(&self) -> Vec<String> {
        let w = self.tcp_wmem;
        vec![
            format!("flows.cc={}", self.cc),
            format!("flows.init_cwnd={}", self.init_cwnd),
            format!("hosts.pacing={}", self.pacing),
            format!("hosts.tcp_wmem={} {} {}", w[0], w[1], w[2]),
            format!("hosts.rto_min={}ms", self.rto_min_ms),
        ]
    }

    pub fn label(&self) -> String {
        format!(
            "{:<6} iw {:<3} {:<8} wmem {:<8} rto_min {:>3}ms",
            self.cc,
            self.init_cwnd,
            if self.pacing { "paced" } else { "unpaced" },
            cclab_report::units::size(self.tcp_wmem[2] as f64),
            self.rto_min_ms
        )
    }

    /// How many settings differ from `base` (ties rank the simpler change first).
    fn changes(&self, base: &Candidate) -> usize {
        [
            self.cc != base.cc,
            self.init_cwnd != base.init_cwnd,
            self.pacing != base.pacing,
            self.tcp_wmem != base.tcp_wmem,
            self.rto_min_ms != base.rto_min_ms,
        ]
        .iter()
        .filter(|&&x| x)
        .count()
    }

    /// The commands that apply this candidate on a Linux server (as root), for what differs
    /// from `base`.
    pub fn commands(&self, base: &Candidate) -> Vec<String> {
        let mut c = Vec::new();
        if self.cc != base.cc {
            c.push(format!(
                "sysctl -w net.ipv4.tcp_congestion_control={}{}",
                self.cc,
                if self.cc == "reno" || self.cc == "cubic" {
                    String::new()
                } else {
                    format!("    # modprobe tcp_{} first where it is a module", self.cc)
                }
            ));
        }
        if self.tcp_wmem != base.tcp_wmem {
            let w = self.tcp_wmem;
            c.push(format!(
                "sysctl -w net.ipv4.tcp_wmem=\"{} {} {}\"",
                w[0], w[1], w[2]
            ));
        }
        let mut route = Vec::new();
        if self.init_cwnd != base.init_cwnd {
            route.push(format!("initcwnd {}", self.init_cwnd));
        }
        if self.rto_min_ms != base.rto_min_ms {
            route.push(format!("rto_min {}ms", self.rto_min_ms));
        }
        if !route.is_empty() {
            c.push(format!(
                "ip route change $(ip -4 route show default | head -n1) {}",
                route.join(" ")
            ));
        }
        if self.pacing && !base.pacing && self.cc != "bbr" {
            c.push("tc qdisc replace dev DEV root fq    # DEV: the interface toward the clients; fq paces every flow".into());
        }
        c
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
}

/// A candidate with its predicted (and, with `verify`, measured) value.
#[derive(Clone, Debug, Serialize)]
pub struct Scored {
    pub candidate: Candidate,
    /// The objective's value on the simulator (seconds, bit/s or ms).
    pub predicted: f64,
    /// Gain over the current setting on the simulator (+0.4 = 40% better).
    pub predicted_gain: f64,
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
    pub current: Scored,
    /// Best first.
    pub ranked: Vec<Scored>,
}

fn mib(n: u64) -> u64 {
    n << 20
}

/// Rank every candidate for the scenario at `path`.
pub fn advise(path: &str, opts: &AdviseOptions) -> Result<Advice, Error> {
    let mut base_overrides = opts.overrides.clone();
    base_overrides.extend(opts.objective.overrides());
    let ropts = |overrides: Vec<String>, backend: &str| RunOptions {
        backend: backend.into(),
        overrides,
        repeat: opts.repeat.max(1),
        jobs: opts.jobs,
        progress: opts.progress,
        ..RunOptions::default()
    };
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
    let mut grid = vec![current.clone()];
    let w = current.tcp_wmem;
    // (The external controller is driven from outside: nothing to recommend.)
    let ccs = cclab_core::cc::CONTROLLERS.iter().map(|c| c.name);
    for cc in ccs.filter(|&c| c != cclab_core::cc::external::CONTROLLER.name) {
        for iw in [10, 20, 40] {
            for pacing in [false, true] {
                for wmax in [w[2], mib(16), mib(64)] {
                    for rto in [current.rto_min_ms, 50] {
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
    let obj = opts.objective;
    let mut scored: Vec<(Candidate, f64)> = grid
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
    scored.sort_by_key(|(c, v)| (key(*v), c.changes(&current)));
    let mk = |c: &Candidate, v: f64| Scored {
        candidate: c.clone(),
        predicted: v,
        predicted_gain: obj.gain(base, v),
        measured: None,
        measured_gain: None,
    };
    let mut current_s = mk(&current, base);
    let mut ranked: Vec<Scored> = scored.iter().map(|(c, v)| mk(c, *v)).collect();
    if opts.verify {
        let mut which: Vec<Candidate> =
            ranked.iter().take(3).map(|s| s.candidate.clone()).collect();
        which.push(current.clone());
        let mut kplans = Vec::new();
        for c in &which {
            let mut o = base_overrides.clone();
            o.extend(c.overrides());
            kplans.push(plan(path, &ropts(o, "kernel"))?);
        }
        let kdocs = execute(&kplans, &ropts(Vec::new(), "kernel"))?;
        let measured: Vec<Option<f64>> = kdocs.iter().map(|d| obj.score(d)).collect();
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
        }
    }
    Ok(Advice {
        scenario: first.name.clone(),
        objective: obj.name(),
        lower_is_better: obj.lower_is_better(),
        candidates: grid.len(),
        runs,
        current: current_s,
        ranked,
    })
}

/// The advice for a person: the current setting, the top `top`, and the commands for the
/// best.
pub fn text(a: &Advice, obj: Objective, top: usize) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let better = if a.lower_is_better { "lower" } else { "higher" };
    let _ = writeln!(
        s,
        "advise: {}, objective {} ({better} is better), {} settings, {} simulator runs",
        a.scenario, a.objective, a.candidates, a.runs
    );
    let verified = a.current.measured.is_some();
    let _ = writeln!(
        s,
        "current: {}  ->  {}{}",
        a.current.candidate.label(),
        obj.fmt(a.current.predicted),
        a.current
            .measured
            .map(|m| format!(" (kernel {})", obj.fmt(m)))
            .unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "  #  {:<48} {:>10} {:>8}{}",
        "setting",
        "predicted",
        "gain",
        if verified { "   kernel     gain" } else { "" }
    );
    for (i, r) in a.ranked.iter().take(top).enumerate() {
        let _ = write!(
            s,
            "{:>3}  {:<48} {:>10} {:>+7.0}%",
            i + 1,
            r.candidate.label(),
            obj.fmt(r.predicted),
            r.predicted_gain * 100.0
        );
        if let (Some(m), Some(g)) = (r.measured, r.measured_gain) {
            let _ = write!(s, " {:>9} {:>+7.0}%", obj.fmt(m), g * 100.0);
        }
        s.push('\n');
    }
    if let Some(best) = a.ranked.first() {
        let cmds = best.candidate.commands(&a.current.candidate);
        if best.predicted_gain <= 0.0 || cmds.is_empty() {
            let _ = writeln!(s, "the current setting is already the best of those tried");
        } else {
            let _ = writeln!(
                s,
                "apply #1 on a Linux server (as root; predicted {:+.0}%):",
                best.predicted_gain * 100.0
            );
            for c in cmds {
                let _ = writeln!(s, "  {c}");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objectives_parse_and_compare() {
        assert_eq!(Objective::parse("fct:640kb"), Ok(Objective::Fct(640_000)));
        assert_eq!(Objective::parse("goodput"), Ok(Objective::Goodput));
        assert!(Objective::parse("fast").unwrap_err().contains("fct:SIZE"));
        assert!(Objective::parse("fct:0kb").is_err());
        // A completion time half as long is a 100% gain; 10% more goodput is 10%.
        assert!((Objective::Fct(1).gain(2.0, 1.0) - 1.0).abs() < 1e-9);
        assert!((Objective::Goodput.gain(100.0, 110.0) - 0.1).abs() < 1e-9);
    }

    #[test]
    fn commands_name_only_what_changes() {
        let base = Candidate {
            cc: "cubic".into(),
            init_cwnd: 10,
            pacing: false,
            tcp_wmem: [4096, 16384, 4194304],
            rto_min_ms: 200,
        };
        assert!(base.commands(&base).is_empty());
        let c = Candidate {
            cc: "bbr".into(),
            init_cwnd: 20,
            rto_min_ms: 50,
            ..base.clone()
        };
        let cmds = c.commands(&base);
        assert_eq!(cmds.len(), 2, "{cmds:?}");
        assert!(cmds[0].starts_with("sysctl -w net.ipv4.tcp_congestion_control=bbr"));
        assert!(cmds[1].contains("initcwnd 20 rto_min 50ms"));
    }
}
