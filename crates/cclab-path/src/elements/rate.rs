//! The link's rate: fixed, a schedule of steps (`link.rate = [{at, rate}, ...]`), or a
//! Mahimahi trace of delivery opportunities (`link.trace`). [`RateDesc`] describes it;
//! [`Rate`] is the running state the link asks when a packet on the wire is done.
//!
//! Times in a schedule or a trace count from the run's time zero ([`Rate::set_origin`]).

use crate::Nanos;
use std::sync::Arc;

/// Bytes one delivery opportunity of a Mahimahi trace carries.
pub const TRACE_OPPORTUNITY_BYTES: u32 = 1500;

/// A Mahimahi trace: one delivery opportunity per line, at millisecond timestamps, repeating.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceDesc {
    /// Where it came from (a file name), for messages and results.
    pub name: String,
    /// Opportunity times within one loop, ns, non-decreasing; the last is the loop's length.
    pub opportunities: Vec<Nanos>,
}

/// How the link's rate varies.
#[derive(Clone, Debug, PartialEq)]
pub enum RateDesc {
    /// One rate, bits/s of whole IP packets.
    Fixed(f64),
    /// From each time on (ns from time zero), that rate (bits/s): sorted, the first at 0.
    Schedule(Vec<(Nanos, f64)>),
    /// A trace, looping.
    Trace(Arc<TraceDesc>),
}

impl RateDesc {
    /// Whether the rate changes over time.
    pub fn varies(&self) -> bool {
        !matches!(self, RateDesc::Fixed(_))
    }

    /// Bits the link can carry between `t0` and `t1` (ns from time zero).
    pub fn capacity_bits(&self, t0: Nanos, t1: Nanos) -> f64 {
        match self {
            RateDesc::Fixed(bps) => *bps * t1.saturating_sub(t0) as f64 / 1e9,
            // Filled in with the schedule and trace models.
            RateDesc::Schedule(_) | RateDesc::Trace(_) => 0.0,
        }
    }

    /// The rate at `t` (ns from time zero), bits/s: for a trace, the mean rate of its loop.
    pub fn bps_at(&self, _t: Nanos) -> f64 {
        match self {
            RateDesc::Fixed(bps) => *bps,
            RateDesc::Schedule(s) => s.first().map_or(0.0, |x| x.1),
            RateDesc::Trace(_) => 0.0,
        }
    }
}

/// The link's rate as it runs.
pub struct Rate {
    desc: RateDesc,
    origin: Nanos,
    /// Fractional nanoseconds carried between packets so long runs keep the exact rate.
    carry: f64,
}

impl Rate {
    pub fn new(desc: RateDesc) -> Self {
        Rate {
            desc,
            origin: 0,
            carry: 0.0,
        }
    }

    /// A fixed rate, bits/s (> 0).
    pub fn fixed(bps: f64) -> Self {
        assert!(bps > 0.0, "a link needs a positive rate");
        Self::new(RateDesc::Fixed(bps))
    }

    pub fn desc(&self) -> &RateDesc {
        &self.desc
    }

    /// The run's time zero, in the caller's clock (schedules and traces count from it).
    pub fn set_origin(&mut self, t0: Nanos) {
        self.origin = t0;
    }

    /// The rate at `t`, bits/s (what a GSO packet on the wire has left is estimated with it).
    pub fn bps_at(&self, t: Nanos) -> f64 {
        self.desc.bps_at(t.saturating_sub(self.origin))
    }

    /// A packet of `len` wire bytes goes on the wire at `start`: when its last byte is sent.
    pub fn finish(&mut self, start: Nanos, len: u32) -> Nanos {
        match &self.desc {
            RateDesc::Fixed(bps) => {
                let exact = len as f64 * 8.0 * 1e9 / bps + self.carry;
                let whole = exact.floor();
                self.carry = exact - whole;
                start + (whole as Nanos).max(1)
            }
            RateDesc::Schedule(_) | RateDesc::Trace(_) => {
                unimplemented!("schedules and traces are filled in next")
            }
        }
    }
}
