//! ACK aggregation (`link.ack_aggregation`): ACKs are held and released in bursts once per
//! period, as Wi-Fi block ACKs and DOCSIS request-grant cycles deliver them.
//!
//! PLACEHOLDER: passes everything until the model lands.

use crate::element::{Departure, Element, Packet};
use crate::Nanos;

/// The aggregation element.
pub struct AckAggregation {
    period: Nanos,
}

impl AckAggregation {
    /// Releases what it holds at every multiple of `period` (> 0) from time zero.
    pub fn new(period: Nanos) -> Self {
        AckAggregation { period }
    }
}

impl<P: Packet> Element<P> for AckAggregation {
    fn enqueue(&mut self, _now: Nanos, pkt: P, out: &mut Vec<P>) {
        let _ = self.period;
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
