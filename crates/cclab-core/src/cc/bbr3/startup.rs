//! STARTUP and its exits.
//!
//! STARTUP paces at 2.77 x bw with a cwnd gain of 2, doubling the sending rate each round.
//! The pipe is judged full (`full_bw_reached`, then DRAIN) on the first of:
//!
//! * a bandwidth plateau: three rounds in which no sample reached 1.25 x the baseline (the
//!   baseline moves up to any sample that does, on any ACK). The same estimator, restarted,
//!   ends PROBE_BW UP (`full_bw_now`);
//! * too much loss: at the end of a loss round while in Recovery, at least 6 ACKs of the
//!   round marked losses and the sample's loss rate is above 2% of its `tx_in_flight`;
//! * too many CE marks (ECN-eligible flows only): two consecutive rounds with at least half
//!   of the delivered packets marked.
//!
//! The loss and ECN exits also set `inflight_hi` to the BDP (with budget) or the latest
//! round's delivered volume, whichever is larger.

use super::{
    Bbr3, BBR_SCALE, BBR_UNIT, ECN_THRESH, FULL_BW_CNT, FULL_BW_THRESH, FULL_ECN_CNT, FULL_LOSS_CNT,
};
use crate::cc::{CaState, RateSample, TcpState};

impl Bbr3 {
    /// `bbr_reset_full_bw()`: restart the plateau search.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.full_bw_now = false;
    }

    /// `bbr_check_full_bw_reached()`: on any non-app-limited sample, a 25% rise over the
    /// baseline restarts the count from that sample; at each round start without one, count;
    /// three such rounds mean a plateau.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if sample_bw >= bw_thresh {
            self.reset_full_bw();
            self.full_bw = sample_bw;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_cnt = (self.full_bw_cnt + 1) & 0x3;
        self.full_bw_now = self.full_bw_cnt >= FULL_BW_CNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// `bbr_handle_queue_too_high_in_startup()`: end STARTUP with `inflight_hi` at the larger
    /// of the BDP (with budget) and the latest round's delivered volume.
    pub(super) fn handle_queue_too_high_in_startup(&mut self, tp: &TcpState) {
        self.full_bw_reached = true;
        let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
        self.inflight_hi = bdp.max(self.inflight_latest);
    }

    /// `bbr_check_loss_too_high_in_startup()`: count the ACKs that mark losses within the
    /// loss round; at the round's end, in Recovery, six or more of them with a too-high loss
    /// rate end STARTUP.
    pub(super) fn check_loss_too_high_in_startup(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        if FULL_LOSS_CNT != 0
            && self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= FULL_LOSS_CNT
            && self.is_inflight_too_high(rs)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_check_ecn_too_high_in_startup()`: two consecutive rounds with a CE ratio of at
    /// least 50% end STARTUP (ECN-eligible flows only).
    pub(super) fn check_ecn_too_high_in_startup(&mut self, tp: &TcpState, ce_ratio: u32) {
        if self.full_bw_reached || !self.ecn_eligible || FULL_ECN_CNT == 0 || ECN_THRESH == 0 {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            self.startup_ecn_rounds = (self.startup_ecn_rounds + 1) & 0x3;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(tp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::*;
    use super::super::*;

    fn startup() -> (TcpState, Bbr3) {
        let mut tp = TcpState::new(MSS, 10);
        tp.hz = 1000;
        let mut cc = Bbr3::new(1, false);
        cc.init(&mut tp);
        cc.min_rtt_us = 20_000;
        cc.bw_hi = [0, ((1u64 << 24) / 100) as u32];
        tp.pacing_rate = 100_000;
        (tp, cc)
    }

    #[test]
    fn plateau_after_three_rounds_without_25_percent_growth() {
        let (_, mut cc) = startup();
        let rs = RateSample::default();
        cc.round_start = true;
        cc.check_full_bw_reached(&rs, 1000);
        assert_eq!((cc.full_bw, cc.full_bw_cnt), (1000, 0));
        // 1249 is under 1.25 x 1000 (1250): counts.
        cc.check_full_bw_reached(&rs, 1249);
        assert_eq!(cc.full_bw_cnt, 1);
        // A 25% rise mid-round resets, even off a round start.
        cc.round_start = false;
        cc.check_full_bw_reached(&rs, 1250);
        assert_eq!((cc.full_bw, cc.full_bw_cnt), (1250, 0));
        // Not counted off a round start.
        cc.check_full_bw_reached(&rs, 1000);
        assert_eq!(cc.full_bw_cnt, 0);
        cc.round_start = true;
        for i in 1..=3 {
            assert!(!cc.full_bw_reached);
            cc.check_full_bw_reached(&rs, 1300);
            assert_eq!(cc.full_bw_cnt, i);
        }
        assert!(cc.full_bw_now && cc.full_bw_reached);
        // App-limited samples are ignored.
        let (_, mut cc) = startup();
        let al = RateSample {
            is_app_limited: true,
            ..RateSample::default()
        };
        cc.round_start = true;
        for _ in 0..5 {
            cc.check_full_bw_reached(&al, 0);
        }
        assert!(!cc.full_bw_reached);
    }

    #[test]
    fn loss_too_high_ends_startup_at_a_recovery_round_end() {
        let (mut tp, mut cc) = startup();
        tp.ca_state = CaState::Recovery;
        cc.inflight_latest = 500;
        let lossy = RateSample {
            losses: 3,
            lost: 30,
            tx_in_flight: 400,
            delivered: 10,
            interval_us: 20_000,
            ..RateSample::default()
        };
        // Five lossy ACKs, then the round ends with a sixth: 30 of 400 lost (> 2%).
        for _ in 0..5 {
            cc.loss_round_start = false;
            cc.check_loss_too_high_in_startup(&tp, &lossy);
        }
        assert_eq!(cc.loss_events_in_round, 5);
        assert!(!cc.full_bw_reached);
        cc.loss_round_start = true;
        cc.check_loss_too_high_in_startup(&tp, &lossy);
        assert!(cc.full_bw_reached);
        // inflight_hi = max(BDP 200 with budget, inflight_latest 500).
        assert_eq!(cc.inflight_hi, 500);

        // Five events are not enough; the count restarts at the round's end.
        let (mut tp, mut cc) = startup();
        tp.ca_state = CaState::Recovery;
        for _ in 0..4 {
            cc.check_loss_too_high_in_startup(&tp, &lossy);
        }
        cc.loss_round_start = true;
        cc.check_loss_too_high_in_startup(&tp, &lossy);
        assert!(!cc.full_bw_reached);
        assert_eq!(cc.loss_events_in_round, 0);
        // Outside Recovery, or with a low loss rate, no exit either.
        let (tp, mut cc) = startup();
        for _ in 0..10 {
            cc.check_loss_too_high_in_startup(&tp, &lossy);
        }
        cc.loss_round_start = true;
        cc.check_loss_too_high_in_startup(&tp, &lossy);
        assert!(!cc.full_bw_reached, "not in Recovery");
        let (mut tp, mut cc) = startup();
        tp.ca_state = CaState::Recovery;
        let light = RateSample {
            lost: 8, // 400 * 5 >> 8 = 7: 8 is too high, 7 is not
            ..lossy
        };
        let lighter = RateSample { lost: 7, ..lossy };
        for _ in 0..10 {
            cc.check_loss_too_high_in_startup(&tp, &lighter);
        }
        cc.loss_round_start = true;
        cc.check_loss_too_high_in_startup(&tp, &lighter);
        assert!(!cc.full_bw_reached, "2% is tolerated");
        for _ in 0..6 {
            cc.loss_round_start = false;
            cc.check_loss_too_high_in_startup(&tp, &light);
        }
        cc.loss_round_start = true;
        cc.check_loss_too_high_in_startup(&tp, &light);
        assert!(cc.full_bw_reached);
    }

    #[test]
    fn ecn_too_high_ends_startup_after_two_rounds() {
        let (tp, mut cc) = startup();
        cc.check_ecn_too_high_in_startup(&tp, 200);
        cc.check_ecn_too_high_in_startup(&tp, 200);
        assert!(!cc.full_bw_reached, "not ECN-eligible");
        cc.ecn_eligible = true;
        cc.check_ecn_too_high_in_startup(&tp, 128);
        cc.check_ecn_too_high_in_startup(&tp, 127);
        assert_eq!(cc.startup_ecn_rounds, 0, "a low round restarts the count");
        cc.check_ecn_too_high_in_startup(&tp, 128);
        assert!(!cc.full_bw_reached);
        cc.check_ecn_too_high_in_startup(&tp, 256);
        assert!(cc.full_bw_reached);
        // BDP 200 (+ budget, nothing here) vs inflight_latest 0.
        assert_eq!(cc.inflight_hi, 200);
    }

    #[test]
    fn closed_loop_startup_to_drain_to_probe_bw() {
        // 10 pkt/ms, 20 ms: BDP ~ 200 packets, no loss.
        let mut path = Path::new(7, 10, 20);
        path.run_until(3_000_000_000);
        let mut seq: Vec<Mode> = Vec::new();
        for r in &path.trace {
            if seq.last() != Some(&r.mode) {
                seq.push(r.mode);
            }
        }
        assert_eq!(seq, vec![Mode::Startup, Mode::Drain, Mode::ProbeBw]);
        let cc = &path.cc;
        assert!(cc.full_bw_reached);
        // Plateau exit: no inflight_hi; bw within 5% of 0.01 pkt/us.
        assert_eq!(cc.inflight_hi, u32::MAX);
        let b = (1u64 << 24) as f64 / 100.0;
        assert!(
            ((cc.max_bw() as f64) - b).abs() / b < 0.05,
            "{}",
            cc.max_bw()
        );
        assert_eq!(cc.min_rtt_us, 20_100);
        // STARTUP took about log2(BDP / 10) + 3 rounds; the DRAIN was brief.
        let drain_at = path
            .trace
            .iter()
            .position(|r| r.mode == Mode::Drain)
            .unwrap();
        let bw_at = path
            .trace
            .iter()
            .position(|r| r.mode == Mode::ProbeBw)
            .unwrap();
        let t_drain = path.trace[drain_at].now_ns;
        assert!((100_000_000..400_000_000).contains(&t_drain), "{t_drain}");
        assert!(path.trace[bw_at].now_ns - t_drain < 60_000_000);
        assert!(path.tp.snd_ssthresh < TCP_INFINITE_SSTHRESH);
    }
}
