//! The congestion-control interface.
//!
//! The trait is shaped like Linux's `struct tcp_congestion_ops` (include/net/tcp.h) so that a
//! controller ported from `net/ipv4/tcp_*.c` keeps its structure, hooks and units:
//!
//! | Linux hook      | here                                  | called by the sender when                          |
//! |-----------------|---------------------------------------|----------------------------------------------------|
//! | `init`          | [`CongestionControl::init`]           | the connection starts                              |
//! | `ssthresh`      | [`CongestionControl::ssthresh`]       | entering Recovery or Loss (RTO)                    |
//! | `cong_avoid`    | [`CongestionControl::cong_avoid`]     | an ACK in Open/Disorder state (not model-based)     |
//! | `set_state`     | [`CongestionControl::set_state`]      | the CA state changes                               |
//! | `cwnd_event`    | [`CongestionControl::cwnd_event`]     | TX start after idle, loss (RTO), CWR complete      |
//! | `pkts_acked`    | [`CongestionControl::pkts_acked`]     | an ACK acknowledges new data (with its RTT sample) |
//! | `cong_control`  | [`CongestionControl::cong_control`]   | every ACK, with the delivery-rate sample           |
//! | `in_ack_event`  | [`CongestionControl::in_ack_event`]   | every ACK, before loss detection (DCTCP's alpha)   |
//! | `skb_marked_lost` | [`CongestionControl::skb_marked_lost`] | a segment is marked lost (BBRv3's `inflight_hi`) |
//! | `undo_cwnd`     | [`CongestionControl::undo_cwnd`]      | D-SACKs showed a window reduction was spurious     |
//! | `tso_segs`      | [`CongestionControl::tso_segs`]       | sizing a TSO burst (BBRv3)                         |
//!
//! ECN (RFC 3168 as Linux does it, `tcp_ecn_*` in tcp_input.c/tcp_output.c) lives in the
//! sender and receiver: a controller only says whether it needs ECN
//! ([`CongestionControl::needs_ecn`], `TCP_CONG_NEEDS_ECN`) and whether the receiver should
//! echo every change of CE state at once ([`CongestionControl::wants_ce_events`],
//! `TCP_CONG_WANTS_CE_EVENTS`, DCTCP's precise echo), whether its packets carry the L4S
//! codepoint ECT(1) instead of ECT(0) ([`CongestionControl::ect1`], TCP Prague), and reads
//! the ECE flag and the count of segments delivered with it (`TcpState::delivered_ce`,
//! `RateSample::delivered_ce`).
//!
//! `undo_cwnd` runs when D-SACKs show that every retransmission of a recovery (or of the
//! recovery after an RTO) was unneeded (`tcp_undo_cwnd_reduction()`, from
//! `tcp_try_undo_recovery`, `tcp_try_undo_dsack`, `tcp_try_undo_loss`); the sender does not
//! model Linux's other evidence for it, TCP timestamps and F-RTO.
//!
//! A controller that implements `cong_control` (returns `true`) owns `snd_cwnd` and
//! `pacing_rate` entirely (BBR); otherwise the sender runs Linux's `tcp_cong_control()` logic:
//! `cong_avoid` outside recovery and PRR (RFC 6937) inside it, and computes a pacing rate like
//! `tcp_update_pacing_rate()` (200% of cwnd/srtt in slow start, 120% after).
//!
//! Units follow Linux: windows in packets, times in microseconds, rates in bytes per second.
//!
//! The connection state a controller works on ([`TcpState`], [`CaState`]) lives in
//! [`crate::tcp_sock`] and the delivery-rate sample ([`RateSample`]) in [`crate::rate`], below
//! the controllers; both are re-exported here.

pub mod bbr;
pub mod bbr3;
pub mod bbr_common;
pub mod cubic;
pub mod dctcp;
pub mod external;
pub mod prague;
pub mod registry;
pub mod reno;
#[cfg(test)]
pub(crate) mod testpath;

pub use crate::rate::RateSample;
pub use crate::tcp_sock::{CaState, TcpState, DEFAULT_HZ, TCP_INFINITE_SSTHRESH};
pub use registry::{by_name, find, Controller, Param, ParamKind, ParamValue, Params};

/// Events passed to [`CongestionControl::cwnd_event`] (Linux `enum tcp_ca_event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packet is in flight (after idle).
    TxStart,
    /// End of a CWR period.
    CompleteCwr,
    /// Loss timeout (RTO).
    Loss,
    /// A tail-loss probe's retransmission repaired a loss (`CA_EVENT_TLP_RECOVERY`, Google's
    /// BBRv3 kernels; mainline reduces cwnd without telling the controller).
    TlpRecovery,
}

/// Per-ACK sample for [`CongestionControl::pkts_acked`] (Linux `struct ack_sample`).
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    /// Segments newly acknowledged (cumulatively or by SACK) by this ACK.
    pub pkts_acked: u32,
    /// RTT sample in us from this ACK, or -1 if none (e.g. only retransmissions acked).
    pub rtt_us: i64,
    /// Packets in flight before this ACK.
    pub in_flight: u32,
}

/// A congestion controller. See the module docs for when each hook runs.
///
/// Every method has a default except [`name`](Self::name) and [`ssthresh`](Self::ssthresh),
/// as in Linux where `ssthresh` and `cong_avoid`-or-`cong_control` are mandatory.
pub trait CongestionControl: Send {
    /// Short name, as in `tcp_congestion_control` (`"reno"`, `"cubic"`, `"bbr"`).
    fn name(&self) -> &'static str;

    /// Connection start. May set the initial pacing rate, cwnd clamp, etc.
    fn init(&mut self, _tp: &mut TcpState) {}

    /// Return the slow-start threshold to use after a loss event.
    fn ssthresh(&mut self, tp: &TcpState) -> u32;

    /// Grow cwnd on an ACK that acknowledged `acked` new segments; `ack` is the new `snd_una`.
    /// Only called for controllers without `cong_control`, in Open/Disorder state.
    fn cong_avoid(&mut self, _tp: &mut TcpState, _ack: u64, _acked: u32) {}

    /// The CA state is about to change to `new_state` (`tp.ca_state` still holds the old one).
    fn set_state(&mut self, _tp: &mut TcpState, _new_state: CaState) {}

    /// A congestion-window event.
    fn cwnd_event(&mut self, _tp: &mut TcpState, _ev: CaEvent) {}

    /// New data was acknowledged.
    fn pkts_acked(&mut self, _tp: &mut TcpState, _sample: &AckSample) {}

    /// Every ACK, after SACK and cumulative processing and before loss detection
    /// (`in_ack_event`); `ece` = the ACK carried ECE on an ECN connection (`CA_ACK_ECE`).
    fn in_ack_event(&mut self, _tp: &mut TcpState, _ece: bool) {}

    /// A segment was just marked lost (`skb_marked_lost`, Google's BBRv3 kernels); `tx` is
    /// what the sender recorded when it was (last) sent.
    fn skb_marked_lost(&mut self, _tp: &mut TcpState, _tx: &crate::rate::TxRecord) {}

    /// A window reduction turned out spurious: return the cwnd to go back to (`undo_cwnd`).
    /// The default is Linux's `tcp_reno_undo_cwnd()`, which Reno and CUBIC use: the larger
    /// of cwnd and the cwnd before the reduction.
    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        tcp_reno_undo_cwnd(tp)
    }

    /// Model-based control on every ACK. Return `true` if this controller sets `snd_cwnd` and
    /// `pacing_rate` itself (then the sender skips `cong_avoid`, PRR and its pacing formula).
    fn cong_control(&mut self, _tp: &mut TcpState, _rs: &RateSample) -> bool {
        false
    }

    /// An accelerated sender's probing start (`HostTcp::probe_start`; not in Linux): the
    /// first round's ACK train measured the bottleneck at `bw` bytes per second. A
    /// loss-based controller opens cwnd to that rate's BDP and leaves slow start there.
    fn jump_start(&mut self, tp: &mut TcpState, bw: u64, min_rtt_us: u32) {
        let bdp = (bw as u128 * min_rtt_us as u128 / 1_000_000 / tp.mss.max(1) as u128) as u32;
        if bdp > tp.snd_cwnd {
            tp.set_cwnd(bdp);
            tp.snd_ssthresh = bdp;
        }
    }

    /// Send-buffer segments per cwnd segment (`sndbuf_expand`; Linux's default is 2).
    fn sndbuf_expand(&self) -> u32 {
        2
    }

    /// Whether the controller needs the sender to pace (Linux: `sk_pacing_status =
    /// SK_PACING_NEEDED`, which BBR requests so that TCP's internal pacing runs without sch_fq).
    fn needs_pacing(&self) -> bool {
        false
    }

    /// Smallest TSO burst, segments (`min_tso_segs`; Linux's default is the sysctl
    /// `tcp_min_tso_segs`, 2).
    fn min_tso_segs(&self, _tp: &TcpState) -> u32 {
        2
    }

    /// Segments in one TSO burst (`tso_segs`), replacing the sender's `tcp_tso_autosize()`;
    /// `None` = the sender's own.
    fn tso_segs(&self, _tp: &TcpState) -> Option<u32> {
        None
    }

    /// The controller needs ECN and negotiates it whatever the flow asked
    /// (`TCP_CONG_NEEDS_ECN`, DCTCP); its retransmissions stay ECN-capable.
    fn needs_ecn(&self) -> bool {
        false
    }

    /// The receiver should echo each change of CE state at once, so that ECE marks exactly
    /// the segments that were CE (`TCP_CONG_WANTS_CE_EVENTS` with DCTCP's
    /// `dctcp_ece_ack_update()`), instead of RFC 3168's ECE-until-CWR.
    fn wants_ce_events(&self) -> bool {
        false
    }

    /// The controller needs Accurate ECN feedback (`TCP_CONG_NEEDS_ACCECN`, RFC 9768): the
    /// connection negotiates AccECN (a Linux 6.18 receiver accepts it when its listener runs
    /// a controller that needs it too, as both ends of a Prague connection do), the receiver
    /// counts CE marks in the ACE field and the AccECN option, and the sender takes
    /// `delivered_ce` from them. Only with ECN ([`Self::needs_ecn`] or the flow's setting).
    fn needs_accecn(&self) -> bool {
        false
    }

    /// ECN-capable packets leave ECT(1), the L4S identifier (RFC 9331), instead of ECT(0)
    /// (`TCP_CONG_WANTS_ECT_1`, which sets `TCP_ECN_ECT_1`; TCP Prague). Only on a connection
    /// that negotiated ECN; an L4S sender's retransmissions stay ECN-capable, ECT(1) too.
    fn ect1(&self) -> bool {
        false
    }

    /// The external controller, whose decisions come from outside ([`external`]); `None` for
    /// every other.
    fn external(&mut self) -> Option<&mut external::External> {
        None
    }

    /// Human-readable internal state for traces (e.g. `"STARTUP"`, `"PROBE_BW"`).
    fn mode_name(&self) -> &'static str {
        ""
    }
}

/// Every controller the simulator has, one line each (see [`registry`]).
pub const CONTROLLERS: &[&Controller] = &[
    &reno::CONTROLLER,
    &cubic::CONTROLLER,
    &bbr::CONTROLLER,
    &bbr3::CONTROLLER,
    &dctcp::CONTROLLER,
    &prague::CONTROLLER,
    &external::CONTROLLER,
];

// ---- Helpers shared by loss-based controllers (Linux net/ipv4/tcp_cong.c) ----

/// Slow start (`tcp_slow_start()`): grow cwnd by `acked`, but not beyond ssthresh.
/// Returns the leftover `acked` to be used for congestion avoidance.
pub fn tcp_slow_start(tp: &mut TcpState, acked: u32) -> u32 {
    let cwnd = (tp.snd_cwnd + acked).min(tp.snd_ssthresh);
    let leftover = acked - (cwnd - tp.snd_cwnd).min(acked);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    leftover
}

/// Additive increase (`tcp_cong_avoid_ai()`): +1 packet per `w` acked packets.
pub fn tcp_cong_avoid_ai(tp: &mut TcpState, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits accumulated at a higher w, apply them gently now.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd += 1;
    }
    tp.snd_cwnd_cnt += acked;
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd += delta;
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// Reno's growth (`tcp_reno_cong_avoid()`): slow start up to ssthresh, then +1 packet per
/// window, and only while cwnd limits the sender.
pub fn tcp_reno_cong_avoid(tp: &mut TcpState, mut acked: u32) {
    if !tp.is_cwnd_limited() {
        return;
    }
    if tp.in_slow_start() {
        acked = tcp_slow_start(tp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.snd_cwnd;
    tcp_cong_avoid_ai(tp, w, acked);
}

/// `tcp_reno_undo_cwnd()`: back to the cwnd before the reduction, unless it grew past it.
pub fn tcp_reno_undo_cwnd(tp: &TcpState) -> u32 {
    tp.snd_cwnd.max(tp.prior_cwnd)
}

/// Reno's multiplicative decrease (`tcp_reno_ssthresh()`): half the window, at least 2.
pub fn tcp_reno_ssthresh(tp: &TcpState) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// A small deterministic PRNG (SplitMix64) for controllers that need randomness.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform integer in `[0, n)` (`get_random_u32_below`).
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }
}
