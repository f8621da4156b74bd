//! A policer: a token bucket that drops what exceeds it (`link.policer`), as an ISP's or a
//! cloud's ingress policer (Linux: `tc ... police rate R burst B conform-exceed drop`,
//! `net/sched/act_police.c`).
//!
//! Tokens (bytes) accrue at the rate up to `burst_bytes`; the bucket starts full. A packet
//! conforms if the bucket holds its wire length, and then pays for it; otherwise it is
//! dropped and pays nothing. It holds nothing: what conforms passes on at once.
//!
//! Differences from Linux: control packets (SYN, FIN: [`Packet::loss_exempt`]) pass
//! untouched and free, as random loss leaves them alone. A GSO packet (the kernel lab's) is
//! policed segment by segment, as the segments would arrive on a wire: whole if they all
//! conform, otherwise split and only the conforming segments go on (Linux polices a GSO
//! packet as one). No `mtu` check and no peak rate.

use crate::element::{Departure, Element, Packet};
use crate::settings::{Derived, Given, Setting, SettingValue};
use crate::Nanos;

/// A token bucket: tokens (bytes) accrue at `rate_bps` up to `burst_bytes`.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenBucket {
    pub rate_bps: f64,
    pub burst_bytes: u64,
}

impl TokenBucket {
    /// What `[link.policer]` and `[link.shaper]` may set, in the order results list them. A
    /// bare value (`policer = "10mbit"`) is the first, the rate.
    pub const SETTINGS: &'static [Setting] = &[
        Setting::rate(
            "rate",
            "the rate tokens accrue at: what passes in the long run",
        ),
        Setting::size_derived(
            "burst",
            Derived {
                doc: "10 ms at the rate, at least 64 KiB",
                value: default_burst,
            },
            "the bucket's size: the most that passes back to back",
        ),
    ];

    /// The bucket with the settings `g` gives (the rate must be given).
    pub fn from_settings(g: &Given) -> Self {
        TokenBucket {
            rate_bps: g.int("rate") as f64,
            burst_bytes: g.int("burst"),
        }
    }

    /// The value of each of [`Self::SETTINGS`], in order (the rate in whole bits/s).
    pub fn values(&self) -> Vec<SettingValue> {
        vec![
            SettingValue::Int(self.rate_bps as u64),
            SettingValue::Int(self.burst_bytes),
        ]
    }
}

/// A bucket's default burst: 10 ms at its rate (bits/s x 10 ms / 8 bits = rate / 800
/// bytes), and at least 64 KiB.
fn default_burst(g: &Given) -> SettingValue {
    SettingValue::Int((g.int("rate") / 800).max(64 * 1024))
}

/// A token-bucket element a `[link]` key adds before the bottleneck, as scenarios name it:
/// listed in [`BUCKETS`](crate::BUCKETS), each declared in its element's file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    /// Its key under `[link]` (`"policer"`), and its name in the data chain.
    pub name: &'static str,
    /// What it does, in words.
    pub help: &'static str,
    /// What its table may set: a [`TokenBucket`]'s.
    pub settings: &'static [Setting],
}

/// The policer (`link.policer`).
pub const POLICER: Bucket = Bucket {
    name: "policer",
    help: "a token-bucket policer before the bottleneck that drops what exceeds it",
    settings: TokenBucket::SETTINGS,
};

/// Rounding slack when comparing tokens with a packet's length, bytes.
const SLACK: f64 = 1e-6;

/// The policer element. It holds nothing.
pub struct Policer {
    /// Bytes per ns.
    rate: f64,
    burst: f64,
    tokens: f64,
    /// When `tokens` was last brought up to date.
    updated: Nanos,
    forwarded: u64,
    dropped: u64,
    split: u64,
}

impl Policer {
    pub fn new(bucket: &TokenBucket) -> Self {
        let burst = bucket.burst_bytes as f64;
        Policer {
            rate: bucket.rate_bps.max(0.0) / 8e9,
            burst,
            tokens: burst,
            updated: 0,
            forwarded: 0,
            dropped: 0,
            split: 0,
        }
    }

    /// Bring the bucket up to `now`.
    fn refill(&mut self, now: Nanos) {
        if now > self.updated {
            let dt = (now - self.updated) as f64;
            self.tokens = (self.tokens + dt * self.rate).min(self.burst);
            self.updated = now;
        }
    }

    /// Take `len` bytes from the bucket if it holds them.
    fn take(&mut self, len: u32) -> bool {
        let len = len as f64;
        if self.tokens + SLACK >= len {
            self.tokens = (self.tokens - len).max(0.0);
            true
        } else {
            false
        }
    }

    /// Police `pkt` at `now`; returns whether any of it was dropped.
    fn police<P: Packet>(&mut self, now: Nanos, pkt: P, out: &mut Vec<P>) -> bool {
        if pkt.loss_exempt() {
            out.push(pkt);
            return false;
        }
        self.refill(now);
        let n = pkt.segments() as u64;
        if self.take(pkt.wire_len()) {
            self.forwarded += n;
            out.push(pkt);
            return false;
        }
        if n == 1 {
            self.dropped += 1;
            return true;
        }
        // Part of a GSO packet conforms at most: police its segments one by one.
        self.split += 1;
        let mut segs = Vec::with_capacity(n as usize);
        pkt.split(&mut segs);
        for mut s in segs {
            if self.take(s.wire_len()) {
                self.forwarded += 1;
                s.mark_burst_broken();
                out.push(s);
            } else {
                self.dropped += 1;
            }
        }
        true
    }
}

impl<P: Packet> Element<P> for Policer {
    fn enqueue(&mut self, now: Nanos, pkt: P, out: &mut Vec<P>) {
        self.police(now, pkt, out);
    }

    fn enqueue_burst(&mut self, now: Nanos, burst: &mut Vec<P>, out: &mut Vec<P>) -> bool {
        let mut whole = true;
        for mut p in burst.drain(..) {
            if !whole {
                p.mark_burst_broken();
            }
            if self.police(now, p, out) {
                whole = false;
            }
        }
        whole
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
        vec![
            ("forwarded", self.forwarded),
            ("dropped", self.dropped),
            ("split", self.split),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::P;

    fn counter(p: &Policer, name: &str) -> u64 {
        Element::<P>::counters(p)
            .into_iter()
            .find(|c| c.0 == name)
            .unwrap()
            .1
    }

    fn bucket(rate_bps: f64, burst_bytes: u64) -> Policer {
        Policer::new(&TokenBucket {
            rate_bps,
            burst_bytes,
        })
    }

    #[test]
    fn a_bucket_is_built_from_its_declared_settings() {
        let rate = |r: u64| move |k: &str| (k == "rate").then_some(SettingValue::Int(r));
        let from =
            |r: u64| TokenBucket::from_settings(&Given::new(TokenBucket::SETTINGS, &rate(r)));
        // The default burst: 10 ms at the rate, at least 64 KiB (they meet at 52.4288 Mbit/s).
        assert_eq!(from(10_000_000).burst_bytes, 65_536);
        assert_eq!(from(52_428_800).burst_bytes, 65_536);
        assert_eq!(from(60_000_000).burst_bytes, 75_000);
        assert_eq!(from(1_000_000_000).burst_bytes, 1_250_000);
        let b = TokenBucket {
            rate_bps: 20e6,
            burst_bytes: 3000,
        };
        assert_eq!(
            b.values(),
            [SettingValue::Int(20_000_000), SettingValue::Int(3000)]
        );
        let vals = b.values();
        let get = |k: &str| {
            let i = TokenBucket::SETTINGS.iter().position(|s| s.name == k)?;
            Some(vals[i])
        };
        assert_eq!(
            TokenBucket::from_settings(&Given::new(TokenBucket::SETTINGS, &get)),
            b
        );
        let names: Vec<&str> = crate::BUCKETS.iter().map(|b| b.name).collect();
        assert_eq!(names, ["policer", "shaper"]);
    }

    #[test]
    fn at_twice_the_rate_the_policed_rate_goes_through() {
        // 10 Mbit/s policer, 20 Mbit/s offered (1500 bytes every 0.6 ms) for 10 s.
        let mut p = bucket(10e6, 15_000);
        let mut out = Vec::new();
        let n = 10_000_000_000 / 600_000;
        for k in 0..n {
            p.enqueue(k * 600_000, P::new(1500), &mut out);
        }
        let bytes: u64 = out.iter().map(|p| p.wire as u64).sum();
        let rate = bytes as f64 * 8.0 / 10.0;
        assert!((rate / 10e6 - 1.0).abs() < 0.02, "{rate}");
        assert_eq!(counter(&p, "forwarded") + counter(&p, "dropped"), n);
        // Half is dropped (less the initial burst).
        assert!((counter(&p, "dropped") as f64 / n as f64 - 0.5).abs() < 0.01);
    }

    #[test]
    fn a_full_bucket_passes_a_burst_of_its_size_whole() {
        let mut p = bucket(12e6, 15_000);
        let mut out = Vec::new();
        assert!(p.enqueue_burst(0, &mut vec![P::new(1500); 10], &mut out));
        assert_eq!(out.len(), 10);
        assert!(out.iter().all(|p| !p.broken));
        // Empty now: the next burst loses its first packet; the rest is marked.
        out.clear();
        assert!(!p.enqueue_burst(0, &mut vec![P::new(1500); 3], &mut out));
        assert!(out.is_empty());
        assert_eq!(counter(&p, "dropped"), 3);
        // 1 ms at 12 Mbit/s refills 1500 bytes: one packet, not two.
        let mut burst = vec![P::new(1500), P::new(1500), P::new(1500)];
        assert!(!p.enqueue_burst(1_000_000, &mut burst, &mut out));
        assert_eq!(out.len(), 1);
        assert!(!out[0].broken, "before the drop");
        // After 100 ms the bucket is full again, not fuller.
        out.clear();
        for _ in 0..11 {
            p.enqueue(100_000_000, P::new(1500), &mut out);
        }
        assert_eq!(out.len(), 10);
    }

    #[test]
    fn a_gso_packet_that_partly_conforms_is_split() {
        let mut p = bucket(12e6, 15_000);
        let mut out = Vec::new();
        // Fits: passes whole.
        p.enqueue(0, P::gso(4, 1500), &mut out);
        assert_eq!(out, vec![P::gso(4, 1500)]);
        // 9000 bytes left: 6 of 8 segments go on, marked; 2 are dropped.
        out.clear();
        p.enqueue(0, P::gso(8, 1500), &mut out);
        assert_eq!(out.len(), 6);
        assert!(out.iter().all(|p| p.segs == 1 && p.broken));
        assert_eq!(counter(&p, "dropped"), 2);
        assert_eq!(counter(&p, "split"), 1);
        assert_eq!(counter(&p, "forwarded"), 10);
    }

    #[test]
    fn control_packets_pass_free() {
        let mut p = bucket(12e6, 1500);
        let mut out = Vec::new();
        let syn = P {
            control: true,
            ..P::new(60)
        };
        p.enqueue(0, syn.clone(), &mut out);
        p.enqueue(0, P::new(1500), &mut out);
        p.enqueue(0, syn.clone(), &mut out);
        p.enqueue(0, P::new(1500), &mut out);
        assert_eq!(out, vec![syn.clone(), P::new(1500), syn]);
        assert_eq!(counter(&p, "dropped"), 1);
    }
}
