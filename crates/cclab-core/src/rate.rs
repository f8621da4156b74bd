//! Delivery-rate sampling, with the semantics of Linux `net/ipv4/tcp_rate.c`
//! (and draft-cheng-iccrg-delivery-rate-estimation).
//!
//! Every transmission records a snapshot of the connection's delivery state ([`TxRecord`]):
//! how many segments had been delivered, when, and when the current "send phase" began. When
//! an ACK delivers segments, the most recently *sent* of them defines the sample: the
//! segments delivered since its snapshot, over the longer of the send interval and the ACK
//! interval (so ACK compression cannot inflate the rate). Samples whose interval is shorter
//! than min RTT are discarded. A sample taken while the sender had nothing to send is
//! flagged app-limited, so a bandwidth estimator can ignore it unless it is larger.

use crate::tcp_sock::TcpState;

/// Per-transmission snapshot (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TxRecord {
    /// Send time of this transmission, us.
    pub sent_us: u64,
    /// Start of the send phase this transmission belongs to, us.
    pub first_tx_us: u64,
    /// `tp.delivered_mstamp_us` at send; 0 once the segment has been counted as delivered.
    pub delivered_mstamp_us: u64,
    /// `tp.delivered` at send.
    pub delivered: u64,
    pub is_app_limited: bool,
    pub is_retrans: bool,
    /// Packets in flight after this transmission, itself included (`tx.in_flight`).
    pub in_flight: u32,
    /// `tp.lost` at send (`tx.lost`).
    pub lost: u64,
    /// `tp.delivered_ce` at send (`tx.delivered_ce`).
    pub delivered_ce: u64,
}

/// A delivery-rate sample (Linux `struct rate_sample`, net/ipv4/tcp_rate.c).
#[derive(Clone, Copy, Debug)]
pub struct RateSample {
    /// `tp->delivered_mstamp` when the sampled packet was sent, us.
    pub prior_mstamp_us: u64,
    /// `tp->delivered` when the sampled packet was sent.
    pub prior_delivered: u64,
    /// Segments delivered over the interval; -1 = invalid sample.
    pub delivered: i64,
    /// Sample interval in us (max of send and ACK intervals); -1 = invalid.
    pub interval_us: i64,
    /// Send-side interval, us.
    pub snd_interval_us: i64,
    /// ACK-side interval, us.
    pub rcv_interval_us: i64,
    /// RTT of the most recently sent packet this ACK delivered, us; -1 = none.
    pub rtt_us: i64,
    /// Segments newly marked lost while processing this ACK.
    pub losses: u32,
    /// Segments newly delivered (acked or sacked) by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK.
    pub prior_in_flight: u32,
    /// Whether the sampled packet was sent while app-limited.
    pub is_app_limited: bool,
    /// Whether the sampled packet was a retransmission.
    pub is_retrans: bool,
    /// Whether the ACK was (probably) delayed by the receiver.
    pub is_ack_delayed: bool,
    /// Packets in flight when the sampled packet was sent, itself included
    /// (`rs->tx_in_flight`, Google's BBRv3 kernels).
    pub tx_in_flight: u32,
    /// Segments marked lost between the sampled packet's transmission and this ACK
    /// (`rs->lost` = `tp->lost - tx.lost`).
    pub lost: u32,
    /// Segments delivered with ECE over the sample's interval (`rs->delivered_ce`).
    pub delivered_ce: i64,
    /// The ACK carried ECE (`FLAG_ECE`).
    pub is_ece: bool,
    /// The ACK acknowledged the sequence a tail-loss probe retransmitted
    /// (`rs->is_acking_tlp_retrans_seq`).
    pub is_acking_tlp_retrans_seq: bool,
}

impl Default for RateSample {
    fn default() -> Self {
        RateSample {
            prior_mstamp_us: 0,
            prior_delivered: 0,
            delivered: -1,
            interval_us: -1,
            snd_interval_us: 0,
            rcv_interval_us: 0,
            rtt_us: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
            tx_in_flight: 0,
            lost: 0,
            delivered_ce: 0,
            is_ece: false,
            is_acking_tlp_retrans_seq: false,
        }
    }
}

/// Connection-level sampler state.
#[derive(Clone, Debug, Default)]
pub struct RateSampler {
    /// Send time of the most recently delivered transmission (`tp->first_tx_mstamp`).
    first_tx_us: u64,
    /// Last non-app-limited (or highest app-limited) sample (`tp->rate_delivered` / `rate_interval_us`).
    pub rate_delivered: u64,
    pub rate_interval_us: u64,
    pub rate_app_limited: bool,
    // Sequence end of the sampled transmission, to break send-time ties (`rs->last_end_seq`).
    last_end_seq: u64,
    // `tx.lost` and `tx.delivered_ce` of the sampled transmission.
    prior_lost: u64,
    prior_delivered_ce: u64,
}

impl RateSampler {
    pub fn new() -> Self {
        Self::default()
    }

    /// A segment is being (re)transmitted at `now_us` (`tcp_rate_skb_sent()`).
    pub fn on_sent(&mut self, tp: &mut TcpState, now_us: u64, is_retrans: bool) -> TxRecord {
        if tp.packets_out == 0 {
            // Nothing in flight: a new send phase starts now.
            self.first_tx_us = now_us;
            tp.delivered_mstamp_us = now_us;
        }
        TxRecord {
            sent_us: now_us,
            first_tx_us: self.first_tx_us,
            delivered_mstamp_us: tp.delivered_mstamp_us,
            delivered: tp.delivered,
            is_app_limited: tp.app_limited != 0,
            is_retrans,
            // The caller counts the segment into packets_out/retrans_out after this call.
            in_flight: tp.packets_in_flight() + 1,
            lost: tp.lost,
            delivered_ce: tp.delivered_ce,
        }
    }

    /// A transmission was delivered (SACKed or cumulatively ACKed for the first time)
    /// (`tcp_rate_skb_delivered()`). `end_seq` is the segment number + 1.
    pub fn on_delivered(&mut self, rec: &mut TxRecord, end_seq: u64, rs: &mut RateSample) {
        if rec.delivered_mstamp_us == 0 {
            return;
        }
        let newer = rs.prior_delivered == 0
            || rec.sent_us > self.first_tx_us
            || (rec.sent_us == self.first_tx_us && end_seq > self.last_end_seq);
        if newer {
            rs.prior_delivered = rec.delivered;
            rs.prior_mstamp_us = rec.delivered_mstamp_us;
            rs.is_app_limited = rec.is_app_limited;
            rs.is_retrans = rec.is_retrans;
            rs.tx_in_flight = rec.in_flight;
            self.prior_lost = rec.lost;
            self.prior_delivered_ce = rec.delivered_ce;
            self.last_end_seq = end_seq;
            self.first_tx_us = rec.sent_us;
            rs.interval_us = rec.sent_us.saturating_sub(rec.first_tx_us) as i64;
        }
        rec.delivered_mstamp_us = 0;
    }

    /// Finish the sample for one ACK (`tcp_rate_gen()`): `delivered` segments newly delivered,
    /// `lost` newly marked lost.
    pub fn generate(&mut self, tp: &mut TcpState, delivered: u32, lost: u32, rs: &mut RateSample) {
        if tp.app_limited != 0 && tp.delivered > tp.app_limited {
            tp.app_limited = 0;
        }
        if delivered > 0 {
            tp.delivered_mstamp_us = tp.now_us;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        if rs.prior_mstamp_us == 0 {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = (tp.delivered - rs.prior_delivered) as i64;
        rs.delivered_ce = tp.delivered_ce.saturating_sub(self.prior_delivered_ce) as i64;
        rs.lost = tp.lost.saturating_sub(self.prior_lost) as u32;
        let snd_us = rs.interval_us.max(0);
        let ack_us = tp.now_us.saturating_sub(rs.prior_mstamp_us) as i64;
        rs.interval_us = snd_us.max(ack_us);
        rs.snd_interval_us = snd_us;
        rs.rcv_interval_us = ack_us;
        if tp.min_rtt_us != u32::MAX && rs.interval_us < tp.min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }
        if !rs.is_app_limited
            || (rs.delivered as u64) * self.rate_interval_us
                >= self.rate_delivered * rs.interval_us as u64
        {
            self.rate_delivered = rs.delivered as u64;
            self.rate_interval_us = rs.interval_us as u64;
            self.rate_app_limited = rs.is_app_limited;
        }
    }

    /// Latest delivery rate in bytes per second (`tcpi_delivery_rate`).
    pub fn delivery_rate_bps(&self, mss: u32) -> f64 {
        if self.rate_interval_us == 0 {
            return 0.0;
        }
        self.rate_delivered as f64 * mss as f64 * 8.0 * 1e6 / self.rate_interval_us as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_uses_longer_of_send_and_ack_interval() {
        let mut tp = TcpState::new(1000, 10);
        let mut s = RateSampler::new();
        tp.now_us = 1000;
        // Send 10 segments 100 us apart starting at t=1000.
        let mut recs = Vec::new();
        for i in 0..10u64 {
            let now = 1000 + 100 * i;
            recs.push(s.on_sent(&mut tp, now, false));
            tp.packets_out += 1;
        }
        // All ten delivered by one ACK at t=11000 (e.g. after 10 ms of RTT).
        tp.now_us = 11_000;
        tp.min_rtt_us = 5000;
        let mut rs = RateSample::default();
        for (i, r) in recs.iter_mut().enumerate() {
            tp.delivered += 1;
            s.on_delivered(r, i as u64 + 1, &mut rs);
        }
        s.generate(&mut tp, 10, 0, &mut rs);
        assert_eq!(rs.delivered, 10);
        // send interval 900 us, ack interval 10000 us -> 10000.
        assert_eq!(rs.snd_interval_us, 900);
        assert_eq!(rs.interval_us, 10_000);
        assert!((s.delivery_rate_bps(1000) - 8e6).abs() < 1.0);
        // A second delivery of the same record does not count.
        let mut rs2 = RateSample::default();
        s.on_delivered(&mut recs[9], 10, &mut rs2);
        assert_eq!(rs2.prior_delivered, 0);
    }

    #[test]
    fn interval_below_min_rtt_is_invalid() {
        let mut tp = TcpState::new(1000, 10);
        let mut s = RateSampler::new();
        let mut rec = s.on_sent(&mut tp, 100, false);
        tp.packets_out = 1;
        tp.now_us = 200;
        tp.min_rtt_us = 1000;
        tp.delivered = 1;
        let mut rs = RateSample::default();
        s.on_delivered(&mut rec, 1, &mut rs);
        s.generate(&mut tp, 1, 0, &mut rs);
        assert_eq!(rs.interval_us, -1);
    }
}
