//! A path direction: elements one after the other, each packet leaving one entering the
//! next at the moment it left.

use crate::element::{Departure, Element, Packet};
use crate::Nanos;
use std::collections::{BTreeMap, VecDeque};

/// An element's cached next event when it holds nothing. (No event is ever due then, so an
/// element holding a packet due at `Nanos::MAX` is the same to the chain.)
const NONE: Nanos = Nanos::MAX;

/// Called for every packet leaving an element: the element's position and name, and the
/// departure (backends record the bottleneck's queueing delays and forwarded bytes here).
pub type Observer<'a, P> = dyn FnMut(usize, &Departure<P>) + 'a;

/// A chain of elements. Packets enter at the first ([`Chain::enqueue`],
/// [`Chain::enqueue_burst`]); the caller advances time with [`Chain::pump`] at
/// [`Chain::next_event`] and takes what left the last element from [`Chain::pop_output`].
pub struct Chain<P> {
    names: Vec<&'static str>,
    els: Vec<Box<dyn Element<P>>>,
    /// Each element's [`Element::min_transit`].
    transit: Vec<Nanos>,
    /// Each element's [`Element::next_event`], [`NONE`] for none, read again after every call
    /// that may change it (an element's state changes only through the chain, and its next
    /// event is a function of its state): the chain skips the elements with nothing due
    /// without a call, and finds its next output in a scan of numbers.
    next: Vec<Nanos>,
    out: VecDeque<(Nanos, P)>,
    /// Bit `j` set: departures from element `j` go to the observer (elements from 64 on
    /// always do). All by default; see [`Chain::observe_only`].
    observed: u64,
    /// Buffers for what pass-through elements hand on, one per depth of the recursion.
    pool: Vec<Vec<P>>,
}

impl<P: Packet> Default for Chain<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Packet> Chain<P> {
    pub fn new() -> Self {
        Chain {
            names: Vec::new(),
            els: Vec::new(),
            transit: Vec::new(),
            next: Vec::new(),
            out: VecDeque::new(),
            observed: u64::MAX,
            pool: Vec::new(),
        }
    }

    /// Append an element called `name` (unique within the chain).
    pub fn push(&mut self, name: &'static str, el: Box<dyn Element<P>>) {
        self.names.push(name);
        self.transit.push(el.min_transit());
        self.next.push(el.next_event().unwrap_or(NONE));
        self.els.push(el);
    }

    /// Read element `j`'s next event again, after a call that may have changed it.
    #[inline(always)]
    fn refresh(&mut self, j: usize) {
        self.next[j] = self.els[j].next_event().unwrap_or(NONE);
    }

    /// The run's time zero is `t0` in the caller's clock (see [`Element::start`]).
    pub fn start(&mut self, t0: Nanos) {
        for e in &mut self.els {
            e.start(t0);
        }
        for j in 0..self.els.len() {
            self.refresh(j);
        }
    }

    /// Positions of the elements that queue packets ([`Element::queues`]).
    pub fn queue_positions(&self) -> Vec<usize> {
        (0..self.els.len())
            .filter(|&j| self.els[j].queues())
            .collect()
    }

    /// The sub-queues of the element at position `j` ([`Element::subqueues`]): none unless
    /// its queue has several.
    pub fn subqueues(&self, j: usize) -> &'static [&'static str] {
        self.els[j].subqueues()
    }

    /// Call the observer only for departures from the elements at `positions` (by default
    /// it sees every element's; an element from position 64 on is always observed). A
    /// caller that records only some elements (the simulator: the queues and the
    /// bottleneck) saves an indirect call per packet and element.
    pub fn observe_only(&mut self, positions: &[usize]) {
        self.observed = positions
            .iter()
            .fold(0, |m, &j| m | 1u64.checked_shl(j as u32).unwrap_or(0));
    }

    /// Whether departures from element `j` go to the observer.
    #[inline(always)]
    fn is_observed(&self, j: usize) -> bool {
        j >= 64 || self.observed >> j & 1 != 0
    }

    /// Position of the element called `name`.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| *n == name)
    }

    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// A packet enters the path at `now`.
    pub fn enqueue(&mut self, now: Nanos, pkt: P, obs: &mut Observer<'_, P>) {
        self.offer(0, now, pkt, obs);
    }

    /// A TSO burst enters the path at `now`, its packets back to back. Returns whether it
    /// stayed whole through every element; if not, every packet of it that is left has been
    /// marked ([`Packet::mark_burst_broken`]).
    pub fn enqueue_burst(
        &mut self,
        now: Nanos,
        burst: &mut Vec<P>,
        obs: &mut Observer<'_, P>,
    ) -> bool {
        let mut whole = true;
        // The burst moves through buffers of the chain's own; one of them goes back to the
        // caller in its place, so a sender's buffer keeps its capacity from burst to burst.
        let mut cur = std::mem::replace(burst, self.pool.pop().unwrap_or_default());
        for j in 0..self.els.len() {
            if cur.is_empty() {
                break;
            }
            if !whole {
                cur.iter_mut().for_each(P::mark_burst_broken);
            }
            self.advance(j, now, obs);
            let mut pass = self.pool.pop().unwrap_or_default();
            whole &= self.els[j].enqueue_burst(now, &mut cur, &mut pass);
            self.refresh(j);
            self.pool.push(std::mem::replace(&mut cur, pass));
        }
        if !whole {
            cur.iter_mut().for_each(P::mark_burst_broken);
        }
        self.out.extend(cur.drain(..).map(|p| (now, p)));
        self.pool.push(cur);
        whole
    }

    /// Move every packet due by `now` on to the next element, at the time it left; what
    /// leaves the last element goes to the output.
    #[inline]
    pub fn pump(&mut self, now: Nanos, obs: &mut Observer<'_, P>) {
        for j in 0..self.els.len() {
            self.advance(j, now, obs);
        }
    }

    /// When the chain next has something to do: a packet due to leave an element, or one
    /// that has left the path and waits in the output (its time may be now); `None` when it
    /// holds nothing.
    pub fn next_event(&self) -> Option<Nanos> {
        let out = self.out.front().map_or(NONE, |&(t, _)| t);
        let t = self.next.iter().copied().fold(out, Nanos::min);
        (t != NONE).then_some(t)
    }

    /// The earliest a packet can leave the path (or one that has left waits in the output),
    /// counting only what the chain holds: a lower bound, `None` when it holds nothing.
    ///
    /// A caller that only needs what leaves the path may wake at this time instead of at
    /// [`Self::next_event`]: packets moving between elements meanwhile move at their own
    /// times when the chain is next pumped or entered, as elements take time as an
    /// argument. What leaves an element earlier than its `next_event` is impossible, and
    /// what an element holds leaves the elements after it no sooner than their
    /// [`Element::min_transit`] later. A caller that reads the elements' state (backlog,
    /// counters, the observer's records) pumps the chain to its time first.
    pub fn next_output(&self) -> Option<Nanos> {
        // (A bound of NONE stays NONE through the saturating sums.)
        let mut bound = NONE;
        for (&next, &transit) in self.next.iter().zip(&self.transit) {
            bound = bound.saturating_add(transit).min(next);
        }
        let t = self.out.front().map_or(bound, |&(t, _)| bound.min(t));
        (t != NONE).then_some(t)
    }

    /// The next packet that left the path, with the time it left.
    pub fn pop_output(&mut self) -> Option<(Nanos, P)> {
        self.out.pop_front()
    }

    /// Bytes waiting in the chain's queues.
    pub fn backlog_bytes(&self) -> u64 {
        self.els.iter().map(|e| e.backlog_bytes()).sum()
    }

    /// One counter of one element (0 if either is unknown).
    pub fn counter(&self, element: &str, counter: &str) -> u64 {
        self.position(element)
            .and_then(|i| {
                self.els[i]
                    .counters()
                    .into_iter()
                    .find(|(n, _)| *n == counter)
            })
            .map_or(0, |(_, v)| v)
    }

    /// Every element's counters, keyed `"{prefix}{name}"`.
    pub fn counters(&self, prefix: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
        self.names
            .iter()
            .zip(&self.els)
            .map(|(n, e)| {
                (
                    format!("{prefix}{n}"),
                    e.counters()
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                )
            })
            .collect()
    }

    /// `pkt` left element `j - 1` at `t`: into element `j`, or out of the path after the
    /// last. (Inlined so that the last element's departures, one per packet, go to the
    /// output without a call of the recursive [`Self::offer`].)
    #[inline(always)]
    fn hand_on(&mut self, j: usize, t: Nanos, pkt: P, obs: &mut Observer<'_, P>) {
        if j == self.els.len() {
            self.out.push_back((t, pkt));
        } else {
            self.offer(j, t, pkt, obs);
        }
    }

    /// `pkt` reaches element `j` at `t` (after what that element had due before `t` left).
    fn offer(&mut self, j: usize, t: Nanos, pkt: P, obs: &mut Observer<'_, P>) {
        if j == self.els.len() {
            self.out.push_back((t, pkt));
            return;
        }
        self.advance(j, t, obs);
        let mut pass = self.pool.pop().unwrap_or_default();
        self.els[j].enqueue(t, pkt, &mut pass);
        self.refresh(j);
        if !pass.is_empty() {
            self.pass_on(j + 1, t, &mut pass, obs);
        }
        self.pool.push(pass);
    }

    /// What a pass-through element handed on at `t` enters element `j`. Out of line: most
    /// elements hold what they take, and [`Self::offer`] stays small without this loop.
    #[inline(never)]
    fn pass_on(&mut self, j: usize, t: Nanos, pass: &mut Vec<P>, obs: &mut Observer<'_, P>) {
        for p in pass.drain(..) {
            self.hand_on(j, t, p, obs);
        }
    }

    /// Everything element `j` has due by `t` moves on, in time order.
    #[inline(always)]
    fn advance(&mut self, j: usize, t: Nanos, obs: &mut Observer<'_, P>) {
        while self.next[j] <= t {
            let d = self.els[j].dequeue(t);
            self.refresh(j);
            let Some(d) = d else { break };
            if self.is_observed(j) {
                obs(j, &d);
            }
            self.hand_on(j + 1, d.at, d.pkt, obs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::{Delay, DropTail, RandomLoss};
    use crate::testing::P;
    use crate::Rng;

    fn path() -> Chain<P> {
        let mut c = Chain::new();
        c.push("loss", Box::new(RandomLoss::bernoulli(0.0, Rng::new(1))));
        c.push("queue", Box::new(DropTail::drop_tail(12e6, 3000)));
        c.push("delay", Box::new(Delay::new(&[10_000_000])));
        c
    }

    #[test]
    fn packets_cross_each_element_at_the_time_they_leave_the_one_before() {
        let mut c = path();
        let mut seen = Vec::new();
        let mut obs = |j: usize, d: &Departure<P>| seen.push((j, d.at, d.sojourn));
        for _ in 0..3 {
            c.enqueue(0, P::new(1500), &mut obs);
        }
        assert_eq!(c.next_event(), Some(1_000_000));
        // Pumping late still moves each packet at its own time.
        c.pump(50_000_000, &mut obs);
        let out: Vec<Nanos> = std::iter::from_fn(|| c.pop_output().map(|(t, _)| t)).collect();
        assert_eq!(out, vec![11_000_000, 12_000_000, 13_000_000]);
        assert_eq!(
            seen,
            [
                (1, 1_000_000, 0),
                (1, 2_000_000, 1_000_000),
                (1, 3_000_000, 2_000_000),
                (2, 11_000_000, 0),
                (2, 12_000_000, 0),
                (2, 13_000_000, 0)
            ]
        );
        assert_eq!(c.counter("queue", "forwarded"), 3);
        assert_eq!(c.counters("data.")["data.queue"]["forwarded_bytes"], 4500);
        assert_eq!(c.next_event(), None);
    }

    #[test]
    fn the_observer_sees_only_the_elements_it_asked_for() {
        let run = |only: Option<&[usize]>| {
            let mut c = path();
            if let Some(p) = only {
                c.observe_only(p);
            }
            let mut seen = Vec::new();
            let mut obs = |j: usize, d: &Departure<P>| seen.push((j, d.at));
            for _ in 0..2 {
                c.enqueue(0, P::new(1500), &mut obs);
            }
            c.pump(50_000_000, &mut obs);
            let out: Vec<Nanos> = std::iter::from_fn(|| c.pop_output().map(|(t, _)| t)).collect();
            (seen, out)
        };
        let (all, out) = run(None);
        assert_eq!(all.len(), 4);
        let (queue, out_q) = run(Some(&[1]));
        assert_eq!(queue, [(1, 1_000_000), (1, 2_000_000)]);
        // What leaves the path does not depend on who watches.
        assert_eq!(out_q, out);
        assert!(run(Some(&[])).0.is_empty());
    }

    #[test]
    fn the_next_output_is_when_the_first_packet_can_leave_the_path() {
        let mut c = path();
        let mut obs = |_: usize, _: &Departure<P>| {};
        assert_eq!(c.next_output(), None);
        for _ in 0..3 {
            c.enqueue(0, P::new(1500), &mut obs);
        }
        // The queue's first departure is at 1 ms, and nothing leaves the 10 ms delay sooner
        // than 10 ms after it entered: exactly when the first packet leaves the path.
        assert_eq!(c.next_event(), Some(1_000_000));
        assert_eq!(c.next_output(), Some(11_000_000));
        // Woken then, the chain moves the queue's departures at their own times on the way.
        c.pump(11_000_000, &mut obs);
        assert_eq!(c.pop_output().map(|(t, _)| t), Some(11_000_000));
        assert_eq!(c.pop_output(), None);
        assert_eq!(c.counter("queue", "forwarded"), 3);
        assert_eq!(c.next_output(), Some(12_000_000));
        // A packet entering a pass-through element at the end leaves at once.
        let mut bare: Chain<P> = Chain::new();
        bare.push("loss", Box::new(RandomLoss::bernoulli(0.0, Rng::new(1))));
        bare.enqueue(5, P::new(100), &mut obs);
        assert_eq!(bare.next_output(), Some(5));
    }

    #[test]
    fn an_arrival_sees_the_queue_as_it_is_at_its_time() {
        // Buffer of two: at t = 2.5 ms two of the first four have left, so the fifth fits.
        let mut c = path();
        let mut obs = |_: usize, _: &Departure<P>| {};
        for _ in 0..4 {
            c.enqueue(0, P::new(1500), &mut obs);
        }
        assert_eq!(c.counter("queue", "dropped"), 1);
        c.enqueue(2_500_000, P::new(1500), &mut obs);
        assert_eq!(c.counter("queue", "dropped"), 1);
    }

    #[test]
    fn a_burst_is_whole_unless_an_element_breaks_it() {
        let mut c = path();
        let mut obs = |_: usize, _: &Departure<P>| {};
        assert!(c.enqueue_burst(0, &mut vec![P::new(1500); 3], &mut obs));
        assert!(
            !c.enqueue_burst(0, &mut vec![P::new(1500); 2], &mut obs),
            "the buffer is full"
        );
        c.pump(u64::MAX / 2, &mut obs);
        let out: Vec<P> = std::iter::from_fn(|| c.pop_output().map(|(_, p)| p)).collect();
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|p| !p.broken));
    }
}
