//! The one result builder: what a backend measured, in raw counts and samples, becomes a
//! [`RunResult`] here, so every field means the same thing on every backend.
//!
//! A backend fills a [`RunRecord`] (per flow: bytes the receiving application read, bytes
//! through the bottleneck, segment counters, RTT samples; for the path: the bottleneck's
//! counters, queueing delays and each element's counters) and calls [`RunRecord::build`].
//! Rates, ratios, percentiles, utilisation and fairness are computed only here.

use crate::{
    jain, FlowResult, Histogram, LabConditions, LinkResult, Percentiles, QueuePercentiles,
    RunResult, TimeSeries,
};
use serde_json::Map;
use std::collections::BTreeMap;

/// One flow as a backend measured it. Times are ns from the run's time zero.
#[derive(Clone, Debug, Default)]
pub struct FlowRecord {
    pub cc: String,
    /// `[[flows]]` group.
    pub group: u32,
    pub start_ns: u64,
    /// Bytes to transfer (sized flows).
    pub size_bytes: Option<u64>,
    /// When the receiving application read the last byte (sized flows that completed).
    pub completed_ns: Option<u64>,
    /// Bytes the receiving application read, in order.
    pub delivered_bytes: u64,
    /// TCP payload bytes of this flow the bottleneck forwarded (retransmissions included).
    pub wire_payload_bytes: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub rto_count: u64,
    /// Per-ACK RTT samples, ns.
    pub rtt: Histogram,
    /// The flow's minimum RTT when it is known better than from `rtt` (the kernel's
    /// `tcpi_min_rtt` when there are no per-ACK samples), ns.
    pub rtt_min_ns: Option<u64>,
    /// Data segments that reached the receiver marked CE.
    pub ce_marks: u64,
    /// Window reductions the sender made for an ECN echo (segments it sent with CWR).
    pub cwr_events: u64,
    /// Data segments by the ECN field they entered the path with (when the flow used ECN).
    pub ecn_in: Option<crate::EcnCounts>,
    /// Accurate ECN's feedback (when the flow negotiated it).
    pub accecn: Option<crate::AccEcnCounts>,
}

/// The path as a backend measured it.
#[derive(Clone, Debug, Default)]
pub struct LinkRecord {
    pub rate_bps: f64,
    /// Packets and bytes (whole IP packets) the bottleneck forwarded.
    pub forwarded_pkts: u64,
    pub forwarded_bytes: u64,
    /// Data packets dropped because the buffer was full.
    pub drops_buffer: u64,
    /// Data packets and ACKs dropped by the random-loss models.
    pub drops_random: u64,
    pub drops_ack: u64,
    /// Data packets the bottleneck marked CE instead of dropping.
    pub marks: u64,
    /// Time packets waited in the bottleneck's queue, ns.
    pub queue_delay: Histogram,
    /// Time packets waited in each queueing element (`"data.queue"`, `"data.shaper"`), ns.
    pub queues: BTreeMap<String, Histogram>,
    /// Each path element's counters (`"data.loss"` -> `{"dropped": 12, ...}`).
    pub elements: BTreeMap<String, BTreeMap<String, u64>>,
}

/// Everything a backend measured in one run.
#[derive(Clone, Debug, Default)]
pub struct RunRecord {
    pub seed: u64,
    /// When the run ended (the duration, or the last sized flow's completion), ns.
    pub end_ns: u64,
    pub flows: Vec<FlowRecord>,
    pub link: LinkRecord,
    pub series: Option<TimeSeries>,
    pub lab: Option<LabConditions>,
}

fn ms(v: Option<u64>) -> f64 {
    v.map_or(0.0, |x| x as f64 / 1e6)
}

impl RunRecord {
    /// The run's result, every derived figure computed the one way:
    /// - `goodput_bps`: bytes read by the application per second of the flow's active time
    ///   (start to completion for sized flows that completed, start to the run's end
    ///   otherwise); `throughput_bps` the same for bytes through the bottleneck;
    /// - `retrans_ratio` = retransmits / segments sent;
    /// - `rtt_ms`: percentiles of the per-ACK samples;
    /// - link `utilization` = forwarded bytes / (rate x (end - first start)) (a varying
    ///   rate's backend gives its mean over that span);
    /// - link drops by cause from the elements' counters: a shaper's full buffer adds to
    ///   `drops_buffer`, the AQM's drops are `drops_aqm`, the policer's `drops_policer`;
    /// - `jain` over the flows' goodputs.
    ///
    /// `params` is left empty: the runner fills in the matrix point's swept values.
    pub fn build(self) -> RunResult {
        let end = self.end_ns;
        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let completed = f.completed_ns.filter(|&c| c <= end);
                let active = completed.unwrap_or(end).saturating_sub(f.start_ns) as f64 / 1e9;
                let per_s = |bytes: u64| {
                    if active > 0.0 {
                        bytes as f64 * 8.0 / active
                    } else {
                        0.0
                    }
                };
                FlowResult {
                    id: i as u32,
                    cc: f.cc.clone(),
                    group: f.group,
                    start_s: f.start_ns as f64 / 1e9,
                    goodput_bps: per_s(f.delivered_bytes),
                    throughput_bps: per_s(f.wire_payload_bytes),
                    bytes_delivered: f.delivered_bytes,
                    retransmits: f.retransmits,
                    segments_sent: f.segments_sent,
                    retrans_ratio: if f.segments_sent > 0 {
                        f.retransmits as f64 / f.segments_sent as f64
                    } else {
                        0.0
                    },
                    rtt_ms: Percentiles {
                        min: ms(f.rtt_min_ns.or(f.rtt.min())),
                        p50: ms(f.rtt.quantile(0.5)),
                        p95: ms(f.rtt.quantile(0.95)),
                        p99: ms(f.rtt.quantile(0.99)),
                    },
                    fct_s: completed.map(|c| c.saturating_sub(f.start_ns) as f64 / 1e9),
                    size_bytes: f.size_bytes,
                    rto_count: f.rto_count,
                    ce_marks: f.ce_marks,
                    cwr_events: f.cwr_events,
                    ecn_in: f.ecn_in,
                    accecn: f.accecn,
                }
            })
            .collect();
        let first_start = self.flows.iter().map(|f| f.start_ns).min().unwrap_or(0);
        let span = end.saturating_sub(first_start) as f64 / 1e9;
        let l = &self.link;
        let util = if span > 0.0 && l.rate_bps > 0.0 {
            l.forwarded_bytes as f64 * 8.0 / (l.rate_bps * span)
        } else {
            0.0
        };
        let q = |p: f64| ms(l.queue_delay.quantile(p));
        let counter = |el: &str, k: &str| {
            l.elements
                .get(el)
                .and_then(|m| m.get(k))
                .copied()
                .unwrap_or(0)
        };
        let link = LinkResult {
            rate_bps: l.rate_bps,
            utilization: util.min(1.0),
            drops_buffer: l.drops_buffer + counter("data.shaper", "dropped"),
            drops_aqm: counter("data.queue", "dropped_aqm"),
            drops_policer: counter("data.policer", "dropped"),
            queues: l
                .queues
                .iter()
                .map(|(k, h)| {
                    (
                        k.clone(),
                        QueuePercentiles {
                            p50: ms(h.quantile(0.5)),
                            p95: ms(h.quantile(0.95)),
                            p99: ms(h.quantile(0.99)),
                        },
                    )
                })
                .collect(),
            drops_random: l.drops_random,
            drops_ack: l.drops_ack,
            marks: l.marks,
            forwarded_pkts: l.forwarded_pkts,
            queue_delay_ms: QueuePercentiles {
                p50: q(0.5),
                p95: q(0.95),
                p99: q(0.99),
            },
            elements: self.link.elements.clone(),
        };
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
        RunResult {
            params: Map::new(),
            seed: self.seed,
            duration_s: end as f64 / 1e9,
            jain: jain(&goodputs),
            flows,
            link,
            reference: None,
            series: self.series,
            lab: self.lab,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_use_each_flow_s_active_time() {
        let mut rtt = Histogram::new();
        for ms in [10u64, 20, 30] {
            rtt.record(ms * 1_000_000);
        }
        let rec = RunRecord {
            seed: 3,
            end_ns: 10_000_000_000,
            flows: vec![
                // Bulk from t = 0: 10 s active.
                FlowRecord {
                    cc: "cubic".into(),
                    delivered_bytes: 12_500_000,
                    wire_payload_bytes: 13_750_000,
                    segments_sent: 100,
                    retransmits: 5,
                    rtt,
                    ..Default::default()
                },
                // Sized, started at 2 s, done at 4 s: 2 s active.
                FlowRecord {
                    cc: "bbr".into(),
                    group: 1,
                    start_ns: 2_000_000_000,
                    size_bytes: Some(2_500_000),
                    completed_ns: Some(4_000_000_000),
                    delivered_bytes: 2_500_000,
                    ..Default::default()
                },
                // Sized, not done by the end: no fct, active until the end.
                FlowRecord {
                    cc: "bbr".into(),
                    size_bytes: Some(1 << 40),
                    completed_ns: None,
                    delivered_bytes: 1_250_000,
                    ..Default::default()
                },
            ],
            link: LinkRecord {
                rate_bps: 100e6,
                forwarded_bytes: 62_500_000,
                ..Default::default()
            },
            ..Default::default()
        };
        let r = rec.build();
        assert_eq!(r.seed, 3);
        assert_eq!(r.duration_s, 10.0);
        let f = &r.flows;
        assert_eq!(
            (f[0].goodput_bps, f[0].throughput_bps, f[0].retrans_ratio),
            (10e6, 11e6, 0.05)
        );
        assert_eq!(f[0].rtt_ms.min, 10.0);
        assert_eq!(
            (f[1].goodput_bps, f[1].fct_s, f[1].start_s, f[1].group),
            (10e6, Some(2.0), 2.0, 1)
        );
        assert_eq!((f[2].goodput_bps, f[2].fct_s), (1e6, None));
        assert!((r.link.utilization - 0.5).abs() < 1e-12);
        assert!((r.jain - jain(&[10e6, 10e6, 1e6])).abs() < 1e-12);
    }
}
