//! The model's bounds and the signals that move them.
//!
//! * `bw_hi`: a two-slot max filter. Samples go into the current slot; when the ACKs of a
//!   probe have all come back (the end of `ProbeStopping`), the current slot becomes the
//!   previous one, so the max covers the current and the previous probing cycle.
//! * `inflight_hi`: set when a sample sent while probing saw more than 2% of its
//!   `tx_in_flight` lost (or, ECN-eligible, more than half its delivered packets CE-marked),
//!   to that `tx_in_flight` (for a lost segment, the point inside its flight where the loss
//!   rate crossed 2%) or 70% of the target inflight, whichever is more. Raised to any larger
//!   `tx_in_flight` that turns out safe, and grown in PROBE_BW UP (see [`super::probe_bw`]).
//! * `bw_lo` / `inflight_lo`: once per round with loss (or CE marks), outside probing, cut
//!   to 0.7 (ECN: to 1 - alpha/3) but never below the latest round's delivery rate and
//!   volume (`bw_latest`, `inflight_latest`). Reset when probing starts.
//! * The ECN alpha: an EWMA (gain 1/16) of the CE-marked share of delivered packets, updated
//!   once per round once the flow is ECN-eligible.
//! * ACK aggregation (`extra_acked`), as in version 1 but applied from the start, with
//!   one-round slots in STARTUP.

use super::super::bbr_common::EXTRA_ACKED_WIN_RTTS;
use super::{
    Bbr3, Mode, Phase, BBR_SCALE, BBR_UNIT, BETA, CWND_MIN_TARGET, ECN_ALPHA_GAIN, ECN_FACTOR,
    ECN_MAX_RTT_US, ECN_THRESH, INFLIGHT_HEADROOM, LOSS_THRESH,
};
use crate::cc::{RateSample, TcpState};
use crate::rate::TxRecord;

/// `bbr_inflight_hi_from_lost_skb()`: the inflight at which a lost segment's flight crossed
/// the loss threshold. With `inflight_prev = tx_in_flight - pcount` packets in flight before
/// the segment and `lost_prev = lost - pcount` of them lost, solve
/// `(lost_prev + x) / (inflight_prev + x) >= LOSS_THRESH` for the prefix `x` of the segment,
/// in fixed point, rounded up. `u32::MAX` (no bound) for inconsistent inputs.
pub fn inflight_hi_from_lost_skb(tx_in_flight: u32, lost: u32, pcount: u32) -> u32 {
    let inflight_prev = tx_in_flight.wrapping_sub(pcount) as i32;
    if inflight_prev < 0 {
        return u32::MAX;
    }
    let lost_prev = lost.wrapping_sub(pcount) as i32;
    if lost_prev < 0 {
        return u32::MAX;
    }
    // Losses the flight before this segment could take without crossing the threshold.
    let loss_budget =
        (inflight_prev as u64 * LOSS_THRESH as u64 + BBR_UNIT as u64 - 1) >> BBR_SCALE;
    let lost_prefix = if lost_prev as u64 >= loss_budget {
        0
    } else {
        ((loss_budget - lost_prev as u64) << BBR_SCALE) / (BBR_UNIT - LOSS_THRESH) as u64
    };
    (inflight_prev as u64 + lost_prefix) as u32
}

impl Bbr3 {
    /// `bbr_max_bw()`: max of the two cycles' slots.
    pub fn max_bw(&self) -> u32 {
        self.bw_hi[0].max(self.bw_hi[1])
    }

    /// `bbr_bw()`: the bandwidth in use, min(bw_hi, bw_lo).
    pub fn bw(&self) -> u32 {
        self.max_bw().min(self.bw_lo)
    }

    /// `bbr_extra_acked()`.
    pub(super) fn extra_acked(&self) -> u32 {
        self.ack_aggr.extra_acked()
    }

    /// `bbr_take_max_bw_sample()`.
    pub(super) fn take_max_bw_sample(&mut self, bw: u32) {
        self.bw_hi[1] = self.bw_hi[1].max(bw);
    }

    /// `bbr_advance_max_bw_filter()`: a new cycle slot, unless the current one is empty.
    pub(super) fn advance_max_bw_filter(&mut self) {
        if self.bw_hi[1] == 0 {
            return;
        }
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// `bbr_is_inflight_too_high()`: more than 2% of `tx_in_flight` lost, or (ECN-eligible)
    /// more than half of `delivered` CE-marked.
    pub(super) fn is_inflight_too_high(&self, rs: &RateSample) -> bool {
        if rs.lost > 0 && rs.tx_in_flight != 0 {
            let loss_thresh = ((rs.tx_in_flight as u64 * LOSS_THRESH as u64) >> BBR_SCALE) as u32;
            if rs.lost > loss_thresh {
                return true;
            }
        }
        if rs.delivered_ce > 0 && rs.delivered > 0 && self.ecn_eligible && ECN_THRESH != 0 {
            let ecn_thresh = (rs.delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE;
            if rs.delivered_ce as u64 > ecn_thresh {
                return true;
            }
        }
        false
    }

    /// `bbr_handle_inflight_too_high()`: probing went too far. Remember it, stop reacting to
    /// this probe's samples, set `inflight_hi` (unless app-limited) and, in UP, go DOWN.
    pub(super) fn handle_inflight_too_high(&mut self, tp: &TcpState, rs: &RateSample) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        if !rs.is_app_limited {
            let cut = (self.target_inflight(tp) as u64 * (BBR_UNIT - BETA) as u64) >> BBR_SCALE;
            self.inflight_hi = rs.tx_in_flight.max(cut as u32);
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr_inflight_with_headroom()`: `inflight_hi` less 15% (at least 1), at least 4.
    pub(super) fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == u32::MAX {
            return u32::MAX;
        }
        let headroom = ((self.inflight_hi as u64 * INFLIGHT_HEADROOM as u64) >> BBR_SCALE) as u32;
        let headroom = headroom.max(1);
        (self.inflight_hi.wrapping_sub(headroom) as i32).max(CWND_MIN_TARGET as i32) as u32
    }

    /// `bbr_bound_cwnd_for_inflight_model()`: cap cwnd by `inflight_hi` while probing (all of
    /// it in UP, REFILL and DOWN; with headroom in CRUISE and PROBE_RTT), and always by
    /// `inflight_lo`; never below 4.
    pub(super) fn bound_cwnd_for_inflight_model(&mut self, tp: &mut TcpState) {
        if !self.initialized {
            return;
        }
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        tp.snd_cwnd = cap.min(tp.snd_cwnd);
    }

    /// `bbr_ecn_cut()`: 1 - alpha * ecn_factor.
    pub(super) fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    /// `bbr_init_lower_bounds()`: seed unset lower bounds from the model and cwnd.
    fn init_lower_bounds(&mut self, tp: &TcpState, init_bw: bool) {
        if init_bw && self.bw_lo == u32::MAX {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == u32::MAX {
            self.inflight_lo = tp.snd_cwnd;
        }
    }

    /// `bbr_loss_lower_bounds()`: the lower bounds cut to 1 - beta, but not below the latest
    /// round's delivery.
    fn loss_lower_bounds(&self) -> (u32, u32) {
        let loss_cut = (BBR_UNIT - BETA) as u64;
        let bw = self
            .bw_latest
            .max(((self.bw_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        let inflight = self
            .inflight_latest
            .max(((self.inflight_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        (bw, inflight)
    }

    /// `bbr_ecn_lower_bounds()`: `inflight_lo` cut by the ECN alpha.
    fn ecn_lower_bounds(&self) -> u32 {
        ((self.inflight_lo as u64 * self.ecn_cut() as u64) >> BBR_SCALE) as u32
    }

    /// `bbr_adapt_lower_bounds()`: once per round, outside bandwidth probing, cut the lower
    /// bounds for the round's CE marks and losses.
    pub(super) fn adapt_lower_bounds(&mut self, tp: &TcpState) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = u32::MAX;
        if self.ecn_in_round && ECN_FACTOR != 0 {
            self.init_lower_bounds(tp, false);
            ecn_inflight_lo = self.ecn_lower_bounds();
        }
        if self.loss_in_round {
            self.init_lower_bounds(tp, true);
            (self.bw_lo, self.inflight_lo) = self.loss_lower_bounds();
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        self.bw_lo = self.bw_lo.max(1);
    }

    /// `bbr_reset_lower_bounds()`.
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = u32::MAX;
        self.inflight_lo = u32::MAX;
    }

    /// `bbr_reset_congestion_signals()`: before a phase that adapts the lower bounds.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// `bbr_update_latest_delivery_signals()`: the round's max delivery rate and volume, and
    /// the loss round's boundary.
    pub(super) fn update_latest_delivery_signals(
        &mut self,
        tp: &TcpState,
        rs: &RateSample,
        sample_bw: u32,
    ) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered as u32);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_advance_latest_delivery_signals()`: a new loss round starts the latest-delivery
    /// filter over, except on the ACK of a TLP retransmission (what the path delivered
    /// before a tail loss is worth keeping).
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.loss_round_start && !rs.is_acking_tlp_retrans_seq {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered as u32;
        }
    }

    /// `bbr_update_congestion_signals()`: feed `bw_hi`, note loss, and once per loss round
    /// adapt the lower bounds.
    pub(super) fn update_congestion_signals(
        &mut self,
        tp: &TcpState,
        rs: &RateSample,
        sample_bw: u32,
    ) {
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_max_bw_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if !self.loss_round_start {
            return;
        }
        self.adapt_lower_bounds(tp);
        self.loss_in_round = false;
        self.ecn_in_round = false;
    }

    /// `bbr_update_ecn_alpha()`: become ECN-eligible if ECN may be used and min_rtt is at
    /// most 5 ms; then, once per round, fold the round's CE ratio into alpha. Returns the CE
    /// ratio (scaled by 256), or -1 when there is none.
    pub(super) fn update_ecn_alpha(&mut self, tp: &TcpState) -> i32 {
        if !self.ecn_eligible
            && self.can_use_ecn(tp)
            && ECN_FACTOR != 0
            && (self.min_rtt_us <= ECN_MAX_RTT_US || ECN_MAX_RTT_US == 0)
        {
            self.ecn_eligible = true;
        }
        // PLB is not modelled (disabled, as the kernel's default), so only eligibility counts.
        if !self.ecn_eligible {
            return -1;
        }
        let delivered = tp.delivered.wrapping_sub(self.alpha_last_delivered) as u32 as i32;
        let delivered_ce = tp.delivered_ce.wrapping_sub(self.alpha_last_delivered_ce) as u32 as i32;
        if delivered <= 0 || delivered_ce < 0 {
            return -1;
        }
        let ce_ratio = ((delivered_ce as u64) << BBR_SCALE) / delivered as u64;
        let gain = ECN_ALPHA_GAIN as u64;
        let mut alpha = ((BBR_UNIT as u64 - gain) * self.ecn_alpha as u64) >> BBR_SCALE;
        alpha += (gain * ce_ratio) >> BBR_SCALE;
        self.ecn_alpha = alpha.min(BBR_UNIT as u64) as u32;
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio as u32);
        ce_ratio as i32
    }

    /// `bbr_note_loss()`: this round has loss; the loss round runs until a packet sent from
    /// now on is delivered.
    pub(super) fn note_loss(&mut self, tp: &TcpState) {
        if !self.loss_in_round {
            self.loss_round_delivered = tp.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr_skb_marked_lost()`: while probing, build a sample of the flight that ended in
    /// this lost segment (`pcount` packets) and, if its loss rate is too high, set
    /// `inflight_hi` to where the threshold was crossed.
    pub(super) fn on_skb_marked_lost(&mut self, tp: &TcpState, tx: &TxRecord, pcount: u32) {
        self.note_loss(tp);
        if !self.bw_probe_samples {
            return; // not sent while probing
        }
        if tx.delivered_mstamp_us == 0 {
            return; // already delivered (SACKed) before being marked
        }
        let mut rs = RateSample {
            delivered: 0,
            interval_us: 0,
            rtt_us: 0,
            tx_in_flight: tx.in_flight,
            lost: tp.lost.wrapping_sub(tx.lost) as u32,
            is_app_limited: tx.is_app_limited,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            rs.tx_in_flight = inflight_hi_from_lost_skb(rs.tx_in_flight, rs.lost, pcount);
            self.handle_inflight_too_high(tp, &rs);
        }
    }

    /// `bbr_run_loss_probe_recovery()`: a TLP repaired the loss of one segment; judge it as
    /// a flight of the latest round's volume plus that segment.
    pub(super) fn run_loss_probe_recovery(&mut self, tp: &TcpState) {
        self.note_loss(tp);
        if !self.bw_probe_samples {
            return;
        }
        let rs = RateSample {
            delivered: 0,
            interval_us: 0,
            rtt_us: 0,
            lost: 1,
            tx_in_flight: self.inflight_latest.wrapping_add(1),
            is_app_limited: tp.app_limited != 0,
            ..RateSample::default()
        };
        if self.is_inflight_too_high(&rs) {
            self.handle_inflight_too_high(tp, &rs);
        }
    }

    /// `bbr_update_ack_aggregation()`: as version 1, but the slots turn every round until
    /// the pipe is full.
    pub(super) fn update_ack_aggregation(&mut self, tp: &TcpState, rs: &RateSample) {
        let thresh = if self.full_bw_reached {
            EXTRA_ACKED_WIN_RTTS
        } else {
            1
        };
        let bw = self.bw();
        self.ack_aggr.update(tp, rs, bw, self.round_start, thresh);
    }

    /// `bbr_ack_aggregation_cwnd()`: the aggregation allowance, at most 100 ms of bw.
    pub(super) fn ack_aggregation_cwnd(&self) -> u32 {
        self.ack_aggr.cwnd(self.bw())
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::*;
    use super::super::*;
    use super::*;

    fn cc_probe_bw() -> (TcpState, Bbr3) {
        let mut tp = TcpState::new(MSS, 10);
        tp.hz = 1000;
        let mut cc = Bbr3::new(3, false);
        cc.init(&mut tp);
        cc.min_rtt_us = 10_000;
        cc.bw_hi = [((1u64 << 24) / 100) as u32, 0]; // 0.01 pkt/us: BDP 100
        cc.full_bw_reached = true;
        cc.mode = Mode::ProbeBw;
        cc.cycle_idx = Phase::Cruise;
        tp.snd_cwnd = 200;
        tp.pacing_rate = 100_000;
        (tp, cc)
    }

    #[test]
    fn bw_hi_is_a_two_cycle_max() {
        let (_, mut cc) = cc_probe_bw();
        cc.bw_hi = [0, 0];
        cc.take_max_bw_sample(100);
        cc.take_max_bw_sample(80);
        assert_eq!(cc.max_bw(), 100);
        cc.advance_max_bw_filter(); // cycle 2 begins
        assert_eq!(cc.bw_hi, [100, 0]);
        cc.take_max_bw_sample(60);
        assert_eq!(cc.max_bw(), 100, "the previous cycle still counts");
        cc.advance_max_bw_filter(); // cycle 3: cycle 1's 100 is forgotten
        assert_eq!(cc.max_bw(), 60);
        // An empty cycle does not push the last one out.
        cc.advance_max_bw_filter();
        assert_eq!(cc.bw_hi, [60, 0]);
        cc.advance_max_bw_filter();
        assert_eq!(cc.max_bw(), 60);
        // bw() is capped by bw_lo.
        cc.bw_lo = 50;
        assert_eq!(cc.bw(), 50);
    }

    #[test]
    fn inflight_too_high_thresholds() {
        let (_, mut cc) = cc_probe_bw();
        let rs = |tx, lost| RateSample {
            tx_in_flight: tx,
            lost,
            ..RateSample::default()
        };
        // 2% of 1000 is 1000 * 5 >> 8 = 19 packets: 19 lost is fine, 20 is too many.
        assert!(!cc.is_inflight_too_high(&rs(1000, 19)));
        assert!(cc.is_inflight_too_high(&rs(1000, 20)));
        // Below 52 packets in flight the threshold is 0: any loss is too high.
        assert!(cc.is_inflight_too_high(&rs(51, 1)));
        assert!(!cc.is_inflight_too_high(&rs(52, 1)));
        assert!(!cc.is_inflight_too_high(&rs(0, 5)));
        // CE marks count only when ECN-eligible: more than half of delivered.
        let ce = |delivered, ce| RateSample {
            delivered,
            delivered_ce: ce,
            ..RateSample::default()
        };
        assert!(!cc.is_inflight_too_high(&ce(100, 90)));
        cc.ecn_eligible = true;
        assert!(!cc.is_inflight_too_high(&ce(100, 50)));
        assert!(cc.is_inflight_too_high(&ce(100, 51)));
    }

    #[test]
    fn inflight_hi_from_lost_skb_worked_examples() {
        // 500 in flight before the segment, 9 of them lost: the budget is
        // ceil(500 * 5 / 256) = 10 losses, so 1 more is allowed; the prefix of the segment
        // at which the rate crosses 2% is 1 * 256 / (256 - 5) = 1.02 -> 1: inflight_hi 501.
        assert_eq!(inflight_hi_from_lost_skb(501, 10, 1), 501);
        // 1000 before, 4 lost: budget (5000 + 255) >> 8 = 20, prefix (16 << 8) / 251 = 16.
        assert_eq!(inflight_hi_from_lost_skb(1001, 5, 1), 1016);
        // Earlier losses already crossed it: the flight before this segment.
        assert_eq!(inflight_hi_from_lost_skb(201, 10, 1), 200);
        // Inconsistent records: no bound.
        assert_eq!(inflight_hi_from_lost_skb(0, 1, 1), u32::MAX);
        assert_eq!(inflight_hi_from_lost_skb(10, 0, 1), u32::MAX);
    }

    #[test]
    fn lost_skb_while_probing_sets_inflight_hi_and_ends_up() {
        let (mut tp, mut cc) = cc_probe_bw();
        cc.cycle_idx = Phase::Up;
        cc.bw_probe_samples = true;
        tp.lost = 110;
        tp.delivered = 5000;
        let tx = TxRecord {
            delivered_mstamp_us: 1,
            in_flight: 501,
            lost: 100, // 10 lost since it was sent, itself included
            ..TxRecord::default()
        };
        cc.skb_marked_lost(&mut tp, &tx);
        // max(501 from the lost segment, 0.7 x target inflight = 102 * 180 >> 8 = 71).
        assert_eq!(cc.inflight_hi, 501);
        assert!(cc.prev_probe_too_high);
        assert!(!cc.bw_probe_samples, "only once per probe");
        assert_eq!(cc.cycle_idx, Phase::Down, "UP ends at once");
        // The loss was noted, then DOWN started a new cycle with clean signals (the kernel's
        // order: bbr_note_loss() before bbr_start_bw_probe_down()).
        assert!(!cc.loss_in_round && !cc.loss_in_cycle);
        assert_eq!(cc.loss_round_delivered, tp.delivered);

        // Not probing: only noted as a loss.
        let (mut tp, mut cc) = cc_probe_bw();
        tp.lost = 110;
        cc.skb_marked_lost(&mut tp, &tx);
        assert_eq!(cc.inflight_hi, u32::MAX);
        assert!(cc.loss_in_round);
        assert_eq!(cc.loss_round_delivered, tp.delivered);

        // App-limited transmissions do not set inflight_hi (but still end the probe).
        let (mut tp, mut cc) = cc_probe_bw();
        cc.cycle_idx = Phase::Up;
        cc.bw_probe_samples = true;
        tp.lost = 110;
        let tx_al = TxRecord {
            is_app_limited: true,
            ..tx
        };
        cc.skb_marked_lost(&mut tp, &tx_al);
        assert_eq!(cc.inflight_hi, u32::MAX);
        assert_eq!(cc.cycle_idx, Phase::Down);
    }

    #[test]
    fn tlp_recovery_judges_latest_flight() {
        let (mut tp, mut cc) = cc_probe_bw();
        cc.cycle_idx = Phase::Up;
        cc.bw_probe_samples = true;
        cc.inflight_latest = 40; // 41 in flight, 1 lost: 2% of 41 is 0
        cc.cwnd_event(&mut tp, CaEvent::TlpRecovery);
        // max(41, 0.7 x target inflight): the target is the BDP (100) plus UP's 2 packets,
        // and 102 * 180 >> 8 = 71.
        assert_eq!(cc.inflight_hi, 71);
        assert_eq!(cc.cycle_idx, Phase::Down);
        // A large flight tolerates one loss.
        let (mut tp, mut cc) = cc_probe_bw();
        cc.cycle_idx = Phase::Up;
        cc.bw_probe_samples = true;
        cc.inflight_latest = 200;
        cc.cwnd_event(&mut tp, CaEvent::TlpRecovery);
        assert_eq!(cc.inflight_hi, u32::MAX);
        assert!(cc.loss_in_round);
    }

    #[test]
    fn loss_cuts_lower_bounds_to_0_7_but_not_below_latest_delivery() {
        let (tp, mut cc) = cc_probe_bw();
        cc.loss_in_round = true;
        cc.bw_latest = 1000;
        cc.inflight_latest = 50;
        // First lossy round: bounds seeded from max_bw and cwnd, then cut by 180/256.
        cc.adapt_lower_bounds(&tp);
        let bw0 = cc.max_bw() as u64;
        assert_eq!(cc.bw_lo as u64, (bw0 * 180) >> 8);
        assert_eq!(cc.inflight_lo, 140); // 200 * 180 >> 8
                                         // Next lossy round: 140 -> 98.
        cc.adapt_lower_bounds(&tp);
        assert_eq!(cc.inflight_lo, 98);
        // The latest round delivered more than the cut: the cut stops there.
        cc.inflight_latest = 90;
        cc.bw_latest = 150_000;
        cc.adapt_lower_bounds(&tp);
        assert_eq!(cc.inflight_lo, 90);
        assert_eq!(cc.bw_lo, 150_000);
        assert_eq!(cc.bw(), 150_000);
        // Not while probing.
        cc.cycle_idx = Phase::Refill;
        cc.inflight_latest = 0;
        cc.adapt_lower_bounds(&tp);
        assert_eq!(cc.inflight_lo, 90);
        // Refill resets them.
        cc.reset_lower_bounds();
        assert_eq!((cc.bw_lo, cc.inflight_lo), (u32::MAX, u32::MAX));
    }

    #[test]
    fn ecn_alpha_ewma_and_cut() {
        let (mut tp, mut cc) = cc_probe_bw();
        cc.ecn_low = true;
        tp.ecn_ok = true;
        cc.min_rtt_us = 6_000;
        assert_eq!(cc.update_ecn_alpha(&tp), -1, "min_rtt above 5 ms");
        assert!(!cc.ecn_eligible);
        cc.min_rtt_us = 5_000;
        tp.delivered = 100;
        tp.delivered_ce = 0;
        assert_eq!(cc.update_ecn_alpha(&tp), 0);
        assert!(cc.ecn_eligible);
        // alpha 256 * 240 >> 8 = 240.
        assert_eq!(cc.ecn_alpha, 240);
        // A round with half the packets marked: ratio 128; 240 * 240 >> 8 = 225, + 16 * 128
        // >> 8 = 8: 233.
        tp.delivered = 200;
        tp.delivered_ce = 50;
        assert_eq!(cc.update_ecn_alpha(&tp), 128);
        assert_eq!(cc.ecn_alpha, 233);
        // ecn_cut = 256 - 233 * 85 >> 8 = 256 - 77 = 179.
        assert_eq!(cc.ecn_cut(), 179);
        cc.ecn_in_round = true;
        cc.inflight_lo = 100;
        cc.adapt_lower_bounds(&tp);
        assert_eq!(cc.inflight_lo, 69); // 100 * 179 >> 8
                                        // Without ecn_low (or negotiation) never eligible.
        let (mut tp, mut cc) = cc_probe_bw();
        tp.ecn_ok = true;
        cc.min_rtt_us = 1_000;
        assert_eq!(cc.update_ecn_alpha(&tp), -1);
        assert!(!cc.ecn_eligible);
    }

    #[test]
    fn headroom_and_cwnd_bounds_by_phase() {
        let (mut tp, mut cc) = cc_probe_bw();
        cc.inflight_hi = 100;
        // 15%: 100 * 38 >> 8 = 14 -> 86.
        assert_eq!(cc.inflight_with_headroom(), 86);
        cc.inflight_hi = 5;
        assert_eq!(cc.inflight_with_headroom(), 4); // headroom 1, floor 4
        cc.inflight_hi = 100;
        tp.snd_cwnd = 300;
        cc.cycle_idx = Phase::Cruise;
        cc.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 86);
        tp.snd_cwnd = 300;
        cc.cycle_idx = Phase::Up;
        cc.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 100);
        tp.snd_cwnd = 300;
        cc.inflight_lo = 60;
        cc.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 60);
        tp.snd_cwnd = 300;
        cc.mode = Mode::Startup;
        cc.inflight_lo = u32::MAX;
        cc.bound_cwnd_for_inflight_model(&mut tp);
        assert_eq!(tp.snd_cwnd, 300, "no upper bound in STARTUP");
    }

    #[test]
    fn latest_delivery_signals_follow_loss_rounds() {
        let (mut tp, mut cc) = cc_probe_bw();
        cc.loss_round_delivered = 1000;
        tp.delivered = 1100;
        let rs = RateSample {
            prior_delivered: 990,
            delivered: 30,
            interval_us: 10_000,
            acked_sacked: 1,
            ..RateSample::default()
        };
        cc.update_latest_delivery_signals(&tp, &rs, 500);
        assert!(!cc.loss_round_start);
        assert_eq!((cc.bw_latest, cc.inflight_latest), (500, 30));
        let rs2 = RateSample {
            prior_delivered: 1000,
            delivered: 20,
            ..rs
        };
        cc.update_latest_delivery_signals(&tp, &rs2, 400);
        assert!(cc.loss_round_start);
        assert_eq!(cc.loss_round_delivered, 1100);
        // Max over the round so far, then restarted from this sample.
        assert_eq!((cc.bw_latest, cc.inflight_latest), (500, 30));
        cc.advance_latest_delivery_signals(&rs2, 400);
        assert_eq!((cc.bw_latest, cc.inflight_latest), (400, 20));
        // ... but not on the ACK of a TLP retransmission.
        cc.bw_latest = 900;
        let rs3 = RateSample {
            is_acking_tlp_retrans_seq: true,
            ..rs2
        };
        cc.advance_latest_delivery_signals(&rs3, 400);
        assert_eq!(cc.bw_latest, 900);
    }

    #[test]
    fn ack_aggregation_counts_from_the_start() {
        let mut tp = TcpState::new(MSS, 10);
        let mut cc = Bbr3::new(2, false);
        cc.init(&mut tp);
        cc.bw_hi = [((1u64 << 24) / 100) as u32, 0];
        tp.snd_cwnd = 1000;
        let rs = RateSample {
            delivered: 1,
            interval_us: 1000,
            acked_sacked: 30,
            ..RateSample::default()
        };
        cc.update_ack_aggregation(&tp, &rs);
        tp.delivered_mstamp_us = 1000;
        cc.update_ack_aggregation(&tp, &rs);
        // 60 acked, 9 expected in 1 ms at 0.01 pkt/us.
        assert_eq!(cc.extra_acked(), 51);
        // Unlike version 1, already in use before the pipe is full.
        assert!(!cc.full_bw_reached);
        assert_eq!(cc.ack_aggregation_cwnd(), 51);
        // In STARTUP the slot turns every round.
        cc.round_start = true;
        cc.update_ack_aggregation(&tp, &rs);
        assert_eq!(cc.ack_aggr.win_idx, 1);
    }

    #[test]
    fn closed_loop_probe_sets_inflight_hi_in_a_shallow_buffer() {
        // 10 pkt/ms, 20 ms, a 20-packet buffer: STARTUP overflows it, and later probes find
        // the ceiling too; inflight_hi ends near BDP + buffer (~220) and cwnd never goes far
        // beyond it once set.
        let mut path = Path::new(5, 10, 20);
        path.buffer_pkts = Some(20);
        path.run_until(20_000_000_000);
        let cc = &path.cc;
        assert!(cc.full_bw_reached);
        let hi = cc.inflight_hi;
        assert!(hi != u32::MAX, "inflight_hi never set");
        assert!((150..=300).contains(&hi), "inflight_hi {hi}");
        let drops = path.drops;
        assert!(drops > 0);
        // Few losses once the bounds are learnt: the last 10 s lose under 1% of packets.
        let late: u64 = path
            .trace
            .iter()
            .filter(|r| r.now_ns > 10_000_000_000)
            .map(|r| r.losses as u64)
            .sum();
        let sent_late = path
            .trace
            .iter()
            .filter(|r| r.now_ns > 10_000_000_000)
            .count() as u64;
        assert!(late * 100 < sent_late, "{late} losses in {sent_late} ACKs");
    }
}
