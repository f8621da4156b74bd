//! The controller's state: `struct bbr` ([`Bbr3`], its fields grouped as the kernel's are),
//! the PROBE_BW phase and ACK-phase enums, what `get_info` reports ([`Bbr3Info`], filled in
//! `control.rs`), and the constructor and accessors.

use super::{AckAggregation, CaState, Mode, ProbeRtt, SplitMix64, TcpState};

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
    pub(super) rng: SplitMix64,
    /// The route's `features ecn_low` (registry parameter).
    pub(super) ecn_low: bool,
    /// `init()` has run.
    pub(super) initialized: bool,

    // ---- min_rtt and PROBE_RTT ----
    /// Windowed (10 s) min RTT, us; `u32::MAX` = none yet.
    pub(super) min_rtt_us: u32,
    /// Jiffies of `min_rtt_us`.
    pub(super) min_rtt_stamp: u32,
    /// The PROBE_RTT dwell: its deadline, and whether a round at the PROBE_RTT cwnd has passed.
    pub(super) probe_rtt: ProbeRtt,
    /// Min RTT over the 5 s PROBE_RTT window, us.
    pub(super) probe_rtt_min_us: u32,
    /// Jiffies of `probe_rtt_min_us`.
    pub(super) probe_rtt_min_stamp: u32,

    // ---- rounds and modes ----
    /// `tp.delivered` that ends the current round.
    pub(super) next_rtt_delivered: u64,
    /// This ACK started a round.
    pub(super) round_start: bool,
    /// Start of the current PROBE_BW cycle phase (wall clock), us.
    pub(super) cycle_mstamp: u64,
    pub(super) mode: Mode,
    pub(super) cycle_idx: Phase,
    pub(super) ack_phase: AckPhase,
    /// CA state on the previous ACK.
    pub(super) prev_ca_state: CaState,
    /// Restarting after idle.
    pub(super) idle_restart: bool,
    /// The fast path may be taken (cwnd reached its target).
    pub(super) try_fast_path: bool,
    /// cwnd at `init()` (7 bits).
    pub(super) init_cwnd: u32,
    pub(super) has_seen_rtt: bool,
    pub(super) pacing_gain: u32,
    pub(super) cwnd_gain: u32,
    /// cwnd saved on entering recovery or PROBE_RTT.
    pub(super) prior_cwnd: u32,

    // ---- full-pipe estimator ----
    pub(super) full_bw_reached: bool,
    /// The current plateau search found one (STARTUP or PROBE_UP).
    pub(super) full_bw_now: bool,
    /// Rounds without 25% growth (2 bits).
    pub(super) full_bw_cnt: u32,
    /// Baseline bw of the plateau search.
    pub(super) full_bw: u32,
    /// Consecutive STARTUP rounds with a high CE ratio (2 bits).
    pub(super) startup_ecn_rounds: u32,
    /// ACKs that marked losses in the current round of STARTUP (4 bits, saturating).
    pub(super) loss_events_in_round: u32,

    // ---- ACK aggregation ----
    pub(super) ack_aggr: AckAggregation,

    // ---- the model's bounds ----
    /// Max bw of the previous and the current probing cycle.
    pub(super) bw_hi: [u32; 2],
    /// Short-term lower bound on bw; `u32::MAX` = unset.
    pub(super) bw_lo: u32,
    /// Long-term upper bound on inflight; `u32::MAX` = unset.
    pub(super) inflight_hi: u32,
    /// Short-term lower bound on inflight; `u32::MAX` = unset.
    pub(super) inflight_lo: u32,
    /// Max bw sample of the last round.
    pub(super) bw_latest: u32,
    /// Max delivered-per-sample of the last round.
    pub(super) inflight_latest: u32,
    pub(super) undo_bw_lo: u32,
    pub(super) undo_inflight_lo: u32,
    pub(super) undo_inflight_hi: u32,

    // ---- congestion signals ----
    /// `tp.delivered` that ends the current loss round.
    pub(super) loss_round_delivered: u64,
    pub(super) loss_round_start: bool,
    pub(super) loss_in_round: bool,
    pub(super) ecn_in_round: bool,
    pub(super) loss_in_cycle: bool,
    pub(super) ecn_in_cycle: bool,
    /// ECN may be used (can_use_ecn and min_rtt <= 5 ms); never cleared.
    pub(super) ecn_eligible: bool,
    /// EWMA of the CE-marked share of delivered packets, 0..=256.
    pub(super) ecn_alpha: u32,
    pub(super) alpha_last_delivered: u64,
    pub(super) alpha_last_delivered_ce: u64,

    // ---- bandwidth probing ----
    /// Rounds in UP so far (5 bits, at most 30).
    pub(super) bw_probe_up_rounds: u32,
    /// Packets to ACK per inflight_hi increment.
    pub(super) bw_probe_up_cnt: u32,
    /// Packets ACKed since the last increment.
    pub(super) bw_probe_up_acks: u32,
    /// Wall-clock wait from DOWN's start to the next probe, us.
    pub(super) probe_wait_us: u32,
    /// Rounds since the last probe (8 bits, saturating).
    pub(super) rounds_since_probe: u32,
    /// Samples reflect bandwidth probing.
    pub(super) bw_probe_samples: bool,
    /// The last probe went too high.
    pub(super) prev_probe_too_high: bool,
    /// The last UP stopped at inflight_hi because the one before went too high.
    pub(super) stopped_risky_probe: bool,
}

impl Bbr3 {
    /// A controller whose random probe timing comes from a PRNG seeded with `seed`; `ecn_low`
    /// stands for the route's `features ecn_low`. The state is that of a zeroed
    /// `icsk_ca_priv`; [`CongestionControl::init`](crate::cc::CongestionControl::init) sets it
    /// up.
    pub fn new(seed: u64, ecn_low: bool) -> Self {
        Bbr3 {
            rng: SplitMix64::new(seed),
            ecn_low,
            initialized: false,
            min_rtt_us: 0,
            min_rtt_stamp: 0,
            probe_rtt: ProbeRtt::default(),
            probe_rtt_min_us: 0,
            probe_rtt_min_stamp: 0,
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
    pub(super) fn can_use_ecn(&self, tp: &TcpState) -> bool {
        tp.ecn_ok && self.ecn_low
    }

    /// `bbr_get_phase()` as a name.
    pub(super) fn mode_str(&self) -> &'static str {
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
}
