//! Monitor intervals: what a flow driven from outside (the `external` controller,
//! `cclab_core::cc::external`) is shown at each decision.
//!
//! The statistics are those the learning-based controllers use (PCC/Aurora's monitor
//! intervals, Orca's and Indigo's observations): every one is measured over one interval,
//! from the sender's own counters and the RTT samples its ACKs gave, so the sender never
//! learns anything a Linux sender could not.

use cclab_core::packet::Ack;
use cclab_core::sender::{AckOutcome, Sender};
use cclab_core::Nanos;

/// One monitor interval of one flow. Rates in bits per second, times in seconds, counts in
/// packets (segments).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntervalStats {
    /// The interval's end (simulated time since the run began), s.
    pub t_s: f64,
    /// The interval's length, s.
    pub interval_s: f64,
    /// Segments newly delivered (cumulatively ACKed or SACKed) in the interval x MSS x 8 /
    /// length: the receiver's goodput as the sender sees it, bit/s.
    pub delivery_rate_bps: f64,
    /// Payload sent in the interval (retransmissions included) x 8 / length, bit/s.
    pub send_rate_bps: f64,
    /// Smallest, mean and latest RTT sample of the interval's ACKs, s (all three are the
    /// smoothed RTT when no ACK gave a sample; 0 before any).
    pub rtt_min_s: f64,
    pub rtt_avg_s: f64,
    pub rtt_latest_s: f64,
    /// Least-squares slope of the interval's RTT samples over their arrival time (s per s;
    /// Aurora's "latency gradient"); 0 with fewer than two samples.
    pub rtt_gradient: f64,
    /// The connection's minimum RTT so far, s: the queue-free estimate (Linux's windowed
    /// `min_rtt`); `rtt_avg_s - min_rtt_s` estimates the queueing delay.
    pub min_rtt_s: f64,
    /// Segments newly marked lost in the interval (RACK, SACK, RTO).
    pub lost_pkts: f64,
    /// Segments delivered with a CE mark (ECN echo) in the interval.
    pub ecn_pkts: f64,
    /// Segments sent in the interval, retransmissions included.
    pub sent_pkts: f64,
    /// Segments delivered in the interval.
    pub delivered_pkts: f64,
    /// Segments in flight at the interval's end.
    pub inflight_pkts: f64,
    /// cwnd (packets) and pacing rate (bit/s, 0 if none) at the interval's end.
    pub cwnd_pkts: f64,
    pub pacing_rate_bps: f64,
    /// RTT samples in the interval.
    pub rtt_samples: f64,
}

impl IntervalStats {
    /// Field names in [`Self::to_vec`]'s order (the Python side's names).
    pub const FIELDS: [&'static str; 17] = [
        "t_s",
        "interval_s",
        "delivery_rate_bps",
        "send_rate_bps",
        "rtt_min_s",
        "rtt_avg_s",
        "rtt_latest_s",
        "rtt_gradient",
        "min_rtt_s",
        "lost_pkts",
        "ecn_pkts",
        "sent_pkts",
        "delivered_pkts",
        "inflight_pkts",
        "cwnd_pkts",
        "pacing_rate_bps",
        "rtt_samples",
    ];

    /// The values in [`Self::FIELDS`]' order.
    pub fn to_vec(&self) -> Vec<f64> {
        vec![
            self.t_s,
            self.interval_s,
            self.delivery_rate_bps,
            self.send_rate_bps,
            self.rtt_min_s,
            self.rtt_avg_s,
            self.rtt_latest_s,
            self.rtt_gradient,
            self.min_rtt_s,
            self.lost_pkts,
            self.ecn_pkts,
            self.sent_pkts,
            self.delivered_pkts,
            self.inflight_pkts,
            self.cwnd_pkts,
            self.pacing_rate_bps,
            self.rtt_samples,
        ]
    }
}

/// One ACK of a watched external flow (`Simulation::watch_acks`), as the sender saw it once
/// it had processed the ACK: what per-ACK hooks are shown. Times in seconds, counts in
/// packets (segments).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckStats {
    /// When the ACK reached the sender (simulated time since the run began), s.
    pub t_s: f64,
    /// Segments this ACK newly delivered (cumulatively ACKed or SACKed), and their payload
    /// bytes.
    pub delivered_pkts: f64,
    pub bytes_acked: f64,
    /// Segments newly marked lost on this ACK.
    pub lost_pkts: f64,
    /// The RTT sample this ACK gave, s (`None`: it gave none, e.g. it delivered only
    /// retransmitted data).
    pub rtt_s: Option<f64>,
    /// The ACK's ECE flag (an echoed CE mark).
    pub ece: bool,
    /// Segments delivered since the connection began.
    pub delivered_total: f64,
    /// Segments in flight and cwnd after the ACK.
    pub inflight_pkts: f64,
    pub cwnd_pkts: f64,
    /// The connection's minimum RTT so far, s (0 before any sample).
    pub min_rtt_s: f64,
}

impl AckStats {
    /// What `s` shows of `ack`, which it processed at `now` with outcome `out`.
    pub(crate) fn of(now: Nanos, ack: &Ack, out: &AckOutcome, s: &Sender) -> Self {
        let tp = s.tcp();
        let min_rtt = s.rtt().min_rtt_us();
        AckStats {
            t_s: now as f64 / 1e9,
            delivered_pkts: out.delivered as f64,
            bytes_acked: out.delivered as f64 * tp.mss as f64,
            lost_pkts: out.lost as f64,
            rtt_s: out.rtt_sample.map(|r| r as f64 / 1e9),
            ece: ack.ece,
            delivered_total: tp.delivered as f64,
            inflight_pkts: tp.packets_in_flight() as f64,
            cwnd_pkts: tp.snd_cwnd as f64,
            min_rtt_s: if min_rtt == u32::MAX {
                0.0
            } else {
                min_rtt as f64 / 1e6
            },
        }
    }
}

/// The sender's counters at an interval's start.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    delivered: u64,
    bytes_sent: u64,
    segments_sent: u64,
    lost: u64,
    delivered_ce: u64,
}

impl Counters {
    fn of(s: &Sender) -> Self {
        let tp = s.tcp();
        Counters {
            delivered: tp.delivered,
            bytes_sent: s.stats().bytes_sent,
            segments_sent: s.stats().segments_sent,
            lost: tp.lost,
            delivered_ce: tp.delivered_ce,
        }
    }
}

/// One flow's interval in progress.
#[derive(Clone, Debug)]
pub(crate) struct Monitor {
    start_ns: Nanos,
    /// When the interval ends (the next decision).
    pub(crate) end_ns: Nanos,
    at_start: Counters,
    /// RTT samples: count, min, latest, and the sums for their mean and slope (times in s
    /// from the interval's start).
    n: u64,
    min: Nanos,
    latest: Nanos,
    sum_t: f64,
    sum_r: f64,
    sum_tt: f64,
    sum_tr: f64,
}

impl Monitor {
    /// An interval from `now` to `end_ns`.
    pub(crate) fn new(now: Nanos, end_ns: Nanos, s: &Sender) -> Self {
        Monitor {
            start_ns: now,
            end_ns,
            at_start: Counters::of(s),
            n: 0,
            min: Nanos::MAX,
            latest: 0,
            sum_t: 0.0,
            sum_r: 0.0,
            sum_tt: 0.0,
            sum_tr: 0.0,
        }
    }

    /// An ACK gave an RTT sample `rtt` at `now`.
    pub(crate) fn rtt(&mut self, now: Nanos, rtt: Nanos) {
        let t = now.saturating_sub(self.start_ns) as f64 / 1e9;
        let r = rtt as f64 / 1e9;
        self.n += 1;
        self.min = self.min.min(rtt);
        self.latest = rtt;
        self.sum_t += t;
        self.sum_r += r;
        self.sum_tt += t * t;
        self.sum_tr += t * r;
    }

    /// The interval's statistics at `now`.
    pub(crate) fn stats(&self, now: Nanos, s: &Sender) -> IntervalStats {
        let c = Counters::of(s);
        let tp = s.tcp();
        let mss = tp.mss as f64;
        let len = now.saturating_sub(self.start_ns).max(1) as f64 / 1e9;
        let delivered = c.delivered - self.at_start.delivered;
        let srtt = s.rtt().srtt() as f64 / 1e9;
        let (rmin, ravg, rlast) = if self.n == 0 {
            (srtt, srtt, srtt)
        } else {
            (
                self.min as f64 / 1e9,
                self.sum_r / self.n as f64,
                self.latest as f64 / 1e9,
            )
        };
        let n = self.n as f64;
        let var_t = n * self.sum_tt - self.sum_t * self.sum_t;
        let gradient = if self.n >= 2 && var_t > 1e-18 {
            (n * self.sum_tr - self.sum_t * self.sum_r) / var_t
        } else {
            0.0
        };
        let min_rtt = s.rtt().min_rtt_us();
        IntervalStats {
            t_s: now as f64 / 1e9,
            interval_s: len,
            delivery_rate_bps: delivered as f64 * mss * 8.0 / len,
            send_rate_bps: (c.bytes_sent - self.at_start.bytes_sent) as f64 * 8.0 / len,
            rtt_min_s: rmin,
            rtt_avg_s: ravg,
            rtt_latest_s: rlast,
            rtt_gradient: gradient,
            min_rtt_s: if min_rtt == u32::MAX {
                0.0
            } else {
                min_rtt as f64 / 1e6
            },
            lost_pkts: (c.lost - self.at_start.lost) as f64,
            ecn_pkts: (c.delivered_ce - self.at_start.delivered_ce) as f64,
            sent_pkts: (c.segments_sent - self.at_start.segments_sent) as f64,
            delivered_pkts: delivered as f64,
            inflight_pkts: tp.packets_in_flight() as f64,
            cwnd_pkts: tp.snd_cwnd as f64,
            pacing_rate_bps: s.pacing_rate_bps(),
            rtt_samples: n,
        }
    }
}
