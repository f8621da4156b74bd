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
//!   the new segment is ACKed at once;
//! - accurate (AccECN, RFC 9768, for controllers that need it: `accecn.rs`): every ACK
//!   carries the count of CE-marked segments (the ACE field) and, space allowing, byte
//!   counts per ECN codepoint (the AccECN option); a change of ECN field is ACKed at once.
//!
//! SACK blocks (RFC 2018 as Linux builds them): the first block covers the most recently
//! received segment; the others repeat the most recently reported blocks, up to
//! [`MAX_SACK_BLOCKS`]. A segment that arrives twice (below `rcv_nxt`, or already queued out
//! of order) is ACKed at once with a D-SACK naming it (RFC 2883, `tcp_dsack_set()`;
//! [`Ack::dsack`]).
//!
//! This file holds the settings, the state and its accessors; `ack.rs` a segment's arrival,
//! the ACK policy, the timers and the ACK itself; `sack.rs` the SACK block list; `window.rs`
//! the receive window, the buffer autotuning and the receiver's RTT; `ecn.rs` the ECN echo;
//! `tests.rs` the tests.

mod accecn;
mod ack;
mod ecn;
mod sack;
mod window;

pub use accecn::ACE_INIT;

#[cfg(test)]
mod tests;

use crate::host::{self, HostTcp};
use crate::packet::{Ack, MAX_SACK_BLOCKS};
use crate::rangeset::RangeSet;
use crate::{Nanos, NS_PER_MS};

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
    /// Accurate ECN: the ACE field and the AccECN option (`accecn.rs`).
    Accurate,
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
    recent: sack::RecentBlocks,
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
    /// Accurate ECN's counters, on a connection that negotiated it.
    accecn: Option<accecn::AccEcnRx>,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        // `tcp_select_initial_window()` then `tcp_init_buffer_space()`: the handshake offers
        // the buffer's share at the default ratio; the clamp keeps one segment in reserve.
        let advmss = cfg.mss as u64;
        let cfg_ecn = cfg.ecn;
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
            recent: sack::RecentBlocks::default(),
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
            accecn: (cfg_ecn == EcnEcho::Accurate).then(accecn::AccEcnRx::default),
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
}
