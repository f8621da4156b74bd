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
//! update when a sample can change nothing: [`CongestionControl::cong_control`] in this file,
//! with the parameters. The phases live in their own files: `startup.rs` (plateau,
//! loss-too-high and ECN-too-high exits), `drain.rs`, `probe_bw.rs` (the four phases, the
//! probe timing, `inflight_hi` growth), `probe_rtt.rs` (min_rtt and PROBE_RTT) and
//! `bounds.rs` (the bounds and signals above, the ECN alpha, ACK aggregation); `state.rs`
//! holds the state (`struct bbr`) and its accessors, `control.rs` what the model sets
//! (pacing rate, TSO burst, cwnd, gains), and `tests.rs` the tests that are no phase's own.
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
mod control;
mod drain;
mod probe_bw;
mod probe_rtt;
mod startup;
mod state;

#[cfg(test)]
mod harness;

pub use super::bbr_common::Mode;
use super::bbr_common::{
    self as common, jiffies32, AckAggregation, Pacing, ProbeRtt, BBR_SCALE, BBR_UNIT, BW_SCALE,
    GSO_LEGACY_MAX_SIZE, MAX_TCP_HEADER, SK_PACING_SHIFT,
};
use super::{
    CaEvent, CaState, CongestionControl, Controller, Param, ParamKind, ParamValue, Params,
    RateSample, SplitMix64, TcpState, TCP_INFINITE_SSTHRESH,
};
use crate::rate::TxRecord;
use control::bw_sample;
pub use control::bw_to_pacing_rate;
pub use state::{AckPhase, Bbr3, Bbr3Info, Phase};

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

// ---- Per-ACK model ----

impl Bbr3 {
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

        self.probe_rtt = ProbeRtt::default();
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
mod tests;
