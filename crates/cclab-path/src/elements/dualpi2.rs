//! DualPI2, the DualQ Coupled AQM of RFC 9332, as Linux runs it (`net/sched/sch_dualpi2.c`,
//! Linux 6.18).
//!
//! Two FIFOs share the buffer: the L queue takes the packets whose ECN field matches
//! `ecn_mask` (by default ECT(1) and CE: L4S traffic, RFC 9331), the C queue the rest
//! (ECT(0), Not-ECT). One PI controller, updated every `tupdate`, moves a base probability p'
//! by `alpha` times the queue delay's distance to `target` plus `beta` times its change
//! since the last update; the delay is the larger of the two queues' head sojourns (how long
//! the packet at the head of each has waited so far). From p':
//! - a C packet is dropped, or marked CE if ECN-capable, with p_C = p'^2 (two draws of p');
//! - an L packet is marked with the coupled p_CL = k * p' (`coupling_factor`, 2), and also
//!   when it waited longer than `step_thresh` (1 ms; or its queue holds more than
//!   `step_thresh_pkts` packets): native L4S step marking, so p_L = max(p_CL, step);
//! - nothing is dropped or marked while less than two MTUs wait;
//! - overload: once k * p' exceeds 1, L packets are dropped with p'^2 like classic ones
//!   (`drop_overload`), else marked, which lets the queue grow to the buffer instead.
//!
//! The decisions are taken at dequeue (`drop_early` = false, Linux's default), the step mark
//! after the PI decision. The link serves the L queue first, within a weighted round robin
//! that keeps `c_protection` (10%) of the bytes for the C queue while both have packets: a
//! credit counter moves by the weight of the other queue times each packet's length; the L
//! queue sends while the credit is not positive (or the C queue is empty), and it restarts
//! at MTU x (wc - wl), in the L queue's favour, whenever both queues are empty.
//!
//! Differences from Linux:
//! - The limit is the link's buffer in bytes of IP packets (Linux: 10000 packets and a memory
//!   limit in buffer truesize, 2 x MTU per packet of the limit).
//! - No timer: every call first runs the updates that fell due since the last one, at
//!   multiples of `tupdate` from the first packet (Linux's timer starts when the qdisc is
//!   created). An update reads the head sojourns at its own time: the queues only change at
//!   calls, so this equals a timer's reading. Updates over idle queues with p' at 0 change
//!   nothing and are skipped.
//! - The probability update saturates at 0 and 1.0 (Linux's 32-bit sum only wraps, and
//!   is caught, for delay changes of seconds).
//! - No tc filters or `skb->priority` classification; a packet's ECN field decides. GSO
//!   packets are always taken segment by segment (Linux's default `split_gso`).
//! - A packet that finds the wire free and both queues empty goes on the wire at once (the
//!   link's rule for every discipline); Linux would enqueue and dequeue it at once, which
//!   takes no decision while less than two MTUs wait.

use crate::aqm::AqmParams;
use crate::element::Packet;
use crate::queue::{Queue, Queued};
use crate::settings::{Given, Setting, SettingValue};
use crate::{streams, Nanos, Rng};
use std::collections::VecDeque;

/// DualPI2's parameters (`[link.aqm]` with `kind = "dualpi2"`), Linux's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct DualPi2Params {
    /// Target queue delay of the PI controller, ns (Linux: 15 ms).
    pub target_ns: Nanos,
    /// How often the base probability is updated, ns (Linux: 16 ms).
    pub tupdate_ns: Nanos,
    /// Gains on the distance to target and on the delay's change, in 1/256 Hz (Linux: 41 and
    /// 819, about 0.16 and 3.2 Hz).
    pub alpha: u32,
    pub beta: u32,
    /// L packets that waited longer than this are marked, ns (Linux: 1 ms).
    pub step_thresh_ns: Nanos,
    /// When positive, the step marks on the L queue's length in packets instead of its
    /// sojourn (Linux: `step_thresh Np`).
    pub step_thresh_pkts: u32,
    /// The step applies only to packets that found at least this many L packets waiting
    /// (Linux: 0).
    pub min_qlen_step: u32,
    /// k: L marks at k x p' (Linux: 2).
    pub coupling_factor: u32,
    /// Past k x p' = 1, drop L packets as classic ones instead of marking them (Linux: on).
    pub drop_overload: bool,
    /// Drop and mark at enqueue instead of dequeue (Linux: off).
    pub drop_early: bool,
    /// The C queue's share of the link while both queues wait, percent (Linux: 10).
    pub c_protection: u32,
    /// The ECN codepoints sent to the L queue, as a mask of the two-bit field (Linux: 1,
    /// `l4s_ect`: ECT(1) and CE).
    pub ecn_mask: u8,
}

impl AqmParams for DualPi2Params {
    /// The L queue's packets are marked, never dropped but on overload.
    fn marks_ecn(&self) -> bool {
        true
    }
    const NAME: &'static str = "dualpi2";
    const TITLE: &'static str = "DualPI2";
    /// What `[link.aqm]` may set for DualPI2, with Linux's defaults and units.
    const SETTINGS: &'static [Setting] = &[
        Setting::time("target", 15_000_000, "target queue delay"),
        Setting::time(
            "tupdate",
            16_000_000,
            "how often the drop probability is updated",
        ),
        Setting::int(
            "alpha",
            41,
            (1, (1 << 31) - 1),
            "1/256 Hz",
            "gain on the distance to target",
        ),
        Setting::int(
            "beta",
            819,
            (1, (1 << 31) - 1),
            "1/256 Hz",
            "gain on the queue delay's trend",
        ),
        Setting::time_or_zero(
            "step_thresh",
            1_000_000,
            "L packets that waited longer are marked CE (native L4S step)",
        ),
        Setting::int(
            "step_thresh_pkts",
            0,
            (0, u32::MAX as u64),
            "packets",
            "if not 0: step-mark while the L queue holds more packets than this, instead of by time",
        ),
        Setting::int(
            "min_qlen_step",
            0,
            (0, u32::MAX as u64),
            "packets",
            "step marking applies to packets that found at least this many L packets waiting",
        ),
        Setting::int(
            "coupling_factor",
            2,
            (1, 255),
            "",
            "k: the L queue marks with k x the base probability",
        ),
        Setting::flag(
            "drop_overload",
            true,
            "once k x the base probability exceeds 1, drop L packets as classic ones instead of marking them",
        ),
        Setting::flag(
            "drop_early",
            false,
            "drop and mark at enqueue instead of dequeue",
        ),
        Setting::int(
            "c_protection",
            10,
            (0, 100),
            "%",
            "the C queue's share of the link while both queues have packets",
        ),
        Setting::int(
            "ecn_mask",
            1,
            (1, 3),
            "",
            "ECN codepoints for the L queue, a mask of the ECN field: 1 ECT(1) and CE, 2 ECT(0) and CE, 3 any ECT",
        ),
    ];

    fn from_settings(g: &Given) -> Self {
        DualPi2Params {
            target_ns: g.time("target"),
            tupdate_ns: g.time("tupdate"),
            alpha: g.int32("alpha"),
            beta: g.int32("beta"),
            step_thresh_ns: g.time("step_thresh"),
            step_thresh_pkts: g.int32("step_thresh_pkts"),
            min_qlen_step: g.int32("min_qlen_step"),
            coupling_factor: g.int32("coupling_factor"),
            drop_overload: g.flag("drop_overload"),
            drop_early: g.flag("drop_early"),
            c_protection: g.int32("c_protection"),
            ecn_mask: g.int32("ecn_mask") as u8,
        }
    }

    fn values(&self) -> Vec<SettingValue> {
        use SettingValue::*;
        vec![
            Time(self.target_ns),
            Time(self.tupdate_ns),
            Int(self.alpha as u64),
            Int(self.beta as u64),
            Time(self.step_thresh_ns),
            Int(self.step_thresh_pkts as u64),
            Int(self.min_qlen_step as u64),
            Int(self.coupling_factor as u64),
            Bool(self.drop_overload),
            Bool(self.drop_early),
            Int(self.c_protection as u64),
            Int(self.ecn_mask as u64),
        ]
    }

    /// The random decisions draw from the run's seed (their own stream).
    fn queue<P: Packet + Send + 'static>(&self, limit_bytes: u64, seed: u64) -> Box<dyn Queue<P>> {
        Box::new(DualPi2::new(
            self,
            limit_bytes,
            Rng::derive(seed, streams::AQM),
        ))
    }
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params::from_settings(&Given::defaults(Self::SETTINGS))
    }
}

/// A probability of 1.0: probabilities are 32-bit fractions, as a 32-bit random draw
/// compares with them.
const MAX_PROB: u32 = u32::MAX;
/// The device MTU (`psched_mtu`); wire lengths here are IP packets.
const MTU: u64 = 1500;
/// Most probability updates run by one call (see the module docs).
const MAX_CATCH_UP: u32 = 10_000;
/// The sub-queues, by [`Queued::sub`].
const L: usize = 0;
const C: usize = 1;
const SUBQUEUES: &[&str] = &["l", "c"];

/// A gain in 1/256 Hz as the controller uses it: probability (of [`MAX_PROB`]) per 64 ns
/// of delay, so that `delay_ns * gain / 64` is the step of one update.
fn scale_gain(per_256_hz: u32) -> u64 {
    ((per_256_hz as u64 * MAX_PROB as u64) >> 2) / 1_000_000_000
}

/// Mark `pkt` CE if it is ECN-capable (ECT or already CE); whether it is now marked.
fn mark<P: Packet>(pkt: &mut P) -> bool {
    if pkt.ecn_field() == 0 {
        return false;
    }
    pkt.set_ce();
    true
}

/// What the controller does with a packet.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Verdict {
    Pass,
    Mark,
    Drop,
}

/// A waiting packet.
struct Entry<P> {
    pkt: P,
    at: Nanos,
    /// It found at least `min_qlen_step` L packets waiting: the step may mark it.
    step: bool,
}

/// Each sub-queue's counts.
#[derive(Clone, Copy, Debug, Default)]
struct SubStats {
    /// Packets taken in (or sent at once).
    packets: u64,
    /// Packets it marked CE (once each, whether by the controller or the step).
    marked: u64,
    /// Packets of it dropped, for any cause (the buffer, the controller, the step).
    dropped: u64,
}

/// A DualPI2 queue limited to `limit_bytes` waiting in both queues together.
pub struct DualPi2<P> {
    target: u64,
    tupdate_ns: Nanos,
    alpha: u64,
    beta: u64,
    step_thresh_ns: Nanos,
    step_thresh_pkts: u32,
    min_qlen_step: u32,
    k: u32,
    drop_overload: bool,
    drop_early: bool,
    /// WRR weights (percent) of the C and L queues, and the credit's restart value.
    wc: i64,
    wl: i64,
    credit_init: i64,
    ecn_mask: u8,
    limit_bytes: u64,
    queues: [VecDeque<Entry<P>>; 2],
    /// Bytes waiting in both.
    backlog: u64,
    /// p', the base probability (of [`MAX_PROB`]).
    prob: u32,
    /// The queue delay read at the last update, ns.
    last_qdelay: u64,
    /// The WRR credit: the L queue may send while it is not positive.
    credit: i64,
    /// When the next probability update is due; `None` before the first packet.
    next_update: Option<Nanos>,
    rng: Rng,
    /// Each sub-queue lost a packet to the controller since it last sent one.
    broken: [bool; 2],
    subs: [SubStats; 2],
    /// Dropped because the buffer was full.
    dropped: u64,
    dropped_aqm: u64,
    marked_aqm: u64,
    /// L packets the step marked (some also marked by the coupled probability).
    step_marked: u64,
}

impl<P: Packet + Send> DualPi2<P> {
    pub fn new(params: &DualPi2Params, limit_bytes: u64, rng: Rng) -> Self {
        let wc = params.c_protection.min(100) as i64;
        let wl = 100 - wc;
        let credit_init = MTU as i64 * (wc - wl);
        DualPi2 {
            target: params.target_ns,
            tupdate_ns: params.tupdate_ns.max(1),
            alpha: scale_gain(params.alpha),
            beta: scale_gain(params.beta),
            step_thresh_ns: params.step_thresh_ns,
            step_thresh_pkts: params.step_thresh_pkts,
            min_qlen_step: params.min_qlen_step,
            k: params.coupling_factor.max(1),
            drop_overload: params.drop_overload,
            drop_early: params.drop_early,
            wc,
            wl,
            credit_init,
            ecn_mask: params.ecn_mask,
            limit_bytes,
            queues: [VecDeque::new(), VecDeque::new()],
            backlog: 0,
            prob: 0,
            last_qdelay: 0,
            credit: credit_init,
            next_update: None,
            rng,
            broken: [false; 2],
            subs: [SubStats::default(); 2],
            dropped: 0,
            dropped_aqm: 0,
            marked_aqm: 0,
            step_marked: 0,
        }
    }

    /// The base probability p' now, in [0, 1].
    pub fn base_probability(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// The sub-queue of `pkt`: L if its ECN field matches the mask.
    fn classify(&self, pkt: &P) -> usize {
        if pkt.ecn_field() & self.ecn_mask != 0 {
            L
        } else {
            C
        }
    }

    /// Run the probability updates due by `now` (the first call starts the schedule).
    fn catch_up(&mut self, now: Nanos) {
        let Some(mut next) = self.next_update else {
            self.next_update = Some(now.saturating_add(self.tupdate_ns));
            return;
        };
        let mut n = 0;
        while next <= now && n < MAX_CATCH_UP {
            if self.prob == 0 && self.last_qdelay == 0 && self.backlog == 0 {
                // Idle at rest: every further update until `now` leaves it so.
                break;
            }
            self.update(next);
            next = next.saturating_add(self.tupdate_ns);
            n += 1;
        }
        if next <= now {
            // Skip to the first update after `now`, on the same grid.
            let skipped = (now - next) / self.tupdate_ns + 1;
            next = next.saturating_add(skipped.saturating_mul(self.tupdate_ns));
        }
        self.next_update = Some(next);
    }

    /// The PI update at `at`: p' moves by alpha x (delay - target) + beta x (delay - the
    /// last delay), the delay being the longer of the two head sojourns.
    fn update(&mut self, at: Nanos) {
        let head = |q: &VecDeque<Entry<P>>| q.front().map_or(0, |e| at.saturating_sub(e.at));
        let qdelay = head(&self.queues[L]).max(head(&self.queues[C]));
        let delta = (qdelay as i128 - self.target as i128) * self.alpha as i128
            + (qdelay as i128 - self.last_qdelay as i128) * self.beta as i128;
        self.last_qdelay = qdelay;
        // Gains are per 64 ns of delay; the step rounds towards zero.
        let next = (self.prob as i128 + delta / 64).clamp(0, MAX_PROB as i128) as u32;
        self.prob = if self.drop_overload {
            next
        } else {
            // Without overload drops, k x p' stays at most 1.
            next.min(MAX_PROB / self.k)
        };
    }

    /// True with probability `prob` (of [`MAX_PROB`]).
    fn roll(&mut self, prob: u32) -> bool {
        ((self.rng.next_u64() >> 32) as u32) <= prob
    }

    /// The controller's decision on a packet of sub-queue `sub` whose ECN field is `ecn`
    /// (Linux `must_drop`).
    fn decide(&mut self, sub: usize, ecn: u8) -> Verdict {
        if self.backlog < 2 * MTU {
            return Verdict::Pass;
        }
        let prob = self.prob;
        let coupled = prob as u64 * self.k as u64;
        let overload = coupled > MAX_PROB as u64;
        if sub == C {
            // p_C = p'^2: two draws.
            if self.roll(prob) && self.roll(prob) {
                return if overload || ecn == 0 {
                    Verdict::Drop
                } else {
                    Verdict::Mark
                };
            }
            return Verdict::Pass;
        }
        if overload {
            // Classic drops first when trading loss for latency; marks otherwise.
            if self.drop_overload && self.roll(prob) && self.roll(prob) {
                return Verdict::Drop;
            }
            return Verdict::Mark;
        }
        if self.roll(coupled as u32) {
            return if ecn == 0 {
                Verdict::Drop
            } else {
                Verdict::Mark
            };
        }
        Verdict::Pass
    }

    /// The next packet by the WRR between the queues, its sub-queue and the credit change
    /// due if it is sent (Linux `dequeue_packet`); `None` (the credit restarted) when both
    /// are empty.
    fn pick(&mut self) -> Option<(Entry<P>, usize, i64)> {
        let c_len = self.queues[C].len();
        let l_len = self.queues[L].len();
        let (sub, weight) = if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            (L, if c_len > 0 { self.wc } else { 0 })
        } else if c_len > 0 {
            (C, if l_len > 0 { -self.wl } else { 0 })
        } else {
            self.credit = self.credit_init;
            return None;
        };
        let e = self.queues[sub].pop_front()?;
        let len = e.pkt.wire_len() as u64;
        self.backlog -= len;
        Some((e, sub, weight * len as i64))
    }
}

impl<P: Packet + Send> Queue<P> for DualPi2<P> {
    fn enqueue(&mut self, now: Nanos, mut pkt: P, extra: u64) -> bool {
        self.catch_up(now);
        let sub = self.classify(&pkt);
        let len = pkt.wire_len() as u64;
        let segs = pkt.segments() as u64;
        if self.backlog + extra + len > self.limit_bytes {
            self.dropped += segs;
            self.subs[sub].dropped += segs;
            return false;
        }
        let mut marked = false;
        if self.drop_early {
            match self.decide(sub, pkt.ecn_field()) {
                Verdict::Pass => {}
                Verdict::Mark => marked = mark(&mut pkt),
                Verdict::Drop => {
                    self.dropped_aqm += segs;
                    self.subs[sub].dropped += segs;
                    return false;
                }
            }
        }
        if marked {
            self.marked_aqm += segs;
            self.subs[sub].marked += segs;
        }
        let step = sub == L && self.queues[L].len() as u64 >= self.min_qlen_step as u64;
        self.subs[sub].packets += segs;
        self.backlog += len;
        self.queues[sub].push_back(Entry { pkt, at: now, step });
        true
    }

    fn dequeue(&mut self, now: Nanos) -> Option<Queued<P>> {
        self.catch_up(now);
        loop {
            let (mut e, sub, credit_change) = self.pick()?;
            let segs = e.pkt.segments() as u64;
            let ecn = e.pkt.ecn_field();
            let mut marked = false;
            let mut drop = false;
            if !self.drop_early {
                match self.decide(sub, ecn) {
                    Verdict::Pass => {}
                    Verdict::Mark => marked = mark(&mut e.pkt),
                    Verdict::Drop => drop = true,
                }
            }
            if !drop && sub == L && e.step {
                let over = if self.step_thresh_pkts > 0 {
                    self.queues[L].len() as u64 > self.step_thresh_pkts as u64
                } else {
                    now.saturating_sub(e.at) > self.step_thresh_ns
                };
                if over {
                    if ecn == 0 {
                        drop = true;
                    } else {
                        mark(&mut e.pkt);
                        self.step_marked += segs;
                        marked = true;
                    }
                }
            }
            if drop {
                self.dropped_aqm += segs;
                self.subs[sub].dropped += segs;
                self.broken[sub] = true;
                continue;
            }
            if marked {
                self.marked_aqm += segs;
                self.subs[sub].marked += segs;
            }
            self.credit += credit_change;
            if self.broken[sub] {
                e.pkt.mark_burst_broken();
                self.broken[sub] = false;
            }
            return Some(Queued {
                pkt: e.pkt,
                enqueued: e.at,
                sub: sub as u8,
            });
        }
    }

    fn is_empty(&self) -> bool {
        self.queues[L].is_empty() && self.queues[C].is_empty()
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog
    }

    fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    fn subqueues(&self) -> &'static [&'static str] {
        SUBQUEUES
    }

    fn sent_at_once(&mut self, pkt: &P) -> u8 {
        let sub = self.classify(pkt);
        self.subs[sub].packets += pkt.segments() as u64;
        sub as u8
    }

    /// Besides the usual three: each queue's packets, marks and drops (`l_packets`,
    /// `l_marked`, `l_dropped`, the same for `c_`), and the L packets the step marked.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        let (l, c) = (self.subs[L], self.subs[C]);
        vec![
            ("dropped", self.dropped),
            ("dropped_aqm", self.dropped_aqm),
            ("marked_aqm", self.marked_aqm),
            ("l_packets", l.packets),
            ("l_marked", l.marked),
            ("l_dropped", l.dropped),
            ("c_packets", c.packets),
            ("c_marked", c.marked),
            ("c_dropped", c.dropped),
            ("step_marked", self.step_marked),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Nanos = 1_000_000;
    const NOT_ECT: u8 = 0;
    const ECT1: u8 = 1;
    const ECT0: u8 = 2;
    const CE: u8 = 3;

    /// A 1500-byte test packet with an ECN field.
    #[derive(Debug)]
    struct E {
        ecn: u8,
        broken: bool,
    }

    impl Packet for E {
        fn wire_len(&self) -> u32 {
            1500
        }
        fn is_ect(&self) -> bool {
            self.ecn != NOT_ECT
        }
        fn ecn_field(&self) -> u8 {
            self.ecn
        }
        fn set_ce(&mut self) {
            self.ecn = CE;
        }
        fn mark_burst_broken(&mut self) {
            self.broken = true;
        }
    }

    fn e(ecn: u8) -> E {
        E { ecn, broken: false }
    }

    fn q(params: &DualPi2Params) -> DualPi2<E> {
        DualPi2::new(params, 1 << 40, Rng::new(7))
    }

    fn counter(q: &DualPi2<E>, name: &str) -> u64 {
        q.counters().into_iter().find(|c| c.0 == name).unwrap().1
    }

    /// Step marking out of the way (a threshold no test reaches).
    fn no_step() -> DualPi2Params {
        DualPi2Params {
            step_thresh_ns: 10_000 * MS,
            ..DualPi2Params::default()
        }
    }

    #[test]
    fn ect1_and_ce_go_to_the_l_queue_ect0_and_not_ect_to_the_c_queue() {
        let mut d = q(&DualPi2Params::default());
        for ecn in [ECT1, CE, ECT0, NOT_ECT, ECT1] {
            assert!(d.enqueue(0, e(ecn), 0));
        }
        assert_eq!((counter(&d, "l_packets"), counter(&d, "c_packets")), (3, 2));
        // The L queue first (the WRR starts in its favour), each packet with its queue.
        let out: Vec<(u8, u8)> = std::iter::from_fn(|| d.dequeue(0))
            .map(|x| (x.sub, x.pkt.ecn))
            .collect();
        assert_eq!(
            out,
            [(0, ECT1), (0, CE), (0, ECT1), (1, ECT0), (1, NOT_ECT)]
        );
        assert_eq!(d.subqueues(), ["l", "c"]);
        // A packet sent at once counts in its queue too.
        assert_eq!(d.sent_at_once(&e(ECT1)), 0);
        assert_eq!(d.sent_at_once(&e(ECT0)), 1);
        assert_eq!(counter(&d, "l_packets"), 4);
        // ecn_mask = 3: any ECT is L4S.
        let mut any = q(&DualPi2Params {
            ecn_mask: 3,
            ..DualPi2Params::default()
        });
        for ecn in [ECT1, CE, ECT0, NOT_ECT] {
            assert!(any.enqueue(0, e(ecn), 0));
        }
        assert_eq!(
            (counter(&any, "l_packets"), counter(&any, "c_packets")),
            (3, 1)
        );
    }

    /// Not-ECT packets served every 1 ms (12 Mbit/s), arriving `load` times as fast, from
    /// `from` to `to`: the sojourns (time, ns) of what left.
    fn drive(d: &mut DualPi2<E>, load: f64, from: Nanos, to: Nanos) -> Vec<(Nanos, Nanos)> {
        let gap = MS as f64 / load;
        let (mut k, mut next_serve) = (0u64, from);
        let mut sojourns = Vec::new();
        while next_serve < to {
            let arrival = from + (k as f64 * gap) as Nanos;
            if load > 0.0 && arrival < next_serve {
                d.enqueue(arrival, e(NOT_ECT), 0);
                k += 1;
            } else {
                if let Some(x) = d.dequeue(next_serve) {
                    sojourns.push((next_serve, next_serve - x.enqueued));
                }
                next_serve += MS;
            }
        }
        sojourns
    }

    #[test]
    fn the_base_probability_rises_above_target_and_falls_below() {
        let mut d = q(&DualPi2Params::default());
        // 1.5x overload: the probability climbs while the delay is over 15 ms...
        let mut last = 0.0;
        let mut rose = 0;
        for s in 0..10 {
            drive(&mut d, 1.5, s * 100 * MS, (s + 1) * 100 * MS);
            if d.base_probability() > last {
                rose += 1;
            }
            last = d.base_probability();
        }
        assert!(rose >= 7, "rose {rose} times of 10");
        // ...and settles where classic drops (p'^2) take the third of the arrivals that the
        // link cannot carry: p' near sqrt(1/3), the delay near target.
        let sojourns = drive(&mut d, 1.5, 1000 * MS, 31_000 * MS);
        let late: Vec<Nanos> = sojourns
            .iter()
            .filter(|(t, _)| *t >= 11_000 * MS)
            .map(|x| x.1)
            .collect();
        let mean = late.iter().sum::<Nanos>() as f64 / late.len() as f64;
        assert!((10e6..20e6).contains(&mean), "mean sojourn {mean} ns");
        let p = d.base_probability();
        assert!((0.45..0.7).contains(&p), "p' {p}");
        assert_eq!(counter(&d, "dropped"), 0);
        assert_eq!(counter(&d, "marked_aqm"), 0, "Not-ECT is dropped");
        assert!(counter(&d, "c_dropped") > 0);
        // Below target (the load gone, the queue drained) it falls, update by update, to 0.
        let p0 = d.base_probability();
        drive(&mut d, 0.0, 31_000 * MS, 31_200 * MS);
        let p1 = d.base_probability();
        assert!(p1 < p0, "{p1} after {p0}");
        drive(&mut d, 0.0, 31_200 * MS, 40_000 * MS);
        assert_eq!(d.base_probability(), 0.0);
    }

    #[test]
    fn the_update_follows_the_pi_law() {
        // Within 0.1%: the gains are scaled to whole units of probability per 64 ns, as in
        // Linux (819/256 Hz becomes 879 where 879.4 would be exact).
        let near = |got: f64, want: f64| (got / want - 1.0).abs() < 1e-3;
        // alpha 41/256 Hz over 5 ms above target, no trend: p' += 0.16 x 0.005 = 0.0008.
        let mut d = q(&DualPi2Params::default());
        d.last_qdelay = 20 * MS;
        d.queues[C].push_back(Entry {
            pkt: e(NOT_ECT),
            at: 0,
            step: false,
        });
        d.update(20 * MS);
        let want = 41.0 / 256.0 * 0.005;
        assert!(near(d.base_probability(), want), "{}", d.base_probability());
        // beta on a 10 ms rise at target: 819/256 x 0.01 = 0.032 more.
        d.last_qdelay = 5 * MS;
        d.update(15 * MS);
        let want = want + 819.0 / 256.0 * 0.01;
        assert!(near(d.base_probability(), want), "{}", d.base_probability());
        // The delay read is the longer head sojourn: an L head that waited 40 ms counts.
        let before = d.base_probability();
        d.queues[L].push_back(Entry {
            pkt: e(ECT1),
            at: 0,
            step: false,
        });
        d.last_qdelay = 40 * MS;
        d.update(40 * MS);
        let want = before + 41.0 / 256.0 * 0.025;
        assert!(near(d.base_probability(), want), "{}", d.base_probability());
        // Saturates at 0 and 1.
        d.prob = 10;
        d.last_qdelay = 0;
        d.queues = [VecDeque::new(), VecDeque::new()];
        d.update(100 * MS);
        assert_eq!(d.prob, 0);
        d.prob = MAX_PROB - 10;
        d.queues[C].push_back(Entry {
            pkt: e(NOT_ECT),
            at: 0,
            step: false,
        });
        d.update(1000 * MS);
        assert_eq!(d.prob, MAX_PROB);
        // Without overload drops k x p' stays at most 1.
        let mut d = q(&DualPi2Params {
            drop_overload: false,
            ..DualPi2Params::default()
        });
        d.prob = MAX_PROB / 3;
        d.queues[C].push_back(Entry {
            pkt: e(NOT_ECT),
            at: 0,
            step: false,
        });
        d.update(1000 * MS);
        assert_eq!(d.prob, MAX_PROB / 2);
    }

    /// `n` packets of each of `ecns` waiting at time 0 with p' set to `p`, all dequeued at
    /// time 0 (no update falls due): the queue and what left.
    fn at_probability(
        params: &DualPi2Params,
        p: f64,
        ecns: &[u8],
        n: usize,
    ) -> (DualPi2<E>, Vec<E>) {
        let mut d = q(params);
        for _ in 0..n {
            for &x in ecns {
                assert!(d.enqueue(0, e(x), 0));
            }
        }
        d.prob = (p * MAX_PROB as f64) as u32;
        let out = std::iter::from_fn(|| d.dequeue(0)).map(|x| x.pkt).collect();
        (d, out)
    }

    #[test]
    fn l_marks_are_coupled_to_the_square_root_of_the_classic_probability() {
        let n = 40_000;
        for p in [0.05, 0.2] {
            let (d, out) = at_probability(&no_step(), p, &[ECT1, ECT0], n);
            let l = counter(&d, "l_marked") as f64 / n as f64;
            let c = counter(&d, "c_marked") as f64 / n as f64;
            // p_L = k p' and p_C = p'^2: p_L = k sqrt(p_C).
            assert!((l / (2.0 * p) - 1.0).abs() < 0.05, "p' {p}: L marks {l}");
            assert!((c / (p * p) - 1.0).abs() < 0.15, "p' {p}: C marks {c}");
            let k = l / c.sqrt();
            assert!((1.8..2.2).contains(&k), "p' {p}: k {k}");
            assert_eq!(counter(&d, "dropped_aqm"), 0, "ECN-capable: marked");
            let ce = out.iter().filter(|x| x.ecn == CE).count() as u64;
            assert_eq!(ce, counter(&d, "marked_aqm"));
            assert_eq!(counter(&d, "step_marked"), 0);
        }
        // Not-ECT classic packets are dropped with p'^2 instead; the coupling factor scales L.
        let (d, _) = at_probability(&no_step(), 0.2, &[NOT_ECT], n);
        let c = counter(&d, "c_dropped") as f64 / n as f64;
        assert!((c / 0.04 - 1.0).abs() < 0.1, "{c}");
        assert_eq!(counter(&d, "dropped_aqm"), counter(&d, "c_dropped"));
        let k4 = DualPi2Params {
            coupling_factor: 4,
            ..no_step()
        };
        let (d, _) = at_probability(&k4, 0.1, &[ECT1], n);
        let l = counter(&d, "l_marked") as f64 / n as f64;
        assert!((l / 0.4 - 1.0).abs() < 0.05, "{l}");
    }

    #[test]
    fn overload_drops_l_packets_as_classic_ones_unless_told_not_to() {
        // p' = 0.7: k p' > 1. With drop_overload, L packets go with p'^2 = 0.49 and the rest
        // are marked; without it, all are marked (but the last two, left under two MTUs).
        let n = 20_000;
        let (d, _) = at_probability(&no_step(), 0.7, &[ECT1], n);
        let dropped = counter(&d, "l_dropped") as f64 / n as f64;
        assert!((dropped / 0.49 - 1.0).abs() < 0.05, "{dropped}");
        assert_eq!(
            counter(&d, "l_marked") + counter(&d, "l_dropped"),
            n as u64 - 2
        );
        let no_drop = DualPi2Params {
            drop_overload: false,
            ..no_step()
        };
        let (d, _) = at_probability(&no_drop, 0.7, &[ECT1], n);
        assert_eq!(counter(&d, "l_dropped"), 0);
        assert_eq!(counter(&d, "l_marked"), n as u64 - 2);
        // ECT(0) in the C queue is dropped, not marked, in overload.
        let (d, _) = at_probability(&no_step(), 0.7, &[ECT0], n);
        assert_eq!(counter(&d, "c_marked"), 0);
        assert!(counter(&d, "c_dropped") > 0);
    }

    #[test]
    fn nothing_is_dropped_or_marked_while_less_than_two_mtus_wait() {
        let mut d = q(&no_step());
        d.prob = MAX_PROB;
        for _ in 0..1000 {
            assert!(d.enqueue(0, e(NOT_ECT), 0));
            assert!(d.enqueue(0, e(ECT1), 0));
            d.dequeue(0).unwrap();
            d.dequeue(0).unwrap();
        }
        assert_eq!(counter(&d, "dropped_aqm") + counter(&d, "marked_aqm"), 0);
    }

    #[test]
    fn l_packets_are_step_marked_past_the_threshold() {
        // p' = 0: only the step marks. Four L packets at 0; one leaves every 0.3 ms: the
        // first three waited at most 0.9 ms, the fourth 1.2 ms.
        let mut d = q(&DualPi2Params::default());
        for _ in 0..4 {
            d.enqueue(0, e(ECT1), 0);
        }
        let marks: Vec<bool> = (1..=4)
            .map(|i| d.dequeue(i * 3 * MS / 10).unwrap().pkt.ecn == CE)
            .collect();
        assert_eq!(marks, [false, false, false, true]);
        assert_eq!(counter(&d, "step_marked"), 1);
        assert_eq!(counter(&d, "l_marked"), 1);
        // C packets are never step-marked.
        let mut d = q(&DualPi2Params::default());
        d.enqueue(0, e(ECT0), 0);
        assert_eq!(d.dequeue(10 * MS).unwrap().pkt.ecn, ECT0);
        // In packets: marked while more than 2 L packets stay behind.
        let pkts = DualPi2Params {
            step_thresh_pkts: 2,
            ..DualPi2Params::default()
        };
        let mut d = q(&pkts);
        for _ in 0..5 {
            d.enqueue(0, e(ECT1), 0);
        }
        let marks: Vec<bool> = std::iter::from_fn(|| d.dequeue(0))
            .map(|x| x.pkt.ecn == CE)
            .collect();
        assert_eq!(marks, [true, true, false, false, false]);
        // min_qlen_step: only packets that found 3 L packets waiting may be stepped.
        let min = DualPi2Params {
            min_qlen_step: 3,
            ..DualPi2Params::default()
        };
        let mut d = q(&min);
        for _ in 0..5 {
            d.enqueue(0, e(ECT1), 0);
        }
        let marks: Vec<bool> = std::iter::from_fn(|| d.dequeue(5 * MS))
            .map(|x| x.pkt.ecn == CE)
            .collect();
        assert_eq!(marks, [false, false, false, true, true]);
    }

    #[test]
    fn the_scheduler_prefers_l_within_the_c_protection() {
        // Both queues backlogged: L sends 9 packets for C's 1 (wc = 10%).
        let served = |c_protection: u32, n: usize| {
            let mut d = q(&DualPi2Params {
                c_protection,
                ..no_step()
            });
            for _ in 0..2 * n {
                d.enqueue(0, e(ECT1), 0);
                d.enqueue(0, e(NOT_ECT), 0);
            }
            let subs: Vec<u8> = (0..n).map(|_| d.dequeue(0).unwrap().sub).collect();
            subs
        };
        let s = served(10, 1000);
        let c = s.iter().filter(|&&x| x == 1).count();
        assert_eq!(c, 100, "C's share");
        // L first: the credit starts at MTU x (wc - wl).
        assert_eq!(s[..10], [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        let s = served(50, 1000);
        assert_eq!(s.iter().filter(|&&x| x == 1).count(), 500);
        // wc = 0: strict priority to L.
        let s = served(0, 1000);
        assert!(s.iter().all(|&x| x == 0));
        // One queue empty: the other sends and the credit does not move.
        let mut d = q(&no_step());
        for _ in 0..5 {
            d.enqueue(0, e(NOT_ECT), 0);
        }
        for _ in 0..5 {
            assert_eq!(d.dequeue(0).unwrap().sub, 1);
        }
        assert_eq!(d.credit, d.credit_init);
        assert!(d.dequeue(0).is_none());
    }

    #[test]
    fn counters_keep_each_queue_apart() {
        // A buffer of four packets: the fifth and sixth arrivals overflow.
        let mut d: DualPi2<E> = DualPi2::new(&no_step(), 6000, Rng::new(1));
        for ecn in [ECT1, ECT1, ECT0, NOT_ECT, ECT1, NOT_ECT] {
            d.enqueue(0, e(ecn), 0);
        }
        assert_eq!(counter(&d, "dropped"), 2);
        assert_eq!((counter(&d, "l_dropped"), counter(&d, "c_dropped")), (1, 1));
        assert_eq!((counter(&d, "l_packets"), counter(&d, "c_packets")), (2, 2));
        // What a GSO packet on the wire has left counts as waiting.
        let mut d: DualPi2<E> = DualPi2::new(&no_step(), 6000, Rng::new(1));
        assert!(!d.enqueue(0, e(ECT1), 5000));
        // Drops by the controller: the next packet of the same queue carries the news.
        let (d, out) = at_probability(&no_step(), 1.0, &[NOT_ECT], 10);
        // Always dropped, down to two MTUs waiting; those two leave, the first broken.
        assert_eq!(counter(&d, "dropped_aqm"), 8);
        assert_eq!(counter(&d, "c_dropped"), 8);
        assert_eq!(out.len(), 2);
        assert!(out[0].broken && !out[1].broken);
    }

    #[test]
    fn drop_early_decides_at_enqueue() {
        // p' = 1 without overload drops: classic packets are dropped, L4S ones marked.
        let early = DualPi2Params {
            drop_early: true,
            drop_overload: false,
            ..no_step()
        };
        let mut d = q(&early);
        for _ in 0..3 {
            assert!(d.enqueue(0, e(NOT_ECT), 0));
        }
        d.prob = MAX_PROB;
        assert!(!d.enqueue(0, e(NOT_ECT), 0));
        assert!(d.enqueue(0, e(ECT1), 0));
        assert_eq!(counter(&d, "dropped_aqm"), 1);
        assert_eq!(counter(&d, "l_marked"), 1);
        // Nothing more is decided at dequeue.
        let out: Vec<E> = std::iter::from_fn(|| d.dequeue(0)).map(|x| x.pkt).collect();
        assert_eq!(out.len(), 4);
        assert_eq!(counter(&d, "dropped_aqm"), 1);
    }

    #[test]
    fn catching_up_on_updates_equals_running_them_on_time() {
        let mut lazy = q(&DualPi2Params::default());
        let mut timely = q(&DualPi2Params::default());
        let mut events = Vec::new();
        for burst in 0..4u64 {
            let start = burst * 3000 * MS + burst * 7 * MS / 3;
            for i in 0..900 {
                events.push((start + i * 2 * MS / 3, true));
            }
            for i in 0..1000 {
                events.push((start + i * MS, false));
            }
        }
        events.sort();
        for &(t, arrive) in &events {
            while let Some(n) = timely.next_update.filter(|&n| n <= t) {
                timely.catch_up(n);
            }
            if arrive {
                let a = lazy.enqueue(t, e(NOT_ECT), 0);
                let b = timely.enqueue(t, e(NOT_ECT), 0);
                assert_eq!(a, b, "at {t}");
            } else {
                let a = lazy.dequeue(t).map(|x| x.enqueued);
                let b = timely.dequeue(t).map(|x| x.enqueued);
                assert_eq!(a, b, "at {t}");
            }
            assert_eq!(
                (lazy.prob, lazy.last_qdelay),
                (timely.prob, timely.last_qdelay)
            );
        }
        assert!(counter(&lazy, "dropped_aqm") > 0);
    }
}
