//! DCTCP (RFC 8257), as Linux's `net/ipv4/tcp_dctcp.c`.
//!
//! DCTCP is Reno whose window cut follows the *extent* of congestion instead of its mere
//! presence. Switches mark CE on packets once their queue passes a shallow threshold; the
//! receiver echoes exactly which segments were marked (ECE on their ACKs, with an immediate
//! ACK at every change of CE state: the sender and receiver sides of this live in
//! [`crate::sender`] and [`crate::receiver`], switched on by [`CongestionControl::needs_ecn`]
//! and [`CongestionControl::wants_ce_events`]). Once per window of data the sender updates
//!
//! ```text
//! alpha <- (1 - g) * alpha + g * F,   F = segments delivered with ECE / segments delivered
//! ```
//!
//! with g = 1/16, and on an ECN echo cuts the window once (the sender's CWR state) to
//! `cwnd * (1 - alpha / 2)`: a queue that is marked on every packet halves the window as
//! Reno would, one marked now and then costs a few percent. Loss (fast recovery or an RTO)
//! still halves it.
//!
//! | Linux                     | here                                           |
//! |---------------------------|------------------------------------------------|
//! | `dctcp_init`              | [`CongestionControl::init`]                    |
//! | `dctcp_ssthresh`          | [`CongestionControl::ssthresh`]                |
//! | `dctcp_update_alpha`      | [`CongestionControl::in_ack_event`]            |
//! | `dctcp_state`             | [`CongestionControl::set_state`]               |
//! | `dctcp_cwnd_event` (loss) | [`CongestionControl::cwnd_event`]              |
//! | `tcp_reno_cong_avoid`     | [`CongestionControl::cong_avoid`]              |
//! | `dctcp_cwnd_undo`         | [`CongestionControl::undo_cwnd`]               |
//!
//! Units as Linux: alpha in 1/1024 (`DCTCP_MAX_ALPHA`), the gain as a shift (`dctcp_shift_g`
//! = 4), counters in segments. The receive-side `dctcp_ece_ack_update()` is the receiver's
//! precise echo. Linux's fallback to Reno when the peer refuses ECN is kept (a Linux peer
//! accepts ECN by default, `tcp_ecn` = 2, so the simulator always negotiates it).

use super::{
    tcp_reno_cong_avoid, tcp_reno_ssthresh, CaEvent, CaState, CongestionControl, Controller, Param,
    ParamKind, ParamValue, Params, TcpState,
};

/// `DCTCP_MAX_ALPHA`: alpha = 1.0.
pub const MAX_ALPHA: u32 = 1024;

/// DCTCP in the registry, with Linux's module parameters.
pub const CONTROLLER: Controller = Controller {
    name: "dctcp",
    aliases: &[],
    title: "DCTCP",
    summary: "DCTCP (RFC 8257) as Linux's net/ipv4/tcp_dctcp.c: Reno cut by the fraction of CE-marked data",
    params: &[
        Param {
            name: "shift_g",
            kind: ParamKind::Int { min: 0, max: 10 },
            default: ParamValue::Int(4),
            unit: "",
            help: "alpha's EWMA gain is 1/2^shift_g (module parameter dctcp_shift_g)",
        },
        Param {
            name: "alpha_on_init",
            kind: ParamKind::Int {
                min: 0,
                max: MAX_ALPHA as i64,
            },
            default: ParamValue::Int(MAX_ALPHA as i64),
            unit: "1/1024",
            help: "alpha at the start, 1024 = 1.0 (module parameter dctcp_alpha_on_init)",
        },
    ],
    build,
};

fn build(p: &Params, _seed: u64) -> Box<dyn CongestionControl> {
    Box::new(Dctcp::new(
        p.int("shift_g") as u32,
        p.int("alpha_on_init") as u32,
    ))
}

#[derive(Debug, Clone)]
pub struct Dctcp {
    shift_g: u32,
    alpha_on_init: u32,
    /// Fraction of CE-marked data, 1/1024 (`dctcp_alpha`).
    alpha: u32,
    /// `tp.delivered` and `tp.delivered_ce` at the start of the observation window.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// The window ends when `snd_una` reaches this (`next_seq`).
    next_seq: u64,
    /// cwnd before the last reduction (`loss_cwnd`, for undo).
    loss_cwnd: u32,
    /// The peer did not negotiate ECN: plain Reno (`dctcp_reno`).
    reno: bool,
}

impl Dctcp {
    pub fn new(shift_g: u32, alpha_on_init: u32) -> Self {
        Dctcp {
            shift_g: shift_g.min(10),
            alpha_on_init,
            alpha: alpha_on_init.min(MAX_ALPHA),
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            loss_cwnd: 0,
            reno: false,
        }
    }

    /// Current alpha, 1/1024 (`dctcp_alpha` in `INET_DIAG_DCTCPINFO`).
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// `dctcp_reset()`: a new observation window starts now.
    fn reset(&mut self, tp: &TcpState) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// `dctcp_react_to_loss()`: halve, as Reno.
    fn react_to_loss(&mut self, tp: &mut TcpState) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn init(&mut self, tp: &mut TcpState) {
        if !tp.ecn_ok {
            self.reno = true;
            return;
        }
        self.alpha = self.alpha_on_init.min(MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(tp);
    }

    /// `dctcp_cwnd_undo()`: back to the cwnd before the last reduction (`dctcp_reno`'s
    /// `tcp_reno_undo_cwnd()` without ECN).
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        if self.reno {
            return super::tcp_reno_undo_cwnd(tp);
        }
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        if self.reno {
            return tcp_reno_ssthresh(tp);
        }
        self.loss_cwnd = tp.snd_cwnd;
        let decr = ((tp.snd_cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.snd_cwnd - decr).max(2)
    }

    fn in_ack_event(&mut self, tp: &mut TcpState, _ece: bool) {
        if self.reno || tp.snd_una < self.next_seq {
            return;
        }
        // One window has been acknowledged: fold its marked fraction into alpha.
        let mut alpha = self.alpha;
        let decay = alpha >> self.shift_g;
        alpha -= if decay == 0 { alpha } else { decay };
        let delivered_ce = (tp.delivered_ce - self.old_delivered_ce) as u32;
        if delivered_ce > 0 {
            let delivered = ((tp.delivered - self.old_delivered) as u32).max(1);
            let f = (delivered_ce << (10 - self.shift_g)) / delivered;
            alpha = (alpha + f).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(tp);
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if !self.reno && new_state == CaState::Recovery && new_state != tp.ca_state {
            self.react_to_loss(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        if !self.reno && ev == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, _ack: u64, acked: u32) {
        tcp_reno_cong_avoid(tp, acked);
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn wants_ce_events(&self) -> bool {
        true
    }

    fn mode_name(&self) -> &'static str {
        if self.reno {
            "dctcp-reno"
        } else {
            "dctcp"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tp(cwnd: u32) -> TcpState {
        let mut tp = TcpState::new(1448, cwnd);
        tp.ecn_ok = true;
        tp
    }

    #[test]
    fn alpha_follows_the_marked_fraction_once_per_window() {
        let mut t = tp(100);
        let mut d = Dctcp::new(4, MAX_ALPHA);
        d.init(&mut t);
        assert_eq!(d.alpha(), 1024);
        // A window of 100 segments, none marked: alpha decays by 1/16.
        t.snd_nxt = 100;
        d.in_ack_event(&mut t, false); // snd_una 0 >= next_seq 0: the first window ends
        t.delivered = 100;
        t.snd_una = 100;
        t.snd_nxt = 200;
        // Mid-window ACKs change nothing.
        let before = d.alpha();
        d.in_ack_event(&mut t, false);
        assert_eq!(d.alpha(), before - (before >> 4));
        let a = d.alpha();
        t.snd_una = 150;
        d.in_ack_event(&mut t, true);
        assert_eq!(d.alpha(), a);
        // The next window: all marked. alpha += (1 - alpha) / 16 in 1/1024 units.
        t.delivered = 200;
        t.delivered_ce = 100;
        t.snd_una = 200;
        d.in_ack_event(&mut t, true);
        let expect = (a - (a >> 4) + (100u32 << 6) / 100).min(1024);
        assert_eq!(d.alpha(), expect);
    }

    #[test]
    fn alpha_decays_to_zero_without_marks() {
        let mut t = tp(10);
        let mut d = Dctcp::new(4, MAX_ALPHA);
        d.init(&mut t);
        for w in 1..200u64 {
            t.snd_una = w * 10;
            t.snd_nxt = t.snd_una;
            t.delivered = t.snd_una;
            d.in_ack_event(&mut t, false);
        }
        // Below 16 a decay step would be 0, so Linux's min_not_zero takes all of it.
        assert_eq!(d.alpha(), 0);
    }

    #[test]
    fn the_cut_is_proportional_to_alpha_and_loss_halves() {
        let mut t = tp(100);
        let mut d = Dctcp::new(4, MAX_ALPHA);
        d.init(&mut t);
        assert_eq!(d.ssthresh(&t), 50, "alpha = 1: half, as Reno");
        d.alpha = 256; // a quarter of the data marked
        assert_eq!(d.ssthresh(&t), 88, "cwnd * (1 - alpha/2) = 100 - 12");
        d.alpha = 0;
        assert_eq!(d.ssthresh(&t), 100);
        // Entering fast recovery halves whatever alpha says.
        d.set_state(&mut t, CaState::Recovery);
        assert_eq!(t.snd_ssthresh, 50);
        t.snd_ssthresh = 77;
        d.cwnd_event(&mut t, CaEvent::Loss);
        assert_eq!(t.snd_ssthresh, 50);
    }

    #[test]
    fn without_ecn_it_is_reno() {
        let mut t = TcpState::new(1448, 100);
        let mut d = Dctcp::new(4, 0);
        d.init(&mut t);
        assert_eq!(d.mode_name(), "dctcp-reno");
        assert_eq!(d.ssthresh(&t), 50);
    }
}
