//! FQ-CoDel (RFC 8290, Linux `net/sched/sch_fq_codel.c`).
//!
//! PLACEHOLDER: behaves as a FIFO until the FQ-CoDel model lands.

use crate::element::Packet;
use crate::elements::fifo::Fifo;
use crate::queue::{Queue, Queued};
use crate::Nanos;

/// CoDel's parameters (`[link.aqm]` with `kind = "fq_codel"`), Linux's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct FqCodelParams {
    /// Acceptable standing queue delay, ns (Linux: 5 ms).
    pub target_ns: Nanos,
    /// Window over which the minimum delay must stay above target before dropping, ns
    /// (Linux: 100 ms).
    pub interval_ns: Nanos,
    /// Mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
    /// Flow buckets the flows are hashed into (Linux: 1024).
    pub flows: u32,
    /// DRR quantum, bytes (Linux: 1514).
    pub quantum: u32,
    /// At most this many packets dropped from the fattest flow at once on overflow (Linux: 64).
    pub drop_batch: u32,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
            flows: 1024,
            quantum: 1514,
            drop_batch: 64,
        }
    }
}

/// A CoDel queue limited to `limit_bytes` waiting.
pub struct FqCodel<P> {
    fifo: Fifo<P>,
}

impl<P: Packet + Send> FqCodel<P> {
    pub fn new(params: &FqCodelParams, limit_bytes: u64, seed: u64) -> Self {
        let _ = seed;
        let _ = params;
        FqCodel {
            fifo: Fifo::new(limit_bytes),
        }
    }
}

impl<P: Packet + Send> Queue<P> for FqCodel<P> {
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
