//! A shaper: a token bucket with a queue (`[link.shaper]`), like Linux's TBF
//! (`net/sched/sch_tbf.c`) without a peak rate.
//!
//! Packets wait in a FIFO of at most `limit_bytes` (TBF's inner bfifo: the head counts);
//! one that would exceed it is dropped. Tokens (bytes) accrue at the rate up to
//! `burst_bytes`, the bucket starting full; the head leaves as soon as the bucket holds its
//! wire length, and pays for it. So up to `burst_bytes` leave back to back, then the rate
//! holds. Leave times are whole ns; the fraction of a byte earned by rounding up stays in
//! the bucket, so long runs keep the exact rate.
//!
//! Differences from Linux: TBF drops a packet bigger than the burst (it could never leave);
//! here it leaves when the bucket is full and leaves it in debt (negative), so the rate
//! still holds. A GSO packet (the kernel lab's) waits whole and leaves when the bucket
//! holds all of it; one bigger than the burst is split into its segments on arrival, as
//! TBF segments it.

use crate::element::{Departure, Element, Packet};
use crate::elements::policer::{Bucket, TokenBucket};
use crate::Nanos;
use std::collections::VecDeque;

/// The shaper (`link.shaper`).
pub const SHAPER: Bucket = Bucket {
    name: "shaper",
    help: "a token-bucket shaper before the bottleneck (Linux TBF): packets wait for tokens in a queue limited by `buffer`",
    settings: TokenBucket::SETTINGS,
};

/// The shaper element.
pub struct Shaper<P> {
    /// Bytes per ns.
    rate: f64,
    burst: f64,
    limit_bytes: u64,
    /// Waiting packets and when each arrived.
    queue: VecDeque<(P, Nanos)>,
    backlog: u64,
    /// Tokens at `updated` (negative after a packet bigger than the burst).
    tokens: f64,
    updated: Nanos,
    forwarded: u64,
    forwarded_bytes: u64,
    dropped: u64,
    split: u64,
}

impl<P: Packet> Shaper<P> {
    /// A shaper whose queue holds at most `limit_bytes` waiting.
    pub fn new(bucket: &TokenBucket, limit_bytes: u64) -> Self {
        assert!(
            bucket.rate_bps > 0.0 && bucket.rate_bps.is_finite(),
            "a shaper needs a positive rate"
        );
        let burst = bucket.burst_bytes as f64;
        Shaper {
            rate: bucket.rate_bps / 8e9,
            burst,
            limit_bytes,
            queue: VecDeque::new(),
            backlog: 0,
            tokens: burst,
            updated: 0,
            forwarded: 0,
            forwarded_bytes: 0,
            dropped: 0,
            split: 0,
        }
    }

    /// Tokens at `t` (>= `updated`).
    fn tokens_at(&self, t: Nanos) -> f64 {
        let dt = t.saturating_sub(self.updated) as f64;
        (self.tokens + dt * self.rate).min(self.burst)
    }

    /// When the head leaves: when it has arrived and the bucket holds its length (all of
    /// the bucket, for a packet bigger than it).
    fn head_leaves(&self) -> Option<Nanos> {
        let (pkt, arrived) = self.queue.front()?;
        let need = (pkt.wire_len() as f64).min(self.burst);
        let ready = if self.tokens >= need {
            self.updated
        } else {
            let wait = ((need - self.tokens) / self.rate).ceil();
            self.updated.saturating_add(wait as Nanos)
        };
        Some(ready.max(*arrived))
    }

    /// Take one packet into the queue, or drop it; returns whether it was taken.
    fn admit(&mut self, now: Nanos, pkt: P) -> bool {
        let len = pkt.wire_len() as u64;
        if self.backlog + len > self.limit_bytes {
            self.dropped += pkt.segments() as u64;
            return false;
        }
        self.backlog += len;
        self.queue.push_back((pkt, now));
        true
    }

    /// A packet arrives; returns whether all of it was taken in whole.
    fn arrive(&mut self, now: Nanos, pkt: P) -> bool {
        if pkt.segments() > 1 && pkt.wire_len() as f64 > self.burst {
            self.split += 1;
            let mut segs = Vec::with_capacity(pkt.segments() as usize);
            pkt.split(&mut segs);
            for mut s in segs {
                s.mark_burst_broken();
                self.admit(now, s);
            }
            return false;
        }
        self.admit(now, pkt)
    }
}

impl<P: Packet + Send> Element<P> for Shaper<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, _out: &mut Vec<P>) {
        self.arrive(now, pkt);
    }

    fn enqueue_burst(&mut self, now: Nanos, burst: &mut Vec<P>, _out: &mut Vec<P>) -> bool {
        let mut whole = true;
        for mut p in burst.drain(..) {
            if !whole {
                p.mark_burst_broken();
            }
            whole &= self.arrive(now, p);
        }
        whole
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Departure<P>> {
        let at = self.head_leaves()?;
        if at > now {
            return None;
        }
        let (pkt, arrived) = self.queue.pop_front()?;
        let len = pkt.wire_len() as u64;
        self.tokens = self.tokens_at(at) - len as f64;
        self.updated = at;
        self.backlog -= len;
        self.forwarded += pkt.segments() as u64;
        self.forwarded_bytes += len;
        Some(Departure {
            at,
            pkt,
            sojourn: at - arrived,
            sub: 0,
        })
    }

    fn peek(&self) -> Option<&P> {
        self.queue.front().map(|(p, _)| p)
    }

    fn next_event(&self) -> Option<Nanos> {
        self.head_leaves()
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }

    fn queues(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("forwarded", self.forwarded),
            ("forwarded_bytes", self.forwarded_bytes),
            ("dropped", self.dropped),
            ("split", self.split),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    const MS: Nanos = 1_000_000;

    fn shaper(rate_bps: f64, burst_bytes: u64, limit: u64) -> Shaper<P> {
        Shaper::new(
            &TokenBucket {
                rate_bps,
                burst_bytes,
            },
            limit,
        )
    }

    fn counter(s: &Shaper<P>, name: &str) -> u64 {
        s.counters().into_iter().find(|c| c.0 == name).unwrap().1
    }

    /// Everything that leaves, in order, pumping at each event.
    fn drain(s: &mut Shaper<P>) -> Vec<Departure<P>> {
        let mut out = Vec::new();
        while let Some(t) = s.next_event() {
            let d = s.dequeue(t).expect("due at its event");
            assert_eq!(d.at, t);
            out.push(d);
        }
        out
    }

    #[test]
    fn the_output_keeps_the_rate_exactly() {
        // 7 Mbit/s does not divide 1500 bytes into whole ns: 1714285.71 ns each.
        let mut s = shaper(7e6, 15_000, u64::MAX);
        let n = 10_010u64;
        for _ in 0..n {
            s.enqueue(0, P::new(1500), &mut Vec::new());
        }
        let out = drain(&mut s);
        assert_eq!(out.len() as u64, n);
        // The first ten leave at once, then one every 1500 bytes at the rate.
        assert!(out[..10].iter().all(|d| d.at == 0 && d.sojourn == 0));
        let exact = |k: u64| (k - 9) as f64 * 1500.0 * 8.0 / 7e6 * 1e9;
        for (k, d) in out.iter().enumerate().skip(10) {
            let e = exact(k as u64);
            assert!(d.at as f64 >= e - 1e-3 && (d.at as f64) < e + 1.0, "{k}");
            assert_eq!(d.sojourn, d.at);
        }
        let span = (out[n as usize - 1].at - out[9].at) as f64 / 1e9;
        let rate = (n - 10) as f64 * 1500.0 * 8.0 / span;
        assert!((rate / 7e6 - 1.0).abs() < 1e-3, "{rate}");
        assert_eq!(counter(&s, "forwarded"), n);
        assert_eq!(counter(&s, "forwarded_bytes"), n * 1500);
    }

    #[test]
    fn offered_at_twice_the_rate_the_output_is_the_rate() {
        // 10 Mbit/s shaper, 20 Mbit/s offered for 10 s into a 30 kB queue.
        let mut s = shaper(10e6, 15_000, 30_000);
        let mut bytes = 0u64;
        let mut last = 0;
        for k in 0..10_000_000_000 / 600_000 {
            let now = k * 600_000;
            while let Some(d) = s.dequeue(now) {
                bytes += d.pkt.wire as u64;
                last = d.at;
                assert!(d.sojourn <= 30_000 * 8 * 100 + 1, "{}", d.sojourn);
            }
            s.enqueue(now, P::new(1500), &mut Vec::new());
        }
        let rate = (bytes - 15_000) as f64 * 8.0 / (last as f64 / 1e9);
        assert!((rate / 10e6 - 1.0).abs() < 1e-3, "{rate}");
        assert!(counter(&s, "dropped") > 0);
    }

    #[test]
    fn sojourns_are_the_wait_for_tokens() {
        // 12 Mbit/s: 1500 bytes of tokens per ms; a bucket of one packet.
        let mut s = shaper(12e6, 1500, u64::MAX);
        let mut none = Vec::new();
        s.enqueue(0, P::new(1500), &mut none);
        s.enqueue(0, P::new(1500), &mut none);
        s.enqueue(MS / 2, P::new(1500), &mut none);
        assert_eq!(s.backlog_bytes(), 4500);
        assert_eq!(s.next_event(), Some(0));
        let d = s.dequeue(0).unwrap();
        assert_eq!((d.at, d.sojourn), (0, 0));
        assert_eq!(s.next_event(), Some(MS));
        assert!(s.dequeue(MS - 1).is_none());
        // Asked late, it leaves when it was due.
        let d = s.dequeue(10 * MS).unwrap();
        assert_eq!((d.at, d.sojourn), (MS, MS));
        let d = s.dequeue(10 * MS).unwrap();
        assert_eq!((d.at, d.sojourn), (2 * MS, 3 * MS / 2));
        assert!(s.next_event().is_none());
        // The bucket filled up by 3 ms: a packet arriving at 5 ms leaves at once.
        s.enqueue(5 * MS, P::new(1500), &mut none);
        let d = s.dequeue(5 * MS).unwrap();
        assert_eq!((d.at, d.sojourn), (5 * MS, 0));
        assert_eq!(s.backlog_bytes(), 0);
    }

    #[test]
    fn the_limit_drops_and_the_head_counts() {
        let mut s = shaper(12e6, 1500, 3000);
        let mut none = Vec::new();
        s.enqueue(0, P::new(1500), &mut none);
        s.dequeue(0).unwrap();
        // Two wait (3000 bytes, the head included), the third is dropped.
        for _ in 0..3 {
            s.enqueue(0, P::new(1500), &mut none);
        }
        assert_eq!(counter(&s, "dropped"), 1);
        assert_eq!(s.backlog_bytes(), 3000);
        // A burst that overflows is broken from its first drop on.
        let mut burst = vec![P::new(1000), P::new(1000)];
        assert!(!s.enqueue_burst(0, &mut burst, &mut none));
        assert_eq!(counter(&s, "dropped"), 3);
        // One leaves at 1 ms; then there is room again.
        assert_eq!(s.dequeue(MS).unwrap().at, MS);
        assert!(s.enqueue_burst(MS, &mut vec![P::new(1500)], &mut none));
        assert_eq!(s.backlog_bytes(), 3000);
    }

    #[test]
    fn a_packet_bigger_than_the_burst_waits_for_a_full_bucket_and_the_rate_holds() {
        // 8 Mbit/s = 1 byte per us; a bucket of 1000 bytes.
        let mut s = shaper(8e6, 1000, u64::MAX);
        for _ in 0..3 {
            s.enqueue(0, P::new(1500), &mut Vec::new());
        }
        let at: Vec<Nanos> = drain(&mut s).iter().map(|d| d.at).collect();
        assert_eq!(at, vec![0, 1_500_000, 3_000_000]);
    }

    #[test]
    fn gso_packets_wait_whole_unless_bigger_than_the_burst() {
        let mut s = shaper(12e6, 6000, u64::MAX);
        s.enqueue(0, P::gso(4, 1500), &mut Vec::new());
        s.enqueue(0, P::gso(3, 1500), &mut Vec::new());
        let out = drain(&mut s);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].at, out[0].pkt.segs), (0, 4));
        // It leaves when the bucket holds all of it: 4500 bytes after 3 ms.
        assert_eq!((out[1].at, out[1].pkt.segs), (3 * MS, 3));
        assert_eq!(counter(&s, "forwarded"), 7);
        // Bigger than the burst: split on arrival, its segments marked.
        let mut s = shaper(12e6, 3000, u64::MAX);
        s.enqueue(0, P::gso(4, 1500), &mut Vec::new());
        let out = drain(&mut s);
        let at: Vec<Nanos> = out.iter().map(|d| d.at).collect();
        assert_eq!(at, vec![0, 0, MS, 2 * MS]);
        assert!(out.iter().all(|d| d.pkt.segs == 1 && d.pkt.broken));
        assert_eq!(counter(&s, "split"), 1);
    }

    #[test]
    fn in_a_chain_a_conforming_packet_moves_on_at_once() {
        use crate::elements::Delay;
        use crate::Chain;
        let mut c: Chain<P> = Chain::new();
        c.push("shaper", Box::new(shaper(12e6, 3000, u64::MAX)));
        c.push("delay", Box::new(Delay::new(&[10 * MS])));
        let mut seen = Vec::new();
        let mut obs = |j: usize, d: &Departure<P>| seen.push((j, d.at, d.sojourn));
        for _ in 0..4 {
            c.enqueue(0, P::new(1500), &mut obs);
        }
        while let Some(t) = c.next_event() {
            c.pump(t, &mut obs);
            if c.pop_output().is_some() && c.next_event().is_none() {
                break;
            }
        }
        let shaped: Vec<_> = seen.iter().filter(|x| x.0 == 0).copied().collect();
        assert_eq!(
            shaped,
            vec![(0, 0, 0), (0, 0, 0), (0, MS, MS), (0, 2 * MS, 2 * MS)]
        );
        let delayed: Vec<Nanos> = seen.iter().filter(|x| x.0 == 1).map(|x| x.1).collect();
        assert_eq!(delayed, vec![10 * MS, 10 * MS, 11 * MS, 12 * MS]);
    }
}
