//! The plumbing BBRv1 ([`super::bbr`]) and BBRv3 ([`super::bbr3`]) share: the fixed-point
//! scales, the kernel constants and clocks they read, the mode enum, the pacing-rate, rate
//! and BDP arithmetic, the PROBE_RTT dwell and the ACK-aggregation (`extra_acked`)
//! estimator. Everything here computes exactly what both versions of `tcp_bbr.c` compute;
//! where the versions differ (the pacing rate's floor, the rounding of a bandwidth sample,
//! the TSO goal, the PROBE_RTT cwnd and exit, the aggregation window in STARTUP), the
//! difference stays in the controller or is a parameter here.

use super::{RateSample, TcpState};

// ---- Fixed-point scales ----

/// Bandwidth is kept in packets/us shifted left by this many bits (one unit is about 715 bit/s
/// for 1500-byte packets).
pub const BW_SCALE: u32 = 24;
/// 1.0 packet/us in the scaled bandwidth unit.
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains and other fractions are scaled by 2^8.
pub const BBR_SCALE: u32 = 8;
/// A gain of 1.0.
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

// ---- Kernel constants BBR depends on ----

/// Default `sk->sk_pacing_shift` (set in `sock_init_data()`): a TSO burst is ~1 ms of data.
pub(super) const SK_PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE` (include/linux/netdevice.h).
pub(super) const GSO_LEGACY_MAX_SIZE: u64 = 65536;
/// `MAX_TCP_HEADER = L1_CACHE_ALIGN(128 + MAX_HEADER)` (include/net/tcp.h). Config dependent;
/// for a typical x86_64 distribution kernel `LL_MAX_HEADER` is 128 (Hyper-V netvsc or
/// mac80211 mesh built in), tunnels add 48 (`MAX_HEADER = 176`), and with 64-byte cache lines
/// `L1_CACHE_ALIGN(304) = 320`. (For mss 1448 the TSO cap is 45 segments with any of the
/// possible values 192/256/320.)
pub const MAX_TCP_HEADER: u64 = 320;

// ---- ACK aggregation parameters (the same values in both versions) ----

/// Gain applied to the ACK-aggregation estimate when budgeting cwnd (1.0).
pub(super) const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// Each of the two extra_acked slots covers this many rounds.
pub(super) const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// Restart the aggregation epoch once this many packets were counted in it.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The aggregation allowance never exceeds bw times this many microseconds (100 ms).
const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// Pacing is set this many percent under the bandwidth estimate (both versions).
pub(super) const PACING_MARGIN_PERCENT: u64 = 1;

// ---- PROBE_RTT parameters (the same values in both versions) ----

/// Length of the min_rtt filter, seconds.
pub(super) const MIN_RTT_WIN_SEC: u32 = 10;
/// Least time held at the PROBE_RTT cwnd, ms.
pub(super) const PROBE_RTT_MODE_MS: u32 = 200;

/// BBR's operating mode (`enum bbr_mode`), the same four in both versions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        }
    }
}

// ---- Small helpers mirroring kernel primitives ----

/// `tcp_jiffies32` (the host's `hz`, see [`TcpState::hz`]).
pub(super) fn jiffies32(tp: &TcpState) -> u32 {
    (tp.now_ns / tp.ns_per_jiffy()) as u32
}

/// `msecs_to_jiffies()`: rounds up to whole jiffies.
pub(super) fn msecs_to_jiffies(ms: u32, hz: u32) -> u32 {
    (ms * hz).div_ceil(1000)
}

/// 32-bit wrap-aware "a is later than b" (`after()` / `time_after32()`).
pub(super) fn after32(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `tcp_stamp_us_delta()`: `t1 - t0` in us, never negative, truncated to 32 bits.
pub(super) fn stamp_us_delta(t1: u64, t0: u64) -> u32 {
    (t1 as i64).wrapping_sub(t0 as i64).max(0) as u32
}

/// The earliest departure time of the next packet (`max(tp->tcp_wstamp_ns, now)`). The lab's
/// `TcpState` does not expose `tcp_wstamp_ns`, so this is `now` (see [`super::bbr`]'s docs).
pub(super) fn edt_ns(tp: &TcpState) -> u64 {
    tp.now_ns
}

// ---- Rates and windows ----

/// `bbr_rate_bytes_per_sec()` without version 3's floor of 1: scaled bw `rate` times `gain`
/// in bytes per second, `margin_percent` under. The multiplications are ordered (mss, gain,
/// the gain's `>> 8`, then the per-second factor) to keep the intermediate within 64 bits,
/// exactly as the kernel does.
#[inline]
pub(super) fn rate_bytes_per_sec(tp: &TcpState, rate: u64, gain: u32, margin_percent: u64) -> u64 {
    let mut rate = rate.wrapping_mul(tp.mss as u64);
    rate = rate.wrapping_mul(gain as u64);
    rate >>= BBR_SCALE;
    rate = rate.wrapping_mul(1_000_000 / 100 * (100 - margin_percent));
    rate >> BW_SCALE
}

/// How a version sets its pacing rate: the gain of the initial rate (its STARTUP gain) and
/// the floor of `bbr_rate_bytes_per_sec()` (version 1 has none: 0; version 3: 1 byte/s).
pub(super) struct Pacing {
    pub(super) startup_gain: u32,
    pub(super) floor: u64,
}

impl Pacing {
    /// `bbr_bw_to_pacing_rate()`: bw times gain in bytes/s with the 1% margin, at least the
    /// floor, capped by `max_pacing_rate`.
    #[inline]
    pub(super) fn bw_to_pacing_rate(&self, tp: &TcpState, bw: u32, gain: u32) -> u64 {
        rate_bytes_per_sec(tp, bw as u64, gain, PACING_MARGIN_PERCENT)
            .max(self.floor)
            .min(tp.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt()`: before any bw sample, pace at the STARTUP gain
    /// times cwnd per srtt, or per 1 ms without an RTT sample (then `has_seen_rtt` stays as
    /// it is).
    pub(super) fn init_from_rtt(&self, tp: &mut TcpState, has_seen_rtt: &mut bool) {
        let rtt_us = if tp.srtt_us != 0 {
            *has_seen_rtt = true;
            tp.srtt_us.max(1)
        } else {
            1000
        };
        let bw = (tp.snd_cwnd as u64 * BW_UNIT) / rtt_us as u64;
        // The kernel passes this u64 to a u32 parameter.
        tp.pacing_rate = self.bw_to_pacing_rate(tp, bw as u32, self.startup_gain);
    }

    /// `bbr_set_pacing_rate()`: pace at bw times gain; before the pipe is known to be full the
    /// pacing rate only ever goes up (so an early low sample cannot slow STARTUP down), and
    /// the first srtt re-derives the initial rate.
    #[inline]
    pub(super) fn set(
        &self,
        tp: &mut TcpState,
        has_seen_rtt: &mut bool,
        full_bw_reached: bool,
        bw: u32,
        gain: u32,
    ) {
        let rate = self.bw_to_pacing_rate(tp, bw, gain);
        if !*has_seen_rtt && tp.srtt_us != 0 {
            self.init_from_rtt(tp, has_seen_rtt);
        }
        if full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }
}

/// A rate in bytes per second as scaled bandwidth (pkts/us << 24), saturating at `u32::MAX`:
/// the conversion of an accelerated sender's ACK-train rate for `jump_start`.
pub(super) fn bw_from_bytes_per_sec(bytes_per_sec: u64, mss: u32) -> u32 {
    let per_us = ((bytes_per_sec as u128) << BW_SCALE) / (mss.max(1) as u128 * 1_000_000);
    per_us.min(u32::MAX as u128) as u32
}

/// `bbr_bdp()` once there is an RTT: ceil(bw * min_rtt * gain) in packets. The gain's scale is
/// removed first, then the BW_SCALE division rounds up (rounding down would feed back into
/// ever smaller estimates).
#[inline]
pub(super) fn bdp(bw: u32, min_rtt_us: u32, gain: u32) -> u32 {
    let w = bw as u64 * min_rtt_us as u64;
    (w.wrapping_mul(gain as u64) >> BBR_SCALE).div_ceil(BW_UNIT) as u32
}

/// `bbr_packets_in_net_at_edt()`: packets likely still in the network when the next packet
/// leaves (at `bw`), counting that next burst (`tso_segs_goal`) too while `pacing_gain` is
/// above 1.0.
#[inline]
pub(super) fn packets_in_net_at_edt(
    tp: &TcpState,
    bw: u32,
    pacing_gain: u32,
    inflight_now: u32,
    tso_segs_goal: impl FnOnce() -> u32,
) -> u32 {
    let now_ns = tp.now_ns;
    let edt = edt_ns(tp).max(now_ns);
    let interval_us = (edt - now_ns) / 1000;
    let interval_delivered = ((bw as u64 * interval_us) >> BW_SCALE) as u32;
    let mut inflight_at_edt = inflight_now;
    if pacing_gain > BBR_UNIT {
        inflight_at_edt = inflight_at_edt.wrapping_add(tso_segs_goal());
    }
    inflight_at_edt.saturating_sub(interval_delivered)
}

/// `bbr_save_cwnd()`: the cwnd to come back to. If recovery or PROBE_RTT already lowered cwnd
/// (`reduced`), keep the larger of the saved and the current value.
pub(super) fn save_cwnd(prior_cwnd: u32, snd_cwnd: u32, reduced: bool) -> u32 {
    if reduced {
        prior_cwnd.max(snd_cwnd)
    } else {
        snd_cwnd
    }
}

// ---- PROBE_RTT ----

/// The PROBE_RTT dwell (`probe_rtt_done_stamp`, `probe_rtt_round_done`), whose steps both
/// versions take the same way: on entering, wait until inflight is down to the PROBE_RTT
/// cwnd; then hold it for 200 ms and at least one round trip, marking every ACK's
/// connection app-limited meanwhile. What differs stays in the controllers: the PROBE_RTT
/// cwnd (version 1: 4 packets; version 3: half the BDP, at least 4), which min filter
/// schedules PROBE_RTT and is restarted when it ends (version 1: the 10 s min_rtt filter;
/// version 3: the 5 s `probe_rtt_min_us` filter), and where it goes next.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ProbeRtt {
    /// Jiffies at which PROBE_RTT may end (0 = not armed yet).
    pub(super) done_stamp: u32,
    /// A round at the PROBE_RTT cwnd has passed.
    pub(super) round_done: bool,
}

impl ProbeRtt {
    /// Entering PROBE_RTT: the deadline is not armed until inflight has come down.
    pub(super) fn enter(&mut self) {
        self.done_stamp = 0;
    }

    /// Still waiting for inflight to come down to the PROBE_RTT cwnd (the deadline is not
    /// armed).
    pub(super) fn waiting(&self) -> bool {
        self.done_stamp == 0
    }

    /// `bbr_update_min_rtt()`'s PROBE_RTT step, one ACK at jiffies `now`: mark the
    /// connection app-limited (so the low-rate samples do not pull the bandwidth model
    /// down); if `drained` (the caller's test, made only while [`Self::waiting`], that
    /// inflight is at most its PROBE_RTT cwnd), arm the 200 ms deadline and start a new
    /// round here (`next_rtt_delivered`); once armed, note the end of that round. Returns
    /// true when a round has passed since arming, and the caller then checks the deadline
    /// (`bbr_check_probe_rtt_done()`).
    #[inline]
    pub(super) fn on_ack(
        &mut self,
        tp: &mut TcpState,
        now: u32,
        drained: bool,
        round_start: bool,
        next_rtt_delivered: &mut u64,
    ) -> bool {
        let v = tp.delivered + tp.packets_in_flight() as u64;
        tp.app_limited = if v != 0 { v } else { 1 };
        if drained {
            self.done_stamp = now.wrapping_add(msecs_to_jiffies(PROBE_RTT_MODE_MS, tp.hz));
            self.round_done = false;
            *next_rtt_delivered = tp.delivered;
            false
        } else if self.done_stamp != 0 {
            if round_start {
                self.round_done = true;
            }
            self.round_done
        } else {
            false
        }
    }

    /// `bbr_check_probe_rtt_done()`'s test: the deadline is armed and has passed.
    pub(super) fn deadline_passed(&self, tp: &TcpState) -> bool {
        self.done_stamp != 0 && after32(jiffies32(tp), self.done_stamp)
    }
}

// ---- ACK aggregation ----

/// The ACK-aggregation estimator (`bbr_update_ack_aggregation()` and its fields): within an
/// epoch that starts whenever ACKs fall behind the bw estimate, the largest excess of ACKed
/// packets over what bw * elapsed predicts. The max is kept in two slots that alternate every
/// few rounds, each value capped by cwnd. Field widths are the kernel's where they matter.
#[derive(Clone, Debug, Default)]
pub(super) struct AckAggregation {
    /// Start of the current ACK-aggregation epoch, us.
    pub(super) epoch_mstamp: u64,
    /// Largest excess of ACKed over expected packets, one slot per half of the window.
    pub(super) extra_acked: [u16; 2],
    /// Packets (S)ACKed in the current epoch (20-bit field in Linux).
    pub(super) epoch_acked: u32,
    /// Rounds the current extra_acked slot has been collecting (5 bits).
    pub(super) win_rtts: u32,
    /// Current extra_acked slot.
    pub(super) win_idx: usize,
}

impl AckAggregation {
    /// Everything zeroed and a new epoch from `now_us` (`bbr_init()`).
    pub(super) fn reset(&mut self, now_us: u64) {
        self.restart_epoch(now_us);
        self.win_rtts = 0;
        self.win_idx = 0;
        self.extra_acked = [0; 2];
    }

    /// A new epoch from `now_us` (on restarting from idle).
    pub(super) fn restart_epoch(&mut self, now_us: u64) {
        self.epoch_mstamp = now_us;
        self.epoch_acked = 0;
    }

    /// Largest recent ACK-aggregation excess, packets (`bbr_extra_acked()`).
    #[inline]
    pub(super) fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1]) as u32
    }

    /// `bbr_update_ack_aggregation()` with the bw estimate `bw`: on a round start the slot
    /// turns once it has collected `win_rtts_thresh` rounds.
    #[inline]
    pub(super) fn update(
        &mut self,
        tp: &TcpState,
        rs: &RateSample,
        bw: u32,
        round_start: bool,
        win_rtts_thresh: u32,
    ) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0
        {
            return;
        }

        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1F);
            if self.win_rtts >= win_rtts_thresh {
                self.win_rtts = 0;
                self.win_idx = if self.win_idx != 0 { 0 } else { 1 };
                self.extra_acked[self.win_idx] = 0;
            }
        }

        let epoch_us = stamp_us_delta(tp.delivered_mstamp_us, self.epoch_mstamp);
        let mut expected_acked = ((bw as u64 * epoch_us as u64) / BW_UNIT) as u32;

        if self.epoch_acked <= expected_acked
            || self.epoch_acked.wrapping_add(rs.acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.epoch_acked = 0;
            self.epoch_mstamp = tp.delivered_mstamp_us;
            expected_acked = 0;
        }

        self.epoch_acked = self.epoch_acked.wrapping_add(rs.acked_sacked).min(0xFFFFF);
        let extra_acked = self
            .epoch_acked
            .wrapping_sub(expected_acked)
            .min(tp.snd_cwnd);
        if extra_acked > self.extra_acked[self.win_idx] as u32 {
            // Stored in 16 bits, as in Linux.
            self.extra_acked[self.win_idx] = extra_acked as u16;
        }
    }

    /// The cwnd allowance for ACK aggregation at bw `bw` (`bbr_ack_aggregation_cwnd()`
    /// without version 1's full-pipe condition): the gain-scaled estimate, at most 100 ms
    /// worth of bw.
    #[inline]
    pub(super) fn cwnd(&self, bw: u32) -> u32 {
        if EXTRA_ACKED_GAIN == 0 {
            return 0;
        }
        let max_aggr_cwnd = ((bw as u64 * EXTRA_ACKED_MAX_US) / BW_UNIT) as u32;
        ((EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE).min(max_aggr_cwnd)
    }
}
