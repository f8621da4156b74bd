//! The path elements, one file each: timed elements ([`crate::Element`]: loss, policer,
//! shaper, the link, delay, ACK aggregation) and the link's queue disciplines
//! ([`crate::Queue`]: FIFO, CoDel, FQ-CoDel, PIE, DualPI2) and rate ([`Rate`]); [`AQMS`], the
//! registry of the queue disciplines.

mod aggregate;
mod codel;
mod delay;
mod dualpi2;
mod fifo;
mod fq_codel;
mod link;
mod loss;
mod pie;
mod policer;
mod rate;
mod shaper;

pub use aggregate::AckAggregation;
pub use codel::{Codel, CodelParams};
pub use delay::{Delay, DelayLine};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fifo::{Fifo, FifoParams};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use link::{DropTail, Link};
pub use loss::{gilbert_to_bad, RandomLoss};
pub use pie::{Pie, PieParams};
pub use policer::{Bucket, Policer, TokenBucket, POLICER};
pub use rate::{Rate, RateDesc, TraceDesc, TRACE_OPPORTUNITY_BYTES};
pub use shaper::{Shaper, SHAPER};

/// The token buckets a `[link]` key adds before the bottleneck, in the order of the data
/// chain; each declares its settings in its file.
pub const BUCKETS: &[Bucket] = &[POLICER, SHAPER];

crate::aqm::aqm_registry! {
    /// Every queue discipline, drop-tail (the default) first, by its parameters' type. A new
    /// one is its file here (its queue, and its parameters implementing
    /// [`AqmParams`](crate::AqmParams)), `mod` above and a line here.
    pub const AQMS = [
        fifo::FifoParams,
        codel::CodelParams,
        fq_codel::FqCodelParams,
        pie::PieParams,
        dualpi2::DualPi2Params,
    ];
}
