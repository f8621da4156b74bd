//! Random loss where packets enter the path: each packet (each segment of a GSO packet) is
//! lost independently with probability `p`, as with netem's `loss p%`.

use crate::element::{Departure, Element, Packet};
use crate::{Nanos, Rng};

/// Bernoulli loss. It holds nothing: what survives passes on at once.
pub struct Bernoulli {
    p: f64,
    rng: Rng,
    dropped: u64,
    split: u64,
    lost: Vec<bool>,
}

impl Bernoulli {
    /// Loss with probability `p` in [0, 1), drawn from `rng`.
    pub fn new(p: f64, rng: Rng) -> Self {
        Bernoulli {
            p,
            rng,
            dropped: 0,
            split: 0,
            lost: Vec::new(),
        }
    }
}

impl<P: Packet> Element<P> for Bernoulli {
    fn enqueue(&mut self, _now: Nanos, pkt: P, out: &mut Vec<P>) {
        if pkt.loss_exempt() {
            out.push(pkt);
            return;
        }
        let n = pkt.segments() as usize;
        self.lost.clear();
        for _ in 0..n {
            let l = self.rng.chance(self.p);
            self.lost.push(l);
        }
        let nlost = self.lost.iter().filter(|&&l| l).count();
        if nlost == 0 {
            out.push(pkt);
            return;
        }
        self.dropped += nlost as u64;
        if n == 1 {
            return;
        }
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
        let (dropped, split) = (self.dropped, self.split);
        for p in burst.drain(..) {
            self.enqueue(now, p, out);
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
        let mut l = Bernoulli::new(0.01, Rng::new(1));
        let mut out = Vec::new();
        for _ in 0..100_000 {
            Element::<P>::enqueue(&mut l, 0, P::new(1500), &mut out);
        }
        let dropped = Element::<P>::counters(&l)[0].1;
        assert!((800..1200).contains(&dropped), "{dropped}");
        assert_eq!(out.len() as u64 + dropped, 100_000);
        // Every segment of a GSO packet is a draw; survivors go on alone, marked.
        let mut l = Bernoulli::new(0.5, Rng::new(3));
        let mut out = Vec::new();
        Element::<P>::enqueue(&mut l, 0, P::gso(20, 1500), &mut out);
        let dropped = Element::<P>::counters(&l)[0].1 as usize;
        assert!(dropped > 0 && dropped < 20);
        assert_eq!(out.len(), 20 - dropped);
        assert!(out.iter().all(|p| p.segs == 1 && p.broken));
        // Control packets are never lost.
        let mut l = Bernoulli::new(0.99, Rng::new(3));
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
    fn a_burst_that_loses_a_packet_is_broken() {
        let mut l = Bernoulli::new(0.0, Rng::new(1));
        let mut out = Vec::new();
        assert!(Element::<P>::enqueue_burst(
            &mut l,
            0,
            &mut vec![P::new(1500); 5],
            &mut out
        ));
        assert_eq!(out.len(), 5);
        let mut l = Bernoulli::new(0.5, Rng::new(1));
        assert!(!Element::<P>::enqueue_burst(
            &mut l,
            0,
            &mut vec![P::new(1500); 20],
            &mut Vec::new()
        ));
    }
}
