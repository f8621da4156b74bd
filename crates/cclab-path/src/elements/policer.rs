//! A policer: a token bucket that drops what exceeds it (`link.policer`), as an ISP's or a
//! cloud's ingress policer (Linux: `tc ... police rate R burst B drop`).
//!
//! PLACEHOLDER: passes everything until the policer model lands.

use crate::element::{Departure, Element, Packet};
use crate::Nanos;

/// A token bucket: tokens (bytes) accrue at `rate_bps` up to `burst_bytes`.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    pub rate_bps: f64,
    pub burst_bytes: u64,
}

/// The policer element. It holds nothing.
pub struct Policer {
    bucket: TokenBucket,
    dropped: u64,
}

impl Policer {
    pub fn new(bucket: &TokenBucket) -> Self {
        Policer {
            bucket: bucket.clone(),
            dropped: 0,
        }
    }
}

impl<P: Packet> Element<P> for Policer {
    fn enqueue(&mut self, _now: Nanos, pkt: P, out: &mut Vec<P>) {
        let _ = &self.bucket;
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
        vec![("dropped", self.dropped)]
    }
}
