//! The calibration written out: Markdown (`calibration.md`), the HTML page (`report.html`)
//! and one line per point and flow for the terminal.

use super::{Calibration, FlowCal, Stats};
use std::fmt::Write as _;

fn fmt_metric(name: &str, v: f64) -> String {
    match name {
        "goodput_bps" => cclab_report::units::rate(v),
        "retrans_ratio" => cclab_report::units::pct(v),
        _ => cclab_report::units::ms(v),
    }
}

/// `0 cubic`, or `cubic #1/2` for the faster of two identical CUBIC flows.
pub(super) fn flow_label(p: &FlowCal) -> String {
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
        let missed: Vec<&str> = p
            .metrics
            .iter()
            .filter(|m| m.ok == Some(false))
            .map(|m| m.metric.split('_').next().unwrap_or(""))
            .collect();
        if !missed.is_empty() {
            let _ = write!(s, " | outside target: {}", missed.join(", "));
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
