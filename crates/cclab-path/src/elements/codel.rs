//! CoDel (RFC 8289, Linux `include/net/codel_impl.h` and `sch_codel.c`).
//!
//! PLACEHOLDER: behaves as a FIFO until the CoDel model lands.

use crate::element::Packet;
use crate::elements::fifo::Fifo;
use crate::queue::{Queue, Queued};
use crate::Nanos;

/// CoDel's parameters (`[link.aqm]` with `kind = "codel"`), Linux's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing queue delay, ns (Linux: 5 ms).
    pub target_ns: Nanos,
    /// Window over which the minimum delay must stay above target before dropping, ns
    /// (Linux: 100 ms).
    pub interval_ns: Nanos,
    /// Mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
        }
    }
}

/// A CoDel queue limited to `limit_bytes` waiting.
pub struct Codel<P> {
    fifo: Fifo<P>,
}

impl<P: Packet + Send> Codel<P> {
    pub fn new(params: &CodelParams, limit_bytes: u64) -> Self {
        let _ = params;
        Codel {
            fifo: Fifo::new(limit_bytes),
        }
    }
}

impl<P: Packet + Send> Queue<P> for Codel<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, extra: u64) -> bool {
        self.fifo.enqueue(now, pkt, extra)
    }
    fn dequeue(&mut self, now: Nanos) -> Option<Queued<P>> {
        self.fifo.dequeue(now)
    }
    fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
    fn backlog_bytes(&self) -> u64 {
        self.fifo.backlog_bytes()
    }
    fn limit_bytes(&self) -> u64 {
        self.fifo.limit_bytes()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.fifo.counters()
    }
}
