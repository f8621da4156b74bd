//! RTT estimation and the retransmission timeout.
//!
//! Smoothed RTT and variance per RFC 6298 (alpha 1/8, beta 1/4). The timeout follows Linux
//! (`tcp_set_rto()` in net/ipv4/tcp_input.c): `RTO = srtt + max(4 * rttvar, rto_min)` with
//! `rto_min` = 200 ms (`TCP_RTO_MIN`), capped at 120 s (`TCP_RTO_MAX`), 1 s before the first
//! sample (`TCP_TIMEOUT_INIT`), doubled on every expiry (exponential backoff) and reset by
//! the next ACK that advances the cumulative ACK point. The windowed minimum RTT is kept over
//! 300 s like `tcp_min_rtt()` (`sysctl_tcp_min_rtt_wlen`).

use crate::windowed::WindowedFilter;
use crate::{Nanos, NS_PER_MS, NS_PER_SEC};

pub const RTO_MIN: Nanos = 200 * NS_PER_MS;
pub const RTO_MAX: Nanos = 120 * NS_PER_SEC;
pub const RTO_INIT: Nanos = NS_PER_SEC;
/// Window of the min-RTT filter, us (Linux `tcp_min_rtt_wlen` = 300 s).
pub const MIN_RTT_WIN_US: u64 = 300_000_000;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Nanos,
    rttvar: Nanos,
    has_sample: bool,
    backoff: u32,
    min_rtt: WindowedFilter,
    latest: Nanos,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl RttEstimator {
    pub fn new() -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            has_sample: false,
            backoff: 0,
            min_rtt: WindowedFilter::new_min(),
            latest: 0,
        }
    }

    /// Feed one RTT sample taken at `now`.
    pub fn on_sample(&mut self, _now: Nanos, rtt: Nanos) {
        let rtt = rtt.max(1);
        self.latest = rtt;
        if !self.has_sample {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
            self.has_sample = true;
        } else {
            let err = self.srtt.abs_diff(rtt);
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + rtt) / 8;
        }
    }

    /// Feed a sample to the min-RTT filter only (Linux updates it with the RTT of the most
    /// recently sent packet an ACK covers, which may differ from the srtt sample).
    pub fn on_min_sample(&mut self, now: Nanos, rtt: Nanos) {
        self.min_rtt.update(MIN_RTT_WIN_US, now / 1000, rtt.max(1) / 1000);
    }

    pub fn has_sample(&self) -> bool {
        self.has_sample
    }
    pub fn srtt(&self) -> Nanos {
        self.srtt
    }
    pub fn rttvar(&self) -> Nanos {
        self.rttvar
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
        if !self.has_sample {
            return RTO_INIT;
        }
        (self.srtt + (4 * self.rttvar).max(RTO_MIN)).min(RTO_MAX)
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
        r.on_sample(0, 100 * NS_PER_MS);
        assert_eq!(r.srtt(), 100 * NS_PER_MS);
        assert_eq!(r.rttvar(), 50 * NS_PER_MS);
        assert_eq!(r.rto(), 300 * NS_PER_MS);
        r.on_sample(0, 200 * NS_PER_MS);
        assert_eq!(r.srtt(), 112_500_000);
    }

    #[test]
    fn rto_floor_and_backoff() {
        let mut r = RttEstimator::new();
        for _ in 0..50 {
            r.on_sample(0, NS_PER_MS);
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
