//! Propagation delay: packets leave in the order they entered, a fixed time later. The path
//! has one delay per class (flow group: groups may add RTT with `rtt_extra`).
//!
//! Jitter ([`Delay::with_jitter`], `link.jitter`): each packet gets an extra delay drawn
//! uniform in [0, jitter] ns. Without reordering a packet never leaves before one of its
//! class that entered earlier (it waits behind it, as [`DelayLine::push_after`]); with
//! reordering (`link.reorder`) each leaves at its own time, ties in the order they entered.

use crate::element::{Departure, Element, Packet};
use crate::{Nanos, Rng};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

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
    /// The oldest item and its due time, whenever it is due.
    pub fn pop_front(&mut self) -> Option<(Nanos, T)> {
        self.q.pop_front()
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

/// A packet held for its own due time (jitter with reordering): the heap's top is the one
/// due first, and of those the one that entered first.
struct Held<P> {
    due: Nanos,
    seq: u64,
    pkt: P,
}

impl<P> PartialEq for Held<P> {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.seq) == (o.due, o.seq)
    }
}
impl<P> Eq for Held<P> {}
impl<P> PartialOrd for Held<P> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<P> Ord for Held<P> {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap.
        (o.due, o.seq).cmp(&(self.due, self.seq))
    }
}

/// A uniform draw in [0, `jitter`] ns (multiply-shift: one draw, no modulo bias to speak of).
fn draw(rng: &mut Rng, jitter: Nanos) -> Nanos {
    ((rng.next_u64() as u128 * (jitter as u128 + 1)) >> 64) as Nanos
}

/// The delay element: one [`DelayLine`] per class; a packet of a class beyond the last
/// takes the last one.
pub struct Delay<P> {
    lines: Vec<DelayLine<P>>,
    /// The line whose head is due first, and when (kept up to date: asked for often).
    /// `None` when the lines are empty (always, with jitter that reorders).
    head: Option<(Nanos, usize)>,
    forwarded: u64,
    /// Jitter (> 0): the largest extra delay, and the stream it is drawn from.
    jitter: Option<(Nanos, Rng)>,
    /// Jitter reorders: packets are held in `heap` instead of the lines.
    reorder: bool,
    heap: BinaryHeap<Held<P>>,
    /// Packets entered so far (ties in the heap go in entry order).
    seq: u64,
}

impl<P> Delay<P> {
    /// Random extra delay of each packet, uniform in [0, `jitter`] ns, drawn from `rng` (one
    /// draw per packet); packets keep their order within a class unless `reorder`, when
    /// each leaves at its own time. With `jitter` 0 nothing changes and nothing is drawn.
    pub fn with_jitter(mut self, jitter: Nanos, reorder: bool, rng: Rng) -> Self {
        if jitter > 0 {
            self.jitter = Some((jitter, rng));
            self.reorder = reorder;
        }
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
            jitter: None,
            reorder: false,
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// The line whose head is due first (the lowest class on a tie), and when.
    fn first(&self) -> Option<(Nanos, usize)> {
        // One class (most paths): its head, without the scan.
        if let [only] = &self.lines[..] {
            return only.next_due().map(|t| (t, 0));
        }
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

    /// A line became non-empty with its head due at `due`.
    fn line_started(&mut self, due: Nanos, c: usize) {
        if self
            .head
            .is_none_or(|(t, i)| due < t || (due == t && c < i))
        {
            self.head = Some((due, c));
        }
    }

    /// A packet of line `c` enters at `now` with jitter.
    fn enqueue_jittered(&mut self, now: Nanos, c: usize, pkt: P) {
        let Some((jitter, rng)) = &mut self.jitter else {
            return;
        };
        let extra = draw(rng, *jitter);
        if self.reorder {
            let due = now + self.lines[c].delay() + extra;
            self.heap.push(Held {
                due,
                seq: self.seq,
                pkt,
            });
            self.seq += 1;
            return;
        }
        let line = &mut self.lines[c];
        line.push_after(now, extra, pkt);
        if line.len() == 1 {
            let due = now + line.delay() + extra;
            self.line_started(due, c);
        }
    }

    /// The packet held for its own time that is due first, if due at `now`.
    fn dequeue_held(&mut self, now: Nanos) -> Option<Departure<P>> {
        if self.heap.peek()?.due > now {
            return None;
        }
        let h = self.heap.pop()?;
        self.forwarded += 1;
        Some(Departure {
            at: h.due,
            pkt: h.pkt,
            sojourn: 0,
            sub: 0,
        })
    }
}

impl<P: Packet + Send> Element<P> for Delay<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, _out: &mut Vec<P>) {
        let c = pkt.class().min(self.lines.len() - 1);
        if self.jitter.is_some() {
            self.enqueue_jittered(now, c, pkt);
            return;
        }
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
        let Some((due, i)) = self.head else {
            return self.dequeue_held(now);
        };
        if due > now {
            return None;
        }
        // (`due <= now` is the head of line `i`, so the pop takes it.)
        let (at, pkt) = self.lines[i].pop_front()?;
        self.head = self.first();
        self.forwarded += 1;
        Some(Departure {
            at,
            pkt,
            sojourn: 0,
            sub: 0,
        })
    }

    fn min_transit(&self) -> Nanos {
        // Jitter only adds.
        self.lines.iter().map(|l| l.delay()).min().unwrap_or(0)
    }

    fn peek(&self) -> Option<&P> {
        match self.head {
            Some((_, i)) => self.lines[i].front(),
            None => self.heap.peek().map(|h| &h.pkt),
        }
    }

    fn next_event(&self) -> Option<Nanos> {
        match self.head {
            Some((t, _)) => Some(t),
            None => self.heap.peek().map(|h| h.due),
        }
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

    fn pkt(id: u32, class: usize) -> P {
        P {
            class,
            ..P::new(id)
        }
    }

    /// Everything `d` holds, taken out one at a time at its next event: (time, id, class).
    /// Checks that `next_event` and `peek` announce each departure, and that nothing leaves
    /// before its time.
    fn drain(d: &mut Delay<P>) -> Vec<(Nanos, u32, usize)> {
        let mut out = Vec::new();
        while let Some(t) = d.next_event() {
            assert!(d.dequeue(t - 1).is_none(), "nothing leaves before its time");
            let next = d.peek().cloned();
            let x = d.dequeue(t).expect("due at its next event");
            assert_eq!(x.at, t);
            assert_eq!(Some(&x.pkt), next.as_ref());
            out.push((x.at, x.pkt.wire, x.pkt.class));
        }
        assert!(d.peek().is_none() && d.dequeue(u64::MAX).is_none());
        out
    }

    /// Packet `i` enters at `i * gap` in class `i % classes`.
    fn feed(d: &mut Delay<P>, n: u32, gap: Nanos, classes: usize) {
        for i in 0..n {
            d.enqueue(
                i as Nanos * gap,
                pkt(i, i as usize % classes),
                &mut Vec::new(),
            );
        }
    }

    #[test]
    fn jitter_adds_half_its_span_on_average() {
        let (n, jitter) = (100_000u32, 100_000);
        let mut d = Delay::new(&[1_000_000]).with_jitter(jitter, true, Rng::new(7));
        feed(&mut d, n, 10_000, 1);
        let extra: Vec<Nanos> = drain(&mut d)
            .iter()
            .map(|&(at, id, _)| at - id as Nanos * 10_000 - 1_000_000)
            .collect();
        assert_eq!(extra.len(), n as usize);
        let mean = extra.iter().sum::<u64>() as f64 / n as f64;
        // The mean of 1e5 draws of U[0, 100 us] is 50 us +- 0.09 us (one sd).
        assert!((mean - 50_000.0).abs() < 500.0, "{mean}");
        let (lo, hi) = (extra.iter().min().unwrap(), extra.iter().max().unwrap());
        assert!(
            *lo < 100 && *hi > jitter - 100 && *hi <= jitter,
            "{lo} {hi}"
        );
    }

    #[test]
    fn without_reorder_jitter_keeps_each_class_in_order() {
        // Two classes (10 ms and 30 ms), a packet every 100 us, jitter up to 1 ms: each
        // leaves at its own time or with the one ahead of it in its class, whichever is later.
        let (delays, jitter) = ([10_000_000, 30_000_000], 1_000_000);
        let mut d = Delay::new(&delays).with_jitter(jitter, false, Rng::new(11));
        feed(&mut d, 10_000, 100_000, 2);
        let out = drain(&mut d);
        let mut rng = Rng::new(11);
        let mut last = [0; 2];
        let mut held = 0;
        let expect: Vec<(Nanos, u32, usize)> = (0..10_000u32)
            .map(|i| {
                let c = i as usize % 2;
                let own = i as Nanos * 100_000 + delays[c] + draw(&mut rng, jitter);
                held += (own < last[c]) as u32;
                last[c] = own.max(last[c]);
                (last[c], i, c)
            })
            .collect();
        assert!(
            held > 1000,
            "jitter of 10 gaps holds many packets up: {held}"
        );
        for c in 0..2 {
            let got: Vec<_> = out.iter().filter(|x| x.2 == c).collect();
            let want: Vec<_> = expect.iter().filter(|x| x.2 == c).collect();
            assert_eq!(got, want, "class {c}: entry order, times as expected");
        }
        // Across classes, by time.
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn with_reorder_each_packet_leaves_at_its_own_time() {
        let (delays, jitter) = ([10_000_000, 30_000_000], 1_000_000);
        let mut d = Delay::new(&delays).with_jitter(jitter, true, Rng::new(11));
        feed(&mut d, 10_000, 100_000, 2);
        let out = drain(&mut d);
        let mut rng = Rng::new(11);
        let mut expect: Vec<(Nanos, u32, usize)> = (0..10_000u32)
            .map(|i| {
                let c = i as usize % 2;
                (
                    i as Nanos * 100_000 + delays[c] + draw(&mut rng, jitter),
                    i,
                    c,
                )
            })
            .collect();
        expect.sort_by_key(|&(t, i, _)| (t, i));
        assert_eq!(out, expect);
        let reordered = (0..2)
            .map(|c| {
                let ids: Vec<u32> = out.iter().filter(|x| x.2 == c).map(|x| x.1).collect();
                ids.windows(2).filter(|w| w[1] < w[0]).count()
            })
            .sum::<usize>();
        assert!(reordered > 1000, "{reordered}");
        // Ties leave in the order they entered: 1000 packets at once, jitter of 0..=2 ns.
        let mut d = Delay::new(&[50]).with_jitter(2, true, Rng::new(5));
        for i in 0..1000 {
            d.enqueue(7, pkt(i, 0), &mut Vec::new());
        }
        let out = drain(&mut d);
        let times: Vec<Nanos> = out.iter().map(|x| x.0).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert!((57..=59).all(|t| times.contains(&t)));
        for w in out.windows(2).filter(|w| w[0].0 == w[1].0) {
            assert!(w[0].1 < w[1].1, "{w:?}");
        }
    }

    #[test]
    fn no_jitter_is_exactly_the_plain_delay() {
        // Packets in three classes, dequeued at random times along the way: the same
        // departures, with or without a jitter of 0, reordering or not.
        let run = |d: &mut Delay<P>| {
            let mut rng = Rng::new(2);
            let mut now = 0;
            let mut out = Vec::new();
            for i in 0..20_000u32 {
                now += rng.next_u64() % 20_000;
                let c = (rng.next_u64() % 4) as usize;
                if rng.chance(0.3) {
                    while let Some(x) = d.dequeue(now) {
                        out.push((x.at, x.pkt.wire, d.next_event()));
                    }
                }
                d.enqueue(now, pkt(i, c), &mut Vec::new());
            }
            out.extend(drain(d).into_iter().map(|x| (x.0, x.1, None)));
            out
        };
        let delays = [1_000_000, 300_000, 2_000_000];
        let plain = run(&mut Delay::new(&delays));
        assert_eq!(plain.len(), 20_000);
        for reorder in [false, true] {
            let mut d = Delay::new(&delays).with_jitter(0, reorder, Rng::new(1));
            assert_eq!(run(&mut d), plain);
        }
    }
}
