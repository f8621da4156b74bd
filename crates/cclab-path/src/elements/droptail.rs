//! The bottleneck: a link of fixed rate serving a drop-tail FIFO limited in bytes, like an
//! HTB class with a bfifo child on a router's egress.
//!
//! The limit counts the bytes *waiting* (Linux bfifo's backlog); the packet being sent is not
//! in it. A packet that would push the waiting bytes over the limit is dropped.
//!
//! Bursts (burst admission lives here, for both backends): a TSO burst, or a GSO packet
//! that the kernel lab takes whole, is admitted as if its segments had arrived one by one
//! back to back. On an idle link the first goes on the wire at once and the others must fit
//! the buffer; behind a GSO packet on the wire, its segments not yet sent count as waiting.
//! A burst that fits stays whole; one that does not is taken in segment by segment (a GSO
//! packet is split), and the segments that do not fit are dropped.
//!
//! ECN step marking ([`DropTail::with_ce_threshold`]): an ECN-capable packet that waited
//! longer than the threshold is marked CE as it goes on the wire, the way Linux's
//! `ce_threshold` does in fq_codel (sojourn time at dequeue). A full buffer still drops.

use crate::element::{Departure, Element, Packet};
use crate::Nanos;
use std::collections::VecDeque;

struct InService<P> {
    pkt: P,
    enqueued: Nanos,
    start: Nanos,
    done: Nanos,
}

/// A rate-limited drop-tail FIFO. Rates count whole IP packets.
pub struct DropTail<P> {
    rate_bps: f64,
    limit_bytes: u64,
    queue: VecDeque<(P, Nanos)>,
    backlog: u64,
    in_service: Option<InService<P>>,
    /// Fractional nanoseconds carried between packets so long runs keep the exact rate.
    carry: f64,
    forwarded_pkts: u64,
    forwarded_bytes: u64,
    dropped: u64,
    split: u64,
    scratch: Vec<P>,
    ce_threshold: Option<Nanos>,
    marked: u64,
}

impl<P: Packet> DropTail<P> {
    /// A link of `rate_bps` (> 0) whose queue holds at most `limit_bytes` waiting.
    pub fn new(rate_bps: f64, limit_bytes: u64) -> Self {
        assert!(rate_bps > 0.0, "a link needs a positive rate");
        DropTail {
            rate_bps,
            limit_bytes,
            queue: VecDeque::new(),
            backlog: 0,
            in_service: None,
            carry: 0.0,
            forwarded_pkts: 0,
            forwarded_bytes: 0,
            dropped: 0,
            split: 0,
            scratch: Vec::new(),
            ce_threshold: None,
            marked: 0,
        }
    }

    /// Mark CE on ECN-capable packets whose sojourn exceeds `threshold` (`None`: never).
    pub fn with_ce_threshold(mut self, threshold: Option<Nanos>) -> Self {
        self.ce_threshold = threshold;
        self
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }

    fn tx_time(&mut self, len: u32) -> Nanos {
        let exact = len as f64 * 8.0 * 1e9 / self.rate_bps + self.carry;
        let whole = exact.floor();
        self.carry = exact - whole;
        (whole as Nanos).max(1)
    }

    fn start(&mut self, now: Nanos, pkt: P, enqueued: Nanos) {
        let tx = self.tx_time(pkt.wire_len());
        self.in_service = Some(InService {
            pkt,
            enqueued,
            start: now,
            done: now + tx,
        });
    }

    /// Bytes the buffer holds at `now`: those waiting, plus the segments of a GSO packet on
    /// the wire that a link sending segment by segment would not have sent yet.
    fn occupancy(&self, now: Nanos) -> u64 {
        let on_wire = self
            .in_service
            .as_ref()
            .filter(|s| s.pkt.segments() > 1)
            .map_or(0, |s| {
                let rem = s.done.saturating_sub(now) as f64 * self.rate_bps / 8e9;
                (rem as u64).saturating_sub(s.pkt.segment_wire_len() as u64)
            });
        self.backlog + on_wire
    }

    /// Whether a burst of `total` wire bytes whose first segment is `first` bytes fits
    /// whole, arriving at `now` (see the module docs).
    pub fn fits(&self, now: Nanos, first: u64, total: u64) -> bool {
        if self.in_service.is_none() {
            total.saturating_sub(first) <= self.limit_bytes
        } else {
            self.occupancy(now) + total <= self.limit_bytes
        }
    }

    /// Drop-tail for one packet.
    fn admit(&mut self, now: Nanos, pkt: P) {
        if self.in_service.is_none() {
            self.start(now, pkt, now);
            return;
        }
        let len = pkt.wire_len() as u64;
        if self.occupancy(now) + len > self.limit_bytes {
            self.dropped += pkt.segments() as u64;
            return;
        }
        self.backlog += len;
        self.queue.push_back((pkt, now));
    }
}

impl<P: Packet + Send> Element<P> for DropTail<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, _out: &mut Vec<P>) {
        if pkt.segments() > 1
            && !self.fits(now, pkt.segment_wire_len() as u64, pkt.wire_len() as u64)
        {
            // Taken in segment by segment: split, and drop what does not fit.
            self.split += 1;
            let mut segs = std::mem::take(&mut self.scratch);
            pkt.split(&mut segs);
            for mut s in segs.drain(..) {
                s.mark_burst_broken();
                self.admit(now, s);
            }
            self.scratch = segs;
            return;
        }
        self.admit(now, pkt);
    }

    fn enqueue_burst(&mut self, now: Nanos, burst: &mut Vec<P>, _out: &mut Vec<P>) -> bool {
        let first = burst.first().map_or(0, |p| p.segment_wire_len() as u64);
        let total: u64 = burst.iter().map(|p| p.wire_len() as u64).sum();
        let whole = self.fits(now, first, total);
        for mut p in burst.drain(..) {
            if !whole {
                p.mark_burst_broken();
            }
            self.admit(now, p);
        }
        whole
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Departure<P>> {
        let done = self.in_service.as_ref()?.done;
        if done > now {
            return None;
        }
        let mut s = self.in_service.take()?;
        let sojourn = s.start.saturating_sub(s.enqueued);
        if self.ce_threshold.is_some_and(|t| sojourn > t) && s.pkt.is_ect() {
            s.pkt.set_ce();
            self.marked += s.pkt.segments() as u64;
        }
        self.forwarded_pkts += s.pkt.segments() as u64;
        self.forwarded_bytes += s.pkt.wire_len() as u64;
        if let Some((next, enq)) = self.queue.pop_front() {
            self.backlog -= next.wire_len() as u64;
            // Back to back: the next one starts when this one ended (or when it arrived, if
            // it was enqueued after the link had gone idle).
            self.start(done.max(enq), next, enq);
        }
        Some(Departure {
            at: done,
            sojourn,
            pkt: s.pkt,
        })
    }

    fn peek(&self) -> Option<&P> {
        self.in_service.as_ref().map(|s| &s.pkt)
    }

    fn next_event(&self) -> Option<Nanos> {
        self.in_service.as_ref().map(|s| s.done)
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("forwarded", self.forwarded_pkts),
            ("forwarded_bytes", self.forwarded_bytes),
            ("dropped", self.dropped),
            ("split", self.split),
            ("marked", self.marked),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    fn deq(b: &mut DropTail<P>, now: Nanos) -> Option<Departure<P>> {
        b.dequeue(now)
    }

    #[test]
    fn serialises_at_rate_and_drops_tail() {
        // 12 Mbit/s: a 1500-byte packet takes 1 ms.
        let mut b = DropTail::new(12e6, 3000);
        let mut out = Vec::new();
        for _ in 0..4 {
            b.enqueue(0, P::new(1500), &mut out);
        }
        assert!(out.is_empty());
        // One on the wire, two waiting (3000 bytes), the fourth dropped.
        assert_eq!(b.counters()[2], ("dropped", 1));
        assert_eq!(b.backlog_bytes(), 3000);
        assert_eq!(b.next_event(), Some(1_000_000));
        assert!(deq(&mut b, 999_999).is_none());
        let d = deq(&mut b, 1_000_000).unwrap();
        assert_eq!((d.at, d.sojourn), (1_000_000, 0));
        let d = deq(&mut b, 2_500_000).unwrap();
        assert_eq!(
            (d.at, d.sojourn),
            (2_000_000, 1_000_000),
            "leaves when done, not when asked"
        );
        let d = deq(&mut b, 3_000_000).unwrap();
        assert_eq!(d.sojourn, 2_000_000);
        assert!(b.next_event().is_none());
        assert_eq!(b.counters()[1], ("forwarded_bytes", 4500));
    }

    #[test]
    fn long_run_keeps_exact_rate() {
        // 7 Mbit/s does not divide 1500 bytes into whole ns; the carry keeps the average.
        let mut b = DropTail::new(7e6, u64::MAX);
        let n = 10_000u64;
        for _ in 0..n {
            b.enqueue(0, P::new(1500), &mut Vec::new());
        }
        let mut last = 0;
        while let Some(t) = b.next_event() {
            b.dequeue(t);
            last = t;
        }
        let expect = n as f64 * 1500.0 * 8.0 / 7e6 * 1e9;
        assert!((last as f64 - expect).abs() < 2.0, "{last} vs {expect}");
    }

    #[test]
    fn late_dequeue_is_safe() {
        // A caller that enqueues after the packet on the wire finished, before dequeuing it.
        let mut b = DropTail::new(12e6, 10_000);
        b.enqueue(0, P::new(1500), &mut Vec::new());
        b.enqueue(5_000_000, P::new(1500), &mut Vec::new());
        let d = b.dequeue(5_000_000).unwrap();
        assert_eq!(d.sojourn, 0);
        // The second packet starts when it arrived, not when the first finished.
        assert_eq!(b.next_event(), Some(6_000_000));
        assert_eq!(b.dequeue(6_000_000).unwrap().sojourn, 0);
    }

    #[test]
    fn a_burst_stays_whole_only_if_it_fits_as_if_sent_segment_by_segment() {
        // Idle link, buffer of two packets: a burst of three fits (one goes on the wire).
        let mut b = DropTail::new(12e6, 3000);
        let burst = |n: usize| (0..n).map(|_| P::new(1500)).collect::<Vec<_>>();
        assert!(b.enqueue_burst(0, &mut burst(3), &mut Vec::new()));
        assert_eq!(b.counters()[2].1, 0);
        // Busy and full: the next burst of two is broken up and dropped.
        let mut b2 = DropTail::new(12e6, 3000);
        assert!(b2.enqueue_burst(0, &mut burst(2), &mut Vec::new()));
        assert!(!b2.enqueue_burst(0, &mut burst(2), &mut Vec::new()));
        assert_eq!(b2.counters()[2].1, 1, "one of the two fits the buffer");
    }

    #[test]
    fn a_gso_packet_that_does_not_fit_is_split_and_dropped_per_segment() {
        // A 4-segment GSO packet on an idle link with room for two waiting segments: split;
        // the first goes on the wire, two wait, the fourth is dropped.
        let mut b = DropTail::new(12e6, 3000);
        b.enqueue(0, P::gso(4, 1500), &mut Vec::new());
        assert_eq!(b.counters()[3], ("split", 1));
        assert_eq!(b.counters()[2], ("dropped", 1));
        assert_eq!(b.backlog_bytes(), 3000);
        // One that fits is served whole: it leaves when its last byte is sent.
        let mut b = DropTail::new(12e6, 10_000);
        b.enqueue(0, P::gso(3, 1500), &mut Vec::new());
        assert_eq!(b.next_event(), Some(3_000_000));
        // Behind it, what a segment-by-segment link would still hold counts as waiting: at
        // 0.5 ms 3750 bytes are unsent, all but one segment's worth (2250) waiting, so a
        // 3000-byte buffer has no room for another packet; at 1.5 ms 750 wait and there is.
        let mut b = DropTail::new(12e6, 3000);
        b.enqueue(0, P::gso(3, 1500), &mut Vec::new());
        b.enqueue(500_000, P::new(1500), &mut Vec::new());
        assert_eq!(b.counters()[2].1, 1);
        b.enqueue(1_500_000, P::new(1500), &mut Vec::new());
        assert_eq!((b.counters()[2].1, b.backlog_bytes()), (1, 1500));
    }
}
