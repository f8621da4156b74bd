//! PIE (RFC 8033, Linux `net/sched/sch_pie.c` and `include/net/pie.h`).
//!
//! PLACEHOLDER: behaves as a FIFO until the PIE model lands.

use crate::element::Packet;
use crate::elements::fifo::Fifo;
use crate::queue::{Queue, Queued};
use crate::{Nanos, Rng};

/// PIE's parameters (`[link.aqm]` with `kind = "pie"`), Linux's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct PieParams {
    /// Target queue delay, ns (Linux: 15 ms).
    pub target_ns: Nanos,
    /// How often the drop probability is updated, ns (Linux: 15 ms).
    pub tupdate_ns: Nanos,
    /// alpha and beta in units of 1/16 (Linux: 2 and 20, i.e. 0.125 and 1.25).
    pub alpha: u32,
    pub beta: u32,
    /// Burst allowance, ns (Linux: 150 ms).
    pub max_burst_ns: Nanos,
    /// Mark ECN-capable packets CE instead of dropping them while the drop probability is
    /// at most 10%.
    pub ecn: bool,
    /// Scale the drop probability by packet size (Linux: off).
    pub bytemode: bool,
    /// Estimate the queue delay from the departure rate (RFC 8033) instead of timestamps
    /// (Linux's default: off, timestamps).
    pub dq_rate_estimator: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha: 2,
            beta: 20,
            max_burst_ns: 150_000_000,
            ecn: true,
            bytemode: false,
            dq_rate_estimator: false,
        }
    }
}

/// A PIE queue limited to `limit_bytes` waiting.
pub struct Pie<P> {
    fifo: Fifo<P>,
}

impl<P: Packet + Send> Pie<P> {
    pub fn new(params: &PieParams, limit_bytes: u64, rng: Rng) -> Self {
        let _ = (params, rng);
        Pie {
            fifo: Fifo::new(limit_bytes),
        }
    }
}

impl<P: Packet + Send> Queue<P> for Pie<P> {
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
