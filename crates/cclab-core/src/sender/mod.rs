//! The sending end of a TCP connection, sans IO.
//!
//! The driver (simulator or transport) calls:
//! - [`Sender::poll_transmit`] until it returns `None`, to get the segments to put on the wire;
//! - [`Sender::on_ack`] when an ACK arrives;
//! - [`Sender::on_timeout`] at [`Sender::next_timeout`] (retransmission, tail-loss probe,
//!   RACK reordering timer, or the pacing release time).
//!
//! What happens on an ACK follows the order of Linux `tcp_ack()` (net/ipv4/tcp_input.c).
//! [`Sender::on_ack`] calls one method per step, in this order (in `input.rs` unless named):
//! 1. `ack_update_window`: the receive window's right edge and the timestamp to echo.
//! 2. `begin_ack`: the state the later steps measure against (in flight, `snd_una`, the
//!    highest SACK, lost count before the ACK; whether it echoes ECE).
//! 3. `sacktag`: SACK blocks (and a D-SACK) mark segments delivered ("sacktag"), then
//! 4. `clean_rtx_queue`: the cumulative ACK frees the segments below it; each newly
//!    delivered segment feeds the delivery-rate sampler ([`crate::rate`]) and RACK's "most
//!    recently delivered transmission" (`deliver`, `recovery.rs`).
//! 5. `account_delivery`: progress frees send-buffer space for the writer, an ECE ACK's
//!    deliveries count as CE-marked, and the probing start times the initial window's ACKs.
//! 6. `ack_update_rtt`: RTT: the oldest newly acknowledged never-retransmitted segment updates
//!    srtt/rttvar (Karn's rule; Linux would also use TCP timestamps for retransmissions, which
//!    this model does not carry); the most recently sent one updates min RTT and the rate
//!    sample's RTT.
//! 7. `rearm_rto`: progress restarts the retransmission timer.
//! 8. `rack_update_reo_wnd` (`recovery.rs`): D-SACKs widen RACK's reordering window (see
//!    Reordering below).
//! 9. `process_tlp_ack`: the end of a tail-loss-probe episode (see Tail-loss probes below).
//! 10. `in_ack_event`: the controller's `in_ack_event`.
//! 11. `alert_if_dubious`: for an ACK that is not plain progress in Open state
//!     (`tcp_ack_is_dubious()`), `fastretrans_alert`:
//!     - Loss detection with RACK (RFC 8985, `rack_detect_loss` in `recovery.rs`): a segment
//!       is lost once a segment sent after it was delivered and it has been outstanding for
//!       RACK.rtt + reo_wnd. reo_wnd is min_rtt/4 (times `reo_wnd_steps`, at most srtt);
//!       until reordering has been seen it is 0 during recovery and once `reordering`
//!       segments are SACKed (Linux `tcp_rack_reo_wnd()`). Outstanding transmissions sit in
//!       a queue ordered by send time, so detection costs O(1) amortised per segment,
//!       whatever the window.
//!     - The CA state machine (a subset of `tcp_fastretrans_alert()`): Open, Disorder (SACKs,
//!       no loss), Recovery (fast recovery until everything outstanding at its start is
//!       acknowledged: NewReno's `high_seq`, RFC 6582), Loss (after an RTO), CWR (an ECN
//!       echo, or a tail-loss probe that repaired a loss).
//! 12. `cong_control_on_ack`: the rate sample, the controller's `pkts_acked`, then congestion
//!     control as `tcp_cong_control()`: the controller's `cong_control` if it has one (BBR);
//!     else PRR (RFC 6937, `tcp_cwnd_reduction()`) during Recovery/CWR and `cong_avoid`
//!     otherwise (on in-order progress, or on any delivery once `reordering` exceeds 3:
//!     `tcp_may_raise_cwnd()`), then the default pacing rate (`tcp_update_pacing_rate()`).
//! 13. `end_ack`: in Open state the tail-loss probe is armed again; the outcome for the
//!     driver ([`AckOutcome`]).
//!
//! The code follows Linux's files: `output.rs` (tcp_output.c: transmission, TSO sizing and
//! deferral, pacing), `sndbuf.rs` (tcp.c's `tcp_sendmsg()`: the application's writes and the
//! send buffer), `input.rs` (tcp_input.c: the ACK's steps, the CA state machine, undo, PRR),
//! `recovery.rs` (the SACK scoreboard, RACK loss detection (tcp_recovery.c), marking lost) and
//! `timer.rs` (tcp_timer.c: RTO, tail-loss probe, RACK reordering timer).
//!
//! Reordering (net/ipv4/tcp_input.c, tcp_recovery.c): a never-retransmitted segment SACKed
//! below the highest SACKed one (`tcp_sacktag_one()`), cumulatively acknowledged below it
//! (`tcp_clean_rtx_queue()`), or a D-SACK for the second copy of a retransmitted segment
//! already SACKed, shows the path reorders (`tcp_check_sack_reordering()`): `reordering`
//! grows to the distance in segments (at most `sysctl_tcp_max_reordering`, 300) and
//! `reord_seen` counts the event. From then on RACK keeps its window of min_rtt/4 in recovery
//! and with many SACKs, so a late segment is not taken for lost. D-SACKs after that widen the
//! window by a step of min_rtt/4, at most once per round trip (`tcp_rack_update_reo_wnd()`),
//! for 16 recoveries (`reo_wnd_persist`). An RTO with `reordering` or more segments SACKed in
//! Open/Disorder state takes `reordering` back to 3 (`tcp_enter_loss()`). The send buffer
//! holds at least `reordering + 1` segments' worth (`tcp_sndbuf_expand()`).
//!
//! Undo (D-SACK based): the receiver reports a duplicate segment in the ACK's D-SACK
//! ([`Ack::dsack`]). Each window reduction for loss (Recovery, or an RTO) records `snd_una`
//! (`undo_marker`), the ssthresh to go back to (`prior_ssthresh`, none after an ECN echo)
//! and counts its retransmissions (`undo_retrans`, `tcp_retransmit_skb()`; not a loss
//! probe's); each D-SACK for data sent since counts one off (`tcp_check_dsack()`,
//! `tcp_sacktag_one()`). At 0 every retransmission was unneeded and the reduction is undone
//! (`tcp_undo_cwnd_reduction()`: cwnd from the controller's `undo_cwnd`, ssthresh back up):
//! during Recovery (`tcp_try_undo_dsack()`, then Open or Disorder), at its end
//! (`tcp_try_undo_recovery()`, and then cwnd is not set to ssthresh), after it on a late
//! D-SACK in Open/Disorder state, and in Loss state on progress (`tcp_try_undo_loss()`, which
//! also unmarks the segments marked lost). An ACK with a D-SACK that does not advance
//! `snd_una` runs the state machine even in Open state (`tcp_ack_is_dubious()`), so that a
//! late D-SACK can undo.
//!
//! Pacing: a controller that asks for it (BBR) is paced like Linux's internal TCP pacing:
//! each transmission pushes the next departure time forward by len / pacing_rate ("earliest
//! departure time", `tcp_update_skb_after_send()`, less up to half of it as credit for time
//! the sender was idle). Loss-based controllers are not paced by default, as in Linux without
//! the fq qdisc; [`SenderConfig::pacing`] can force either way.
//!
//! TSO/GSO ([`SenderConfig::tso`], on by default as on any Linux host): Linux hands the device
//! multi-segment buffers that leave back to back, and the model sends the same bursts:
//! - a burst is at most `tcp_tso_autosize()` segments: ~1 ms at the pacing rate
//!   (`sk_pacing_shift` 10), plus 64 KB >> (min_rtt / 512 us) on short paths
//!   (`tcp_tso_rtt_log` 9), at most 64 KB, at least the controller's `min_tso_segs`;
//! - a paced sender sends one burst per pacing slot, and the slot is the whole burst's
//!   length at the pacing rate;
//! - retransmissions go first, one lost run per burst (`tcp_xmit_retransmit_queue()`): the
//!   consecutive lost segments of one TSO buffer as it was first sent, at most a burst's
//!   worth; new data follows in bursts of its own;
//! - a buffer of new data carries at most half of cwnd (`tcp_cwnd_test()`: "at least 2 GSO
//!   packets in flight"), so a wide ACK releases two buffers, and deferral may hold the second;
//! - TSO deferral (`tcp_tso_should_defer()`): outside recovery, when the last transmission
//!   was less than 1 ms ago and an ACK is due within min(srtt/2, 1 ms), the sender waits for
//!   more ACKs until it may send a full burst or a third of cwnd. An ACK-clocked CUBIC or
//!   Reno thus sends bursts of up to a millisecond's worth instead of 2-3 segments per ACK.
//!   As in Linux, a deferral arms no timer: `tcp_write_xmit()` just stops, and the next call
//!   (the next ACK, or a retransmission or probe timer) decides again. A paced sender whose
//!   release time has passed while it defers is therefore not woken for pacing
//!   ([`Sender::next_timeout`]) until something else has happened.
//!
//! Tail-loss probes (RFC 8985 section 7, `tcp_schedule_loss_probe()`): in Open state, a probe
//! fires after 2*srtt (+ 200 ms if one segment is outstanding) without an ACK; it sends new
//! data if there is any, else retransmits the last segment. If the probe's ACK shows it
//! repaired a loss (no D-SACK), the window is reduced as for a loss (Linux
//! `tcp_process_tlp_ack()`).
//!
//! The hosts ([`crate::host`]): new data goes out only inside the receive window the last
//! ACKs advertised (`tcp_snd_wnd_test()`) and only once the application has written it.
//! The application writes whenever the send buffer has room, as `tcp_sendmsg_locked()`
//! does: it fills its unsent tail buffer, then starts new buffers of the size goal
//! (`tcp_xmit_size_goal()`: 64 kB less header room, at most half the peer's largest window)
//! while the buffer's use (payload plus each buffer's overhead, `sk_wmem_queued`) is below
//! `sk_sndbuf` and unsent bytes below `notsent_lowat`, then waits until a third of the
//! buffer is free (or unsent data is below half of `notsent_lowat`). While it writes, a tail
//! that the sender sends in pieces is refilled without a check
//! (`Sender::refill_tail`): an unpaced sender whose TSO bursts are shorter than a buffer
//! writes until cwnd is full, far past `sk_sndbuf` (Linux 6.18 in the lab kept 10.9 MB queued
//! against a 4 MB buffer on 200 Mbit/s x 400 ms). A write that finds nothing unsent marks
//! the connection application-limited (`tcp_rate_check_app_limited()` in `tcp_sendmsg()`).
//! The buffer expands with cwnd (`tcp_sndbuf_expand()`) up to `tcp_wmem[2]`. After an idle period
//! longer than the RTO, a controller without `cong_control` restarts from the initial window
//! (`tcp_slow_start_after_idle_check()`). Each segment echoes the receiver's latest
//! timestamp (`tsecr`), from which the receiver measures its RTT.
//!
//! ECN (RFC 3168 as Linux does it, [`SenderConfig::ecn`]): new data leaves ECT(0); a
//! retransmission leaves not-ECT unless the controller needs ECN (`tcp_ecn_send()`, DCTCP
//! keeps ECT). A controller that asks for ECT(1) (`CongestionControl::ect1`, TCP Prague)
//! sends all its data, retransmissions too, as ECT(1) (`TCP_ECN_ECT_1`). An ACK with ECE counts its newly delivered segments into `delivered_ce`
//! (`tcp_count_delivered()`), and in Open or Disorder state starts one window reduction
//! (`tcp_enter_cwr()`): ssthresh from the controller, CWR state with PRR down to it, the CWR
//! flag on the next new data segment, back to Open once an ACK covers more than what was
//! outstanding when it began. A loss during CWR turns it into Recovery without a second
//! reduction (`tcp_enter_recovery()` when already reducing).
//!
//! Not modelled (documented differences from Linux): F-RTO, and the evidence of spurious
//! recoveries that TCP timestamps give (`tcp_packet_delayed()`: the model's ACKs echo no data
//! timestamp, so neither `tcp_try_undo_partial()` nor its reordering detection runs, and
//! undo needs D-SACKs); D-SACKed segments counting as delivered (`sack_delivered`) and a
//! D-SACK SACKing or clearing the retransmission of an outstanding segment (the model's
//! receiver reports those segments in its SACK blocks); the D-SACK taking one of the three
//! SACK blocks; the buffers' boundaries as Linux splits them (`tcp_fragment()` at SACK
//! block edges, `tso_fragment()` within the writer's buffers: the model charges a buffer's
//! overhead per TSO burst sent, per size goal of unsent data, and merges SACKed runs),
//! zero-window probes (the model's receiver never
//! closes its window with nothing in flight), the merging of retransmitted TSO buffers
//! (`tcp_retrans_try_collapse()`).
//!
//! [`Ack::dsack`]: crate::packet::Ack::dsack

use crate::cc::{CongestionControl, TcpState};
use crate::host::HostTcp;
use crate::packet::Segment;
use crate::rangeset::RangeSet;
use crate::rate::{RateSampler, TxRecord};
use crate::rtt::RttEstimator;
use crate::Nanos;
use std::collections::{BTreeSet, VecDeque};

mod accecn;
mod input;
mod output;
mod recovery;
mod sndbuf;
#[cfg(test)]
mod tests;
mod timer;
mod tsq;

/// Linux `TCP_TIMEOUT_MIN`: 2 jiffies, added to the TLP and RACK reordering timeouts.
const TIMEOUT_MIN_JIFFIES: u64 = 2;
/// `sysctl_tcp_reordering` (3): the reordering degree, in segments, a connection assumes
/// until it sees more (`tp->reordering`'s initial value).
const TCP_REORDERING: u32 = 3;
/// `TCP_RACK_RECOVERY_THRESH`: recoveries over which a reordering window widened by
/// D-SACKs is kept before it falls back to min_rtt/4.
const RACK_RECOVERY_THRESH: u32 = 16;

#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// Payload bytes per segment.
    pub mss: u32,
    /// Initial congestion window in segments.
    pub init_cwnd: u32,
    /// Total bytes to send, `None` for an unlimited (bulk) transfer.
    pub size: Option<u64>,
    /// Force pacing on or off; `None` = as the controller asks (`needs_pacing`).
    pub pacing: Option<bool>,
    /// Send TSO/GSO bursts and defer as Linux does (see the module docs); `false` = one
    /// segment at a time.
    pub tso: bool,
    /// The host kernel's `CONFIG_HZ` ([`TcpState::hz`]): the TLP and RACK timers are armed
    /// in whole jiffies and fire on a tick, as Linux's `icsk` timers do.
    pub hz: u32,
    /// The sending host's settings: send buffer, `rto_min`, restart after idle,
    /// `notsent_lowat` ([`crate::host`]).
    pub host: HostTcp,
    /// The receive window the peer offered in its handshake, bytes (its
    /// [`crate::receiver::Receiver::advertised_window`] before any data).
    pub peer_init_wnd: u64,
    /// The connection negotiated ECN (the flow asked for it, or its controller needs it:
    /// see [`Sender::ecn`]).
    pub ecn: bool,
    /// The connection negotiated Accurate ECN feedback (both ends asked for it, as
    /// `tcp_ecn = 3` does; a controller that needs it negotiates it anyway).
    pub accecn: bool,
}

impl Default for SenderConfig {
    fn default() -> Self {
        SenderConfig {
            mss: 1448,
            init_cwnd: 10,
            size: None,
            pacing: None,
            tso: true,
            hz: crate::cc::DEFAULT_HZ,
            host: HostTcp::default(),
            peer_init_wnd: HostTcp::default().initial_rcv_wnd(1448),
            ecn: false,
            accecn: false,
        }
    }
}

/// `GSO_LEGACY_MAX_SIZE`: the largest TSO buffer, bytes.
const GSO_MAX_SIZE: u64 = 65536;

/// Counters a driver can report.
#[derive(Clone, Debug, Default)]
pub struct SenderStats {
    /// Data segments transmitted, including retransmissions.
    pub segments_sent: u64,
    /// Retransmitted segments (fast, RTO and probe retransmissions).
    pub retransmits: u64,
    /// Payload bytes transmitted, including retransmissions.
    pub bytes_sent: u64,
    pub rto_count: u64,
    pub tlp_count: u64,
    pub recoveries: u64,
    /// TSO/GSO bursts handed to the driver (segments_sent / bursts = the mean burst).
    pub bursts: u64,
    /// Bursts by size: `burst_segs[n]` bursts of n segments (n >= 64 in the last slot).
    pub burst_segs: Vec<u64>,
    /// Congestion-window restarts after idle (`tcp_cwnd_restart()`).
    pub idle_restarts: u64,
    /// Window reductions for an ECN echo (`tcp_enter_cwr()` from an ECE ACK).
    pub cwr_events: u64,
    /// Reordering events seen (`tp->reord_seen`, `tcpi_reord_seen`).
    pub reord_seen: u64,
    /// D-SACKed segments received (`tp->dsack_dups`, `tcpi_dsack_dups`).
    pub dsack_dups: u64,
    /// Window reductions undone because D-SACKs showed them spurious
    /// (`TCPDSACKUndo` + `TCPFullUndo` + `TCPLossUndo`).
    pub undos: u64,
    /// Probing start: the bottleneck rate the initial window's ACK train gave, bytes/s (0:
    /// the ACKs came together and measured nothing); `None` before it is known.
    pub probe_start_bw: Option<u64>,
    /// Segments in the burst being sent.
    cur_burst: u32,
}

/// What one ACK changed, for the driver's bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckOutcome {
    /// RTT of the most recently sent segment this ACK newly delivered (never retransmitted).
    pub rtt_sample: Option<Nanos>,
    /// Segments newly delivered (acked or sacked).
    pub delivered: u32,
    /// Segments newly marked lost.
    pub lost: u32,
}

const F_SACKED: u8 = 1;
const F_LOST: u8 = 2;
/// A retransmission of this segment is in flight (Linux `TCPCB_SACKED_RETRANS`).
const F_RETRANS: u8 = 4;
/// This segment was retransmitted at least once (Linux `TCPCB_EVER_RETRANS`).
const F_EVER_RETRANS: u8 = 8;
/// The last segment of the TSO buffer it was sent in: a boundary between Linux skbs, which
/// a retransmission does not cross.
const F_SKB_END: u8 = 16;

#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    rec: TxRecord,
    sent_ns: Nanos,
    flags: u8,
    /// Transmission count, to recognise stale entries in the RACK queue.
    gen: u32,
}

#[derive(Clone, Copy, Debug)]
struct Rack {
    /// Send time and end sequence of the most recently sent delivered transmission.
    xmit_ns: Nanos,
    end_seq: u64,
    /// RTT of that transmission.
    rtt_ns: Nanos,
    valid: bool,
    /// The reordering window in units of min_rtt/4 (`rack.reo_wnd_steps`): 1, plus one for
    /// each round trip in which D-SACKs showed a retransmission was spurious.
    reo_wnd_steps: u32,
    /// Recoveries still to end before a widened window falls back to one step
    /// (`rack.reo_wnd_persist`).
    reo_wnd_persist: u32,
    /// A D-SACK arrived since reordering was seen, and the window has not grown for it yet
    /// (`rack.dsack_seen`).
    dsack_seen: bool,
    /// `delivered` when the window last grew (`rack.last_delivered`): it grows at most once
    /// per round trip.
    last_delivered: u64,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            xmit_ns: 0,
            end_seq: 0,
            rtt_ns: 0,
            valid: false,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_delivered: 0,
        }
    }
}

pub struct Sender {
    cfg: SenderConfig,
    tp: TcpState,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    rate: RateSampler,
    pacing: bool,
    total_segs: Option<u64>,
    /// Per-segment state for `snd_una..snd_nxt`.
    segs: VecDeque<Seg>,
    sacked: RangeSet,
    /// Lost segments waiting for retransmission, retransmitted lowest first.
    lost_pending: BTreeSet<u64>,
    /// Live transmissions in send order: (send time, seq, gen).
    rack_q: VecDeque<(Nanos, u64, u32)>,
    rack: Rack,
    high_seq: u64,
    prr_delivered: u32,
    prr_out: u32,
    cwnd_usage_seq: u64,
    next_send_ns: Nanos,
    /// Segments still to go in the current TSO burst (sent back to back, without a pacing or
    /// deferral check).
    burst_left: u32,
    /// The current burst retransmits (one lost run of one TSO buffer) rather than sending
    /// new data.
    burst_retrans: bool,
    /// Time of the last transmission (Linux `tcp_wstamp_ns` without pacing).
    last_tx_ns: Option<Nanos>,
    rto_deadline: Option<Nanos>,
    tlp_deadline: Option<Nanos>,
    rack_deadline: Option<Nanos>,
    /// `snd_nxt` when the outstanding tail-loss probe was sent.
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    /// RTO expiries since the cumulative ACK last advanced (Linux `icsk_retransmits`).
    rto_retransmits: u32,
    /// A retransmission was marked lost while processing the current event.
    lost_retrans: bool,
    /// A probe sent by the TLP timer, handed out by the next `poll_transmit`.
    pending_probe: Option<Segment>,
    /// Whether the controller owns cwnd (its `cong_control` returned true).
    model_based: bool,
    /// The last transmission attempt was held back by TSO deferral, and nothing (ACK or
    /// timer) has happened since: no pacing wake-up until then.
    deferred: bool,
    started: bool,
    stats: SenderStats,
    /// Right edge of the receive window, bytes (`snd_una` + `snd_wnd`).
    snd_wnd_end: u64,
    /// The peer's latest timestamp (`ts_recent`), echoed on every segment.
    ts_recent: Nanos,
    /// The send buffer, bytes (`sk_sndbuf`).
    sndbuf: u64,
    /// Segments the application has written so far (`write_seq`).
    app_written: u64,
    /// The application waits for buffer space (`SOCK_NOSPACE`).
    app_blocked: bool,
    /// An ACK freed buffer space since the last write (`SOCK_QUEUE_SHRUNK`).
    queue_shrunk: bool,
    /// The application is inside a write at this instant (the time of its latest write):
    /// while the sender sends the unsent tail in pieces, the writer refills it past the send
    /// buffer ([`Sender::refill_tail`]).
    writing_at: Option<Nanos>,
    /// The largest window the peer has advertised, bytes (`tp->max_window`).
    max_window: u64,
    /// Send-queue buffers holding sent, unacknowledged data: the `F_SKB_END` marks in
    /// `snd_una..snd_nxt` (each costs [`host::SKB_OVERHEAD`] of the send buffer).
    skbs_out: u64,
    /// Transmissions the host's interface has not completed (TCP small queues).
    tsq: tsq::Tsq,
    /// Probing start (`HostTcp::probe_start`): the first and latest ACK of the initial
    /// window that delivered data, (time, delivered); `None` before the first. The jump is
    /// done once `stats.probe_start_bw` is known.
    train: Option<[(Nanos, u64); 2]>,
    /// The next new data segment carries CWR (`TCP_ECN_QUEUE_CWR`).
    queue_cwr: bool,
    /// The connection negotiated Accurate ECN (the controller needs it,
    /// `TCP_CONG_NEEDS_ACCECN`, and ECN is on): CE counts come from the ACE field.
    accecn: bool,
    accecn_tx: Option<accecn::AccEcnTx>,
    /// How far, in segments, the path has been seen to reorder (`tp->reordering`).
    reordering: u32,
    /// `snd_una` when the last loss-driven window reduction began, while it may still be
    /// undone (`tp->undo_marker`; `None` = Linux's 0: undone, or an ECN reduction).
    undo_marker: Option<u64>,
    /// Retransmissions since the reduction began that no D-SACK has shown unneeded yet
    /// (`tp->undo_retrans`; -1 = none at all). At 0 the reduction was spurious.
    undo_retrans: i64,
    /// ssthresh to restore on undo (`tp->prior_ssthresh`; 0 = the reduction is not to be
    /// undone, as after an ECN echo).
    prior_ssthresh: u32,
}

impl Sender {
    pub fn new(cfg: SenderConfig, cc: Box<dyn CongestionControl>) -> Self {
        let mut tp = TcpState::new(cfg.mss, cfg.init_cwnd.max(1));
        tp.hz = cfg.hz.max(1);
        tp.ecn_ok = cfg.ecn || cc.needs_ecn();
        let accecn = tp.ecn_ok && (cfg.accecn || cc.needs_accecn());
        let pacing = cfg.pacing.unwrap_or_else(|| cc.needs_pacing());
        tp.paced = pacing;
        let total_segs = cfg.size.map(|s| s.div_ceil(cfg.mss as u64));
        let rtt = RttEstimator::with_rto_min(cfg.host.rto_min);
        let snd_wnd_end = cfg.peer_init_wnd;
        let sndbuf = cfg.host.initial_sndbuf();
        Sender {
            cfg,
            tp,
            cc,
            rtt,
            rate: RateSampler::new(),
            pacing,
            total_segs,
            segs: VecDeque::new(),
            sacked: RangeSet::new(),
            lost_pending: BTreeSet::new(),
            rack_q: VecDeque::new(),
            rack: Rack::default(),
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            cwnd_usage_seq: 0,
            next_send_ns: 0,
            burst_left: 0,
            burst_retrans: false,
            last_tx_ns: None,
            rto_deadline: None,
            tlp_deadline: None,
            rack_deadline: None,
            tlp_high_seq: None,
            tlp_retrans: false,
            rto_retransmits: 0,
            lost_retrans: false,
            pending_probe: None,
            model_based: false,
            deferred: false,
            started: false,
            stats: SenderStats::default(),
            snd_wnd_end,
            ts_recent: 0,
            sndbuf,
            app_written: 0,
            app_blocked: false,
            queue_shrunk: false,
            writing_at: None,
            max_window: snd_wnd_end,
            skbs_out: 0,
            tsq: tsq::Tsq::default(),
            train: None,
            queue_cwr: false,
            accecn,
            accecn_tx: None,
            reordering: TCP_REORDERING,
            undo_marker: None,
            undo_retrans: -1,
            prior_ssthresh: 0,
        }
    }

    // ---------------------------------------------------------------- accessors
    /// The connection state shared with the controller (cwnd, inflight counters, ...).
    pub fn tcp(&self) -> &TcpState {
        &self.tp
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// With Accurate ECN: the CE-marked segments the peer's feedback counted
    /// (`tp->delivered_ce`) and the payload bytes it reported receiving ECT(0), ECT(1) and
    /// CE (`tp->delivered_ecn_bytes`, 32-bit as TCP_INFO gives them); `None` otherwise.
    pub fn accecn_counts(&self) -> Option<(u64, [u32; 3])> {
        self.accecn.then(|| {
            let bytes = self
                .accecn_tx
                .as_ref()
                .map_or([0; 3], |a| a.bytes_ect0_ect1_ce());
            (self.tp.delivered_ce, bytes)
        })
    }

    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }

    pub fn cc_name(&self) -> &'static str {
        self.cc.name()
    }

    pub fn cc_mode(&self) -> &'static str {
        self.cc.mode_name()
    }

    /// Whether the connection uses ECN: the flow asked for it or its controller needs it
    /// (a Linux receiver, `tcp_ecn` = 2 by default, accepts either request).
    pub fn ecn(&self) -> bool {
        self.tp.ecn_ok
    }

    /// How far, in segments, the path has been seen to reorder (`tp->reordering`; 3 until
    /// reordering is seen).
    pub fn reordering(&self) -> u32 {
        self.reordering
    }

    /// RACK's reordering window, in units of min_rtt/4 (`rack.reo_wnd_steps`).
    pub fn rack_reo_wnd_steps(&self) -> u32 {
        self.rack.reo_wnd_steps
    }

    pub fn is_paced(&self) -> bool {
        self.pacing
    }

    /// TSO deferral holds data back until the next ACK or timer (see the module docs).
    pub fn is_deferring(&self) -> bool {
        self.deferred
    }

    /// Latest delivery-rate sample in bits per second (Linux `tcpi_delivery_rate`).
    pub fn delivery_rate_bps(&self) -> f64 {
        self.rate.delivery_rate_bps(self.cfg.mss)
    }

    /// Hand a decision to an external controller ([`crate::cc::external`]), applied to cwnd
    /// and pacing at once; `false` if the flow's controller is not external.
    pub fn set_external_action(&mut self, a: &crate::cc::external::Action) -> bool {
        match self.cc.external() {
            Some(e) => {
                e.set_action(&mut self.tp, a);
                true
            }
            None => false,
        }
    }

    /// The next monitor interval's length, ns, if the controller is external.
    pub fn external_interval(&mut self) -> Option<Nanos> {
        let srtt = self.rtt.srtt();
        self.cc.external().map(|e| e.next_interval(srtt))
    }

    /// Whether a sized transfer has been fully acknowledged.
    pub fn is_done(&self) -> bool {
        matches!(self.total_segs, Some(t) if self.tp.snd_una >= t)
    }

    /// Pacing rate in bits per second (0 if unpaced and not computed yet).
    pub fn pacing_rate_bps(&self) -> f64 {
        if self.tp.pacing_rate == u64::MAX {
            0.0
        } else {
            self.tp.pacing_rate as f64 * 8.0
        }
    }

    fn set_now(&mut self, now: Nanos) {
        self.tp.now_ns = now;
        // +1 so that no timestamp is 0, which the rate sampler reserves for "none".
        self.tp.now_us = now / 1000 + 1;
        if !self.started {
            self.started = true;
            self.tp.pacing_rate = u64::MAX;
            self.cc.init(&mut self.tp);
            // `tcp_init_buffer_space()`: the send buffer is sized for the initial window.
            self.sndbuf_expand();
        }
    }

    /// The receive window the peer last advertised, bytes past `snd_una`.
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd_end
            .saturating_sub(self.tp.snd_una * self.cfg.mss as u64)
    }

    fn idx(&self, seq: u64) -> usize {
        (seq - self.tp.snd_una) as usize
    }
}

#[derive(Default)]
struct DeliveryAcc {
    delivered: u32,
    /// Segments newly SACKed (`FLAG_DATA_SACKED`).
    sacked: u32,
    /// Send times of the first and last newly cumulatively ACKed, never retransmitted segments.
    first_ackt: Option<Nanos>,
    last_ackt: Option<Nanos>,
    /// Same for newly SACKed segments, in sequence order.
    first_sackt: Option<Nanos>,
    last_sackt: Option<Nanos>,
    /// The cumulative ACK covered retransmitted data (no RTT sample from it: Karn's rule).
    retrans_data_acked: bool,
}
