//! BBRv3, modelled on Google's `net/ipv4/tcp_bbr.c` from the `google/bbr` v3 branch
//! (commit 001a430b3ddbbc6d9173061a74d8b580c757b91b).
//!
//! # The model in brief
//!
//! Like version 1 ([`super::bbr`]), BBRv3 paces at a multiple of a bandwidth estimate and caps
//! inflight at a multiple of the estimated bandwidth-delay product, and it learns both from
//! delivery-rate and RTT samples. What version 3 adds is an *operating range* for the model,
//! bounded on both sides and learned from loss (and, where allowed, from ECN marks):
//!
//! * the **upper bounds**, long-term and robust: `bw_hi`, the largest delivery rate seen in
//!   the current or the previous bandwidth-probing cycle (a two-slot max filter whose window
//!   moves once per cycle, not per round), and `inflight_hi`, the most data that could be in
//!   flight without the loss rate passing 2% (or the CE-mark rate passing 50%) the last time
//!   the flow probed. `inflight_hi` is only set once probing has gone too far, and grows
//!   again whenever a higher inflight turns out to be safe;
//! * the **lower bounds**, short-term and cautious: `bw_lo` and `inflight_lo`. In each round
//!   trip with loss outside bandwidth probing they are cut to 70% (never below what the last
//!   round actually delivered), and in each round with CE marks `inflight_lo` is cut in
//!   proportion to an EWMA of the marking rate. They are forgotten whenever the flow starts
//!   probing again.
//!
//! The bandwidth used for pacing is `min(bw_hi, bw_lo)`; cwnd is the gain-scaled BDP plus an
//! ACK-aggregation allowance, capped by `inflight_hi` (with 15% headroom while cruising) and
//! `inflight_lo`.
//!
//! ```text
//!          start
//!            |
//!            v
//!   +---> STARTUP -------------+   STARTUP: pacing gain 2.77, cwnd gain 2: the rate doubles
//!   |        |                 |   per round. Ends after 3 rounds without 25% bw growth, or
//!   |        v                 |   on too much loss (6 lossy ACKs in a recovery round and
//!   |      DRAIN --------------+   > 2% lost), or on 2 rounds with > 50% CE marks.
//!   |        |                 |   DRAIN: pace at 0.34 until inflight is down to one BDP.
//!   |        v                 |
//!   +---> PROBE_BW ------------+   PROBE_BW, four phases:
//!   |   DOWN -> CRUISE         |     DOWN (0.91) drains what probing queued, until inflight
//!   |     ^        |           |       is at most the BDP and leaves 15% of inflight_hi free;
//!   |     |        v           |     CRUISE (1.0) holds, cutting the lower bounds on loss;
//!   |     UP <- REFILL         |     REFILL (1.0, lower bounds dropped) refills the pipe for
//!   |                          |       one round;
//!   |                          |     UP (1.25, cwnd gain 2.25) probes, growing inflight_hi
//!   |                          |       1, 2, 4, ... packets per round, until a bw plateau,
//!   |                          |       too much loss/CE, or inflight_hi if the last probe
//!   |                          |       was too high.
//!   |                          |   The next REFILL comes 2-3 s (random) after DOWN started,
//!   |                          |   or sooner after min(63, BDP) rounds, a Reno flow's cycle.
//!   +----- PROBE_RTT <---------+   PROBE_RTT: when no RTT as low as min_rtt was seen for 5 s,
//!        (back to STARTUP if the     cwnd = max(4, BDP/2) for 200 ms and one round; then
//!         pipe was never filled)     CRUISE (or STARTUP if the pipe was never filled).
//! ```
//!
//! The per-ACK order is `bbr_main()`'s, with an app-limited fast path that skips the model
//! update when a sample can change nothing: [`CongestionControl::cong_control`] in this file.
//! The phases live in their own files: `startup.rs` (plateau, loss-too-high and
//! ECN-too-high exits), `drain.rs`, `probe_bw.rs` (the four phases, the probe timing,
//! `inflight_hi` growth), `probe_rtt.rs` (min_rtt and PROBE_RTT) and `bounds.rs` (the bounds
//! and signals above, the ECN alpha, ACK aggregation).
//!
//! # Source and units
//!
//! Facts (constants, fixed-point scales, formulas, order of operations, state machine, field
//! widths) are taken from `net/ipv4/tcp_bbr.c` of the `google/bbr` v3 branch, commit
//! 001a430b3ddbbc6d9173061a74d8b580c757b91b, and its `tcp_rate.c` for the rate sample. Each
//! method names the kernel function it corresponds to. The code and comments are written
//! independently. Units are exactly the kernel's and version 1's: bandwidth in packets per
//! microsecond scaled by 2^24 in a `u32`; gains scaled by 2^8 (256 = 1.0); cwnd and the
//! inflight bounds in packets, `u32::MAX` meaning "no bound" (the kernel's `~0U`); pacing in
//! bytes per second; RTTs in microseconds; the min_rtt/PROBE_RTT timers in jiffies of
//! `TcpState::hz`; the probe-wait clock in microseconds of `tp.now_us` (`tp->tcp_mstamp`).
//! Narrow kernel bitfields are kept at their width where it changes the arithmetic
//! (`extra_acked` 16 bits, `ack_epoch_acked` 20, `full_bw_cnt` 2, `startup_ecn_rounds` 2,
//! `rounds_since_probe` 8 (saturating), `loss_events_in_round` 4 (saturating),
//! `bw_probe_up_rounds` 5).
//!
//! # Differences from the kernel (deliberate)
//!
//! * As in version 1, the earliest departure time (`tp->tcp_wstamp_ns`) is taken to be now
//!   (see [`super::bbr`]), so `bbr_packets_in_net_at_edt()` is inflight (plus one TSO burst
//!   while the pacing gain is above 1).
//! * Delivery counters are `u64`, so round ends compare with `>=` instead of the 32-bit
//!   `before()`; identical until 2^31 packets. The ECN alpha's differences are cut to 32 bits
//!   like the kernel's.
//! * PLB (protective load balancing, `tcp_plb_*`: re-hashing the IPv6 flow label after
//!   sustained CE marking, and its RTO hook) is not modelled: the model has one path per flow
//!   and the kernel's `net.ipv4.tcp_plb_enabled` defaults to 0, which also means the ECN
//!   alpha is only kept once the flow is ECN-eligible, as in the kernel.
//! * `bbr_can_use_ecn()` is the connection's negotiated ECN (`tp.ecn_ok`) and the registry
//!   parameter `ecn_low`, which stands for the route's `features ecn_low`. The receiver side
//!   of `precise_ece_ack` (the `CA_EVENT_ECN_IS_CE`/`NO_CE` handling with
//!   `dctcp_ece_ack_update()`) lives in the model's receiver, which echoes precisely when
//!   [`CongestionControl::wants_ce_events`] says so (with `ecn_low`). The kernel also keeps
//!   retransmissions ECN-capable (`TCP_ECN_ECT_PERMANENT`) under `ecn_low`; here that is the
//!   sender's choice, as `needs_ecn()` is false.
//! * `tp->fast_ack_mode` changes how the BBR host ACKs data *it receives*; the model's senders
//!   receive none, so it is left out.
//! * `bbr_tso_segs()` is given `GSO_LEGACY_MAX_SIZE` where the kernel passes the device's
//!   `sk_gso_max_size` (the same value for the lab's devices), and `tp.mss` for `mss_now`.
//!   `MAX_TCP_HEADER` is version 1's, [`super::bbr_common::MAX_TCP_HEADER`].
//! * A TLP-repaired loss (`bbr_run_loss_probe_recovery()`) takes its app-limited flag from
//!   `tp.app_limited` at that moment, as the sender does not record
//!   `tp->tlp_orig_data_app_limited` (whether the probed segment was first sent app-limited).
//! * `undo_cwnd` (`bbr_undo_cwnd()`) runs only on D-SACK evidence: the sender models no
//!   timestamp or F-RTO undo (see [`super`]).
//! * `get_info` (`struct tcp_bbr_info`) is the inherent method [`Bbr3::info`].
//!
//! # What the sender must provide
//!
//! Everything version 1 needs (see [`super::bbr`]), plus: `skb_marked_lost` for each segment
//! marked lost (after counting it in `tp.lost`), with its transmission record (`in_flight`,
//! `lost`, `is_app_limited`, `delivered_mstamp_us` 0 once delivered); the rate sample's
//! `tx_in_flight`, `lost` and `delivered_ce`, `is_ece` and `is_acking_tlp_retrans_seq`;
//! `cwnd_event(TlpRecovery)` when a TLP retransmission repaired a loss; `tp.delivered_ce`;
//! `tp.is_cwnd_limited`. No packet conservation in recovery (version 3 has none): cwnd is
//! the model's on every ACK, and leaving Loss (RTO) restores the cwnd saved by `ssthresh`.

mod bounds;
mod drain;
mod probe_bw;
mod probe_rtt;
mod startup;

#[cfg(test)]
mod harness;

pub use super::bbr_common::Mode;
use super::bbr_common::{
    self as common, jiffies32, AckAggregation, Pacing, BBR_SCALE, BBR_UNIT, BW_SCALE,
    GSO_LEGACY_MAX_SIZE, MAX_TCP_HEADER, SK_PACING_SHIFT,
};
use super::{
    CaEvent, CaState, CongestionControl, Controller, Param, ParamKind, ParamValue, Params,
    RateSample, SplitMix64, TcpState, TCP_INFINITE_SSTHRESH,
};
use crate::rate::TxRecord;

/// BBRv3 in the registry.
pub const CONTROLLER: Controller = Controller {
    name: "bbr3",
    aliases: &["bbrv3"],
    title: "BBRv3",
    summary:
        "BBR version 3 as Google's net/ipv4/tcp_bbr.c (google/bbr v3 branch, commit 001a430b3ddb)",
    params: &[Param {
        name: "ecn_low",
        kind: ParamKind::Bool,
        default: ParamValue::Bool(false),
        unit: "",
        help: "stands for the route's `features ecn_low` (a shallow-threshold ECN path); with \
               `[[flows]] ecn = true` it lets bbr3 use CE marks (below 5 ms of min_rtt) and \
               has the receiver echo them precisely",
    }],
    build,
};

fn build(p: &Params, seed: u64) -> Box<dyn CongestionControl> {
    Box::new(Bbr3::new(seed, p.bool("ecn_low")))
}

// ---- Parameters (the kernel's values; gains scaled by BBR_UNIT = 256) ----

/// Length of the min_rtt filter, seconds.
const MIN_RTT_WIN_SEC: u32 = 10;
/// Least time held at the PROBE_RTT cwnd, ms.
const PROBE_RTT_MODE_MS: u32 = 200;
/// Window of the PROBE_RTT-scheduling min filter, ms: PROBE_RTT comes about this often.
const PROBE_RTT_WIN_MS: u32 = 5000;
/// cwnd in PROBE_RTT as a fraction of the BDP (0.5).
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// The RTT-based TSO allowance halves for every 2^9 us of min_rtt.
const TSO_RTT_SHIFT: u32 = 9;
/// STARTUP pacing gain, 4 ln 2 ~ 2.77: 256 * 277 / 100 + 1 = 710.
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// Pacing rates: the initial one at the STARTUP gain, at least 1 byte/s.
const PACING: Pacing = Pacing {
    startup_gain: STARTUP_PACING_GAIN,
    floor: 1,
};
/// STARTUP (and DRAIN) cwnd gain, 2.0.
pub const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// DRAIN pacing gain, 1/2.885: 88.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// PROBE_BW cwnd gain, 2.0 (plus a quarter in UP).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// PROBE_BW pacing gains by phase: UP 5/4 (320), DOWN 0.91 (232), CRUISE and REFILL 1.0.
pub const PACING_GAIN: [u32; 4] = [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT];
/// Smallest cwnd aimed for.
pub const CWND_MIN_TARGET: u32 = 4;
/// A round whose bw grew by at least 1.25x means more may be available...
const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// ...and this many rounds without such growth mean the pipe is full.
const FULL_BW_CNT: u32 = 3;
/// ECN logic only on paths whose min_rtt is at most this, us.
const ECN_MAX_RTT_US: u32 = 5000;
/// Multiplicative cut of the lower bounds per lossy round: 0.3 (76), i.e. to 180/256 ~ 0.7.
pub const BETA: u32 = BBR_UNIT * 30 / 100;
/// EWMA gain of the ECN mark ratio (1/16).
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
/// Initial ECN alpha (1.0).
const ECN_ALPHA_INIT: u32 = BBR_UNIT;
/// On ECN, inflight_lo is cut to 1 - ecn_factor * alpha; ecn_factor 1/3 (85).
pub const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// Probing went too far when more than this share was CE-marked (1/2).
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
/// After an ECN-only cycle, the first probe round grows inflight_hi by this share of it (1/2).
const ECN_REPROBE_GAIN: u32 = BBR_UNIT / 2;
/// Probing went too far when more than this share of tx_in_flight was lost: 2% (5/256).
pub const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// React to a loss that a TLP repaired.
const LOSS_PROBE_RECOVERY: bool = true;
/// STARTUP ends on this many loss-marking ACKs in a recovery round (with loss > 2%).
const FULL_LOSS_CNT: u32 = 6;
/// STARTUP ends after this many rounds with CE ratio >= ECN_THRESH.
const FULL_ECN_CNT: u32 = 2;
/// Share of inflight_hi left free in CRUISE and PROBE_RTT: 15% (38/256).
pub const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// cwnd gain increment in UP, in quarters of BBR_UNIT (1 = +0.25).
const BW_PROBE_CWND_GAIN: u32 = 1;
/// At most this many rounds between probes (Reno coexistence).
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// Up to this many random rounds (0 or 1) are counted in advance.
const BW_PROBE_RAND_ROUNDS: u32 = 2;
/// Wall-clock wait between probes: 2 s ...
pub const BW_PROBE_BASE_US: u32 = 2_000_000;
/// ... plus up to 1 s at random.
const BW_PROBE_RAND_US: u32 = 1_000_000;
/// Take the app-limited fast path when nothing can change.
const FAST_PATH: bool = true;

/// The PROBE_BW phase (`enum bbr_pacing_gain_phase`, the kernel's `cycle_idx`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Up = 0,
    Down = 1,
    Cruise = 2,
    Refill = 3,
}

/// What the incoming ACKs say about bandwidth probing (`enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckPhase {
    /// Not probing, no probe feedback.
    Init,
    /// Sending at the estimated bw to fill the pipe.
    Refilling,
    /// Inflight rising to probe.
    ProbeStarting,
    /// ACKs for the probe's packets are arriving.
    ProbeFeedback,
    /// Probing stopped; its feedback still arriving.
    ProbeStopping,
}

/// What the kernel reports through inet_diag (`struct tcp_bbr_info`, `ss -ti`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bbr3Info {
    /// The bandwidth in use, min(bw_hi, bw_lo), bytes per second (no pacing margin).
    pub bw_bytes_per_sec: u64,
    /// The upper bound bw_hi, bytes per second.
    pub bw_hi_bytes_per_sec: u64,
    /// The lower bound bw_lo, bytes per second; `u64::MAX` = unset.
    pub bw_lo_bytes_per_sec: u64,
    pub min_rtt_us: u32,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
    pub mode: Mode,
    pub phase: &'static str,
    /// Packets; `u32::MAX` = unset.
    pub inflight_lo: u32,
    /// Packets; `u32::MAX` = unset.
    pub inflight_hi: u32,
    pub extra_acked: u32,
}

/// BBRv3 state (`struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr3 {
    rng: SplitMix64,
    /// The route's `features ecn_low` (registry parameter).
    ecn_low: bool,
    /// `init()` has run.
    initialized: bool,

    // ---- min_rtt and PROBE_RTT ----
    /// Windowed (10 s) min RTT, us; `u32::MAX` = none yet.
    min_rtt_us: u32,
    /// Jiffies of `min_rtt_us`.
    min_rtt_stamp: u32,
    /// Jiffies at which PROBE_RTT may end (0 = not armed).
    probe_rtt_done_stamp: u32,
    /// Min RTT over the 5 s PROBE_RTT window, us.
    probe_rtt_min_us: u32,
    /// Jiffies of `probe_rtt_min_us`.
    probe_rtt_min_stamp: u32,
    /// A round at the PROBE_RTT cwnd has passed.
    probe_rtt_round_done: bool,

    // ---- rounds and modes ----
    /// `tp.delivered` that ends the current round.
    next_rtt_delivered: u64,
    /// This ACK started a round.
    round_start: bool,
    /// Start of the current PROBE_BW cycle phase (wall clock), us.
    cycle_mstamp: u64,
    mode: Mode,
    cycle_idx: Phase,
    ack_phase: AckPhase,
    /// CA state on the previous ACK.
    prev_ca_state: CaState,
    /// Restarting after idle.
    idle_restart: bool,
    /// The fast path may be taken (cwnd reached its target).
    try_fast_path: bool,
    /// cwnd at `init()` (7 bits).
    init_cwnd: u32,
    has_seen_rtt: bool,
    pacing_gain: u32,
    cwnd_gain: u32,
    /// cwnd saved on entering recovery or PROBE_RTT.
    prior_cwnd: u32,

    // ---- full-pipe estimator ----
    full_bw_reached: bool,
    /// The current plateau search found one (STARTUP or PROBE_UP).
    full_bw_now: bool,
    /// Rounds without 25% growth (2 bits).
    full_bw_cnt: u32,
    /// Baseline bw of the plateau search.
    full_bw: u32,
    /// Consecutive STARTUP rounds with a high CE ratio (2 bits).
    startup_ecn_rounds: u32,
    /// ACKs that marked losses in the current round of STARTUP (4 bits, saturating).
    loss_events_in_round: u32,

    // ---- ACK aggregation ----
    ack_aggr: AckAggregation,

    // ---- the model's bounds ----
    /// Max bw of the previous and the current probing cycle.
    bw_hi: [u32; 2],
    /// Short-term lower bound on bw; `u32::MAX` = unset.
    bw_lo: u32,
    /// Long-term upper bound on inflight; `u32::MAX` = unset.
    inflight_hi: u32,
    /// Short-term lower bound on inflight; `u32::MAX` = unset.
    inflight_lo: u32,
    /// Max bw sample of the last round.
    bw_latest: u32,
    /// Max delivered-per-sample of the last round.
    inflight_latest: u32,
    undo_bw_lo: u32,
    undo_inflight_lo: u32,
    undo_inflight_hi: u32,

    // ---- congestion signals ----
    /// `tp.delivered` that ends the current loss round.
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    ecn_in_round: bool,
    loss_in_cycle: bool,
    ecn_in_cycle: bool,
    /// ECN may be used (can_use_ecn and min_rtt <= 5 ms); never cleared.
    ecn_eligible: bool,
    /// EWMA of the CE-marked share of delivered packets, 0..=256.
    ecn_alpha: u32,
    alpha_last_delivered: u64,
    alpha_last_delivered_ce: u64,

    // ---- bandwidth probing ----
    /// Rounds in UP so far (5 bits, at most 30).
    bw_probe_up_rounds: u32,
    /// Packets to ACK per inflight_hi increment.
    bw_probe_up_cnt: u32,
    /// Packets ACKed since the last increment.
    bw_probe_up_acks: u32,
    /// Wall-clock wait from DOWN's start to the next probe, us.
    probe_wait_us: u32,
    /// Rounds since the last probe (8 bits, saturating).
    rounds_since_probe: u32,
    /// Samples reflect bandwidth probing.
    bw_probe_samples: bool,
    /// The last probe went too high.
    prev_probe_too_high: bool,
    /// The last UP stopped at inflight_hi because the one before went too high.
    stopped_risky_probe: bool,
}

// ---- Small helpers ----

/// `bbr_rate_bytes_per_sec()`: scaled bw times gain in bytes per second, `margin` percent
/// under, at least 1. Multiplication order as the kernel's, to stay within 64 bits.
fn rate_bytes_per_sec(tp: &TcpState, rate: u64, gain: u32, margin: u64) -> u64 {
    common::rate_bytes_per_sec(tp, rate, gain, margin).max(1)
}

/// `bbr_bw_bytes_per_sec()`: no gain, no margin.
fn bw_bytes_per_sec(tp: &TcpState, bw: u32) -> u64 {
    rate_bytes_per_sec(tp, bw as u64, BBR_UNIT, 0)
}

/// `bbr_bw_to_pacing_rate()`: with the 1% margin, capped by `max_pacing_rate`.
pub fn bw_to_pacing_rate(tp: &TcpState, bw: u32, gain: u32) -> u64 {
    PACING.bw_to_pacing_rate(tp, bw, gain)
}

/// `bbr_calculate_bw_sample()`: delivered / interval in pkts/us << 24, rounded up so that a
/// slow flow can still grow; 0 for an invalid sample.
fn bw_sample(rs: &RateSample) -> u32 {
    if rs.interval_us <= 0 || rs.delivered < 0 {
        return 0;
    }
    ((rs.delivered as u64) << BW_SCALE).div_ceil(rs.interval_us as u64) as u32
}

impl Bbr3 {
    /// A controller whose random probe timing comes from a PRNG seeded with `seed`; `ecn_low`
    /// stands for the route's `features ecn_low`. The state is that of a zeroed
    /// `icsk_ca_priv`; [`CongestionControl::init`] sets it up.
    pub fn new(seed: u64, ecn_low: bool) -> Self {
        Bbr3 {
            rng: SplitMix64::new(seed),
            ecn_low,
            initialized: false,
            min_rtt_us: 0,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            probe_rtt_min_us: 0,
            probe_rtt_min_stamp: 0,
            probe_rtt_round_done: false,
            next_rtt_delivered: 0,
            round_start: false,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            cycle_idx: Phase::Up,
            ack_phase: AckPhase::Init,
            prev_ca_state: CaState::Open,
            idle_restart: false,
            try_fast_path: false,
            init_cwnd: 0,
            has_seen_rtt: false,
            pacing_gain: 0,
            cwnd_gain: 0,
            prior_cwnd: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw_cnt: 0,
            full_bw: 0,
            startup_ecn_rounds: 0,
            loss_events_in_round: 0,
            ack_aggr: AckAggregation::default(),
            bw_hi: [0; 2],
            bw_lo: 0,
            inflight_hi: 0,
            inflight_lo: 0,
            bw_latest: 0,
            inflight_latest: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            ecn_eligible: false,
            ecn_alpha: 0,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
            bw_probe_up_rounds: 0,
            bw_probe_up_cnt: 0,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            rounds_since_probe: 0,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
        }
    }

    // ---- Accessors ----

    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// The PROBE_BW phase (meaningful in PROBE_BW).
    pub fn phase(&self) -> Phase {
        self.cycle_idx
    }
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// `u32::MAX` = unset.
    pub fn inflight_hi(&self) -> u32 {
        self.inflight_hi
    }
    /// `u32::MAX` = unset.
    pub fn inflight_lo(&self) -> u32 {
        self.inflight_lo
    }
    /// `u32::MAX` = unset.
    pub fn bw_lo(&self) -> u32 {
        self.bw_lo
    }
    /// Whether ECN marks are used (`ecn_eligible`).
    pub fn ecn_eligible(&self) -> bool {
        self.ecn_eligible
    }
    /// The ECN alpha, 0..=256.
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha
    }

    /// `bbr_can_use_ecn()`: both ends negotiated ECN and the route says its CE marks are
    /// shallow-threshold (`ecn_low`).
    fn can_use_ecn(&self, tp: &TcpState) -> bool {
        tp.ecn_ok && self.ecn_low
    }

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

    /// `bbr_get_phase()` as a name.
    fn mode_str(&self) -> &'static str {
        match self.mode {
            Mode::Startup | Mode::Drain | Mode::ProbeRtt => self.mode.name(),
            Mode::ProbeBw => match self.cycle_idx {
                Phase::Up => "PROBE_BW_UP",
                Phase::Down => "PROBE_BW_DOWN",
                Phase::Cruise => "PROBE_BW_CRUISE",
                Phase::Refill => "PROBE_BW_REFILL",
            },
        }
    }

    // ---- Rates ----

    /// `bbr_init_pacing_rate_from_rtt()`: before any bw sample, STARTUP's gain times cwnd
    /// per srtt (1 ms without an RTT sample).
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpState) {
        PACING.init_from_rtt(tp, &mut self.has_seen_rtt);
    }

    /// `bbr_set_pacing_rate()`: until the pipe is full the rate only goes up.
    fn set_pacing_rate(&mut self, tp: &mut TcpState, bw: u32, gain: u32) {
        PACING.set(tp, &mut self.has_seen_rtt, self.full_bw_reached, bw, gain);
    }

    /// `bbr_tso_segs_generic()`: about 1 ms of data at the pacing rate, plus 64 KB halved for
    /// every 512 us of min_rtt, capped by the GSO size less headers, at least 2 segments
    /// (`tcp_min_tso_segs`).
    fn tso_segs_generic(&self, tp: &TcpState, mss: u32, gso_max_size: u64) -> u32 {
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
    fn save_cwnd(&mut self, tp: &TcpState) {
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
    fn quantization_budget(&self, tp: &TcpState, cwnd: u32) -> u32 {
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
    fn packets_in_net_at_edt(&self, tp: &TcpState, inflight_now: u32) -> u32 {
        common::packets_in_net_at_edt(tp, self.bw(), self.pacing_gain, inflight_now, || {
            self.tso_segs_goal(tp)
        })
    }

    /// `bbr_target_inflight()`: the BDP, unless congestion has cut cwnd below it.
    fn target_inflight(&self, tp: &TcpState) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.snd_cwnd)
    }

    /// `bbr_set_cwnd()`: grow by what was ACKed toward the target (gain-scaled BDP plus the
    /// aggregation allowance and budget); once the pipe is full, also snap down to it. The
    /// fast path is allowed once cwnd reaches the target. In PROBE_RTT cwnd is capped.
    fn set_cwnd(&mut self, tp: &mut TcpState, acked: u32, bw: u32, gain: u32, cwnd: u32) {
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
            let cap = self.probe_rtt_cwnd();
            tp.set_cwnd(tp.snd_cwnd.min(cap));
        }
    }

    /// `bbr_update_gains()`.
    fn update_gains(&mut self) {
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

    // ---- Per-ACK model ----

    /// `bbr_update_round_start()`: a round ends when a packet sent after the previous
    /// round's end is delivered.
    fn update_round_start(&mut self, tp: &TcpState, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    /// `bbr_update_model()`, in the kernel's order.
    fn update_model(&mut self, tp: &mut TcpState, rs: &RateSample, sample_bw: u32) {
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sample_bw);
        self.update_min_rtt(tp, rs);
    }

    /// `bbr_run_fast_path()`: an app-limited sample below the max, with no loss or ECN in the
    /// round, cannot change the bandwidth model. Only the mode, phase and min_rtt checks run;
    /// if none of them changes anything the rest of the ACK is skipped (returns true),
    /// otherwise the model update is skipped but the control is refreshed.
    fn run_fast_path(
        &mut self,
        tp: &mut TcpState,
        rs: &RateSample,
        sample_bw: u32,
        update_model: &mut bool,
    ) -> bool {
        if FAST_PATH
            && self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round
        {
            let prev_mode = self.mode;
            let prev_min_rtt_us = self.min_rtt_us;
            self.check_drain(tp);
            self.update_cycle_phase(tp, rs, sample_bw);
            self.update_min_rtt(tp, rs);
            if self.mode == prev_mode && self.min_rtt_us == prev_min_rtt_us && self.try_fast_path {
                return true;
            }
            *update_model = false;
        }
        false
    }

    /// `bbr_exit_loss_recovery()`: back to at least the cwnd saved before the RTO.
    fn exit_loss_recovery(&mut self, tp: &mut TcpState) {
        tp.set_cwnd(tp.snd_cwnd.max(self.prior_cwnd));
        self.try_fast_path = false;
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    /// `bbr_init()`.
    fn init(&mut self, tp: &mut TcpState) {
        self.initialized = true;
        self.init_cwnd = tp.snd_cwnd.min(0x7F);
        self.prior_cwnd = tp.prior_cwnd;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.next_rtt_delivered = tp.delivered;
        self.prev_ca_state = CaState::Open;

        self.probe_rtt_done_stamp = 0;
        self.probe_rtt_round_done = false;
        self.probe_rtt_min_us = tp.min_rtt_us;
        self.probe_rtt_min_stamp = jiffies32(tp);
        self.min_rtt_us = tp.min_rtt_us;
        self.min_rtt_stamp = jiffies32(tp);

        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);

        self.round_start = false;
        self.idle_restart = false;
        self.full_bw_reached = false;
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.cycle_mstamp = 0;
        self.cycle_idx = Phase::Up;
        self.mode = Mode::Startup;

        self.ack_aggr.reset(tp.now_us);

        self.try_fast_path = false;

        // ECN sampling starts once the first flight is delivered.
        self.loss_round_delivered = tp.delivered + 1;
        self.loss_round_start = false;
        self.undo_bw_lo = 0;
        self.undo_inflight_lo = 0;
        self.undo_inflight_hi = 0;
        self.loss_events_in_round = 0;
        self.startup_ecn_rounds = 0;
        self.reset_congestion_signals();
        self.bw_lo = u32::MAX;
        self.bw_hi = [0; 2];
        self.inflight_lo = u32::MAX;
        self.inflight_hi = u32::MAX;
        self.reset_full_bw();
        self.bw_probe_up_cnt = u32::MAX;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.probe_wait_us = 0;
        self.stopped_risky_probe = false;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_probe = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.ecn_eligible = false;
        self.ecn_alpha = ECN_ALPHA_INIT;
        self.alpha_last_delivered = 0;
        self.alpha_last_delivered_ce = 0;
    }

    /// `bbr_undo_cwnd()`: a recovery turned out spurious; restore the bounds saved by
    /// `ssthresh` and return the cwnd to go back to.
    fn undo_cwnd(&mut self, _tp: &mut TcpState) -> u32 {
        self.reset_full_bw();
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd
    }

    /// `bbr_ssthresh()`: entering recovery: save cwnd, and the loss-adapted bounds for undo.
    /// BBR leaves ssthresh as it is.
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.snd_ssthresh
    }

    /// `bbr_set_state()`: on an RTO (Loss), remember Loss as the previous state, restart the
    /// plateau search, and, when not probing and without a lower bound yet, seed
    /// `inflight_lo` with the cwnd before the RTO so the next lossy round cuts from there.
    /// Leaving Loss restores the saved cwnd.
    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.reset_full_bw();
            if !self.is_probing_bandwidth() && self.inflight_lo == u32::MAX {
                self.inflight_lo = tp.snd_cwnd.max(self.prior_cwnd);
            }
        } else if self.prev_ca_state == CaState::Loss {
            self.exit_loss_recovery(tp);
        }
    }

    /// `bbr_cwnd_event()`: restarting from idle (as version 1), and a loss repaired by a TLP.
    /// The ECN CE-state events are the receiver's (see the module docs).
    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        match ev {
            CaEvent::TxStart => {
                if tp.app_limited == 0 {
                    return;
                }
                self.idle_restart = true;
                self.ack_aggr.restart_epoch(tp.now_us);
                // Restarting app-limited: no need to go faster than the estimate.
                if self.mode == Mode::ProbeBw {
                    let bw = self.bw();
                    self.set_pacing_rate(tp, bw, BBR_UNIT);
                } else if self.mode == Mode::ProbeRtt {
                    self.check_probe_rtt_done(tp);
                }
            }
            CaEvent::TlpRecovery if LOSS_PROBE_RECOVERY => self.run_loss_probe_recovery(tp),
            _ => {}
        }
    }

    /// `bbr_skb_marked_lost()`.
    fn skb_marked_lost(&mut self, tp: &mut TcpState, tx: &TxRecord) {
        self.on_skb_marked_lost(tp, tx, 1);
    }

    /// `bbr_main()`.
    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) -> bool {
        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            // The CE ratio it returns feeds PLB only, which is not modelled.
            let _ = self.update_ecn_alpha(tp);
        }
        self.ecn_in_round |= self.ecn_eligible && rs.is_ece;
        let sample_bw = bw_sample(rs);
        self.update_latest_delivery_signals(tp, rs, sample_bw);

        let mut update_model = true;
        if !self.run_fast_path(tp, rs, sample_bw, &mut update_model) {
            if update_model {
                self.update_model(tp, rs, sample_bw);
            }
            self.update_gains();
            let bw = self.bw();
            let (pacing_gain, cwnd_gain) = (self.pacing_gain, self.cwnd_gain);
            self.set_pacing_rate(tp, bw, pacing_gain);
            let cwnd = tp.snd_cwnd;
            self.set_cwnd(tp, rs.acked_sacked, bw, cwnd_gain, cwnd);
            self.bound_cwnd_for_inflight_model(tp);
        }

        self.advance_latest_delivery_signals(rs, sample_bw);
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
        true
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    /// Probing start (not in the kernel): as version 1's, take the ACK train's rate as the
    /// bandwidth model, count the pipe as filled (STARTUP ends; DRAIN and PROBE_BW follow)
    /// and open cwnd to its PROBE_BW target at once.
    fn jump_start(&mut self, tp: &mut TcpState, bw: u64, _min_rtt_us: u32) {
        let per_us = common::bw_from_bytes_per_sec(bw, tp.mss);
        if per_us <= self.max_bw() {
            return;
        }
        self.take_max_bw_sample(per_us);
        self.full_bw = self.max_bw();
        self.full_bw_now = true;
        self.full_bw_reached = true;
        let target = self.inflight(tp, self.max_bw(), CWND_GAIN);
        if target > tp.snd_cwnd {
            tp.set_cwnd(target);
        }
    }

    /// `bbr_sndbuf_expand()`: 3 x cwnd.
    fn sndbuf_expand(&self) -> u32 {
        3
    }

    /// `bbr_tso_segs()`.
    fn tso_segs(&self, tp: &TcpState) -> Option<u32> {
        Some(self.tso_segs_generic(tp, tp.mss, GSO_LEGACY_MAX_SIZE))
    }

    /// The kernel's BBRv3 always has `TCP_CONG_WANTS_CE_EVENTS`, but acts on the events only
    /// when it can use ECN (`precise_ece_ack` with `ecn_low`): the receiver's precise echo.
    fn wants_ce_events(&self) -> bool {
        self.ecn_low
    }

    fn mode_name(&self) -> &'static str {
        self.mode_str()
    }
}

#[cfg(test)]
mod tests {
    use super::harness::*;
    use super::*;

    #[test]
    fn constants_are_the_kernels() {
        assert_eq!(STARTUP_PACING_GAIN, 710);
        assert_eq!(STARTUP_CWND_GAIN, 512);
        assert_eq!(DRAIN_GAIN, 88);
        assert_eq!(CWND_GAIN, 512);
        assert_eq!(PACING_GAIN, [320, 232, 256, 256]);
        assert_eq!(BETA, 76);
        assert_eq!(BBR_UNIT - BETA, 180); // the cut "to 0.7" is 180/256 = 0.703
        assert_eq!(LOSS_THRESH, 5);
        assert_eq!(ECN_THRESH, 128);
        assert_eq!(ECN_FACTOR, 85);
        assert_eq!(ECN_ALPHA_GAIN, 16);
        assert_eq!(INFLIGHT_HEADROOM, 38);
        assert_eq!(PROBE_RTT_CWND_GAIN, 128);
    }

    #[test]
    fn pacing_rate_fixed_point() {
        let mut tp = TcpState::new(1500, 10);
        // 1 packet per ms = 16777 in pkts/us << 24.
        let bw = ((1u64 << 24) / 1000) as u32;
        // 16777 * 1500 = 25_165_500; gain 1.0; * 990_000 >> 24 = 1_484_980.
        assert_eq!(bw_to_pacing_rate(&tp, bw, BBR_UNIT), 1_484_980);
        // Gain 5/4: 31_456_875 * 990_000 >> 24 = 1_856_226.
        assert_eq!(bw_to_pacing_rate(&tp, bw, 320), 1_856_226);
        // STARTUP 710: 25_165_500 * 710 >> 8 = 69_794_941; * 990_000 >> 24 = 4_118_501.
        assert_eq!(bw_to_pacing_rate(&tp, bw, STARTUP_PACING_GAIN), 4_118_501);
        // DOWN 232: 22_806_234; * 990_000 >> 24 = 1_345_763.
        assert_eq!(bw_to_pacing_rate(&tp, bw, 232), 1_345_763);
        // Without margin (inet_diag's bw): 25_165_500 * 1_000_000 >> 24 = 1_499_980.
        assert_eq!(bw_bytes_per_sec(&tp, bw), 1_499_980);
        // Never 0, and capped.
        assert_eq!(bw_to_pacing_rate(&tp, 0, BBR_UNIT), 1);
        tp.max_pacing_rate = 1_000_000;
        assert_eq!(bw_to_pacing_rate(&tp, bw, BBR_UNIT), 1_000_000);

        // Initial: cwnd 10 over 1 ms: bw 167_772; * 1500 * 710 >> 8 = 697_957_734;
        // * 990_000 >> 24 = 41_185_507.
        let mut tp = TcpState::new(1500, 10);
        let mut cc = Bbr3::new(1, false);
        cc.init(&mut tp);
        assert_eq!(tp.pacing_rate, 41_185_507);
    }

    #[test]
    fn bw_sample_rounds_up() {
        let rs = RateSample {
            delivered: 10,
            interval_us: 3,
            ..RateSample::default()
        };
        // 10 * 2^24 / 3 = 55_924_053.33 -> 55_924_054.
        assert_eq!(bw_sample(&rs), 55_924_054);
        let bad = RateSample {
            delivered: 10,
            interval_us: -1,
            ..RateSample::default()
        };
        assert_eq!(bw_sample(&bad), 0);
    }

    #[test]
    fn bdp_rounds_up_and_budget() {
        let mut tp = TcpState::new(MSS, 10);
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        // Before any RTT: the initial cwnd.
        assert_eq!(cc.bdp(123_456, BBR_UNIT), 10);
        cc.min_rtt_us = 20_000;
        // 2^24/100 = 167_772 (truncated) for 20 ms is 199.9995 packets: rounds up to 200.
        let bw = ((1u64 << 24) / 100) as u32;
        assert_eq!(cc.bdp(bw, BBR_UNIT), 200);
        assert_eq!(cc.bdp(bw, CWND_GAIN), 400);
        assert_eq!(cc.bdp(bw, PROBE_RTT_CWND_GAIN), 100);
        // One unit above an exact multiple still adds a packet.
        cc.min_rtt_us = 1;
        assert_eq!(cc.bdp(1 << 24, BBR_UNIT), 1);
        assert_eq!(cc.bdp((1 << 24) + 1, BBR_UNIT), 2);

        // TSO goal: pacing_rate >> 10 plus 64 KB >> (min_rtt >> 9), over mss, at least 2.
        cc.min_rtt_us = 20_000; // r = 39: no RTT allowance
        tp.pacing_rate = 14_480_000; // 14_140 bytes -> 9 segments
        assert_eq!(cc.tso_segs_goal(&tp), 9);
        cc.min_rtt_us = 1_000; // r = 1: + 32_768 bytes -> 46_908 / 1448 = 32
        assert_eq!(cc.tso_segs_goal(&tp), 32);
        tp.pacing_rate = 10_000_000_000; // capped at 65_535 - 320 = 65_215 bytes: 45
        assert_eq!(cc.tso_segs_goal(&tp), 45);
        tp.pacing_rate = 1000;
        cc.min_rtt_us = 100_000;
        assert_eq!(cc.tso_segs_goal(&tp), 2);
        assert_eq!(cc.tso_segs(&tp), Some(2));

        // Budget: max(cwnd, 3 * tso, 4), + 2 in PROBE_BW UP only.
        tp.pacing_rate = 14_480_000;
        cc.min_rtt_us = 20_000;
        assert_eq!(cc.quantization_budget(&tp, 400), 400);
        assert_eq!(cc.quantization_budget(&tp, 10), 27);
        cc.mode = Mode::ProbeBw;
        cc.cycle_idx = Phase::Up;
        assert_eq!(cc.quantization_budget(&tp, 400), 402);
        cc.cycle_idx = Phase::Cruise;
        assert_eq!(cc.quantization_budget(&tp, 400), 400);
    }

    #[test]
    fn mode_names_and_hooks() {
        let mut cc = Bbr3::new(0, false);
        let mut tp = TcpState::new(MSS, 10);
        cc.init(&mut tp);
        assert_eq!(cc.name(), "bbr3");
        assert!(cc.needs_pacing());
        assert!(!cc.needs_ecn());
        assert!(!cc.wants_ce_events());
        assert!(Bbr3::new(0, true).wants_ce_events());
        assert_eq!(cc.sndbuf_expand(), 3);
        assert_eq!(cc.mode_name(), "STARTUP");
        cc.mode = Mode::ProbeBw;
        for (p, n) in [
            (Phase::Up, "PROBE_BW_UP"),
            (Phase::Down, "PROBE_BW_DOWN"),
            (Phase::Cruise, "PROBE_BW_CRUISE"),
            (Phase::Refill, "PROBE_BW_REFILL"),
        ] {
            cc.cycle_idx = p;
            assert_eq!(cc.mode_name(), n);
        }
        cc.mode = Mode::ProbeRtt;
        assert_eq!(cc.mode_name(), "PROBE_RTT");
        cc.mode = Mode::Drain;
        assert_eq!(cc.mode_name(), "DRAIN");
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        assert!(cc.cong_control(&mut tp, &RateSample::default()));
    }

    #[test]
    fn registry_entry() {
        let c = crate::cc::by_name("bbrv3").expect("registered");
        assert_eq!(c.name(), "bbr3");
        assert_eq!(
            CONTROLLER.param("ecn_low").unwrap().default,
            ParamValue::Bool(false)
        );
        let on = CONTROLLER
            .resolve([("ecn_low", ParamValue::Bool(true))])
            .unwrap();
        assert!((CONTROLLER.build)(&on, 1).wants_ce_events());
        assert!(!(CONTROLLER.build)(&CONTROLLER.defaults(), 1).wants_ce_events());
    }

    #[test]
    fn rto_saves_and_restores_cwnd_and_seeds_inflight_lo() {
        let mut path = Path::new(4, 10, 20);
        path.run_until(3_000_000_000);
        let mut tp = path.tp.clone();
        let mut cc = path.cc.clone();
        assert_eq!(cc.mode, Mode::ProbeBw);
        cc.cycle_idx = Phase::Cruise;
        cc.inflight_lo = u32::MAX;
        cc.bw_lo = 12345;
        let cwnd = tp.snd_cwnd;
        // Linux order: ssthresh (saves), cwnd cut to inflight + 1, then set_state(Loss).
        assert_eq!(cc.ssthresh(&tp), tp.snd_ssthresh);
        assert_eq!(cc.prior_cwnd, cwnd);
        assert_eq!(cc.undo_bw_lo, 12345);
        tp.set_cwnd(1);
        cc.set_state(&mut tp, CaState::Loss);
        tp.ca_state = CaState::Loss;
        assert_eq!(cc.prev_ca_state, CaState::Loss);
        assert_eq!(cc.full_bw, 0);
        assert!(!cc.full_bw_now);
        assert_eq!(cc.inflight_lo, cwnd, "max(cwnd after RTO, saved cwnd)");
        // Leaving Loss restores the saved cwnd.
        cc.set_state(&mut tp, CaState::Open);
        assert_eq!(tp.snd_cwnd, cwnd);
        assert!(!cc.try_fast_path);

        // While probing, the RTO does not seed inflight_lo.
        let mut cc = path.cc.clone();
        cc.cycle_idx = Phase::Up;
        cc.inflight_lo = u32::MAX;
        cc.set_state(&mut tp, CaState::Loss);
        assert_eq!(cc.inflight_lo, u32::MAX);
    }

    #[test]
    fn undo_restores_saved_bounds() {
        let mut tp = TcpState::new(MSS, 10);
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        cc.bw_lo = 1000;
        cc.inflight_lo = 100;
        cc.inflight_hi = 200;
        tp.snd_cwnd = 150;
        cc.ssthresh(&tp);
        cc.bw_lo = 700;
        cc.inflight_lo = 70;
        cc.inflight_hi = 150;
        cc.loss_in_round = true;
        assert_eq!(cc.undo_cwnd(&mut tp), 150);
        assert_eq!((cc.bw_lo, cc.inflight_lo, cc.inflight_hi), (1000, 100, 200));
        assert!(!cc.loss_in_round);
    }

    #[test]
    fn fast_path_skips_app_limited_samples_that_change_nothing() {
        let mut path = Path::new(2, 10, 20);
        path.run_until(3_000_000_000);
        let mut tp = path.tp.clone();
        let mut cc = path.cc.clone();
        assert_eq!(cc.mode, Mode::ProbeBw);
        cc.try_fast_path = true;
        cc.loss_in_round = false;
        cc.ecn_in_round = false;
        cc.cycle_idx = Phase::Cruise;
        cc.cycle_mstamp = tp.now_us;
        cc.rounds_since_probe = 0;
        let before = cc.clone();
        // A small app-limited sample, not a round end: nothing changes, cwnd untouched even
        // though it is off target.
        tp.snd_cwnd += 50;
        let cwnd = tp.snd_cwnd;
        let rs = RateSample {
            prior_delivered: cc.next_rtt_delivered - 1,
            delivered: 1,
            interval_us: 30_000,
            acked_sacked: 1,
            rtt_us: 25_000,
            is_app_limited: true,
            ..RateSample::default()
        };
        cc.cong_control(&mut tp, &rs);
        assert_eq!(tp.snd_cwnd, cwnd, "fast path leaves cwnd alone");
        assert_eq!(cc.bw_hi, before.bw_hi);
        // The same sample without the app-limited flag takes the slow path: cwnd snaps back.
        let mut cc = before.clone();
        let rs = RateSample {
            is_app_limited: false,
            ..rs
        };
        cc.cong_control(&mut tp, &rs);
        assert!(tp.snd_cwnd < cwnd);
    }

    #[test]
    fn info_reports_bounds_and_phase() {
        let mut tp = TcpState::new(1500, 10);
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        let bw = ((1u64 << 24) / 1000) as u32; // 1 packet per ms
        cc.bw_hi = [bw, 0];
        cc.min_rtt_us = 10_000;
        cc.mode = Mode::ProbeBw;
        cc.cycle_idx = Phase::Refill;
        let i = cc.info(&tp);
        assert_eq!(i.bw_bytes_per_sec, 1_499_980);
        assert_eq!(i.bw_hi_bytes_per_sec, 1_499_980);
        assert_eq!(i.bw_lo_bytes_per_sec, u64::MAX, "unset");
        assert_eq!((i.inflight_lo, i.inflight_hi), (u32::MAX, u32::MAX));
        assert_eq!(i.phase, "PROBE_BW_REFILL");
        assert_eq!(i.min_rtt_us, 10_000);
        cc.bw_lo = bw / 2;
        cc.inflight_hi = 80;
        let i = cc.info(&tp);
        assert_eq!(i.bw_bytes_per_sec, i.bw_lo_bytes_per_sec);
        assert!(i.bw_bytes_per_sec < i.bw_hi_bytes_per_sec);
        assert_eq!(i.inflight_hi, 80);
    }

    #[test]
    fn jump_start_fills_the_pipe() {
        let mut tp = TcpState::new(MSS, 10);
        let mut cc = Bbr3::new(0, false);
        cc.init(&mut tp);
        cc.min_rtt_us = 20_000;
        // 1448 * 10_000 bytes/s = 10 pkt/ms.
        cc.jump_start(&mut tp, 14_480_000, 20_000);
        assert!(cc.full_bw_reached);
        assert_eq!(cc.max_bw(), ((10u128 << 24) / 1000) as u32);
        assert_eq!(tp.snd_cwnd, cc.inflight(&tp, cc.max_bw(), CWND_GAIN));
        assert!(tp.snd_cwnd >= 400);
    }
}
