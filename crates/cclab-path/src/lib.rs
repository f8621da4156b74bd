//! # cclab-path: what a "path" means
//!
//! A path is two chains of elements, one per direction, built from one description
//! ([`PathDesc`]) by one factory that both backends call: the simulator runs the chains in
//! simulated time, the kernel lab's user-space element runs them on the IP packets it reads
//! from a TUN device. So "100 Mbit/s, 50 ms, 1 BDP, 1%" is the same code on both.
//!
//! ```text
//! data: [loss] -> [policer] -> [shaper] -> queue (rate, queue discipline) -> delay (+ jitter)
//! ACKs: [loss] -> [aggregation] -> delay
//! ```
//! (each delay per flow group; elements in brackets only when the scenario asks for them)
//!
//! - [`Element`]: the seam, shaped like Linux's `Qdisc_ops` (enqueue, dequeue, peek, the time
//!   of the next event, counters); [`Packet`]: what an element needs of a packet.
//! - [`Queue`]: the bottleneck's queue discipline, shaped like a leaf qdisc under HTB.
//! - [`elements`]: [`Link`] (the bottleneck: a [`Rate`], fixed, scheduled or from a trace,
//!   serving a [`Queue`]: [`Fifo`] drop-tail, [`Codel`], [`FqCodel`], [`Pie`]; burst
//!   admission lives here), [`RandomLoss`] random loss (Bernoulli or in bursts), [`Policer`]
//!   and [`Shaper`] (token buckets), [`Delay`] propagation delay (with jitter),
//!   [`AckAggregation`].
//! - [`Chain`]: elements in a row, each packet entering the next when it leaves one.
//! - [`Rng`]: the seeded generator behind every random choice; [`streams`] names each stream.
//! - [`settings`]: what a scenario may set on an element, declared in the element's file;
//!   [`AQMS`] lists the queue disciplines with theirs ([`AqmParams`]: what a discipline's
//!   file declares; [`AqmDesc`]: the one a scenario resolved to); [`BUCKETS`] lists the
//!   policer and the shaper with theirs (a [`TokenBucket`]'s).
//!
//! Like the TCP core, nothing here reads a clock: time (ns) is passed in.

mod aqm;
mod chain;
mod element;
pub mod elements;
mod factory;
mod queue;
mod rng;
pub mod settings;
pub mod tracegen;

pub use aqm::{Aqm, AqmDesc, AqmParams};
pub use chain::{Chain, Observer};
pub use element::{Departure, Element, Packet};
pub use elements::{
    gilbert_to_bad, AckAggregation, Bucket, Codel, CodelParams, Delay, DelayLine, DropTail,
    DualPi2, DualPi2Params, Fifo, FifoParams, FqCodel, FqCodelParams, Link, Pie, PieParams,
    Policer, RandomLoss, Rate, RateDesc, Shaper, TokenBucket, TraceDesc, AQMS, BUCKETS, POLICER,
    SHAPER, TRACE_OPPORTUNITY_BYTES,
};
pub use factory::{streams, LinkDesc, LossUnit, PathDesc, BOTTLENECK};
pub use queue::{Queue, Queued};
pub use rng::Rng;
pub use settings::{Derived, Given, Setting, SettingDefault, SettingKind, SettingValue};

/// Time in nanoseconds.
pub type Nanos = u64;

#[cfg(test)]
pub(crate) mod testing {
    use crate::Packet;

    /// A test packet: `wire` bytes, `segs` segments of equal size.
    #[derive(Clone, Debug, PartialEq)]
    pub struct P {
        pub wire: u32,
        pub segs: u32,
        pub class: usize,
        pub control: bool,
        pub broken: bool,
    }

    impl P {
        pub fn new(wire: u32) -> Self {
            P {
                wire,
                segs: 1,
                class: 0,
                control: false,
                broken: false,
            }
        }
        pub fn gso(segs: u32, seg_wire: u32) -> Self {
            P {
                wire: segs * seg_wire,
                segs,
                ..P::new(0)
            }
        }
    }

    impl Packet for P {
        fn wire_len(&self) -> u32 {
            self.wire
        }
        fn class(&self) -> usize {
            self.class
        }
        fn segments(&self) -> u32 {
            self.segs
        }
        fn segment_wire_len(&self) -> u32 {
            self.wire / self.segs
        }
        fn split(self, out: &mut Vec<Self>) {
            let each = self.wire / self.segs;
            out.extend((0..self.segs).map(|_| P {
                wire: each,
                segs: 1,
                ..self.clone()
            }));
        }
        fn loss_exempt(&self) -> bool {
            self.control
        }
        fn mark_burst_broken(&mut self) {
            self.broken = true;
        }
    }
}
