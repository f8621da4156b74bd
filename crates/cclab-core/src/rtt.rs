//! RTT estimation and the retransmission timeout, as Linux computes them
//! (`tcp_rtt_estimator()` and `tcp_set_rto()` in net/ipv4/tcp_input.c).
//!
//! srtt is the RFC 6298 average (gain 1/8). The variance term differs from the RFC in the way
//! Linux does it: the mean deviation `mdev` moves with gain 1/4, but only 1/32 when the RTT
//! falls (so a sudden improvement does not shrink the timeout at once); `rttvar` follows the
//! largest `4 x mdev` seen in the current round trip, never below `rto_min` (200 ms,
//! `TCP_RTO_MIN`, unless the route sets `rto_min`: [`RttEstimator::with_rto_min`]), and decays a quarter of the way towards it once per round trip.
//! `RTO = srtt + rttvar`, capped at 120 s (`TCP_RTO_MAX`), 1 s before the first sample
//! (`TCP_TIMEOUT_INIT`), doubled on every expiry. The windowed minimum RTT is kept over 300 s
//! like `tcp_min_rtt()` (`sysctl_tcp_min_rtt_wlen`).

use crate::windowed::WindowedFilter;
use crate::{Nanos, NS_PER_MS, NS_PER_SEC};

pub const RTO_MIN: Nanos = 200 * NS_PER_MS;
pub const RTO_MAX: Nanos = 120 * NS_PER_SEC;
pub const RTO_INIT: Nanos = NS_PER_SEC;
/// Window of the min-RTT filter, us (Linux `tcp_min_rtt_wlen` = 300 s).
pub const MIN_RTT_WIN_US: u64 = 300_000_000;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT in us, scaled by 8 (Linux `srtt_us`); 0 = no sample yet.
    srtt8: i64,
    /// Mean deviation in us, scaled by 4 (`mdev_us`).
    mdev4: i64,
    /// Largest mdev4 in the current round trip (`mdev_max_us`).
    mdev_max: i64,
    /// Variance term of the timeout, us (`rttvar_us`).
    rttvar: i64,
    /// `snd_nxt` when the current round trip of the variance tracking began (`rtt_seq`).
    rtt_seq: u64,
    backoff: u32,
    min_rtt: WindowedFilter,
    latest: Nanos,
    /// The timeout's lower bound, us (`tcp_rto_min_us()`).
    rto_min_us: i64,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl RttEstimator {
    pub fn new() -> Self {
        Self::with_rto_min(RTO_MIN)
    }

    /// An estimator whose timeout never falls below `rto_min` (the route's `rto_min`).
    pub fn with_rto_min(rto_min: Nanos) -> Self {
        RttEstimator {
            rto_min_us: (rto_min / 1000).max(1) as i64,
            srtt8: 0,
            mdev4: 0,
            mdev_max: 0,
            rttvar: 0,
            rtt_seq: 0,
            backoff: 0,
            min_rtt: WindowedFilter::new_min(),
            latest: 0,
        }
    }

    /// Feed one RTT sample. `snd_una` / `snd_nxt` (segments) delimit round trips for the
    /// variance tracking.
    pub fn on_sample(&mut self, rtt: Nanos, snd_una: u64, snd_nxt: u64) {
        self.latest = rtt.max(1);
        let m_us = (rtt / 1000) as i64;
        if self.srtt8 == 0 {
            self.srtt8 = (m_us << 3).max(1);
            self.mdev4 = m_us << 1; // so that RTO starts at 3 x RTT
            self.rttvar = self.mdev4.max(self.rto_min_us);
            self.mdev_max = self.rttvar;
            self.rtt_seq = snd_nxt;
            return;
        }
        let mut m = m_us - (self.srtt8 >> 3);
        self.srtt8 = (self.srtt8 + m).max(1);
        if m < 0 {
            m = -m - (self.mdev4 >> 2);
            // The RTT fell: move the deviation with a finer gain (1/32 instead of 1/4).
            if m > 0 {
                m >>= 3;
            }
        } else {
            m -= self.mdev4 >> 2;
        }
        self.mdev4 += m;
        if self.mdev4 > self.mdev_max {
            self.mdev_max = self.mdev4;
            if self.mdev_max > self.rttvar {
                self.rttvar = self.mdev_max;
            }
        }
        if snd_una > self.rtt_seq {
            // A round trip ended: let rttvar decay towards this round's maximum.
            if self.mdev_max < self.rttvar {
                self.rttvar -= (self.rttvar - self.mdev_max) >> 2;
            }
            self.rtt_seq = snd_nxt;
            self.mdev_max = self.rto_min_us;
        }
    }

    /// Feed a sample to the min-RTT filter only (Linux updates it with the RTT of the most
    /// recently sent packet an ACK covers, which may differ from the srtt sample).
    pub fn on_min_sample(&mut self, now: Nanos, rtt: Nanos) {
        self.min_rtt
            .update(MIN_RTT_WIN_US, now / 1000, rtt.max(1) / 1000);
    }

    pub fn has_sample(&self) -> bool {
        self.srtt8 != 0
    }
    /// The timeout's lower bound, ns.
    pub fn rto_min(&self) -> Nanos {
        self.rto_min_us as u64 * 1000
    }
    /// Smoothed RTT, ns.
    pub fn srtt(&self) -> Nanos {
        (self.srtt8 as u64 >> 3) * 1000
    }
    /// The variance term of the timeout, ns.
    pub fn rttvar(&self) -> Nanos {
        self.rttvar as u64 * 1000
    }
    pub fn latest(&self) -> Nanos {
        self.latest
    }
    /// Windowed min RTT in us, `u32::MAX` if none.
    pub fn min_rtt_us(&self) -> u32 {
        let v = self.min_rtt.get();
        if v == u64::MAX {
            u32::MAX
        } else {
            v.min(u32::MAX as u64 - 1) as u32
        }
    }

    /// Timeout without backoff.
    pub fn base_rto(&self) -> Nanos {
        if !self.has_sample() {
            return RTO_INIT;
        }
        (self.srtt() + self.rttvar()).min(RTO_MAX)
    }

    /// Current timeout including exponential backoff.
    pub fn rto(&self) -> Nanos {
        let b = self.backoff.min(20);
        self.base_rto().saturating_mul(1 << b).min(RTO_MAX)
    }

    pub fn backoff(&mut self) {
        self.backoff += 1;
    }
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_and_smoothing() {
        let mut r = RttEstimator::new();
        assert_eq!(r.rto(), RTO_INIT);
        r.on_sample(100 * NS_PER_MS, 0, 10);
        assert_eq!(r.srtt(), 100 * NS_PER_MS);
        // First sample: rttvar = max(2 x RTT, 200 ms), so RTO = 3 x RTT here.
        assert_eq!(r.rttvar(), 200 * NS_PER_MS);
        assert_eq!(r.rto(), 300 * NS_PER_MS);
        r.on_sample(200 * NS_PER_MS, 1, 10);
        assert_eq!(r.srtt(), 112_500_000);
        // A 300 ms first sample gives RTO 900 ms (Linux), not srtt + 200 ms.
        let mut r = RttEstimator::new();
        r.on_sample(300 * NS_PER_MS, 0, 10);
        assert_eq!(r.rto(), 900 * NS_PER_MS);
    }

    #[test]
    fn rttvar_decays_once_per_round_trip_and_falls_slowly() {
        let mut r = RttEstimator::new();
        r.on_sample(300 * NS_PER_MS, 0, 100);
        let first = r.rto();
        // Many samples within one round trip (snd_una below rtt_seq): rttvar cannot decay.
        for i in 0..50 {
            r.on_sample(300 * NS_PER_MS, i, 100);
        }
        assert_eq!(r.rttvar(), 600 * NS_PER_MS);
        // Each completed round trip takes a quarter of the excess over that round's largest
        // deviation away (the first round's maximum was the initial value itself).
        r.on_sample(300 * NS_PER_MS, 101, 200);
        assert_eq!(r.rto(), first);
        r.on_sample(300 * NS_PER_MS, 201, 300);
        assert_eq!(r.rttvar(), 500 * NS_PER_MS);
        assert!(r.rto() < first);
        assert!(r.rttvar() > RTO_MIN);
    }

    #[test]
    fn rto_floor_and_backoff() {
        let mut r = RttEstimator::new();
        for i in 0..50 {
            r.on_sample(NS_PER_MS, i, i + 10);
        }
        // srtt 1 ms, rttvar ~0: floor of 200 ms applies on top of srtt.
        assert!(r.rto() >= RTO_MIN && r.rto() < RTO_MIN + 2 * NS_PER_MS);
        let base = r.rto();
        r.backoff();
        r.backoff();
        assert_eq!(r.rto(), base * 4);
        for _ in 0..30 {
            r.backoff();
        }
        assert_eq!(r.rto(), RTO_MAX);
        r.reset_backoff();
        assert_eq!(r.rto(), base);
    }
}
