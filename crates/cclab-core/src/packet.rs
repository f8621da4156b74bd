//! What travels between the two ends: data segments one way, ACKs the other.

use crate::Nanos;

/// Bytes of IPv4 + TCP header (with the timestamp option) on every packet; with the default
/// MSS of 1448 a full segment is a 1500-byte IP packet.
pub const HEADER_BYTES: u32 = 52;

/// Maximum SACK blocks per ACK. Linux fits 4 blocks in the TCP option space, or 3 when the
/// timestamp option is on (the default), which this model assumes.
pub const MAX_SACK_BLOCKS: usize = 3;

/// The ECN field of an IP header (RFC 3168 codepoints).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Ecn {
    /// Not ECN-capable transport: a congested queue drops it.
    #[default]
    NotEct,
    /// ECT(0): ECN-capable (classic ECN, RFC 3168).
    Ect0,
    /// ECT(1): ECN-capable (L4S, RFC 9331).
    Ect1,
    /// Congestion Experienced: a queue marked it instead of dropping it.
    Ce,
}

impl Ecn {
    /// Whether a queue may mark this packet CE instead of dropping it.
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce)
    }
}

/// A data segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Segment number (see crate docs: sequence numbers count segments).
    pub seq: u64,
    /// Payload bytes.
    pub len: u32,
    /// Whether this is a retransmission.
    pub retrans: bool,
    /// Sender's clock when sent.
    pub sent_ns: Nanos,
    /// The last segment of a TSO burst (the sender's segments between two of these left back
    /// to back); a receiver with GRO ACKs a burst that arrives whole once.
    pub burst_end: bool,
    /// TCP timestamp echo (`TSecr`): the receiver's clock as stamped on the latest ACK the
    /// sender had processed when it sent this segment; 0 before any. The receiver measures
    /// its RTT from it (`tcp_rcv_rtt_measure_ts()`).
    pub tsecr: Nanos,
    /// The IP header's ECN field: ECT on new data of a flow that negotiated ECN
    /// (`tcp_ecn_send()`), CE once a queue marked it.
    pub ecn: Ecn,
    /// The TCP CWR flag: the sender reduced its window after an ECN echo
    /// (`tcp_ecn_queue_cwr()`; carried by the first new data segment after the reduction).
    pub cwr: bool,
    /// The TCP PSH flag: the last segment the application has written so far
    /// (`tcp_mark_push()` at the end of a write). A receiver that reads everything ACKs a
    /// full-sized one at once instead of holding a delayed ACK (`ICSK_ACK_PUSHED`).
    pub psh: bool,
}

impl Segment {
    /// Size on the wire (IP packet) in bytes.
    pub fn wire_len(&self) -> u32 {
        self.len + HEADER_BYTES
    }
}

/// A SACK block: segments `[start, end)` received out of order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u64,
    pub end: u64,
}

/// An acknowledgement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Next segment expected in order (everything below has arrived).
    pub cum: u64,
    /// SACK blocks, most recent first; only the first `n_sack` are valid.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub n_sack: u8,
    /// Whether the receiver held this ACK back (delayed-ACK timer or second segment).
    pub delayed: bool,
    /// The D-SACK (RFC 2883): the segment that triggered this ACK was a duplicate, and this
    /// is its number (Linux puts it in the first SACK block; the model carries it beside the
    /// blocks and does not count it in [`Ack::wire_len`]).
    pub dsack: Option<u64>,
    /// Receive window advertised, bytes beyond the cumulative ACK's byte position.
    pub wnd: u64,
    /// TCP timestamp value (`TSval`): the receiver's clock when it sent this ACK.
    pub tsval: Nanos,
    /// The TCP ECE flag: the receiver echoes a CE mark (RFC 3168: on every ACK until a
    /// segment with CWR arrives; DCTCP: on the ACKs of CE-marked segments).
    pub ece: bool,
    /// Accurate ECN's feedback, on a connection that negotiated it (then `ece` is unused:
    /// the ECE flag is part of the ACE field).
    pub accecn: Option<AccEcnFeedback>,
}

/// What an Accurate ECN receiver (RFC 9768, Linux 6.18's `tcp_accecn_set_ace()` and
/// `tcp_options_write()`) puts on an ACK: the ACE field, and the AccECN option when it fits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AccEcnFeedback {
    /// The ACE field (AE, CWR, ECE): CE-marked segments received, plus 5, modulo 8.
    pub ace: u8,
    /// How many of the option's byte counters the ACK carries (0-3, in Linux's order:
    /// ECT(1), CE, ECT(0)), or `None` when the option did not fit beside the others.
    pub opt_fields: Option<u8>,
    /// The option's bytes on the wire (its padding may share SACK's).
    pub opt_len: u8,
    /// The receiver's byte counters (payload bytes that arrived ECT(1), CE, ECT(0)), as the
    /// option's 24-bit fields carry them (the initial offsets left out).
    pub bytes: [u32; 3],
}

impl Ack {
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.n_sack as usize]
    }

    /// Size on the wire in bytes (header + 8 bytes per SACK block + 4 bytes of SACK option header).
    pub fn wire_len(&self) -> u32 {
        HEADER_BYTES
            + if self.n_sack > 0 {
                4 + 8 * self.n_sack as u32
            } else {
                0
            }
            + self.accecn.map_or(0, |f| f.opt_len as u32)
    }
}
