//! BBRv1 ("Bottleneck Bandwidth and Round-trip propagation time"), modelled on Linux's
//! `net/ipv4/tcp_bbr.c` as shipped in mainline 6.x.
//!
//! # The model in brief
//!
//! BBR does not treat loss as the congestion signal. Instead it keeps two running estimates of
//! the path and derives everything else from them:
//!
//! * `btl_bw`: the largest delivery rate measured over the last ten packet-timed round trips
//!   (a windowed max over rate samples), and
//! * `min_rtt`: the smallest RTT measured over the last ten seconds (a windowed min).
//!
//! Their product is the bandwidth-delay product (BDP). The sender paces at
//! `pacing_gain * btl_bw` and caps the data in flight at `cwnd_gain * BDP` (plus allowances
//! for ACK aggregation and TSO batching, at least 4 packets).
//!
//! The gains come from a four-mode state machine:
//!
//! ```text
//!          start
//!            |
//!            v
//!   +---> STARTUP ---------------+     STARTUP: gain 2/ln2 on both pacing and cwnd, so the
//!   |        | (bw stopped       |     sending rate doubles every round, like slow start.
//!   |        v  growing)         |
//!   |      DRAIN ----------------+     DRAIN: pace at ln2/2 until the queue STARTUP built
//!   |        | (inflight <= BDP) |     has gone (inflight back down to one BDP).
//!   |        v                   |
//!   +---> PROBE_BW --------------+     PROBE_BW: cycle the pacing gain through
//!   |      ^     |               |     5/4, 3/4, 1, 1, 1, 1, 1, 1 (one phase ~ one min_rtt):
//!   |      +-----+               |     probe for more bandwidth, drain what the probe queued,
//!   |                            |     then cruise. cwnd gain 2.
//!   +----- PROBE_RTT <-----------+     PROBE_RTT: if min_rtt has not been re-measured for
//!        (back to STARTUP if the       10 s, hold inflight at 4 packets for 200 ms and one
//!         pipe was never filled)       round so the queue empties and min_rtt can be seen.
//! ```
//!
//! Loss only matters in three places: in the first round of fast recovery BBR sends one packet
//! per packet delivered ("packet conservation"), after which it may grow again at twice the
//! delivery rate and on exit restores the pre-recovery cwnd; a "long-term" estimator detects
//! token-bucket policers (two consecutive lossy intervals with the same throughput) and then
//! pins the bandwidth estimate to the policed rate for 48 rounds; and losses stop a 5/4 probing
//! phase early.
//!
//! # Source and units
//!
//! Facts (constants, fixed-point scales, formulas, order of operations, state machine) are
//! taken from Linux `net/ipv4/tcp_bbr.c` (mainline 6.x: the version using
//! `get_random_u32_below`, `GSO_LEGACY_MAX_SIZE` and `tcp_snd_cwnd()`), and
//! `lib/win_minmax.c` for the max filter. Each method below names the Linux function it
//! corresponds to, and the call order in [`Bbr::cong_control`] is the one of `bbr_main()` /
//! `bbr_update_model()`. The code and comments here are written independently.
//!
//! Units are Linux's: bandwidth is packets per microsecond scaled by 2^24 (`BW_SCALE`) and held
//! in a `u32`; gains are fractions scaled by 2^8 (`BBR_SCALE`, so 256 = 1.0); cwnd in packets;
//! `TcpState::pacing_rate` in bytes per second; RTTs in microseconds; the min_rtt and PROBE_RTT
//! timers in jiffies of the host's `CONFIG_HZ` (`TcpState::hz`, 250 by default:
//! `jiffies = now_ns / (1e9 / hz)`, truncated to 32 bits).
//! Where Linux relies on 32-bit wrap-around or on narrow bitfields (e.g. `extra_acked` is a
//! `u16`), the same widths are used here so that the arithmetic matches.
//!
//! # Differences from Linux (deliberate)
//!
//! * `bbr_packets_in_net_at_edt()` needs `tp->tcp_wstamp_ns` (the earliest departure time of
//!   the next packet), which [`TcpState`] does not carry. The departure time is taken to be
//!   `now`, so the in-network estimate is just inflight (plus the TSO goal while probing with
//!   gain > 1). In Linux the difference is at most the bandwidth times the pacing gap to the
//!   next departure, usually zero or one packet.
//! * Sequence/delivery counters are `u64` here (`TcpState::delivered`, `lost`), so
//!   "round reached" uses a plain `>=` instead of the 32-bit `before()`; identical until 2^31
//!   packets. Per-interval differences are cut to `u32` like Linux.
//! * `MAX_TCP_HEADER` depends on kernel config; see [`MAX_TCP_HEADER`].
//! * `get_info` (inet_diag) is offered as the inherent method [`Bbr::info`].
//!
//! # What the sender must provide
//!
//! * Every ACK: call [`CongestionControl::cong_control`] with a `tcp_rate.c`-style sample
//!   (`delivered`, `interval_us` (-1 if shorter than min_rtt), `prior_delivered`,
//!   `is_app_limited`, `losses`, `acked_sacked`, `prior_in_flight`, `rtt_us`,
//!   `is_ack_delayed`) after updating `delivered`, `delivered_mstamp_us`, `lost`,
//!   `packets_out`/`sacked_out`/`lost_out`/`retrans_out`, `srtt_us`, `min_rtt_us`, `now_*`
//!   and `ca_state`. No PRR or `cong_avoid` for this controller.
//! * `tp.app_limited`: honoured like Linux (packets sent while it is non-zero produce
//!   app-limited samples; it is cleared once `delivered` passes it). BBR writes it in PROBE_RTT.
//! * Entering Recovery/Loss: `ssthresh()` first (saves cwnd), then `set_state()` with the new
//!   state while `tp.ca_state` still holds the old one, then update `tp.ca_state`. Leaving
//!   recovery: `set_state(Open)` and update `ca_state` before that ACK's `cong_control`.
//! * `cwnd_event(TxStart)` when sending with nothing in flight, after the app-limited check.
//! * Pace at `tp.pacing_rate`; BBR ignores `snd_ssthresh` (it only publishes a value in DRAIN),
//!   so the sender must not reset cwnd to ssthresh at the end of recovery.

use super::bbr_common::{
    self as common, after32, jiffies32, stamp_us_delta, AckAggregation, Pacing, ProbeRtt,
    EXTRA_ACKED_WIN_RTTS, MIN_RTT_WIN_SEC, PROBE_RTT_MODE_MS,
};
pub use super::bbr_common::{Mode, BBR_SCALE, BBR_UNIT, BW_SCALE, BW_UNIT, MAX_TCP_HEADER};
use super::{
    CaEvent, CaState, CongestionControl, Controller, Param, ParamKind, ParamValue, Params,
    RateSample, SplitMix64, TcpState, TCP_INFINITE_SSTHRESH,
};

/// BBRv1 in the registry. Linux's `tcp_bbr` has no module parameters; this one has a switch
/// for its long-term (policer) mode, to measure what that mode does.
pub const CONTROLLER: Controller = Controller {
    name: "bbr",
    aliases: &["bbr1", "bbrv1"],
    title: "BBRv1",
    summary: "BBR version 1 as Linux's net/ipv4/tcp_bbr.c (mainline)",
    params: &[Param {
        name: "lt_bw",
        kind: ParamKind::Bool,
        default: ParamValue::Bool(true),
        unit: "",
        help: "detect token-bucket policers and send at their rate (long-term bandwidth mode, bbr_lt_bw_sampling; cclab's switch, Linux has no parameter for it)",
    }],
    build,
};

fn build(p: &Params, seed: u64) -> Box<dyn CongestionControl> {
    let mut b = Bbr::new(seed);
    b.lt_enabled = p.bool("lt_bw");
    Box::new(b)
}
use crate::windowed::WindowedFilter;

// ---- Parameters (same values as tcp_bbr.c) ----

/// Phases in the PROBE_BW pacing-gain cycle.
const CYCLE_LEN: u32 = 8;
/// Length of the max-bw filter, in packet-timed rounds (CYCLE_LEN + 2).
const BBR_BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// Below this pacing rate (bit/s) BBR asks for 1-segment TSO bursts instead of 2.
const BBR_MIN_TSO_RATE: u64 = 1_200_000;
/// STARTUP gain, 2/ln(2) ~ 2.885, scaled: 256*2885/1000 + 1 = 739.
pub const BBR_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// Pacing rates: the initial one at the STARTUP gain, no floor (`bbr_rate_bytes_per_sec`).
const PACING: Pacing = Pacing {
    startup_gain: BBR_HIGH_GAIN,
    floor: 0,
};
/// DRAIN pacing gain, the inverse of the STARTUP gain: 256*1000/2885 = 88.
pub const BBR_DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// cwnd gain in PROBE_BW (2.0).
pub const BBR_CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains, one per phase: probe (5/4), drain (3/4), then six cruising phases.
pub const BBR_PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// The random starting phase is drawn among this many phases (all but the 3/4 one).
const BBR_CYCLE_RAND: u32 = 7;
/// Smallest cwnd BBR aims for, and the cwnd used in PROBE_RTT.
pub const BBR_CWND_MIN_TARGET: u32 = 4;
/// STARTUP keeps going while the max bw grows by at least this factor (1.25) per round...
const BBR_FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ...and stops after this many rounds without such growth.
const BBR_FULL_BW_CNT: u32 = 3;
/// Long-term sampling: minimum interval length, rounds.
const BBR_LT_INTVL_MIN_RTTS: u32 = 4;
/// Long-term sampling: an interval is lossy if lost/delivered >= 50/256 (~20%).
const BBR_LT_LOSS_THRESH: u32 = 50;
/// Long-term sampling: two intervals agree if their bw differs by at most 1/8...
const BBR_LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// ...or by at most 4000 bit/s (stored in bytes/s: 4000/8).
const BBR_LT_BW_DIFF: u64 = 4000 / 8;
/// Once a policer is detected, use the long-term bw for this many rounds.
const BBR_LT_BW_MAX_RTTS: u32 = 48;

// ---- Kernel constants BBR depends on ----

/// `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;

/// What Linux reports through inet_diag (`struct tcp_bbr_info`, `ss -ti`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BbrInfo {
    /// Bandwidth estimate in bytes per second (no pacing margin).
    pub bw_bytes_per_sec: u64,
    /// min_rtt estimate, us.
    pub min_rtt_us: u32,
    /// Current pacing gain (256 = 1.0).
    pub pacing_gain: u32,
    /// Current cwnd gain (256 = 1.0).
    pub cwnd_gain: u32,
}

/// BBRv1 state (`struct bbr`). Field widths follow the Linux bitfields where it matters.
#[derive(Clone, Debug)]
pub struct Bbr {
    rng: SplitMix64,

    /// Windowed min RTT, us (`u32::MAX` = none yet).
    min_rtt_us: u32,
    /// Jiffies when `min_rtt_us` was last set.
    min_rtt_stamp: u32,
    /// The PROBE_RTT dwell: its deadline, and whether a round at the PROBE_RTT cwnd has passed.
    probe_rtt: ProbeRtt,
    /// Max delivery rate over the last BBR_BW_RTTS rounds, pkts/us << 24.
    bw: WindowedFilter,
    /// Packet-timed rounds so far.
    rtt_cnt: u32,
    /// `tp.delivered` value that marks the end of the current round.
    next_rtt_delivered: u64,
    /// `delivered_mstamp` when the current gain-cycle phase began, us.
    cycle_mstamp: u64,
    mode: Mode,
    /// CA state seen on the previous ACK.
    prev_ca_state: CaState,
    /// Whether the first-round-of-recovery rule is active.
    packet_conservation: bool,
    /// Whether this ACK started a new round.
    round_start: bool,
    /// Whether we are restarting from idle (cleared by the first ACK that delivers data).
    idle_restart: bool,
    /// Whether a long-term sampling interval is open.
    /// Whether the long-term (policer) mode runs at all (`lt_bw`; always in Linux).
    lt_enabled: bool,
    lt_is_sampling: bool,
    /// Rounds in the current long-term interval (a 7-bit field in Linux).
    lt_rtt_cnt: u32,
    /// Whether the long-term (policed) bw replaces the max filter.
    lt_use_bw: bool,
    /// Long-term bw, pkts/us << 24.
    lt_bw: u32,
    /// `tp.delivered` at the start of the long-term interval.
    lt_last_delivered: u64,
    /// `delivered_mstamp` in ms (32 bits) at the start of the long-term interval.
    lt_last_stamp: u32,
    /// `tp.lost` at the start of the long-term interval.
    lt_last_lost: u64,
    /// Current pacing gain (256 = 1.0).
    pacing_gain: u32,
    /// Current cwnd gain (256 = 1.0).
    cwnd_gain: u32,
    /// Whether STARTUP judged the pipe full (never cleared once set).
    full_bw_reached: bool,
    /// Rounds without 25% bw growth (2-bit field in Linux).
    full_bw_cnt: u32,
    /// Index into BBR_PACING_GAIN (3 bits).
    cycle_idx: u32,
    /// Whether the initial pacing rate was computed from a real RTT sample.
    has_seen_rtt: bool,
    /// cwnd saved on entering recovery or PROBE_RTT.
    prior_cwnd: u32,
    /// Max bw at the last round that grew by 25%.
    full_bw: u32,

    /// The ACK-aggregation (`extra_acked`) estimator.
    ack_aggr: AckAggregation,
}

impl Bbr {
    /// A controller whose random PROBE_BW starting phase comes from a PRNG seeded with `seed`.
    /// The state is that of a zeroed `icsk_ca_priv`; [`CongestionControl::init`] sets it up.
    pub fn new(seed: u64) -> Self {
        Bbr {
            rng: SplitMix64::new(seed),
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt: ProbeRtt::default(),
            bw: WindowedFilter::new_max(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            lt_enabled: true,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: 0,
            cwnd_gain: 0,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_aggr: AckAggregation::default(),
        }
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The max-filter bandwidth, pkts/us << 24 (`bbr_max_bw`).
    pub fn max_bw(&self) -> u32 {
        self.bw.get() as u32
    }

    /// The bandwidth used for pacing and cwnd: the long-term (policer) rate when in use,
    /// else the max filter (`bbr_bw`).
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// min_rtt estimate, us (`u32::MAX` until the first sample).
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }

    /// Current pacing gain (256 = 1.0).
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    /// Current cwnd gain (256 = 1.0).
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }

    /// Index of the current PROBE_BW phase in [`BBR_PACING_GAIN`].
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }

    /// Whether STARTUP has judged the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Whether the long-term (policed) bandwidth is in use.
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }

    /// The values Linux exports via inet_diag (`bbr_get_info`).
    pub fn info(&self, tp: &TcpState) -> BbrInfo {
        let bw = common::rate_bytes_per_sec(tp, self.bw() as u64, BBR_UNIT, 0);
        BbrInfo {
            bw_bytes_per_sec: bw,
            min_rtt_us: self.min_rtt_us,
            pacing_gain: self.pacing_gain,
            cwnd_gain: self.cwnd_gain,
        }
    }

    // ---- Rates ----

    /// `bbr_rate_bytes_per_sec`: scaled bw times gain, converted to bytes/s with the 1% pacing
    /// margin (see [`common::rate_bytes_per_sec`]; version 1 has no floor).
    fn rate_bytes_per_sec(tp: &TcpState, rate: u64, gain: u32) -> u64 {
        common::rate_bytes_per_sec(tp, rate, gain, common::PACING_MARGIN_PERCENT)
    }

    /// `bbr_init_pacing_rate_from_rtt`: before any bw sample, pace at high_gain * cwnd / RTT,
    /// with srtt if there is one and 1 ms otherwise.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        PACING.init_from_rtt(tp, &mut self.has_seen_rtt);
    }

    /// `bbr_set_pacing_rate`: before the pipe is known to be full, the pacing rate only ever
    /// goes up (so an early low sample cannot slow STARTUP down); afterwards it follows bw.
    fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: u32, gain: u32) {
        PACING.set(tp, &mut self.has_seen_rtt, self.full_bw_reached, bw, gain);
    }

    /// `bbr_min_tso_segs`: 1 segment per burst below 1.2 Mbit/s, else 2.
    pub fn min_tso_segs(tp: &TcpState) -> u32 {
        if tp.pacing_rate < (BBR_MIN_TSO_RATE >> 3) {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal`: segments in a ~1 ms burst at the current pacing rate (like
    /// `tcp_tso_autosize()` without the device limit), between `min_tso_segs` and 127.
    pub fn tso_segs_goal(tp: &TcpState) -> u32 {
        let bytes = (tp.pacing_rate >> common::SK_PACING_SHIFT)
            .min(common::GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER) as u32;
        let segs = (bytes / tp.mss.max(1)).max(Self::min_tso_segs(tp));
        segs.min(0x7F)
    }

    // ---- cwnd targets ----

    /// `bbr_save_cwnd`: remember a cwnd to come back to. If recovery or PROBE_RTT already
    /// lowered cwnd, keep the larger of the saved and the current value.
    fn save_cwnd(&mut self, tp: &TcpState) {
        let reduced = self.prev_ca_state >= CaState::Recovery || self.mode == Mode::ProbeRtt;
        self.prior_cwnd = common::save_cwnd(self.prior_cwnd, tp.snd_cwnd, reduced);
    }

    /// `bbr_bdp`: ceil(bw * min_rtt * gain) in packets; TCP_INIT_CWND before any RTT sample.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        common::bdp(bw, self.min_rtt_us, gain)
    }

    /// `bbr_quantization_budget`: room for three TSO bursts (sender qdisc, NIC, receiver
    /// GRO/delayed ACK), rounded up to an even count, plus 2 in the 5/4 probing phase so that
    /// probing raises inflight above the BDP even when the BDP is tiny.
    fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.wrapping_add(3 * Self::tso_segs_goal(tp));
        cwnd = cwnd.wrapping_add(1) & !1u32;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd = cwnd.wrapping_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`: the inflight target for `bw` and `gain`, including the TSO budget.
    fn inflight(&self, tp: &TcpState, bw: u32, gain: u32) -> u32 {
        let inflight = self.bdp(bw, gain);
        self.quantization_budget(tp, inflight)
    }

    /// `bbr_packets_in_net_at_edt`: packets likely still in the network when the next packet
    /// leaves. When raising inflight, count that next burst too.
    fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        common::packets_in_net_at_edt(tp, self.bw(), self.pacing_gain, inflight_now, || {
            Self::tso_segs_goal(tp)
        })
    }

    /// `bbr_ack_aggregation_cwnd`: extra cwnd to ride out ACK aggregation, only once the pipe
    /// is full, at most 100 ms worth of bw.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.full_bw_reached {
            self.ack_aggr.cwnd(self.bw())
        } else {
            0
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`. Losses are taken off cwnd first; on entering
    /// Recovery cwnd is cut to what is in flight plus what this ACK delivered and packet
    /// conservation runs for one round (a new round is started right away); on leaving
    /// Recovery/Loss the saved cwnd is restored. Writes the resulting cwnd to `cwnd`; returns
    /// true while conserving packets, in which case the caller applies it without further
    /// growth.
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        tp: &TcpState,
        rs: &RateSample,
        acked: u32,
        cwnd: &mut u32,
    ) -> bool {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut c = tp.snd_cwnd;

        if rs.losses > 0 {
            c = (c as i32).wrapping_sub(rs.losses as i32).max(1) as u32;
        }

        if state == CaState::Recovery && prev_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered;
            c = tp.packets_in_flight() + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            c = c.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;

        if self.packet_conservation {
            *cwnd = c.max(tp.packets_in_flight() + acked);
            return true;
        }
        *cwnd = c;
        false
    }

    /// `bbr_set_cwnd`: grow by `acked` towards the target (BDP * gain, plus the aggregation
    /// allowance and the TSO budget); once the pipe is full, also cut down to the target.
    /// Never below 4 packets, and at most 4 in PROBE_RTT.
    fn set_cwnd(&mut self, tp: &mut TcpState, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        'done: {
            if acked == 0 {
                break 'done;
            }
            if self.set_cwnd_to_recover_or_restore(tp, rs, acked, &mut cwnd) {
                break 'done;
            }
            let mut target_cwnd = self.bdp(bw, gain);
            target_cwnd = target_cwnd.wrapping_add(self.ack_aggregation_cwnd());
            target_cwnd = self.quantization_budget(tp, target_cwnd);

            if self.full_bw_reached {
                cwnd = cwnd.wrapping_add(acked).min(target_cwnd);
            } else if cwnd < target_cwnd || tp.delivered < TCP_INIT_CWND as u64 {
                cwnd = cwnd.wrapping_add(acked);
            }
            cwnd = cwnd.max(BBR_CWND_MIN_TARGET);
        }
        tp.set_cwnd(cwnd.min(tp.snd_cwnd_clamp));
        if self.mode == Mode::ProbeRtt {
            // Version 1's PROBE_RTT cwnd is 4 packets (version 3's: half the BDP, at least 4).
            tp.set_cwnd(tp.snd_cwnd.min(BBR_CWND_MIN_TARGET));
        }
    }

    // ---- PROBE_BW gain cycling ----

    /// `bbr_is_next_cycle_phase`. A 1.0 phase lasts one min_rtt. The 5/4 phase lasts at least
    /// one min_rtt and until inflight reaches 5/4 of the BDP target or a loss is seen. The 3/4
    /// phase ends after one min_rtt or as soon as inflight is down to the BDP target.
    fn is_next_cycle_phase(&self, tp: &TcpState, rs: &RateSample) -> bool {
        let is_full_length =
            stamp_us_delta(tp.delivered_mstamp_us, self.cycle_mstamp) > self.min_rtt_us;

        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }

        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();

        if self.pacing_gain > BBR_UNIT {
            return is_full_length
                && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }

        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tp: &TcpState) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = tp.delivered_mstamp_us;
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, tp: &TcpState, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_startup_mode`.
    fn reset_startup_mode(&mut self) {
        self.mode = Mode::Startup;
    }

    /// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase other than 3/4. The index is
    /// set to 7 - U[0,7) (one of 1..=7) and then advanced, giving one of 2..=7 or 0.
    fn reset_probe_bw_mode(&mut self, tp: &TcpState) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(BBR_CYCLE_RAND);
        self.advance_cycle_phase(tp);
    }

    /// `bbr_reset_mode`: back to STARTUP if the pipe was never filled, else PROBE_BW.
    fn reset_mode(&mut self, tp: &TcpState) {
        if !self.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    // ---- Long-term (policer) bandwidth ----

    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpState) {
        self.lt_last_stamp = (tp.delivered_mstamp_us / 1000) as u32;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    fn reset_lt_bw_sampling(&mut self, tp: &TcpState) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: if this interval's rate matches the previous one (within 1/8
    /// or 4 kbit/s), conclude we are policed and use their average; else remember this rate and
    /// start a new interval. The u32 arithmetic (and its wrap-around) is Linux's.
    fn lt_bw_interval_done(&mut self, tp: &TcpState, bw: u32) {
        if self.lt_bw != 0 {
            // The kernel's abs() on a u32 difference goes through a signed 32-bit value.
            let diff = (bw.wrapping_sub(self.lt_bw) as i32).unsigned_abs();
            if diff.wrapping_mul(BBR_UNIT) <= BBR_LT_BW_RATIO.wrapping_mul(self.lt_bw)
                || Self::rate_bytes_per_sec(tp, diff as u64, BBR_UNIT) <= BBR_LT_BW_DIFF
            {
                self.lt_bw = ((bw as u64 + self.lt_bw as u64) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: measure delivery rate over intervals of 4..16 rounds that start
    /// and end with a loss; two consecutive such intervals with >= 20% loss and matching rates
    /// mean a token-bucket policer. While using the policed rate, count 48 rounds in PROBE_BW
    /// and then go back to normal gain cycling.
    fn lt_bw_sampling(&mut self, tp: &TcpState, rs: &RateSample) {
        if !self.lt_enabled {
            return;
        }
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt = (self.lt_rtt_cnt + 1) & 0x7F;
                if self.lt_rtt_cnt >= BBR_LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp);
                }
            }
            return;
        }

        // Only start measuring at a loss, i.e. once a policer's bucket would be empty.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }

        // Running out of data would make the rate look low: start over.
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }

        if self.round_start {
            self.lt_rtt_cnt = (self.lt_rtt_cnt + 1) & 0x7F;
        }
        if self.lt_rtt_cnt < BBR_LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * BBR_LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }

        // Close the interval on a loss only (the bucket is empty again).
        if rs.losses == 0 {
            return;
        }

        let lost = tp.lost.wrapping_sub(self.lt_last_lost) as u32;
        let delivered = tp.delivered.wrapping_sub(self.lt_last_delivered) as u32;
        if delivered == 0 || (lost << BBR_SCALE) < BBR_LT_LOSS_THRESH.wrapping_mul(delivered) {
            return;
        }

        let mut t = ((tp.delivered_mstamp_us / 1000) as u32).wrapping_sub(self.lt_last_stamp);
        if (t as i32) < 1 {
            return; // shorter than a millisecond
        }
        if t >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        t *= 1000;
        let bw = (delivered as u64 * BW_UNIT) / t as u64;
        self.lt_bw_interval_done(tp, bw as u32);
    }

    // ---- Model update ----

    /// `bbr_update_bw`: detect round boundaries and feed the max-bw filter. App-limited samples
    /// only count if they are at least the current max.
    fn update_bw(&mut self, tp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }

        // A round ends when a packet sent after the previous round's end is delivered.
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }

        self.lt_bw_sampling(tp, rs);

        let bw = ((rs.delivered as u64 * BW_UNIT) / rs.interval_us as u64) as u32;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BBR_BW_RTTS, self.rtt_cnt as u64, bw as u64);
        }
    }

    /// `bbr_update_ack_aggregation`: within an epoch that starts whenever ACKs fall behind the
    /// bw estimate, track how many more packets were ACKed than bw * elapsed predicts. The max
    /// is kept in two slots that alternate every 5 rounds (a 5-10 round window), each value
    /// capped by cwnd.
    fn update_ack_aggregation(&mut self, tp: &TcpState, rs: &RateSample) {
        let bw = self.bw();
        self.ack_aggr
            .update(tp, rs, bw, self.round_start, EXTRA_ACKED_WIN_RTTS);
    }

    /// `bbr_check_full_bw_reached`: in each new, not app-limited round, either the max bw grew
    /// by 25% (remember it, reset the count) or it did not (count; 3 such rounds = full).
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.full_bw as u64 * BBR_FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt = (self.full_bw_cnt + 1) & 0x3;
        self.full_bw_reached = self.full_bw_cnt >= BBR_FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP -> DRAIN once the pipe is full (also publishing the BDP
    /// target as ssthresh), and DRAIN -> PROBE_BW once in-network data is down to that target
    /// (possibly on the same ACK).
    fn check_drain(&mut self, tp: &mut TcpState) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight())
                <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// `bbr_check_probe_rtt_done`: after the PROBE_RTT deadline, restart the min_rtt timer
    /// (version 1's only filter; version 3 restarts its 5 s one), restore the saved cwnd (never
    /// lowering it) and go back to STARTUP or PROBE_BW (version 3: PROBE_BW's CRUISE).
    fn check_probe_rtt_done(&mut self, tp: &mut TcpState) {
        if !self.probe_rtt.deadline_passed(tp) {
            return;
        }
        self.min_rtt_stamp = jiffies32(tp);
        tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
        self.reset_mode(tp);
    }

    /// `bbr_update_min_rtt`: update the 10 s min_rtt filter (an expired estimate is replaced by
    /// any sample not from a delayed ACK); on expiry enter PROBE_RTT unless restarting from
    /// idle (version 3 schedules PROBE_RTT from a second, 5 s filter instead). In PROBE_RTT,
    /// mark the connection app-limited (so the low-rate samples do not pull the bw estimate
    /// down), wait for inflight <= 4, then hold for max(200 ms, one round): the dwell both
    /// versions share ([`ProbeRtt`]).
    fn update_min_rtt(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let now = jiffies32(tp);
        let filter_expired = after32(
            now,
            self.min_rtt_stamp.wrapping_add(MIN_RTT_WIN_SEC * tp.hz),
        );
        if rs.rtt_us >= 0
            && (rs.rtt_us <= self.min_rtt_us as i64 || (filter_expired && !rs.is_ack_delayed))
        {
            self.min_rtt_us = rs.rtt_us as u32;
            self.min_rtt_stamp = now;
        }

        if PROBE_RTT_MODE_MS > 0
            && filter_expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt.enter();
        }

        if self.mode == Mode::ProbeRtt {
            // Version 1 waits for inflight to reach 4 packets (version 3: half the BDP).
            let drained = self.probe_rtt.waiting() && tp.packets_in_flight() <= BBR_CWND_MIN_TARGET;
            let next_rtt_delivered = &mut self.next_rtt_delivered;
            if self
                .probe_rtt
                .on_ack(tp, now, drained, self.round_start, next_rtt_delivered)
            {
                self.check_probe_rtt_done(tp);
            }
        }
        // Idle restart is over once an ACK delivers new data.
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        match self.mode {
            Mode::Startup => {
                self.pacing_gain = BBR_HIGH_GAIN;
                self.cwnd_gain = BBR_HIGH_GAIN;
            }
            Mode::Drain => {
                self.pacing_gain = BBR_DRAIN_GAIN;
                self.cwnd_gain = BBR_HIGH_GAIN;
            }
            Mode::ProbeBw => {
                self.pacing_gain = if self.lt_use_bw {
                    BBR_UNIT
                } else {
                    BBR_PACING_GAIN[self.cycle_idx as usize]
                };
                self.cwnd_gain = BBR_CWND_GAIN;
            }
            Mode::ProbeRtt => {
                self.pacing_gain = BBR_UNIT;
                self.cwnd_gain = BBR_UNIT;
            }
        }
    }

    /// `bbr_update_model`, in Linux's order.
    fn update_model(&mut self, tp: &mut TcpState, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut TcpState) {
        self.prior_cwnd = 0;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = 0;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;

        self.probe_rtt = ProbeRtt::default();
        self.min_rtt_us = tp.min_rtt_us;
        self.min_rtt_stamp = jiffies32(tp);

        self.bw.reset(self.rtt_cnt as u64, 0);

        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);

        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.reset_startup_mode();

        self.ack_aggr.reset(tp.now_us);
    }

    /// `bbr_undo_cwnd`: BBR did not cut cwnd for the spurious loss, so it keeps it, but the
    /// slow-down may have fooled full-pipe detection and the policer detector: restart both.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    /// `bbr_ssthresh`: called on entering Recovery/Loss. BBR does not reduce ssthresh; it only
    /// saves cwnd for the restore at the end of recovery.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// `bbr_set_state`: an RTO (entering Loss) counts as the end of a round with a loss: reset
    /// full-pipe detection, remember Loss as the previous state (so cwnd is restored when it
    /// ends) and let the policer detector see the loss.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample {
                losses: 1,
                delivered: 0,
                interval_us: 0,
                rtt_us: 0,
                ..RateSample::default()
            };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// `bbr_cwnd_event`: on the first transmission after idle while app-limited, note the
    /// restart (PROBE_RTT is not entered until data is delivered), restart the aggregation
    /// epoch, and in PROBE_BW pace at exactly bw; in PROBE_RTT check whether it can end now.
    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        if ev == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.ack_aggr.restart_epoch(tp.now_us);
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    /// `bbr_main`: update the model, then pacing rate, then cwnd.
    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) -> bool {
        self.update_model(tp, rs);
        let bw = self.bw();
        let (pacing_gain, cwnd_gain) = (self.pacing_gain, self.cwnd_gain);
        self.set_pacing_rate(tp, bw, pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, cwnd_gain);
        true
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    /// Probing start (not Linux's BBR): take the ACK train's rate as the bandwidth model,
    /// count the pipe as filled (STARTUP ends; DRAIN and PROBE_BW follow) and open cwnd to
    /// its target at once.
    fn jump_start(&mut self, tp: &mut TcpState, bw: u64, _min_rtt_us: u32) {
        let per_us = common::bw_from_bytes_per_sec(bw, tp.mss);
        if per_us <= self.max_bw() {
            return;
        }
        self.bw
            .update(BBR_BW_RTTS, self.rtt_cnt as u64, per_us as u64);
        self.full_bw = self.max_bw();
        self.full_bw_reached = true;
        let target = self.inflight(tp, self.max_bw(), BBR_CWND_GAIN);
        if target > tp.snd_cwnd {
            tp.set_cwnd(target);
        }
    }

    /// `bbr_sndbuf_expand()`: 3 x cwnd, as BBR may slow-start even during recovery.
    fn sndbuf_expand(&self) -> u32 {
        3
    }

    fn min_tso_segs(&self, tp: &TcpState) -> u32 {
        Self::min_tso_segs(tp)
    }

    fn mode_name(&self) -> &'static str {
        self.mode.name()
    }
}

#[cfg(test)]
mod tests;
