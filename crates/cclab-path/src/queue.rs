//! The bottleneck's queue discipline: the seam a leaf qdisc sits behind under a rate limiter
//! (Linux: an HTB class and its child qdisc; here: [`crate::elements::Link`] and a [`Queue`]).
//!
//! | Linux leaf `Qdisc_ops` | here                  |
//! |------------------------|-----------------------|
//! | `enqueue`              | [`Queue::enqueue`]    |
//! | `dequeue`              | [`Queue::dequeue`]    |
//! | `qlen`, `backlog`      | [`Queue::is_empty`], [`Queue::backlog_bytes`] |
//! | `dump_stats`           | [`Queue::counters`]   |
//!
//! A queue has no clock and no rate: the link asks it for the next packet when the wire is
//! free (the time is passed in), as HTB dequeues its leaf when it has tokens. An AQM decides
//! there what to drop or mark (CoDel, FQ-CoDel), or at enqueue (PIE). One file each under
//! `elements/`: [`crate::elements::Fifo`] (drop-tail), CoDel, FQ-CoDel, PIE, DualPI2 (two
//! queues in one, whose delays are kept apart: [`Queue::subqueues`]).

use crate::element::Packet;
use crate::Nanos;

/// A packet leaving a queue, with the time it arrived.
#[derive(Debug)]
pub struct Queued<P> {
    pub pkt: P,
    pub enqueued: Nanos,
    /// Which of its sub-queues it left ([`Queue::subqueues`]); 0 for a single queue.
    pub sub: u8,
}

/// A queue discipline (see the module docs). The byte limit (`link.buffer`) is the queue's
/// own; what it drops or marks it counts itself.
pub trait Queue<P: Packet>: Send {
    /// `pkt` arrives at `now` while the wire is busy. `extra` bytes beyond the queue's own
    /// backlog count as waiting (what a GSO packet on the wire has left to send, beyond its
    /// first segment). Returns whether `pkt` was taken in; a queue that makes room by
    /// dropping other packets (FQ-CoDel's fattest flow) takes it in and counts those drops.
    fn enqueue(&mut self, now: Nanos, pkt: P, extra: u64) -> bool;

    /// The wire is free at `now`: the packet to send next, if any. An AQM drops (counted) or
    /// marks CE here first; a packet sent after a drop of the same queue is marked
    /// ([`Packet::mark_burst_broken`]): its burst did not arrive whole.
    fn dequeue(&mut self, now: Nanos) -> Option<Queued<P>>;

    /// Whether no packet waits.
    fn is_empty(&self) -> bool;

    /// Bytes waiting.
    fn backlog_bytes(&self) -> u64;

    /// The byte limit of the waiting packets (`link.buffer`).
    fn limit_bytes(&self) -> u64;

    /// Whether a GSO packet (the kernel lab's super-packets) may wait whole. A FIFO keeps it
    /// whole (it is sent back to back either way); an AQM takes its segments one by one, as
    /// a router's queue sees them.
    fn takes_gso(&self) -> bool {
        false
    }

    /// The names of its sub-queues (a dual queue's `"l"` and `"c"`), by [`Queued::sub`];
    /// none for a single queue.
    fn subqueues(&self) -> &'static [&'static str] {
        &[]
    }

    /// `pkt` found the wire free and the queue empty and went on the wire without waiting
    /// (as if enqueued and dequeued at once): the sub-queue it counts in ([`Queued::sub`]).
    fn sent_at_once(&mut self, _pkt: &P) -> u8 {
        0
    }

    /// Its counters: `"dropped"` (the buffer was full), `"dropped_aqm"`, `"marked_aqm"`, and
    /// any of its own.
    fn counters(&self) -> Vec<(&'static str, u64)>;
}

impl<P: Packet> Queue<P> for Box<dyn Queue<P>> {
    fn enqueue(&mut self, now: Nanos, pkt: P, extra: u64) -> bool {
        (**self).enqueue(now, pkt, extra)
    }
    fn dequeue(&mut self, now: Nanos) -> Option<Queued<P>> {
        (**self).dequeue(now)
    }
    fn is_empty(&self) -> bool {
        (**self).is_empty()
    }
    fn backlog_bytes(&self) -> u64 {
        (**self).backlog_bytes()
    }
    fn limit_bytes(&self) -> u64 {
        (**self).limit_bytes()
    }
    fn takes_gso(&self) -> bool {
        (**self).takes_gso()
    }
    fn subqueues(&self) -> &'static [&'static str] {
        (**self).subqueues()
    }
    fn sent_at_once(&mut self, pkt: &P) -> u8 {
        (**self).sent_at_once(pkt)
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        (**self).counters()
    }
}
