//! The terminal table.

use crate::units;
use cclab_results::{median, FlowResult, ResultsDoc, RunResult};

/// Column-aligned text table.
struct Grid {
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Grid {
    fn render(&self, out: &mut String, indent: &str) {
        let n = self.rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let mut w = vec![0; n];
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        for r in &self.rows {
            let mut line = String::from(indent);
            for (i, c) in r.iter().enumerate() {
                let pad = w[i] - c.chars().count();
                if self.right.get(i).copied().unwrap_or(false) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    line.push_str(&" ".repeat(pad));
                }
                line.push_str("  ");
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}

/// Runs with the same params (the seeds of one matrix point under `--repeat`), in order.
pub(crate) fn groups(doc: &ResultsDoc) -> Vec<Vec<&RunResult>> {
    let mut out: Vec<Vec<&RunResult>> = Vec::new();
    for r in &doc.runs {
        match out.last_mut() {
            Some(g) if g[0].params == r.params && g[0].flows.len() == r.flows.len() => g.push(r),
            _ => out.push(vec![r]),
        }
    }
    out
}

/// One value, or `median [min-max]` over seeds.
pub(crate) fn agg(mut v: Vec<f64>, fmt: impl Fn(f64) -> String) -> String {
    if v.len() == 1 {
        return fmt(v[0]);
    }
    let m = median(&mut v);
    let (ms, lo, hi) = (fmt(m), fmt(v[0]), fmt(v[v.len() - 1]));
    // "153 Mbit/s [150-172]": the range without its unit when all three share it.
    let split = |x: &str| -> (String, String) {
        if let Some(n) = x.strip_suffix('%') {
            return (n.to_string(), "%".into());
        }
        match x.rsplit_once(' ') {
            Some((n, u)) => (n.to_string(), u.to_string()),
            None => (x.to_string(), String::new()),
        }
    };
    let ((_, um), (nl, ul), (nh, uh)) = (split(&ms), split(&lo), split(&hi));
    if um == ul && um == uh {
        format!("{ms} [{nl}-{nh}]")
    } else {
        format!("{ms} [{lo}-{hi}]")
    }
}

/// Render one results document. `title` is printed above (scenario name, file, description).
/// Runs of one matrix point with several seeds (`--repeat`) are folded into one row per flow
/// showing the median and the [min-max] range.
pub fn render(doc: &ResultsDoc, title: &str) -> String {
    let mut out = String::new();
    out.push_str(title);
    out.push('\n');
    let param_keys: Vec<String> = doc
        .runs
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    let has_ref = doc.runs.iter().any(|r| {
        r.reference
            .as_ref()
            .is_some_and(|v| v.get("goodput_bps").is_some())
    });
    let has_fct = doc
        .runs
        .iter()
        .any(|r| r.flows.iter().any(|f| f.size_bytes.is_some()));
    let groups = groups(doc);
    let multi_seed = groups.iter().any(|g| g.len() > 1);
    let mut header = vec!["#".to_string()];
    header.extend(param_keys.iter().cloned());
    if multi_seed {
        header.push("seeds".into());
    }
    header.extend(["flow", "cc", "goodput"].map(String::from));
    if has_ref {
        header.push("published".into());
    }
    header.extend(["retrans", "rtt p50", "rtt p99"].map(String::from));
    if has_fct {
        header.push("fct".into());
    }
    let mut right = vec![true];
    right.extend(param_keys.iter().map(|_| false));
    if multi_seed {
        right.push(true);
    }
    right.extend([true, false, true]);
    if has_ref {
        right.push(true);
    }
    right.extend([true, true, true]);
    if has_fct {
        right.push(true);
    }
    let mut grid = Grid {
        rows: vec![header],
        right,
    };
    let mut link_lines = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let run = g[0];
        for (j, f) in run.flows.iter().enumerate() {
            let first = j == 0;
            let col = |pick: &dyn Fn(&FlowResult) -> f64| -> Vec<f64> {
                g.iter().map(|r| pick(&r.flows[j])).collect()
            };
            let mut row = vec![if first {
                (i + 1).to_string()
            } else {
                String::new()
            }];
            for k in &param_keys {
                row.push(if first {
                    units::param_in(&run.params, k)
                } else {
                    String::new()
                });
            }
            if multi_seed {
                row.push(if first {
                    g.len().to_string()
                } else {
                    String::new()
                });
            }
            row.push(f.id.to_string());
            row.push(f.cc.clone());
            row.push(agg(col(&|f| f.goodput_bps), units::rate));
            if has_ref {
                let cell = run
                    .reference
                    .as_ref()
                    .and_then(|r| {
                        let bps = r.get("goodput_bps")?.as_f64()?;
                        let unit = r.get("unit").and_then(|u| u.as_str()).unwrap_or("Mbit/s");
                        let own = units::rate_in(bps, unit);
                        let bits = units::rate(bps);
                        Some(if own.ends_with("bit/s") {
                            own
                        } else {
                            format!("{bits} ({own})")
                        })
                    })
                    .filter(|_| first)
                    .unwrap_or_default();
                row.push(cell);
            }
            if g.len() == 1 {
                row.push(format!(
                    "{} ({})",
                    f.retransmits,
                    units::pct(f.retrans_ratio)
                ));
            } else {
                row.push(agg(col(&|f| f.retrans_ratio), units::pct));
            }
            row.push(agg(col(&|f| f.rtt_ms.p50), units::ms));
            row.push(agg(col(&|f| f.rtt_ms.p99), units::ms));
            if has_fct {
                let fcts: Vec<f64> = g.iter().filter_map(|r| r.flows[j].fct_s).collect();
                row.push(if fcts.is_empty() {
                    "-".into()
                } else {
                    agg(fcts, units::secs)
                });
            }
            grid.rows.push(row);
        }
        let util: Vec<f64> = g.iter().map(|r| r.link.utilization).collect();
        let qp50: Vec<f64> = g.iter().map(|r| r.link.queue_delay_ms.p50).collect();
        let qp99: Vec<f64> = g.iter().map(|r| r.link.queue_delay_ms.p99).collect();
        let jain: Vec<f64> = g.iter().map(|r| r.jain).collect();
        let drops_b: u64 = g.iter().map(|r| r.link.drops_buffer).sum::<u64>() / g.len() as u64;
        let drops_r: u64 = g.iter().map(|r| r.link.drops_random).sum::<u64>() / g.len() as u64;
        let marks: u64 = g.iter().map(|r| r.link.marks).sum::<u64>() / g.len() as u64;
        let drops_a: u64 = g.iter().map(|r| r.link.drops_aqm).sum::<u64>() / g.len() as u64;
        let drops_p: u64 = g.iter().map(|r| r.link.drops_policer).sum::<u64>() / g.len() as u64;
        // Drops by cause: the AQM's and a policer's only where the path has one.
        let has = |key: &str| {
            g.iter()
                .any(|r| r.link.elements.contains_key(key) || r.link.queues.contains_key(key))
        };
        let aqm = g
            .first()
            .and_then(|r| r.resolved.get("link.aqm"))
            .and_then(|v| v.as_str())
            .filter(|a| *a != "droptail");
        let mut other = String::new();
        if let Some(a) = aqm {
            other.push_str(&format!(" / {drops_a} {a}"));
        }
        if has("data.policer") {
            other.push_str(&format!(" / {drops_p} policer"));
        }
        let shaper: Vec<f64> = g
            .iter()
            .filter_map(|r| r.link.queues.get("data.shaper").map(|q| q.p50))
            .collect();
        if !shaper.is_empty() {
            other.push_str(&format!(", shaper delay p50 {}", agg(shaper, units::ms)));
        }
        link_lines.push(format!(
            "#{}: link {} used, drops {} buffer / {} random{}{}{}, queue delay p50 {} p99 {}, jain {}",
            i + 1,
            agg(util, units::pct),
            drops_b,
            drops_r,
            other,
            if marks > 0 {
                format!(", {marks} CE marks")
            } else {
                String::new()
            },
            if g.len() > 1 { " (mean)" } else { "" },
            agg(qp50, units::ms),
            agg(qp99, units::ms),
            agg(jain, |x| format!("{x:.3}"))
        ));
    }
    grid.render(&mut out, "  ");
    out.push('\n');
    for l in link_lines {
        out.push_str("  ");
        out.push_str(&l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::{LinkResult, Percentiles};

    fn run(seed: u64, loss: f64, goodput: f64) -> RunResult {
        let mut params = serde_json::Map::new();
        params.insert("link.loss".into(), serde_json::json!(loss));
        RunResult {
            params,
            seed,
            duration_s: 1.0,
            flows: vec![FlowResult {
                cc: "bbr".into(),
                goodput_bps: goodput,
                rtt_ms: Percentiles {
                    min: 1.0,
                    p50: 2.0,
                    p95: 3.0,
                    p99: 4.0,
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

    #[test]
    fn repeats_fold_into_median_and_range() {
        let doc = ResultsDoc {
            cclab: "t".into(),
            scenario: "s".into(),
            backend: "sim".into(),
            runs: vec![
                run(1, 0.0, 10e6),
                run(2, 0.0, 30e6),
                run(3, 0.0, 20e6),
                run(1, 0.01, 5e6),
                run(2, 0.01, 7e6),
                run(3, 0.01, 6e6),
            ],
        };
        let t = render(&doc, "title");
        assert!(t.contains("seeds"), "{t}");
        assert!(t.contains("20.0 Mbit/s [10.0-30.0]"), "{t}");
        assert!(t.contains("6.00 Mbit/s [5.00-7.00]"), "{t}");
        assert_eq!(t.lines().filter(|l| l.contains("bbr")).count(), 2, "{t}");
        // A single seed prints plain values.
        let single = ResultsDoc {
            runs: vec![run(1, 0.0, 10e6)],
            ..doc
        };
        assert!(!render(&single, "t").contains('['));
    }
}
