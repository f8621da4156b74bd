//! `cclab compare A B`: the runs two sets of results share, metric by metric.
//!
//! Runs match on (scenario name, params, seed); runs left over match on (scenario, params)
//! alone, in order (so two runs of one scenario with different seeds, or a sim run and a
//! kernel run that used other seeds, still pair up; such pairs are flagged). Flows match by id.
//! The difference is `(B - A) / |A|` in percent (none when A is 0 and B is not).

use crate::units;
use cclab_results::{FlowResult, LinkResult, ResultsDoc, RunResult};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// How a metric is shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Rate,
    Ms,
    Secs,
    Ratio,
    Count,
    Bytes,
    Plain,
}

#[derive(Clone, Debug)]
pub struct Metric {
    pub name: &'static str,
    pub kind: Kind,
    pub a: f64,
    pub b: f64,
}

impl Metric {
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
}

fn flow_metrics(a: &FlowResult, b: &FlowResult) -> Vec<Metric> {
    let mut v = vec![
        Metric {
            name: "goodput",
            kind: Kind::Rate,
            a: a.goodput_bps,
            b: b.goodput_bps,
        },
        Metric {
            name: "throughput",
            kind: Kind::Rate,
            a: a.throughput_bps,
            b: b.throughput_bps,
        },
        Metric {
            name: "bytes delivered",
            kind: Kind::Bytes,
            a: a.bytes_delivered as f64,
            b: b.bytes_delivered as f64,
        },
        Metric {
            name: "retransmits",
            kind: Kind::Count,
            a: a.retransmits as f64,
            b: b.retransmits as f64,
        },
        Metric {
            name: "retrans ratio",
            kind: Kind::Ratio,
            a: a.retrans_ratio,
            b: b.retrans_ratio,
        },
        Metric {
            name: "segments sent",
            kind: Kind::Count,
            a: a.segments_sent as f64,
            b: b.segments_sent as f64,
        },
        Metric {
            name: "rto count",
            kind: Kind::Count,
            a: a.rto_count as f64,
            b: b.rto_count as f64,
        },
        Metric {
            name: "rtt min",
            kind: Kind::Ms,
            a: a.rtt_ms.min,
            b: b.rtt_ms.min,
        },
        Metric {
            name: "rtt p50",
            kind: Kind::Ms,
            a: a.rtt_ms.p50,
            b: b.rtt_ms.p50,
        },
        Metric {
            name: "rtt p95",
            kind: Kind::Ms,
            a: a.rtt_ms.p95,
            b: b.rtt_ms.p95,
        },
        Metric {
            name: "rtt p99",
            kind: Kind::Ms,
            a: a.rtt_ms.p99,
            b: b.rtt_ms.p99,
        },
    ];
    if a.ce_marks + b.ce_marks + a.cwr_events + b.cwr_events > 0 {
        v.push(Metric {
            name: "ce marks",
            kind: Kind::Count,
            a: a.ce_marks as f64,
            b: b.ce_marks as f64,
        });
        v.push(Metric {
            name: "cwr events",
            kind: Kind::Count,
            a: a.cwr_events as f64,
            b: b.cwr_events as f64,
        });
    }
    if let (Some(x), Some(y)) = (a.fct_s, b.fct_s) {
        v.push(Metric {
            name: "fct",
            kind: Kind::Secs,
            a: x,
            b: y,
        });
    }
    v
}

fn run_metrics(a: &RunResult, b: &RunResult) -> Vec<Metric> {
    let (la, lb): (&LinkResult, &LinkResult) = (&a.link, &b.link);
    let total = |r: &RunResult| r.flows.iter().map(|f| f.goodput_bps).sum::<f64>();
    let mut v = vec![
        Metric {
            name: "total goodput",
            kind: Kind::Rate,
            a: total(a),
            b: total(b),
        },
        Metric {
            name: "link utilization",
            kind: Kind::Ratio,
            a: la.utilization,
            b: lb.utilization,
        },
        Metric {
            name: "queue delay p50",
            kind: Kind::Ms,
            a: la.queue_delay_ms.p50,
            b: lb.queue_delay_ms.p50,
        },
        Metric {
            name: "queue delay p95",
            kind: Kind::Ms,
            a: la.queue_delay_ms.p95,
            b: lb.queue_delay_ms.p95,
        },
        Metric {
            name: "queue delay p99",
            kind: Kind::Ms,
            a: la.queue_delay_ms.p99,
            b: lb.queue_delay_ms.p99,
        },
        Metric {
            name: "drops buffer",
            kind: Kind::Count,
            a: la.drops_buffer as f64,
            b: lb.drops_buffer as f64,
        },
        Metric {
            name: "drops random",
            kind: Kind::Count,
            a: la.drops_random as f64,
            b: lb.drops_random as f64,
        },
        Metric {
            name: "drops ack",
            kind: Kind::Count,
            a: la.drops_ack as f64,
            b: lb.drops_ack as f64,
        },
        Metric {
            name: "drops aqm",
            kind: Kind::Count,
            a: la.drops_aqm as f64,
            b: lb.drops_aqm as f64,
        },
        Metric {
            name: "drops policer",
            kind: Kind::Count,
            a: la.drops_policer as f64,
            b: lb.drops_policer as f64,
        },
        Metric {
            name: "forwarded packets",
            kind: Kind::Count,
            a: la.forwarded_pkts as f64,
            b: lb.forwarded_pkts as f64,
        },
        Metric {
            name: "jain",
            kind: Kind::Plain,
            a: a.jain,
            b: b.jain,
        },
        Metric {
            name: "duration",
            kind: Kind::Secs,
            a: a.duration_s,
            b: b.duration_s,
        },
    ];
    if la.marks + lb.marks > 0 {
        v.push(Metric {
            name: "ce marks (link)",
            kind: Kind::Count,
            a: la.marks as f64,
            b: lb.marks as f64,
        });
    }
    v
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

/// Pair the runs of two sets of documents.
pub fn compare(a: &[ResultsDoc], b: &[ResultsDoc], label_a: &str, label_b: &str) -> Comparison {
    let ra = flat_docs(a);
    let rb = flat_docs(b);
    let mut used_b = vec![false; rb.len()];
    let mut partner: Vec<Option<usize>> = vec![None; ra.len()];
    // Exact matches first, then same params with another seed.
    for pass in 0..2 {
        for (i, x) in ra.iter().enumerate() {
            if partner[i].is_some() {
                continue;
            }
            let found = rb.iter().enumerate().position(|(j, y)| {
                !used_b[j]
                    && y.0 == x.0
                    && y.2.params == x.2.params
                    && (pass == 1 || y.2.seed == x.2.seed)
            });
            if let Some(j) = found {
                used_b[j] = true;
                partner[i] = Some(j);
            }
        }
    }
    let name = |r: &(&str, usize, &RunResult)| {
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
        ..Default::default()
    };
    for (i, x) in ra.iter().enumerate() {
        let Some(j) = partner[i] else {
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
            run: run_metrics(x.2, y.2),
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

fn flat_docs(docs: &[ResultsDoc]) -> Vec<(&str, usize, &RunResult)> {
    docs.iter()
        .flat_map(|d| {
            d.runs
                .iter()
                .enumerate()
                .map(move |(i, r)| (d.scenario.as_str(), i, r))
        })
        .collect()
}

fn join_backends(d: &[ResultsDoc]) -> String {
    let mut v: Vec<&str> = d.iter().map(|d| d.backend.as_str()).collect();
    v.dedup();
    v.join(",")
}

fn fmt(kind: Kind, v: f64) -> String {
    match kind {
        Kind::Rate => units::rate(v),
        Kind::Ms => units::ms(v),
        Kind::Secs => units::secs(v),
        Kind::Ratio => units::pct(v),
        Kind::Count => format!("{v:.0}"),
        Kind::Bytes => units::size(v),
        Kind::Plain => format!("{v:.3}"),
    }
}

fn fmt_diff(m: &Metric) -> String {
    match m.diff_pct() {
        Some(0.0) => "0%".into(),
        Some(d) if d.abs() < 0.05 => format!("{}<0.1%", if d < 0.0 { "-" } else { "+" }),
        Some(d) if d.abs() >= 100.0 => format!("{d:+.0}%"),
        Some(d) => format!("{d:+.1}%"),
        None => "n/a (A=0)".into(),
    }
}

/// The comparison as an aligned text table, one block per shared run.
pub fn render_text(c: &Comparison) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "A: {} ({} backend)", c.a, c.backend_a);
    let _ = writeln!(o, "B: {} ({} backend)", c.b, c.backend_b);
    let _ = writeln!(
        o,
        "{} shared run{}; difference = (B - A) / A",
        c.pairs.len(),
        if c.pairs.len() == 1 { "" } else { "s" }
    );
    for p in &c.pairs {
        o.push('\n');
        let seeds = if p.seed_a == p.seed_b {
            format!("seed {}", p.seed_a)
        } else {
            format!(
                "seed A {} / B {} (matched by params; seeds differ)",
                p.seed_a, p.seed_b
            )
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
        let mut rows: Vec<[String; 4]> =
            vec![["metric".into(), "A".into(), "B".into(), "diff".into()]];
        for f in &p.flows {
            let cc = if f.cc_a == f.cc_b {
                f.cc_a.clone()
            } else {
                format!("{} vs {}", f.cc_a, f.cc_b)
            };
            for m in &f.metrics {
                rows.push([
                    format!("flow {} {cc} {}", f.id, m.name),
                    fmt(m.kind, m.a),
                    fmt(m.kind, m.b),
                    fmt_diff(m),
                ]);
            }
        }
        for m in &p.run {
            rows.push([
                format!("run {}", m.name),
                fmt(m.kind, m.a),
                fmt(m.kind, m.b),
                fmt_diff(m),
            ]);
        }
        let w: Vec<usize> = (0..4)
            .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for r in rows {
            let _ = writeln!(
                o,
                "  {:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}",
                r[0],
                r[1],
                r[2],
                r[3],
                w0 = w[0],
                w1 = w[1],
                w2 = w[2],
                w3 = w[3]
            );
        }
        if !p.flows_only_a.is_empty() || !p.flows_only_b.is_empty() {
            let _ = writeln!(
                o,
                "  flows only in A: {:?}, only in B: {:?}",
                p.flows_only_a, p.flows_only_b
            );
        }
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
            json!({"a": x.a, "b": x.b, "diff_pct": x.diff_pct()}),
        );
    }
    Value::Object(m)
}

/// The comparison for scripts: `{a, b, shared: [{scenario, params, seed_a, seed_b, flows:
/// [{id, cc_a, cc_b, metrics: {goodput: {a, b, diff_pct}, ...}}], run: {...}}], only_a, only_b}`.
pub fn to_json(c: &Comparison) -> Value {
    json!({
        "a": c.a,
        "b": c.b,
        "backend_a": c.backend_a,
        "backend_b": c.backend_b,
        "shared": c.pairs.iter().map(|p| json!({
            "scenario": p.scenario,
            "params": p.params,
            "seed_a": p.seed_a,
            "seed_b": p.seed_b,
            "run_a": p.run_a + 1,
            "run_b": p.run_b + 1,
            "flows": p.flows.iter().map(|f| json!({"id": f.id, "cc_a": f.cc_a, "cc_b": f.cc_b, "metrics": metrics_json(&f.metrics)})).collect::<Vec<_>>(),
            "flows_only_a": p.flows_only_a,
            "flows_only_b": p.flows_only_b,
            "run": metrics_json(&p.run),
        })).collect::<Vec<_>>(),
        "only_a": c.only_a,
        "only_b": c.only_b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
