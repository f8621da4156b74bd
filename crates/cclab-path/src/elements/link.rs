//! The bottleneck: a link that sends at its rate ([`Rate`]: fixed, a schedule or a trace)
//! what its queue discipline ([`Queue`]: drop-tail, CoDel, FQ-CoDel, PIE, DualPI2) hands it,
//! like an HTB class and its child qdisc on a router's egress.
//!
//! When the wire is free the link asks its queue for the next packet (an AQM drops or marks
//! there); a packet that finds the wire free and the queue empty goes on the wire at once.
//!
//! Bursts (burst admission lives here, for both backends): with a FIFO, a TSO burst, or a
//! GSO packet that the kernel lab takes whole, is admitted as if its segments had arrived
//! one by one back to back. On an idle link the first goes on the wire at once and the
//! others must fit the buffer; behind a GSO packet on the wire, its segments not yet sent
//! count as waiting. A burst that fits stays whole; one that does not is taken in segment by
//! segment (a GSO packet is split), and the segments that do not fit are dropped. An AQM
//! takes a GSO packet's segments one by one, as a router's queue sees them; a burst it drops
//! part of is broken from the first drop on.
//!
//! ECN step marking ([`Link::with_ce_threshold`], `link.ecn_threshold`): an ECN-capable
//! packet that waited longer than the threshold is marked CE as it goes on the wire, the way
//! Linux's `ce_threshold` does in fq_codel (sojourn time at dequeue), whatever the queue. A
//! full buffer still drops.

use crate::element::{Departure, Element, Packet};
use crate::elements::fifo::Fifo;
use crate::elements::rate::Rate;
use crate::queue::Queue;
use crate::Nanos;

struct InService<P> {
    pkt: P,
    enqueued: Nanos,
    start: Nanos,
    done: Nanos,
    /// The queue's sub-queue it waited in.
    sub: u8,
}

/// A rate-limited link and its queue. Rates count whole IP packets.
pub struct Link<P, Q> {
    rate: Rate,
    queue: Q,
    in_service: Option<InService<P>>,
    forwarded_pkts: u64,
    forwarded_bytes: u64,
    split: u64,
    scratch: Vec<P>,
    ce_threshold: Option<Nanos>,
    marked: u64,
}

/// Today's bottleneck: a fixed rate and a drop-tail FIFO.
pub type DropTail<P> = Link<P, Fifo<P>>;

impl<P: Packet + Send> Link<P, Fifo<P>> {
    /// A link of `rate_bps` (> 0) whose drop-tail queue holds at most `limit_bytes` waiting.
    pub fn drop_tail(rate_bps: f64, limit_bytes: u64) -> Self {
        Link::new(Rate::fixed(rate_bps), Fifo::new(limit_bytes))
    }
}

impl<P: Packet + Send, Q: Queue<P>> Link<P, Q> {
    /// A link sending at `rate` what `queue` hands it.
    pub fn new(rate: Rate, queue: Q) -> Self {
        Link {
            rate,
            queue,
            in_service: None,
            forwarded_pkts: 0,
            forwarded_bytes: 0,
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

    fn start(&mut self, now: Nanos, pkt: P, enqueued: Nanos, sub: u8) {
        let done = self.rate.finish(now, pkt.wire_len());
        self.in_service = Some(InService {
            pkt,
            enqueued,
            start: now,
            done,
            sub,
        });
    }

    /// Bytes of a GSO packet on the wire that a link sending segment by segment would still
    /// hold waiting at `now` (all but the segment being sent).
    fn on_wire_waiting(&self, now: Nanos) -> u64 {
        self.in_service
            .as_ref()
            .filter(|s| s.pkt.segments() > 1)
            .map_or(0, |s| {
                let rem = s.done.saturating_sub(now) as f64 * self.rate.bps_at(now) / 8e9;
                (rem as u64).saturating_sub(s.pkt.segment_wire_len() as u64)
            })
    }

    /// Whether a burst of `total` wire bytes whose first segment is `first` bytes fits
    /// whole, arriving at `now` (see the module docs).
    pub fn fits(&self, now: Nanos, first: u64, total: u64) -> bool {
        let limit = self.queue.limit_bytes();
        if self.in_service.is_none() {
            total.saturating_sub(first) <= limit
        } else {
            self.queue.backlog_bytes() + self.on_wire_waiting(now) + total <= limit
        }
    }

    /// One packet arrives: on the wire at once if it is free, otherwise to the queue.
    /// Returns whether it was taken in.
    fn admit(&mut self, now: Nanos, pkt: P) -> bool {
        if self.in_service.is_none() {
            let sub = self.queue.sent_at_once(&pkt);
            self.start(now, pkt, now, sub);
            return true;
        }
        let extra = self.on_wire_waiting(now);
        self.queue.enqueue(now, pkt, extra)
    }
}

impl<P: Packet + Send, Q: Queue<P>> Element<P> for Link<P, Q> {
    fn enqueue(&mut self, now: Nanos, pkt: P, _out: &mut Vec<P>) {
        if pkt.segments() > 1 {
            let whole = self.queue.takes_gso()
                && self.fits(now, pkt.segment_wire_len() as u64, pkt.wire_len() as u64);
            if !whole {
                // Taken in segment by segment: split, and drop what does not fit.
                let fifo = self.queue.takes_gso();
                self.split += 1;
                let mut segs = std::mem::take(&mut self.scratch);
                pkt.split(&mut segs);
                for mut s in segs.drain(..) {
                    if fifo {
                        s.mark_burst_broken();
                    }
                    self.admit(now, s);
                }
                self.scratch = segs;
                return;
            }
        }
        self.admit(now, pkt);
    }

    fn enqueue_burst(&mut self, now: Nanos, burst: &mut Vec<P>, out: &mut Vec<P>) -> bool {
        if !self.queue.takes_gso() {
            // An AQM: the burst is broken from its first drop on.
            let mut whole = true;
            for mut p in burst.drain(..) {
                if !whole {
                    p.mark_burst_broken();
                }
                if p.segments() > 1 {
                    self.enqueue(now, p, out);
                } else {
                    whole &= self.admit(now, p);
                }
            }
            return whole;
        }
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
        if let Some(next) = self.queue.dequeue(done) {
            // Back to back: the next one starts when this one ended (or when it arrived, if
            // it was enqueued after the link had gone idle).
            self.start(done.max(next.enqueued), next.pkt, next.enqueued, next.sub);
        }
        Some(Departure {
            at: done,
            sojourn,
            pkt: s.pkt,
            sub: s.sub,
        })
    }

    fn peek(&self) -> Option<&P> {
        self.in_service.as_ref().map(|s| &s.pkt)
    }

    fn next_event(&self) -> Option<Nanos> {
        self.in_service.as_ref().map(|s| s.done)
    }

    fn backlog_bytes(&self) -> u64 {
        self.queue.backlog_bytes()
    }

    fn queues(&self) -> bool {
        true
    }

    fn subqueues(&self) -> &'static [&'static str] {
        self.queue.subqueues()
    }

    fn start(&mut self, t0: Nanos) {
        self.rate.set_origin(t0);
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        let q = self.queue.counters();
        let aqm_marks = q
            .iter()
            .find(|(k, _)| *k == "marked_aqm")
            .map_or(0, |(_, v)| *v);
        let mut c = vec![
            ("forwarded", self.forwarded_pkts),
            ("forwarded_bytes", self.forwarded_bytes),
            ("split", self.split),
            ("marked", self.marked + aqm_marks),
        ];
        c.extend(q);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    fn deq(b: &mut DropTail<P>, now: Nanos) -> Option<Departure<P>> {
        b.dequeue(now)
    }

    fn c(b: &DropTail<P>, name: &str) -> u64 {
        b.counters()
            .into_iter()
            .find(|(k, _)| *k == name)
            .map_or(0, |(_, v)| v)
    }

    #[test]
    fn serialises_at_rate_and_drops_tail() {
        // 12 Mbit/s: a 1500-byte packet takes 1 ms.
        let mut b: DropTail<P> = DropTail::drop_tail(12e6, 3000);
        let mut out = Vec::new();
        for _ in 0..4 {
            b.enqueue(0, P::new(1500), &mut out);
        }
        assert!(out.is_empty());
        // One on the wire, two waiting (3000 bytes), the fourth dropped.
        assert_eq!(("dropped", c(&b, "dropped")), ("dropped", 1));
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
        assert_eq!(
            ("forwarded_bytes", c(&b, "forwarded_bytes")),
            ("forwarded_bytes", 4500)
        );
    }

    #[test]
    fn long_run_keeps_exact_rate() {
        // 7 Mbit/s does not divide 1500 bytes into whole ns; the carry keeps the average.
        let mut b: DropTail<P> = DropTail::drop_tail(7e6, u64::MAX);
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
        let mut b: DropTail<P> = DropTail::drop_tail(12e6, 10_000);
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
        let mut b: DropTail<P> = DropTail::drop_tail(12e6, 3000);
        let burst = |n: usize| (0..n).map(|_| P::new(1500)).collect::<Vec<_>>();
        assert!(b.enqueue_burst(0, &mut burst(3), &mut Vec::new()));
        assert_eq!(c(&b, "dropped"), 0);
        // Busy and full: the next burst of two is broken up and dropped.
        let mut b2: DropTail<P> = DropTail::drop_tail(12e6, 3000);
        assert!(b2.enqueue_burst(0, &mut burst(2), &mut Vec::new()));
        assert!(!b2.enqueue_burst(0, &mut burst(2), &mut Vec::new()));
        assert_eq!(c(&b2, "dropped"), 1, "one of the two fits the buffer");
    }

    #[test]
    fn a_gso_packet_that_does_not_fit_is_split_and_dropped_per_segment() {
        // A 4-segment GSO packet on an idle link with room for two waiting segments: split;
        // the first goes on the wire, two wait, the fourth is dropped.
        let mut b: DropTail<P> = DropTail::drop_tail(12e6, 3000);
        b.enqueue(0, P::gso(4, 1500), &mut Vec::new());
        assert_eq!(("split", c(&b, "split")), ("split", 1));
        assert_eq!(("dropped", c(&b, "dropped")), ("dropped", 1));
        assert_eq!(b.backlog_bytes(), 3000);
        // One that fits is served whole: it leaves when its last byte is sent.
        let mut b: DropTail<P> = DropTail::drop_tail(12e6, 10_000);
        b.enqueue(0, P::gso(3, 1500), &mut Vec::new());
        assert_eq!(b.next_event(), Some(3_000_000));
        // Behind it, what a segment-by-segment link would still hold counts as waiting: at
        // 0.5 ms 3750 bytes are unsent, all but one segment's worth (2250) waiting, so a
        // 3000-byte buffer has no room for another packet; at 1.5 ms 750 wait and there is.
        let mut b: DropTail<P> = DropTail::drop_tail(12e6, 3000);
        b.enqueue(0, P::gso(3, 1500), &mut Vec::new());
        b.enqueue(500_000, P::new(1500), &mut Vec::new());
        assert_eq!(c(&b, "dropped"), 1);
        b.enqueue(1_500_000, P::new(1500), &mut Vec::new());
        assert_eq!((c(&b, "dropped"), b.backlog_bytes()), (1, 1500));
    }
}
