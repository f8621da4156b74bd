//! Random loss where packets enter the path, drawn for each packet (each segment of a GSO
//! packet), or with [`RandomLoss::per_packet`] (`link.loss_unit = "gso"`) once per packet as
//! the sender's qdisc sees it: a GSO packet (a TSO burst in the simulator) is lost whole,
//! as with netem as the root qdisc of a TSO sender. The models:
//! - Bernoulli: each is lost independently with probability `p`, as with netem's `loss p%`;
//! - Gilbert-Elliott (`link.loss_burst` = N > 1): a two-state chain, as netem's `loss
//!   gemodel` with no loss in the good state and nothing but loss in the bad one. The chain
//!   moves before each draw: good -> bad with probability `p r / (1 - p)`, bad -> good with
//!   `r = 1/N`, so losses come in runs of mean length N and the long-run loss rate is `p`.

use crate::element::{Departure, Element, Packet};
use crate::{Nanos, Rng};

/// Which losses: independent, or in bursts.
enum Model {
    Bernoulli {
        p: f64,
    },
    Gilbert {
        to_bad: f64,
        to_good: f64,
        bad: bool,
    },
}

/// Random loss. It holds nothing: what survives passes on at once.
pub struct RandomLoss {
    model: Model,
    rng: Rng,
    dropped: u64,
    split: u64,
    lost: Vec<bool>,
    /// One draw per packet (GSO packet, TSO burst) instead of per segment.
    per_packet: bool,
}

impl RandomLoss {
    /// Independent loss with probability `p` in [0, 1), drawn from `rng`.
    pub fn bernoulli(p: f64, rng: Rng) -> Self {
        RandomLoss {
            model: Model::Bernoulli { p },
            rng,
            dropped: 0,
            split: 0,
            lost: Vec::new(),
            per_packet: false,
        }
    }

    /// Draw once per packet as the sender's qdisc sees it (a GSO packet, a TSO burst) and
    /// lose it whole, instead of once per segment.
    pub fn per_packet(mut self, on: bool) -> Self {
        self.per_packet = on;
        self
    }

    /// Loss at the long-run rate `p` in bursts of mean length `burst` (>= 1; 1 is Bernoulli).
    /// Needs `p / (1 - p) <= burst` (see [`gilbert_to_bad`]).
    pub fn gilbert(p: f64, burst: f64, rng: Rng) -> Self {
        if burst <= 1.0 || p <= 0.0 {
            return Self::bernoulli(p, rng);
        }
        RandomLoss {
            model: Model::Gilbert {
                to_bad: gilbert_to_bad(p, burst).min(1.0),
                to_good: 1.0 / burst,
                bad: false,
            },
            ..Self::bernoulli(p, rng)
        }
    }

    fn draw(&mut self) -> bool {
        match &mut self.model {
            Model::Bernoulli { p } => self.rng.chance(*p),
            Model::Gilbert {
                to_bad,
                to_good,
                bad,
            } => {
                let flip = if *bad { *to_good } else { *to_bad };
                if self.rng.chance(flip) {
                    *bad = !*bad;
                }
                *bad
            }
        }
    }
}

/// The good -> bad probability of a Gilbert chain with loss rate `p` and mean burst `burst`:
/// `p r / (1 - p)` with `r = 1/burst`. Above 1 the pair is impossible.
pub fn gilbert_to_bad(p: f64, burst: f64) -> f64 {
    p / burst / (1.0 - p)
}

impl<P: Packet> Element<P> for RandomLoss {
    fn enqueue(&mut self, _now: Nanos, pkt: P, out: &mut Vec<P>) {
        if pkt.loss_exempt() {
            out.push(pkt);
            return;
        }
        let n = pkt.segments() as usize;
        if self.per_packet || n == 1 {
            // One draw decides (for a single segment, the same draw the loop below makes).
            if self.draw() {
                self.dropped += n as u64;
            } else {
                out.push(pkt);
            }
            return;
        }
        self.lost.clear();
        for _ in 0..n {
            let l = self.draw();
            self.lost.push(l);
        }
        let nlost = self.lost.iter().filter(|&&l| l).count();
        if nlost == 0 {
            out.push(pkt);
            return;
        }
        self.dropped += nlost as u64;
        // Part of a GSO packet is lost: the rest goes on as separate segments.
        self.split += 1;
        let mut segs = Vec::with_capacity(n);
        pkt.split(&mut segs);
        for (mut s, lost) in segs
            .into_iter()
            .zip(self.lost.iter().copied().chain(std::iter::repeat(false)))
        {
            if !lost {
                s.mark_burst_broken();
                out.push(s);
            }
        }
    }

    fn enqueue_burst(&mut self, now: Nanos, burst: &mut Vec<P>, out: &mut Vec<P>) -> bool {
        if self.per_packet && burst.iter().all(|p| !p.loss_exempt()) {
            // The burst is one GSO packet to the sender's qdisc: one draw loses all of it.
            if self.draw() {
                self.dropped += burst.iter().map(|p| p.segments() as u64).sum::<u64>();
                burst.clear();
                return false;
            }
            out.append(burst);
            return true;
        }
        let (dropped, split) = (self.dropped, self.split);
        if out.is_empty() && burst.iter().all(|p| p.segments() == 1) {
            // Single segments (a TSO burst on the wire): each survivor stays where it is and
            // the buffer passes on whole, one draw per packet in order, as `enqueue` draws.
            let n = burst.len();
            burst.retain(|p| p.loss_exempt() || !self.draw());
            self.dropped += (n - burst.len()) as u64;
            std::mem::swap(burst, out);
        } else {
            for p in burst.drain(..) {
                self.enqueue(now, p, out);
            }
        }
        self.dropped == dropped && self.split == split
    }

    fn dequeue(&mut self, _now: Nanos) -> Option<Departure<P>> {
        None
    }

    fn peek(&self) -> Option<&P> {
        None
    }

    fn next_event(&self) -> Option<Nanos> {
        None
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("dropped", self.dropped), ("split", self.split)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    #[test]
    fn drops_at_the_rate_and_splits_what_is_left_of_a_gso_packet() {
        let mut l = RandomLoss::bernoulli(0.01, Rng::new(1));
        let mut out = Vec::new();
        for _ in 0..100_000 {
            Element::<P>::enqueue(&mut l, 0, P::new(1500), &mut out);
        }
        let dropped = Element::<P>::counters(&l)[0].1;
        assert!((800..1200).contains(&dropped), "{dropped}");
        assert_eq!(out.len() as u64 + dropped, 100_000);
        // Every segment of a GSO packet is a draw; survivors go on alone, marked.
        let mut l = RandomLoss::bernoulli(0.5, Rng::new(3));
        let mut out = Vec::new();
        Element::<P>::enqueue(&mut l, 0, P::gso(20, 1500), &mut out);
        let dropped = Element::<P>::counters(&l)[0].1 as usize;
        assert!(dropped > 0 && dropped < 20);
        assert_eq!(out.len(), 20 - dropped);
        assert!(out.iter().all(|p| p.segs == 1 && p.broken));
        // Control packets are never lost.
        let mut l = RandomLoss::bernoulli(0.99, Rng::new(3));
        let mut out = Vec::new();
        Element::<P>::enqueue(
            &mut l,
            0,
            P {
                control: true,
                ..P::new(60)
            },
            &mut out,
        );
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn gilbert_losses_come_in_bursts_at_the_mean_rate() {
        for (p, burst) in [(0.01, 4.0), (0.02, 10.0)] {
            let mut l = RandomLoss::gilbert(p, burst, Rng::new(7));
            let (mut lost, mut runs, mut prev) = (0u64, 0u64, false);
            let n = 2_000_000;
            for _ in 0..n {
                let x = l.draw();
                lost += x as u64;
                runs += (x && !prev) as u64;
                prev = x;
            }
            let rate = lost as f64 / n as f64;
            let mean_run = lost as f64 / runs as f64;
            assert!((rate / p - 1.0).abs() < 0.1, "rate {rate} for {p}");
            assert!(
                (mean_run / burst - 1.0).abs() < 0.1,
                "mean burst {mean_run} for {burst}"
            );
        }
        // A mean burst of 1 is Bernoulli: the same draws as `bernoulli`.
        let mut a = RandomLoss::gilbert(0.1, 1.0, Rng::new(5));
        let mut b = RandomLoss::bernoulli(0.1, Rng::new(5));
        assert!((0..1000).all(|_| a.draw() == b.draw()));
    }

    #[test]
    fn per_packet_loss_draws_once_per_gso_packet_or_burst() {
        let mut l = RandomLoss::bernoulli(0.3, Rng::new(9)).per_packet(true);
        let mut out = Vec::new();
        let mut whole = 0;
        for _ in 0..1000 {
            let mut burst = vec![P::new(1500); 10];
            if Element::<P>::enqueue_burst(&mut l, 0, &mut burst, &mut out) {
                whole += 1;
            }
        }
        // Every burst arrives whole or not at all, at the rate of one draw per burst.
        assert_eq!(out.len(), whole * 10);
        assert!((250..350).contains(&(1000 - whole)), "{whole}");
        assert_eq!(Element::<P>::counters(&l)[0].1, (1000 - whole as u64) * 10);
        // A GSO packet is one draw too: kept or lost whole, never split.
        let mut out = Vec::new();
        for _ in 0..100 {
            Element::<P>::enqueue(&mut l, 0, P::gso(8, 1500), &mut out);
        }
        assert!(out.iter().all(|p| p.segs == 8 && !p.broken));
        assert_eq!(Element::<P>::counters(&l)[1], ("split", 0));
    }

    #[test]
    fn a_burst_loses_the_packets_its_packets_one_by_one_would() {
        // Packets told apart by size; every fifth a control packet, never drawn for.
        let burst: Vec<P> = (0..400u32)
            .map(|i| P {
                control: i % 5 == 0,
                ..P::new(1000 + i)
            })
            .collect();
        let mut one = RandomLoss::bernoulli(0.2, Rng::new(11));
        let mut expect = Vec::new();
        for p in burst.iter().cloned() {
            Element::<P>::enqueue(&mut one, 0, p, &mut expect);
        }
        // Into an empty output (the buffer passed on) and behind packets already there.
        for ahead in [0usize, 3] {
            let mut l = RandomLoss::bernoulli(0.2, Rng::new(11));
            let mut out = vec![P::new(1); ahead];
            let whole = Element::<P>::enqueue_burst(&mut l, 0, &mut burst.clone(), &mut out);
            assert_eq!(out[ahead..], expect[..]);
            assert_eq!(Element::<P>::counters(&l), Element::<P>::counters(&one));
            assert!(!whole && expect.len() < 380 && expect.len() > 300);
        }
    }

    #[test]
    fn a_burst_that_loses_a_packet_is_broken() {
        let mut l = RandomLoss::bernoulli(0.0, Rng::new(1));
        let mut out = Vec::new();
        assert!(Element::<P>::enqueue_burst(
            &mut l,
            0,
            &mut vec![P::new(1500); 5],
            &mut out
        ));
        assert_eq!(out.len(), 5);
        let mut l = RandomLoss::bernoulli(0.5, Rng::new(1));
        assert!(!Element::<P>::enqueue_burst(
            &mut l,
            0,
            &mut vec![P::new(1500); 20],
            &mut Vec::new()
        ));
    }
}
