//! The receiving end: in-order reassembly, cumulative ACK + SACK, delayed ACKs.
//!
//! ACK policy as Linux (`__tcp_ack_snd_check()` in net/ipv4/tcp_input.c):
//! - ACK at once when more than one full segment of in-order data is unacknowledged (every
//!   second segment), while in quick-ACK mode, and when a segment fills a hole
//!   (`ICSK_ACK_NOW`). Quick-ACK mode (`tcp_incr_quickack()`) gives min(window / 2 segments,
//!   16) immediate ACKs at the first data and again after a duplicate segment
//!   (`TCP_MAX_QUICKACKS`);
//! - while the receive window is still opening, every segment is ACKed at once: Linux grows
//!   `rcv_ssthresh` (the window it is willing to advertise) by two segments per arriving
//!   segment from 10 segments up to its clamp (`tcp_grow_window()`), and each step sets one
//!   quick ACK (`icsk_ack.quick |= 1`). With a socket buffer of some megabytes that lasts
//!   thousands of segments, i.e. the whole of slow start, where it makes the sender's bursts
//!   smaller than with an ACK per two segments;
//! - with out-of-order data queued, the first 3 ACKs per `rcv_nxt` value go out at once; after
//!   that SACKs are compressed (`tcp_comp_sack_*`): one ACK per min(1 ms, RTT/20) or per 44
//!   segments, whichever comes first, and at once when a segment is about to reorder the
//!   SACK block list beyond its first two blocks (`tcp_sack_compress_send_ack()` in
//!   `tcp_sack_new_ofo_skb()`: the held ACK goes out first, reporting the blocks before they
//!   move). Without that, on a lossy path the blocks of segments that arrived during one
//!   compression interval would drop out of the list unreported, the sender would take them
//!   for lost, retransmit them, see D-SACKs, conclude the path reorders and widen RACK's
//!   window: loss recovery one round trip slower than Linux's;
//! - a segment with PSH (the end of what the application had written) is ACKed at once
//!   when nothing is held out of order, since the reader takes it at once
//!   (`ICSK_ACK_PUSHED` from `tcp_measure_rcv_mss()`, acted on in `tcp_cleanup_rbuf()`): a
//!   sender limited by its application or its send buffer does not wait 40 ms for the ACK
//!   of a burst's odd last segment;
//! - otherwise hold the ACK for up to the delayed-ACK timeout (40 ms, `TCP_DELACK_MIN`; Linux
//!   adapts it between 40 and 200 ms, this model keeps the minimum).
//!
//! With GRO ([`ReceiverConfig::gro`]) the decision is taken once per burst of segments that
//! arrived together, as Linux takes it once per coalesced buffer.
//!
//! Receive window (see [`crate::host`] for the buffer model): the ACK advertises
//! min(free buffer space, `rcv_ssthresh`), never moving the window's right edge back
//! (`tcp_select_window()`); free space is the buffer's payload share less the out-of-order
//! data held. `rcv_ssthresh` starts at the handshake's window and grows as above up to the
//! window clamp, which follows the receive buffer as `tcp_rcv_space_adjust()` grows it once
//! per receiver RTT. The receiver RTT comes from the timestamp each segment echoes
//! (`tcp_rcv_rtt_measure_ts()`: millisecond timestamps, a new echo per sample, falls at
//! once and rises with gain 1/8). The application reads every byte as soon as it is in order.
//!
//! ECN echo ([`ReceiverConfig::ecn`], `tcp_ecn_check_ce()`/`tcp_ecn_accept_cwr()`):
//! - classic (RFC 3168): a CE-marked segment sets "demand CWR", which puts ECE on every ACK
//!   until a segment with CWR arrives; the first CE of an episode gets quick ACKs (at most
//!   2), a segment with CWR is ACKed at once, and a not-ECT segment after ECT ones (a
//!   retransmission) gets 2 quick ACKs;
//! - precise (DCTCP's `dctcp_ece_ack_update()`, for controllers that want CE events): ECE
//!   reflects the CE state of the segments an ACK covers; when the state changes, a held
//!   delayed ACK goes out first with the old state (for the data before the change), and
//!   the new segment is ACKed at once.
//!
//! SACK blocks (RFC 2018 as Linux builds them): the first block covers the most recently
//! received segment; the others repeat the most recently reported blocks, up to
//! [`MAX_SACK_BLOCKS`]. A segment that arrives twice (below `rcv_nxt`, or already queued out
//! of order) is ACKed at once with a D-SACK naming it (RFC 2883, `tcp_dsack_set()`;
//! [`Ack::dsack`]).

use crate::host::{self, HostTcp};
use crate::packet::{Ack, Ecn, SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::rangeset::RangeSet;
use crate::{Nanos, NS_PER_MS};
use std::collections::VecDeque;

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// Linux `TCP_DELACK_MIN`.
pub const DELACK_TIMEOUT: Nanos = 40 * NS_PER_MS;
/// Linux `sysctl_tcp_comp_sack_delay_ns` (default 1 ms).
pub const COMP_SACK_DELAY_MAX: Nanos = NS_PER_MS;
/// Linux `sysctl_tcp_comp_sack_nr` (default 44).
pub const COMP_SACK_NR: u32 = 44;
/// Immediate duplicate ACKs per `rcv_nxt` before SACK compression (`TCP_FASTRETRANS_THRESH`).
const DUPACKS_BEFORE_COMPRESSION: u32 = 3;
/// Blocks remembered for SACK generation (Linux keeps 4 in `selective_acks`).
const REMEMBERED_BLOCKS: usize = 4;
const _: () = assert!(MAX_SACK_BLOCKS <= REMEMBERED_BLOCKS);
/// `TCP_SACK_BLOCKS_EXPECTED`: the blocks Linux counts on an ACK to carry (3 fit beside
/// timestamps; it assumes 2, as an ACK may be lost). A block beyond them about to move sends
/// the ACKs SACK compression held.
const SACK_BLOCKS_EXPECTED: usize = 2;

/// How the receiver echoes CE marks (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnEcho {
    /// The connection did not negotiate ECN: no ECE.
    #[default]
    Off,
    /// RFC 3168: ECE on every ACK from a CE mark until CWR arrives.
    Classic,
    /// DCTCP's: ECE exactly on the ACKs of CE-marked segments.
    Precise,
}

#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    pub mss: u32,
    /// Total bytes of a sized transfer, `None` for a bulk flow.
    pub size: Option<u64>,
    pub delayed_ack: bool,
    /// The path's RTT, used to size SACK compression (Linux takes it from `rcv_rtt_est`,
    /// which for these paths is the same within a millisecond).
    pub rtt_hint: Nanos,
    /// The receiving host's settings: its receive buffer and initial window
    /// ([`crate::host`]).
    pub host: HostTcp,
    /// Generic receive offload: the segments of one sender burst that arrive in order, back to
    /// back, are taken in as one buffer and ACKed once, at the burst's last segment (Linux
    /// runs the ACK decision once per GRO buffer). Fast links only: below a few hundred
    /// Mbit/s a host's receive polls see packets one at a time.
    pub gro: bool,
    /// ECN echo, if the connection negotiated ECN.
    pub ecn: EcnEcho,
}

#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    /// Next segment expected in order.
    rcv_nxt: u64,
    /// `rcv_nxt` when the last ACK was sent (`rcv_wup`).
    rcv_wup: u64,
    /// Out-of-order segments held for reassembly.
    ooo: RangeSet,
    /// The recently reported SACK blocks, newest first, each as it stood when a segment last
    /// joined it. A block changes only when a segment joins it (and it is then re-entered at
    /// the front) or when `rcv_nxt` passes it (and it is then skipped), so the stored copy is
    /// the live range in the out-of-order set without looking it up.
    recent: VecDeque<SackBlock>,
    quickacks: u32,
    /// The window the receiver is willing to advertise, bytes (`rcv_ssthresh`).
    rcv_ssthresh: u64,
    /// Whether any data arrived yet (Linux: `icsk_ack.ato` still 0).
    got_data: bool,
    delack_deadline: Option<Nanos>,
    comp_deadline: Option<Nanos>,
    compressed_acks: u32,
    compressed_rcv_nxt: u64,
    dup_ack_counter: u32,
    /// Bytes handed to the application in order.
    delivered_bytes: u64,
    /// Time the last byte of a sized transfer arrived.
    completed_at: Option<Nanos>,
    /// Receive buffer, bytes (`sk_rcvbuf`).
    rcvbuf: u64,
    /// Largest window the receiver will offer (`window_clamp`).
    window_clamp: u64,
    /// Payload share of the buffer, 1/256 (`scaling_ratio`).
    scaling_ratio: u64,
    /// The last advertised window, bytes past `rcv_wup` (`rcv_wnd`).
    rcv_wnd: u64,
    /// Segments held out of order.
    ooo_segs: u64,
    /// `rcvq_space`: bytes read in the last measured RTT, the byte count and time it began.
    rcvq_space: u64,
    rcvq_seq: u64,
    rcvq_time: Nanos,
    /// Receiver RTT, us x 8 (`rcv_rtt_est.rtt_us`); 0 before a sample.
    rcv_rtt_us8: u64,
    /// The echo the last RTT sample came from (`rcv_rtt_last_tsecr`).
    last_tsecr: Nanos,
    /// Time of the event being handled (stamps the ACK's `tsval`).
    now: Nanos,
    /// ECE goes on every ACK (`TCP_ECN_DEMAND_CWR`).
    demand_cwr: bool,
    /// An ECT or CE segment has arrived (`TCP_ECN_SEEN`).
    ecn_seen: bool,
    /// Precise echo: CE state of the latest segment, and `rcv_nxt` before it.
    ce_state: bool,
    prior_rcv_nxt: u64,
    /// Segments received with CE.
    ce_marks: u64,
    /// An ACK a segment forced out ahead of the one `on_segment` returns.
    prior_ack: Option<Ack>,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        // `tcp_select_initial_window()` then `tcp_init_buffer_space()`: the handshake offers
        // the buffer's share at the default ratio; the clamp keeps one segment in reserve.
        let advmss = cfg.mss as u64;
        let rcvbuf = cfg.host.initial_rcvbuf();
        let rcv_wnd = cfg.host.initial_rcv_wnd(cfg.mss);
        let maxwin = host::win_from_space(rcvbuf, host::DEFAULT_SCALING_RATIO);
        let mut window_clamp = maxwin;
        if window_clamp > 2 * advmss && window_clamp + advmss > maxwin {
            window_clamp = (2 * advmss).max(maxwin - advmss);
        }
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        let rcvq_space = rcv_ssthresh
            .min(rcv_wnd)
            .min(host::INIT_SPACE_SEGS * advmss);
        Receiver {
            rcv_ssthresh,
            rcvbuf,
            window_clamp,
            scaling_ratio: host::DEFAULT_SCALING_RATIO,
            rcv_wnd,
            ooo_segs: 0,
            rcvq_space,
            rcvq_seq: 0,
            rcvq_time: 0,
            rcv_rtt_us8: 0,
            last_tsecr: 0,
            now: 0,
            got_data: false,
            cfg,
            rcv_nxt: 0,
            rcv_wup: 0,
            ooo: RangeSet::new(),
            recent: VecDeque::with_capacity(REMEMBERED_BLOCKS + 1),
            quickacks: 0,
            delack_deadline: None,
            comp_deadline: None,
            compressed_acks: 0,
            compressed_rcv_nxt: u64::MAX,
            dup_ack_counter: 0,
            delivered_bytes: 0,
            completed_at: None,
            demand_cwr: false,
            ecn_seen: false,
            ce_state: false,
            prior_rcv_nxt: 0,
            ce_marks: 0,
            prior_ack: None,
        }
    }

    /// Segments that arrived marked CE.
    pub fn ce_marks(&self) -> u64 {
        self.ce_marks
    }

    /// An ACK the last [`Self::on_segment`] sent ahead of the one it returned (precise ECN
    /// echo: the held delayed ACK, with the CE state before the change; or the ACK that SACK
    /// compression held, before a new block reorders the list). Send it first.
    pub fn take_prior_ack(&mut self) -> Option<Ack> {
        self.prior_ack.take()
    }

    /// The SACK blocks as listed now, most recent first: the distinct out-of-order ranges that
    /// hold the remembered segments at or above `rcv_nxt`, up to [`REMEMBERED_BLOCKS`].
    fn listed_blocks(&self) -> ([SackBlock; REMEMBERED_BLOCKS], usize) {
        let mut listed = [SackBlock::default(); REMEMBERED_BLOCKS];
        let mut n = 0;
        for &b in &self.recent {
            if n == REMEMBERED_BLOCKS {
                break;
            }
            if b.start < self.rcv_nxt || listed[..n].iter().any(|l| l.start == b.start) {
                continue;
            }
            listed[n] = b;
            n += 1;
        }
        (listed, n)
    }

    /// Where an out-of-order segment `seq` lands in the SACK block list, most recent first
    /// (`tcp_sack_new_ofo_skb()`'s `this_sack`): the position of the first listed block it
    /// extends or touches, else the number of blocks listed (it opens a new one).
    fn sack_slot(&self, seq: u64) -> usize {
        let (listed, n) = self.listed_blocks();
        listed[..n]
            .iter()
            .position(|b| b.start <= seq + 1 && seq <= b.end)
            .unwrap_or(n)
    }

    fn total_segs(&self) -> Option<u64> {
        self.cfg.size.map(|s| s.div_ceil(self.cfg.mss as u64))
    }

    fn bytes_below(&self, seq: u64) -> u64 {
        let b = seq * self.cfg.mss as u64;
        match self.cfg.size {
            Some(s) => b.min(s),
            None => b,
        }
    }

    /// Bytes delivered in order to the application so far.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }

    /// When a sized transfer completed (every byte arrived in order).
    pub fn completed_at(&self) -> Option<Nanos> {
        self.completed_at
    }

    /// The window last advertised, bytes past `rcv_nxt` at the time (before any data: the
    /// handshake's window, which the sender starts from).
    pub fn advertised_window(&self) -> u64 {
        self.rcv_wnd
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// The window the receiver is willing to advertise, bytes (`rcv_ssthresh`).
    pub fn window(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// The receive buffer, bytes (`sk_rcvbuf`).
    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }

    /// The largest window the receiver will offer now, bytes (`window_clamp`).
    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// The receiver's RTT estimate (`rcv_rtt_est`), if it has one.
    pub fn rcv_rtt(&self) -> Option<Nanos> {
        (self.rcv_rtt_us8 > 0).then(|| (self.rcv_rtt_us8 >> 3) * 1000)
    }

    /// `tcp_space()`: the window the free part of the buffer backs, bytes.
    fn free_space(&self) -> u64 {
        host::win_from_space(self.rcvbuf, self.scaling_ratio)
            .saturating_sub(self.ooo_segs * self.cfg.mss as u64)
    }

    /// `tcp_rcv_rtt_measure_ts()` + `tcp_rcv_rtt_update()`: one sample per new echo, from a
    /// full-sized segment; timestamps tick in milliseconds.
    fn rtt_measure(&mut self, now: Nanos, seg: &Segment) {
        if seg.tsecr == 0 || seg.tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = seg.tsecr;
        if seg.len < self.cfg.mss {
            return;
        }
        let delta_ms = (now / NS_PER_MS)
            .saturating_sub(seg.tsecr / NS_PER_MS)
            .max(1);
        let sample = delta_ms * 1000;
        let old = self.rcv_rtt_us8;
        self.rcv_rtt_us8 = if old == 0 || sample << 3 < old {
            sample << 3
        } else {
            old - (old >> 3) + sample
        };
    }

    /// `tcp_rcv_space_adjust()`: the application read up to `delivered_bytes`; once per
    /// receiver RTT, a buffer for twice (and in slow start four times) what it read.
    fn rcv_space_adjust(&mut self, now: Nanos) {
        if self.rcv_rtt_us8 == 0 {
            return;
        }
        if (now.saturating_sub(self.rcvq_time)) / 1000 < self.rcv_rtt_us8 >> 3 {
            return;
        }
        let copied = self.delivered_bytes - self.rcvq_seq;
        if copied > self.rcvq_space {
            self.rcvbuf_grow(copied);
        }
        self.rcvq_seq = self.delivered_bytes;
        self.rcvq_time = now;
    }

    /// `tcp_rcvbuf_grow()`.
    fn rcvbuf_grow(&mut self, newval: u64) {
        let old = self.rcvq_space.max(1);
        self.rcvq_space = newval;
        if self.cfg.host.rcvbuf.is_some() {
            return;
        }
        let mut rcvwin = newval << 1;
        rcvwin += (rcvwin * newval.saturating_sub(old) / old) << 1;
        if let Some(last) = self.ooo.last() {
            rcvwin += self.bytes_below(last.end) - self.bytes_below(self.rcv_nxt);
        }
        let rcvbuf =
            host::space_from_win(rcvwin, self.scaling_ratio).min(self.cfg.host.tcp_rmem[2]);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = host::win_from_space(rcvbuf, self.scaling_ratio);
        }
    }

    /// `tcp_select_window()`: the window to advertise now, bytes past `rcv_nxt`; the right
    /// edge never moves back.
    fn select_window(&mut self) -> u64 {
        let mss = self.cfg.mss as u64;
        let allowed = host::win_from_space(self.rcvbuf, self.scaling_ratio);
        let full = self.window_clamp.min(allowed);
        let mut free = self.free_space();
        if free < full / 2 && (free < allowed / 16 || free < mss) {
            free = 0;
        }
        // `tcp_receive_window()`: what is left of the last offer, from `rcv_wup`.
        let right_edge = self.bytes_below(self.rcv_wup) + self.rcv_wnd;
        let cur = right_edge.saturating_sub(self.bytes_below(self.rcv_nxt));
        self.rcv_wnd = free.min(self.rcv_ssthresh).max(cur);
        self.rcv_wnd
    }

    /// `tcp_incr_quickack()`: at least min(advertised window / 2 segments, 16) quick ACKs.
    fn incr_quickack(&mut self) {
        self.incr_quickack_max(MAX_QUICKACKS);
    }

    /// `tcp_incr_quickack(sk, max)`: at least min(advertised window / 2 segments, max).
    fn incr_quickack_max(&mut self, max: u32) {
        let q = match self.rcv_wnd / (2 * self.cfg.mss as u64) {
            0 => 2,
            n => n,
        }
        .min(max as u64) as u32;
        self.quickacks = self.quickacks.max(q);
    }

    /// `tcp_ecn_check_ce()` for a segment of new data; returns whether to ACK at once.
    fn ecn_check_ce(&mut self, ecn: Ecn) -> bool {
        let precise = self.cfg.ecn == EcnEcho::Precise;
        match ecn {
            Ecn::NotEct => {
                if self.ecn_seen {
                    self.incr_quickack_max(2);
                }
                false
            }
            Ecn::Ce => {
                self.ce_marks += 1;
                let now = precise && self.ce_event(true);
                if !self.demand_cwr {
                    self.incr_quickack_max(2);
                    self.demand_cwr = true;
                }
                self.ecn_seen = true;
                now
            }
            Ecn::Ect0 | Ecn::Ect1 => {
                self.ecn_seen = true;
                precise && self.ce_event(false)
            }
        }
    }

    /// `dctcp_ece_ack_update()`: ECE follows the CE state; on a change, a held ACK goes out
    /// first with the old state, and this segment is ACKed at once (returns true).
    fn ce_event(&mut self, ce: bool) -> bool {
        let changed = self.ce_state != ce;
        if changed && self.delack_deadline.is_some() {
            let right_edge = self.bytes_below(self.rcv_wup) + self.rcv_wnd;
            let wnd = right_edge.saturating_sub(self.bytes_below(self.prior_rcv_nxt));
            self.prior_ack = Some(Ack {
                cum: self.prior_rcv_nxt,
                sack: [SackBlock::default(); MAX_SACK_BLOCKS],
                n_sack: 0,
                delayed: false,
                dsack: None,
                wnd,
                tsval: self.now,
                ece: self.ce_state,
            });
        }
        self.prior_rcv_nxt = self.rcv_nxt;
        self.ce_state = ce;
        self.demand_cwr = ce;
        changed
    }

    /// `tcp_grow_window()` for one arriving segment of new data: open the window by two
    /// segments while below the clamp, and ACK this segment at once.
    fn grow_window(&mut self) {
        let room = self
            .window_clamp
            .min(self.free_space())
            .saturating_sub(self.rcv_ssthresh);
        if room > 0 {
            self.rcv_ssthresh += room.min(2 * self.cfg.mss as u64);
            self.quickacks |= 1;
        }
    }

    /// A data segment arrived at `now`. Returns the ACK to send now, if any.
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment) -> Option<Ack> {
        self.now = now;
        let mut ack_now = false;
        let mut dup = None;
        self.rtt_measure(now, seg);
        if self.cfg.ecn != EcnEcho::Off && seg.cwr {
            // `tcp_ecn_accept_cwr()`: the sender reduced; stop echoing and ACK at once.
            self.demand_cwr = false;
            ack_now = true;
        }
        let new_data = !(seg.seq < self.rcv_nxt || self.ooo.contains(seg.seq));
        if !new_data {
            // Old data: ACK at once with a D-SACK and re-enter quick-ACK mode.
            self.incr_quickack();
            ack_now = true;
            dup = Some(seg.seq);
        } else if seg.seq == self.rcv_nxt {
            if !self.got_data {
                // The first data segment starts the delayed-ACK engine in quick-ACK mode,
                // and measures the buffer's payload share (`tcp_measure_rcv_mss()`).
                self.got_data = true;
                self.scaling_ratio = host::SCALING_RATIO;
                self.window_clamp = host::win_from_space(self.rcvbuf, self.scaling_ratio);
                self.incr_quickack();
            }
            self.grow_window();
            self.rcv_nxt += 1;
            if !self.ooo.is_empty() {
                // Filled (part of) a hole: pull in what follows and ACK at once.
                if let Some(r) = self.ooo.first() {
                    if r.start == self.rcv_nxt {
                        self.rcv_nxt = r.end;
                        self.ooo_segs -= r.end - r.start;
                    }
                }
                self.ooo.remove_below(self.rcv_nxt);
                ack_now = true;
            }
            self.delivered_bytes = self.bytes_below(self.rcv_nxt);
            self.rcv_space_adjust(now);
            // `tcp_measure_rcv_mss()` / `tcp_cleanup_rbuf()`: a full-sized segment with PSH
            // ends a write; once the reader has taken everything (nothing held out of
            // order), it is ACKed at once rather than after the delayed-ACK timer.
            if seg.psh && self.ooo.is_empty() {
                ack_now = true;
            }
        } else {
            // `tcp_sack_new_ofo_skb()`: a segment that extends a block listed third or later,
            // or opens a new block when two or more are listed, moves that block to the front
            // and may push the oldest out of the list. ACKs held by SACK compression go out
            // first (`tcp_sack_compress_send_ack()`), so the blocks they covered are reported
            // before they move.
            if self.compressed_acks > 0 && self.sack_slot(seg.seq) >= SACK_BLOCKS_EXPECTED {
                self.prior_ack = Some(self.make_ack(false, None));
            }
            self.grow_window();
            self.ooo.insert(seg.seq..seg.seq + 1);
            self.ooo_segs += 1;
            // `tcp_data_queue_ofo()`: the buffer makes room for the out-of-order span.
            self.rcvbuf_grow(self.rcvq_space);
            let r = self
                .ooo
                .range_containing(seg.seq)
                .unwrap_or(seg.seq..seg.seq + 1);
            self.recent.retain(|b| !r.contains(&b.start));
            self.recent.push_front(SackBlock {
                start: r.start,
                end: r.end,
            });
            self.recent.truncate(REMEMBERED_BLOCKS);
        }
        if new_data && self.cfg.ecn != EcnEcho::Off {
            ack_now |= self.ecn_check_ce(seg.ecn);
        }
        if self.completed_at.is_none() && Some(self.rcv_nxt) == self.total_segs() {
            // The transfer is complete (the FIN would be ACKed at once).
            self.completed_at = Some(now);
            ack_now = true;
        }
        if self.cfg.gro
            && !seg.burst_end
            && !ack_now
            && dup.is_none()
            && self.ooo.is_empty()
            && seg.seq + 1 == self.rcv_nxt
        {
            // Inside a coalesced burst: the ACK decision waits for its last segment (the
            // delayed-ACK timer covers a burst whose end never arrives).
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + DELACK_TIMEOUT);
            }
            return None;
        }
        let more_than_one_segment = self.rcv_nxt - self.rcv_wup > 1;
        if ack_now || !self.cfg.delayed_ack || more_than_one_segment || self.quickacks > 0 {
            return Some(self.make_ack(false, dup));
        }
        if self.ooo.is_empty() {
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + DELACK_TIMEOUT);
            }
            return None;
        }
        // Out-of-order data queued: SACK compression.
        if self.compressed_acks >= COMP_SACK_NR {
            return Some(self.make_ack(false, None));
        }
        if self.compressed_rcv_nxt != self.rcv_nxt {
            self.compressed_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < DUPACKS_BEFORE_COMPRESSION {
            self.dup_ack_counter += 1;
            return Some(self.make_ack(false, None));
        }
        self.compressed_acks += 1;
        if self.comp_deadline.is_none() {
            let delay = COMP_SACK_DELAY_MAX.min(self.cfg.rtt_hint / 20).max(1);
            self.comp_deadline = Some(now + delay);
        }
        None
    }

    /// Deadline of the delayed-ACK or SACK-compression timer, if armed.
    pub fn next_timeout(&self) -> Option<Nanos> {
        match (self.delack_deadline, self.comp_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Timer expiry: returns the held ACK if one is due.
    pub fn on_timeout(&mut self, now: Nanos) -> Option<Ack> {
        self.now = now;
        match self.next_timeout() {
            Some(t) if t <= now => {
                let delayed = self.comp_deadline.is_none();
                Some(self.make_ack(delayed, None))
            }
            _ => None,
        }
    }

    /// The ACK to send now; `dsack` = the duplicate segment that triggered it, if any.
    fn make_ack(&mut self, delayed: bool, dsack: Option<u64>) -> Ack {
        self.delack_deadline = None;
        self.comp_deadline = None;
        self.compressed_acks = 0;
        let wnd = self.select_window();
        self.rcv_wup = self.rcv_nxt;
        self.quickacks = self.quickacks.saturating_sub(1);
        let mut ack = Ack {
            cum: self.rcv_nxt,
            sack: [SackBlock::default(); MAX_SACK_BLOCKS],
            n_sack: 0,
            delayed,
            dsack,
            wnd,
            tsval: self.now,
            ece: self.cfg.ecn != EcnEcho::Off && self.demand_cwr,
        };
        if !self.ooo.is_empty() {
            let rcv_nxt = self.rcv_nxt;
            self.recent.retain(|b| b.start >= rcv_nxt);
            let (listed, n) = self.listed_blocks();
            let n = n.min(MAX_SACK_BLOCKS);
            ack.sack.copy_from_slice(&listed[..MAX_SACK_BLOCKS]);
            ack.n_sack = n as u8;
        } else {
            self.recent.clear();
        }
        ack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u64) -> Segment {
        Segment {
            seq,
            len: 1000,
            retrans: false,
            sent_ns: 0,
            burst_end: true,
            tsecr: 0,
            ecn: crate::packet::Ecn::NotEct,
            cwr: false,
            psh: false,
        }
    }

    /// A receiver whose window is already at its clamp (no growth).
    fn rx(size: Option<u64>) -> Receiver {
        rx_clamp(size, 10 * 1000)
    }

    /// A receiver that offers 10 segments and may open to `window_clamp` (a fixed
    /// `SO_RCVBUF` whose payload share is the clamp).
    fn rx_clamp(size: Option<u64>, window_clamp: u64) -> Receiver {
        let rcvbuf = host::space_from_win(window_clamp, host::SCALING_RATIO);
        let mut r = Receiver::new(ReceiverConfig {
            mss: 1000,
            size,
            delayed_ack: true,
            rtt_hint: 100 * NS_PER_MS,
            host: HostTcp {
                rcvbuf: Some(rcvbuf / 2),
                ..HostTcp::default()
            },
            gro: false,
            ecn: EcnEcho::Off,
        });
        r.rcv_ssthresh = window_clamp.min(10_000);
        r.rcv_wnd = r.rcv_ssthresh;
        r
    }

    #[test]
    fn quickack_then_every_second_segment_then_timer() {
        let mut r = rx(None);
        // A 10-segment window gives 10 / 2 = 5 quick ACKs.
        for i in 0..5 {
            assert!(r.on_segment(0, &seg(i)).is_some(), "quickack {i}");
        }
        let base = 5;
        assert!(r.on_segment(1, &seg(base)).is_none());
        assert_eq!(r.next_timeout(), Some(1 + DELACK_TIMEOUT));
        let a = r
            .on_segment(2, &seg(base + 1))
            .expect("second segment acks");
        assert_eq!(a.cum, base + 2);
        assert!(r.on_segment(3, &seg(base + 2)).is_none());
        assert!(r.on_timeout(3 + DELACK_TIMEOUT - 1).is_none());
        let a = r.on_timeout(3 + DELACK_TIMEOUT).expect("timer ack");
        assert!(a.delayed);
        assert_eq!(a.cum, base + 3);
    }

    #[test]
    fn sack_blocks_most_recent_first_and_reassembly() {
        let mut r = rx(Some(9500));
        r.on_segment(0, &seg(0));
        let a = r.on_segment(0, &seg(2)).unwrap();
        assert_eq!((a.cum, a.n_sack), (1, 1));
        assert_eq!(a.sack[0], SackBlock { start: 2, end: 3 });
        r.on_segment(0, &seg(5));
        let a = r.on_segment(0, &seg(7)).unwrap();
        assert_eq!(
            a.sack_blocks(),
            &[
                SackBlock { start: 7, end: 8 },
                SackBlock { start: 5, end: 6 },
                SackBlock { start: 2, end: 3 }
            ]
        );
        let a = r.on_segment(0, &seg(3)).unwrap();
        assert_eq!(a.sack[0], SackBlock { start: 2, end: 4 });
        // Fill the hole at 1: cum jumps over 2..4.
        let a = r.on_segment(0, &seg(1)).unwrap();
        assert_eq!(a.cum, 4);
        assert_eq!(r.delivered_bytes(), 4000);
        for s in [4, 6, 8] {
            r.on_segment(5, &seg(s));
        }
        assert_eq!(r.completed_at(), None);
        r.on_segment(9, &seg(9));
        assert_eq!(r.rcv_nxt(), 10);
        assert_eq!(r.delivered_bytes(), 9500);
        assert_eq!(r.completed_at(), Some(9));
    }

    #[test]
    fn sack_compression_after_three_dupacks() {
        let mut r = rx(None);
        for i in 0..MAX_QUICKACKS as u64 {
            r.on_segment(0, &seg(i));
        }
        let hole = MAX_QUICKACKS as u64;
        // Segments above a hole: three immediate ACKs, then compression (RTT/20 = 5 ms > 1 ms cap).
        let mut immediate = 0;
        for k in 1..=10 {
            if r.on_segment(10, &seg(hole + k)).is_some() {
                immediate += 1;
            }
        }
        assert_eq!(immediate, 3);
        assert_eq!(r.next_timeout(), Some(10 + COMP_SACK_DELAY_MAX));
        let a = r.on_timeout(10 + COMP_SACK_DELAY_MAX).unwrap();
        assert_eq!(
            a.sack[0],
            SackBlock {
                start: hole + 1,
                end: hole + 11
            }
        );
        // 44 compressed segments force an ACK.
        let mut forced = false;
        for k in 11..=60 {
            if r.on_segment(20, &seg(hole + k)).is_some() {
                forced = true;
                break;
            }
        }
        assert!(forced);
        // Filling the hole ACKs at once.
        assert!(r.on_segment(30, &seg(hole)).is_some());
    }

    /// The odd last segment of a burst waits for the delayed-ACK timer, unless it carries
    /// PSH (the end of what the application wrote): the reader takes it and Linux ACKs at
    /// once (`ICSK_ACK_PUSHED`, `tcp_cleanup_rbuf()`). Not while data is held out of order.
    #[test]
    fn a_pushed_segment_is_acked_at_once() {
        let mut r = rx(None);
        // Past quick-ACK mode and the window's growth: until a segment is held.
        let mut seq = 0;
        while r.on_segment(0, &seg(seq)).is_some() {
            seq += 1;
            assert!(seq < 1000);
        }
        seq += 1;
        // Every second segment is ACKed; an odd one waits for the timer.
        assert!(r.on_segment(1, &seg(seq)).is_some());
        assert!(r.on_segment(2, &seg(seq + 1)).is_none());
        assert_eq!(r.next_timeout(), Some(2 + DELACK_TIMEOUT));
        assert!(r.on_segment(3, &seg(seq + 2)).is_some());
        // The same odd segment with PSH goes out at once.
        let pushed = Segment {
            psh: true,
            ..seg(seq + 3)
        };
        let a = r
            .on_segment(4, &pushed)
            .expect("a pushed segment is ACKed at once");
        assert_eq!(a.cum, seq + 4);
        // Above a hole, SACKs compressed after three: PSH does not send one early.
        let h = seq + 4;
        for k in 1..=3 {
            assert!(r.on_segment(5, &seg(h + k)).is_some(), "dupack {k}");
        }
        let held = Segment {
            psh: true,
            ..seg(h + 4)
        };
        assert!(r.on_segment(6, &held).is_none());
    }

    /// Lossy path, compressed SACKs: segments that extend the newest block are held; the
    /// next segment opens a third block, which would move the held block down the list, so
    /// the held ACK goes out first and reports it (`tcp_sack_compress_send_ack()`).
    #[test]
    fn a_new_block_sends_the_held_compressed_ack_first() {
        let mut r = rx(None);
        for i in 0..MAX_QUICKACKS as u64 {
            r.on_segment(0, &seg(i));
        }
        let h = MAX_QUICKACKS as u64;
        // Holes at h and h+3; blocks [h+1, h+3) and then [h+4, ...).
        r.on_segment(10, &seg(h + 1));
        r.on_segment(10, &seg(h + 2));
        r.on_segment(10, &seg(h + 4));
        // Three immediate duplicate ACKs spent; these extend the first block and are held.
        for k in 5..9 {
            assert!(r.on_segment(10, &seg(h + k)).is_none(), "compressed");
            assert!(r.take_prior_ack().is_none());
        }
        // A new block (hole at h+9) with two listed: the held ACK goes first, and it reports
        // [h+4, h+9) without the new segment.
        assert!(
            r.on_segment(11, &seg(h + 10)).is_none(),
            "itself compressed"
        );
        let prior = r.take_prior_ack().expect("the held ACK goes out first");
        assert_eq!(
            prior.sack_blocks(),
            &[
                SackBlock {
                    start: h + 4,
                    end: h + 9
                },
                SackBlock {
                    start: h + 1,
                    end: h + 3
                }
            ]
        );
        // Nothing held any more: extending the newest block is compressed as before, and a
        // block listed first or second sends nothing early.
        assert!(r.on_segment(11, &seg(h + 11)).is_none());
        assert!(r.take_prior_ack().is_none());
        assert!(r.on_segment(11, &seg(h + 12)).is_none());
        assert!(r.take_prior_ack().is_none());
        // Extending the block listed second ([h+4, h+9)) is not beyond the first two either.
        assert!(r.on_segment(12, &seg(h + 9)).is_none());
        assert!(r.take_prior_ack().is_none());
    }

    #[test]
    fn duplicate_reenters_quickack() {
        let mut r = rx(None);
        for i in 0..39u64 {
            r.on_segment(0, &seg(i));
        }
        assert!(r.on_segment(0, &seg(39)).is_none(), "delayed");
        let a = r.on_segment(0, &seg(3)).expect("duplicate acked at once");
        assert_eq!(a.dsack, Some(3));
        assert!(r.on_segment(0, &seg(40)).is_some(), "quick-ACK mode again");
    }

    #[test]
    fn every_segment_acked_while_the_window_opens() {
        // Window 10 segments, clamp 100: it grows by 2 per segment, so 45 segments open it.
        let mut r = rx_clamp(None, 100_000);
        for i in 0..45u64 {
            assert!(
                r.on_segment(i, &seg(i)).is_some(),
                "segment {i} acked at once"
            );
        }
        assert_eq!(r.window(), 100_000);
        // At the clamp: the 4 quick ACKs left of the first 5 (each step's `|= 1` refilled
        // what its ACK used), then an ACK per two segments.
        let acks = (45..65u64)
            .filter(|&i| r.on_segment(i, &seg(i)).is_some())
            .count();
        assert_eq!(acks, 4 + 16 / 2);
        // Out-of-order segments open the window too (and are ACKed at once).
        let mut r = rx_clamp(None, 100_000);
        r.on_segment(0, &seg(0));
        for i in 2..30u64 {
            assert!(
                r.on_segment(i, &seg(i)).is_some(),
                "ofo segment {i} acked at once"
            );
        }
        assert_eq!(r.window(), 10_000 + 29 * 2_000);
    }

    fn ecn_seg(seq: u64, ecn: Ecn, cwr: bool) -> Segment {
        Segment {
            ecn,
            cwr,
            ..seg(seq)
        }
    }

    fn rx_ecn(mode: EcnEcho) -> Receiver {
        let mut r = rx(None);
        r.cfg.ecn = mode;
        r
    }

    #[test]
    fn classic_echo_lasts_until_cwr() {
        let mut r = rx_ecn(EcnEcho::Classic);
        // Past the quick ACKs: every second segment is ACKed.
        for i in 0..6 {
            let a = r.on_segment(i, &ecn_seg(i, Ecn::Ect0, false));
            assert!(a.is_none_or(|a| !a.ece));
        }
        r.quickacks = 0;
        // A CE segment: ECE, and ACKed at once (quick ACK mode, at most 2).
        let a = r
            .on_segment(10, &ecn_seg(6, Ecn::Ce, false))
            .expect("quick ack");
        assert!(a.ece);
        assert_eq!(r.ce_marks(), 1);
        // ECE stays on the following ACKs though their segments are not CE.
        let a = r
            .on_segment(11, &ecn_seg(7, Ecn::Ect0, false))
            .expect("ack");
        assert!(a.ece);
        r.on_segment(12, &ecn_seg(8, Ecn::Ect0, false));
        let a = r
            .on_segment(13, &ecn_seg(9, Ecn::Ect0, false))
            .expect("ack");
        assert!(a.ece);
        // The sender's CWR ends it, and is ACKed at once.
        let a = r
            .on_segment(14, &ecn_seg(10, Ecn::Ect0, true))
            .expect("cwr acked at once");
        assert!(!a.ece);
        // Without ECN negotiated nothing is echoed.
        let mut r = rx_ecn(EcnEcho::Off);
        let a = r.on_segment(0, &ecn_seg(0, Ecn::Ce, false)).unwrap();
        assert!(!a.ece);
        assert_eq!(r.ce_marks(), 0);
    }

    #[test]
    fn precise_echo_marks_exactly_the_ce_segments() {
        let mut r = rx_ecn(EcnEcho::Precise);
        for i in 0..5 {
            r.on_segment(i, &ecn_seg(i, Ecn::Ect0, false));
        }
        r.quickacks = 0;
        // One unmarked segment waits for the delayed ACK...
        assert!(r.on_segment(5, &ecn_seg(5, Ecn::Ect0, false)).is_none());
        // ...when a CE one arrives: the held ACK goes first, without ECE, for the data
        // before the change, then this segment's with ECE.
        let a = r
            .on_segment(6, &ecn_seg(6, Ecn::Ce, false))
            .expect("ack now");
        let prior = r.take_prior_ack().expect("the held ack first");
        assert_eq!((prior.cum, prior.ece), (6, false));
        assert_eq!((a.cum, a.ece), (7, true));
        assert!(r.take_prior_ack().is_none());
        // CE continues: no state change, ordinary delayed ACKs, all with ECE.
        assert!(r.on_segment(7, &ecn_seg(7, Ecn::Ce, false)).is_none());
        let a = r
            .on_segment(8, &ecn_seg(8, Ecn::Ce, false))
            .expect("second segment");
        assert!(a.ece);
        // Back to unmarked: ACKed at once, without ECE (no CWR needed).
        let a = r
            .on_segment(9, &ecn_seg(9, Ecn::Ect0, false))
            .expect("change");
        assert!(!a.ece);
        assert_eq!(r.ce_marks(), 3);
    }
}
