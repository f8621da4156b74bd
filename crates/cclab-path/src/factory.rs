//! The one factory: a path description becomes the chains of elements that both backends
//! run (the simulator in simulated time, the kernel lab's user-space element on real
//! packets), so "the same path" is the same code.
//!
//! A new element is its file under `elements/` plus one line below (and its scenario keys).

use crate::chain::Chain;
use crate::element::Packet;
use crate::elements::{
    AckAggregation, Delay, Policer, RandomLoss, Rate, RateDesc, Shaper, TokenBucket,
};
use crate::{AqmDesc, Nanos, Rng};

/// The random streams of a run: each component draws from its own, derived from the run's
/// seed, so a seed means the same loss pattern on every backend.
pub mod streams {
    /// Random loss on data packets.
    pub const DATA_LOSS: u64 = 1;
    /// Random loss on ACKs.
    pub const ACK_LOSS: u64 = 2;
    /// The simulated hosts' handling times.
    pub const HOSTS: u64 = 3;
    /// PIE's drop decisions.
    pub const AQM: u64 = 4;
    /// Delay jitter on data packets.
    pub const JITTER: u64 = 5;
    /// FQ-CoDel's flow-hash perturbation.
    pub const FLOW_HASH: u64 = 6;
}

/// What random loss draws for (`link.loss_unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LossUnit {
    /// Each segment (each packet on the wire of 1500 bytes or less).
    #[default]
    Segment,
    /// Each packet as the sender's qdisc sees it: one draw per GSO packet (a TSO burst in
    /// the simulator), which loses it whole, as netem as a root qdisc on a TSO sender does.
    Gso,
}

/// What a scenario's `[link]` says about the path (built by `cclab_scenario`; a backend
/// passes it through untouched, so a new path setting is a field here, its scenario key and
/// its factory line, and no backend changes). The bottleneck buffer is not here: a scenario
/// gives it relative to the link (in BDPs or packets), so it is resolved in bytes when a run's
/// path is built ([`PathDesc::buffer_bytes`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkDesc {
    /// Bottleneck rate, bits per second of whole IP packets.
    pub rate_bps: f64,
    /// Base round-trip propagation delay, ns.
    pub rtt_ns: Nanos,
    /// Probability that a data packet is lost (the long-run rate).
    pub loss: f64,
    /// Mean length of a run of data losses, packets (`link.loss_burst`): 1 = independent
    /// (Bernoulli) loss, more = Gilbert-Elliott bursts at the same mean rate.
    pub loss_burst: f64,
    /// Probability that an ACK is lost.
    pub ack_loss: f64,
    /// ECN step marking at the bottleneck: ECN-capable packets that waited longer than this
    /// are marked CE (`link.ecn_threshold`); `None` = never.
    pub ecn_threshold_ns: Option<Nanos>,
    /// How the rate varies (`link.rate` as a schedule, `link.trace`); `None` = fixed at
    /// `rate_bps`, which is otherwise the nominal rate (buffers in BDP use it).
    pub rate_varies: Option<RateDesc>,
    /// What random data loss draws for (`link.loss_unit`).
    pub loss_unit: LossUnit,
    /// The bottleneck's queue discipline (`link.aqm`); its limit is the path's
    /// [`PathDesc::buffer_bytes`].
    pub aqm: AqmDesc,
    /// A token-bucket policer before the bottleneck (`link.policer`).
    pub policer: Option<TokenBucket>,
    /// A token-bucket shaper before the bottleneck (`link.shaper`); its queue's limit is the
    /// path's [`PathDesc::buffer_bytes`].
    pub shaper: Option<TokenBucket>,
    /// Random extra delay of each data packet, uniform in [0, jitter] ns (`link.jitter`).
    pub jitter_ns: Nanos,
    /// Whether jitter may reorder packets (`link.reorder`); otherwise none leaves before one
    /// that entered earlier.
    pub reorder: bool,
    /// ACKs released in bursts once per this period, ns (`link.ack_aggregation`); 0 = off.
    pub ack_aggregation_ns: Nanos,
}

impl Default for LinkDesc {
    /// 100 Mbit/s, 20 ms, drop-tail, nothing else.
    fn default() -> Self {
        LinkDesc {
            rate_bps: 100e6,
            rtt_ns: 20_000_000,
            loss: 0.0,
            loss_burst: 1.0,
            ack_loss: 0.0,
            ecn_threshold_ns: None,
            rate_varies: None,
            loss_unit: LossUnit::Segment,
            aqm: AqmDesc::default(),
            policer: None,
            shaper: None,
            jitter_ns: 0,
            reorder: false,
            ack_aggregation_ns: 0,
        }
    }
}

impl LinkDesc {
    /// The bottleneck's rate as it runs.
    pub fn rate(&self) -> RateDesc {
        self.rate_varies
            .clone()
            .unwrap_or(RateDesc::Fixed(self.rate_bps))
    }

    /// Bits the bottleneck can carry between `t0` and `t1` (ns from time zero).
    pub fn capacity_bits(&self, t0: Nanos, t1: Nanos) -> f64 {
        match &self.rate_varies {
            None => self.rate_bps * t1.saturating_sub(t0) as f64 / 1e9,
            Some(r) => r.capacity_bits(t0, t1),
        }
    }

    /// The bottleneck's capacity in each bin of a time series whose bins end at `t_s`
    /// (seconds from time zero), bits/s; empty when the rate is fixed.
    pub fn rate_series(&self, t_s: &[f64]) -> Vec<f64> {
        if self.rate_varies.is_none() {
            return Vec::new();
        }
        let mut prev = 0;
        t_s.iter()
            .map(|&t| {
                let t = (t * 1e9).round() as Nanos;
                let r = self.mean_bps(prev, t);
                prev = t;
                r
            })
            .collect()
    }

    /// The bottleneck's mean rate between `t0` and `t1`, bits/s (`rate_bps` when fixed).
    pub fn mean_bps(&self, t0: Nanos, t1: Nanos) -> f64 {
        if self.rate_varies.is_none() || t1 <= t0 {
            return self.rate_bps;
        }
        self.capacity_bits(t0, t1) / ((t1 - t0) as f64 / 1e9)
    }
}

/// A run's path: the link, its buffer, the delay classes of its flows, the run's seed.
#[derive(Clone, Debug, PartialEq)]
pub struct PathDesc {
    pub link: LinkDesc,
    /// Bottleneck buffer (waiting bytes), bytes: the limit of the bottleneck's queue and of
    /// the shaper's.
    pub buffer_bytes: u64,
    /// Extra round-trip delay of each delay class (flow group), ns.
    pub class_extra_rtt_ns: Vec<Nanos>,
    /// The run's seed.
    pub seed: u64,
}

impl PathDesc {
    /// One-way delays of `class`: (data direction, ACK direction), splitting its RTT in two
    /// (the ACK direction takes the odd nanosecond).
    pub fn one_way(&self, class: usize) -> (Nanos, Nanos) {
        let rtt = self.link.rtt_ns + self.class_extra_rtt_ns.get(class).copied().unwrap_or(0);
        (rtt / 2, rtt - rtt / 2)
    }

    fn classes(&self) -> usize {
        self.class_extra_rtt_ns.len().max(1)
    }

    /// The data direction: random loss (when there is any), a policer and a shaper (when
    /// there are), the bottleneck (`"queue"`: the link's rate and queue discipline), the
    /// propagation delay (with jitter, when there is any).
    pub fn data_chain<P: Packet + Send + 'static>(&self) -> Chain<P> {
        let l = &self.link;
        let mut c = Chain::new();
        if l.loss > 0.0 {
            c.push(
                "loss",
                Box::new(
                    RandomLoss::gilbert(
                        l.loss,
                        l.loss_burst,
                        Rng::derive(self.seed, streams::DATA_LOSS),
                    )
                    .per_packet(l.loss_unit == LossUnit::Gso),
                ),
            );
        }
        if let Some(b) = &l.policer {
            c.push(crate::POLICER.name, Box::new(Policer::new(b)));
        }
        if let Some(b) = &l.shaper {
            c.push(
                crate::SHAPER.name,
                Box::new(Shaper::new(b, self.buffer_bytes)),
            );
        }
        c.push(BOTTLENECK, self.bottleneck());
        let delays: Vec<Nanos> = (0..self.classes()).map(|k| self.one_way(k).0).collect();
        c.push(
            "delay",
            Box::new(Delay::new(&delays).with_jitter(
                l.jitter_ns,
                l.reorder,
                Rng::derive(self.seed, streams::JITTER),
            )),
        );
        c
    }

    /// The bottleneck: the link's rate and its queue discipline.
    fn bottleneck<P: Packet + Send + 'static>(&self) -> Box<dyn crate::Element<P>> {
        let l = &self.link;
        let rate = Rate::new(l.rate());
        crate::elements::bottleneck(
            &l.aqm,
            rate,
            self.buffer_bytes,
            l.ecn_threshold_ns,
            self.seed,
        )
    }

    /// The ACK direction: random ACK loss (when there is any), ACK aggregation (when there
    /// is), the propagation delay.
    pub fn ack_chain<P: Packet + Send + 'static>(&self) -> Chain<P> {
        let mut c = Chain::new();
        if self.link.ack_loss > 0.0 {
            c.push(
                "loss",
                Box::new(RandomLoss::bernoulli(
                    self.link.ack_loss,
                    Rng::derive(self.seed, streams::ACK_LOSS),
                )),
            );
        }
        if self.link.ack_aggregation_ns > 0 {
            c.push(
                "aggregation",
                Box::new(AckAggregation::new(self.link.ack_aggregation_ns)),
            );
        }
        let delays: Vec<Nanos> = (0..self.classes()).map(|k| self.one_way(k).1).collect();
        c.push("delay", Box::new(Delay::new(&delays)));
        c
    }
}

/// The element of a data chain that is the bottleneck.
pub const BOTTLENECK: &str = "queue";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    #[test]
    fn the_chains_follow_the_description() {
        let d = PathDesc {
            link: LinkDesc {
                rate_bps: 12e6,
                ack_loss: 0.01,
                rtt_ns: 20_000_001,
                ..LinkDesc::default()
            },
            buffer_bytes: 3000,
            class_extra_rtt_ns: vec![0, 10_000_000],
            seed: 1,
        };
        assert_eq!(d.one_way(0), (10_000_000, 10_000_001));
        assert_eq!(d.one_way(1), (15_000_000, 15_000_001));
        let data = d.data_chain::<P>();
        assert_eq!(
            data.names(),
            ["queue", "delay"],
            "no loss element without loss"
        );
        assert_eq!(d.ack_chain::<P>().names(), ["loss", "delay"]);
        // A class-1 packet: 1 ms on the 12 Mbit/s link, then 15 ms.
        let mut data = data;
        data.enqueue(
            0,
            P {
                class: 1,
                ..P::new(1500)
            },
            &mut |_, _| {},
        );
        data.pump(100_000_000, &mut |_, _| {});
        assert_eq!(data.pop_output().map(|(t, _)| t), Some(16_000_000));
    }

    #[test]
    fn the_paths_buffer_limits_the_bottleneck_and_the_shaper() {
        // Five 1500-byte packets at once onto a 12 Mbit/s link: one goes on the wire, the
        // buffer holds what fits, the rest are dropped.
        let drops = |buffer_bytes: u64, shaper: Option<TokenBucket>| {
            let d = PathDesc {
                link: LinkDesc {
                    rate_bps: 12e6,
                    shaper,
                    ..LinkDesc::default()
                },
                buffer_bytes,
                class_extra_rtt_ns: vec![],
                seed: 1,
            };
            let mut data = d.data_chain::<P>();
            for _ in 0..5 {
                data.enqueue(0, P::new(1500), &mut |_, _| {});
            }
            data.pump(0, &mut |_, _| {});
            (
                data.counter(crate::SHAPER.name, "dropped"),
                data.counter(BOTTLENECK, "dropped"),
            )
        };
        assert_eq!(drops(3000, None), (0, 2));
        assert_eq!(drops(4500, None), (0, 1));
        // A shaper at the link's rate with a one-packet bucket: the first packet passes, the
        // shaper's queue (limited by the same buffer) holds two, and the bottleneck none.
        let bucket = TokenBucket {
            rate_bps: 12e6,
            burst_bytes: 1500,
        };
        assert_eq!(drops(3000, Some(bucket.clone())), (2, 0));
        assert_eq!(drops(6000, Some(bucket)), (0, 0));
    }

    #[test]
    fn every_discipline_is_built_behind_the_link() {
        for a in crate::AQMS {
            let d = PathDesc {
                link: LinkDesc {
                    rate_bps: 12e6,
                    aqm: a.describe(&crate::Given::defaults(a.settings)),
                    ..LinkDesc::default()
                },
                buffer_bytes: 250_000,
                class_extra_rtt_ns: vec![],
                seed: 1,
            };
            let mut data = d.data_chain::<P>();
            data.enqueue(0, P::new(1500), &mut |_, _| {});
            data.pump(100_000_000, &mut |_, _| {});
            assert_eq!(
                data.pop_output().map(|(t, _)| t),
                Some(11_000_000),
                "{}",
                a.name
            );
        }
    }
}
