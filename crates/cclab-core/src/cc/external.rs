//! An external controller: its cwnd and pacing rate are decided outside the simulator (a
//! Python policy, a learning agent) at monitor intervals, and held in between.
//!
//! The driver (the simulator's stepping API) reads each interval's statistics, asks the
//! outside for an [`Action`] and hands it over with [`External::set_action`], which applies
//! it at once ([`External::apply`]). Nothing here has a clock or does I/O: the controller
//! only keeps the latest decision.
//!
//! What it owns, and what stays Linux's:
//! - It is model-based, like BBR: `cong_control` sets `snd_cwnd` and `pacing_rate` on every
//!   ACK from the held decision, so the sender runs neither `cong_avoid` nor PRR nor its own
//!   pacing formula. Loss detection (RACK, SACK), retransmission, the RTO and its backoff,
//!   tail-loss probes and the pacing machinery (earliest departure time, TSO sizing) are the
//!   sender's, unchanged.
//! - The decision: a cwnd (packets) and/or a pacing rate (bytes per second). With only a
//!   rate, cwnd is two rate x min-RTT products (at least 4 packets), as BBR's cwnd gain
//!   leaves room for ACK aggregation without letting the window, rather than the rate, bind.
//!   With only a cwnd, the pacing rate is 2 x cwnd / srtt (Linux's slow-start pacing ratio),
//!   so a window decision is smoothed but never held back by pacing. With neither (before the
//!   first decision), the initial window is held and pacing follows from it the same way.
//! - `ssthresh` (entering Recovery or Loss) leaves ssthresh as it is, as BBR does: no
//!   multiplicative decrease happens behind the decision's back. An RTO still sets cwnd to 1
//!   as Linux's `tcp_enter_loss()` does; the next ACK puts the held cwnd back (the outside
//!   sees the RTO in the interval's losses and may lower it).
//! - `undo_cwnd` returns the current cwnd: an undone reduction was never the controller's.
//! - Slow start after idle does not apply (a model-based controller keeps its window).
//!
//! The monitor interval is the parameter `interval_us` (0 = one smoothed RTT); a decision may
//! ask for another length for the next interval ([`Action::next_interval_ns`]).

use super::{CongestionControl, Controller, Param, ParamKind, ParamValue, Params, RateSample};
use crate::tcp_sock::TcpState;
use crate::Nanos;

/// The external controller in the registry.
pub const CONTROLLER: Controller = Controller {
    name: "external",
    aliases: &[],
    title: "External",
    summary: "cwnd and/or pacing rate set from outside at monitor intervals (Python policies, learning); Linux's recovery, RTO and pacing kept",
    params: &[Param {
        name: "interval_us",
        kind: ParamKind::Int {
            min: 0,
            max: 10_000_000,
        },
        default: ParamValue::Int(10_000),
        unit: "us",
        help: "monitor interval: how often the outside decides (0 = once per smoothed RTT)",
    }],
    build,
};

fn build(p: &Params, _seed: u64) -> Box<dyn CongestionControl> {
    Box::new(External::new(p.int("interval_us") as u64 * 1000))
}

/// One decision from outside. `None` fields keep the previous decision.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Action {
    /// Congestion window, packets (at least 1).
    pub cwnd: Option<u32>,
    /// Pacing rate, bytes per second (at least one MSS per second).
    pub pacing_rate: Option<u64>,
    /// Length of the next monitor interval, ns (`None` = the configured interval).
    pub next_interval_ns: Option<Nanos>,
}

/// The external controller: the latest decision, held.
#[derive(Debug, Clone)]
pub struct External {
    /// Configured monitor interval, ns (0 = one smoothed RTT).
    interval_ns: Nanos,
    cwnd: Option<u32>,
    rate: Option<u64>,
    next_interval_ns: Option<Nanos>,
    /// The initial window, held until the first decision.
    init_cwnd: u32,
}

impl External {
    pub fn new(interval_ns: Nanos) -> Self {
        External {
            interval_ns,
            cwnd: None,
            rate: None,
            next_interval_ns: None,
            init_cwnd: 10,
        }
    }

    /// Take a decision from outside and apply it to the connection now.
    pub fn set_action(&mut self, tp: &mut TcpState, a: &Action) {
        if let Some(c) = a.cwnd {
            self.cwnd = Some(c.max(1));
            // A window decision alone leaves the rate to follow from it.
            if a.pacing_rate.is_none() {
                self.rate = None;
            }
        }
        if let Some(r) = a.pacing_rate {
            self.rate = Some(r.max(tp.mss as u64));
            if a.cwnd.is_none() {
                self.cwnd = None;
            }
        }
        self.next_interval_ns = a.next_interval_ns;
        self.apply(tp);
    }

    /// The held cwnd (packets) and pacing rate (bytes/s) as they apply to `tp` now.
    pub fn targets(&self, tp: &TcpState) -> (u32, u64) {
        let mss = tp.mss.max(1) as u64;
        let cwnd = match (self.cwnd, self.rate) {
            (Some(c), _) => c,
            (None, Some(r)) if tp.min_rtt_us != u32::MAX => {
                let bdp = (r as u128 * tp.min_rtt_us as u128 / 1_000_000) as u64;
                (2 * bdp).div_ceil(mss).clamp(4, u32::MAX as u64 >> 1) as u32
            }
            (None, Some(_)) => self.init_cwnd.max(4),
            (None, None) => self.init_cwnd,
        };
        let rate = match self.rate {
            Some(r) => r,
            None if tp.srtt_us > 0 => {
                // srtt_us holds 8 x srtt in us, as Linux's does.
                (2 * cwnd as u128 * mss as u128 * 8_000_000 / tp.srtt_us as u128) as u64
            }
            None => u64::MAX,
        };
        (cwnd, rate)
    }

    /// Set cwnd and pacing rate from the held decision.
    pub fn apply(&self, tp: &mut TcpState) {
        let (cwnd, rate) = self.targets(tp);
        tp.set_cwnd(cwnd);
        tp.pacing_rate = rate.min(tp.max_pacing_rate);
    }

    /// Length of the next monitor interval given the smoothed RTT `srtt_ns`: what the last
    /// decision asked for, else the configured interval (one srtt if 0; 10 ms before any
    /// RTT sample); at least 100 us.
    pub fn next_interval(&self, srtt_ns: Nanos) -> Nanos {
        let d = match (self.next_interval_ns, self.interval_ns) {
            (Some(n), _) => n,
            (None, 0) if srtt_ns > 0 => srtt_ns,
            (None, 0) => 10_000_000,
            (None, n) => n,
        };
        d.max(100_000)
    }
}

impl CongestionControl for External {
    fn name(&self) -> &'static str {
        "external"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.init_cwnd = tp.snd_cwnd;
    }

    /// No reduction behind the decision's back (see the module docs).
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tp.snd_ssthresh
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tp.snd_cwnd
    }

    fn cong_control(&mut self, tp: &mut TcpState, _rs: &RateSample) -> bool {
        self.apply(tp);
        true
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn external(&mut self) -> Option<&mut External> {
        Some(self)
    }

    fn mode_name(&self) -> &'static str {
        "external"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp() -> TcpState {
        let mut tp = TcpState::new(1000, 10);
        tp.min_rtt_us = 20_000;
        tp.srtt_us = 8 * 20_000;
        tp
    }

    #[test]
    fn a_window_decision_is_held_and_paces_at_twice_cwnd_per_srtt() {
        let mut tp = tp();
        let mut e = External::new(10_000_000);
        e.init(&mut tp);
        let a = Action {
            cwnd: Some(50),
            ..Action::default()
        };
        e.set_action(&mut tp, &a);
        assert_eq!(tp.snd_cwnd, 50);
        // 2 x 50 x 1000 B / 20 ms
        assert_eq!(tp.pacing_rate, 5_000_000);
        // An RTO drops cwnd; the next ACK puts the decision back.
        tp.snd_cwnd = 1;
        assert!(e.cong_control(&mut tp, &RateSample::default()));
        assert_eq!(tp.snd_cwnd, 50);
        assert_eq!(e.ssthresh(&tp), tp.snd_ssthresh);
    }

    #[test]
    fn a_rate_decision_sets_pacing_and_a_two_bdp_window() {
        let mut tp = tp();
        let mut e = External::new(0);
        e.init(&mut tp);
        e.set_action(
            &mut tp,
            &Action {
                pacing_rate: Some(1_000_000),
                ..Action::default()
            },
        );
        assert_eq!(tp.pacing_rate, 1_000_000);
        // BDP = 1 MB/s x 20 ms = 20 packets of 1000 B; cwnd = 2 x BDP.
        assert_eq!(tp.snd_cwnd, 40);
        // Interval: one srtt when configured as 0, unless the decision asks otherwise.
        assert_eq!(e.next_interval(20_000_000), 20_000_000);
        e.set_action(
            &mut tp,
            &Action {
                next_interval_ns: Some(5_000_000),
                ..Action::default()
            },
        );
        assert_eq!(e.next_interval(20_000_000), 5_000_000);
        assert_eq!(
            tp.pacing_rate, 1_000_000,
            "an empty decision keeps the rate"
        );
    }

    #[test]
    fn before_any_decision_the_initial_window_is_held() {
        let mut tp = tp();
        let mut e = External::new(10_000_000);
        e.init(&mut tp);
        tp.snd_cwnd = 3;
        e.cong_control(&mut tp, &RateSample::default());
        assert_eq!(tp.snd_cwnd, 10);
    }
}
