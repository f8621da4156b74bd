//! Drop-tail: a FIFO limited in bytes, like Linux's bfifo. The limit counts the bytes
//! *waiting* (bfifo's backlog); the packet being sent is not in it. A packet that would push
//! the waiting bytes over the limit is dropped.

use crate::aqm::AqmParams;
use crate::element::{Element, Packet};
use crate::elements::{Link, Rate};
use crate::queue::{Queue, Queued};
use crate::settings::{Given, Setting, SettingValue};
use crate::Nanos;
use std::collections::VecDeque;

/// Drop-tail's parameters (`link.aqm = "droptail"`, the default): none, its limit is the
/// link's buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FifoParams;

impl AqmParams for FifoParams {
    const NAME: &'static str = "droptail";
    const TITLE: &'static str = "drop-tail";
    const SETTINGS: &'static [Setting] = &[];

    fn from_settings(_: &Given) -> Self {
        FifoParams
    }

    fn values(&self) -> Vec<SettingValue> {
        Vec::new()
    }

    fn queue<P: Packet + Send + 'static>(&self, limit_bytes: u64, _: u64) -> Box<dyn Queue<P>> {
        Box::new(Fifo::new(limit_bytes))
    }

    /// The common case keeps its queue unboxed.
    fn bottleneck<P: Packet + Send + 'static>(
        &self,
        rate: Rate,
        limit_bytes: u64,
        ce_threshold: Option<Nanos>,
        _: u64,
    ) -> Box<dyn Element<P>> {
        Box::new(Link::new(rate, Fifo::new(limit_bytes)).with_ce_threshold(ce_threshold))
    }
}

/// A byte-limited FIFO.
pub struct Fifo<P> {
    limit_bytes: u64,
    queue: VecDeque<(P, Nanos)>,
    backlog: u64,
    dropped: u64,
}

impl<P> Fifo<P> {
    /// A FIFO that holds at most `limit_bytes` waiting.
    pub fn new(limit_bytes: u64) -> Self {
        Fifo {
            limit_bytes,
            queue: VecDeque::new(),
            backlog: 0,
            dropped: 0,
        }
    }
}

impl<P: Packet + Send> Queue<P> for Fifo<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, extra: u64) -> bool {
        let len = pkt.wire_len() as u64;
        if self.backlog + extra + len > self.limit_bytes {
            self.dropped += pkt.segments() as u64;
            return false;
        }
        self.backlog += len;
        self.queue.push_back((pkt, now));
        true
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<Queued<P>> {
        let (pkt, enqueued) = self.queue.pop_front()?;
        self.backlog -= pkt.wire_len() as u64;
        Some(Queued {
            pkt,
            enqueued,
            sub: 0,
        })
    }

    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }

    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    fn takes_gso(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("dropped", self.dropped)]
    }
}
