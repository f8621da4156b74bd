//! The seam every path element sits behind, shaped like Linux's `struct Qdisc_ops`
//! (include/net/sch_generic.h): `enqueue`, `dequeue`, `peek`, and the time of the next event
//! (what a qdisc's watchdog timer is armed for), plus counters. Time is an argument, as in
//! the TCP core: nothing here reads a clock.
//!
//! | Linux `Qdisc_ops` | here                          |
//! |-------------------|-------------------------------|
//! | `enqueue`         | [`Element::enqueue`] (and [`Element::enqueue_burst`] for a TSO burst) |
//! | `dequeue`         | [`Element::dequeue`]          |
//! | `peek`            | [`Element::peek`]             |
//! | watchdog timer    | [`Element::next_event`]       |
//! | `dump_stats`      | [`Element::counters`]         |
//!
//! An element either passes a packet on at once (a loss model: it pushes it to `out`), or
//! holds it and lets it go later through `dequeue` (a queue, a delay). A [`crate::Chain`] of
//! elements is a path direction.

use crate::Nanos;

/// A packet as the path sees it. Both backends have their own packet type (the simulator's
/// segment records, the kernel lab's IP packets read from a TUN device); elements only need
/// what this trait gives.
pub trait Packet: Sized {
    /// Bytes on the wire (whole IP packets; for a GSO packet, all its segments).
    fn wire_len(&self) -> u32;
    /// Which delay applies (the flow group, see [`crate::PathDesc`]).
    fn class(&self) -> usize {
        0
    }
    /// Segments this packet carries: more than one for a GSO super-packet that the kernel
    /// lab takes whole.
    fn segments(&self) -> u32 {
        1
    }
    /// Wire bytes of its first segment.
    fn segment_wire_len(&self) -> u32 {
        self.wire_len()
    }
    /// Split a GSO packet into its segments (in order) and push them to `out`; a packet of
    /// one segment pushes itself.
    fn split(self, out: &mut Vec<Self>) {
        out.push(self)
    }
    /// Control packets (SYN, FIN, RST) that random loss leaves alone: the simulator has no
    /// handshake to lose, so neither does the lab.
    fn loss_exempt(&self) -> bool {
        false
    }
    /// Whether the packet is ECN-capable (ECT(0), ECT(1), or already CE): a queue that marks
    /// may set CE on it instead of dropping it.
    fn is_ect(&self) -> bool {
        false
    }
    /// Its IP header's ECN field: 0 Not-ECT, 1 ECT(1) (the L4S identifier, RFC 9331), 2
    /// ECT(0), 3 CE. A dual queue (DualPI2) classifies by it. By default ECT(0) if
    /// ECN-capable ([`Self::is_ect`]).
    fn ecn_field(&self) -> u8 {
        if self.is_ect() {
            2
        } else {
            0
        }
    }
    /// Set Congestion Experienced (called only on an ECN-capable packet; a GSO packet marks
    /// every segment, as its one IP header is copied to each).
    fn set_ce(&mut self) {}
    /// Which flow it belongs to, as a flow queue classifies it (FQ-CoDel hashes it; Linux
    /// hashes the 5-tuple): equal for the packets of one flow, 0 when there is no flow.
    fn flow_key(&self) -> u64 {
        0
    }
    /// The TSO burst this packet came in was broken up on the way (part of it dropped, or
    /// split to fit the buffer): the receiver cannot take it in as one (GRO).
    fn mark_burst_broken(&mut self) {}
}

/// A packet leaving an element.
#[derive(Debug)]
pub struct Departure<P> {
    /// When it left (at or before the `now` of the `dequeue` call that returned it).
    pub at: Nanos,
    pub pkt: P,
    /// Time it waited in the element's queue before being served (0 for a delay).
    pub sojourn: Nanos,
    /// Which of the element's sub-queues it waited in ([`Element::subqueues`]); 0 when it
    /// has none.
    pub sub: u8,
}

/// One element of a path. See the module docs for the mapping onto `Qdisc_ops`.
pub trait Element<P: Packet>: Send {
    /// A packet arrives at `now`. An element that passes it on at once pushes it (or what is
    /// left of it) to `out`; one that holds it keeps it for [`Self::dequeue`]; a drop is
    /// counted and the packet is gone. The caller has taken out everything due before `now`.
    fn enqueue(&mut self, now: Nanos, pkt: P, out: &mut Vec<P>);

    /// A TSO burst arrives at `now`, its packets back to back (the element takes them out of
    /// `burst`). Returns `false` if the
    /// element broke it up (dropped part of it, or took it in as separate packets), after
    /// marking the packets ([`Packet::mark_burst_broken`]). By default each packet is
    /// enqueued on its own and the burst stays whole.
    fn enqueue_burst(&mut self, now: Nanos, burst: &mut Vec<P>, out: &mut Vec<P>) -> bool {
        for p in burst.drain(..) {
            self.enqueue(now, p, out);
        }
        true
    }

    /// The next packet due by `now`, with the time it left.
    fn dequeue(&mut self, now: Nanos) -> Option<Departure<P>>;

    /// The packet [`Self::dequeue`] will return next, if the element holds any.
    fn peek(&self) -> Option<&P>;

    /// When the next held packet is due; `None` when the element holds nothing.
    fn next_event(&self) -> Option<Nanos>;

    /// The least time any packet spends in the element: 0 (the default) unless it holds
    /// every packet for at least a fixed time, as a delay does. It must not change once the
    /// element is in a chain, which adds these up to know how soon a packet can leave the
    /// path ([`crate::Chain::next_output`]).
    fn min_transit(&self) -> Nanos {
        0
    }

    /// Bytes waiting in the element's queue.
    fn backlog_bytes(&self) -> u64 {
        0
    }

    /// Whether the element queues packets: the sojourn of its departures is queueing delay
    /// (backends keep percentiles and a time series of it per such element).
    fn queues(&self) -> bool {
        false
    }

    /// The names of the queues inside its queue (DualPI2's `"l"` and `"c"`), whose delays
    /// backends keep apart as well (by [`Departure::sub`]); none for a single queue.
    fn subqueues(&self) -> &'static [&'static str] {
        &[]
    }

    /// The run's time zero is `t0` in the caller's clock (rate schedules and traces, periodic
    /// releases count from it). Called once, before the first packet; 0 unless called.
    fn start(&mut self, _t0: Nanos) {}

    /// Its counters, by name (`"dropped"`, `"forwarded"`...).
    fn counters(&self) -> Vec<(&'static str, u64)>;
}
