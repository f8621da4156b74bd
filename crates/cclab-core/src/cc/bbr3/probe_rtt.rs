//! min_rtt and PROBE_RTT.
//!
//! Two min filters: `probe_rtt_min_us` over 5 s, which schedules PROBE_RTT, and `min_rtt_us`
//! over 10 s, which takes the 5 s value whenever that is lower or the 10 s one has expired.
//! When 5 s pass without a sample at or below the 5 s minimum (the queue never emptied),
//! and the flow is not restarting from idle, BBR enters PROBE_RTT: cwnd is capped at
//! `max(4, BDP / 2)` (version 1 used 4 packets), the connection is marked app-limited so the
//! low-rate samples do not pull the model down, and once inflight is under the cap it holds
//! for 200 ms and a round trip. It then restores the saved cwnd and goes to PROBE_BW CRUISE
//! (with the lower bounds reset and a fresh probe wait), or to STARTUP if the pipe was never
//! filled.
//!
//! The dwell (app-limited marking, the 200 ms deadline and the round) is version 1's, shared
//! in [`super::super::bbr_common::ProbeRtt`]; the cap, the 5 s filter and the exit are this
//! version's own.

use super::super::bbr_common::{
    after32, jiffies32, msecs_to_jiffies, MIN_RTT_WIN_SEC, PROBE_RTT_MODE_MS,
};
use super::{AckPhase, Bbr3, Mode, CWND_MIN_TARGET, PROBE_RTT_CWND_GAIN, PROBE_RTT_WIN_MS};
use crate::cc::{RateSample, TcpState};

impl Bbr3 {
    /// `bbr_probe_rtt_cwnd()`: half the BDP, at least 4 (version 1: 4 packets).
    pub fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// `bbr_check_probe_rtt_done()`: past the deadline, restart the 5 s clock (version 1
    /// restarts its 10 s min_rtt filter), restore the saved cwnd (never lowering it) and leave.
    pub(super) fn check_probe_rtt_done(&mut self, tp: &mut TcpState) {
        if !self.probe_rtt.deadline_passed(tp) {
            return;
        }
        self.probe_rtt_min_stamp = jiffies32(tp);
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.exit_probe_rtt(tp);
    }

    /// `bbr_exit_probe_rtt()`: back to PROBE_BW, cruising (inflight is below the BDP now)
    /// with a new probe wait, or to STARTUP if the pipe was never filled.
    fn exit_probe_rtt(&mut self, tp: &TcpState) {
        self.reset_lower_bounds();
        if self.full_bw_reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_min_rtt()`.
    pub(super) fn update_min_rtt(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let now = jiffies32(tp);
        let probe_rtt_expired = after32(
            now,
            self.probe_rtt_min_stamp
                .wrapping_add(msecs_to_jiffies(PROBE_RTT_WIN_MS, tp.hz)),
        );
        if rs.rtt_us >= 0
            && (rs.rtt_us < self.probe_rtt_min_us as i64
                || (probe_rtt_expired && !rs.is_ack_delayed))
        {
            self.probe_rtt_min_us = rs.rtt_us as u32;
            self.probe_rtt_min_stamp = now;
        }
        let min_rtt_expired = after32(
            now,
            self.min_rtt_stamp
                .wrapping_add(MIN_RTT_WIN_SEC.wrapping_mul(tp.hz)),
        );
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }

        if PROBE_RTT_MODE_MS > 0
            && probe_rtt_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt.enter();
            // Version 3 only: the probe's feedback stops, and a new round starts.
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }

        if self.mode == Mode::ProbeRtt {
            // Version 3 waits for inflight to reach half the BDP (version 1: 4 packets).
            let drained =
                self.probe_rtt.waiting() && tp.packets_in_flight() <= self.probe_rtt_cwnd();
            let next_rtt_delivered = &mut self.next_rtt_delivered;
            if self
                .probe_rtt
                .on_ack(tp, now, drained, self.round_start, next_rtt_delivered)
            {
                self.check_probe_rtt_done(tp);
            }
        }
        // The idle restart ends with the first ACK that delivers data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::*;
    use super::super::*;

    #[test]
    fn probe_rtt_cwnd_is_half_the_bdp_at_least_4() {
        let mut tp = TcpState::new(MSS, 10);
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        cc.min_rtt_us = 20_000;
        cc.bw_hi = [((1u64 << 24) / 100) as u32, 0]; // BDP 200
        assert_eq!(cc.probe_rtt_cwnd(), 100);
        cc.min_rtt_us = 301; // BDP 3.01 -> half 1.5 -> 2 -> at least 4
        assert_eq!(cc.probe_rtt_cwnd(), 4);
        // It follows bw(), so a lower bound bw_lo shrinks it.
        cc.min_rtt_us = 20_000;
        cc.bw_lo = ((1u64 << 24) / 200) as u32;
        assert_eq!(cc.probe_rtt_cwnd(), 50);
    }

    #[test]
    fn five_second_filter_schedules_probe_rtt_ten_second_filter_keeps_min() {
        let mut tp = TcpState::new(MSS, 10);
        tp.hz = 1000;
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        cc.mode = Mode::ProbeBw;
        cc.full_bw_reached = true;
        let rtt = |us| RateSample {
            rtt_us: us,
            delivered: 1,
            ..RateSample::default()
        };
        tp.now_ns = 1_000_000_000;
        cc.update_min_rtt(&mut tp, &rtt(10_000));
        assert_eq!((cc.probe_rtt_min_us, cc.min_rtt_us), (10_000, 10_000));
        // Higher samples do not move either filter until 5 s have passed.
        tp.now_ns = 6_000_000_000; // exactly 5 s: not yet expired
        cc.update_min_rtt(&mut tp, &rtt(12_000));
        assert_eq!(cc.mode, Mode::ProbeBw);
        tp.now_ns = 6_001_000_000;
        cc.update_min_rtt(&mut tp, &rtt(12_000));
        assert_eq!(cc.mode, Mode::ProbeRtt);
        // The expired 5 s filter took the sample; the 10 s one kept 10 ms.
        assert_eq!(
            (cc.probe_rtt_min_us, cc.probe_rtt_min_stamp),
            (12_000, 6_001)
        );
        assert_eq!(cc.min_rtt_us, 10_000);
        assert_eq!(cc.ack_phase, AckPhase::ProbeStopping);
        // Delayed ACKs do not refresh an expired filter.
        let mut cc2 = Bbr3::new(0, false);
        let mut tp2 = TcpState::new(MSS, 10);
        tp2.hz = 1000;
        cc2.init(&mut tp2);
        tp2.now_ns = 1_000_000_000;
        cc2.update_min_rtt(&mut tp2, &rtt(10_000));
        tp2.now_ns = 11_001_000_000;
        let delayed = RateSample {
            is_ack_delayed: true,
            ..rtt(15_000)
        };
        cc2.update_min_rtt(&mut tp2, &delayed);
        assert_eq!(cc2.probe_rtt_min_us, 10_000);
        // ...but the 10 s filter, expired too, copies the 5 s one's (old) value and stamp.
        assert_eq!(cc2.min_rtt_stamp, 1_000);
    }

    #[test]
    fn idle_restart_defers_probe_rtt() {
        let mut tp = TcpState::new(MSS, 10);
        tp.hz = 1000;
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        cc.mode = Mode::ProbeBw;
        tp.app_limited = 5;
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        assert!(cc.idle_restart);
        tp.now_ns = 6_000_000_000;
        let rs = RateSample {
            rtt_us: 30_000,
            delivered: 0,
            ..RateSample::default()
        };
        cc.update_min_rtt(&mut tp, &rs);
        assert_eq!(cc.mode, Mode::ProbeBw);
        assert!(cc.idle_restart, "no data delivered yet");
    }

    #[test]
    fn closed_loop_probe_rtt_every_5s_at_half_bdp() {
        // 10 pkt/ms, 20 ms. At 1 s the path lengthens by 2 ms, so no later sample matches the
        // 5 s minimum and PROBE_RTT comes every 5 s (plus its own 200 ms and a round).
        let mut path = Path::new(11, 10, 20);
        path.prop_change = Some((1_000_000_000, 22_000_000));
        path.run_until(17_000_000_000);
        let tr = &path.trace;
        let mut entries = Vec::new();
        for w in tr.windows(2) {
            if w[0].mode != Mode::ProbeRtt && w[1].mode == Mode::ProbeRtt {
                entries.push(w[1]);
            }
        }
        assert!(entries.len() >= 2, "{} PROBE_RTTs", entries.len());
        for w in entries.windows(2) {
            let gap_ms = (w[1].now_ns - w[0].now_ns) / 1_000_000;
            assert!(
                (5_000..5_400).contains(&gap_ms),
                "PROBE_RTT every {gap_ms} ms"
            );
        }
        for e in &entries {
            let enter = tr.iter().position(|r| r.now_ns == e.now_ns).unwrap();
            let exit = enter
                + tr[enter..]
                    .iter()
                    .position(|r| r.mode != Mode::ProbeRtt)
                    .unwrap();
            let cap = tr[enter..exit].iter().map(|r| r.cwnd).min().unwrap();
            // Half the BDP of the min_rtt in use (20.1 ms until the 10 s filter expires and
            // takes the 5 s filter's 22.1 ms).
            let bdp = 10.0 * tr[enter].min_rtt_us as f64 / 1000.0;
            assert!(
                (cap as f64 - bdp / 2.0).abs() <= 0.06 * bdp,
                "PROBE_RTT cwnd {cap}, BDP {bdp}"
            );
            for r in &tr[enter..exit] {
                assert!(r.app_limited != 0);
            }
            let dwell_ms = (tr[exit].now_ns - tr[enter].now_ns) / 1_000_000;
            assert!((200..320).contains(&dwell_ms), "dwell {dwell_ms} ms");
            // Back to PROBE_BW cruising, cwnd restored.
            assert_eq!(tr[exit].mode, Mode::ProbeBw);
            assert_eq!(tr[exit].phase, Phase::Cruise);
            assert!(tr[exit].cwnd > cap);
        }
    }

    #[test]
    fn probe_rtt_without_full_pipe_returns_to_startup() {
        let mut tp = TcpState::new(MSS, 10);
        tp.hz = 1000;
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        cc.mode = Mode::ProbeRtt;
        cc.prior_cwnd = 77;
        tp.snd_cwnd = 4;
        tp.now_ns = 2_000_000_000;
        cc.probe_rtt.done_stamp = 2_000;
        cc.check_probe_rtt_done(&mut tp);
        assert_eq!(cc.mode, Mode::ProbeRtt, "not strictly after the deadline");
        tp.now_ns = 2_001_000_000;
        cc.check_probe_rtt_done(&mut tp);
        assert_eq!(cc.mode, Mode::Startup);
        assert_eq!(tp.snd_cwnd, 77);
        assert_eq!(cc.probe_rtt_min_stamp, 2_001);
    }
}
