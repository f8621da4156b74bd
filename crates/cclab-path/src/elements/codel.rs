//! CoDel (RFC 8289), as Linux runs it (`include/net/codel.h`, `include/net/codel_impl.h`,
//! `net/sched/sch_codel.c`).
//!
//! CoDel looks at how long packets waited, not at how many wait. Every packet is stamped
//! when it arrives; when the wire asks for the next one, CoDel reads its sojourn time. A
//! queue whose sojourn stays at or above `target` (5 ms) for a whole `interval` (100 ms),
//! while more than one packet's worth of bytes waits, is a standing queue, not a burst:
//! CoDel drops the packet at the head and enters its dropping state. From then on it drops
//! again at `drop_next`, each time sooner: the n-th drop of a dropping period comes
//! `interval / sqrt(n)` after the previous one, so the drop rate grows slowly until the
//! senders back off and the sojourn falls below target, which ends the dropping state. If
//! the queue comes back soon after (within 16 intervals of the last scheduled drop), the
//! count of the last period is reused, as the drop rate that controlled the queue then is a
//! good place to start. An ECN-capable packet is marked CE instead of dropped (and sent).
//!
//! As in Linux, time is kept in units of 1024 ns in a wrapping 32-bit counter (compared
//! with serial-number arithmetic) and `1/sqrt(count)` is a 16-bit fixed-point number kept
//! up to date by one Newton step per change of count, so the gaps between drops are Linux's
//! (for example the second drop of a period comes after `interval / 2`, not
//! `interval / sqrt(2)`).
//!
//! The CoDel state machine here ([`CodelVars`], [`codel_dequeue`]) is shared with
//! FQ-CoDel, which runs one per flow.
//!
//! Differences from Linux:
//! - The limit is in bytes (`link.buffer`, as for the FIFO); sch_codel's is in packets. A
//!   packet that would push the waiting bytes over it is dropped on arrival (`"dropped"`).
//! - "Too little waits to drop" compares the bytes left after taking the head packet with
//!   the largest packet seen so far (`maxpacket`, updated as packets are examined at
//!   dequeue), as Linux did when it kept `maxpacket`; today's Linux compares with the
//!   device MTU. For MTU-sized packets the two agree.
//! - No `ce_threshold` (the link's `ecn_threshold` does that for every queue), and no cap
//!   on drops per dequeue (recent kernels stop at 256): the loop ends when the queue does.
//! - A packet sent after an AQM drop is marked [`Packet::mark_burst_broken`].

use crate::aqm::AqmParams;
use crate::element::Packet;
use crate::elements::fifo::Fifo;
use crate::queue::{Queue, Queued};
use crate::settings::{Given, Setting, SettingValue};
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

/// CoDel's settings, which FQ-CoDel takes too (it runs CoDel on each flow).
pub(crate) const CODEL_TARGET: Setting =
    Setting::time("target", 5_000_000, "acceptable standing queue delay");
pub(crate) const CODEL_INTERVAL: Setting = Setting::time("interval", 100_000_000, "CoDel's window");
pub(crate) const CODEL_ECN: Setting = Setting::flag(
    "ecn",
    true,
    "mark ECN-capable packets CE instead of dropping them",
);

impl AqmParams for CodelParams {
    fn marks_ecn(&self) -> bool {
        self.ecn
    }
    const NAME: &'static str = "codel";
    const TITLE: &'static str = "CoDel";
    /// What `[link.aqm]` may set for CoDel, with Linux's defaults (except `ecn`: cclab
    /// marks by default; Linux's sch_codel defaults to `noecn`).
    const SETTINGS: &'static [Setting] = &[CODEL_TARGET, CODEL_INTERVAL, CODEL_ECN];

    fn from_settings(g: &Given) -> Self {
        CodelParams {
            target_ns: g.time("target"),
            interval_ns: g.time("interval"),
            ecn: g.flag("ecn"),
        }
    }

    fn values(&self) -> Vec<SettingValue> {
        use SettingValue::*;
        vec![Time(self.target_ns), Time(self.interval_ns), Bool(self.ecn)]
    }

    fn queue<P: Packet + Send + 'static>(&self, limit_bytes: u64, _: u64) -> Box<dyn Queue<P>> {
        Box::new(Codel::new(self, limit_bytes))
    }
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams::from_settings(&Given::defaults(Self::SETTINGS))
    }
}

/// Time in CoDel's units: ns >> `CODEL_SHIFT` (1024 ns), wrapping in 32 bits.
pub(crate) type CodelTime = u32;

const CODEL_SHIFT: u32 = 10;
/// Bits of the fixed-point `1/sqrt(count)`.
const REC_INV_SQRT_BITS: u32 = 16;
/// Shift that turns `rec_inv_sqrt` into a 0.32 fixed-point fraction.
const REC_INV_SQRT_SHIFT: u32 = 32 - REC_INV_SQRT_BITS;

/// `ns` in CoDel's units.
pub(crate) fn codel_time(ns: Nanos) -> CodelTime {
    (ns >> CODEL_SHIFT) as u32
}

/// `a` is later than `b` (serial-number arithmetic, as the counters wrap).
fn after(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

fn after_eq(a: CodelTime, b: CodelTime) -> bool {
    (a.wrapping_sub(b) as i32) >= 0
}

fn before(a: CodelTime, b: CodelTime) -> bool {
    after(b, a)
}

/// The parameters in CoDel's units.
#[derive(Clone, Debug)]
pub(crate) struct CodelConfig {
    pub target: CodelTime,
    pub interval: CodelTime,
    pub ecn: bool,
}

impl CodelConfig {
    pub(crate) fn new(target_ns: Nanos, interval_ns: Nanos, ecn: bool) -> Self {
        CodelConfig {
            target: codel_time(target_ns),
            interval: codel_time(interval_ns),
            ecn,
        }
    }
}

/// One CoDel instance's state (Linux's `struct codel_vars`).
#[derive(Clone, Debug, Default)]
pub(crate) struct CodelVars {
    /// Drops (or marks) since the dropping state was entered, plus what was carried over.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// `1/sqrt(count)` in 0.16 fixed point.
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have stayed above target for an interval (0: it is below).
    pub first_above_time: CodelTime,
    /// When the next drop is due (or the last one was).
    pub drop_next: CodelTime,
    /// Sojourn of the last packet examined.
    pub ldelay: CodelTime,
}

impl CodelVars {
    /// One Newton iteration of `x <- x/2 * (3 - count * x^2)` towards `1/sqrt(count)`, in
    /// the same fixed point and with the same wrapping as Linux.
    fn newton_step(&mut self) {
        let x = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let x2 = ((x as u64 * x as u64) >> 32) as u32;
        let mut v = (3u64 << 32).wrapping_sub(self.count as u64 * x2 as u64);
        v >>= 2; // keeps the product below in 64 bits
        v = v.wrapping_mul(x as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (v >> REC_INV_SQRT_SHIFT) as u16;
    }
}

/// `t + interval / sqrt(count)`, with `1/sqrt(count)` as kept in `rec_inv_sqrt`.
fn control_law(t: CodelTime, interval: CodelTime, rec_inv_sqrt: u16) -> CodelTime {
    let scale = (rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
    t.wrapping_add(((interval as u64 * scale as u64) >> 32) as u32)
}

/// What CoDel counts, shared by all the instances of one queue (Linux's `codel_stats`).
#[derive(Clone, Debug, Default)]
pub(crate) struct CodelStats {
    /// The largest packet examined so far, bytes.
    pub maxpacket: u32,
    /// Packets dropped by the AQM.
    pub dropped: u64,
    /// Packets marked CE instead.
    pub marked: u64,
}

/// Where a CoDel instance takes its packets from: its FIFO (Linux's `dequeue_func`).
pub(crate) trait CodelSource<P> {
    /// Take the head packet (with its arrival time) out, and its bytes off the backlog.
    fn pop(&mut self) -> Option<(P, Nanos)>;
    /// The bytes still waiting that count against dropping (the whole qdisc's backlog).
    fn backlog(&self) -> u64;
}

/// Whether the packet just taken out says it is time to drop (Linux's `codel_should_drop`):
/// its sojourn has been at or above target, with more than a packet's worth left waiting,
/// for longer than an interval.
fn should_drop<P: Packet>(
    item: Option<&(P, Nanos)>,
    cfg: &CodelConfig,
    vars: &mut CodelVars,
    stats: &mut CodelStats,
    backlog: u64,
    now: CodelTime,
) -> bool {
    let Some((pkt, enqueued)) = item else {
        vars.first_above_time = 0;
        return false;
    };
    vars.ldelay = now.wrapping_sub(codel_time(*enqueued));
    let len = pkt.wire_len();
    if len > stats.maxpacket {
        stats.maxpacket = len;
    }
    if before(vars.ldelay, cfg.target) || backlog <= stats.maxpacket as u64 {
        // Below target (or nearly empty): it has to stay above for a whole interval again.
        vars.first_above_time = 0;
        return false;
    }
    if vars.first_above_time == 0 {
        vars.first_above_time = now.wrapping_add(cfg.interval);
        false
    } else {
        after(now, vars.first_above_time)
    }
}

/// Mark CE if ECN is on and the packet can take it.
fn try_mark<P: Packet>(cfg: &CodelConfig, stats: &mut CodelStats, item: &mut (P, Nanos)) -> bool {
    if cfg.ecn && item.0.is_ect() {
        item.0.set_ce();
        stats.marked += 1;
        true
    } else {
        false
    }
}

/// The next packet to send from `src` at `now`, after CoDel's drops and marks (Linux's
/// `codel_dequeue`). Drops are counted in `stats.dropped`.
pub(crate) fn codel_dequeue<P: Packet, S: CodelSource<P>>(
    src: &mut S,
    cfg: &CodelConfig,
    vars: &mut CodelVars,
    stats: &mut CodelStats,
    now_ns: Nanos,
) -> Option<(P, Nanos)> {
    let mut item = src.pop();
    if item.is_none() {
        vars.dropping = false;
        return None;
    }
    let now = codel_time(now_ns);
    let ok_to_drop = should_drop(item.as_ref(), cfg, vars, stats, src.backlog(), now);
    if vars.dropping {
        if !ok_to_drop {
            // The sojourn went below target: the dropping state ends.
            vars.dropping = false;
        } else {
            // Drop (or mark) for every drop time already passed; a long queue may owe
            // several at once.
            while vars.dropping && after_eq(now, vars.drop_next) {
                let Some(it) = item.as_mut() else { break };
                vars.count = vars.count.wrapping_add(1);
                vars.newton_step();
                if try_mark(cfg, stats, it) {
                    vars.drop_next = control_law(vars.drop_next, cfg.interval, vars.rec_inv_sqrt);
                    return item;
                }
                stats.dropped += 1;
                item = src.pop();
                if should_drop(item.as_ref(), cfg, vars, stats, src.backlog(), now) {
                    vars.drop_next = control_law(vars.drop_next, cfg.interval, vars.rec_inv_sqrt);
                } else {
                    vars.dropping = false;
                }
            }
        }
    } else if ok_to_drop {
        // Enter the dropping state with this packet.
        if let Some(it) = item.as_mut() {
            if !try_mark(cfg, stats, it) {
                stats.dropped += 1;
                item = src.pop();
                // Only for what it updates (first_above_time, ldelay, maxpacket).
                should_drop(item.as_ref(), cfg, vars, stats, src.backlog(), now);
            }
        }
        vars.dropping = true;
        // Back soon after the last dropping period: start from the drop rate it reached.
        let delta = vars.count.wrapping_sub(vars.lastcount);
        if delta > 1
            && before(
                now.wrapping_sub(vars.drop_next),
                cfg.interval.wrapping_mul(16),
            )
        {
            vars.count = delta;
            vars.newton_step();
        } else {
            vars.count = 1;
            vars.rec_inv_sqrt = (u32::MAX >> REC_INV_SQRT_SHIFT) as u16;
        }
        vars.lastcount = vars.count;
        vars.drop_next = control_law(now, cfg.interval, vars.rec_inv_sqrt);
    }
    item
}

/// The drop-tail FIFO under CoDel: its head and its backlog, as a [`CodelSource`].
impl<P: Packet + Send> CodelSource<P> for Fifo<P> {
    fn pop(&mut self) -> Option<(P, Nanos)> {
        Queue::dequeue(self, 0).map(|q| (q.pkt, q.enqueued))
    }
    fn backlog(&self) -> u64 {
        self.backlog_bytes()
    }
}

/// A CoDel queue: a drop-tail FIFO limited to `limit_bytes` waiting, CoDel at its head.
pub struct Codel<P> {
    cfg: CodelConfig,
    vars: CodelVars,
    stats: CodelStats,
    fifo: Fifo<P>,
    /// The AQM dropped a packet since the last one sent.
    broken: bool,
}

impl<P: Packet + Send> Codel<P> {
    pub fn new(params: &CodelParams, limit_bytes: u64) -> Self {
        Codel {
            cfg: CodelConfig::new(params.target_ns, params.interval_ns, params.ecn),
            vars: CodelVars::default(),
            stats: CodelStats::default(),
            fifo: Fifo::new(limit_bytes),
            broken: false,
        }
    }
}

impl<P: Packet + Send> Queue<P> for Codel<P> {
    fn enqueue(&mut self, now: Nanos, pkt: P, extra: u64) -> bool {
        self.fifo.enqueue(now, pkt, extra)
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Queued<P>> {
        let dropped_before = self.stats.dropped;
        let item = codel_dequeue(
            &mut self.fifo,
            &self.cfg,
            &mut self.vars,
            &mut self.stats,
            now,
        );
        self.broken |= self.stats.dropped != dropped_before;
        let (mut pkt, enqueued) = item?;
        if self.broken {
            pkt.mark_burst_broken();
            self.broken = false;
        }
        Some(Queued {
            pkt,
            enqueued,
            sub: 0,
        })
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
        let mut c = self.fifo.counters();
        c.push(("dropped_aqm", self.stats.dropped));
        c.push(("marked_aqm", self.stats.marked));
        c
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A test packet with what CoDel and FQ-CoDel look at.
    #[derive(Clone, Debug, Default)]
    pub(crate) struct TP {
        pub wire: u32,
        pub flow: u64,
        pub seq: u32,
        pub ect: bool,
        pub ce: bool,
        pub broken: bool,
    }

    impl TP {
        pub fn new(wire: u32, flow: u64, seq: u32) -> Self {
            TP {
                wire,
                flow,
                seq,
                ..TP::default()
            }
        }
        pub fn ect(mut self) -> Self {
            self.ect = true;
            self
        }
    }

    impl Packet for TP {
        fn wire_len(&self) -> u32 {
            self.wire
        }
        fn is_ect(&self) -> bool {
            self.ect || self.ce
        }
        fn set_ce(&mut self) {
            self.ce = true;
        }
        fn flow_key(&self) -> u64 {
            self.flow
        }
        fn mark_burst_broken(&mut self) {
            self.broken = true;
        }
    }

    /// Wire time at 12 Mbit/s: 1500 bytes take 1 ms.
    pub(crate) fn tx(len: u32) -> Nanos {
        len as u64 * 2_000 / 3
    }

    /// A packet as it went on the wire.
    #[derive(Debug)]
    pub(crate) struct Sent {
        pub at: Nanos,
        pub sojourn: Nanos,
        pub pkt: TP,
    }

    /// A 12 Mbit/s wire serving a queue the way [`crate::elements::Link`] does: a packet
    /// finding the wire free and the queue empty goes at once; otherwise it is enqueued,
    /// and the queue is asked for the next packet exactly when the wire frees up.
    pub(crate) struct Wire<Q> {
        pub q: Q,
        busy_until: Option<Nanos>,
        pub sent: Vec<Sent>,
        /// Called after every dequeue with its time.
        pub after_dequeue: fn(&Q, Nanos, &mut Vec<Event>),
        pub events: Vec<Event>,
        /// Wire time multiplier (1: 12 Mbit/s).
        pub scale: u64,
    }

    /// What a test records after a dequeue.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub(crate) struct Event {
        pub at: Nanos,
        pub count: u32,
        pub drop_next: CodelTime,
        pub acted: u64,
    }

    impl<Q: Queue<TP>> Wire<Q> {
        pub fn new(q: Q) -> Self {
            Wire {
                q,
                busy_until: None,
                sent: Vec::new(),
                after_dequeue: |_, _, _| {},
                events: Vec::new(),
                scale: 1,
            }
        }

        fn send(&mut self, start: Nanos, enqueued: Nanos, pkt: TP) {
            self.busy_until = Some(start + tx(pkt.wire) * self.scale);
            self.sent.push(Sent {
                at: start,
                sojourn: start - enqueued,
                pkt,
            });
        }

        /// Serve everything the wire finishes by `t`.
        pub fn advance(&mut self, t: Nanos) {
            while let Some(done) = self.busy_until {
                if done > t {
                    break;
                }
                self.busy_until = None;
                let next = self.q.dequeue(done);
                (self.after_dequeue)(&self.q, done, &mut self.events);
                if let Some(n) = next {
                    self.send(done.max(n.enqueued), n.enqueued, n.pkt);
                }
            }
        }

        /// `pkt` arrives at `t`: whether it was taken in.
        pub fn arrive(&mut self, t: Nanos, pkt: TP) -> bool {
            self.advance(t);
            if self.busy_until.is_none() {
                assert!(self.q.is_empty());
                self.send(t, t, pkt);
                true
            } else {
                self.q.enqueue(t, pkt, 0)
            }
        }

        pub fn counter(&self, name: &str) -> u64 {
            self.q
                .counters()
                .into_iter()
                .find(|(k, _)| *k == name)
                .map_or(0, |(_, v)| v)
        }
    }

    const MS: Nanos = 1_000_000;

    fn codel(ecn: bool) -> Wire<Codel<TP>> {
        let p = CodelParams {
            ecn,
            ..CodelParams::default()
        };
        let mut w = Wire::new(Codel::new(&p, u64::MAX));
        w.after_dequeue = |q, at, ev| {
            let acted = q.stats.dropped + q.stats.marked;
            if ev.last().map_or(0, |e| e.acted) != acted {
                ev.push(Event {
                    at,
                    count: q.vars.count,
                    drop_next: q.vars.drop_next,
                    acted,
                });
            }
        };
        w
    }

    /// Arrivals every `gap` ns from `from` until `until`, packets of 1500 bytes.
    fn feed(w: &mut Wire<Codel<TP>>, from: Nanos, until: Nanos, gap: Nanos, ect: bool) {
        let mut t = from;
        let mut seq = 0;
        while t < until {
            let p = TP::new(1500, 1, seq);
            w.arrive(t, if ect { p.ect() } else { p });
            seq += 1;
            t += gap;
        }
    }

    /// Linux's 1/sqrt(count) sequence in floating point: one Newton step per increment.
    fn newton_reference(counts: u32) -> Vec<f64> {
        let mut x = 1.0f64;
        let mut out = vec![x];
        for n in 2..=counts {
            x = x / 2.0 * (3.0 - n as f64 * x * x);
            out.push(x);
        }
        out
    }

    #[test]
    fn a_standing_queue_is_dropped_after_one_interval() {
        // 1.11x the link rate: packet k arrives at 0.9k ms and leaves at k ms, so its
        // sojourn is 0.1k ms. It reaches target (4882 units of 1024 ns) at k = 50; the
        // first drop comes at the first dequeue more than an interval (97656 units) later.
        let mut w = codel(false);
        feed(&mut w, 0, 400 * MS, 900_000, false);
        w.advance(u64::MAX);
        let above = |s: &Sent| codel_time(s.at).wrapping_sub(codel_time(s.at - s.sojourn)) >= 4882;
        let first_above = w.sent.iter().find(|s| above(s)).unwrap().at;
        assert_eq!(first_above, 50 * MS);
        let expect = (1..)
            .map(|k| k * MS)
            .find(|&t| codel_time(t) > codel_time(first_above) + 97_656)
            .unwrap();
        assert_eq!(expect, 151 * MS);
        let first = w.events[0];
        assert_eq!((first.at, first.count), (expect, 1));
        // The dropped packets are gone: sent + dropped = arrived.
        let arrived = 400 * MS / 900_000 + 1;
        assert_eq!(w.sent.len() as u64 + w.counter("dropped_aqm"), arrived);
        // The packet sent after each drop is marked as a broken burst; no other is.
        let broken = w.sent.iter().filter(|s| s.pkt.broken).count();
        assert_eq!(broken, w.events.len());
        assert!(w.events.len() >= 4, "{:?}", w.events);
    }

    #[test]
    fn drop_spacing_follows_the_fixed_point_control_law() {
        let mut w = codel(false);
        feed(&mut w, 0, 2_000 * MS, 900_000, false);
        w.advance(u64::MAX);
        let ev = &w.events;
        assert!(ev.len() >= 12, "{} drops", ev.len());
        // One dropping period, count 1, 2, 3...
        for (i, e) in ev.iter().enumerate() {
            assert_eq!(e.count, i as u32 + 1);
        }
        let interval = 97_656f64;
        let x = newton_reference(12);
        for i in 1..12 {
            // drop_next advances by interval * rec_inv_sqrt(count), Linux's Newton value...
            let gap = ev[i].drop_next.wrapping_sub(ev[i - 1].drop_next) as f64;
            let newton = interval * x[i];
            assert!(
                (gap - newton).abs() <= 3.0,
                "count {}: gap {gap} vs {newton}",
                i + 1
            );
            // ...which approaches interval/sqrt(count) (0.5 vs 0.707 at count 2).
            let ideal = interval / ((i + 1) as f64).sqrt();
            let err = (gap - ideal).abs() / ideal;
            if i + 1 >= 6 {
                assert!(err < 0.015, "count {}: {gap} vs {ideal}", i + 1);
            }
            if i + 1 == 2 {
                assert!((gap / interval - 0.5).abs() < 1e-3, "{gap}");
            }
            // A drop happens at the first dequeue (every 1 ms) at or after drop_next.
            let due = ev[i - 1].drop_next;
            let at = codel_time(ev[i].at);
            assert!(
                after_eq(at, due) && at.wrapping_sub(due) <= codel_time(MS) + 1,
                "drop {} at {at}, due {due}",
                i + 1
            );
        }
    }

    #[test]
    fn below_target_or_for_less_than_an_interval_it_never_drops() {
        let mut w = codel(false);
        // Bursts of 4 every 4.5 ms (89% load): sojourns up to 3 ms, for 10 s.
        for k in 0..2_222u64 {
            for j in 0..4 {
                w.arrive(k * 4_500_000, TP::new(1500, 1, j));
            }
        }
        // Then a burst of 30 every second: sojourn above target for ~25 ms at a time.
        for k in 0..5u64 {
            for j in 0..30 {
                w.arrive(10_000 * MS + k * 1_000 * MS, TP::new(1500, 1, j));
            }
        }
        w.advance(u64::MAX);
        let max = w.sent.iter().map(|s| s.sojourn).max().unwrap();
        assert!(max >= 28 * MS, "the queue did build: {max}");
        assert_eq!(w.counter("dropped_aqm"), 0);
        assert_eq!(w.sent.len(), 2_222 * 4 + 5 * 30);
    }

    #[test]
    fn nothing_is_dropped_while_at_most_maxpacket_is_left_waiting() {
        // A 600 kbit/s wire (1500 bytes in 20 ms). `burst` packets at 0, then one every
        // 20 ms (half-way between departures): after each dequeue `burst - 1` packets are
        // left waiting, and the head has waited ~30 ms or more, far above target, for 6 s.
        let run = |burst: u32| {
            let mut w = codel(false);
            w.scale = 20;
            for j in 0..burst {
                w.arrive(j as Nanos * 1_000, TP::new(1500, 1, j));
            }
            for k in 0..300u64 {
                w.arrive(10 * MS + k * 20 * MS, TP::new(1500, 1, 0));
            }
            w.advance(u64::MAX);
            let min = w.sent[2..300].iter().map(|s| s.sojourn).min().unwrap();
            (w.counter("dropped_aqm"), min)
        };
        // One packet (1500 bytes = maxpacket) left: never a drop.
        let (drops, min) = run(2);
        assert!(min >= 29 * MS, "{min}");
        assert_eq!(drops, 0);
        // Two left: dropped once the interval has passed, which leaves one: no more.
        let (drops, min) = run(3);
        assert!(min >= 29 * MS, "{min}");
        assert_eq!(drops, 1);
    }

    #[test]
    fn ecn_capable_packets_are_marked_not_dropped() {
        let mut w = codel(true);
        feed(&mut w, 0, 1_000 * MS, 900_000, true);
        w.advance(u64::MAX);
        assert_eq!(w.counter("dropped_aqm"), 0);
        let marks = w.counter("marked_aqm");
        assert!(marks >= 6, "{marks}");
        let ce = w.sent.iter().filter(|s| s.pkt.ce).count() as u64;
        assert_eq!(ce, marks, "every mark is on a packet that was sent");
        assert_eq!(w.sent.len() as u64, 1_000 * MS / 900_000 + 1);
        // Marks follow the same schedule as drops would.
        let mut d = codel(false);
        feed(&mut d, 0, 1_000 * MS, 900_000, false);
        d.advance(u64::MAX);
        assert_eq!(w.events[0].at, d.events[0].at);
        assert_eq!(w.events[1].at, d.events[1].at);
        assert_eq!(w.events[1].count, 2);
        // Not ECN-capable: dropped even with ECN on.
        let mut n = codel(true);
        feed(&mut n, 0, 1_000 * MS, 900_000, false);
        n.advance(u64::MAX);
        assert_eq!(n.counter("marked_aqm"), 0);
        assert!(n.counter("dropped_aqm") >= 6);
        // ECN off: ECN-capable packets are dropped.
        let mut o = codel(false);
        feed(&mut o, 0, 1_000 * MS, 900_000, true);
        o.advance(u64::MAX);
        assert_eq!(o.counter("marked_aqm"), 0);
        assert!(o.counter("dropped_aqm") >= 6);
    }

    #[test]
    fn the_byte_limit_drops_on_arrival() {
        let mut w = Wire::new(Codel::new(&CodelParams::default(), 3000));
        let taken: Vec<bool> = (0..4).map(|j| w.arrive(0, TP::new(1500, 1, j))).collect();
        // One on the wire, two waiting (3000 bytes), the fourth dropped.
        assert_eq!(taken, [true, true, true, false]);
        assert_eq!(w.counter("dropped"), 1);
        assert_eq!(w.q.backlog_bytes(), 3000);
        // What is left of a GSO packet on the wire counts as waiting too.
        let mut q: Codel<TP> = Codel::new(&CodelParams::default(), 3000);
        assert!(q.enqueue(0, TP::new(1500, 1, 0), 0));
        assert!(!q.enqueue(0, TP::new(1500, 1, 1), 1));
        assert!(q.enqueue(0, TP::new(1000, 1, 2), 500));
        assert_eq!((q.backlog_bytes(), q.counters()[0]), (2500, ("dropped", 1)));
        w.advance(u64::MAX);
        assert_eq!(w.sent.len(), 3);
    }

    #[test]
    fn a_queue_back_soon_resumes_from_the_last_drop_rate() {
        // Overload until count reaches several, a pause that drains the queue, overload
        // again: re-entering within 16 intervals of drop_next starts at count - lastcount.
        let run = |pause: Nanos| {
            let mut w = codel(false);
            feed(&mut w, 0, 900 * MS, 900_000, false);
            w.advance(u64::MAX);
            let before = *w.events.last().unwrap();
            let restart = 900 * MS + pause;
            let mut t = restart;
            let mut seq = 0;
            while t < restart + 600 * MS {
                w.arrive(t, TP::new(1500, 1, seq));
                seq += 1;
                t += 900_000;
            }
            w.advance(u64::MAX);
            let again = *w.events.iter().find(|e| e.at > restart).unwrap();
            (before, again)
        };
        let (before, again) = run(300 * MS);
        assert!(before.count >= 4, "{before:?}");
        assert_eq!(again.count, before.count - 1, "lastcount was 1");
        let (_, fresh) = run(2_000 * MS);
        assert_eq!(fresh.count, 1, "too long a pause starts afresh");
    }
}
