//! ACK aggregation (`link.ack_aggregation`): ACKs are held and released in bursts once per
//! period, as Wi-Fi block ACKs and DOCSIS request-grant cycles deliver them.
//!
//! What enters is held until the next multiple of the period after time zero
//! ([`Element::start`]), then everything held leaves at once, in the order it entered. One
//! arriving exactly on a boundary waits for the next. Control packets that random loss
//! spares ([`Packet::loss_exempt`]: SYN, FIN, RST) pass at once. It is not a congestion
//! queue ([`Element::queues`] is false), though its departures carry the time held as
//! sojourn.

use crate::element::{Departure, Element, Packet};
use crate::Nanos;
use std::collections::VecDeque;

/// The aggregation element.
pub struct AckAggregation<P> {
    period: Nanos,
    t0: Nanos,
    /// Held packets in entry order: (release time, arrival time, packet).
    held: VecDeque<(Nanos, Nanos, P)>,
    forwarded: u64,
}

impl<P> AckAggregation<P> {
    /// Releases what it holds at every multiple of `period` (> 0) from time zero.
    pub fn new(period: Nanos) -> Self {
        assert!(period > 0, "ACK aggregation needs a period above 0");
        AckAggregation {
            period,
            t0: 0,
            held: VecDeque::new(),
            forwarded: 0,
        }
    }

    /// The first boundary strictly after `now`.
    fn next_boundary(&self, now: Nanos) -> Nanos {
        if now < self.t0 {
            return self.t0;
        }
        let k = (now - self.t0) / self.period + 1;
        self.t0.saturating_add(k.saturating_mul(self.period))
    }
}

impl<P: Packet + Send> Element<P> for AckAggregation<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, out: &mut Vec<P>) {
        if pkt.loss_exempt() {
            self.forwarded += 1;
            out.push(pkt);
            return;
        }
        let at = self.next_boundary(now);
        self.held.push_back((at, now, pkt));
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Departure<P>> {
        match self.held.front() {
            Some(&(at, _, _)) if at <= now => {
                let (at, arrived, pkt) = self.held.pop_front()?;
                self.forwarded += 1;
                Some(Departure {
                    at,
                    pkt,
                    sojourn: at - arrived,
                    sub: 0,
                })
            }
            _ => None,
        }
    }

    fn peek(&self) -> Option<&P> {
        self.held.front().map(|(_, _, p)| p)
    }

    fn next_event(&self) -> Option<Nanos> {
        self.held.front().map(|&(at, _, _)| at)
    }

    fn start(&mut self, t0: Nanos) {
        self.t0 = t0;
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("forwarded", self.forwarded)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    fn ack(id: u32) -> P {
        P::new(id)
    }

    fn forwarded(a: &AckAggregation<P>) -> u64 {
        Element::<P>::counters(a)[0].1
    }

    #[test]
    fn releases_everything_held_at_each_boundary_in_order() {
        // Period 10 ms from time zero at 3 ms: boundaries 13, 23, 33 ms...
        let ms = 1_000_000;
        let mut a = AckAggregation::new(10 * ms);
        Element::<P>::start(&mut a, 3 * ms);
        let mut out = Vec::new();
        a.enqueue(3 * ms, ack(1), &mut out); // on a boundary: waits for the next
        a.enqueue(5 * ms, ack(2), &mut out);
        a.enqueue(13 * ms - 1, ack(3), &mut out);
        assert!(out.is_empty());
        assert!(!Element::<P>::queues(&a));
        assert_eq!(a.next_event(), Some(13 * ms));
        assert_eq!(a.peek().map(|p| p.wire), Some(1));
        assert!(a.dequeue(13 * ms - 1).is_none());
        let take = |a: &mut AckAggregation<P>, now| {
            std::iter::from_fn(|| a.dequeue(now).map(|d| (d.at, d.pkt.wire, d.sojourn)))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            take(&mut a, 13 * ms),
            [(13 * ms, 1, 10 * ms), (13 * ms, 2, 8 * ms), (13 * ms, 3, 1)]
        );
        assert_eq!(a.next_event(), None);
        // At the boundary itself: the next one. Taken out late: still at the boundary.
        a.enqueue(13 * ms, ack(4), &mut out);
        a.enqueue(20 * ms, ack(5), &mut out);
        a.enqueue(23 * ms + 1, ack(6), &mut out);
        assert_eq!(
            take(&mut a, 50 * ms),
            [
                (23 * ms, 4, 10 * ms),
                (23 * ms, 5, 3 * ms),
                (33 * ms, 6, 10 * ms - 1)
            ]
        );
        assert_eq!(forwarded(&a), 6);
        // Without a start, boundaries are the multiples of the period.
        let mut a = AckAggregation::new(4);
        a.enqueue(0, ack(1), &mut out);
        a.enqueue(5, ack(2), &mut out);
        assert_eq!(take(&mut a, 100), [(4, 1, 4), (8, 2, 3)]);
    }

    #[test]
    fn control_packets_pass_at_once() {
        let mut a = AckAggregation::new(10);
        let mut out = Vec::new();
        a.enqueue(1, ack(1), &mut out);
        a.enqueue(
            2,
            P {
                control: true,
                ..ack(2)
            },
            &mut out,
        );
        assert_eq!(out.iter().map(|p| p.wire).collect::<Vec<_>>(), [2]);
        assert_eq!(a.dequeue(10).map(|d| d.pkt.wire), Some(1));
        assert_eq!(forwarded(&a), 2);
    }
}
