//! What the model sets on each ACK: the pacing rate (`bbr_set_pacing_rate()`), the TSO burst
//! (`bbr_tso_segs_generic()`), the BDP and inflight targets with their quantization budget,
//! cwnd (`bbr_set_cwnd()`) and the gains of each mode (`bbr_update_gains()`); and what it
//! reports in bytes per second (`bbr_get_info()`).

use super::{
    common, Bbr3, Bbr3Info, Mode, Phase, BBR_UNIT, BW_PROBE_CWND_GAIN, BW_SCALE, CWND_GAIN,
    CWND_MIN_TARGET, DRAIN_GAIN, GSO_LEGACY_MAX_SIZE, MAX_TCP_HEADER, PACING, PACING_GAIN,
    SK_PACING_SHIFT, STARTUP_CWND_GAIN, STARTUP_PACING_GAIN, TSO_RTT_SHIFT,
};
use crate::cc::{CaState, RateSample, TcpState};

// ---- Small helpers ----

/// `bbr_rate_bytes_per_sec()`: scaled bw times gain in bytes per second, `margin` percent
/// under, at least 1. Multiplication order as the kernel's, to stay within 64 bits.
pub(super) fn rate_bytes_per_sec(tp: &TcpState, rate: u64, gain: u32, margin: u64) -> u64 {
    common::rate_bytes_per_sec(tp, rate, gain, margin).max(1)
}

/// `bbr_bw_bytes_per_sec()`: no gain, no margin.
pub(super) fn bw_bytes_per_sec(tp: &TcpState, bw: u32) -> u64 {
    rate_bytes_per_sec(tp, bw as u64, BBR_UNIT, 0)
}

/// `bbr_bw_to_pacing_rate()`: with the 1% margin, capped by `max_pacing_rate`.
pub fn bw_to_pacing_rate(tp: &TcpState, bw: u32, gain: u32) -> u64 {
    PACING.bw_to_pacing_rate(tp, bw, gain)
}

/// `bbr_calculate_bw_sample()`: delivered / interval in pkts/us << 24, rounded up so that a
/// slow flow can still grow; 0 for an invalid sample.
pub(super) fn bw_sample(rs: &RateSample) -> u32 {
    if rs.interval_us <= 0 || rs.delivered < 0 {
        return 0;
    }
    ((rs.delivered as u64) << BW_SCALE).div_ceil(rs.interval_us as u64) as u32
}

impl Bbr3 {
    /// The values the kernel exports via inet_diag (`bbr_get_info()`).
    pub fn info(&self, tp: &TcpState) -> Bbr3Info {
        Bbr3Info {
            bw_bytes_per_sec: bw_bytes_per_sec(tp, self.bw()),
            bw_hi_bytes_per_sec: bw_bytes_per_sec(tp, self.max_bw()),
            bw_lo_bytes_per_sec: if self.bw_lo == u32::MAX {
                u64::MAX
            } else {
                bw_bytes_per_sec(tp, self.bw_lo)
            },
            min_rtt_us: self.min_rtt_us,
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
            mode: self.mode,
            phase: self.mode_str(),
            inflight_lo: self.inflight_lo,
            inflight_hi: self.inflight_hi,
            extra_acked: self.extra_acked(),
        }
    }

    // ---- Rates ----

    /// `bbr_init_pacing_rate_from_rtt()`: before any bw sample, STARTUP's gain times cwnd
    /// per srtt (1 ms without an RTT sample).
    pub(super) fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        PACING.init_from_rtt(tp, &mut self.has_seen_rtt);
    }

    /// `bbr_set_pacing_rate()`: until the pipe is full the rate only goes up.
    pub(super) fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: u32, gain: u32) {
        PACING.set(tp, &mut self.has_seen_rtt, self.full_bw_reached, bw, gain);
    }

    /// `bbr_tso_segs_generic()`: about 1 ms of data at the pacing rate, plus 64 KB halved for
    /// every 512 us of min_rtt, capped by the GSO size less headers, at least 2 segments
    /// (`tcp_min_tso_segs`).
    pub(super) fn tso_segs_generic(&self, tp: &TcpState, mss: u32, gso_max_size: u64) -> u32 {
        let mut bytes = tp.pacing_rate >> SK_PACING_SHIFT;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        // min_t(u32, ...) truncates the byte count to 32 bits first.
        let bytes = (bytes as u32).min((gso_max_size - 1 - MAX_TCP_HEADER) as u32);
        (bytes / mss.max(1)).max(2)
    }

    /// `bbr_tso_segs_goal()`.
    pub fn tso_segs_goal(&self, tp: &TcpState) -> u32 {
        self.tso_segs_generic(tp, tp.mss, GSO_LEGACY_MAX_SIZE)
    }

    // ---- Windows ----

    /// `bbr_save_cwnd()`: keep the larger of the saved and current cwnd while recovery or
    /// PROBE_RTT has cut it.
    pub(super) fn save_cwnd(&mut self, tp: &TcpState) {
        let reduced = self.prev_ca_state >= CaState::Recovery || self.mode == Mode::ProbeRtt;
        self.prior_cwnd = common::save_cwnd(self.prior_cwnd, tp.snd_cwnd, reduced);
    }

    /// `bbr_bdp()`: ceil(bw * min_rtt * gain) packets; the initial cwnd before any RTT.
    /// (The kernel's `DIV_ROUND_UP_ULL` equals [`common::bdp`]'s `div_ceil`: the value shifted
    /// down by `BBR_SCALE` is below 2^56, so adding `BW_UNIT - 1` cannot wrap.)
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return self.init_cwnd;
        }
        common::bdp(bw, self.min_rtt_us, gain)
    }

    /// `bbr_quantization_budget()`: at least three TSO bursts and the minimum cwnd; two more
    /// in UP so that probing lifts inflight even for a tiny BDP.
    pub(super) fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
        let tso = 3 * self.tso_segs_goal(tp);
        let mut cwnd = cwnd.max(tso).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight()`: BDP times gain with the quantization budget.
    pub fn inflight(&self, tp: &TcpState, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt()` (the departure time is now, see the module docs).
    pub(super) fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        common::packets_in_net_at_edt(tp, self.bw(), self.pacing_gain, inflight_now, || {
            self.tso_segs_goal(tp)
        })
    }

    /// `bbr_target_inflight()`: the BDP, unless congestion has cut cwnd below it.
    pub(super) fn target_inflight(&self, tp: &TcpState) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.snd_cwnd)
    }

    /// `bbr_set_cwnd()`: grow by what was ACKed toward the target (gain-scaled BDP plus the
    /// aggregation allowance and budget); once the pipe is full, also snap down to it. The
    /// fast path is allowed once cwnd reaches the target. In PROBE_RTT cwnd is capped.
    pub(super) fn set_cwnd(
        &mut self,
        tp: &mut TcpState,
        acked: u32,
        bw: u32,
        gain: u32,
        cwnd: u32,
    ) {
        let mut cwnd = cwnd;
        if acked != 0 {
            let mut target = self.bdp(bw, gain);
            target = target.wrapping_add(self.ack_aggregation_cwnd());
            target = self.quantization_budget(tp, target);
            self.try_fast_path = false;
            if self.full_bw_reached {
                cwnd = cwnd.wrapping_add(acked);
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd = cwnd.wrapping_add(acked);
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        tp.set_cwnd(cwnd.min(tp.snd_cwnd_clamp));
        if self.mode == Mode::ProbeRtt {
            // Version 3's PROBE_RTT cwnd is half the BDP, at least 4 (version 1's: 4 packets).
            let cap = self.probe_rtt_cwnd();
            tp.set_cwnd(tp.snd_cwnd.min(cap));
        }
    }

    /// `bbr_update_gains()`.
    pub(super) fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = STARTUP_PACING_GAIN;
                self.cwnd_gain = STARTUP_CWND_GAIN;
            }
            Mode::Drain => {
                self.pacing_gain = DRAIN_GAIN;
                self.cwnd_gain = STARTUP_CWND_GAIN;
            }
            Mode::ProbeBw => {
                self.pacing_gain = PACING_GAIN[self.cycle_idx as usize];
                self.cwnd_gain = CWND_GAIN;
                if BW_PROBE_CWND_GAIN != 0 && self.cycle_idx == Phase::Up {
                    self.cwnd_gain += BBR_UNIT * BW_PROBE_CWND_GAIN / 4;
                }
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }
}
