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

/// A driver that watches flow 0's ACKs: it holds a rate decided at intervals, or with
/// `window` (packets) set, decides that window and the rate on every ACK instead.
struct Watcher {
    rate: f64,
    window: Option<u32>,
    acks: Vec<cclab_sim::AckStats>,
    intervals: Vec<IntervalStats>,
}

impl cclab_sim::Driver for Watcher {
    type Error = Infallible;
    fn on_interval(&mut self, _: usize, st: &IntervalStats) -> Result<Action, Infallible> {
        self.intervals.push(*st);
        // With a window, only the ACKs decide (an interval keeps what they set).
        Ok(match self.window {
            Some(_) => Action::default(),
            None => self.action(),
        })
    }
    fn watch_acks(&mut self, f: usize) -> Result<bool, Infallible> {
        Ok(f == 0)
    }
    fn on_ack(&mut self, _: usize, a: &cclab_sim::AckStats) -> Result<Option<Action>, Infallible> {
        self.acks.push(*a);
        Ok(self.window.map(|_| self.action()))
    }
}

impl Watcher {
    fn action(&self) -> Action {
        Action {
            cwnd: self.window,
            pacing_rate: Some((self.rate / 8.0) as u64),
            ..Action::default()
        }
    }
}

/// Per-ACK hooks: watching a flow whose hook keeps the decision changes nothing in the run;
/// the hook sees every ACK (their deliveries add up to the flow's, their RTT samples are the
/// intervals'), in time order; and a window decided on every ACK holds.
#[test]
fn per_ack_hooks_see_every_ack_and_cost_nothing_in_behaviour() {
    let cfg = SimConfig::single("external", 100e6, 20 * MS, 1.0, 0.005, S);
    let (plain, _) = run_at_rate(&cfg, 60e6);
    let mut w = Watcher {
        rate: 60e6,
        window: None,
        acks: Vec::new(),
        intervals: Vec::new(),
    };
    let watched = cclab_sim::drive(&cfg, &mut w).unwrap();
    assert_eq!(
        serde_json::to_string(&plain).unwrap(),
        serde_json::to_string(&watched).unwrap(),
        "watching ACKs changed the run"
    );
    let acks = &w.acks;
    let last = acks.last().expect("ACKs seen");
    let delivered: f64 = acks.iter().map(|a| a.delivered_pkts).sum();
    eprintln!(
        "{} ACKs, {delivered} segments delivered, {} lost on them, {} intervals",
        acks.len(),
        acks.iter().map(|a| a.lost_pkts).sum::<f64>(),
        w.intervals.len()
    );
    assert_eq!(delivered, last.delivered_total);
    assert!(acks.windows(2).all(|p| p[0].t_s <= p[1].t_s));
    assert!(
        acks.iter().any(|a| a.lost_pkts > 0.0),
        "0.5% loss: some ACK marks losses"
    );
    // The intervals saw the same ACKs: their deliveries and RTT samples up to the last
    // interval's end are the hook's.
    let end = w.intervals.last().unwrap().t_s;
    let by_hook = acks.iter().filter(|a| a.t_s <= end);
    let (d, n) = by_hook.fold((0.0, 0.0), |(d, n), a| {
        (d + a.delivered_pkts, n + a.rtt_s.map_or(0.0, |_| 1.0))
    });
    let by_intervals = w.intervals.iter().fold((0.0, 0.0), |(d, n), s| {
        (d + s.delivered_pkts, n + s.rtt_samples)
    });
    assert_eq!((d, n), by_intervals);
    // A window decided on every ACK (and never at intervals) holds from the first ACK on.
    let mut w = Watcher {
        rate: 60e6,
        window: Some(30),
        acks: Vec::new(),
        intervals: Vec::new(),
    };
    cclab_sim::drive(&cfg, &mut w).unwrap();
    assert!(w.acks.iter().skip(1).all(|a| a.cwnd_pkts <= 30.0));
    assert!(w.acks.iter().skip(1).all(|a| a.inflight_pkts <= 30.0));
    // (Without the ACKs' decisions the initial window, 10, would be held.)
    let at_30 = w.acks.iter().filter(|a| a.cwnd_pkts == 30.0).count();
    assert!(at_30 > w.acks.len() / 2, "{at_30} of {} ACKs", w.acks.len());
}
