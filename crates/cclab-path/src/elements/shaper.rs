//! A shaper: a token bucket with a queue (`[link.shaper]`), like Linux's TBF: packets wait
//! until the bucket holds enough tokens; up to `burst` bytes leave back to back.
//!
//! PLACEHOLDER: passes everything until the shaper model lands.

use crate::element::{Departure, Element, Packet};
use crate::elements::policer::TokenBucket;
use crate::Nanos;

/// The shaper element.
pub struct Shaper {
    bucket: TokenBucket,
    limit_bytes: u64,
}

impl Shaper {
    /// A shaper whose queue holds at most `limit_bytes` waiting.
    pub fn new(bucket: &TokenBucket, limit_bytes: u64) -> Self {
        Shaper {
            bucket: bucket.clone(),
            limit_bytes,
        }
    }
}

impl<P: Packet> Element<P> for Shaper {
    fn enqueue(&mut self, _now: Nanos, pkt: P, out: &mut Vec<P>) {
        let _ = (&self.bucket, self.limit_bytes);
        out.push(pkt);
    }
    fn dequeue(&mut self, _now: Nanos) -> Option<Departure<P>> {
        None
    }
    fn peek(&self) -> Option<&P> {
        None
    }
    fn next_event(&self) -> Option<Nanos> {
        None
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![]
    }
}
