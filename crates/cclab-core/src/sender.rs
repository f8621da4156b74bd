//! The sending end of a TCP connection, sans IO.
//!
//! The driver (simulator or transport) calls:
//! - [`Sender::poll_transmit`] until it returns `None`, to get the segments to put on the wire;
//! - [`Sender::on_ack`] when an ACK arrives;
//! - [`Sender::on_timeout`] at [`Sender::next_timeout`] (retransmission, tail-loss probe,
//!   RACK reordering timer, or the pacing release time).
//!
//! What happens on an ACK follows the order of Linux `tcp_ack()` (net/ipv4/tcp_input.c):
//! 1. SACK blocks mark segments delivered ("sacktag"), then the cumulative ACK frees the
//!    segments below it; each newly delivered segment feeds the delivery-rate sampler
//!    ([`crate::rate`]) and RACK's "most recently delivered transmission".
//! 2. RTT: the oldest newly acknowledged never-retransmitted segment updates srtt/rttvar
//!    (Karn's rule; Linux would also use TCP timestamps for retransmissions, which this model
//!    does not carry); the most recently sent one updates min RTT and the rate sample's RTT.
//! 3. Loss detection with RACK (RFC 8985): a segment is lost once a segment sent after it was
//!    delivered and it has been outstanding for RACK.rtt + reo_wnd. reo_wnd is min_rtt/4
//!    (times `reo_wnd_steps`, at most srtt); until reordering has been seen it is 0 during
//!    recovery and once `reordering` segments are SACKed (Linux `tcp_rack_reo_wnd()`).
//!    Outstanding transmissions sit in a queue ordered by send time, so detection costs O(1)
//!    amortised per segment, whatever the window.
//! 4. The CA state machine (a subset of `tcp_fastretrans_alert()`): Open, Disorder (SACKs,
//!    no loss), Recovery (fast recovery until everything outstanding at its start is
//!    acknowledged: NewReno's `high_seq`, RFC 6582), Loss (after an RTO), CWR (an ECN echo,
//!    or a tail-loss probe that repaired a loss).
//! 5. Congestion control as `tcp_cong_control()`: the controller's `cong_control` if it has
//!    one (BBR); else PRR (RFC 6937, `tcp_cwnd_reduction()`) during Recovery/CWR and
//!    `cong_avoid` otherwise (on in-order progress, or on any delivery once `reordering`
//!    exceeds 3: `tcp_may_raise_cwnd()`), then the default pacing rate
//!    (`tcp_update_pacing_rate()`).
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
//! keeps ECT). An ACK with ECE counts its newly delivered segments into `delivered_ce`
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

use crate::cc::{AckSample, CaEvent, CaState, CongestionControl, RateSample, TcpState};
use crate::host::{self, HostTcp};
use crate::packet::{Ack, Ecn, Segment};
use crate::rangeset::RangeSet;
use crate::rate::{RateSampler, TxRecord};
use crate::rtt::RttEstimator;
use crate::{Nanos, NS_PER_SEC};
use std::collections::{BTreeSet, VecDeque};

/// Linux `TCP_TIMEOUT_MIN`: 2 jiffies, added to the TLP and RACK reordering timeouts.
const TIMEOUT_MIN_JIFFIES: u64 = 2;
/// `sysctl_tcp_reordering` (3): the reordering degree, in segments, a connection assumes
/// until it sees more (`tp->reordering`'s initial value).
const TCP_REORDERING: u32 = 3;
/// `sysctl_tcp_max_reordering` (300): the most `tp->reordering` grows to.
const TCP_MAX_REORDERING: u32 = 300;
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
        }
    }
}

/// `GSO_LEGACY_MAX_SIZE`: the largest TSO buffer, bytes.
const GSO_MAX_SIZE: u64 = 65536;
/// `TCP_MSS_DEFAULT`: windows up to this size are not halved for the size goal.
const TCP_MSS_DEFAULT: u64 = 536;
/// `tp->tcp_header_len` with the timestamp option: 20 + 12 bytes.
const TCP_HEADER_LEN: u64 = 32;
/// `sysctl_tcp_tso_rtt_log` (default 9): on paths with min_rtt below 2^k x 512 us, TSO
/// bursts grow by 64 KB >> k.
const TSO_RTT_LOG: u32 = 9;
/// `sk_pacing_shift` default: a TSO burst is about 1/1024 s of data at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// TSO deferral's limits (`tcp_tso_should_defer()`): the last transmission must be this
/// recent, and the next ACK due within min(srtt/2, this).
const TSO_DEFER_NS: Nanos = 1_000_000;

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
    /// Probing start (`HostTcp::probe_start`): the first and latest ACK of the initial
    /// window that delivered data, (time, delivered); `None` before the first. The jump is
    /// done once `stats.probe_start_bw` is known.
    train: Option<[(Nanos, u64); 2]>,
    /// The next new data segment carries CWR (`TCP_ECN_QUEUE_CWR`).
    queue_cwr: bool,
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
            train: None,
            queue_cwr: false,
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

    /// The send buffer, bytes (`sk_sndbuf`).
    pub fn sndbuf(&self) -> u64 {
        self.sndbuf
    }

    /// The receive window the peer last advertised, bytes past `snd_una`.
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd_end
            .saturating_sub(self.tp.snd_una * self.cfg.mss as u64)
    }

    /// `tcp_sndbuf_expand()`: room for `2 x max(10, cwnd, reordering + 1)` segments (3 x
    /// for controllers that ask, as BBR does), up to `tcp_wmem[2]`; never with `SO_SNDBUF`.
    fn sndbuf_expand(&mut self) {
        if self.cfg.host.sndbuf.is_some() {
            return;
        }
        let segs = (self.tp.snd_cwnd as u64)
            .max(10)
            .max(self.reordering as u64 + 1);
        let want = self.cc.sndbuf_expand() as u64 * segs * host::sndbuf_per_mss(self.cfg.mss);
        self.sndbuf = self.sndbuf.max(want.min(self.cfg.host.tcp_wmem[2]));
    }

    /// The last segment (exclusive) the receive window lets the sender send.
    fn wnd_limit(&self) -> u64 {
        let mss = self.cfg.mss as u64;
        match (self.cfg.size, self.total_segs) {
            (Some(size), Some(t)) if self.snd_wnd_end >= size => t,
            _ => self.snd_wnd_end / mss,
        }
    }

    /// `tcp_xmit_size_goal()`: the segments one send-queue buffer takes from the
    /// application's writes. TCP always has GSO (`sk_setup_caps()`): the device's 64 KB less
    /// the room reserved for headers, or half the largest window the peer has offered
    /// (`tcp_bound_to_half_wnd()`), whichever is smaller; at least one segment.
    fn size_goal_segs(&self) -> u64 {
        let gso = GSO_MAX_SIZE - (host::MAX_TCP_HEADER + 1);
        let cutoff = if self.max_window > TCP_MSS_DEFAULT {
            self.max_window / 2
        } else {
            self.max_window
        };
        let size = if cutoff > 0 && gso > cutoff {
            cutoff.max(68 - TCP_HEADER_LEN)
        } else {
            gso
        };
        (size / self.cfg.mss.max(1) as u64).max(1)
    }

    /// The writer's unsent tail (`tcp_sendmsg_locked()`). A write checks the send buffer
    /// only when it starts a new buffer (`sk_stream_memory_free()` at `new_segment`); bytes
    /// appended to the last, not yet full buffer are taken whatever the buffer holds. Once
    /// that tail is full and first in line to go, the writer sends it (`tcp_push_one()`),
    /// and TSO autosizing, cwnd or the receive window let only part of it go when the burst
    /// is shorter than the buffer's size goal (about 1 ms at the pacing rate against 64 KB:
    /// below ~500 Mbit/s). The rest stays as the tail, the writer fills it up again, sends
    /// the next piece, and so on: a writer woken with cwnd to spare writes until cwnd (or
    /// the receive window, or the pacing timer) stops the pieces, far past `sk_sndbuf`,
    /// leaving one full buffer unsent. A burst as long as the size goal takes the whole tail,
    /// and the writer's next buffer meets the send-buffer check.
    ///
    /// Called at the start of a burst of new data: while the writer is writing at this
    /// instant, the unsent data is topped up to the burst plus one full buffer.
    fn refill_tail(&mut self, now: Nanos) {
        if self.writing_at != Some(now) {
            return;
        }
        let goal = self.size_goal_segs();
        if self.burst_left as u64 >= goal {
            self.writing_at = None;
            return;
        }
        let total = self.total_segs.unwrap_or(u64::MAX);
        let want = (self.tp.snd_nxt + self.burst_left as u64 + goal).min(total);
        if want > self.app_written {
            self.app_written = want;
        }
    }

    /// Whether the writer would be woken now (`sk_stream_is_writeable()`): a third of the
    /// buffer free, and unsent data below half of `notsent_lowat`.
    fn writable(&self) -> bool {
        let mss = self.cfg.mss as u64;
        let queued = self.queued_bytes(self.app_written);
        let notsent = self.app_written.saturating_sub(self.tp.snd_nxt) * mss;
        self.sndbuf.saturating_sub(queued) >= queued / 2
            && self.cfg.host.notsent_lowat.is_none_or(|l| notsent << 1 < l)
    }

    /// The send buffer's use (`sk_wmem_queued`) if the application had written up to
    /// segment `written`: the payload of everything written and not yet acknowledged, and
    /// each buffer's overhead, for the buffers sent data sits in and for the unsent data in
    /// buffers of the size goal.
    fn queued_bytes(&self, written: u64) -> u64 {
        let mss = self.cfg.mss as u64;
        let unsent = written.saturating_sub(self.tp.snd_nxt);
        let skbs = self.skbs_out + unsent.div_ceil(self.size_goal_segs());
        written.saturating_sub(self.tp.snd_una) * mss + skbs * host::SKB_OVERHEAD
    }

    /// Bytes in flight or SACKed but not acknowledged, plus unsent, as `ss` shows them
    /// (`skmem w`, `sk_wmem_queued`).
    pub fn wmem_queued(&self) -> u64 {
        self.queued_bytes(self.app_written)
    }

    /// The application writes what the send buffer takes (see the module docs).
    fn app_write(&mut self, now: Nanos) {
        let total = self.total_segs.unwrap_or(u64::MAX);
        if self.queue_shrunk {
            // `tcp_check_space()` -> `tcp_new_space()`: after the push that follows an ACK,
            // a waiting writer gets a bigger buffer if the sender is not cwnd-limited.
            self.queue_shrunk = false;
            if self.app_blocked {
                let sendable = self
                    .app_written
                    .min(self.wnd_limit())
                    .saturating_sub(self.tp.snd_nxt);
                if (self.tp.packets_in_flight() as u64 + sendable) < self.tp.snd_cwnd as u64 {
                    self.sndbuf_expand();
                }
            }
        }
        if self.app_written >= total || (self.app_blocked && !self.writable()) {
            return;
        }
        self.writing_at = Some(now);
        let mss = self.cfg.mss as u64;
        // `tcp_sendmsg_locked()`: the writer fills its unsent tail buffer up to the size goal,
        // then starts new buffers while the queue is below `sk_sndbuf`
        // (`sk_stream_memory_free()`), filling each; so it stops at most one buffer past it.
        let goal = self.size_goal_segs();
        let unsent = self.app_written - self.tp.snd_nxt;
        let mut by_buf = self.app_written + (goal - unsent % goal) % goal;
        let queued = self.queued_bytes(by_buf);
        if queued < self.sndbuf {
            by_buf += goal * (self.sndbuf - queued).div_ceil(goal * mss + host::SKB_OVERHEAD);
        }
        let by_lowat = self
            .cfg
            .host
            .notsent_lowat
            .map_or(u64::MAX, |l| self.tp.snd_nxt + l.div_ceil(mss));
        let target = by_buf.min(by_lowat).min(total);
        if target > self.app_written {
            if self.app_written <= self.tp.snd_nxt {
                // `tcp_sendmsg()` found nothing unsent.
                if self.tp.packets_out == 0 {
                    self.restart_after_idle(now);
                }
                self.check_app_limited();
            }
            self.app_written = target;
        }
        self.app_blocked = self.app_written < total;
    }

    /// Probing start: time the ACKs of the initial window; once it is all delivered, their
    /// spacing is the bottleneck's rate (a packet train), and the controller jumps to it.
    fn probe_train(&mut self, now: Nanos) {
        let d = self.tp.delivered;
        let t = match self.train {
            None if d > 0 => {
                self.train = Some([(now, d), (now, d)]);
                return;
            }
            None => return,
            Some(mut t) => {
                t[1] = (now, d);
                self.train = Some(t);
                t
            }
        };
        if d < self.cfg.init_cwnd.max(2) as u64 {
            return;
        }
        let ([t0, d0], [t1, d1]) = ([t[0].0, t[0].1], [t[1].0, t[1].1]);
        // Done, with or without a usable train (ACKs that came together measure nothing).
        self.stats.probe_start_bw = Some(0);
        if t1 <= t0 || d1 <= d0 {
            return;
        }
        let bw = (d1 - d0) * self.cfg.mss as u64 * NS_PER_SEC / (t1 - t0);
        self.stats.probe_start_bw = Some(bw);
        let min_rtt = self.rtt.min_rtt_us();
        if min_rtt != u32::MAX {
            self.cc.jump_start(&mut self.tp, bw, min_rtt);
        }
    }

    /// `tcp_slow_start_after_idle_check()` / `tcp_cwnd_restart()`: idle for longer than the
    /// RTO, the window halves per RTO idle, down to the initial window.
    fn restart_after_idle(&mut self, now: Nanos) {
        let Some(last) = self.last_tx_ns else { return };
        if !self.cfg.host.slow_start_after_idle || self.model_based {
            return;
        }
        let rto = self.rtt.rto();
        let mut idle = now.saturating_sub(last);
        if idle <= rto {
            return;
        }
        let restart = self.cfg.init_cwnd.max(1).min(self.tp.snd_cwnd);
        self.tp.snd_ssthresh = self.tp.snd_ssthresh.max(
            // `tcp_current_ssthresh()`: 3/4 of cwnd when not in a reduction.
            (self.tp.snd_cwnd >> 1).max(self.tp.snd_cwnd - (self.tp.snd_cwnd >> 2)),
        );
        let mut cwnd = self.tp.snd_cwnd;
        while idle > rto && cwnd > restart {
            idle -= rto;
            cwnd >>= 1;
        }
        self.tp.snd_cwnd = cwnd.max(restart);
        self.stats.idle_restarts += 1;
    }

    fn seg_len(&self, seq: u64) -> u32 {
        match self.cfg.size {
            Some(size) => {
                let start = seq * self.cfg.mss as u64;
                (size - start).min(self.cfg.mss as u64) as u32
            }
            None => self.cfg.mss,
        }
    }

    /// Whether new data may go now: written by the application and inside the receive
    /// window.
    fn has_new_data(&self) -> bool {
        self.tp.snd_nxt < self.app_written.min(self.wnd_limit())
    }

    /// Whether the application has more to write, ever.
    fn app_has_more(&self) -> bool {
        self.total_segs.is_none_or(|t| self.tp.snd_nxt < t)
    }

    fn idx(&self, seq: u64) -> usize {
        (seq - self.tp.snd_una) as usize
    }

    // ---------------------------------------------------------------- sending

    /// The next segment to put on the wire now, if cwnd, pacing and data allow.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        self.set_now(now);
        if let Some(p) = self.pending_probe.take() {
            return Some(p);
        }
        self.app_write(now);
        let have_retrans = !self.lost_pending.is_empty();
        if !have_retrans && !self.has_new_data() {
            if !self.app_has_more() {
                self.check_app_limited();
            }
            return None;
        }
        if self.tp.packets_in_flight() >= self.tp.snd_cwnd {
            self.cwnd_validate(true);
            return None;
        }
        if self.burst_left == 0 {
            if self.pacing && now < self.next_send_ns {
                return None;
            }
            let quota = self.tp.snd_cwnd - self.tp.packets_in_flight();
            self.burst_retrans = have_retrans;
            if self.cfg.tso {
                let goal = self.tso_segs();
                if have_retrans {
                    // `tcp_xmit_retransmit_queue()`: one lost skb per transmission, at most
                    // min(quota, tso segs) of it; new data goes in bursts of its own.
                    self.burst_left = quota.min(goal).min(self.lost_run());
                } else {
                    // `tcp_snd_wnd_test()` / `tcp_mss_split_point()`: new data stays inside
                    // the receive window.
                    let wnd_quota = (self.wnd_limit() - self.tp.snd_nxt).min(u32::MAX as u64);
                    let quota = quota.min(wnd_quota as u32);
                    if self.tso_should_defer(now, quota, goal) {
                        self.cwnd_validate(true);
                        self.deferred = true;
                        return None;
                    }
                    // `tcp_cwnd_test()`: one buffer carries at most half of cwnd, so at
                    // least two are in flight; what is left goes in the next one, which
                    // deferral may hold.
                    self.burst_left = quota.min(goal).min((self.tp.snd_cwnd / 2).max(1));
                }
            } else {
                self.burst_left = 1;
            }
            if !have_retrans {
                self.refill_tail(now);
            }
            self.stats.bursts += 1;
            self.pace_burst(now);
        }
        self.burst_left -= 1;
        let seg = if self.burst_retrans {
            let seq = self
                .lost_pending
                .pop_first()
                .expect("a retransmission burst has lost segments");
            // `tcp_retransmit_skb()`: one more retransmission a D-SACK must account for
            // before the reduction can be undone (a loss probe's does not count).
            self.undo_retrans = self.undo_retrans.max(0) + 1;
            self.transmit(seq, now, true)
        } else {
            let seq = self.tp.snd_nxt;
            self.transmit(seq, now, false)
        };
        let limited = self.tp.packets_in_flight() >= self.tp.snd_cwnd;
        let more = if self.burst_retrans {
            !self.lost_pending.is_empty()
        } else {
            self.has_new_data()
        };
        if limited || !more {
            self.burst_left = 0;
        }
        let mut seg = seg;
        seg.burst_end = self.burst_left == 0;
        if seg.burst_end && !seg.retrans {
            let i = self.idx(seg.seq);
            self.segs[i].flags |= F_SKB_END;
            self.skbs_out += 1;
        }
        self.stats.cur_burst += 1;
        if seg.burst_end {
            if self.stats.burst_segs.is_empty() {
                self.stats.burst_segs = vec![0; 65];
            }
            self.stats.burst_segs[self.stats.cur_burst.min(64) as usize] += 1;
            self.stats.cur_burst = 0;
        }
        self.cwnd_validate(limited);
        if self.tp.ca_state == CaState::Open && !seg.retrans {
            self.schedule_loss_probe(now);
        }
        Some(seg)
    }

    /// Send segment `seq` (a retransmission if `retrans`, else the next new one).
    fn transmit(&mut self, seq: u64, now: Nanos, retrans: bool) -> Segment {
        if self.tp.packets_in_flight() == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let now_us = self.tp.now_us;
        let rec = self.rate.on_sent(&mut self.tp, now_us, retrans);
        let len = self.seg_len(seq);
        if retrans {
            let i = self.idx(seq);
            let s = &mut self.segs[i];
            debug_assert!(s.flags & F_SACKED == 0);
            s.rec = rec;
            s.sent_ns = now;
            s.gen = s.gen.wrapping_add(1);
            if s.flags & F_RETRANS == 0 {
                s.flags |= F_RETRANS;
                self.tp.retrans_out += 1;
            }
            s.flags |= F_EVER_RETRANS;
            let gen = s.gen;
            self.rack_q.push_back((now, seq, gen));
            self.stats.retransmits += 1;
            // Retransmitting the head restarts the RTO (`tcp_xmit_retransmit_queue()`),
            // unless the RACK reordering timer owns the timer.
            if seq == self.tp.snd_una && self.rack_deadline.is_none() {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        } else {
            debug_assert_eq!(seq, self.tp.snd_nxt);
            self.segs.push_back(Seg {
                rec,
                sent_ns: now,
                flags: 0,
                gen: 0,
            });
            self.rack_q.push_back((now, seq, 0));
            self.tp.snd_nxt += 1;
            self.tp.packets_out += 1;
        }
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.tp.lsndtime_ns = now;
        self.last_tx_ns = Some(now);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        // `tcp_ecn_send()`: new data is ECN-capable and the first of it after a reduction
        // carries CWR; a retransmission is not ECN-capable unless the controller needs ECN.
        let mut ecn = Ecn::NotEct;
        let mut cwr = false;
        if self.tp.ecn_ok {
            if !retrans {
                ecn = Ecn::Ect0;
                cwr = std::mem::take(&mut self.queue_cwr);
            } else if self.cc.needs_ecn() {
                ecn = Ecn::Ect0;
            }
        }
        Segment {
            seq,
            len,
            retrans,
            sent_ns: now,
            burst_end: false,
            tsecr: self.ts_recent,
            ecn,
            cwr,
            // `tcp_push()` marks the tail of each write; TSO splits keep the mark on the last
            // piece (`tso_fragment()`), so the segment that ends the written data carries it.
            psh: seq + 1 == self.app_written,
        }
    }

    /// Segments in the lost run that the next retransmission would carry: consecutive lost
    /// segments from the first, up to the end of the TSO buffer they were sent in.
    fn lost_run(&self) -> u32 {
        let mut n = 0u32;
        let mut expect = None;
        for &seq in &self.lost_pending {
            if expect.is_some_and(|e| e != seq) {
                break;
            }
            n += 1;
            if self.segs[self.idx(seq)].flags & F_SKB_END != 0 {
                break;
            }
            expect = Some(seq + 1);
        }
        n.max(1)
    }

    /// `tcp_tso_autosize()`: segments in one TSO burst.
    fn tso_segs(&self) -> u32 {
        if let Some(n) = self.cc.tso_segs(&self.tp) {
            return n.max(1);
        }
        let mss = self.cfg.mss.max(1) as u64;
        let mut bytes = if self.tp.pacing_rate == u64::MAX {
            GSO_MAX_SIZE
        } else {
            self.tp.pacing_rate >> PACING_SHIFT
        };
        if self.tp.min_rtt_us != u32::MAX {
            let r = self.tp.min_rtt_us >> TSO_RTT_LOG;
            if r < 32 {
                bytes += GSO_MAX_SIZE >> r;
            }
        }
        let segs = (bytes.min(GSO_MAX_SIZE) / mss) as u32;
        segs.max(self.cc.min_tso_segs(&self.tp)).max(1)
    }

    /// `tcp_tso_should_defer()`: hold a burst of fewer than `goal` segments (`quota` fit in
    /// cwnd) when more ACKs will soon let a bigger one go.
    fn tso_should_defer(&self, now: Nanos, quota: u32, goal: u32) -> bool {
        if goal <= 1 || quota >= goal || self.tp.ca_state >= CaState::Recovery {
            return false;
        }
        // Only right after a transmission (`tcp_wstamp_ns`: the pacing slot when paced).
        let wstamp = if self.pacing {
            self.next_send_ns.max(self.last_tx_ns.unwrap_or(0))
        } else {
            self.last_tx_ns.unwrap_or(0)
        };
        if self.last_tx_ns.is_none() || now > wstamp + TSO_DEFER_NS {
            return false;
        }
        // At least a third of min(cwnd, receive window) may go: send it.
        let wnd_segs = self.snd_wnd() / self.cfg.mss as u64;
        if quota as u64 * 3 >= (self.tp.snd_cwnd as u64).min(wnd_segs) {
            return false;
        }
        // When is the ACK of the oldest outstanding segment due?
        let Some(head) = self.segs.front() else {
            return false;
        };
        if self.tp.srtt_us == 0 {
            return false;
        }
        let srtt = self.tp.srtt_us as u64 * 1000;
        let due = head.sent_ns + srtt;
        let threshold = (srtt / 2).min(TSO_DEFER_NS);
        due <= now + threshold
    }

    /// A burst of `burst_left` segments starts now: book its pacing slot (Linux
    /// `tcp_update_skb_after_send()`: the slot is the burst's length at the pacing rate, less
    /// up to half of it for time the sender left unused; the first 10 segments go unpaced).
    fn pace_burst(&mut self, now: Nanos) {
        if !self.pacing
            || self.tp.pacing_rate == 0
            || self.tp.pacing_rate == u64::MAX
            || self.stats.segments_sent < 10
        {
            return;
        }
        let end = self.total_segs.unwrap_or(u64::MAX);
        let bytes: u64 = if self.burst_retrans {
            self.lost_pending
                .iter()
                .take(self.burst_left as usize)
                .map(|&q| self.seg_len(q) as u64)
                .sum()
        } else {
            (self.tp.snd_nxt..end)
                .take(self.burst_left as usize)
                .map(|q| self.seg_len(q) as u64)
                .sum()
        };
        let mut len_ns = bytes * NS_PER_SEC / self.tp.pacing_rate;
        let start = self.next_send_ns.max(now);
        let credit = start - self.next_send_ns;
        len_ns -= (len_ns / 2).min(credit);
        self.next_send_ns = start + len_ns;
    }

    /// `tcp_rate_check_app_limited()`: the application has nothing more to send.
    fn check_app_limited(&mut self) {
        let tp = &mut self.tp;
        if tp.packets_in_flight() < tp.snd_cwnd && tp.lost_out <= tp.retrans_out {
            let v = tp.delivered + tp.packets_in_flight() as u64;
            tp.app_limited = v.max(1);
        }
    }

    /// `tcp_cwnd_validate()`: remember whether the last window was cwnd-limited.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let tp = &mut self.tp;
        if tp.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!tp.is_cwnd_limited && tp.packets_out > tp.max_packets_out)
        {
            tp.is_cwnd_limited = is_cwnd_limited;
            tp.max_packets_out = tp.packets_out;
            self.cwnd_usage_seq = tp.snd_nxt;
        }
    }

    // ---------------------------------------------------------------- timers

    /// The earliest time the sender wants to be called back ([`Self::on_timeout`] or
    /// [`Self::poll_transmit`] for the pacing release).
    ///
    /// Once [`Self::poll_transmit`] has returned `None` at `now`, the answer is later than
    /// `now`: a sender held back by TSO deferral asks for no pacing wake-up (Linux arms no
    /// timer for a deferral; the next ACK or timer ends it), so a driver is never asked to
    /// call back at a time when nothing would be sent.
    pub fn next_timeout(&self) -> Option<Nanos> {
        let mut t = [self.rto_deadline, self.tlp_deadline, self.rack_deadline]
            .into_iter()
            .flatten()
            .min();
        if self.pacing
            && !self.deferred
            && (!self.lost_pending.is_empty() || self.has_new_data())
            && self.tp.packets_in_flight() < self.tp.snd_cwnd
        {
            t = Some(t.map_or(self.next_send_ns, |x| x.min(self.next_send_ns)));
        }
        t
    }

    /// Handle whichever timers have expired at `now`; returns whether one had (a call at the
    /// pacing release time alone returns `false`).
    pub fn on_timeout(&mut self, now: Nanos) -> bool {
        self.set_now(now);
        self.deferred = false;
        let fired = [self.rack_deadline, self.tlp_deadline, self.rto_deadline]
            .into_iter()
            .flatten()
            .any(|t| t <= now);
        if matches!(self.rack_deadline, Some(t) if t <= now) {
            self.rack_deadline = None;
            let lost_before = self.tp.lost;
            self.rack_detect_loss(now);
            if self.tp.lost > lost_before && self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                if !self.model_based {
                    let lost = (self.tp.lost - lost_before) as u32;
                    self.prr(1, lost, false);
                }
            }
        }
        if matches!(self.tlp_deadline, Some(t) if t <= now) {
            self.tlp_deadline = None;
            self.send_loss_probe(now);
        }
        if matches!(self.rto_deadline, Some(t) if t <= now) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
        fired
    }

    /// When a kernel timer armed at `now` for `jiffies` fires: at that many ticks after the
    /// current one (`expires = jiffies + timeout`), never before `now`.
    fn on_tick(&self, now: Nanos, jiffies: u64) -> Nanos {
        let tick = self.tp.ns_per_jiffy();
        ((now / tick + jiffies) * tick).max(now)
    }

    /// `tcp_schedule_loss_probe()`.
    fn schedule_loss_probe(&mut self, now: Nanos) {
        if self.tp.packets_out == 0
            || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
            || self.tlp_high_seq.is_some()
        {
            self.tlp_deadline = None;
            return;
        }
        // In jiffies, as Linux arms it: 2 srtt rounded up, plus TCP_TIMEOUT_MIN (or the
        // minimum RTO with one segment out), but no later than the RTO.
        let tick = self.tp.ns_per_jiffy();
        let mut timeout = if self.rtt.has_sample() {
            let two_srtt = (2 * self.rtt.srtt()).div_ceil(tick);
            if self.tp.packets_out == 1 {
                two_srtt + self.rtt.rto_min().div_ceil(tick)
            } else {
                two_srtt + TIMEOUT_MIN_JIFFIES
            }
        } else {
            crate::rtt::RTO_INIT.div_ceil(tick)
        };
        if let Some(rto) = self.rto_deadline {
            timeout = timeout.min(rto.saturating_sub(now).div_ceil(tick));
        }
        self.tlp_deadline = Some(self.on_tick(now, timeout));
    }

    /// `tcp_send_loss_probe()`.
    fn send_loss_probe(&mut self, now: Nanos) {
        if self.tp.packets_out == 0 || self.tlp_high_seq.is_some() {
            return;
        }
        let probe = if self.has_new_data() {
            let seq = self.tp.snd_nxt;
            Some(self.transmit(seq, now, false))
        } else {
            let last = self.tp.snd_nxt - 1;
            let i = self.idx(last);
            if self.segs[i].flags & F_SACKED == 0 {
                if self.segs[i].flags & F_LOST != 0 {
                    self.lost_pending.remove(&last);
                }
                Some(self.transmit(last, now, true))
            } else {
                None
            }
        };
        if let Some(mut seg) = probe {
            seg.burst_end = true;
            self.stats.tlp_count += 1;
            self.tlp_high_seq = Some(self.tp.snd_nxt);
            self.tlp_retrans = seg.retrans;
            self.pending_probe = Some(seg);
        }
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// Retransmission timeout (`tcp_retransmit_timer()` + `tcp_enter_loss()`).
    fn on_rto(&mut self, now: Nanos) {
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        let first_rto_without_progress =
            self.tp.ca_state == CaState::Loss && self.rto_retransmits == 0;
        let reduce = self.tp.ca_state <= CaState::Disorder
            || self.tp.snd_una >= self.high_seq
            || first_rto_without_progress;
        if reduce {
            self.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        // Mark the head lost, and every other segment that has been out for longer than
        // RACK.rtt (`tcp_timeout_mark_lost()`); recently sent ones get a chance to arrive.
        let una = self.tp.snd_una;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.flags & F_SACKED != 0 {
                continue;
            }
            let recent = self.rack.valid && now.saturating_sub(s.sent_ns) < self.rack.rtt_ns;
            if i == 0 || !recent {
                self.mark_lost(una + i as u64);
            }
        }
        if reduce {
            self.init_undo();
        }
        let cwnd = self.tp.packets_in_flight() + 1;
        self.tp.set_cwnd(cwnd);
        self.tp.snd_cwnd_cnt = 0;
        // A timeout with many segments SACKed in Open or Disorder state suggests the
        // reordering degree was overestimated (`tcp_enter_loss()`).
        if self.tp.ca_state <= CaState::Disorder && self.tp.sacked_out >= TCP_REORDERING {
            self.reordering = self.reordering.min(TCP_REORDERING);
        }
        self.high_seq = self.tp.snd_nxt;
        self.tlp_high_seq = None;
        self.tlp_deadline = None;
        self.rack_deadline = None;
        self.set_ca_state(CaState::Loss);
        self.rto_retransmits += 1;
        self.rtt.backoff();
        self.rto_deadline = Some(now + self.rtt.rto());
        // The retransmission goes out at once, whatever the pacing schedule.
        self.next_send_ns = now;
        self.burst_left = 0;
    }

    // ---------------------------------------------------------------- ACK processing

    /// Process an ACK arriving at `now`.
    pub fn on_ack(&mut self, now: Nanos, ack: &Ack) -> AckOutcome {
        self.set_now(now);
        self.deferred = false;
        let mut out = AckOutcome::default();
        if ack.cum > self.tp.snd_nxt {
            return out; // acknowledges data never sent: ignore
        }
        // The window and the timestamp (`tcp_ack_update_window()`, `tcp_store_ts_recent()`):
        // the right edge only moves forward, even if ACKs arrive out of order.
        let mss = self.cfg.mss as u64;
        let cum_bytes = match self.cfg.size {
            Some(size) => (ack.cum * mss).min(size),
            None => ack.cum * mss,
        };
        self.snd_wnd_end = self.snd_wnd_end.max(cum_bytes + ack.wnd);
        self.max_window = self.max_window.max(ack.wnd);
        self.ts_recent = self.ts_recent.max(ack.tsval);
        let prior_in_flight = self.tp.packets_in_flight();
        let prior_una = self.tp.snd_una;
        let lost_before = self.tp.lost;
        self.lost_retrans = false;
        // `tcp_ecn_rcv_ecn_echo()`: ECE counts only on a connection that negotiated ECN.
        let ece = ack.ece && self.tp.ecn_ok;
        let mut rs = RateSample {
            prior_in_flight,
            is_ack_delayed: ack.delayed,
            is_ece: ece,
            ..RateSample::default()
        };
        let mut acc = DeliveryAcc::default();
        // The highest SACKed sequence before this ACK (`prior_fack`).
        let prior_fack = self.highest_sack_seq();
        // The lowest never-retransmitted segment this ACK shows delivered after a higher
        // one (`state->reord`); `snd_nxt` = none.
        let mut reord = self.tp.snd_nxt;

        // 1a. SACK blocks, in sequence order as Linux sorts them (`tcp_sacktag_write_queue()`).
        let dsack = match ack.dsack {
            Some(dup) => self.check_dsack(dup, prior_una, &mut reord),
            None => false,
        };
        let mut blocks: [(u64, u64); crate::packet::MAX_SACK_BLOCKS] = Default::default();
        let nb = ack.sack_blocks().len();
        for (i, b) in ack.sack_blocks().iter().enumerate() {
            blocks[i] = (b.start, b.end);
        }
        blocks[..nb].sort_unstable();
        let mut newly: Vec<std::ops::Range<u64>> = Vec::new();
        for &(bs, be) in &blocks[..nb] {
            let start = bs.max(ack.cum).max(self.tp.snd_una);
            let end = be.min(self.tp.snd_nxt);
            if start >= end {
                continue;
            }
            // `tcp_sacktag_one()`: a never-retransmitted segment SACKed below the highest
            // SACKed one filled a hole that was not a loss: reordering.
            let highest = self.highest_sack_seq();
            newly.clear();
            self.sacked.insert_with(start..end, |r| newly.push(r));
            for r in newly.drain(..) {
                for seq in r {
                    if seq < highest.min(reord) && !self.ever_retrans(seq) {
                        reord = seq;
                    }
                    self.deliver(seq, true, now, &mut rs, &mut acc);
                    self.shift_sacked(seq);
                }
            }
        }
        // After RTO, retransmissions are too many to tell reordering from (Linux checks in
        // Loss state only while the reduction may still be undone).
        if self.tp.ca_state != CaState::Loss || self.undo_marker.is_some() {
            self.check_sack_reordering(reord);
        }
        // 1b. Cumulative ACK (`tcp_clean_rtx_queue()`).
        let mut acked_cum = 0u32;
        // The lowest newly acknowledged segment neither SACKed nor ever retransmitted.
        let mut reord_cum = self.tp.snd_nxt;
        if ack.cum > self.tp.snd_una {
            for seq in self.tp.snd_una..ack.cum {
                let i = self.idx(seq);
                let flags = self.segs[i].flags;
                if flags & F_SKB_END != 0 {
                    self.skbs_out -= 1;
                }
                if flags & F_SACKED == 0 {
                    if flags & F_EVER_RETRANS == 0 {
                        reord_cum = reord_cum.min(seq);
                    }
                    self.deliver(seq, false, now, &mut rs, &mut acc);
                } else {
                    self.tp.sacked_out -= 1;
                    if flags & F_EVER_RETRANS != 0 {
                        acc.retrans_data_acked = true;
                    }
                }
                acked_cum += 1;
            }
            let n = (ack.cum - self.tp.snd_una) as usize;
            self.segs.drain(..n);
            self.tp.snd_una = ack.cum;
            self.tp.packets_out = (self.tp.snd_nxt - self.tp.snd_una) as u32;
            self.sacked.remove_below(ack.cum);
            if self.lost_pending.first().is_some_and(|&s| s < ack.cum) {
                self.lost_pending = self.lost_pending.split_off(&ack.cum);
            }
            // A hole below the highest SACK filled by an original transmission: reordering.
            if reord_cum < prior_fack {
                self.check_sack_reordering(reord_cum);
            }
        }
        let una_advanced = self.tp.snd_una > prior_una;
        self.queue_shrunk |= una_advanced;
        if ece {
            // `tcp_count_delivered()`: what an ECE ACK delivers counts as CE-marked.
            self.tp.delivered_ce += acc.delivered as u64;
        }
        if self.cfg.host.probe_start && self.stats.probe_start_bw.is_none() {
            self.probe_train(now);
        }

        // 2. RTT (`tcp_ack_update_rtt()`): the cumulative part gives a sample only if it covers
        // no retransmitted data (Karn); SACKed segments give one too. srtt uses the oldest
        // newly acknowledged segment, min RTT and the rate sample the newest.
        let mut seq_rtt = None;
        let mut ca_rtt = None;
        if let (Some(first), Some(last)) = (acc.first_ackt, acc.last_ackt) {
            if !acc.retrans_data_acked {
                seq_rtt = Some(now - first);
                ca_rtt = Some(now - last);
            }
        }
        if let (Some(first), Some(last)) = (acc.first_sackt, acc.last_sackt) {
            seq_rtt = seq_rtt.or(Some(now - first));
            ca_rtt = Some(now - last);
        }
        if let Some(ca) = ca_rtt {
            rs.rtt_us = (ca / 1000) as i64;
            out.rtt_sample = Some(ca);
        }
        if let Some(srtt_sample) = seq_rtt {
            if let Some(ca) = ca_rtt {
                self.rtt.on_min_sample(now, ca);
                self.tp.min_rtt_us = self.rtt.min_rtt_us();
            }
            self.rtt
                .on_sample(srtt_sample, self.tp.snd_una, self.tp.snd_nxt);
            self.tp.srtt_us = (self.rtt.srtt() / 1000).max(1) as u32;
            self.rtt.reset_backoff();
        }
        if una_advanced {
            self.rto_retransmits = 0;
            self.rto_deadline = if self.tp.packets_out > 0 {
                Some(now + self.rtt.rto())
            } else {
                None
            };
        }
        self.rack_update_reo_wnd(&rs);

        // End of a tail-loss-probe episode (`tcp_process_tlp_ack()`).
        if let Some(h) = self.tlp_high_seq {
            rs.is_acking_tlp_retrans_seq = self.tlp_retrans && ack.cum >= h && una_advanced;
            if ack.cum >= h {
                if !self.tlp_retrans || ack.dsack.is_some() {
                    // New data was probed, or the probe was a duplicate: no loss.
                    self.tlp_high_seq = None;
                } else if ack.cum > h {
                    // The probe repaired a loss: reduce the window once.
                    self.init_cwnd_reduction();
                    self.set_ca_state(CaState::Cwr);
                    self.end_cwnd_reduction();
                    self.set_ca_state(CaState::Open);
                    self.high_seq = self.tp.snd_nxt;
                    self.cc.cwnd_event(&mut self.tp, CaEvent::TlpRecovery);
                } else if !una_advanced && acc.delivered == 0 {
                    // A pure duplicate ACK: original and probe both arrived.
                    self.tlp_high_seq = None;
                }
            }
        }

        // `tcp_in_ack_event()`.
        self.cc.in_ack_event(&mut self.tp, ece);

        // 3. Loss detection and 4. state machine (`tcp_ack_is_dubious()`: an ECE ACK too,
        // and a duplicate ACK with a D-SACK, which may undo a reduction).
        if self.tp.ca_state != CaState::Open
            || self.tp.sacked_out > 0
            || self.tp.lost_out > 0
            || ece
            || (dsack && !una_advanced)
        {
            self.fastretrans_alert(now, ece, una_advanced);
        }
        let newly_lost = (self.tp.lost - lost_before) as u32;

        // 5. Rate sample and congestion control.
        self.rate
            .generate(&mut self.tp, acc.delivered, newly_lost, &mut rs);
        if acc.delivered > 0 {
            let sample = AckSample {
                pkts_acked: acked_cum,
                rtt_us: ca_rtt.map_or(-1, |r| (r / 1000) as i64),
                in_flight: prior_in_flight,
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }
        self.cong_control(&rs, acc.delivered, newly_lost, una_advanced, acc.sacked > 0);

        if self.tp.ca_state == CaState::Open {
            self.schedule_loss_probe(now);
        }
        out.delivered = acc.delivered;
        out.lost = newly_lost;
        out
    }

    /// One segment is newly delivered (SACKed, or cumulatively ACKed without a prior SACK).
    fn deliver(
        &mut self,
        seq: u64,
        via_sack: bool,
        now: Nanos,
        rs: &mut RateSample,
        acc: &mut DeliveryAcc,
    ) {
        let i = self.idx(seq);
        let s = &mut self.segs[i];
        self.tp.delivered += 1;
        acc.delivered += 1;
        if s.flags & F_LOST != 0 {
            self.tp.lost_out -= 1;
            if s.flags & F_RETRANS == 0 {
                self.lost_pending.remove(&seq);
            }
        }
        if s.flags & F_RETRANS != 0 {
            self.tp.retrans_out -= 1;
        }
        s.flags &= !(F_LOST | F_RETRANS);
        if via_sack {
            s.flags |= F_SACKED;
            self.tp.sacked_out += 1;
            acc.sacked += 1;
        }
        self.rate.on_delivered(&mut s.rec, seq + 1, rs);
        let rtt = now.saturating_sub(s.sent_ns);
        let sent = s.sent_ns;
        let ever_retrans = s.flags & F_EVER_RETRANS != 0;
        match (via_sack, ever_retrans) {
            (true, false) => {
                acc.first_sackt.get_or_insert(sent);
                acc.last_sackt = Some(sent);
            }
            (false, false) => {
                acc.first_ackt.get_or_insert(sent);
                acc.last_ackt = Some(sent);
            }
            (false, true) => acc.retrans_data_acked = true,
            (true, true) => {}
        }
        // RACK (`tcp_rack_advance()`): RACK.rtt follows every delivered transmission; its
        // send time tracks the most recently sent one. A retransmission acknowledged faster
        // than min RTT was probably spurious (the original arrived): skip it.
        let min_rtt_ns = self.rtt.min_rtt_us() as u64 * 1000;
        if ever_retrans && self.rtt.min_rtt_us() != u32::MAX && rtt < min_rtt_ns {
            return;
        }
        self.rack.rtt_ns = rtt;
        if !self.rack.valid
            || sent > self.rack.xmit_ns
            || (sent == self.rack.xmit_ns && seq + 1 > self.rack.end_seq)
        {
            self.rack.xmit_ns = sent;
            self.rack.end_seq = seq + 1;
            self.rack.valid = true;
        }
    }

    /// Whether segment `seq` (outstanding) was ever retransmitted (`TCPCB_RETRANS`).
    fn ever_retrans(&self, seq: u64) -> bool {
        self.segs[self.idx(seq)].flags & F_EVER_RETRANS != 0
    }

    /// `tcp_highest_sack_seq()`: the end of the highest SACKed segment, `snd_una` if none.
    fn highest_sack_seq(&self) -> u64 {
        if self.tp.sacked_out == 0 {
            return self.tp.snd_una;
        }
        self.sacked.last().map_or(self.tp.snd_una, |r| r.end)
    }

    /// `tcp_shift_skb_data()`: newly SACKed data joins the SACKed buffer just before it when
    /// neither was retransmitted, so a run of SACKed data sits in one buffer and costs one
    /// buffer's overhead.
    fn shift_sacked(&mut self, seq: u64) {
        if seq == self.tp.snd_una {
            return;
        }
        let i = self.idx(seq);
        let prev = self.segs[i - 1].flags;
        let this = self.segs[i].flags;
        let plain_sacked = |f: u8| f & F_SACKED != 0 && f & F_EVER_RETRANS == 0;
        if prev & F_SKB_END != 0 && plain_sacked(prev) && plain_sacked(this) {
            self.segs[i - 1].flags &= !F_SKB_END;
            self.skbs_out -= 1;
        }
    }

    /// `tcp_check_sack_reordering()`: segment `low_seq`, never retransmitted, was delivered
    /// after segments up to the highest SACKed one. The distance is the path's reordering
    /// degree if it is the largest seen (at most `sysctl_tcp_max_reordering`), and the event
    /// counts in `reord_seen`, which keeps RACK's reordering window open from now on.
    fn check_sack_reordering(&mut self, low_seq: u64) {
        let fack = self.highest_sack_seq();
        if low_seq >= fack {
            return;
        }
        let metric = fack - low_seq;
        if metric > self.reordering as u64 {
            self.reordering = metric.min(TCP_MAX_REORDERING as u64) as u32;
        }
        self.stats.reord_seen += 1;
    }

    /// A D-SACK for segment `dup` (`tcp_check_dsack()`, `tcp_dsack_seen()`, and the D-SACK
    /// part of `tcp_sacktag_one()`): a retransmission (or the original) arrived twice.
    /// Returns whether the D-SACK counts (`FLAG_DSACKING_ACK`).
    fn check_dsack(&mut self, dup: u64, prior_una: u64, reord: &mut u64) -> bool {
        self.stats.dsack_dups += 1;
        // More D-SACKed segments than retransmissions: the receiver is not to be believed.
        if self.stats.dsack_dups > self.stats.retransmits {
            return false;
        }
        // After reordering was seen, a D-SACK suggests RACK's window was too short and
        // retransmitted a segment that was only late; not for a tail-loss probe's, which a
        // timer sent.
        let for_tlp = self.tlp_high_seq == Some(dup + 1);
        if self.stats.reord_seen > 0 && !for_tlp {
            self.rack.dsack_seen = true;
        }
        // One retransmission since the reduction began proved unneeded: count it off
        // `undo_retrans`, for the data already acknowledged as for outstanding segments
        // that were retransmitted.
        let since_marker = self.undo_marker.is_some_and(|m| dup + 1 > m);
        if dup < prior_una {
            if since_marker && self.undo_retrans > 0 {
                self.undo_retrans -= 1;
            }
            return true;
        }
        if dup >= self.tp.snd_nxt {
            return true;
        }
        let flags = self.segs[self.idx(dup)].flags;
        if flags & F_EVER_RETRANS != 0 {
            if since_marker && self.undo_retrans > 0 {
                self.undo_retrans -= 1;
            }
            // Both copies of a retransmitted segment already SACKed arrived: the original
            // was only late.
            if flags & F_SACKED != 0 && dup < *reord {
                *reord = dup;
            }
        }
        // (Linux would also SACK an outstanding segment not SACKed yet through its D-SACK;
        // the receiver's SACK blocks report it anyway.)
        true
    }

    /// `tcp_rack_update_reo_wnd()`: after an ACK that delivered data, widen RACK's window by
    /// one step if a D-SACK came since reordering was seen (at most once per round trip:
    /// D-SACKs for data sent before the last widening are ignored), or fall back to one step
    /// once the widening has outlived `RACK_RECOVERY_THRESH` recoveries.
    fn rack_update_reo_wnd(&mut self, rs: &RateSample) {
        if rs.prior_delivered == 0 {
            return;
        }
        let rack = &mut self.rack;
        if rs.prior_delivered < rack.last_delivered {
            rack.dsack_seen = false;
        }
        if rack.dsack_seen {
            rack.reo_wnd_steps = (rack.reo_wnd_steps + 1).min(0xFF);
            rack.dsack_seen = false;
            rack.last_delivered = self.tp.delivered;
            rack.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if rack.reo_wnd_persist == 0 {
            rack.reo_wnd_steps = 1;
        }
    }

    /// Mark `seq` lost (`tcp_mark_skb_lost()`); it joins the retransmission queue.
    fn mark_lost(&mut self, seq: u64) {
        let i = self.idx(seq);
        let s = &mut self.segs[i];
        if s.flags & F_SACKED != 0 {
            return;
        }
        if s.flags & F_LOST != 0 {
            if s.flags & F_RETRANS == 0 {
                return; // already waiting for retransmission
            }
            s.flags &= !F_RETRANS;
            self.tp.retrans_out -= 1;
            self.lost_retrans = true;
        } else {
            s.flags |= F_LOST;
            self.tp.lost_out += 1;
        }
        self.tp.lost += 1;
        self.lost_pending.insert(seq);
        let rec = s.rec;
        self.cc.skb_marked_lost(&mut self.tp, &rec);
    }

    /// RACK reordering window (`tcp_rack_reo_wnd()`): min_rtt/4 per step, at most srtt.
    /// Until reordering has been seen it closes during recovery and once `reordering`
    /// segments are SACKed (the classic duplicate-ACK threshold).
    fn rack_reo_wnd(&self) -> Nanos {
        if self.stats.reord_seen == 0
            && (self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= self.reordering)
        {
            return 0;
        }
        let min_rtt = self.rtt.min_rtt_us();
        if min_rtt == u32::MAX {
            return 0;
        }
        (min_rtt as u64 * 1000 / 4 * self.rack.reo_wnd_steps as u64).min(self.rtt.srtt())
    }

    /// RACK loss detection (`tcp_rack_detect_loss()`), walking transmissions oldest first.
    fn rack_detect_loss(&mut self, now: Nanos) {
        if !self.rack.valid {
            return;
        }
        let reo_wnd = self.rack_reo_wnd();
        while let Some(&(sent, seq, gen)) = self.rack_q.front() {
            if seq < self.tp.snd_una {
                self.rack_q.pop_front();
                continue;
            }
            let s = self.segs[self.idx(seq)];
            let stale = s.gen != gen
                || s.flags & F_SACKED != 0
                || (s.flags & F_LOST != 0 && s.flags & F_RETRANS == 0);
            if stale {
                self.rack_q.pop_front();
                continue;
            }
            let before_rack = sent < self.rack.xmit_ns
                || (sent == self.rack.xmit_ns && seq + 1 < self.rack.end_seq);
            if !before_rack {
                break;
            }
            let deadline = sent + self.rack.rtt_ns + reo_wnd;
            if deadline <= now {
                self.mark_lost(seq);
                self.rack_q.pop_front();
            } else {
                // Linux waits for the latest deadline among the candidates (all sent before
                // RACK.xmit), plus TCP_TIMEOUT_MIN, and then marks them together. Deadlines
                // grow with send time, so that is the last live candidate's.
                let latest = self
                    .last_rack_candidate()
                    .map_or(deadline, |t| t + self.rack.rtt_ns + reo_wnd);
                let tick = self.tp.ns_per_jiffy();
                let wait = (latest.max(deadline) - now).div_ceil(tick) + TIMEOUT_MIN_JIFFIES;
                self.rack_deadline = Some(self.on_tick(now, wait));
                break;
            }
        }
    }

    /// Send time of the most recently sent live transmission sent before RACK.xmit.
    fn last_rack_candidate(&self) -> Option<Nanos> {
        let pp = self
            .rack_q
            .partition_point(|&(t, _, _)| t < self.rack.xmit_ns);
        (0..pp).rev().take(64).find_map(|i| {
            let (sent, seq, gen) = self.rack_q[i];
            if seq < self.tp.snd_una {
                return None;
            }
            let s = &self.segs[self.idx(seq)];
            let live = s.gen == gen
                && s.flags & F_SACKED == 0
                && !(s.flags & F_LOST != 0 && s.flags & F_RETRANS == 0);
            live.then_some(sent)
        })
    }

    fn set_ca_state(&mut self, s: CaState) {
        if self.tp.ca_state != s {
            self.cc.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// `tcp_current_ssthresh()`: ssthresh during a reduction, else at least 3/4 of cwnd.
    fn current_ssthresh(&self) -> u32 {
        let tp = &self.tp;
        if matches!(tp.ca_state, CaState::Cwr | CaState::Recovery) {
            tp.snd_ssthresh
        } else {
            tp.snd_ssthresh.max((tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2))
        }
    }

    /// `tcp_init_undo()`: a reduction begins that D-SACKs may yet show spurious; the
    /// retransmissions already in flight must be accounted for too.
    fn init_undo(&mut self) {
        self.undo_marker = Some(self.tp.snd_una);
        self.undo_retrans = if self.tp.retrans_out > 0 {
            self.tp.retrans_out as i64
        } else {
            -1
        };
    }

    /// `tcp_may_undo()` without timestamps: every retransmission since the reduction began
    /// drew a D-SACK.
    fn may_undo(&self) -> bool {
        self.undo_marker.is_some() && self.undo_retrans == 0
    }

    /// `tcp_undo_cwnd_reduction()`: back to the window before the spurious reduction (the
    /// controller's `undo_cwnd`, and the ssthresh before it if that was larger). With
    /// `unmark_loss` (after an RTO) the segments marked lost are not lost any more.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for s in self.segs.iter_mut() {
                s.flags &= !F_LOST;
            }
            self.tp.lost_out = 0;
            self.lost_pending.clear();
        }
        if self.prior_ssthresh != 0 {
            let cwnd = self.cc.undo_cwnd(&mut self.tp);
            self.tp.set_cwnd(cwnd);
            if self.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.prior_ssthresh;
                // `tcp_ecn_withdraw_cwr()`.
                self.queue_cwr = false;
            }
        }
        self.undo_marker = None;
        self.stats.undos += 1;
    }

    /// `tcp_try_undo_recovery()` at the end of a recovery (or of the Loss state): undo it if
    /// it was spurious, else count one more recovery that a widened RACK window outlived.
    fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else {
            self.rack.reo_wnd_persist = self.rack.reo_wnd_persist.saturating_sub(1);
        }
    }

    /// `tcp_try_undo_dsack()`: D-SACKs have covered every retransmission, so the reduction
    /// was spurious; a widened RACK window lasts one recovery longer.
    fn try_undo_dsack(&mut self) -> bool {
        if !self.may_undo() {
            return false;
        }
        self.rack.reo_wnd_persist = (self.rack.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
        self.undo_cwnd_reduction(false);
        true
    }

    /// `tcp_try_keep_open()`: Disorder while anything is SACKed, lost or retransmitted,
    /// else Open.
    fn try_keep_open(&mut self) {
        let any_retrans = self.tp.retrans_out > 0
            || self
                .segs
                .front()
                .is_some_and(|s| s.flags & F_EVER_RETRANS != 0);
        let state = if self.tp.sacked_out + self.tp.lost_out > 0 || any_retrans {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.tp.ca_state != state {
            self.set_ca_state(state);
            self.high_seq = self.tp.snd_nxt;
        }
    }

    /// `tcp_init_cwnd_reduction()`.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.tp.snd_nxt;
        self.tlp_high_seq = None;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
    }

    /// `tcp_end_cwnd_reduction()`.
    fn end_cwnd_reduction(&mut self) {
        if self.model_based {
            return;
        }
        // Not after an undo, which restored the window.
        if self.tp.snd_ssthresh < crate::cc::TCP_INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Cwr || self.undo_marker.is_some())
        {
            self.tp.set_cwnd(self.tp.snd_ssthresh);
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// `tcp_enter_recovery()`: a window reduction already under way (CWR after an ECN
    /// echo) is not started again.
    fn enter_recovery(&mut self, ece: bool) {
        self.stats.recoveries += 1;
        self.prior_ssthresh = 0;
        self.init_undo();
        if !matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            if !ece {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.tlp_high_seq = None;
        self.tlp_deadline = None;
        self.set_ca_state(CaState::Recovery);
    }

    /// `tcp_enter_cwr()`: one window reduction for an ECN echo (which proves congestion:
    /// nothing to undo).
    fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.queue_cwr = true;
            self.stats.cwr_events += 1;
        }
    }

    /// The part of `tcp_fastretrans_alert()` this model needs.
    fn fastretrans_alert(&mut self, now: Nanos, ece: bool, una_advanced: bool) {
        if ece {
            // An ECN echo proves the congestion: no undo.
            self.prior_ssthresh = 0;
        }
        // Leave Recovery/Loss/CWR once everything outstanding at its start is acknowledged
        // (CWR: something above it, so that the CWR flag reached the receiver), undoing the
        // reduction if D-SACKs showed every retransmission unneeded.
        match self.tp.ca_state {
            CaState::Recovery if self.tp.snd_una >= self.high_seq => {
                self.try_undo_recovery();
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            CaState::Cwr if self.tp.snd_una > self.high_seq => {
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            CaState::Loss => {
                // `tcp_process_loss()`: `tcp_try_undo_loss()` on progress, else the end.
                if una_advanced && self.may_undo() {
                    self.undo_cwnd_reduction(true);
                    self.rto_retransmits = 0;
                    self.set_ca_state(CaState::Open);
                } else if self.tp.snd_una >= self.high_seq {
                    self.try_undo_recovery();
                    self.set_ca_state(CaState::Open);
                }
            }
            _ => {}
        }
        // `tcp_try_undo_dsack()`: during Recovery (which then ends), or a late D-SACK after
        // it, in Open or Disorder state.
        let state = self.tp.ca_state;
        match state {
            CaState::Recovery if self.try_undo_dsack() => self.try_keep_open(),
            CaState::Open | CaState::Disorder => {
                self.try_undo_dsack();
            }
            _ => {}
        }
        self.rack_detect_loss(now);
        // Enter Recovery on a detected loss; from Loss (after an RTO) only when a
        // retransmission was lost again (`FLAG_LOST_RETRANS` in `tcp_fastretrans_alert()`).
        let from_loss = self.tp.ca_state == CaState::Loss && self.lost_retrans;
        if self.tp.lost_out > 0 && (self.tp.ca_state < CaState::Recovery || from_loss) {
            self.enter_recovery(ece);
        } else if ece {
            // `tcp_try_to_open()`.
            self.enter_cwr();
        }
        match self.tp.ca_state {
            CaState::Open if self.tp.sacked_out > 0 => self.set_ca_state(CaState::Disorder),
            CaState::Disorder if self.tp.sacked_out == 0 && self.tp.lost_out == 0 => {
                self.set_ca_state(CaState::Open)
            }
            _ => {}
        }
    }

    /// `tcp_cong_control()`.
    fn cong_control(
        &mut self,
        rs: &RateSample,
        acked_sacked: u32,
        newly_lost: u32,
        una_advanced: bool,
        newly_sacked: bool,
    ) {
        self.model_based = self.cc.cong_control(&mut self.tp, rs);
        if self.model_based {
            return;
        }
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr(acked_sacked, newly_lost, una_advanced);
        } else if una_advanced || (newly_sacked && self.reordering > TCP_REORDERING) {
            // `tcp_may_raise_cwnd()`: grow on in-order delivery, or on any delivery once the
            // path is known to reorder more than the default degree.
            let ack = self.tp.snd_una;
            self.cc.cong_avoid(&mut self.tp, ack, acked_sacked);
        }
        self.update_pacing_rate();
    }

    /// Proportional rate reduction (RFC 6937, `tcp_cwnd_reduction()`).
    fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let inflight = self.tp.packets_in_flight() as i64;
        let delta = self.tp.snd_ssthresh as i64 - inflight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.tp.snd_ssthresh as u64 * self.prr_delivered as u64
                + self.tp.prior_cwnd as u64
                - 1;
            (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut n =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.set_cwnd((inflight + sndcnt).max(1) as u32);
    }

    /// `tcp_update_pacing_rate()`: 200% of cwnd/srtt in slow start, 120% after.
    fn update_pacing_rate(&mut self) {
        let tp = &mut self.tp;
        if tp.srtt_us == 0 {
            return;
        }
        let ratio: u64 = if tp.snd_cwnd < tp.snd_ssthresh / 2 {
            200
        } else {
            120
        };
        let pkts = tp.snd_cwnd.max(tp.packets_out) as u64;
        let rate = tp.mss as u64 * 1_000_000 * ratio / 100 * pkts / tp.srtt_us as u64;
        tp.pacing_rate = rate.min(tp.max_pacing_rate);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{SackBlock, MAX_SACK_BLOCKS};
    use crate::NS_PER_MS;

    const US: Nanos = 1_000;

    fn sender(tso: bool, pacing: Option<bool>) -> Sender {
        let cfg = SenderConfig {
            tso,
            pacing,
            ..SenderConfig::default()
        };
        Sender::new(cfg, crate::cc::by_name("reno").unwrap().build(1))
    }

    fn ack(cum: u64) -> Ack {
        Ack {
            cum,
            sack: [SackBlock::default(); MAX_SACK_BLOCKS],
            n_sack: 0,
            delayed: false,
            dsack: None,
            wnd: 1 << 30,
            tsval: 0,
            ece: false,
        }
    }

    fn drain(s: &mut Sender, now: Nanos) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    /// A sender with a 100 kB send buffer (69 segments) and an initial window of 200.
    fn small_buffer(pacing: Option<bool>) -> Sender {
        let cfg = SenderConfig {
            init_cwnd: 200,
            pacing,
            host: HostTcp {
                tcp_wmem: [4096, 16384, 100_000],
                ..HostTcp::default()
            },
            peer_init_wnd: 10 << 20,
            ..SenderConfig::default()
        };
        Sender::new(cfg, crate::cc::by_name("reno").unwrap().build(1))
    }

    /// `tcp_sendmsg_locked()`: the writer checks the send buffer only when it starts a
    /// buffer. Before any RTT sample there is no pacing rate, a TSO burst is 64 KB and takes
    /// a whole buffer, so the writer stops one buffer past `sk_sndbuf`. Once the pacing rate
    /// makes bursts smaller than a buffer, a writer woken with cwnd to spare refills the tail
    /// the sender is sending in pieces, past the buffer, until cwnd is full, and leaves one
    /// full buffer unsent; a paced sender sends one burst and stops.
    #[test]
    fn a_writer_with_cwnd_to_spare_writes_past_the_send_buffer() {
        let mut s = small_buffer(None);
        let first = drain(&mut s, 0);
        // Buffers of 45 segments (64 kB less the room for headers) while the queue is
        // below 100 kB: two of them.
        assert_eq!(first.len(), 90);
        assert_eq!(s.sndbuf(), 100_000);
        assert!(s.wmem_queued() > 100_000 && s.wmem_queued() < 100_000 + 66_000);
        // An ACK 100 ms later for 60: the queue is below 2/3 of the buffer and the writer
        // wakes; the pacing rate (2 x cwnd / srtt, ~56 Mbit/s) makes bursts of ~6 segments.
        let mut a = ack(60);
        a.wnd = 10 << 20;
        s.on_ack(100 * NS_PER_MS, &a);
        let sent = drain(&mut s, 100 * NS_PER_MS);
        // (TSO deferral may hold the last few for the next ACK.)
        let cwnd = s.tcp().snd_cwnd as usize;
        assert!(
            s.tcp().packets_in_flight() as usize + 8 > cwnd,
            "filled cwnd"
        );
        assert!(
            sent.len() > 150,
            "{} sent past a 69-segment buffer",
            sent.len()
        );
        assert!(s.wmem_queued() > 3 * s.sndbuf());
        // One full buffer (45 segments: 64 kB less header room) stays unsent.
        assert_eq!(s.app_written - s.tcp().snd_nxt, 45);
        // The writer is blocked until the queue falls below 2/3 of the buffer.
        s.on_ack(101 * NS_PER_MS, &a);
        assert!(drain(&mut s, 101 * NS_PER_MS).is_empty());

        let mut p = small_buffer(Some(true));
        drain(&mut p, 0);
        p.on_ack(100 * NS_PER_MS, &a);
        let sent = drain(&mut p, 100 * NS_PER_MS);
        assert!(sent.len() < 10, "paced: one burst, {}", sent.len());
        assert!(p.wmem_queued() < p.sndbuf() + 70_000);
    }

    /// The send buffer counts each buffer's overhead beside its payload, and SACKed data
    /// joins the SACKed buffer before it (`tcp_shift_skb_data()`), freeing an overhead.
    #[test]
    fn the_send_buffer_counts_each_buffers_overhead() {
        let mut s = small_buffer(None);
        let sent = drain(&mut s, 0);
        let bursts = sent.iter().filter(|g| g.burst_end).count() as u64;
        assert_eq!(
            bursts,
            2,
            "{:?}",
            sent.iter().map(|g| g.burst_end).collect::<Vec<_>>()
        );
        // The segment that ends the written data carries PSH, and only that one.
        let pushed: Vec<u64> = sent.iter().filter(|g| g.psh).map(|g| g.seq).collect();
        assert_eq!(pushed, [89]);
        let payload = 90 * 1448;
        assert_eq!(s.wmem_queued(), payload + bursts * host::SKB_OVERHEAD);
        // A SACK for 40..90 spans both buffers' data (0-44 and 45-89): the second joins
        // the first's SACKed part.
        let mut a = ack(0);
        a.sack[0] = SackBlock { start: 40, end: 90 };
        a.n_sack = 1;
        s.on_ack(100 * NS_PER_MS, &a);
        assert_eq!(s.wmem_queued(), payload + host::SKB_OVERHEAD);
    }

    #[test]
    fn loss_probe_timer_runs_in_jiffies() {
        // 1 ms RTT. Linux arms the probe for usecs_to_jiffies(2 srtt) + TCP_TIMEOUT_MIN
        // (2 jiffies) from the current tick: 3 ticks = 12 ms at HZ 250, 2 + 2 = 4 ticks
        // after the 1 ms tick = 5 ms at HZ 1000.
        for (hz, want_ms) in [(250u32, 12u64), (1000, 5)] {
            let cfg = SenderConfig {
                hz,
                ..SenderConfig::default()
            };
            let mut s = Sender::new(cfg, crate::cc::by_name("reno").unwrap().build(1));
            drain(&mut s, 0);
            s.on_ack(1000 * US, &ack(2));
            drain(&mut s, 1000 * US);
            assert_eq!(s.next_timeout(), Some(want_ms * 1_000 * US), "HZ {hz}");
        }
    }

    #[test]
    fn retransmissions_go_in_bursts_of_their_own() {
        // Three TSO bursts go out (0-4 and 5-9, half of cwnd each, then 10-13 after the
        // first ACK); 2-5 and 11-12 are lost. Linux retransmits each lost run of one skb as
        // one TSO buffer (`tcp_xmit_retransmit_queue()`) and new data in buffers of its own.
        let mut s = sender(true, None);
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_ack(900 * US, &ack(2));
        let b = drain(&mut s, 900 * US);
        assert_eq!((b.len(), b[0].seq), (4, 10), "{b:?}");
        let mut a = ack(2);
        a.sack[0] = SackBlock { start: 13, end: 14 };
        a.sack[1] = SackBlock { start: 6, end: 11 };
        a.n_sack = 2;
        s.on_ack(1800 * US, &a);
        let b = drain(&mut s, 1800 * US);
        let bursts: Vec<Vec<(u64, bool)>> = b
            .split_inclusive(|g| g.burst_end)
            .map(|v| v.iter().map(|g| (g.seq, g.retrans)).collect())
            .collect();
        assert!(bursts.len() >= 3, "{bursts:?}");
        // First 2-4 (the first skb's lost part), then 5 (the second's), then 11-12 (the
        // third's), each alone; new data only after them.
        assert_eq!(
            bursts[0],
            vec![(2, true), (3, true), (4, true)],
            "{bursts:?}"
        );
        assert_eq!(bursts[1], vec![(5, true)], "{bursts:?}");
        assert_eq!(bursts[2], vec![(11, true), (12, true)], "{bursts:?}");
        assert!(
            bursts[3..].iter().flatten().all(|&(q, r)| !r && q >= 14),
            "{bursts:?}"
        );
    }

    #[test]
    fn tso_defers_a_small_burst_while_an_ack_is_due() {
        // 1 ms path: the TSO goal is 45 segments; the first ACK lets 2 go (cwnd 11, 9 out),
        // fewer than a third of cwnd, and the next ACK is due: defer.
        let mut s = sender(true, None);
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_ack(900 * US, &ack(1));
        assert!(drain(&mut s, 900 * US).is_empty(), "deferred");
        // The second ACK makes 4 sendable (cwnd 12, 8 out): a third of cwnd, so they go as
        // one burst.
        s.on_ack(910 * US, &ack(2));
        let b = drain(&mut s, 910 * US);
        assert_eq!(b.len(), 4);
        assert!(b[..3].iter().all(|g| !g.burst_end) && b[3].burst_end);
        // Without TSO every ACK releases its segments at once.
        let mut s = sender(false, None);
        drain(&mut s, 0);
        s.on_ack(900 * US, &ack(1));
        let b = drain(&mut s, 900 * US);
        assert_eq!(b.len(), 2);
        assert!(b.iter().all(|g| g.burst_end));
    }

    #[test]
    fn a_buffer_carries_at_most_half_of_cwnd() {
        // `tcp_cwnd_test()`: the initial window of 10 leaves as two buffers of 5, and an ACK
        // for all of it (cwnd 20, 20 sendable) releases two buffers of 10.
        let mut s = sender(true, None);
        // Indices of the segments that end a burst.
        let ends = |b: &[Segment]| -> Vec<usize> {
            b.iter()
                .enumerate()
                .filter(|(_, g)| g.burst_end)
                .map(|(i, _)| i)
                .collect()
        };
        assert_eq!(ends(&drain(&mut s, 0)), vec![4, 9]);
        s.on_ack(1_000 * US, &ack(10));
        assert_eq!(ends(&drain(&mut s, 1_000 * US)), vec![9, 19]);
    }

    #[test]
    fn a_deferring_paced_sender_waits_for_an_ack_not_a_timer() {
        // As `tso_defers_a_small_burst_while_an_ack_is_due`, but paced: once deferral holds
        // the data back, the sender asks for no pacing wake-up at or before now (Linux arms no
        // timer for a deferral); the next ACK ends it.
        let mut s = sender(true, Some(true));
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_ack(900 * US, &ack(1));
        let wake = s.next_timeout().expect("a timer");
        assert!(drain(&mut s, wake.max(900 * US)).is_empty(), "deferred");
        assert!(s.is_deferring());
        let now = wake.max(900 * US);
        assert!(
            s.next_timeout().is_none_or(|t| t > now + TSO_DEFER_NS),
            "{:?}",
            s.next_timeout()
        );
        s.on_ack(now + 10 * US, &ack(2));
        assert!(!s.is_deferring());
        assert_eq!(drain(&mut s, now + 10 * US).len(), 4);
    }

    #[test]
    fn tso_does_not_defer_when_no_ack_is_due_soon() {
        // 10 ms path: an ACK at 9 ms for a head sent at 0 means the next is due at about
        // 9 ms, but the last transmission was 9 ms ago (> 1 ms): send at once.
        let mut s = sender(true, None);
        drain(&mut s, 0);
        s.on_ack(9_000 * US, &ack(1));
        assert_eq!(drain(&mut s, 9_000 * US).len(), 2);
    }

    #[test]
    fn paced_sender_sends_bursts_of_the_tso_goal() {
        // Reno forced to pace, 10 ms RTT: after the first RTT cwnd is 20 and the pacing rate
        // 200% x 20 x 1448 B / 10 ms = 5.79 MB/s, so a burst (1/1024 s of it) is 3 segments.
        let mut s = sender(true, Some(true));
        drain(&mut s, 0);
        s.on_ack(10_000 * US, &ack(10));
        let mut now = 10_000 * US;
        let mut bursts = Vec::new();
        while bursts.len() < 5 {
            let b = drain(&mut s, now);
            if !b.is_empty() {
                assert!(b.last().unwrap().burst_end);
                bursts.push((now, b.len()));
            }
            now = s.next_timeout().expect("pacing timer");
        }
        assert!(bursts.iter().all(|&(_, n)| n == 3), "{bursts:?}");
        // Consecutive bursts are one burst's length at the pacing rate apart (after the first,
        // which had idle-time credit).
        let slot = 3 * 1448 * NS_PER_SEC / s.tcp().pacing_rate;
        let gap = bursts[3].0 - bursts[2].0;
        assert!(gap.abs_diff(slot) <= slot / 10, "gap {gap} slot {slot}");
    }

    fn ecn_sender(cc: &str, ecn: bool) -> Sender {
        let cfg = SenderConfig {
            tso: false,
            ecn,
            ..SenderConfig::default()
        };
        Sender::new(cfg, crate::cc::by_name(cc).unwrap().build(1))
    }

    #[test]
    fn an_ecn_echo_reduces_once_per_window_and_sends_cwr() {
        let mut s = ecn_sender("reno", true);
        let first = drain(&mut s, 0);
        assert_eq!(first.len(), 10);
        assert!(first.iter().all(|g| g.ecn == Ecn::Ect0 && !g.cwr));
        // Grow to 20 segments in flight.
        s.on_ack(50 * NS_PER_MS, &ack(10));
        let second = drain(&mut s, 50 * NS_PER_MS);
        assert_eq!(s.tcp().snd_cwnd, 20);
        assert_eq!(second.len(), 20);
        // An ECE ACK: one reduction (Reno halves), CWR state, and CWR on the next new data.
        let t = 100 * NS_PER_MS;
        let mut a = ack(11);
        a.ece = true;
        s.on_ack(t, &a);
        assert_eq!(s.tcp().ca_state, CaState::Cwr);
        assert_eq!(s.tcp().snd_ssthresh, 10);
        assert_eq!(s.stats().cwr_events, 1);
        assert_eq!(s.tcp().delivered_ce, 1);
        let out = drain(&mut s, t);
        assert!(out.first().is_some_and(|g| g.cwr), "{out:?}");
        assert!(out.iter().skip(1).all(|g| !g.cwr));
        // More ECE in the same window: no second reduction.
        for c in 12..30 {
            let mut a = ack(c);
            a.ece = true;
            s.on_ack(t + c, &a);
            drain(&mut s, t + c);
        }
        assert_eq!(s.stats().cwr_events, 1);
        assert!(
            s.tcp().snd_cwnd <= 11,
            "PRR brings cwnd to ssthresh: {}",
            s.tcp().snd_cwnd
        );
        // An ACK beyond what was outstanding at the echo ends CWR at ssthresh.
        let high = s.tcp().snd_nxt;
        s.on_ack(t + 60 * NS_PER_MS, &ack(high));
        assert_eq!(s.tcp().ca_state, CaState::Open);
        // cwnd = ssthresh, then that same ACK's congestion avoidance (+1 per 10 acked).
        assert_eq!(s.tcp().snd_ssthresh, 10);
        assert!(
            (10..=12).contains(&s.tcp().snd_cwnd),
            "{}",
            s.tcp().snd_cwnd
        );
        // ECE without negotiated ECN is ignored.
        let mut s = ecn_sender("reno", false);
        let out = drain(&mut s, 0);
        assert!(out.iter().all(|g| g.ecn == Ecn::NotEct));
        let mut a = ack(5);
        a.ece = true;
        s.on_ack(NS_PER_MS, &a);
        assert_eq!(s.tcp().ca_state, CaState::Open);
        assert_eq!(s.stats().cwr_events, 0);
    }

    #[test]
    fn retransmissions_are_not_ect_unless_the_controller_needs_ecn() {
        for (cc, ect) in [("reno", false), ("dctcp", true)] {
            let mut s = ecn_sender(cc, cc == "reno");
            assert!(s.ecn(), "{cc} negotiates ECN");
            drain(&mut s, 0);
            // Segment 0 is lost: SACKs of 1..4 mark it, and it is retransmitted.
            let mut a = ack(0);
            a.sack[0] = SackBlock { start: 1, end: 5 };
            a.n_sack = 1;
            s.on_ack(50 * NS_PER_MS, &a);
            let out = drain(&mut s, 50 * NS_PER_MS);
            let r = out.iter().find(|g| g.retrans).expect("a retransmission");
            assert_eq!(r.ecn == Ecn::Ect0, ect, "{cc}");
        }
    }

    fn sack(cum: u64, blocks: &[(u64, u64)]) -> Ack {
        let mut a = ack(cum);
        for (i, &(start, end)) in blocks.iter().enumerate() {
            a.sack[i] = SackBlock { start, end };
        }
        a.n_sack = blocks.len() as u8;
        a
    }

    /// A Reno sender, one segment per burst, on a 10 ms path: segments 0-9 go at 0, the ACK
    /// of 0-1 at 10 ms gives min RTT and srtt 10 ms and releases 10-13.
    fn ten_ms_sender() -> Sender {
        let mut s = sender(false, None);
        assert_eq!(drain(&mut s, 0).len(), 10);
        s.on_ack(10 * NS_PER_MS, &ack(2));
        assert_eq!(drain(&mut s, 10 * NS_PER_MS).len(), 4);
        s
    }

    /// Segment 2 arrives after 3 (its SACK, then the ACK that covers it): reordering.
    fn see_reordering(s: &mut Sender) {
        let t = 10 * NS_PER_MS;
        s.on_ack(t + 200 * US, &sack(2, &[(3, 4)]));
        assert_eq!(s.tcp().lost_out, 0, "one SACK: reo_wnd still open");
        s.on_ack(t + 400 * US, &ack(4));
        assert_eq!(s.stats().reord_seen, 1);
        // Two segments out of order: within the default degree of 3.
        assert_eq!(s.reordering(), 3);
    }

    #[test]
    fn before_reordering_is_seen_three_sacks_above_a_hole_mean_loss() {
        // `tcp_rack_reo_wnd()` without `reord_seen`: once `reordering` (3) segments are
        // SACKed the window closes, and the hole below them is lost at once.
        let mut s = ten_ms_sender();
        s.on_ack(10_600 * US, &sack(2, &[(4, 8)]));
        assert_eq!(s.tcp().ca_state, CaState::Recovery);
        assert_eq!(s.tcp().lost_out, 2);
        assert_eq!(s.stats().reord_seen, 0);
    }

    #[test]
    fn a_hole_filled_by_an_original_raises_reordering_and_keeps_reo_wnd_open() {
        let mut s = ten_ms_sender();
        see_reordering(&mut s);
        // Now the same pattern as above, 4 segments SACKed above a hole of 2: RACK keeps
        // min_rtt/4 of reordering window (`reord_seen`), so 4-5 are not lost yet...
        s.on_ack(10_600 * US, &sack(4, &[(6, 10)]));
        assert_eq!(s.tcp().lost_out, 0);
        assert_eq!(s.tcp().ca_state, CaState::Disorder);
        assert!(s.next_timeout().is_some());
        // ...and when they arrive, the distance they were displaced (6 segments below the
        // highest SACK) becomes the path's reordering degree (`tcp_check_sack_reordering()`).
        s.on_ack(10_800 * US, &ack(10));
        assert_eq!(s.stats().reord_seen, 2);
        assert_eq!(s.reordering(), 6);
        assert_eq!(s.stats().retransmits, 0);
        assert_eq!(s.stats().recoveries, 0);
        assert_eq!(s.tcp().ca_state, CaState::Open);
        // From now on the window stays open in recovery too.
        s.tp.ca_state = CaState::Recovery;
        assert_eq!(s.rack_reo_wnd(), 2_500 * US);
    }

    #[test]
    fn with_reordering_above_three_sacks_grow_cwnd() {
        // `tcp_may_raise_cwnd()`: with `reordering` above the default, SACKed data grows the
        // window (slow start: one segment per segment SACKed) although snd_una stays put.
        let mut s = ten_ms_sender();
        see_reordering(&mut s);
        s.on_ack(10_600 * US, &sack(4, &[(6, 10)]));
        s.on_ack(10_800 * US, &ack(10));
        assert_eq!(s.reordering(), 6);
        drain(&mut s, 10_800 * US);
        let cwnd = s.tcp().snd_cwnd;
        s.on_ack(11 * NS_PER_MS, &sack(10, &[(11, 13)]));
        assert_eq!(s.tcp().snd_cwnd, cwnd + 2);
        // Without reordering seen, the same SACKs leave it alone.
        let mut s = ten_ms_sender();
        let cwnd = s.tcp().snd_cwnd;
        s.on_ack(10_200 * US, &sack(2, &[(3, 4)]));
        assert_eq!(s.tcp().snd_cwnd, cwnd);
    }

    /// After `see_reordering`: 4 stays missing past RACK's window, is retransmitted in a
    /// recovery, then turns out only late (the ACK of the original covers it).
    fn spurious_retransmission(s: &mut Sender) -> Nanos {
        s.on_ack(10_600 * US, &sack(4, &[(5, 10)]));
        assert_eq!(s.tcp().lost_out, 0);
        let t = s.next_timeout().expect("RACK timer");
        assert!(s.on_timeout(t));
        assert_eq!(s.tcp().ca_state, CaState::Recovery);
        let out = drain(s, t);
        assert!(out.iter().any(|g| g.retrans && g.seq == 4), "{out:?}");
        assert_eq!(s.stats().retransmits, 1);
        s.on_ack(t + 100 * US, &ack(10));
        assert_eq!(s.tcp().ca_state, CaState::Recovery, "13 still outstanding");
        t + 100 * US
    }

    #[test]
    fn a_dsack_after_reordering_widens_the_reo_wnd_once_per_round_trip() {
        let mut s = ten_ms_sender();
        see_reordering(&mut s);
        let t = spurious_retransmission(&mut s);
        assert_eq!(s.rack_reo_wnd_steps(), 1);
        // The retransmission arrives too: a D-SACK for 4 (`tcp_dsack_seen()`).
        let mut a = ack(10);
        a.dsack = Some(4);
        s.on_ack(t + 100 * US, &a);
        assert_eq!(s.stats().dsack_dups, 1);
        // It delivered nothing: the window grows on the next ACK that does
        // (`tcp_rack_update_reo_wnd()`), by one min_rtt/4 step.
        assert_eq!(s.rack_reo_wnd_steps(), 1);
        s.on_ack(t + 200 * US, &ack(12));
        assert_eq!(s.rack_reo_wnd_steps(), 2);
        assert_eq!(s.rack_reo_wnd(), 5 * NS_PER_MS);
        // A second D-SACK for data sent before that growth is not a new round trip's.
        s.stats.retransmits += 1; // as if another retransmission had gone out
        let mut a = ack(12);
        a.dsack = Some(11);
        s.on_ack(t + 300 * US, &a);
        s.on_ack(t + 400 * US, &ack(14));
        assert_eq!(s.rack_reo_wnd_steps(), 2);
    }

    #[test]
    fn dsacks_for_every_retransmission_undo_the_reduction() {
        let mut s = ten_ms_sender();
        see_reordering(&mut s);
        let (cwnd, ssthresh) = (s.tcp().snd_cwnd, s.tcp().snd_ssthresh);
        let t = spurious_retransmission(&mut s);
        assert!(s.tcp().snd_ssthresh < ssthresh);
        // The D-SACK covers the only retransmission of the recovery: it was spurious, and
        // `tcp_try_undo_dsack()` restores cwnd (Reno: `tcp_reno_undo_cwnd()`) and ssthresh.
        let mut a = ack(10);
        a.dsack = Some(4);
        s.on_ack(t + 100 * US, &a);
        assert_eq!(s.stats().undos, 1);
        assert_ne!(s.tcp().ca_state, CaState::Recovery);
        assert_eq!(s.tcp().snd_ssthresh, ssthresh);
        assert!(s.tcp().snd_cwnd >= cwnd, "{} < {cwnd}", s.tcp().snd_cwnd);
        // Without the D-SACK the recovery runs its course and cwnd ends at ssthresh.
        let mut s = ten_ms_sender();
        see_reordering(&mut s);
        let t = spurious_retransmission(&mut s);
        s.on_ack(t + 200 * US, &ack(14));
        assert_eq!(s.tcp().ca_state, CaState::Open);
        assert_eq!(s.stats().undos, 0);
        assert!(s.tcp().snd_ssthresh < ssthresh);
    }

    #[test]
    fn a_dsack_counts_only_if_retransmissions_explain_it() {
        // `tcp_dsack_seen()`: more D-SACKed segments than retransmissions is a receiver not
        // to be believed; nothing follows from it.
        let mut s = ten_ms_sender();
        see_reordering(&mut s);
        let mut a = ack(4);
        a.dsack = Some(3);
        s.on_ack(11 * NS_PER_MS, &a);
        s.on_ack(12 * NS_PER_MS, &ack(6));
        assert_eq!(s.stats().dsack_dups, 1);
        assert_eq!(s.rack_reo_wnd_steps(), 1);
    }
}
