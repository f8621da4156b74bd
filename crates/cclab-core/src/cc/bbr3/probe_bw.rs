//! PROBE_BW: the four-phase cycle.
//!
//! * **DOWN** (pacing 0.91): drain the queue the last probe built. Draws the wait until the
//!   next probe: 2 s plus a random 0-1 s of wall clock, and a random head start of 0 or 1
//!   on the round count. Ends when inflight is at most the BDP and leaves 15% of
//!   `inflight_hi` free (CRUISE), or when it is time to probe (REFILL).
//! * **CRUISE** (1.0): hold, cutting the lower bounds on each lossy (or CE-marked) round.
//!   Ends when it is time to probe: the wall-clock wait has passed since DOWN began, or
//!   `min(63, target inflight)` rounds have, the length of a Reno flow's sawtooth at this
//!   BDP (so loss-based flows sharing the path get their time); or, ECN-eligible, when a
//!   cycle with CE marks but no loss ends in the Open state (probe again early, starting
//!   the `inflight_hi` growth at half of it).
//! * **REFILL** (1.0): drop the lower bounds and refill the pipe for one round.
//! * **UP** (1.25, cwnd gain 2.25): probe. While cwnd-limited at `inflight_hi`, raise it by
//!   1, 2, 4, ... packets per round (each round's increment spread over its ACKs). Ends on a
//!   bandwidth plateau (three rounds without 25% growth, as STARTUP; the count restarts while
//!   `inflight_hi` is what limits), on too much loss or CE (see [`super::bounds`]), or, if
//!   the previous probe went too high, as soon as inflight reaches `inflight_hi`; in that
//!   last case, once the probe's ACKs show it was safe, UP is retried at once via REFILL.
//!
//! The ACK phase tracks which ACKs carry the probe's feedback; when the last of them has come
//! back (the first round end after DOWN started), the `bw_hi` filter moves to a new cycle.

use super::super::bbr_common::stamp_us_delta;
use super::{
    AckPhase, Bbr3, Mode, Phase, BBR_SCALE, BBR_UNIT, BW_PROBE_BASE_US, BW_PROBE_MAX_ROUNDS,
    BW_PROBE_RAND_ROUNDS, BW_PROBE_RAND_US, ECN_REPROBE_GAIN,
};
use crate::cc::{CaState, RateSample, TcpState};

/// The kernel's `ilog2()` as stored in the 5-bit `bw_probe_up_rounds` (0 gives -1, kept
/// as 31).
fn ilog2_5bit(v: u64) -> u32 {
    if v == 0 {
        return 31;
    }
    (63 - v.leading_zeros()) & 0x1F
}

impl Bbr3 {
    /// `bbr_is_probing_bandwidth()`: STARTUP, REFILL and UP push inflight up; the lower
    /// bounds are not adapted then.
    pub(super) fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    /// `bbr_has_elapsed_in_phase()`: strictly more than `interval_us` since `cycle_mstamp`.
    pub(super) fn has_elapsed_in_phase(&self, tp: &TcpState, interval_us: u32) -> bool {
        stamp_us_delta(tp.now_us, self.cycle_mstamp + interval_us as u64) > 0
    }

    /// `bbr_is_reno_coexistence_probe_time()`: a Reno flow with our BDP would probe after
    /// about BDP rounds; do so too, but after at most 63.
    pub(super) fn is_reno_coexistence_probe_time(&self, tp: &TcpState) -> bool {
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(tp));
        self.rounds_since_probe >= rounds
    }

    /// `bbr_pick_probe_wait()`: a random head start of 0 or 1 round, and 2 s plus up to 1 s
    /// of wall clock.
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(BW_PROBE_RAND_ROUNDS);
        self.probe_wait_us = BW_PROBE_BASE_US + self.rng.below(BW_PROBE_RAND_US);
    }

    /// `bbr_set_cycle_idx()`: a new phase needs a fresh cwnd and pacing rate.
    fn set_cycle_idx(&mut self, phase: Phase) {
        self.cycle_idx = phase;
        self.try_fast_path = false;
    }

    /// `bbr_start_bw_probe_refill()`.
    pub(super) fn start_bw_probe_refill(&mut self, tp: &TcpState, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = bw_probe_up_rounds & 0x1F;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Refill);
    }

    /// `bbr_start_bw_probe_up()`: a new round, a new plateau search from this sample.
    pub(super) fn start_bw_probe_up(&mut self, tp: &TcpState, sample_bw: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_mstamp = tp.now_us;
        self.reset_full_bw();
        self.full_bw = sample_bw;
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope(tp);
    }

    /// `bbr_start_bw_probe_down()`: start the wall clock of the next cycle.
    pub(super) fn start_bw_probe_down(&mut self, tp: &TcpState) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = u32::MAX;
        self.pick_probe_wait();
        self.cycle_mstamp = tp.now_us;
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    /// `bbr_start_bw_probe_cruise()`: `inflight_lo` no higher than `inflight_hi`.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != u32::MAX {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    /// `bbr_raise_inflight_hi_slope()`: this round grows `inflight_hi` by 2^rounds packets,
    /// one per `cwnd / 2^rounds` packets ACKed.
    pub(super) fn raise_inflight_hi_slope(&mut self, tp: &TcpState) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.bw_probe_up_cnt = (tp.snd_cwnd / growth_this_round).max(1);
    }

    /// `bbr_probe_inflight_hi_upward()`: in UP, while cwnd-limited at `inflight_hi`, raise it
    /// along the slope.
    pub(super) fn probe_inflight_hi_upward(&mut self, tp: &TcpState, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.snd_cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks = self.bw_probe_up_acks.wrapping_add(rs.acked_sacked);
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.wrapping_add(delta);
            self.try_fast_path = false;
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// `bbr_adapt_upper_bounds()`: follow the ACK phase (moving the `bw_hi` window when a
    /// probe's feedback is complete, and retrying a cut-short probe that proved safe), then
    /// lower `inflight_hi` on a too-high sample from probing or raise it on a safe one.
    /// Returns true if it decided a phase change.
    pub(super) fn adapt_upper_bounds(&mut self, tp: &TcpState, rs: &RateSample) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs);
            }
        } else {
            if self.inflight_hi == u32::MAX {
                return false;
            }
            // Any phase may show that more is safe (random loss must not ratchet it down).
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// `bbr_check_time_to_probe_bw()`: start REFILL early after an ECN-only cycle, or when
    /// the wall-clock or the Reno-round wait is over.
    pub(super) fn check_time_to_probe_bw(&mut self, tp: &TcpState) -> bool {
        if ECN_REPROBE_GAIN != 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            // Start the growth at 2^n ~ inflight_hi * ecn_reprobe_gain.
            let n = ilog2_5bit((self.inflight_hi as u64 * ECN_REPROBE_GAIN as u64) >> BBR_SCALE);
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        if self.has_elapsed_in_phase(tp, self.probe_wait_us)
            || self.is_reno_coexistence_probe_time(tp)
        {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise()`: inflight leaves the headroom and fits the BDP.
    pub(super) fn check_time_to_cruise(&self, tp: &TcpState, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase()`: the PROBE_BW state machine (the upper bounds adapt in
    /// DRAIN and PROBE_RTT too, once the pipe has been filled).
    pub(super) fn update_cycle_phase(&mut self, tp: &TcpState, rs: &RateSample, sample_bw: u32) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_upper_bounds(tp, rs) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            Phase::Refill => {
                // After a round of REFILL the samples reflect what it put in flight.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp, sample_bw);
                }
            }
            Phase::Up => {
                let mut is_bw_probe_done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    is_bw_probe_done = true;
                } else if tp.is_cwnd_limited && tp.snd_cwnd >= self.inflight_hi {
                    // inflight_hi is what holds bw back: no plateau can be judged.
                    self.reset_full_bw();
                    self.full_bw = sample_bw;
                } else if self.full_bw_now {
                    is_bw_probe_done = true;
                }
                if is_bw_probe_done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::*;
    use super::super::*;
    use super::*;

    fn probe_bw(phase: Phase) -> (TcpState, Bbr3) {
        let mut tp = TcpState::new(MSS, 10);
        tp.hz = 1000;
        tp.now_us = 10_000_000;
        tp.delivered = 100_000;
        let mut cc = Bbr3::new(9, false);
        cc.init(&mut tp);
        cc.min_rtt_us = 10_000;
        cc.bw_hi = [((1u64 << 24) / 100) as u32, 0]; // BDP 100
        cc.full_bw_reached = true;
        cc.full_bw_now = true;
        cc.mode = Mode::ProbeBw;
        cc.cycle_idx = phase;
        cc.cycle_mstamp = tp.now_us;
        cc.probe_wait_us = 2_500_000;
        cc.next_rtt_delivered = tp.delivered;
        tp.snd_cwnd = 200;
        tp.pacing_rate = 100_000;
        (tp, cc)
    }

    #[test]
    fn probe_wait_is_2_to_3_s_and_0_to_1_rounds() {
        let mut cc = Bbr3::new(11, false);
        let (mut lo, mut hi) = (u32::MAX, 0);
        let mut rounds = [0u32; 2];
        for _ in 0..20_000 {
            cc.pick_probe_wait();
            assert!((2_000_000..3_000_000).contains(&cc.probe_wait_us));
            assert!(cc.rounds_since_probe <= 1);
            rounds[cc.rounds_since_probe as usize] += 1;
            lo = lo.min(cc.probe_wait_us);
            hi = hi.max(cc.probe_wait_us);
        }
        // Spread over the whole second, both head starts drawn about equally.
        assert!(lo < 2_010_000 && hi > 2_990_000, "{lo}..{hi}");
        assert!(rounds[0] > 9_000 && rounds[1] > 9_000, "{rounds:?}");
        // Deterministic per seed.
        let draw = |seed| {
            let mut c = Bbr3::new(seed, false);
            c.pick_probe_wait();
            (c.probe_wait_us, c.rounds_since_probe)
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }

    #[test]
    fn cruise_probes_after_wall_clock_wait() {
        let (mut tp, mut cc) = probe_bw(Phase::Cruise);
        cc.rounds_since_probe = 0;
        let rs = RateSample::default();
        tp.now_us += 2_500_000;
        cc.update_cycle_phase(&tp, &rs, 0);
        assert_eq!(
            cc.cycle_idx,
            Phase::Cruise,
            "not strictly after the wait yet"
        );
        tp.now_us += 1;
        cc.update_cycle_phase(&tp, &rs, 0);
        assert_eq!(cc.cycle_idx, Phase::Refill);
        assert_eq!(cc.ack_phase, AckPhase::Refilling);
        assert_eq!((cc.bw_lo, cc.inflight_lo), (u32::MAX, u32::MAX));
        assert_eq!(cc.next_rtt_delivered, tp.delivered, "a new round");
    }

    #[test]
    fn reno_coexistence_round_bound_is_min_63_and_target_inflight() {
        // BDP 100 packets: 63 rounds.
        let (tp, mut cc) = probe_bw(Phase::Cruise);
        cc.rounds_since_probe = 62;
        assert!(!cc.is_reno_coexistence_probe_time(&tp));
        cc.rounds_since_probe = 63;
        assert!(cc.is_reno_coexistence_probe_time(&tp));
        // A BDP of 20 packets (cwnd 20 binds): 20 rounds.
        let (mut tp, mut cc) = probe_bw(Phase::Cruise);
        tp.snd_cwnd = 20;
        cc.rounds_since_probe = 19;
        assert!(!cc.is_reno_coexistence_probe_time(&tp));
        cc.rounds_since_probe = 20;
        assert!(cc.is_reno_coexistence_probe_time(&tp));
        let rs = RateSample::default();
        cc.update_cycle_phase(&tp, &rs, 0);
        assert_eq!(cc.cycle_idx, Phase::Refill);
    }

    #[test]
    fn refill_lasts_one_round_then_up() {
        let (mut tp, mut cc) = probe_bw(Phase::Cruise);
        cc.start_bw_probe_refill(&tp, 0);
        cc.update_gains();
        assert_eq!(cc.pacing_gain, BBR_UNIT);
        let rs = RateSample::default();
        cc.round_start = false;
        cc.update_cycle_phase(&tp, &rs, 5000);
        assert_eq!(cc.cycle_idx, Phase::Refill);
        cc.round_start = true;
        tp.now_us += 10_000;
        cc.update_cycle_phase(&tp, &rs, 5000);
        assert_eq!(cc.cycle_idx, Phase::Up);
        assert!(cc.bw_probe_samples);
        assert_eq!(cc.ack_phase, AckPhase::ProbeStarting);
        assert_eq!(cc.full_bw, 5000);
        assert!(!cc.full_bw_now);
        assert_eq!(cc.cycle_mstamp, tp.now_us);
        // The first round of UP grows inflight_hi by 1 per cwnd of ACKs.
        assert_eq!(cc.bw_probe_up_cnt, 200);
        assert_eq!(cc.bw_probe_up_rounds, 1);
        cc.update_gains();
        assert_eq!((cc.pacing_gain, cc.cwnd_gain), (320, 576));
    }

    #[test]
    fn up_grows_inflight_hi_with_a_doubling_slope() {
        let (mut tp, mut cc) = probe_bw(Phase::Up);
        cc.inflight_hi = 200;
        cc.bw_probe_up_rounds = 0;
        tp.snd_cwnd = 200;
        tp.is_cwnd_limited = true;
        cc.raise_inflight_hi_slope(&tp); // round 1: +1 per 200 acked
        let ack = |n| RateSample {
            acked_sacked: n,
            tx_in_flight: 100,
            ..RateSample::default()
        };
        let mut per_round = Vec::new();
        for _round in 0..5 {
            let start = cc.inflight_hi;
            // One round's worth of ACKs (200), 10 at a time; the round starts on the last.
            for i in 0..20 {
                cc.round_start = i == 19;
                tp.snd_cwnd = cc.inflight_hi; // cwnd kept at the bound
                cc.probe_inflight_hi_upward(&tp, &ack(10));
            }
            per_round.push(cc.inflight_hi - start);
        }
        // 1, 2, 4, 8, 16 packets per round: one per cwnd / 2^k ACKed. cwnd grows with the
        // bound, so the fifth round's step is 213 / 16 = 13 packets: 200 / 13 = 15.
        assert_eq!(per_round, vec![1, 2, 4, 8, 15]);
        // Not cwnd-limited, or cwnd below the bound: no growth.
        let before = cc.inflight_hi;
        tp.is_cwnd_limited = false;
        cc.probe_inflight_hi_upward(&tp, &ack(1000));
        tp.is_cwnd_limited = true;
        tp.snd_cwnd = before - 1;
        cc.probe_inflight_hi_upward(&tp, &ack(1000));
        assert_eq!(cc.inflight_hi, before);
    }

    #[test]
    fn up_ends_on_plateau_then_down() {
        let (tp, mut cc) = probe_bw(Phase::Cruise);
        cc.start_bw_probe_up(&tp, 10_000);
        let rs = RateSample {
            prior_in_flight: 100,
            ..RateSample::default()
        };
        // Three round starts without a 25% rise: plateau.
        for _ in 0..3 {
            assert_eq!(cc.cycle_idx, Phase::Up);
            cc.round_start = true;
            cc.check_full_bw_reached(&rs, 11_000);
            cc.update_cycle_phase(&tp, &rs, 11_000);
        }
        assert_eq!(cc.cycle_idx, Phase::Down);
        assert!(!cc.prev_probe_too_high);
        cc.update_gains();
        assert_eq!(cc.pacing_gain, 232);
        // While inflight_hi limits cwnd, the plateau search restarts on each ACK.
        let (mut tp2, mut cc2) = probe_bw(Phase::Cruise);
        cc2.start_bw_probe_up(&tp2, 10_000);
        cc2.inflight_hi = 150;
        tp2.snd_cwnd = 150;
        tp2.is_cwnd_limited = true;
        for _ in 0..5 {
            cc2.round_start = true;
            cc2.check_full_bw_reached(&rs, 11_000);
            cc2.update_cycle_phase(&tp2, &rs, 11_000);
        }
        assert_eq!(cc2.cycle_idx, Phase::Up);
    }

    #[test]
    fn risky_probe_stops_at_inflight_hi_and_retries_when_safe() {
        let (mut tp, mut cc) = probe_bw(Phase::Cruise);
        cc.prev_probe_too_high = true;
        cc.inflight_hi = 120;
        cc.start_bw_probe_up(&tp, 10_000);
        let rs = |inflight| RateSample {
            prior_in_flight: inflight,
            tx_in_flight: inflight,
            ..RateSample::default()
        };
        cc.round_start = false;
        cc.update_cycle_phase(&tp, &rs(100), 0);
        assert_eq!(cc.cycle_idx, Phase::Up);
        // Inflight (plus one TSO burst at gain 1.25) reaches inflight_hi: stop.
        cc.update_gains();
        cc.update_cycle_phase(&tp, &rs(118), 0);
        assert_eq!(cc.cycle_idx, Phase::Down);
        assert!(cc.stopped_risky_probe);
        assert!(!cc.prev_probe_too_high);
        // The probe's feedback ends (a round) without excess loss: REFILL right away.
        tp.delivered += 150;
        cc.round_start = true;
        cc.update_cycle_phase(&tp, &rs(90), 0);
        assert_eq!(cc.cycle_idx, Phase::Refill);
        assert!(!cc.stopped_risky_probe);
    }

    #[test]
    fn down_to_cruise_needs_headroom_and_bdp() {
        let (tp, mut cc) = probe_bw(Phase::Down);
        cc.update_gains();
        cc.inflight_hi = 110; // headroom: 110 - 16 = 94
        let rs = |inflight| RateSample {
            prior_in_flight: inflight,
            tx_in_flight: 50,
            ..RateSample::default()
        };
        cc.update_cycle_phase(&tp, &rs(100), 0);
        assert_eq!(
            cc.cycle_idx,
            Phase::Down,
            "at the BDP but not below the headroom"
        );
        cc.update_cycle_phase(&tp, &rs(95), 0);
        assert_eq!(cc.cycle_idx, Phase::Down);
        cc.update_cycle_phase(&tp, &rs(94), 0);
        assert_eq!(cc.cycle_idx, Phase::Cruise);
        // Without inflight_hi, the BDP (100) is the only condition.
        let (tp, mut cc) = probe_bw(Phase::Down);
        cc.update_gains();
        cc.update_cycle_phase(&tp, &rs(101), 0);
        assert_eq!(cc.cycle_idx, Phase::Down);
        cc.update_cycle_phase(&tp, &rs(100), 0);
        assert_eq!(cc.cycle_idx, Phase::Cruise);
    }

    #[test]
    fn feedback_end_advances_bw_hi_window() {
        let (mut tp, mut cc) = probe_bw(Phase::Cruise);
        cc.bw_hi = [300, 500];
        cc.start_bw_probe_down(&tp);
        assert_eq!(cc.ack_phase, AckPhase::ProbeStopping);
        let rs = RateSample::default();
        tp.delivered += 100;
        cc.round_start = true;
        cc.update_cycle_phase(&tp, &rs, 0);
        assert_eq!(cc.ack_phase, AckPhase::Init);
        assert_eq!(cc.bw_hi, [500, 0]);
        assert!(!cc.bw_probe_samples);
    }

    #[test]
    fn safe_samples_raise_inflight_hi_in_any_phase() {
        let (tp, mut cc) = probe_bw(Phase::Cruise);
        cc.inflight_hi = 100;
        let rs = RateSample {
            tx_in_flight: 130,
            ..RateSample::default()
        };
        cc.adapt_upper_bounds(&tp, &rs);
        assert_eq!(cc.inflight_hi, 130);
        // A lossy sample outside probing does not lower it.
        let lossy = RateSample {
            tx_in_flight: 60,
            lost: 10,
            ..RateSample::default()
        };
        cc.adapt_upper_bounds(&tp, &lossy);
        assert_eq!(cc.inflight_hi, 130);
    }

    #[test]
    fn ecn_only_cycle_reprobes_early() {
        let (tp, mut cc) = probe_bw(Phase::Cruise);
        cc.ecn_eligible = true;
        cc.ecn_in_cycle = true;
        cc.inflight_hi = 100; // half is 50: ilog2 5
        assert!(cc.check_time_to_probe_bw(&tp));
        assert_eq!(cc.cycle_idx, Phase::Refill);
        assert_eq!(cc.bw_probe_up_rounds, 5);
        assert_eq!(ilog2_5bit(0), 31);
        assert_eq!(ilog2_5bit(1), 0);
        assert_eq!(ilog2_5bit(64), 6);
        // With loss in the cycle, the usual timing.
        let (tp, mut cc) = probe_bw(Phase::Cruise);
        cc.ecn_eligible = true;
        cc.ecn_in_cycle = true;
        cc.loss_in_cycle = true;
        assert!(!cc.check_time_to_probe_bw(&tp));
    }

    #[test]
    fn closed_loop_cycle_visits_phases_in_order() {
        // 10 pkt/ms, 20 ms, no loss: after DRAIN, DOWN -> CRUISE -> REFILL -> UP -> DOWN ...
        // with probes every min(2-3 s, 63 rounds ~ 1.3 s). PROBE_RTT (every 5 s here: no
        // sample goes below the first min_rtt) interrupts the cycle and resumes in CRUISE.
        let mut path = Path::new(3, 10, 20);
        path.run_until(12_000_000_000);
        let tr = &path.trace;
        let start = tr.iter().position(|r| r.mode == Mode::ProbeBw).unwrap();
        assert_eq!(tr[start].phase, Phase::Down);
        let mut ups = Vec::new();
        let mut probe_rtt_since_last_up = false;
        for w in tr[start..].windows(2) {
            let (a, b) = (w[0], w[1]);
            if a.mode == Mode::ProbeRtt || b.mode == Mode::ProbeRtt {
                probe_rtt_since_last_up = true;
                if a.mode == Mode::ProbeRtt && b.mode == Mode::ProbeBw {
                    assert_eq!(b.phase, Phase::Cruise);
                }
                continue;
            }
            assert_eq!(b.mode, Mode::ProbeBw);
            assert_eq!(b.pacing_gain, PACING_GAIN[b.phase as usize]);
            if a.phase == b.phase {
                continue;
            }
            let ok = matches!(
                (a.phase, b.phase),
                (Phase::Down, Phase::Cruise)
                    | (Phase::Down, Phase::Refill)
                    | (Phase::Cruise, Phase::Refill)
                    | (Phase::Refill, Phase::Up)
                    | (Phase::Up, Phase::Down)
            );
            assert!(ok, "{:?} -> {:?} at {} ns", a.phase, b.phase, b.now_ns);
            if b.phase == Phase::Up {
                ups.push((b.now_ns, probe_rtt_since_last_up));
                probe_rtt_since_last_up = false;
            }
        }
        assert!(ups.len() >= 5, "{} probes", ups.len());
        let mut checked = 0;
        for w in ups.windows(2) {
            if w[1].1 {
                continue; // a PROBE_RTT came between
            }
            let gap = (w[1].0 - w[0].0) / 1_000_000;
            // 63 rounds of ~20 ms (plus the probe itself) is below the 2-3 s clock.
            assert!((1_000..=1_700).contains(&gap), "probe gap {gap} ms");
            checked += 1;
        }
        assert!(checked >= 3);
    }
}
