//! Propagation delay: packets leave in the order they entered, a fixed time later. The path
//! has one delay per class (flow group: groups may add RTT with `rtt_extra`).

use crate::element::{Departure, Element, Packet};
use crate::Nanos;
use std::collections::VecDeque;

/// A fixed delay: items leave in the order they entered, `delay` later.
#[derive(Clone, Debug)]
pub struct DelayLine<T> {
    delay: Nanos,
    q: VecDeque<(Nanos, T)>,
}

impl<T> DelayLine<T> {
    pub fn new(delay: Nanos) -> Self {
        DelayLine {
            delay,
            q: VecDeque::new(),
        }
    }
    pub fn delay(&self) -> Nanos {
        self.delay
    }
    pub fn push(&mut self, now: Nanos, item: T) {
        self.q.push_back((now + self.delay, item));
    }
    /// Enter `item` now, to leave `extra` later than the line's delay, but never before
    /// what entered earlier (a host that is slow to handle one packet holds up the next).
    pub fn push_after(&mut self, now: Nanos, extra: Nanos, item: T) {
        let due = now + self.delay + extra;
        let due = self.q.back().map_or(due, |&(last, _)| due.max(last));
        self.q.push_back((due, item));
    }
    /// When the oldest item is due.
    pub fn next_due(&self) -> Option<Nanos> {
        self.q.front().map(|&(t, _)| t)
    }
    /// The oldest item and its due time, if due at `now`.
    pub fn pop_due(&mut self, now: Nanos) -> Option<(Nanos, T)> {
        match self.q.front() {
            Some(&(t, _)) if t <= now => self.q.pop_front(),
            _ => None,
        }
    }
    pub fn front(&self) -> Option<&T> {
        self.q.front().map(|(_, x)| x)
    }
    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

/// The delay element: one [`DelayLine`] per class; a packet of a class beyond the last
/// takes the last one.
pub struct Delay<P> {
    lines: Vec<DelayLine<P>>,
    /// The line whose head is due first, and when (kept up to date: asked for often).
    head: Option<(Nanos, usize)>,
    forwarded: u64,
}

impl<P> Delay<P> {
    /// Random extra delay of each packet, uniform in [0, `jitter`] ns, drawn from `rng`;
    /// packets keep their order unless `reorder`.
    ///
    /// PLACEHOLDER: jitter is not applied yet.
    pub fn with_jitter(self, jitter: Nanos, reorder: bool, rng: crate::Rng) -> Self {
        let _ = (jitter, reorder, rng);
        self
    }

    /// One line per class, with these one-way delays (at least one).
    pub fn new(delays: &[Nanos]) -> Self {
        let lines = if delays.is_empty() {
            vec![DelayLine::new(0)]
        } else {
            delays.iter().map(|&d| DelayLine::new(d)).collect()
        };
        Delay {
            lines,
            head: None,
            forwarded: 0,
        }
    }

    /// The line whose head is due first (the lowest class on a tie), and when.
    fn first(&self) -> Option<(Nanos, usize)> {
        let mut best: Option<(Nanos, usize)> = None;
        for (i, l) in self.lines.iter().enumerate() {
            if let Some(t) = l.next_due() {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, i));
                }
            }
        }
        best
    }
}

impl<P: Packet + Send> Element<P> for Delay<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, _out: &mut Vec<P>) {
        let c = pkt.class().min(self.lines.len() - 1);
        let due = now + self.lines[c].delay();
        self.lines[c].push(now, pkt);
        // A line's head changes only when the line was empty, and then the earliest head can
        // only move earlier.
        let first_of_line = self.lines[c].len() == 1;
        if first_of_line
            && self
                .head
                .is_none_or(|(t, i)| due < t || (due == t && c < i))
        {
            self.head = Some((due, c));
        }
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Departure<P>> {
        let (due, i) = self.head?;
        if due > now {
            return None;
        }
        let (at, pkt) = self.lines[i].pop_due(now)?;
        self.head = self.first();
        self.forwarded += 1;
        Some(Departure {
            at,
            pkt,
            sojourn: 0,
        })
    }

    fn peek(&self) -> Option<&P> {
        self.head.and_then(|(_, i)| self.lines[i].front())
    }

    fn next_event(&self) -> Option<Nanos> {
        self.head.map(|(t, _)| t)
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("forwarded", self.forwarded)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    #[test]
    fn a_late_item_holds_up_the_ones_behind_it() {
        let mut d = DelayLine::new(100);
        d.push_after(0, 50, 'a'); // due 150
        d.push_after(10, 0, 'b'); // due 110, but not before 'a'
        d.push_after(20, 5, 'c'); // due 125 -> 150
        d.push_after(200, 0, 'd'); // due 300
        assert_eq!(d.next_due(), Some(150));
        assert_eq!(d.pop_due(149), None);
        let out: Vec<char> = std::iter::from_fn(|| d.pop_due(150).map(|(_, x)| x)).collect();
        assert_eq!(
            out,
            vec!['a', 'b', 'c'],
            "the train leaves together, in order"
        );
        assert_eq!(d.next_due(), Some(300));
    }

    #[test]
    fn each_class_has_its_delay_and_packets_leave_in_time_order() {
        let mut d = Delay::new(&[100, 30]);
        let mut out = Vec::new();
        d.enqueue(
            0,
            P {
                class: 0,
                ..P::new(1)
            },
            &mut out,
        );
        d.enqueue(
            10,
            P {
                class: 1,
                ..P::new(2)
            },
            &mut out,
        );
        d.enqueue(
            20,
            P {
                class: 5,
                ..P::new(3)
            },
            &mut out,
        ); // beyond the last: class 1
        assert!(out.is_empty());
        assert_eq!(d.next_event(), Some(40));
        let order: Vec<(Nanos, u32)> =
            std::iter::from_fn(|| d.dequeue(1_000).map(|x| (x.at, x.pkt.wire))).collect();
        assert_eq!(order, vec![(40, 2), (50, 3), (100, 1)]);
    }
}
