//! PIE (RFC 8033) as Linux implements it (`net/sched/sch_pie.c`, `include/net/pie.h`).
//!
//! PIE decides at enqueue: a packet is dropped (or marked CE, while the drop probability is
//! at most 10%) with a probability that a controller updates every `tupdate` from the queue
//! delay, its distance to `target` (alpha) and its trend (beta). As in Linux:
//! - the queue delay is the sojourn of the packet last dequeued (0 once the queue is empty),
//!   or with `dq_rate_estimator` the backlog over the measured departure rate;
//! - the probability is the kernel's fixed point (1.0 = `u64::MAX >> 8`), with the same
//!   alpha/beta scaling at low probabilities, 2% step cap, +2% above 250 ms, 1/64 decay when
//!   the delay was 0 twice, and overflow rules (it may exceed 1.0, as in Linux);
//! - no early drop while the burst allowance (150 ms of dequeueing) lasts, while the delay is
//!   under target/2 and the probability under 20%, or while fewer than two MTUs (1500 bytes
//!   here) wait; drops are de-randomised with the accumulated probability;
//! - times are in psched ticks (64 ns).
//!
//! Differences: the limit is in bytes (`link.buffer`; Linux counts packets, 1000 by
//! default); there is no timer: every call first runs the updates that fell due since the
//! last one, at multiples of `tupdate` from the first packet (Linux: a timer, first fired
//! 500 ms after the qdisc is created). At most [`MAX_CATCH_UP`] are run at once: after a
//! long idle the probability has long decayed to 0, where further updates change nothing.

use crate::aqm::AqmParams;
use crate::element::Packet;
use crate::queue::{Queue, Queued};
use crate::settings::{Given, Setting, SettingValue};
use crate::{streams, Nanos, Rng};
use std::collections::VecDeque;

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

impl AqmParams for PieParams {
    fn marks_ecn(&self) -> bool {
        self.ecn
    }
    const NAME: &'static str = "pie";
    const TITLE: &'static str = "PIE";
    /// What `[link.aqm]` may set for PIE, with Linux's defaults (except `ecn`: cclab marks
    /// by default; Linux's sch_pie defaults to `noecn`).
    const SETTINGS: &'static [Setting] = &[
        Setting::time("target", 15_000_000, "target queue delay"),
        Setting::time(
            "tupdate",
            15_000_000,
            "how often the drop probability is updated",
        ),
        Setting::int("alpha", 2, (0, 32), "1/16", "gain on the distance to target"),
        Setting::int("beta", 20, (0, 32), "1/16", "gain on the queue delay's trend"),
        Setting::time_or_zero("max_burst", 150_000_000, "burst allowance"),
        Setting::flag(
            "ecn",
            true,
            "mark ECN-capable packets CE instead of dropping them while the drop probability is at most 10%",
        ),
        Setting::flag(
            "bytemode",
            false,
            "scale the drop probability by packet size",
        ),
        Setting::flag(
            "dq_rate_estimator",
            false,
            "queue delay from the departure rate instead of timestamps",
        ),
    ];

    fn from_settings(g: &Given) -> Self {
        PieParams {
            target_ns: g.time("target"),
            tupdate_ns: g.time("tupdate"),
            alpha: g.int32("alpha"),
            beta: g.int32("beta"),
            max_burst_ns: g.time("max_burst"),
            ecn: g.flag("ecn"),
            bytemode: g.flag("bytemode"),
            dq_rate_estimator: g.flag("dq_rate_estimator"),
        }
    }

    fn values(&self) -> Vec<SettingValue> {
        use SettingValue::*;
        vec![
            Time(self.target_ns),
            Time(self.tupdate_ns),
            Int(self.alpha as u64),
            Int(self.beta as u64),
            Time(self.max_burst_ns),
            Bool(self.ecn),
            Bool(self.bytemode),
            Bool(self.dq_rate_estimator),
        ]
    }

    /// The drop decisions draw from the run's seed (their own stream).
    fn queue<P: Packet + Send + 'static>(&self, limit_bytes: u64, seed: u64) -> Box<dyn Queue<P>> {
        Box::new(Pie::new(self, limit_bytes, Rng::derive(seed, streams::AQM)))
    }
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams::from_settings(&Given::defaults(Self::SETTINGS))
    }
}

/// A drop probability of 1.0 in the kernel's fixed point.
const MAX_PROB: u64 = u64::MAX >> 8;
/// psched ticks are 64 ns.
const PSCHED_SHIFT: u32 = 6;
const TICKS_PER_SEC: u64 = 1_000_000_000 >> PSCHED_SHIFT;
/// The device MTU Linux reads (`psched_mtu`); wire lengths here are IP packets.
const MTU: u64 = 1500;
/// Backlog (bytes) above which the departure rate is measured (`dq_rate_estimator`).
const QUEUE_THRESHOLD: u64 = 16384;
/// Fixed-point shift of the measured departure rate.
const PIE_SCALE: u32 = 8;
/// Most probability updates run by one call (see the module docs).
const MAX_CATCH_UP: u32 = 10_000;

fn ticks(ns: Nanos) -> u64 {
    ns >> PSCHED_SHIFT
}

/// The controller's state (Linux `struct pie_vars`); times in ticks.
#[derive(Clone, Debug, PartialEq)]
struct Vars {
    qdelay: u64,
    qdelay_old: u64,
    burst_time: u64,
    /// Last dequeue (or start of a rate measurement); `None` is Linux's DTIME_INVALID.
    dq_tstamp: Option<u64>,
    prob: u64,
    accu_prob: u64,
    /// Bytes dequeued in the current rate measurement; `None` when not measuring.
    dq_count: Option<u64>,
    avg_dq_rate: u32,
}

impl Vars {
    /// Linux `pie_vars_init`: restores the burst allowance and restarts the measurements
    /// (the probability and the delays are kept).
    fn restart(&mut self, max_burst: u64) {
        self.burst_time = max_burst;
        self.dq_tstamp = None;
        self.accu_prob = 0;
        self.dq_count = None;
        self.avg_dq_rate = 0;
    }
}

/// A PIE queue limited to `limit_bytes` waiting.
pub struct Pie<P> {
    target: u64,
    max_burst: u64,
    tupdate_ns: Nanos,
    alpha: u32,
    beta: u32,
    ecn: bool,
    bytemode: bool,
    dq_rate_estimator: bool,
    limit_bytes: u64,
    queue: VecDeque<(P, Nanos)>,
    backlog: u64,
    vars: Vars,
    rng: Rng,
    /// When the next probability update is due; `None` before the first packet.
    next_update: Option<Nanos>,
    dropped: u64,
    dropped_aqm: u64,
    marked_aqm: u64,
}

impl<P: Packet + Send> Pie<P> {
    pub fn new(params: &PieParams, limit_bytes: u64, rng: Rng) -> Self {
        let max_burst = ticks(params.max_burst_ns);
        let mut vars = Vars {
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: None,
            prob: 0,
            accu_prob: 0,
            dq_count: None,
            avg_dq_rate: 0,
        };
        vars.restart(max_burst);
        Pie {
            target: ticks(params.target_ns),
            max_burst,
            tupdate_ns: params.tupdate_ns,
            alpha: params.alpha,
            beta: params.beta,
            ecn: params.ecn,
            bytemode: params.bytemode,
            dq_rate_estimator: params.dq_rate_estimator,
            limit_bytes,
            queue: VecDeque::new(),
            backlog: 0,
            vars,
            rng,
            next_update: None,
            dropped: 0,
            dropped_aqm: 0,
            marked_aqm: 0,
        }
    }

    /// Run the probability updates due by `now` (the first call starts the schedule).
    fn catch_up(&mut self, now: Nanos) {
        if self.tupdate_ns == 0 {
            return;
        }
        let Some(mut next) = self.next_update else {
            self.next_update = Some(now.saturating_add(self.tupdate_ns));
            return;
        };
        let mut n = 0;
        while next <= now && n < MAX_CATCH_UP {
            self.calculate_probability();
            next = next.saturating_add(self.tupdate_ns);
            n += 1;
        }
        if next <= now {
            // Too many to run: skip to the first one after `now`, on the same grid.
            let skipped = (now - next) / self.tupdate_ns + 1;
            next = next.saturating_add(skipped.saturating_mul(self.tupdate_ns));
        }
        self.next_update = Some(next);
    }

    /// Linux `pie_drop_early`: whether a packet of `len` bytes arriving with `backlog`
    /// bytes waiting is to be dropped (or marked).
    fn drop_early(&mut self, backlog: u64, len: u64) -> bool {
        let v = &mut self.vars;
        if v.burst_time > 0 {
            return false;
        }
        if v.qdelay < self.target / 2 && v.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * MTU {
            return false;
        }
        let local_prob = if self.bytemode && len <= MTU {
            len.wrapping_mul(v.prob / MTU)
        } else {
            v.prob
        };
        if local_prob == 0 {
            v.accu_prob = 0;
        } else {
            v.accu_prob = v.accu_prob.wrapping_add(local_prob);
        }
        if v.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if v.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (self.rng.next_u64() >> 8) < local_prob {
            v.accu_prob = 0;
            return true;
        }
        false
    }

    /// Linux `pie_process_dequeue`: a packet of `len` bytes that arrived at `enqueued`
    /// leaves at `now`, `self.backlog` bytes stay behind.
    fn process_dequeue(&mut self, now: Nanos, enqueued: Nanos, len: u64) {
        let now = ticks(now);
        let backlog = self.backlog;
        let v = &mut self.vars;
        let dtime;
        if !self.dq_rate_estimator {
            v.qdelay = now.saturating_sub(ticks(enqueued));
            dtime = v.dq_tstamp.map_or(0, |t| now.saturating_sub(t));
            v.dq_tstamp = Some(now);
            if backlog == 0 {
                v.qdelay = 0;
            }
            if dtime == 0 {
                return;
            }
        } else {
            if backlog >= QUEUE_THRESHOLD && v.dq_count.is_none() {
                v.dq_tstamp = Some(now);
                v.dq_count = Some(0);
            }
            let Some(count) = v.dq_count else { return };
            let count = count + len;
            v.dq_count = Some(count);
            if count < QUEUE_THRESHOLD {
                return;
            }
            dtime = now.saturating_sub(v.dq_tstamp.unwrap_or(now));
            if dtime == 0 {
                return;
            }
            let rate = ((count << PIE_SCALE) / dtime) as u32;
            v.avg_dq_rate = if v.avg_dq_rate == 0 {
                rate
            } else {
                v.avg_dq_rate - (v.avg_dq_rate >> 3) + (rate >> 3)
            };
            if backlog < QUEUE_THRESHOLD {
                v.dq_count = None;
            } else {
                v.dq_count = Some(0);
                v.dq_tstamp = Some(now);
            }
        }
        v.burst_time = v.burst_time.saturating_sub(dtime);
    }

    /// Linux `pie_calculate_probability`, run every `tupdate`.
    fn calculate_probability(&mut self) {
        let backlog = self.backlog;
        let target = self.target;
        let v = &mut self.vars;
        let (qdelay, qdelay_old) = if self.dq_rate_estimator {
            let old = v.qdelay;
            v.qdelay_old = v.qdelay;
            let q = if v.avg_dq_rate > 0 {
                (backlog << PIE_SCALE) / v.avg_dq_rate as u64
            } else {
                0
            };
            (q, old)
        } else {
            (v.qdelay, v.qdelay_old)
        };
        // A delay of 0 with packets waiting: too few to tell; no 1/64 decay this round.
        let mut update_prob = !(qdelay == 0 && backlog != 0);

        // alpha and beta (1/16 units) per tick, scaled down at low probabilities.
        let mut alpha = (self.alpha as u64 * (MAX_PROB / TICKS_PER_SEC)) >> 4;
        let mut beta = (self.beta as u64 * (MAX_PROB / TICKS_PER_SEC)) >> 4;
        if v.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100u64;
            while v.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        // Two's complement, as the kernel's u64 arithmetic assigned to an s64.
        let mut delta = (alpha.wrapping_mul(qdelay.wrapping_sub(target)) as i64)
            .wrapping_add(beta.wrapping_mul(qdelay.wrapping_sub(qdelay_old)) as i64);
        let oldprob = v.prob;
        if delta > (MAX_PROB / 50) as i64 && v.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        if qdelay > ticks(250_000_000) {
            delta = delta.wrapping_add((MAX_PROB / 50) as i64);
        }
        v.prob = v.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if v.prob < oldprob {
                v.prob = MAX_PROB;
                update_prob = false;
            }
        } else if v.prob > oldprob {
            v.prob = 0;
        }
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            v.prob -= v.prob / 64;
        }
        v.qdelay = qdelay;
        if v.qdelay < target / 2
            && v.qdelay_old < target / 2
            && v.prob == 0
            && (!self.dq_rate_estimator || v.avg_dq_rate > 0)
        {
            v.restart(self.max_burst);
        }
        if !self.dq_rate_estimator {
            v.qdelay_old = qdelay;
        }
    }

    /// The drop probability now, in [0, 1] (Linux's can exceed 1.0; read as 1.0).
    pub fn drop_probability(&self) -> f64 {
        (self.vars.prob as f64 / MAX_PROB as f64).min(1.0)
    }
}

impl<P: Packet + Send> Queue<P> for Pie<P> {
    fn enqueue(&mut self, now: Nanos, mut pkt: P, extra: u64) -> bool {
        self.catch_up(now);
        let len = pkt.wire_len() as u64;
        let waiting = self.backlog + extra;
        let take = if waiting + len > self.limit_bytes {
            self.dropped += pkt.segments() as u64;
            false
        } else if !self.drop_early(waiting, len) {
            true
        } else if self.ecn && self.vars.prob <= MAX_PROB / 10 && pkt.is_ect() {
            pkt.set_ce();
            self.marked_aqm += pkt.segments() as u64;
            true
        } else {
            self.dropped_aqm += pkt.segments() as u64;
            false
        };
        if !take {
            self.vars.accu_prob = 0;
            return false;
        }
        self.backlog += len;
        self.queue.push_back((pkt, now));
        true
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Queued<P>> {
        self.catch_up(now);
        let (pkt, enqueued) = self.queue.pop_front()?;
        let len = pkt.wire_len() as u64;
        self.backlog -= len;
        self.process_dequeue(now, enqueued, len);
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

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("dropped", self.dropped),
            ("dropped_aqm", self.dropped_aqm),
            ("marked_aqm", self.marked_aqm),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    const MS: Nanos = 1_000_000;

    /// An ECN-capable test packet.
    #[derive(Debug)]
    struct E {
        ce: bool,
    }

    impl Packet for E {
        fn wire_len(&self) -> u32 {
            1500
        }
        fn is_ect(&self) -> bool {
            true
        }
        fn set_ce(&mut self) {
            self.ce = true;
        }
    }

    fn p1500() -> P {
        P::new(1500)
    }

    fn ect() -> E {
        E { ce: false }
    }

    fn pie<T: Packet + Send>(params: &PieParams) -> Pie<T> {
        Pie::new(params, 1 << 40, Rng::new(42))
    }

    fn counter<T: Packet + Send>(q: &Pie<T>, name: &str) -> u64 {
        q.counters().into_iter().find(|c| c.0 == name).unwrap().1
    }

    /// A queue holding `n` packets at time 0, with the controller set to `prob` and
    /// `qdelay` and no burst allowance left (no update falls due at time 0).
    fn primed<T: Packet + Send>(
        params: &PieParams,
        n: usize,
        prob: u64,
        qdelay: Nanos,
        mk: impl Fn() -> T,
    ) -> Pie<T> {
        let mut q = pie::<T>(params);
        for _ in 0..n {
            assert!(q.enqueue(0, mk(), 0));
        }
        q.vars.prob = prob;
        q.vars.qdelay = ticks(qdelay);
        q.vars.burst_time = 0;
        q
    }

    /// 1500-byte packets served every 1 ms (12 Mbit/s), arriving `load` times as fast,
    /// for `secs`: the sojourns (time, ns) of what left, and the queue.
    fn overload(params: &PieParams, load: f64, secs: u64) -> (Vec<(Nanos, Nanos)>, Pie<P>) {
        let mut q: Pie<P> = pie(params);
        let gap = MS as f64 / load;
        let (mut k, mut next_serve) = (0u64, 0);
        let mut sojourns = Vec::new();
        while next_serve < secs * 1000 * MS {
            let arrival = (k as f64 * gap) as Nanos;
            if arrival < next_serve {
                q.enqueue(arrival, P::new(1500), 0);
                k += 1;
            } else {
                if let Some(d) = q.dequeue(next_serve) {
                    sojourns.push((next_serve, next_serve - d.enqueued));
                }
                next_serve += MS;
            }
        }
        (sojourns, q)
    }

    #[test]
    fn under_overload_the_probability_rises_and_the_delay_settles_near_target() {
        for est in [false, true] {
            let params = PieParams {
                dq_rate_estimator: est,
                ..PieParams::default()
            };
            let (sojourns, q) = overload(&params, 1.2, 30);
            let last: Vec<Nanos> = sojourns
                .iter()
                .filter(|(t, _)| *t >= 20_000 * MS)
                .map(|x| x.1)
                .collect();
            let mean = last.iter().sum::<Nanos>() as f64 / last.len() as f64;
            assert!(
                (7.5e6..30e6).contains(&mean),
                "estimator {est}: mean sojourn {mean} ns"
            );
            // One arrival in six must go for the queue to hold. The probability that does it
            // is higher (about 0.29): de-randomised, a drop takes 0.85 accumulated first.
            let p = q.drop_probability();
            assert!(
                (0.15..0.45).contains(&p),
                "estimator {est}: probability {p}"
            );
            let arrivals = 30_000.0 * 1.2;
            let early = counter(&q, "dropped_aqm") as f64 / arrivals;
            assert!(
                (0.14..0.19).contains(&early),
                "estimator {est}: dropped {early}"
            );
            assert_eq!(
                counter(&q, "dropped"),
                0,
                "the byte limit was never reached"
            );
        }
    }

    #[test]
    fn no_early_drop_below_half_target_at_low_probability_nor_under_two_packets() {
        let params = PieParams::default();
        // 15% and a delay of 7 ms (< 7.5 ms): nothing dropped.
        let mut q = primed(&params, 3, MAX_PROB / 100 * 15, 7 * MS, p1500);
        for _ in 0..2000 {
            assert!(q.enqueue(0, P::new(1500), 0));
        }
        // The same at 8 ms: dropped. De-randomised as Linux: no draw until 0.85 has
        // accumulated (6 packets at 15%), then 15% each: one in 5 + 1/0.15 = 11.7.
        let mut q = primed(&params, 3, MAX_PROB / 100 * 15, 8 * MS, p1500);
        let taken = (0..2000).filter(|_| q.enqueue(0, P::new(1500), 0)).count();
        assert!((1780..1880).contains(&taken), "{taken}");
        // At 25% the low delay does not protect: one in 3 + 4 = 7 dropped.
        let mut q = primed(&params, 3, MAX_PROB / 4, 7 * MS, p1500);
        let taken = (0..2000).filter(|_| q.enqueue(0, P::new(1500), 0)).count();
        assert!((1660..1770).contains(&taken), "{taken}");
        // Fewer than two MTUs waiting: never dropped, whatever the probability.
        let mut q = primed(&params, 1, MAX_PROB / 2, 50 * MS, p1500);
        for _ in 0..100 {
            assert!(q.enqueue(0, P::new(1400), 0));
            q.dequeue(0);
        }
        assert_eq!(counter(&q, "dropped_aqm"), 0);
    }

    #[test]
    fn derandomised_drops_are_spaced_by_the_accumulated_probability() {
        // At 10% no drop comes before 0.85 / 0.1 = 9 packets since the last, none later
        // than 85 packets (8.5 accumulated); on average one in 8 + 1/0.1 = 18.
        let mut q = primed(&PieParams::default(), 3, MAX_PROB / 10, 50 * MS, p1500);
        let mut since = 0;
        let mut gaps = Vec::new();
        for _ in 0..20_000 {
            since += 1;
            if !q.enqueue(0, P::new(1500), 0) {
                gaps.push(since);
                since = 0;
            }
        }
        assert!(gaps.iter().all(|&g| (9..=85).contains(&g)), "{gaps:?}");
        let mean = 20_000.0 / gaps.len() as f64;
        assert!((16.0..20.0).contains(&mean), "mean gap {mean}");
    }

    #[test]
    fn the_burst_allowance_lets_an_initial_burst_through() {
        // Twenty times the service rate from an idle start: with the allowance nothing is
        // dropped until its 150 ms of dequeueing are used up; without it, drops start as
        // soon as the probability has risen (about 100 ms).
        let run = |max_burst_ns: Nanos| {
            let params = PieParams {
                max_burst_ns,
                ..PieParams::default()
            };
            let mut q: Pie<P> = pie(&params);
            let mut first_drop = None;
            for t in 0..400 * 20 {
                let now = t * MS / 20;
                if !q.enqueue(now, P::new(1500), 0) && first_drop.is_none() {
                    first_drop = Some(now);
                }
                if t % 20 == 0 {
                    q.dequeue(now);
                }
            }
            first_drop.expect("drops at last")
        };
        let with = run(150 * MS);
        assert!(with > 150 * MS, "first drop at {with}");
        let without = run(0);
        assert!(without < 130 * MS, "first drop at {without}");
    }

    #[test]
    fn ecn_capable_packets_are_marked_below_ten_percent_and_dropped_above() {
        let params = PieParams::default();
        // At 5%: one in 16 + 1/0.05 = 36 marked (see the de-randomisation above).
        let mut q = primed(&params, 3, MAX_PROB / 20, 50 * MS, ect);
        for _ in 0..2000 {
            assert!(q.enqueue(0, E { ce: false }, 0));
        }
        let marked = counter(&q, "marked_aqm");
        assert!((40..75).contains(&marked), "{marked}");
        let ce = std::iter::from_fn(|| q.dequeue(0))
            .filter(|d| d.pkt.ce)
            .count();
        assert_eq!(ce as u64, marked);
        assert_eq!(counter(&q, "dropped_aqm"), 0);
        // Above 10%, dropped: one in 7 + 1/0.11 = 16.1.
        let mut q = primed(&params, 3, MAX_PROB / 100 * 11, 50 * MS, ect);
        let taken = (0..2000)
            .filter(|_| q.enqueue(0, E { ce: false }, 0))
            .count();
        assert!((1830..1920).contains(&taken), "{taken}");
        assert_eq!(counter(&q, "marked_aqm"), 0);
        // Without ECN, or for packets that are not ECN-capable, dropped too.
        let no_ecn = PieParams {
            ecn: false,
            ..params.clone()
        };
        let mut q = primed(&no_ecn, 3, MAX_PROB / 20, 50 * MS, ect);
        let taken = (0..2000)
            .filter(|_| q.enqueue(0, E { ce: false }, 0))
            .count();
        assert!((1920..1975).contains(&taken), "{taken}");
        assert_eq!(counter(&q, "marked_aqm"), 0);
        let mut q = primed(&params, 3, MAX_PROB / 20, 50 * MS, p1500);
        let taken = (0..2000).filter(|_| q.enqueue(0, P::new(1500), 0)).count();
        assert!((1920..1975).contains(&taken), "{taken}");
        assert_eq!(counter(&q, "marked_aqm"), 0);
    }

    #[test]
    fn probability_update_follows_the_kernel_arithmetic() {
        // Expected values worked out separately with the kernel's integer arithmetic.
        fn at(backlog: u64, prob: u64, qdelay_ms: u64, old_ms: u64) -> u64 {
            let mut q: Pie<P> = pie(&PieParams::default());
            q.backlog = backlog;
            q.vars.prob = prob;
            q.vars.qdelay = ticks(qdelay_ms * MS);
            q.vars.qdelay_old = ticks(old_ms * MS);
            q.calculate_probability();
            q.vars.prob
        }
        // From 0, alpha and beta scaled down by 2^11: a tiny step.
        assert_eq!(at(3000, 0, 20, 0), 901_599_218_750);
        // At 50%, unscaled.
        assert_eq!(at(3000, MAX_PROB / 2, 20, 10), 36_974_552_940_526_467);
        // A large step at >= 10% is capped at 2%...
        let half = MAX_PROB / 2;
        assert_eq!(at(3000, half, 100, 0), half + MAX_PROB / 100 * 2);
        // ...and above 250 ms another 2% is added.
        let two = MAX_PROB / 50;
        assert_eq!(at(3000, half, 300, 300), half + MAX_PROB / 100 * 2 + two);
        // As in Linux, only a wrap of the u64 is caught: 1.0 may be exceeded...
        assert_eq!(at(3000, MAX_PROB, 300, 300), MAX_PROB + 2 * two);
        // ...and a wrap is clamped to 1.0.
        assert_eq!(at(3000, u64::MAX - 10, 300, 0), MAX_PROB);
        // Far below target the fall stops at 0.
        assert_eq!(at(3000, 1000, 0, 10), 0);
        // Delay 0 twice on an empty queue: the drift below target, then 1/64 off.
        assert_eq!(at(0, MAX_PROB / 20, 0, 0), 3_480_086_243_341_375);
        assert_eq!(at(0, MAX_PROB / 1000, 0, 0), 54_307_078_327_862);
        // With packets waiting, a delay of 0 skips the 1/64.
        assert!(at(3000, MAX_PROB / 20, 0, 0) > 3_480_086_243_341_375);
    }

    #[test]
    fn the_probability_decays_to_zero_once_the_queue_is_empty() {
        let mut q: Pie<P> = pie(&PieParams::default());
        // Build up: twice the service rate for 1 s.
        for t in 0..2000 {
            let now = t * MS / 2;
            q.enqueue(now, P::new(1500), 0);
            if t % 2 == 0 {
                q.dequeue(now);
            }
        }
        let p0 = q.vars.prob;
        assert!(p0 > MAX_PROB / 10, "{p0}");
        // Drain at the service rate.
        let mut now = 1000 * MS;
        while q.dequeue(now).is_some() {
            now += MS;
        }
        assert_eq!(q.vars.qdelay, 0);
        // It falls update by update, not at once...
        q.catch_up(now + 30 * MS);
        let p1 = q.vars.prob;
        assert!(p1 > 0 && p1 < p0, "{p1} after {p0}");
        // ...and reaches 0, the burst allowance restored.
        q.catch_up(now + 10_000 * MS);
        assert_eq!(q.vars.prob, 0);
        assert_eq!(q.vars.burst_time, ticks(150 * MS));
        // A long idle (beyond what one call catches up on) stays on the update grid.
        let before = q.next_update.unwrap();
        q.catch_up(before + 1_000_000 * 15 * MS + 7);
        assert_eq!((q.next_update.unwrap() - before) % (15 * MS), 0);
    }

    #[test]
    fn catching_up_on_updates_equals_running_them_on_time() {
        // On-off overload with idle gaps; one queue also has its updates run at their own
        // times, the other only catches up when packets come and go.
        let mut lazy: Pie<P> = pie(&PieParams::default());
        let mut timely: Pie<P> = pie(&PieParams::default());
        let mut events = Vec::new();
        for burst in 0..6u64 {
            let start = burst * 3000 * MS + burst * 7 * MS / 3;
            for i in 0..600 {
                // 1.5x the service rate, served every 1 ms while it lasts.
                events.push((start + i * 2 * MS / 3, true));
            }
            for i in 0..700 {
                events.push((start + i * MS, false));
            }
        }
        events.sort();
        let mut decisions = 0;
        for &(t, arrive) in &events {
            while let Some(n) = timely.next_update.filter(|&n| n <= t) {
                timely.catch_up(n);
            }
            if arrive {
                let a = lazy.enqueue(t, P::new(1500), 0);
                let b = timely.enqueue(t, P::new(1500), 0);
                assert_eq!(a, b, "at {t}");
                decisions += 1;
            } else {
                let a = lazy.dequeue(t).map(|d| d.enqueued);
                let b = timely.dequeue(t).map(|d| d.enqueued);
                assert_eq!(a, b, "at {t}");
            }
            assert_eq!(lazy.vars, timely.vars, "at {t}");
        }
        assert_eq!(decisions, 3600);
        assert!(counter(&lazy, "dropped_aqm") > 0);
        assert_eq!(lazy.next_update, timely.next_update);
    }

    #[test]
    fn the_byte_limit_drops_and_counts_apart() {
        let mut q: Pie<P> = Pie::new(&PieParams::default(), 4000, Rng::new(1));
        assert!(q.enqueue(0, P::new(1500), 0));
        assert!(q.enqueue(0, P::new(1500), 0));
        assert!(!q.enqueue(0, P::new(1500), 0));
        // What a GSO packet on the wire has left counts as waiting.
        let mut q: Pie<P> = Pie::new(&PieParams::default(), 4000, Rng::new(1));
        assert!(!q.enqueue(0, P::new(1500), 3000));
        assert_eq!(counter(&q, "dropped"), 1);
        assert_eq!(counter(&q, "dropped_aqm"), 0);
    }
}
