//! DRAIN: pace at 1/2.885 of the bandwidth (cwnd gain still 2) until the packets in the
//! network are down to one BDP (with the quantization budget), then PROBE_BW, starting
//! with DOWN. Entering DRAIN publishes that BDP as ssthresh (for monitoring only: BBR does not
//! use it) and clears the congestion signals STARTUP gathered.

use super::{Bbr3, Mode, BBR_UNIT};
use crate::cc::TcpState;

impl Bbr3 {
    /// `bbr_check_drain()`: STARTUP -> DRAIN once the pipe is full, and DRAIN -> PROBE_BW
    /// (DOWN) once in-network data fits the BDP, possibly on the same ACK.
    pub(super) fn check_drain(&mut self, tp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::*;
    use super::super::*;

    #[test]
    fn drain_waits_for_inflight_at_bdp_then_probe_bw_down() {
        let mut tp = TcpState::new(MSS, 10);
        tp.hz = 1000;
        tp.now_us = 5_000_000;
        let mut cc = Bbr3::new(1, false);
        cc.init(&mut tp);
        cc.min_rtt_us = 20_000;
        cc.bw_hi = [0, ((1u64 << 24) / 100) as u32]; // BDP 200
        tp.pacing_rate = 100_000;
        cc.loss_in_round = true;
        cc.inflight_latest = 77;
        cc.full_bw_reached = true;
        tp.packets_out = 450;
        cc.check_drain(&mut tp);
        assert_eq!(cc.mode, Mode::Drain);
        assert_eq!(tp.snd_ssthresh, 200);
        assert!(
            !cc.loss_in_round && cc.inflight_latest == 0,
            "signals reset"
        );
        cc.update_gains();
        assert_eq!(
            (cc.pacing_gain, cc.cwnd_gain),
            (DRAIN_GAIN, STARTUP_CWND_GAIN)
        );
        tp.packets_out = 201;
        cc.check_drain(&mut tp);
        assert_eq!(cc.mode, Mode::Drain);
        tp.packets_out = 200;
        cc.check_drain(&mut tp);
        assert_eq!(cc.mode, Mode::ProbeBw);
        assert_eq!(cc.cycle_idx, Phase::Down);
        assert_eq!(cc.cycle_mstamp, 5_000_000);
        assert_eq!(cc.ack_phase, AckPhase::ProbeStopping);
        // The probe wait was drawn: 2-3 s and 0-1 rounds.
        assert!((2_000_000..3_000_000).contains(&cc.probe_wait_us));
        assert!(cc.rounds_since_probe <= 1);

        // Already drained when STARTUP ends: straight through on the same ACK.
        let mut cc2 = Bbr3::new(1, false);
        let mut tp2 = TcpState::new(MSS, 10);
        cc2.init(&mut tp2);
        cc2.min_rtt_us = 20_000;
        cc2.bw_hi = [0, ((1u64 << 24) / 100) as u32];
        cc2.full_bw_reached = true;
        tp2.packets_out = 100;
        cc2.check_drain(&mut tp2);
        assert_eq!(cc2.mode, Mode::ProbeBw);
    }
}
