//! FQ-CoDel (RFC 8290), as Linux runs it (`net/sched/sch_fq_codel.c`).
//!
//! Packets are hashed by flow into `flows` buckets (1024); each bucket is a FIFO with its
//! own CoDel state (the same state machine as [`crate::Codel`], with shared parameters), so
//! a flow that keeps a standing queue is dropped or marked and a light flow sharing the link
//! is not. Buckets with packets are served by deficit round robin: each turn a bucket may
//! send while its deficit is positive, and gets `quantum` (1514) bytes more when it runs
//! out and goes to the back of the line, so backlogged flows share the link in bytes, not
//! packets. A bucket that becomes active joins a separate list of new flows, served before
//! the old ones: a flow that sends less than its share (a ping, a handshake, a DNS query)
//! finds its packet sent next, not behind everyone's queue. A new bucket that empties moves
//! to the old list (if there is one) rather than leaving, so a flow cannot stay "new" by
//! sending one packet at a time.
//!
//! When the waiting bytes exceed the limit, the arriving packet is taken in and the fattest
//! bucket (most bytes waiting) loses packets from its head, up to `drop_batch` (64) at a
//! time and until it has lost half its bytes; its CoDel count goes up by as many, so it
//! also drops sooner.
//!
//! Differences from Linux:
//! - The limit is in bytes (`link.buffer`); Linux's is in packets (10240) plus a memory
//!   limit (32 MB of buffers). A batch of overflow drops repeats while the waiting bytes
//!   still exceed the limit (Linux drops one batch, which always suffices for a packet
//!   limit exceeded by one packet).
//! - The flow hash is a 64-bit mix of [`Packet::flow_key`] and the run's seed, scaled to
//!   the buckets as Linux scales its perturbed 5-tuple hash (`reciprocal_scale`). No
//!   external classifiers or `skb->priority`.
//! - Linux scans every bucket for the fattest one on overflow. Here an indexed max-heap
//!   of the buckets with packets, ordered by bytes waiting and then by lowest index (the
//!   bucket Linux's scan picks), is kept up to date at each enqueue and dequeue
//!   (O(log n)); the heap's top is the same bucket the scan would find.
//! - "Too little waits to drop" compares the whole queue's bytes with `maxpacket`, as in
//!   [`crate::Codel`]; no `ce_threshold` (the link has its own).
//! - `enqueue` returns `false` only if the arriving packet itself was dropped (Linux
//!   returns `NET_XMIT_CN` when its flow was the one cut).
//! - The next packet sent from a bucket that lost packets (to CoDel or to overflow) is
//!   marked [`Packet::mark_burst_broken`].

use crate::aqm::AqmParams;
use crate::element::Packet;
use crate::elements::codel::{
    codel_dequeue, CodelConfig, CodelSource, CodelStats, CodelVars, CODEL_ECN, CODEL_INTERVAL,
    CODEL_TARGET,
};
use crate::queue::{Queue, Queued};
use crate::settings::{Given, Setting, SettingValue};
use crate::{streams, Nanos, Rng};
use std::collections::VecDeque;

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

impl AqmParams for FqCodelParams {
    fn marks_ecn(&self) -> bool {
        self.ecn
    }
    const NAME: &'static str = "fq_codel";
    const TITLE: &'static str = "FQ-CoDel";
    /// What `[link.aqm]` may set for FQ-CoDel, with Linux's defaults.
    const SETTINGS: &'static [Setting] = &[
        CODEL_TARGET,
        CODEL_INTERVAL,
        CODEL_ECN,
        Setting::int(
            "flows",
            1024,
            (1, 65536),
            "",
            "buckets the flows are hashed into",
        ),
        Setting::int("quantum", 1514, (256, 1 << 20), "bytes", "DRR quantum"),
        Setting::int(
            "drop_batch",
            64,
            (1, 1024),
            "",
            "most packets dropped from the fattest flow at once when the buffer overflows",
        ),
    ];

    fn from_settings(g: &Given) -> Self {
        FqCodelParams {
            target_ns: g.time("target"),
            interval_ns: g.time("interval"),
            ecn: g.flag("ecn"),
            flows: g.int32("flows"),
            quantum: g.int32("quantum"),
            drop_batch: g.int32("drop_batch"),
        }
    }

    fn values(&self) -> Vec<SettingValue> {
        use SettingValue::*;
        vec![
            Time(self.target_ns),
            Time(self.interval_ns),
            Bool(self.ecn),
            Int(self.flows as u64),
            Int(self.quantum as u64),
            Int(self.drop_batch as u64),
        ]
    }

    /// The flow hash is perturbed by the run's seed (its own stream).
    fn queue<P: Packet + Send + 'static>(&self, limit_bytes: u64, seed: u64) -> Box<dyn Queue<P>> {
        let perturbation = Rng::derive(seed, streams::FLOW_HASH).next_u64();
        Box::new(FqCodel::new(self, limit_bytes, perturbation))
    }
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams::from_settings(&Given::defaults(Self::SETTINGS))
    }
}

/// One bucket: its FIFO, DRR deficit and CoDel state.
struct Flow<P> {
    queue: VecDeque<(P, Nanos)>,
    backlog: u64,
    deficit: i32,
    cvars: CodelVars,
    /// On the new or the old list (Linux: `flowchain` not empty).
    listed: bool,
    /// Lost packets since the last one it sent.
    broken: bool,
}

/// A bucket's FIFO as CoDel's packet source; the backlog CoDel checks is the whole queue's.
struct FlowSource<'a, P> {
    queue: &'a mut VecDeque<(P, Nanos)>,
    backlog: &'a mut u64,
    total: &'a mut u64,
    qlen: &'a mut usize,
}

impl<P: Packet> CodelSource<P> for FlowSource<'_, P> {
    fn pop(&mut self) -> Option<(P, Nanos)> {
        let item = self.queue.pop_front()?;
        let len = item.0.wire_len() as u64;
        *self.backlog -= len;
        *self.total -= len;
        *self.qlen -= 1;
        Some(item)
    }
    fn backlog(&self) -> u64 {
        *self.total
    }
}

/// The buckets with packets, as a binary max-heap keyed by (bytes waiting, lower index
/// first), with each bucket's position so its key can change in place: O(log n) per
/// change, O(1) to find the fattest.
struct FatHeap {
    /// (backlog, bucket), the fattest at 0.
    heap: Vec<(u64, u32)>,
    /// Each bucket's place in `heap` (`ABSENT` if it has no packets).
    pos: Vec<u32>,
}

const ABSENT: u32 = u32::MAX;

impl FatHeap {
    fn new(n: usize) -> Self {
        FatHeap {
            heap: Vec::with_capacity(n),
            pos: vec![ABSENT; n],
        }
    }

    /// `a` ranks above `b`: more bytes, or as many and a lower index (the first maximum a
    /// linear scan meets).
    fn above(a: (u64, u32), b: (u64, u32)) -> bool {
        a.0 > b.0 || (a.0 == b.0 && a.1 < b.1)
    }

    fn fattest(&self) -> Option<usize> {
        self.heap.first().map(|&(_, i)| i as usize)
    }

    /// Bucket `idx` now has `backlog` bytes waiting.
    fn set(&mut self, idx: usize, backlog: u64) {
        let at = self.pos[idx];
        if at == ABSENT {
            if backlog > 0 {
                self.heap.push((backlog, idx as u32));
                let last = self.heap.len() - 1;
                self.pos[idx] = last as u32;
                self.sift_up(last);
            }
            return;
        }
        let at = at as usize;
        if backlog == 0 {
            self.pos[idx] = ABSENT;
            let last = self.heap.pop().expect("a listed bucket");
            if at < self.heap.len() {
                self.heap[at] = last;
                self.pos[last.1 as usize] = at as u32;
                self.sift_up(at);
                self.sift_down(self.pos[last.1 as usize] as usize);
            }
            return;
        }
        let old = self.heap[at].0;
        self.heap[at].0 = backlog;
        if backlog > old {
            self.sift_up(at);
        } else {
            self.sift_down(at);
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }

    fn sift_up(&mut self, mut at: usize) {
        while at > 0 {
            let parent = (at - 1) / 2;
            if !Self::above(self.heap[at], self.heap[parent]) {
                break;
            }
            self.swap(at, parent);
            at = parent;
        }
    }

    fn sift_down(&mut self, mut at: usize) {
        loop {
            let (l, r) = (2 * at + 1, 2 * at + 2);
            let mut top = at;
            if l < self.heap.len() && Self::above(self.heap[l], self.heap[top]) {
                top = l;
            }
            if r < self.heap.len() && Self::above(self.heap[r], self.heap[top]) {
                top = r;
            }
            if top == at {
                break;
            }
            self.swap(at, top);
            at = top;
        }
    }
}

/// The murmur3 64-bit finaliser: every input bit flips each output bit with probability
/// about one half.
fn mix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// An FQ-CoDel queue limited to `limit_bytes` waiting.
pub struct FqCodel<P> {
    cfg: CodelConfig,
    quantum: i32,
    drop_batch: u32,
    limit_bytes: u64,
    /// The seed's perturbation of the flow hash.
    perturb: u64,
    flows: Vec<Flow<P>>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    fat: FatHeap,
    /// Bytes waiting in all buckets.
    backlog: u64,
    /// Packets waiting in all buckets.
    qlen: usize,
    stats: CodelStats,
    /// Dropped because the limit was exceeded.
    dropped: u64,
    /// Buckets that became active.
    new_flow_count: u64,
}

impl<P: Packet + Send> FqCodel<P> {
    pub fn new(params: &FqCodelParams, limit_bytes: u64, seed: u64) -> Self {
        // Linux refuses 0 buckets and raises a quantum below 256.
        let n = params.flows.max(1) as usize;
        FqCodel {
            cfg: CodelConfig::new(params.target_ns, params.interval_ns, params.ecn),
            quantum: params.quantum.clamp(256, i32::MAX as u32) as i32,
            drop_batch: params.drop_batch.max(1),
            limit_bytes,
            perturb: mix64(seed ^ 0x9e37_79b9_7f4a_7c15),
            flows: (0..n)
                .map(|_| Flow {
                    queue: VecDeque::new(),
                    backlog: 0,
                    deficit: 0,
                    cvars: CodelVars::default(),
                    listed: false,
                    broken: false,
                })
                .collect(),
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            fat: FatHeap::new(n),
            backlog: 0,
            qlen: 0,
            stats: CodelStats::default(),
            dropped: 0,
            new_flow_count: 0,
        }
    }

    /// The bucket of flow `key`: a 32-bit hash scaled to the buckets (`reciprocal_scale`).
    fn bucket(&self, key: u64) -> usize {
        let hash = (mix64(key ^ self.perturb) >> 32) as u32;
        ((hash as u64 * self.flows.len() as u64) >> 32) as usize
    }

    /// Drop from the head of bucket `idx` (the fattest) until it has lost half its bytes,
    /// at most `drop_batch` packets and at least one (Linux's `fq_codel_drop`). Returns the
    /// number dropped.
    fn drop_fattest(&mut self, idx: usize) -> u32 {
        let flow = &mut self.flows[idx];
        let threshold = flow.backlog / 2;
        let mut len = 0u64;
        let mut n = 0u32;
        while let Some((pkt, _)) = flow.queue.pop_front() {
            len += pkt.wire_len() as u64;
            n += 1;
            if n >= self.drop_batch || len >= threshold {
                break;
            }
        }
        // Its CoDel drops sooner too.
        flow.cvars.count = flow.cvars.count.wrapping_add(n);
        flow.backlog -= len;
        flow.broken |= n > 0;
        self.backlog -= len;
        self.qlen -= n as usize;
        self.dropped += n as u64;
        self.fat.set(idx, flow.backlog);
        n
    }
}

impl<P: Packet + Send> Queue<P> for FqCodel<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, extra: u64) -> bool {
        let idx = self.bucket(pkt.flow_key());
        let len = pkt.wire_len() as u64;
        let flow = &mut self.flows[idx];
        flow.queue.push_back((pkt, now));
        flow.backlog += len;
        self.backlog += len;
        self.qlen += 1;
        self.fat.set(idx, flow.backlog);
        if !flow.listed {
            flow.listed = true;
            flow.deficit = self.quantum;
            self.new_flows.push_back(idx as u32);
            self.new_flow_count += 1;
        }
        // The arriving packet is the last of `ahead_and_it` in its bucket; it is dropped
        // only if all of them are (drops are from the head).
        let ahead_and_it = self.flows[idx].queue.len();
        let mut own_dropped = 0;
        while self.backlog + extra > self.limit_bytes {
            let Some(fat) = self.fat.fattest() else { break };
            let n = self.drop_fattest(fat) as usize;
            if fat == idx {
                own_dropped += n;
            }
        }
        own_dropped < ahead_and_it
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Queued<P>> {
        loop {
            let (idx, from_new) = match self.new_flows.front() {
                Some(&i) => (i as usize, true),
                None => (*self.old_flows.front()? as usize, false),
            };
            let flow = &mut self.flows[idx];
            if flow.deficit <= 0 {
                // Its turn is over: more credit, and to the back of the old flows.
                flow.deficit += self.quantum;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(idx as u32);
                continue;
            }
            let dropped_before = self.stats.dropped;
            let mut src = FlowSource {
                queue: &mut flow.queue,
                backlog: &mut flow.backlog,
                total: &mut self.backlog,
                qlen: &mut self.qlen,
            };
            let item = codel_dequeue(&mut src, &self.cfg, &mut flow.cvars, &mut self.stats, now);
            flow.broken |= self.stats.dropped != dropped_before;
            self.fat.set(idx, flow.backlog);
            let Some((mut pkt, enqueued)) = item else {
                // Empty: a new flow makes one pass through the old list first (if there is
                // one), so that it cannot stay new; an old one leaves.
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                if from_new && !self.old_flows.is_empty() {
                    self.old_flows.push_back(idx as u32);
                } else {
                    flow.listed = false;
                }
                continue;
            };
            flow.deficit -= pkt.wire_len() as i32;
            if flow.broken {
                pkt.mark_burst_broken();
                flow.broken = false;
            }
            return Some(Queued {
                pkt,
                enqueued,
                sub: 0,
            });
        }
    }

    fn is_empty(&self) -> bool {
        self.qlen == 0
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }

    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("dropped", self.dropped),
            ("dropped_aqm", self.stats.dropped),
            ("marked_aqm", self.stats.marked),
            ("new_flows", self.new_flow_count),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::codel::tests::{Sent, Wire, TP};
    use crate::elements::codel::{Codel, CodelParams};
    use crate::Rng;

    const MS: Nanos = 1_000_000;
    const SEED: u64 = 7;
    /// Two flows in different buckets with `SEED`.
    const A: u64 = 1;
    const B: u64 = 2;

    fn fq(limit: u64) -> Wire<FqCodel<TP>> {
        let q = FqCodel::new(&FqCodelParams::default(), limit, SEED);
        assert_ne!(q.bucket(A), q.bucket(B));
        Wire::new(q)
    }

    /// Arrivals of flow `flow`: `size` bytes every `gap` ns in [from, until).
    fn arrivals(flow: u64, size: u32, from: Nanos, until: Nanos, gap: Nanos) -> Vec<(Nanos, TP)> {
        (0..)
            .map(|k| (from + k * gap, k as u32))
            .take_while(|&(t, _)| t < until)
            .map(|(t, k)| (t, TP::new(size, flow, k)))
            .collect()
    }

    /// Feed merged arrivals in time order (stable: by the order given at equal times).
    fn run<Q: Queue<TP>>(w: &mut Wire<Q>, mut pkts: Vec<(Nanos, TP)>) -> Vec<bool> {
        pkts.sort_by_key(|p| p.0);
        let taken = pkts.into_iter().map(|(t, p)| w.arrive(t, p)).collect();
        w.advance(u64::MAX);
        taken
    }

    fn of(sent: &[Sent], flow: u64) -> impl Iterator<Item = &Sent> {
        sent.iter().filter(move |s| s.pkt.flow == flow)
    }

    #[test]
    fn hashing_is_stable_and_collides_like_random_placement() {
        // 1000 flows over 1024 buckets: 1024 (1 - (1 - 1/1024)^1000) = 638.5 buckets used
        // on average, so 361.5 keys share a bucket with an earlier one (sd ~ 10). An
        // unmixed hash (key mod 1024) would give 0 for consecutive keys.
        let expect = 1000.0 - 1024.0 * (1.0 - (1.0 - 1.0 / 1024.0f64).powi(1000));
        assert!((expect - 361.5).abs() < 0.1, "{expect}");
        let p = FqCodelParams::default();
        let key_sets: [&dyn Fn(u64) -> u64; 3] = [&|i| i, &|i| i << 32, &|i| (i << 48) | 443];
        let mut total = 0;
        let mut runs = 0;
        for seed in [1, 2, 3, 42, 0xdead_beef] {
            let q: FqCodel<TP> = FqCodel::new(&p, 0, seed);
            let q2: FqCodel<TP> = FqCodel::new(&p, 0, seed);
            for keys in key_sets {
                let mut used = vec![false; 1024];
                let mut colliding = 0;
                for i in 1..=1000 {
                    let b = q.bucket(keys(i));
                    assert_eq!(b, q2.bucket(keys(i)), "stable");
                    assert_eq!(b, q.bucket(keys(i)), "stable");
                    colliding += used[b] as u32;
                    used[b] = true;
                }
                assert!((325..=400).contains(&colliding), "seed {seed}: {colliding}");
                total += colliding;
                runs += 1;
            }
        }
        let mean = total as f64 / runs as f64;
        assert!((mean - expect).abs() < 10.0, "mean {mean}");
        // Another seed is another placement: about 1 key in 1024 keeps its bucket.
        let a: FqCodel<TP> = FqCodel::new(&p, 0, 1);
        let b: FqCodel<TP> = FqCodel::new(&p, 0, 2);
        let same = (1..=1000).filter(|&k| a.bucket(k) == b.bucket(k)).count();
        assert!(same < 8, "{same}");
    }

    #[test]
    fn drr_shares_the_link_in_bytes() {
        // A sends 10 packets for each of B's; both exceed half the link (1500 bytes/ms),
        // so both stay backlogged and each gets half, served in turns.
        let mut w = fq(u64::MAX);
        let mut pkts = arrivals(A, 1500, 0, 300 * MS, 100_000);
        pkts.extend(arrivals(B, 1500, 0, 300 * MS, MS));
        run(&mut w, pkts);
        let window: Vec<&Sent> = w.sent.iter().filter(|s| s.at < 300 * MS).collect();
        let b = window.iter().filter(|s| s.pkt.flow == B).count();
        assert_eq!(window.len(), 300);
        assert!((148..=152).contains(&b), "B got {b} of 300 (a FIFO: ~27)");
        // Turns: never more than two packets in a row from one flow (a 1514-byte quantum
        // sometimes lets a 1500-byte flow send twice).
        let longest = window
            .chunk_by(|x, y| x.pkt.flow == y.pkt.flow)
            .map(|c| c.len())
            .max()
            .unwrap();
        assert!(longest <= 2, "{longest}");

        // In bytes, not packets: B's packets are 300 bytes, so B sends ~5 for each of A's.
        let mut w = fq(u64::MAX);
        let mut pkts = arrivals(A, 1500, 0, 300 * MS, 100_000);
        pkts.extend(arrivals(B, 300, 0, 300 * MS, 200_000));
        run(&mut w, pkts);
        let bytes = |f| -> u64 {
            of(&w.sent, f)
                .filter(|s| s.at < 300 * MS)
                .map(|s| s.pkt.wire as u64)
                .sum()
        };
        let (a, b) = (bytes(A), bytes(B));
        assert!(a.abs_diff(b) <= 2 * 1514, "A {a} B {b}");
        assert!(a + b >= 299 * 1500, "the link stayed busy: {}", a + b);
    }

    #[test]
    fn a_new_flow_goes_ahead_of_a_backlogged_one() {
        // A has 49 packets waiting; B's one packet arrives at 10.5 ms and is sent next, at
        // 11 ms, ahead of A's 39 (a FIFO would send it at 50 ms).
        let mut w = fq(u64::MAX);
        let mut pkts: Vec<_> = (0..50).map(|k| (0, TP::new(1500, A, k))).collect();
        pkts.push((10_500_000, TP::new(1500, B, 0)));
        run(&mut w, pkts);
        let i = w.sent.iter().position(|s| s.pkt.flow == B).unwrap();
        assert_eq!(i, 11);
        assert_eq!((w.sent[i].at, w.sent[i].sojourn), (11 * MS, 500_000));
        assert_eq!(w.sent[i + 1].sojourn, 12 * MS, "A resumes behind it");
        // A's order is kept.
        let seqs: Vec<u32> = of(&w.sent, A).map(|s| s.pkt.seq).collect();
        assert_eq!(seqs, (0..50).collect::<Vec<_>>());
        assert_eq!(w.counter("new_flows"), 2);
    }

    #[test]
    fn overflow_cuts_half_of_the_fattest_flow_from_its_head() {
        // 30 000 bytes (20 packets) may wait. A0 goes on the wire, A1..A20 fill the buffer;
        // A21 overflows: A is the fattest (31 500 bytes) and loses 11 packets from its head
        // (16 500 bytes, the first count reaching half), A1..A11.
        let mut w = fq(30_000);
        for k in 0..=20 {
            assert!(w.arrive(0, TP::new(1500, A, k)));
        }
        assert_eq!(w.counter("dropped"), 0);
        assert!(w.arrive(0, TP::new(1500, A, 21)), "A21 itself was kept");
        assert_eq!(w.counter("dropped"), 11);
        assert_eq!(w.q.backlog_bytes(), 10 * 1500);
        let ia = w.q.bucket(A);
        assert_eq!(
            w.q.flows[ia].cvars.count, 11,
            "CoDel's count goes up as many"
        );
        let head = &w.q.flows[ia].queue[0].0;
        assert_eq!(head.seq, 12, "dropped from the head");
        // B's two packets and 78 more of A's: only A loses packets, B none.
        assert!(w.arrive(0, TP::new(1500, B, 0)));
        assert!(w.arrive(0, TP::new(1500, B, 1)));
        for k in 22..100 {
            w.arrive(0, TP::new(1500, A, k));
        }
        w.advance(u64::MAX);
        assert_eq!(of(&w.sent, B).count(), 2);
        let a: Vec<&Sent> = of(&w.sent, A).collect();
        assert_eq!(a.len() as u64 + w.counter("dropped"), 100);
        assert!(w.counter("dropped") > 11);
        // The first of A's sent after its losses is marked (its flow lost packets), as is
        // the first after each later cut; B's are not.
        assert!(!a[0].pkt.broken && a[1].pkt.broken && !a[2].pkt.broken);
        assert!(of(&w.sent, B).all(|s| !s.pkt.broken));

        // An arriving packet that is its own fattest flow is the one dropped.
        let mut w = fq(1000);
        assert!(w.arrive(0, TP::new(1500, A, 0)));
        assert!(!w.arrive(0, TP::new(1500, B, 0)));
        assert_eq!(w.counter("dropped"), 1);
        assert!(w.q.is_empty());
    }

    #[test]
    fn a_thin_flow_loses_nothing_while_a_fat_one_overflows() {
        // A at twice the link rate into a 30 000-byte buffer; B, one packet every 5 ms.
        let mut w = fq(30_000);
        let mut pkts = arrivals(A, 1500, 0, 500 * MS, 500_000);
        pkts.extend(arrivals(B, 1500, 0, 500 * MS, 5 * MS));
        let taken = run(&mut w, pkts);
        assert!(w.counter("dropped") >= 400, "{}", w.counter("dropped"));
        assert!(taken.iter().all(|&t| t), "room is made for every arrival");
        assert_eq!(of(&w.sent, B).count(), 100);
        let worst = of(&w.sent, B).map(|s| s.sojourn).max().unwrap();
        assert!(worst <= MS, "{worst}");
    }

    #[test]
    fn codel_drops_only_the_flow_with_a_standing_queue() {
        // A at 1.25x the link rate, B one packet every 10 ms; no byte limit, 3 s.
        let traffic = || {
            let mut pkts = arrivals(A, 1500, 0, 3_000 * MS, 800_000);
            pkts.extend(arrivals(B, 1500, 0, 3_000 * MS, 10 * MS));
            pkts
        };
        let mut w = fq(u64::MAX);
        run(&mut w, traffic());
        let drops = w.counter("dropped_aqm");
        assert!(drops >= 30, "{drops}");
        assert_eq!(of(&w.sent, A).count() as u64 + drops, 3_750);
        assert_eq!(of(&w.sent, B).count(), 300);
        assert!(of(&w.sent, B).all(|s| s.sojourn <= MS && !s.pkt.broken));
        // The packet sent after a drop is marked: at least one per drop unless several
        // were dropped at once.
        let broken = of(&w.sent, A).filter(|s| s.pkt.broken).count() as u64;
        assert!(broken >= 1 && broken <= drops, "{broken} of {drops}");
        // One CoDel for both (a single queue): B loses packets and waits behind A.
        let mut c = Wire::new(Codel::new(&CodelParams::default(), u64::MAX));
        run(&mut c, traffic());
        let b_sent = of(&c.sent, B).count();
        assert!(b_sent < 300, "{b_sent}");
        assert!(of(&c.sent, B).map(|s| s.sojourn).max().unwrap() > 5 * MS);

        // ECN-capable A: marked, not dropped; B untouched.
        let mut w = fq(u64::MAX);
        let pkts = traffic()
            .into_iter()
            .map(|(t, p)| (t, if p.flow == A { p.ect() } else { p }))
            .collect();
        run(&mut w, pkts);
        assert_eq!(w.counter("dropped_aqm"), 0);
        assert!(w.counter("marked_aqm") >= 30);
        assert_eq!(of(&w.sent, A).count(), 3_750);
        assert!(of(&w.sent, B).all(|s| !s.pkt.ce));
    }

    #[test]
    fn the_fattest_bucket_is_the_one_a_linear_scan_finds() {
        // Random backlog changes (many ties) over 64 buckets; after each, the heap's top
        // is the first bucket with the largest backlog, as Linux's scan picks.
        let mut rng = Rng::new(3);
        let mut heap = FatHeap::new(64);
        let mut backlog = [0u64; 64];
        for _ in 0..20_000 {
            let i = (rng.next_u64() % 64) as usize;
            backlog[i] = match rng.next_u64() % 4 {
                0 => 0,
                _ => (rng.next_u64() % 8) * 1500,
            };
            heap.set(i, backlog[i]);
            let mut scan = None;
            let mut max = 0;
            for (j, &b) in backlog.iter().enumerate() {
                if b > max {
                    max = b;
                    scan = Some(j);
                }
            }
            assert_eq!(heap.fattest(), scan);
            assert_eq!(heap.heap.len(), backlog.iter().filter(|&&b| b > 0).count());
        }
    }
}
