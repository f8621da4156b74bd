//! The event queue: one pending time per component ("slot").
//!
//! Every component of the simulation (the path, each flow's sender and receiver, ...) has at
//! most one pending event, and components move theirs all the time: a sender re-arms its
//! loss-probe timer on every ACK, always a little later. A plain binary heap with lazy
//! deletion would take one entry per re-arm and pop them all as stale ones. Here, as with
//! kernel timers that are pushed back, moving a pending time *later* costs nothing: the
//! entry already in the heap fires first, finds its slot's time has moved, and goes back in
//! at the new time. Only an *earlier* time adds an entry. The heap thus holds about one
//! entry per slot, and events come out in (time, slot) order, exactly as if every change had
//! been pushed.
//!
//! With a handful of slots (a run of one or two flows) a heap costs more than it saves: the
//! next event is then found by scanning every slot's pending time, in slot order so ties
//! still go to the lower slot. The pending times are stored as plain numbers, [`NEVER`] for
//! none, so that scan is a minimum over a few integers.

use cclab_core::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Slots up to which the next event is found by a scan rather than the heap.
const SCAN_SLOTS: usize = 16;

/// A slot's pending time when nothing is pending. (No event is ever due then: a run ends
/// long before, so `Some(NEVER)` and `None` are the same to [`Timers::set`].)
const NEVER: Nanos = Nanos::MAX;

pub(crate) struct Timers {
    /// Entries as one number, time in the high 64 bits and slot in the low: ordered as
    /// (time, slot), compared in one step.
    heap: BinaryHeap<Reverse<u128>>,
    /// Each slot's pending time, [`NEVER`] for none.
    due: Vec<Nanos>,
    /// Each slot's earliest entry in the heap (the others are stale).
    queued: Vec<Option<Nanos>>,
    /// Few slots: scan `due` and leave the heap empty.
    scan: bool,
}

impl Timers {
    pub fn new(slots: usize) -> Self {
        Self::with_scan(slots, slots <= SCAN_SLOTS)
    }

    fn with_scan(slots: usize, scan: bool) -> Self {
        Timers {
            heap: BinaryHeap::with_capacity(2 * slots),
            due: vec![NEVER; slots],
            queued: vec![None; slots],
            scan,
        }
    }

    /// The pending time of `slot`.
    pub fn get(&self, slot: usize) -> Option<Nanos> {
        Some(self.due[slot]).filter(|&t| t != NEVER)
    }

    /// Set (or with `None` cancel) the pending time of `slot`.
    #[inline]
    pub fn set(&mut self, slot: usize, t: Option<Nanos>) {
        let t = t.unwrap_or(NEVER);
        self.due[slot] = t;
        if !self.scan {
            self.queue(slot, t);
        }
    }

    /// The heap's part of [`Self::set`]: an entry for a time earlier than the slot's queued one.
    fn queue(&mut self, slot: usize, t: Nanos) {
        if t != NEVER && self.queued[slot].is_none_or(|q| t < q) {
            self.heap.push(Reverse(key(t, slot)));
            self.queued[slot] = Some(t);
        }
    }

    /// The next event no later than `end`: its time and slot, which is then no longer
    /// pending. `None` when nothing is pending by `end` (what is pending stays so).
    #[inline]
    pub fn pop(&mut self, end: Nanos) -> Option<(Nanos, usize)> {
        if self.scan {
            // The first slot with the earliest time.
            let (mut t, mut slot) = (NEVER, 0);
            for (s, &d) in self.due.iter().enumerate() {
                if d < t {
                    (t, slot) = (d, s);
                }
            }
            if t == NEVER || t > end {
                return None;
            }
            self.due[slot] = NEVER;
            return Some((t, slot));
        }
        self.pop_heap(end)
    }

    /// [`Self::pop`] for many slots: out of line, so the common scan inlines into the
    /// engine's loop without the heap's code and register saves.
    #[inline(never)]
    fn pop_heap(&mut self, end: Nanos) -> Option<(Nanos, usize)> {
        while let Some(&Reverse(k)) = self.heap.peek() {
            let (t, slot) = ((k >> 64) as Nanos, k as u64 as usize);
            if t > end {
                return None;
            }
            self.heap.pop();
            if self.queued[slot] != Some(t) {
                continue; // an entry superseded by an earlier one
            }
            self.queued[slot] = None;
            match self.due[slot] {
                NEVER => {} // cancelled
                d if d == t => {
                    self.due[slot] = NEVER;
                    return Some((t, slot));
                }
                d => {
                    // Moved later: back in at its new time.
                    self.heap.push(Reverse(key(d, slot)));
                    self.queued[slot] = Some(d);
                }
            }
        }
        None
    }
}

fn key(t: Nanos, slot: usize) -> u128 {
    ((t as u128) << 64) | slot as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same queue kept by the heap and by the scan.
    fn both(slots: usize) -> [Timers; 2] {
        [
            Timers::with_scan(slots, false),
            Timers::with_scan(slots, true),
        ]
    }

    #[test]
    fn events_come_out_in_time_then_slot_order_whatever_the_moves() {
        for mut q in both(4) {
            q.set(0, Some(50));
            q.set(0, Some(70)); // later: no new entry
            q.set(1, Some(70));
            q.set(2, Some(60));
            q.set(2, Some(20)); // earlier: a new entry
            q.set(3, Some(10));
            q.set(3, None); // cancelled
            assert!(q.heap.len() <= 5);
            assert_eq!(q.pop(100), Some((20, 2)));
            assert_eq!(q.pop(100), Some((70, 0)));
            assert_eq!(q.pop(100), Some((70, 1)));
            assert_eq!(q.pop(100), None);
            // A slot set again after it fired; an event beyond `end` stays pending.
            q.set(2, Some(200));
            assert_eq!(q.pop(150), None);
            assert_eq!(q.get(2), Some(200));
            assert_eq!(q.pop(200), Some((200, 2)));
        }
    }

    #[test]
    fn a_timer_pushed_back_on_every_step_keeps_the_heap_small() {
        let [mut q, _] = both(2);
        for t in 0..10_000u64 {
            q.set(0, Some(t + 1_000));
        }
        assert_eq!(q.heap.len(), 1);
        assert_eq!(q.pop(u64::MAX), Some((10_999, 0)));
    }

    /// Random sets, moves, cancels and pops: the scan gives every event the heap gives, in
    /// the same order, so a run's result does not depend on its number of flows' queue.
    #[test]
    fn the_scan_and_the_heap_give_the_same_events() {
        let [mut heap, mut scan] = both(12);
        let mut x: u64 = 7;
        let mut now = 0u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let slot = (x >> 33) as usize % 12;
            match (x >> 40) % 4 {
                0 => {
                    heap.set(slot, None);
                    scan.set(slot, None);
                }
                1 | 2 => {
                    // Often a tie with another slot's time.
                    let t = Some(now + (x >> 50) % 20);
                    heap.set(slot, t);
                    scan.set(slot, t);
                }
                _ => {
                    let end = now + (x >> 52) % 8;
                    let (a, b) = (heap.pop(end), scan.pop(end));
                    assert_eq!(a, b);
                    if let Some((t, _)) = a {
                        now = t;
                    }
                }
            }
        }
        while let Some(e) = heap.pop(u64::MAX) {
            assert_eq!(scan.pop(u64::MAX), Some(e));
        }
        assert_eq!(scan.pop(u64::MAX), None);
    }
}
