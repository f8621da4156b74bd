//! `cclab lab fit-check`: `cclab perf`'s probe, fit and prediction held against a path whose
//! truth is known, the kernel lab's. For each path of a scenario's `[link]`, `cclab serve`
//! and `cclab perf` run in the lab's two namespaces joined through cclab's link element;
//! the fit is compared with the link as configured (and the loss the element really drew),
//! the prediction with the measurement. The criteria are issue #16's:
//!
//! - the rate within 10% and the base RTT within 5%;
//! - the true loss inside the fitted loss's 95% interval;
//! - each measured controller's predicted goodput within 20% of its measured mean.
//!
//! A real host has no such truth; this is how a user learns what to expect of `cclab fit`
//! on paths like theirs before trusting it on one.

use crate::perf_lab as lab;
use crate::predict::{predict_doc, PredictOptions};
use crate::runner::{self, Error};
use cclab_kernel::{addr, lab_unavailable};
use cclab_remote::fit::{Estimate, PathFit};
use cclab_remote::PerfOptions;
use cclab_results::{LabConditions, ResultsDoc};
use cclab_scenario::Scenario;
use cclab_sys as sys;
use serde::Serialize;
use std::time::Duration;

/// How each path is measured.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    pub ccs: Vec<String>,
    /// Each run's length; `None`: the scenario's duration.
    pub duration: Option<Duration>,
    pub repeat: u32,
    pub parallel: u16,
    pub predict: PredictOptions,
    pub progress: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            ccs: vec!["cubic".into(), "bbr".into()],
            duration: None,
            repeat: 1,
            parallel: 1,
            predict: PredictOptions::default(),
            progress: false,
        }
    }
}

/// The path as configured, and the loss the element drew over the whole session.
#[derive(Clone, Debug, Serialize)]
pub struct Truth {
    pub rate_bps: f64,
    pub rtt_s: f64,
    pub loss: f64,
    pub buffer_bytes: f64,
    /// Random drops / data packets the element saw (probe and runs).
    pub drawn_loss: f64,
}

/// One criterion and whether it held.
#[derive(Clone, Debug, Serialize)]
pub struct Criterion {
    pub name: String,
    pub pass: bool,
    /// What was compared, one line.
    pub detail: String,
}

/// A path checked: the truth, the fit with its predictions, the verdicts.
#[derive(Clone, Debug, Serialize)]
pub struct Checked {
    pub scenario: String,
    /// The matrix point's link parameters (empty for a single path).
    pub point: String,
    pub duration_s: f64,
    pub repeat: u32,
    pub truth: Truth,
    pub fit: PathFit,
    pub criteria: Vec<Criterion>,
    /// Whether the buffer's truth lies in its interval (or above its lower bound): shown, not
    /// a criterion (a lossy path's CUBIC never fills it, so only a bound is possible).
    pub buffer_held: bool,
    /// The machine's conditions over the session; `disturbed` names why the figures may
    /// describe the machine more than the path.
    pub conditions: LabConditions,
    pub disturbed: Option<String>,
    #[serde(skip)]
    pub doc: ResultsDoc,
}

impl Checked {
    pub fn failed(&self) -> usize {
        self.criteria.iter().filter(|c| !c.pass).count()
    }
}

fn within(x: f64, truth: f64, tol: f64) -> bool {
    truth > 0.0 && (x / truth - 1.0).abs() <= tol
}

/// The criteria for a fit against the truth.
pub fn criteria(fit: &PathFit, t: &Truth) -> Vec<Criterion> {
    let mut v = vec![
        Criterion {
            name: "rate ±10%".into(),
            pass: within(fit.rate_bps.value, t.rate_bps, 0.10),
            detail: format!(
                "{:.2} Mbit/s fitted, {:.2} true ({:+.1}%)",
                fit.rate_bps.value / 1e6,
                t.rate_bps / 1e6,
                (fit.rate_bps.value / t.rate_bps - 1.0) * 100.0
            ),
        },
        Criterion {
            name: "RTT ±5%".into(),
            pass: within(fit.rtt_s.value, t.rtt_s, 0.05),
            detail: format!(
                "{:.3} ms fitted, {:.3} true ({:+.2}%)",
                fit.rtt_s.value * 1e3,
                t.rtt_s * 1e3,
                (fit.rtt_s.value / t.rtt_s - 1.0) * 100.0
            ),
        },
        Criterion {
            name: "loss in interval".into(),
            pass: fit.loss.contains(t.loss),
            detail: format!(
                "{} true, fitted {} (the element drew {})",
                pct(t.loss),
                interval(&fit.loss, pct),
                pct(t.drawn_loss)
            ),
        },
    ];
    for p in fit.predictions.iter() {
        let (Some(m), Some(r)) = (p.measured_bps, p.ratio) else {
            continue;
        };
        v.push(Criterion {
            name: format!("{} ±20%", p.cc),
            pass: (r - 1.0).abs() <= 0.20,
            detail: format!(
                "predicted {:.2} Mbit/s, measured {:.2} (ratio {r:.2})",
                p.goodput_bps / 1e6,
                m / 1e6
            ),
        });
    }
    v
}

fn pct(x: f64) -> String {
    format!("{:.3}%", x * 100.0)
}

fn interval(e: &Estimate, f: impl Fn(f64) -> String) -> String {
    match e.high {
        Some(h) => format!("{} [{}, {}]", f(e.value), f(e.low), f(h)),
        None => format!(">= {}", f(e.low)),
    }
}

/// Measure the path of `sc` in the lab with serve and perf (probe on), fit and predict.
pub fn check_link(
    sc: &Scenario,
    duration: Duration,
    o: &CheckOptions,
) -> Result<(ResultsDoc, PathFit, Truth, LabConditions), Error> {
    let e = |m: String| Error::new(m);
    let steal0 = sys::steal_ms();
    let link = &sc.link;
    let mut the_lab = lab::make_lab(sc).map_err(|m| e(format!("the lab: {m}")))?;
    // The element counts the whole session (probe and runs): the loss it really drew.
    the_lab
        .element()
        .count_from
        .store(sys::now_ns(), std::sync::atomic::Ordering::SeqCst);
    let key = lab::key();
    let srv = lab::try_serve_in(the_lab.sender_ns(), addr::SENDER, Some(key.clone()))
        .map_err(|m| e(format!("serve in the lab: {m}")))?;
    let doc = lab::perf_in(
        the_lab.receiver_ns(),
        PerfOptions {
            target: lab::target(addr::SENDER),
            ccs: o.ccs.clone(),
            duration,
            parallel: o.parallel,
            repeat: o.repeat,
            key: Some(key),
            probe: true,
            progress: o.progress,
            ..Default::default()
        },
    );
    let _ = srv.stop();
    let stats = the_lab.stop().map_err(|m| e(m.to_string()))?;
    drop(the_lab);
    let steal_ms = steal0.zip(sys::steal_ms()).map(|(a, b)| b - a);
    // The lab is gone by now, whatever happened (Ctrl-C included: exit 130).
    let mut doc = doc.map_err(|m| Error {
        msg: format!("perf in the lab: {m}"),
        exit: m.exit_code(),
    })?;
    let fit = predict_doc(&mut doc, "the lab measurement", &[], &o.predict)?;
    let truth = Truth {
        rate_bps: link.path.rate_bps,
        rtt_s: link.path.rtt_ns as f64 / 1e9,
        loss: link.path.loss,
        buffer_bytes: link.buffer_bytes() as f64,
        drawn_loss: stats.drops_random as f64 / stats.data_pkts_in.max(1) as f64,
    };
    let conditions = LabConditions {
        steal_ms,
        cpus: sys::online_cpus(),
        element_stalls: stats.stalls,
        retries: 0,
    };
    Ok((doc, fit, truth, conditions))
}

/// Every distinct `[link]` of the scenarios (their matrices expanded, `--set` applied),
/// measured and checked in turn.
pub fn run(
    paths: &[String],
    overrides: &[String],
    o: &CheckOptions,
) -> Result<Vec<Checked>, Error> {
    let ccs: Vec<&str> = o.ccs.iter().map(String::as_str).collect();
    if let Some(why) = lab_unavailable(&ccs) {
        return Err(Error::new(format!(
            "cclab lab fit-check needs the kernel lab: {why} (`cclab doctor` shows what is missing)"
        )));
    }
    let mut out = Vec::new();
    for path in paths {
        let plan = runner::plan_path(path, overrides)?;
        for pt in plan.distinct_links() {
            let point: String = pt
                .params
                .iter()
                .filter(|(k, _)| k.starts_with("link."))
                .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), String::from)))
                .collect::<Vec<_>>()
                .join(",");
            let duration = o
                .duration
                .or(pt.scenario.duration_ns.map(Duration::from_nanos))
                .unwrap_or(Duration::from_secs(10));
            if o.progress {
                eprintln!(
                    "cclab lab fit-check: {}{} ({} x {:.0} s per controller)",
                    plan.name,
                    if point.is_empty() {
                        String::new()
                    } else {
                        format!(" {point}")
                    },
                    o.repeat,
                    duration.as_secs_f64()
                );
            }
            let (doc, fit, truth, conditions) = check_link(&pt.scenario, duration, o)?;
            if o.progress {
                eprint!("{}{}", fit.render_text(), fit.render_predictions());
            }
            let span = doc
                .runs
                .iter()
                .map(|r| r.duration_s)
                .sum::<f64>()
                .max(duration.as_secs_f64());
            let disturbed = conditions.disturbed(span);
            if let (Some(why), true) = (&disturbed, o.progress) {
                eprintln!("cclab lab fit-check: warning: the machine was busy: {why}; the figures describe it as much as the path");
            }
            out.push(Checked {
                scenario: plan.name.clone(),
                point,
                duration_s: duration.as_secs_f64(),
                repeat: o.repeat,
                criteria: criteria(&fit, &truth),
                buffer_held: fit.buffer_bytes.contains(truth.buffer_bytes),
                truth,
                fit,
                conditions,
                disturbed,
                doc,
            });
        }
    }
    Ok(out)
}

/// The table docs/remote.md shows: a row per path, fitted against true, measured against
/// predicted, then each criterion.
pub fn render_markdown(rows: &[Checked]) -> String {
    let mbit = |x: f64| format!("{:.1}", x / 1e6);
    let ms = |x: f64| format!("{:.2}", x * 1e3);
    let kb = |x: f64| format!("{:.0}", x / 1e3);
    let mut t = String::from(
        "| path | runs | rate, Mbit/s | base RTT, ms | loss | buffer, kB (true) | measured / predicted, Mbit/s (ratio; predicted over the loss interval) | criteria |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let tr = &r.truth;
        let f = &r.fit;
        let preds: Vec<String> = f
            .predictions
            .iter()
            .map(|p| {
                let range = p
                    .loss_range()
                    .map_or(String::new(), |(l, h)| format!("; {}-{}", mbit(l), mbit(h)));
                match (p.measured_bps, p.ratio) {
                    (Some(m), Some(q)) => format!(
                        "{} {} / {} ({q:.2}{range})",
                        p.cc,
                        mbit(m),
                        mbit(p.goodput_bps)
                    ),
                    _ => format!("{} - / {} (not run{range})", p.cc, mbit(p.goodput_bps)),
                }
            })
            .collect();
        let verdicts: Vec<String> = r
            .criteria
            .iter()
            .map(|c| format!("{} {}", c.name, if c.pass { "pass" } else { "**FAIL**" }))
            .collect();
        t += &format!(
            "| {} Mbit/s x {} ms x {}{} | {} x {:.0} s | {} | {} | {} | {} ({}) | {} | {}{} |\n",
            tr.rate_bps / 1e6,
            tr.rtt_s * 1e3,
            pct(tr.loss),
            if r.point.is_empty() {
                String::new()
            } else {
                format!(" ({})", r.point)
            },
            r.repeat,
            r.duration_s,
            interval(&f.rate_bps, mbit),
            interval(&f.rtt_s, ms),
            interval(&f.loss, pct),
            interval(&f.buffer_bytes, kb),
            kb(tr.buffer_bytes),
            preds.join("<br>"),
            verdicts.join(", "),
            r.disturbed
                .as_ref()
                .map_or(String::new(), |w| format!(" (machine busy: {w})"))
        );
    }
    let n: usize = rows.iter().map(|r| r.criteria.len()).sum();
    let failed: usize = rows.iter().map(Checked::failed).sum();
    t += &format!("\n{} of {n} criteria hold.\n", n - failed);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_remote::fit::Prediction;

    fn est(value: f64, low: f64, high: f64) -> Estimate {
        Estimate {
            value,
            low,
            high: Some(high),
            how: String::new(),
        }
    }

    #[test]
    fn criteria_hold_within_their_tolerances_and_fail_outside() {
        let truth = Truth {
            rate_bps: 50e6,
            rtt_s: 0.150,
            loss: 0.001,
            buffer_bytes: 937_500.0,
            drawn_loss: 0.00098,
        };
        let pred = |cc: &str, g: f64, m: f64| Prediction {
            cc: cc.into(),
            goodput_bps: g,
            min_bps: g,
            max_bps: g,
            seeds: 20,
            measured_bps: Some(m),
            ratio: Some(g / m),
            at_loss_low_bps: None,
            at_loss_high_bps: None,
        };
        let fit = PathFit {
            version: 1,
            peer: "lab".into(),
            direction: "download".into(),
            rate_bps: est(48.3e6, 47e6, 49e6),
            rtt_s: est(0.14975, 0.1494, 0.1504),
            loss: est(0.00089, 0.00059, 0.00135),
            lost: 0,
            sent: 0,
            buffer_bytes: est(15e3, 15e3, 20e3),
            phases: vec![],
            measured: vec![],
            duration_s: 30.0,
            streams: 1,
            notes: vec![],
            predictions: vec![
                pred("cubic", 6.9e6, 5.1e6),
                pred("bbr", 44.7e6, 45.0e6),
                Prediction {
                    measured_bps: None,
                    ratio: None,
                    ..pred("bbr3", 42e6, 1.0)
                },
            ],
        };
        let c = criteria(&fit, &truth);
        let pass: Vec<(&str, bool)> = c.iter().map(|c| (c.name.as_str(), c.pass)).collect();
        assert_eq!(
            pass,
            [
                ("rate ±10%", true),
                ("RTT ±5%", true),
                ("loss in interval", true),
                ("cubic ±20%", false),
                ("bbr ±20%", true)
            ]
        );
        assert!(c[3].detail.contains("ratio 1.35"), "{}", c[3].detail);
        // Off by 11% in rate, 6% in RTT, the loss outside: each fails.
        let off = PathFit {
            rate_bps: est(55.5e6, 55e6, 56e6),
            rtt_s: est(0.159, 0.158, 0.160),
            loss: est(0.002, 0.0015, 0.0025),
            predictions: vec![],
            ..fit
        };
        assert!(criteria(&off, &truth).iter().all(|c| !c.pass));
    }
}
