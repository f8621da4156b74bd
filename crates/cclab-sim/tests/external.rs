//! The external controller (`cclab_core::cc::external`) driven through the simulator's
//! stepping API: it holds what it is told, and the sender's Linux recovery still works
//! under it. Each test prints what it measured (`-- --nocapture`).

mod common;
use cclab_core::cc::external::Action;
use cclab_sim::{run_driven, IntervalStats, SimConfig, Simulation};
use common::{MS, S};
use std::convert::Infallible;

/// A held window: cwnd stays as set, in flight never exceeds it, and the flow delivers one
/// window per round trip (50 x 1448 B per 20 ms = 29 Mbit/s on a 100 Mbit/s path).
#[test]
fn a_window_decision_is_held() {
    let cfg = SimConfig::single("external", 100e6, 20 * MS, 1.0, 0.0, 2 * S);
    let mut seen: Vec<IntervalStats> = Vec::new();
    let r = run_driven(&cfg, |_, st| {
        seen.push(*st);
        Ok::<_, Infallible>(Action {
            cwnd: Some(50),
            ..Action::default()
        })
    })
    .unwrap();
    // 10 ms intervals over 2 s.
    assert!(
        (195..=201).contains(&seen.len()),
        "{} intervals",
        seen.len()
    );
    let late = &seen[20..];
    assert!(late.iter().all(|s| s.cwnd_pkts == 50.0));
    assert!(late.iter().all(|s| s.inflight_pkts <= 50.0));
    let want = 50.0 * 1448.0 * 8.0 / 0.020;
    let got = r.flows[0].goodput_bps;
    eprintln!(
        "cwnd 50: goodput {:.1} Mbit/s (one window per RTT: {:.1})",
        got / 1e6,
        want / 1e6
    );
    assert!(got > 0.85 * want && got < 1.05 * want, "{got}");
    // Nothing queues: the RTT the intervals saw is the path's.
    let avg = late.iter().map(|s| s.rtt_avg_s).sum::<f64>() / late.len() as f64;
    assert!(avg < 0.0225, "mean RTT {avg}");
    assert_eq!(r.flows[0].cc, "external");
}

/// `cfg` with its external flow held at `rate` (bit/s): the result and every interval seen.
fn run_at_rate(cfg: &SimConfig, rate: f64) -> (cclab_results::RunResult, Vec<IntervalStats>) {
    let mut seen: Vec<IntervalStats> = Vec::new();
    let r = run_driven(cfg, |_, st| {
        seen.push(*st);
        Ok::<_, Infallible>(Action {
            pacing_rate: Some((rate / 8.0) as u64),
            ..Action::default()
        })
    })
    .unwrap();
    (r, seen)
}

/// A held rate: the pacing rate is as set and the flow delivers at it, whatever its
/// window; the interval's delivery and send rates measure it.
#[test]
fn a_rate_decision_is_held() {
    let cfg = SimConfig::single("external", 100e6, 20 * MS, 1.0, 0.0, 2 * S);
    let rate = 30e6;
    let (r, seen) = run_at_rate(&cfg, rate);
    let late = &seen[50..];
    assert!(late.iter().all(|s| s.pacing_rate_bps == rate));
    let mean = |f: fn(&IntervalStats) -> f64| late.iter().map(f).sum::<f64>() / late.len() as f64;
    let (dr, sr) = (mean(|s| s.delivery_rate_bps), mean(|s| s.send_rate_bps));
    eprintln!(
        "rate 30 Mbit/s: delivery {:.2}, send {:.2} Mbit/s",
        dr / 1e6,
        sr / 1e6
    );
    assert!((dr / rate - 1.0).abs() < 0.05, "delivery rate {dr}");
    assert!((sr / rate - 1.0).abs() < 0.05, "send rate {sr}");
    assert!((r.flows[0].goodput_bps / rate - 1.0).abs() < 0.1);
}

/// Random loss (2%) under a held rate of 40 Mbit/s: Linux's recovery repairs every loss
/// (the transfer delivers in order at about the rate, less the retransmissions' share), the
/// intervals count the losses, and the flow never stalls (every interval past the first
/// round trips delivers).
#[test]
fn linux_recovery_works_under_external_control() {
    let cfg = SimConfig::single("external", 100e6, 20 * MS, 1.0, 0.02, 3 * S);
    let rate = 40e6;
    let (r, seen) = run_at_rate(&cfg, rate);
    let f = &r.flows[0];
    let lost: f64 = seen.iter().map(|s| s.lost_pkts).sum();
    eprintln!(
        "2% loss at 40 Mbit/s: goodput {:.1} Mbit/s, retransmits {}, lost {lost}, RTOs {}",
        f.goodput_bps / 1e6,
        f.retransmits,
        f.rto_count
    );
    assert!(f.retransmits > 100 && lost > 100.0);
    assert!(f.goodput_bps > 0.85 * rate, "goodput {}", f.goodput_bps);
    assert!(seen[10..].iter().all(|s| s.delivered_pkts > 0.0), "a stall");
}

/// Stepping by hand (as the Gymnasium environment does) gives the same run as the driver
/// loop, and a non-external flow refuses an action.
#[test]
fn stepping_by_hand_matches_the_driver_and_checks_the_flow() {
    let mut cfg = SimConfig::single("external", 50e6, 30 * MS, 2.0, 0.0, S);
    cfg.flows.push(cclab_sim::SimFlow {
        cc: cclab_core::cc::by_name("cubic").unwrap(),
        ..cfg.flows[0].clone()
    });
    let act = |st: &IntervalStats| Action {
        cwnd: Some(10 + (st.t_s * 100.0) as u32),
        ..Action::default()
    };
    let a = run_driven(&cfg, |_, st| Ok::<_, Infallible>(act(st))).unwrap();
    let mut sim = Simulation::new(cfg.clone());
    while let Some((f, t)) = sim.next_decision() {
        if !sim.advance_to(t) {
            break;
        }
        let st = sim.take_interval(f).unwrap();
        sim.set_action(f, &act(&st)).unwrap();
    }
    let e = sim.set_action(1, &Action::default()).unwrap_err();
    assert!(e.contains("cubic"), "{e}");
    assert!(sim.set_action(7, &Action::default()).is_err());
    sim.advance_to(sim.end());
    sim.finish();
    let b = sim.into_result();
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
    assert!(a.flows[1].bytes_delivered > 0 && a.flows[0].bytes_delivered > 0);
}
