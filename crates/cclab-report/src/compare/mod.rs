//! `cclab compare A B`: the runs two sets of results share, metric by metric.
//!
//! Runs match on what they ran, not only on their swept keys: first on (scenario, resolved
//! scenario values, seed), then on (scenario, resolved values) with another seed, then on
//! (scenario, swept params) alone, in order. A pair of the last kind ran different setups
//! (a 200-packet against a 1-BDP buffer): its setup differences are listed before any metric.
//! Flows match by id.
//!
//! The text puts the setup differences first, then the verdict per matrix point and
//! controller ([`verdict`]: medians over seeds, B's shift from A with its 95% interval,
//! significant or not); with `--all`, a summary line per pair of runs (per seed: goodput,
//! retransmits, RTT p50/p99, utilisation, Jain) and every metric of every pair. A run that
//! measured a real path (backend "host") has no link metrics: its link is unknown. Differences
//! of rates, times and counts are relative, `(B - A) / |A|`; differences of percentages and
//! ratios (utilisation, retransmit ratio) are in percentage points; Jain's index differs by
//! its plain difference.

mod shift;
pub mod verdict;

use crate::units;
use cclab_results::metrics::{
    self, MetricDef, When, GOODPUT, JAIN, LINK_UTILIZATION, RETRANSMITS, RTT_P50, RTT_P99,
    TOTAL_GOODPUT,
};
use cclab_results::{FlowResult, ResultsDoc, RunResult};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// How a metric is shown: the kind in the metrics table.
pub use cclab_results::metrics::Kind;

#[derive(Clone, Debug)]
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub a: f64,
    pub b: f64,
}

impl Metric {
    /// B - A in percentage points, for shares and ratios ([`Kind::Ratio`]); None otherwise.
    pub fn diff_pp(&self) -> Option<f64> {
        (self.kind == Kind::Ratio && self.a.is_finite() && self.b.is_finite())
            .then_some((self.b - self.a) * 100.0)
    }

    /// (B - A) / |A| in percent; 0 when both are 0; None when only A is 0.
    pub fn diff_pct(&self) -> Option<f64> {
        if self.a == self.b {
            Some(0.0)
        } else if self.a == 0.0 || !self.a.is_finite() || !self.b.is_finite() {
            None
        } else {
            Some((self.b - self.a) / self.a.abs() * 100.0)
        }
    }
}

#[derive(Clone, Debug)]
pub struct FlowPair {
    pub id: u32,
    pub cc_a: String,
    pub cc_b: String,
    pub metrics: Vec<Metric>,
}

#[derive(Clone, Debug)]
pub struct RunPair {
    pub scenario: String,
    pub params: Map<String, Value>,
    pub seed_a: u64,
    pub seed_b: u64,
    pub run_a: usize,
    pub run_b: usize,
    pub flows: Vec<FlowPair>,
    /// Flow ids present on one side only.
    pub flows_only_a: Vec<u32>,
    pub flows_only_b: Vec<u32>,
    pub run: Vec<Metric>,
    /// How the pair was matched.
    pub matched: Match,
    /// Scenario values (after defaults and overrides) and backend settings that differ.
    pub setup: Vec<SetupDiff>,
}

/// How a pair of runs was matched.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Match {
    /// Same scenario values and seed.
    #[default]
    Same,
    /// Same scenario values, another seed.
    OtherSeed,
    /// Same scenario and swept params, but other scenario values: see the setup differences.
    OtherSetup,
}

/// One scenario value or backend setting that differs between the runs of a pair.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupDiff {
    pub key: String,
    /// The value as a person reads it; "-" when the run lacks the key.
    pub a: String,
    pub b: String,
}

#[derive(Clone, Debug, Default)]
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub backend_a: String,
    pub backend_b: String,
    pub pairs: Vec<RunPair>,
    /// Runs without a partner: "scenario #k (params, seed s)".
    pub only_a: Vec<String>,
    pub only_b: Vec<String>,
    /// Where the documents' scenarios came from, when that differs (file, SHA-256, overrides).
    pub source: Vec<SetupDiff>,
    /// Per matrix point and controller: medians over seeds and B's shift from A.
    pub points: Vec<verdict::Point>,
    /// The steady-state rows' start (`--from`), seconds: the points have rows "... from T".
    pub from_s: Option<f64>,
}

impl Comparison {
    /// Add the steady-state rows (figures over the time-series bins from `from_s` on) to
    /// every point; `a` and `b` are the documents compared, with their series.
    pub fn add_steady(&mut self, a: &[ResultsDoc], b: &[ResultsDoc], from_s: f64) {
        verdict::add_steady(&mut self.points, a, b, from_s);
        self.from_s = Some(from_s);
    }
}

/// One metric of a pair, named and kinded as in the metrics table.
fn pair(m: &MetricDef, a: f64, b: f64) -> Metric {
    Metric {
        name: m.name,
        kind: m.kind,
        a,
        b,
    }
}

/// The flows' metrics, in the table's order: ECN's when either flow saw ECN, the FCT when
/// both completed.
fn flow_metrics(a: &FlowResult, b: &FlowResult) -> Vec<Metric> {
    let ecn = a.ce_marks + b.ce_marks + a.cwr_events + b.cwr_events > 0;
    metrics::ALL
        .iter()
        .filter(|m| m.when != When::Ecn || ecn)
        .filter_map(|m| Some(pair(m, m.of_flow(a)?, m.of_flow(b)?)))
        .collect()
}

/// The run's metrics, in the table's order; the link's only when both runs' links are known
/// (`links`: neither measured a real path, whose link fields are unknown, not zero), those
/// that count what may not happen (CE marks) only when either run has some.
fn run_metrics(a: &RunResult, b: &RunResult, links: bool) -> Vec<Metric> {
    metrics::ALL
        .iter()
        .filter(|m| links || !m.is_link())
        .filter_map(|m| {
            let (x, y) = (m.of_run(a)?, m.of_run(b)?);
            (m.when != When::Nonzero || x != 0.0 || y != 0.0).then(|| pair(m, x, y))
        })
        .collect()
}

fn params_label(p: &Map<String, Value>) -> String {
    if p.is_empty() {
        return "(no swept params)".into();
    }
    p.iter()
        .map(|(k, v)| format!("{k}={}", units::param(k, v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A run's scenario values without its seed: what "the same setup" means.
fn setup_of(r: &RunResult) -> Map<String, Value> {
    let mut m = r.resolved.clone();
    m.remove("seed");
    m
}

fn show_value(key: &str, v: Option<&Value>) -> String {
    match v {
        None => "-".into(),
        Some(Value::Null) => "none".into(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => units::param(key, v),
    }
}

/// The scenario values, then the backend settings both runs have, that differ.
fn setup_diffs(a: &RunResult, b: &RunResult) -> Vec<SetupDiff> {
    let (sa, sb) = (setup_of(a), setup_of(b));
    let mut keys: Vec<&String> = sa.keys().chain(sb.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut v: Vec<SetupDiff> = keys
        .into_iter()
        .filter(|k| sa.get(*k) != sb.get(*k))
        .map(|k| SetupDiff {
            key: k.clone(),
            a: show_value(k, sa.get(k)),
            b: show_value(k, sb.get(k)),
        })
        .collect();
    // Settings of another backend are another backend's, not a difference of setup.
    for (k, x) in &a.settings {
        if let Some(y) = b.settings.get(k).filter(|y| *y != x) {
            v.push(SetupDiff {
                key: k.clone(),
                a: show_value(k, Some(x)),
                b: show_value(k, Some(y)),
            });
        }
    }
    v
}

/// Where the scenarios of each name came from, when A's and B's differ.
fn source_diffs(a: &[ResultsDoc], b: &[ResultsDoc]) -> Vec<SetupDiff> {
    let mut v = Vec::new();
    for da in a {
        let Some(db) = b.iter().find(|d| d.scenario == da.scenario) else {
            continue;
        };
        let (Some(x), Some(y)) = (&da.source, &db.source) else {
            continue;
        };
        let name = |what: &str| {
            if a.len() > 1 {
                format!("{} {what}", da.scenario)
            } else {
                what.to_string()
            }
        };
        if x.sha256 != y.sha256 {
            let short = |h: &str| h.chars().take(12).collect::<String>();
            v.push(SetupDiff {
                key: name("scenario file"),
                a: format!("{} (sha256 {})", x.file, short(&x.sha256)),
                b: format!("{} (sha256 {})", y.file, short(&y.sha256)),
            });
        }
        if x.overrides != y.overrides {
            let list = |o: &[String]| {
                if o.is_empty() {
                    "none".to_string()
                } else {
                    o.join(" ")
                }
            };
            v.push(SetupDiff {
                key: name("--set overrides"),
                a: list(&x.overrides),
                b: list(&y.overrides),
            });
        }
    }
    v
}

/// Pair the runs of two sets of documents.
pub fn compare(a: &[ResultsDoc], b: &[ResultsDoc], label_a: &str, label_b: &str) -> Comparison {
    let ra = flat_docs(a);
    let rb = flat_docs(b);
    let sa: Vec<Map<String, Value>> = ra.iter().map(|x| setup_of(x.2)).collect();
    let sb: Vec<Map<String, Value>> = rb.iter().map(|y| setup_of(y.2)).collect();
    let mut used_b = vec![false; rb.len()];
    let mut partner: Vec<Option<(usize, Match)>> = vec![None; ra.len()];
    // Same setup and seed first, then same setup with another seed, then same swept params.
    for how in [Match::Same, Match::OtherSeed, Match::OtherSetup] {
        for (i, x) in ra.iter().enumerate() {
            if partner[i].is_some() {
                continue;
            }
            let found = rb.iter().enumerate().position(|(j, y)| {
                !used_b[j]
                    && y.0 == x.0
                    && match how {
                        Match::Same => sb[j] == sa[i] && y.2.seed == x.2.seed,
                        Match::OtherSeed => sb[j] == sa[i],
                        Match::OtherSetup => y.2.params == x.2.params,
                    }
            });
            if let Some(j) = found {
                used_b[j] = true;
                partner[i] = Some((j, how));
            }
        }
    }
    let name = |r: &(&str, usize, &RunResult, bool)| {
        format!(
            "{} #{} ({}, seed {})",
            r.0,
            r.1 + 1,
            params_label(&r.2.params),
            r.2.seed
        )
    };
    let mut c = Comparison {
        a: label_a.to_string(),
        b: label_b.to_string(),
        backend_a: join_backends(a),
        backend_b: join_backends(b),
        source: source_diffs(a, b),
        points: verdict::points(a, b),
        ..Default::default()
    };
    for (i, x) in ra.iter().enumerate() {
        let Some((j, matched)) = partner[i] else {
            c.only_a.push(name(x));
            continue;
        };
        let y = &rb[j];
        let mut p = RunPair {
            scenario: x.0.to_string(),
            params: x.2.params.clone(),
            seed_a: x.2.seed,
            seed_b: y.2.seed,
            run_a: x.1,
            run_b: y.1,
            flows: Vec::new(),
            flows_only_a: Vec::new(),
            flows_only_b: Vec::new(),
            run: run_metrics(x.2, y.2, x.3 && y.3),
            matched,
            setup: setup_diffs(x.2, y.2),
        };
        for fa in &x.2.flows {
            match y.2.flows.iter().find(|f| f.id == fa.id) {
                Some(fb) => p.flows.push(FlowPair {
                    id: fa.id,
                    cc_a: fa.cc.clone(),
                    cc_b: fb.cc.clone(),
                    metrics: flow_metrics(fa, fb),
                }),
                None => p.flows_only_a.push(fa.id),
            }
        }
        for fb in &y.2.flows {
            if !x.2.flows.iter().any(|f| f.id == fb.id) {
                p.flows_only_b.push(fb.id);
            }
        }
        c.pairs.push(p);
    }
    for (j, y) in rb.iter().enumerate() {
        if !used_b[j] {
            c.only_b.push(name(y));
        }
    }
    c
}

/// Every run of the documents: (scenario, index, run, whether its link is known).
fn flat_docs(docs: &[ResultsDoc]) -> Vec<(&str, usize, &RunResult, bool)> {
    docs.iter()
        .flat_map(|d| {
            let link = crate::host::link_known(d);
            d.runs
                .iter()
                .enumerate()
                .map(move |(i, r)| (d.scenario.as_str(), i, r, link))
        })
        .collect()
}

fn join_backends(d: &[ResultsDoc]) -> String {
    let mut v: Vec<&str> = d.iter().map(|d| d.backend.as_str()).collect();
    v.dedup();
    v.join(",")
}

fn fmt_diff(m: &Metric) -> String {
    if let Some(pp) = m.diff_pp() {
        return if pp == 0.0 {
            "0 pp".into()
        } else if pp.abs() < 0.005 {
            format!("{}<0.01 pp", if pp < 0.0 { "-" } else { "+" })
        } else {
            format!("{pp:+.2} pp")
        };
    }
    if m.kind == Kind::Plain {
        return format!("{:+.3}", m.b - m.a);
    }
    match m.diff_pct() {
        Some(0.0) => "0%".into(),
        Some(d) if d.abs() < 0.05 => format!("{}<0.1%", if d < 0.0 { "-" } else { "+" }),
        Some(d) if d.abs() >= 100.0 => format!("{d:+.0}%"),
        Some(d) => format!("{d:+.1}%"),
        None => "n/a (A=0)".into(),
    }
}

/// "A → B diff" in one cell; the unit once, after B, where both share it.
fn cell(m: &Metric) -> String {
    let (a, b) = (units::of(m.kind, m.a), units::of(m.kind, m.b));
    let a = match (a.rsplit_once(' '), b.rsplit_once(' ')) {
        (Some((x, ua)), Some((_, ub))) if ua == ub => x.to_string(),
        _ => a,
    };
    format!("{a} → {b} {}", fmt_diff(m))
}

fn find<'a>(ms: &'a [Metric], def: &MetricDef) -> Option<&'a Metric> {
    ms.iter().find(|m| m.name == def.name)
}

/// A flow pair's controller: "cubic", or "cubic vs bbr" when they differ.
fn cc_label(f: &FlowPair) -> String {
    if f.cc_a == f.cc_b {
        f.cc_a.clone()
    } else {
        format!("{} vs {}", f.cc_a, f.cc_b)
    }
}

/// "#1 flows.cc=cubic", with the scenario's name first when the comparison has several.
fn pair_label(p: &RunPair, with_scenario: bool) -> String {
    let mut s = if with_scenario {
        format!("{} #{}", p.scenario, p.run_a + 1)
    } else {
        format!("#{}", p.run_a + 1)
    };
    if p.run_b != p.run_a {
        s.push_str(&format!("/#{}", p.run_b + 1));
    }
    if !p.params.is_empty() {
        s.push(' ');
        s.push_str(&params_label(&p.params));
    }
    s
}

/// Rows of text, columns aligned (the first left, the rest right).
fn aligned(o: &mut String, rows: &[Vec<String>], indent: &str) {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let right: Vec<bool> = (0..n).map(|i| i > 0).collect();
    crate::table::layout(o, rows, &right, indent);
}

/// The comparison as text: setup differences, a summary row per shared flow, then (with
/// `all`) every metric of every pair.
pub fn render_text(c: &Comparison, all: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "A: {} ({} backend)", c.a, c.backend_a);
    let _ = writeln!(o, "B: {} ({} backend)", c.b, c.backend_b);
    let other_seed = c
        .pairs
        .iter()
        .filter(|p| p.matched == Match::OtherSeed)
        .count();
    let other_setup = c
        .pairs
        .iter()
        .filter(|p| p.matched == Match::OtherSetup)
        .count();
    let mut how = Vec::new();
    if other_seed > 0 {
        how.push(format!(
            "{other_seed} matched by their setup with other seeds"
        ));
    }
    if other_setup > 0 {
        how.push(format!(
            "{other_setup} matched by swept params only: their setups differ"
        ));
    }
    let _ = writeln!(
        o,
        "{} shared run{}{}",
        c.pairs.len(),
        if c.pairs.len() == 1 { "" } else { "s" },
        if how.is_empty() {
            String::new()
        } else {
            format!(" ({})", how.join("; "))
        }
    );
    // What differs in the setup, before any figure: each difference once, with the pairs it
    // applies to.
    let mut diffs: Vec<(&SetupDiff, Vec<usize>)> = Vec::new();
    for (i, p) in c.pairs.iter().enumerate() {
        for d in &p.setup {
            match diffs.iter_mut().find(|(x, _)| *x == d) {
                Some((_, v)) => v.push(i),
                None => diffs.push((d, vec![i])),
            }
        }
    }
    if !c.source.is_empty() || !diffs.is_empty() {
        let _ = writeln!(o, "\nsetup differences (A → B):");
        let mut rows: Vec<Vec<String>> = c
            .source
            .iter()
            .map(|d| vec![d.key.clone(), format!("{} → {}", d.a, d.b), String::new()])
            .collect();
        for (d, pairs) in &diffs {
            let which = if pairs.len() == c.pairs.len() {
                if c.pairs.len() == 1 {
                    String::new()
                } else {
                    "every pair".into()
                }
            } else {
                let names: Vec<String> = pairs
                    .iter()
                    .map(|&i| format!("#{}", c.pairs[i].run_a + 1))
                    .collect();
                format!("runs {}", names.join(", "))
            };
            rows.push(vec![d.key.clone(), format!("{} → {}", d.a, d.b), which]);
        }
        // Left-aligned throughout: these are words, not figures. The second column's width is
        // of the rows with a third (a long `--set overrides` row, which has none, does not
        // push "every pair" off the screen).
        let w0 = rows.iter().map(|r| r[0].chars().count()).max().unwrap_or(0);
        let w1 = rows
            .iter()
            .filter(|r| !r[2].is_empty())
            .map(|r| r[1].chars().count())
            .max()
            .unwrap_or(0);
        for r in rows {
            let line = format!("  {:<w0$}  {:<w1$}  {}", r[0], r[1], r[2]);
            let _ = writeln!(o, "{}", line.trim_end());
        }
    }
    let several = c.pairs.iter().any(|p| p.scenario != c.pairs[0].scenario);
    verdict::render(&mut o, &c.points, several);
    if let Some(t) = c.from_s {
        let _ = writeln!(
            o,
            "\n\"from T\": over the time-series bins from T = {} on (steady state, without the start-up; \
             srtt p99 is of the smoothed RTT at each bin's end, queue delay p99 of each bin's mean sojourn; \
             runs without series have no such rows)",
            units::secs(t)
        );
    }
    if all && !c.pairs.is_empty() {
        // No utilisation column when no pair knows its link (real paths).
        let util = c
            .pairs
            .iter()
            .any(|p| find(&p.run, &LINK_UTILIZATION).is_some());
        let _ = writeln!(
            o,
            "\nper-seed summary (A → B; rates, times and counts change in %, {}Jain by difference):",
            if util {
                "utilisation in percentage points, "
            } else {
                ""
            }
        );
        let mut rows: Vec<Vec<String>> = vec![[
            "run / flow",
            GOODPUT.name,
            RETRANSMITS.name,
            RTT_P50.name,
            RTT_P99.name,
            "utilisation",
            JAIN.name,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()];
        for p in &c.pairs {
            let run_cells = |def: &MetricDef| find(&p.run, def).map(cell).unwrap_or_default();
            let mut first = true;
            for f in &p.flows {
                let cc = cc_label(f);
                let label = if first {
                    format!("{}  flow {} {cc}", pair_label(p, several), f.id)
                } else {
                    format!(
                        "{}  flow {} {cc}",
                        " ".repeat(pair_label(p, several).chars().count()),
                        f.id
                    )
                };
                let m = |def: &MetricDef| find(&f.metrics, def).map(cell).unwrap_or_default();
                rows.push(vec![
                    label,
                    m(&GOODPUT),
                    m(&RETRANSMITS),
                    m(&RTT_P50),
                    m(&RTT_P99),
                    if first {
                        run_cells(&LINK_UTILIZATION)
                    } else {
                        String::new()
                    },
                    if first {
                        run_cells(&JAIN)
                    } else {
                        String::new()
                    },
                ]);
                first = false;
            }
            if p.flows.is_empty() {
                rows.push(vec![
                    pair_label(p, several),
                    run_cells(&TOTAL_GOODPUT),
                    String::new(),
                    String::new(),
                    String::new(),
                    run_cells(&LINK_UTILIZATION),
                    run_cells(&JAIN),
                ]);
            }
        }
        if !util {
            for r in &mut rows {
                r.remove(5);
            }
        }
        aligned(&mut o, &rows, "  ");
    }
    if all {
        for p in &c.pairs {
            o.push('\n');
            let seeds = if p.seed_a == p.seed_b {
                format!("seed {}", p.seed_a)
            } else {
                format!("seed A {} / B {} (seeds differ)", p.seed_a, p.seed_b)
            };
            let _ = writeln!(
                o,
                "{}  {}  {}  (A #{}, B #{})",
                p.scenario,
                params_label(&p.params),
                seeds,
                p.run_a + 1,
                p.run_b + 1
            );
            for d in &p.setup {
                let _ = writeln!(o, "  setup: {} {} → {}", d.key, d.a, d.b);
            }
            let mut rows: Vec<Vec<String>> =
                vec![vec!["metric".into(), "A".into(), "B".into(), "diff".into()]];
            for f in &p.flows {
                let cc = cc_label(f);
                for m in &f.metrics {
                    rows.push(vec![
                        format!("flow {} {cc} {}", f.id, m.name),
                        units::of(m.kind, m.a),
                        units::of(m.kind, m.b),
                        fmt_diff(m),
                    ]);
                }
            }
            for m in &p.run {
                rows.push(vec![
                    format!("run {}", m.name),
                    units::of(m.kind, m.a),
                    units::of(m.kind, m.b),
                    fmt_diff(m),
                ]);
            }
            aligned(&mut o, &rows, "  ");
            if !p.flows_only_a.is_empty() || !p.flows_only_b.is_empty() {
                let _ = writeln!(
                    o,
                    "  flows only in A: {:?}, only in B: {:?}",
                    p.flows_only_a, p.flows_only_b
                );
            }
        }
    } else if !c.pairs.is_empty() {
        let _ = writeln!(
            o,
            "\nper-seed rows and every metric of every run (throughput, queue delay p95, drops by cause...): cclab compare --all A B"
        );
    }
    if !c.only_a.is_empty() {
        let _ = writeln!(o, "\nonly in A ({}):", c.only_a.len());
        for s in &c.only_a {
            let _ = writeln!(o, "  {s}");
        }
    }
    if !c.only_b.is_empty() {
        let _ = writeln!(o, "\nonly in B ({}):", c.only_b.len());
        for s in &c.only_b {
            let _ = writeln!(o, "  {s}");
        }
    }
    o
}

fn metrics_json(ms: &[Metric]) -> Value {
    let mut m = Map::new();
    for x in ms {
        m.insert(
            x.name.replace(' ', "_"),
            match x.diff_pp() {
                Some(pp) => json!({"a": x.a, "b": x.b, "diff_pct": x.diff_pct(), "diff_pp": pp}),
                None => json!({"a": x.a, "b": x.b, "diff_pct": x.diff_pct()}),
            },
        );
    }
    Value::Object(m)
}

fn setup_json(d: &[SetupDiff]) -> Value {
    Value::from(
        d.iter()
            .map(|d| json!({"key": d.key, "a": d.a, "b": d.b}))
            .collect::<Vec<_>>(),
    )
}

/// The comparison for scripts: `{a, b, source, shared: [{scenario, params, seed_a, seed_b,
/// matched, setup: [{key, a, b}], flows: [{id, cc_a, cc_b, metrics: {goodput: {a, b,
/// diff_pct}, retrans_ratio: {..., diff_pp}, ...}}], run: {...}}], only_a, only_b}`.
pub fn to_json(c: &Comparison) -> Value {
    json!({
        "a": c.a,
        "b": c.b,
        "backend_a": c.backend_a,
        "backend_b": c.backend_b,
        "source": setup_json(&c.source),
        "shared": c.pairs.iter().map(|p| json!({
            "scenario": p.scenario,
            "params": p.params,
            "seed_a": p.seed_a,
            "seed_b": p.seed_b,
            "run_a": p.run_a + 1,
            "run_b": p.run_b + 1,
            "matched": match p.matched {
                Match::Same => "same",
                Match::OtherSeed => "other_seed",
                Match::OtherSetup => "other_setup",
            },
            "setup": setup_json(&p.setup),
            "flows": p.flows.iter().map(|f| json!({"id": f.id, "cc_a": f.cc_a, "cc_b": f.cc_b, "metrics": metrics_json(&f.metrics)})).collect::<Vec<_>>(),
            "flows_only_a": p.flows_only_a,
            "flows_only_b": p.flows_only_b,
            "run": metrics_json(&p.run),
        })).collect::<Vec<_>>(),
        "only_a": c.only_a,
        "only_b": c.only_b,
        "verdict": verdict::to_json(&c.points),
        "from_s": c.from_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};

    /// A document of one run on `backend` with a link at 80% and some drops.
    fn one_run(backend: &str, goodput: f64) -> ResultsDoc {
        let r = RunBuilder::new()
            .duration(10.0)
            .flow("cubic", goodput)
            .utilization(0.8)
            .drops_buffer(12);
        DocBuilder::new()
            .scenario("perf")
            .backend(backend)
            .run(r)
            .build()
    }

    #[test]
    fn real_paths_have_no_link_metrics() {
        let c = compare(&[one_run("host", 10e6)], &[one_run("host", 12e6)], "a", "b");
        let names: Vec<&str> = c.pairs[0].run.iter().map(|m| m.name).collect();
        assert_eq!(names, ["total goodput", "jain", "duration"]);
        let t = render_text(&c, true);
        assert!(!t.contains("utili") && !t.contains("drops"), "{t}");
        assert!(t.contains("10.0 → 12.0 Mbit/s +20.0%"), "{t}");
        // One emulated link is not enough to compare links.
        let c = compare(&[one_run("sim", 10e6)], &[one_run("host", 12e6)], "a", "b");
        assert!(find(&c.pairs[0].run, &LINK_UTILIZATION).is_none());
        // Two are.
        let c = compare(
            &[one_run("sim", 10e6)],
            &[one_run("kernel", 12e6)],
            "a",
            "b",
        );
        let t = render_text(&c, false);
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with("link utilization"))
            .expect(&t);
        assert!(row.contains("80.0%  ") && row.contains("+0.00 pp"), "{t}");
        // The per-seed row only with --all.
        assert!(!t.contains("80.0% → 80.0% 0 pp"), "{t}");
        let t = render_text(&c, true);
        assert!(
            t.contains("utilisation") && t.contains("80.0% → 80.0% 0 pp"),
            "{t}"
        );
    }

    #[test]
    fn diff_percent() {
        let m = |a, b| Metric {
            name: "x",
            kind: Kind::Plain,
            a,
            b,
        };
        assert_eq!(m(100.0, 110.0).diff_pct(), Some(10.0));
        assert_eq!(m(0.0, 0.0).diff_pct(), Some(0.0));
        assert_eq!(m(0.0, 1.0).diff_pct(), None);
        assert_eq!(m(200.0, 50.0).diff_pct(), Some(-75.0));
    }

    #[test]
    fn ratios_differ_in_percentage_points_and_jain_by_difference() {
        let m = |kind, a, b| Metric {
            name: "x",
            kind,
            a,
            b,
        };
        // Utilisation 3.82% -> 4.96% is +1.14 points, not +29.8%.
        let u = m(Kind::Ratio, 0.0382, 0.0496);
        assert!((u.diff_pp().unwrap() - 1.14).abs() < 1e-9);
        assert_eq!(fmt_diff(&u), "+1.14 pp");
        assert_eq!(cell(&u), "3.82% → 4.96% +1.14 pp");
        assert_eq!(fmt_diff(&m(Kind::Plain, 0.9, 0.75)), "-0.150");
        assert_eq!(m(Kind::Rate, 1.0, 2.0).diff_pp(), None);
        assert_eq!(
            cell(&m(Kind::Rate, 10e6, 12e6)),
            "10.0 → 12.0 Mbit/s +20.0%"
        );
        assert_eq!(
            cell(&m(Kind::Rate, 900e3, 2e6)),
            "900 kbit/s → 2.00 Mbit/s +122%"
        );
    }
}
