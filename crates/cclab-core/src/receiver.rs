//! The receiving end: in-order reassembly, cumulative ACK + SACK, delayed ACKs.
//!
//! ACK policy as Linux (`__tcp_ack_snd_check()` in net/ipv4/tcp_input.c):
//! - ACK at once when more than one full segment is unacknowledged (every second segment),
//!   while in quick-ACK mode (the first 16 ACKs of a connection, `TCP_MAX_QUICKACKS`), and
//!   whenever out-of-order data is queued (every segment above a hole, and the one that
//!   fills it, is ACKed immediately so the sender sees the SACK information quickly);
//! - otherwise hold the ACK for up to the delayed-ACK timeout (40 ms, `TCP_DELACK_MIN`;
//!   Linux adapts it between 40 and 200 ms, this model keeps the minimum).
//!
//! SACK blocks (RFC 2018 as Linux builds them): the first block covers the most recently
//! received segment; the others repeat the most recently reported blocks, up to
//! [`MAX_SACK_BLOCKS`].

use crate::packet::{Ack, SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::rangeset::RangeSet;
use crate::{Nanos, NS_PER_MS};
use std::collections::VecDeque;

/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// Linux `TCP_DELACK_MIN`.
pub const DELACK_TIMEOUT: Nanos = 40 * NS_PER_MS;

#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    pub mss: u32,
    /// Total bytes of a sized transfer, `None` for a bulk flow.
    pub size: Option<u64>,
    pub delayed_ack: bool,
}

#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    /// Next segment expected in order.
    rcv_nxt: u64,
    /// Out-of-order segments held for reassembly.
    ooo: RangeSet,
    /// Sequence numbers of recent out-of-order arrivals, newest first (for SACK block order).
    recent: VecDeque<u64>,
    /// Segments received since the last ACK was sent.
    unacked_segs: u32,
    quickacks: u32,
    delack_deadline: Option<Nanos>,
    /// Bytes handed to the application in order.
    delivered_bytes: u64,
    /// Time the last byte of a sized transfer arrived.
    completed_at: Option<Nanos>,
    pub segments_received: u64,
    pub duplicate_segments: u64,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        Receiver {
            cfg,
            rcv_nxt: 0,
            ooo: RangeSet::new(),
            recent: VecDeque::with_capacity(8),
            unacked_segs: 0,
            quickacks: MAX_QUICKACKS,
            delack_deadline: None,
            delivered_bytes: 0,
            completed_at: None,
            segments_received: 0,
            duplicate_segments: 0,
        }
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

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// A data segment arrived at `now`. Returns the ACK to send now, if any.
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment) -> Option<Ack> {
        self.segments_received += 1;
        let mut immediate = false;
        let mut dup = false;
        if seg.seq < self.rcv_nxt || self.ooo.contains(seg.seq) {
            // Duplicate: ACK at once (Linux sends a (D)SACK-carrying ACK immediately).
            self.duplicate_segments += 1;
            immediate = true;
            dup = true;
        } else if seg.seq == self.rcv_nxt {
            self.rcv_nxt += 1;
            if !self.ooo.is_empty() {
                // Filled (part of) a hole: pull in what follows.
                if let Some(r) = self.ooo.first() {
                    if r.start == self.rcv_nxt {
                        self.rcv_nxt = r.end;
                    }
                }
                self.ooo.remove_below(self.rcv_nxt);
                immediate = true;
            }
            self.delivered_bytes = self.bytes_below(self.rcv_nxt);
        } else {
            self.ooo.insert(seg.seq..seg.seq + 1);
            self.recent.retain(|&s| s != seg.seq);
            self.recent.push_front(seg.seq);
            self.recent.truncate(8);
            immediate = true;
        }
        if self.completed_at.is_none() && Some(self.rcv_nxt) == self.total_segs() {
            self.completed_at = Some(now);
            immediate = true;
        }
        self.unacked_segs += 1;
        if immediate || !self.cfg.delayed_ack || self.quickacks > 0 || self.unacked_segs >= 2 || !self.ooo.is_empty() {
            let mut a = self.make_ack(false);
            a.dsack = dup;
            return Some(a);
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + DELACK_TIMEOUT);
        }
        None
    }

    /// Deadline of the delayed-ACK timer, if armed.
    pub fn next_timeout(&self) -> Option<Nanos> {
        self.delack_deadline
    }

    /// Timer expiry: returns the delayed ACK if one is due.
    pub fn on_timeout(&mut self, now: Nanos) -> Option<Ack> {
        match self.delack_deadline {
            Some(t) if t <= now => Some(self.make_ack(true)),
            _ => None,
        }
    }

    fn make_ack(&mut self, delayed: bool) -> Ack {
        self.delack_deadline = None;
        self.unacked_segs = 0;
        self.quickacks = self.quickacks.saturating_sub(1);
        let mut ack = Ack { cum: self.rcv_nxt, sack: [SackBlock::default(); MAX_SACK_BLOCKS], n_sack: 0, delayed, dsack: false };
        if !self.ooo.is_empty() {
            let rcv_nxt = self.rcv_nxt;
            self.recent.retain(|&s| s >= rcv_nxt);
            let mut n = 0;
            for &s in &self.recent {
                if n == MAX_SACK_BLOCKS {
                    break;
                }
                if let Some(r) = self.ooo.range_containing(s) {
                    if !ack.sack[..n].iter().any(|b| b.start == r.start) {
                        ack.sack[n] = SackBlock { start: r.start, end: r.end };
                        n += 1;
                    }
                }
            }
            ack.n_sack = n as u8;
        }
        ack
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u64) -> Segment {
        Segment { seq, len: 1000, retrans: false, sent_ns: 0 }
    }

    fn rx(size: Option<u64>) -> Receiver {
        Receiver::new(ReceiverConfig { mss: 1000, size, delayed_ack: true })
    }

    #[test]
    fn quickack_then_every_second_segment_then_timer() {
        let mut r = rx(None);
        for i in 0..MAX_QUICKACKS as u64 {
            assert!(r.on_segment(0, &seg(i)).is_some(), "quickack {i}");
        }
        let base = MAX_QUICKACKS as u64;
        assert!(r.on_segment(1, &seg(base)).is_none());
        assert_eq!(r.next_timeout(), Some(1 + DELACK_TIMEOUT));
        let a = r.on_segment(2, &seg(base + 1)).expect("second segment acks");
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
        assert_eq!(a.sack_blocks(), &[SackBlock { start: 7, end: 8 }, SackBlock { start: 5, end: 6 }, SackBlock { start: 2, end: 3 }]);
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
}
