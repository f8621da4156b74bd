//! The one factory: a path description becomes the chains of elements that both backends
//! run (the simulator in simulated time, the kernel lab's user-space element on real
//! packets), so "the same path" is the same code.
//!
//! A new element is its file under `elements/` plus one line below (and its scenario keys).

use crate::chain::Chain;
use crate::element::Packet;
use crate::elements::{Delay, DropTail, RandomLoss};
use crate::{Nanos, Rng};

/// The random streams of a run: each component draws from its own, derived from the run's
/// seed, so a seed means the same loss pattern on every backend.
pub mod streams {
    /// Random loss on data packets.
    pub const DATA_LOSS: u64 = 1;
    /// Random loss on ACKs.
    pub const ACK_LOSS: u64 = 2;
    /// The simulated hosts' handling times.
    pub const HOSTS: u64 = 3;
}

/// What a scenario's `[link]` says about the path (built by `cclab_scenario`; a backend
/// passes it through untouched, so a new path setting is a field here, its scenario key and
/// its factory line, and no backend changes).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkDesc {
    /// Bottleneck rate, bits per second of whole IP packets.
    pub rate_bps: f64,
    /// Base round-trip propagation delay, ns.
    pub rtt_ns: Nanos,
    /// Bottleneck buffer (waiting bytes), bytes.
    pub buffer_bytes: u64,
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
}

/// A run's path: the link, the delay classes of its flows, the run's seed.
#[derive(Clone, Debug, PartialEq)]
pub struct PathDesc {
    pub link: LinkDesc,
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

    /// The data direction: random loss (when there is any), the bottleneck (`"queue"`), the
    /// propagation delay.
    pub fn data_chain<P: Packet + Send + 'static>(&self) -> Chain<P> {
        let mut c = Chain::new();
        if self.link.loss > 0.0 {
            c.push(
                "loss",
                Box::new(RandomLoss::gilbert(
                    self.link.loss,
                    self.link.loss_burst,
                    Rng::derive(self.seed, streams::DATA_LOSS),
                )),
            );
        }
        c.push(
            "queue",
            Box::new(
                DropTail::new(self.link.rate_bps, self.link.buffer_bytes)
                    .with_ce_threshold(self.link.ecn_threshold_ns),
            ),
        );
        let delays: Vec<Nanos> = (0..self.classes()).map(|k| self.one_way(k).0).collect();
        c.push("delay", Box::new(Delay::new(&delays)));
        c
    }

    /// The ACK direction: random ACK loss (when there is any), the propagation delay.
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
                buffer_bytes: 3000,
                loss: 0.0,
                ack_loss: 0.01,
                loss_burst: 1.0,
                rtt_ns: 20_000_001,
                ecn_threshold_ns: None,
            },
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
}
