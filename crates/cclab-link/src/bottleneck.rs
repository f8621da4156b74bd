use crate::{Nanos, WireLen};
use std::collections::VecDeque;

/// A packet that finished transmission on the bottleneck.
#[derive(Debug)]
pub struct Departed<T> {
    pub pkt: T,
    /// Time spent waiting in the buffer before transmission began.
    pub queue_delay: Nanos,
}

/// Counters of a [`Bottleneck`].
#[derive(Clone, Debug, Default)]
pub struct LinkCounters {
    pub forwarded_pkts: u64,
    pub forwarded_bytes: u64,
    pub drops_buffer: u64,
    /// Time spent transmitting, ns.
    pub busy_ns: u64,
}

/// A link of fixed rate with a drop-tail FIFO buffer.
///
/// The buffer limit counts the bytes *waiting* (like Linux bfifo's backlog); the packet being
/// transmitted is not in it. A packet that would push the backlog over the limit is dropped.
#[derive(Debug)]
pub struct Bottleneck<T> {
    rate_bps: f64,
    buffer_bytes: u64,
    queue: VecDeque<(T, Nanos)>,
    backlog: u64,
    /// (packet, enqueue time, transmission start, transmission end)
    in_service: Option<(T, Nanos, Nanos, Nanos)>,
    /// Fractional nanoseconds carried between packets so long runs keep the exact rate.
    carry: f64,
    counters: LinkCounters,
}

impl<T: WireLen> Bottleneck<T> {
    pub fn new(rate_bps: f64, buffer_bytes: u64) -> Self {
        assert!(rate_bps > 0.0);
        Bottleneck {
            rate_bps,
            buffer_bytes,
            queue: VecDeque::new(),
            backlog: 0,
            in_service: None,
            carry: 0.0,
            counters: LinkCounters::default(),
        }
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate_bps
    }
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer_bytes
    }
    /// Bytes waiting (not counting the packet on the wire).
    pub fn backlog_bytes(&self) -> u64 {
        self.backlog
    }
    pub fn counters(&self) -> &LinkCounters {
        &self.counters
    }

    fn tx_time(&mut self, len: u32) -> Nanos {
        let exact = len as f64 * 8.0 * 1e9 / self.rate_bps + self.carry;
        let whole = exact.floor();
        self.carry = exact - whole;
        (whole as Nanos).max(1)
    }

    /// Offer a packet at `now`. Returns it back if the buffer is full (drop-tail).
    ///
    /// Callers should first take out every packet due to leave by `now` ([`Self::dequeue`]),
    /// so the buffer check sees the true backlog; the simulator's event order guarantees it.
    pub fn enqueue(&mut self, now: Nanos, pkt: T) -> Result<(), T> {
        if self.in_service.is_none() {
            self.start(now, pkt, now);
            return Ok(());
        }
        let len = pkt.wire_len() as u64;
        if self.backlog + len > self.buffer_bytes {
            self.counters.drops_buffer += 1;
            return Err(pkt);
        }
        self.backlog += len;
        self.queue.push_back((pkt, now));
        Ok(())
    }

    fn start(&mut self, now: Nanos, pkt: T, enq: Nanos) {
        let tx = self.tx_time(pkt.wire_len());
        self.counters.busy_ns += tx;
        self.in_service = Some((pkt, enq, now, now + tx));
    }

    /// When the packet on the wire finishes.
    pub fn next_departure(&self) -> Option<Nanos> {
        self.in_service.as_ref().map(|&(_, _, _, done)| done)
    }

    /// Take the packet that finished at or before `now`, and start the next one.
    pub fn dequeue(&mut self, now: Nanos) -> Option<Departed<T>> {
        let done = self.next_departure()?;
        if done > now {
            return None;
        }
        let (pkt, enq, start, done) = self.in_service.take().unwrap();
        self.counters.forwarded_pkts += 1;
        self.counters.forwarded_bytes += pkt.wire_len() as u64;
        if let Some((next, next_enq)) = self.queue.pop_front() {
            self.backlog -= next.wire_len() as u64;
            // Back-to-back: the next transmission starts when this one ended (or when it
            // arrived, if a caller enqueued it after the link had already gone idle).
            self.start(done.max(next_enq), next, next_enq);
        }
        let queue_delay = start.saturating_sub(enq);
        Some(Departed { pkt, queue_delay })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct P(u32);
    impl WireLen for P {
        fn wire_len(&self) -> u32 {
            self.0
        }
    }

    #[test]
    fn serialises_at_rate_and_drops_tail() {
        // 12 Mbit/s: a 1500-byte packet takes 1 ms.
        let mut b = Bottleneck::new(12e6, 3000);
        let accepted: Vec<bool> = (0..4).map(|_| b.enqueue(0, P(1500)).is_ok()).collect();
        assert_eq!(accepted, [true, true, true, false]);
        // One on the wire, two waiting (3000 bytes), the fourth dropped.
        assert_eq!(b.counters().drops_buffer, 1);
        assert_eq!(b.backlog_bytes(), 3000);
        assert_eq!(b.next_departure(), Some(1_000_000));
        assert!(b.dequeue(999_999).is_none());
        let d = b.dequeue(1_000_000).unwrap();
        assert_eq!(d.queue_delay, 0);
        let d = b.dequeue(2_000_000).unwrap();
        assert_eq!(d.queue_delay, 1_000_000);
        let d = b.dequeue(3_000_000).unwrap();
        assert_eq!(d.queue_delay, 2_000_000);
        assert!(b.next_departure().is_none());
        assert_eq!(b.counters().forwarded_bytes, 4500);
    }

    #[test]
    fn long_run_keeps_exact_rate() {
        // 7 Mbit/s does not divide 1500 bytes into whole ns; the carry keeps the average.
        let mut b = Bottleneck::new(7e6, u64::MAX);
        let n = 10_000u64;
        for _ in 0..n {
            b.enqueue(0, P(1500)).ok();
        }
        let mut last = 0;
        while let Some(t) = b.next_departure() {
            b.dequeue(t);
            last = t;
        }
        let expect = n as f64 * 1500.0 * 8.0 / 7e6 * 1e9;
        assert!((last as f64 - expect).abs() < 2.0, "{last} vs {expect}");
    }

    #[test]
    fn late_dequeue_is_safe() {
        // A caller that enqueues after the packet on the wire finished, before dequeuing it.
        let mut b = Bottleneck::new(12e6, 10_000);
        b.enqueue(0, P(1500)).unwrap();
        b.enqueue(5_000_000, P(1500)).unwrap();
        let d = b.dequeue(5_000_000).unwrap();
        assert_eq!(d.queue_delay, 0);
        // The second packet starts when it arrived, not when the first finished.
        assert_eq!(b.next_departure(), Some(6_000_000));
        assert_eq!(b.dequeue(6_000_000).unwrap().queue_delay, 0);
    }
}
