//! Measurements of real hosts -> cclab's results schema, through the one result builder
//! ([`cclab_results::RunRecord::build`]), with `backend: "host"`.
//!
//! Field meanings (see the docs of [`run_result`]) follow the other backends where a real path
//! lets them; what only an emulated path knows (the bottleneck's rate, queue and drops) is
//! left at zero.

use crate::protocol::Sample;
use cclab_results::{FlowRecord, FlowSeries, Histogram, RunRecord, RunResult, TimeSeries};

/// The backend name written into host results.
pub const BACKEND: &str = "host";
/// Time-series bin, ns (100 ms, as the other backends).
pub const BIN_NS: u64 = 100_000_000;

/// One stream of a run.
#[derive(Clone, Debug, Default)]
pub struct FlowMeasure {
    /// The sender's congestion control ("remote" when unknown, as for `cclab get`).
    pub cc: String,
    /// Bytes the receiving application read.
    pub delivered: u64,
    /// From the run's start to the last byte read, ns.
    pub active_ns: u64,
    /// Bytes asked for (sized runs).
    pub size: Option<u64>,
    /// TCP_INFO samples, 10 ms apart, in time order: the sender's (perf), or the receiver's
    /// (get: `srtt_us` is then `tcpi_rcv_rtt` and `bytes_acked` `tcpi_bytes_received`).
    pub samples: Vec<Sample>,
}

/// The run's result:
/// - `goodput_bps`: bytes the receiving application read, per second from the start to the
///   last byte (the completion time of a sized run that completed);
/// - `throughput_bps`: `tcpi_bytes_sent` (retransmissions included) per the same second;
/// - `retransmits`, `segments_sent`, `rto_count`: the sender's `tcpi_total_retrans`,
///   `tcpi_data_segs_out`, `tcpi_total_rto` at the end;
/// - `rtt_ms`: percentiles of the 10 ms samples of the smoothed RTT, `min` the kernel's
///   `tcpi_min_rtt`;
/// - the time series: the samples binned to 100 ms (goodput from `bytes_acked`, the other
///   columns the last sample in each bin); the link's columns stay empty (unknown).
pub fn run_result(flows: &[FlowMeasure], seed: u64) -> RunResult {
    let end_ns = flows.iter().map(|f| f.active_ns).max().unwrap_or(0);
    let records = flows
        .iter()
        .map(|f| {
            let mut rtt = Histogram::new();
            for s in f.samples.iter().filter(|s| s.srtt_us > 0) {
                rtt.record(s.srtt_us as u64 * 1000);
            }
            let min = f
                .samples
                .iter()
                .filter(|s| s.min_rtt_us > 0)
                .map(|s| s.min_rtt_us as u64 * 1000)
                .min();
            let last = f.samples.last().copied().unwrap_or_default();
            let completed = f.size.is_some_and(|sz| f.delivered >= sz);
            FlowRecord {
                cc: f.cc.clone(),
                group: 0,
                start_ns: 0,
                size_bytes: f.size,
                completed_ns: completed.then_some(f.active_ns),
                delivered_bytes: f.delivered,
                wire_payload_bytes: last.bytes_sent,
                segments_sent: last.segs_out as u64,
                retransmits: last.retrans as u64,
                rto_count: last.rtos as u64,
                rtt,
                rtt_min_ns: min,
                ..Default::default()
            }
        })
        .collect();
    RunRecord {
        seed,
        end_ns,
        flows: records,
        link: Default::default(),
        series: Some(series(flows, end_ns)),
        lab: None,
    }
    .build()
}

/// The samples in 100 ms bins up to `end_ns`.
pub fn series(flows: &[FlowMeasure], end_ns: u64) -> TimeSeries {
    let bins = end_ns.div_ceil(BIN_NS).max(1) as usize;
    let t_s: Vec<f64> = (1..=bins)
        .map(|k| (k as u64 * BIN_NS) as f64 / 1e9)
        .collect();
    let per_s = 1e9 / BIN_NS as f64;
    let flows = flows
        .iter()
        .enumerate()
        .map(|(id, f)| {
            let mut fs = FlowSeries {
                id: id as u32,
                cc: f.cc.clone(),
                ..Default::default()
            };
            let mut i = 0;
            let mut cur: Option<Sample> = None;
            let mut acked_before = 0u64;
            for k in 1..=bins {
                let end_us = k as u64 * BIN_NS / 1000;
                while i < f.samples.len() && f.samples[i].t_us as u64 <= end_us {
                    cur = Some(f.samples[i]);
                    i += 1;
                }
                let s = cur.unwrap_or_default();
                let acked = s.bytes_acked.max(acked_before);
                fs.goodput_bps
                    .push((acked - acked_before) as f64 * 8.0 * per_s);
                acked_before = acked;
                fs.cwnd_pkts.push(s.cwnd as f64);
                fs.inflight_pkts.push(s.inflight as f64);
                fs.pacing_rate_bps.push(s.pacing_rate as f64 * 8.0);
                fs.srtt_ms.push(s.srtt_us as f64 / 1e3);
                fs.delivery_rate_bps.push(s.delivery_rate as f64 * 8.0);
            }
            fs
        })
        .collect();
    TimeSeries {
        interval_s: BIN_NS as f64 / 1e9,
        link_queue_bytes: vec![0.0; t_s.len()],
        t_s,
        flows,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_become_results_and_series() {
        // 2 s at 5 MB/s acked (40 Mbit/s), srtt 20 -> 40 ms, min RTT 20 ms, 3 retransmits.
        let samples: Vec<Sample> = (1..=200u32)
            .map(|k| Sample {
                t_us: k * 10_000,
                cwnd: 100,
                srtt_us: if k <= 100 { 20_000 } else { 40_000 },
                min_rtt_us: 20_000,
                retrans: k / 67,
                segs_out: k * 35,
                bytes_acked: k as u64 * 50_000,
                bytes_sent: k as u64 * 51_000,
                ..Default::default()
            })
            .collect();
        let f = FlowMeasure {
            cc: "cubic".into(),
            delivered: 10_000_000,
            active_ns: 2_000_000_000,
            size: Some(10_000_000),
            samples,
        };
        let r = run_result(&[f], 2);
        let fl = &r.flows[0];
        assert_eq!(r.seed, 2);
        assert!((fl.goodput_bps - 40e6).abs() < 1.0, "{}", fl.goodput_bps);
        assert!((fl.throughput_bps - 40.8e6).abs() < 1.0);
        assert_eq!(
            (fl.retransmits, fl.segments_sent, fl.fct_s),
            (2, 7000, Some(2.0))
        );
        assert_eq!(fl.rtt_ms.min, 20.0);
        assert!((fl.rtt_ms.p50 - 20.0).abs() < 1.0 || (fl.rtt_ms.p50 - 40.0).abs() < 1.0);
        assert!((fl.rtt_ms.p99 - 40.0).abs() < 1.0, "{:?}", fl.rtt_ms);
        let s = r.series.as_ref().unwrap();
        assert_eq!(s.t_s.len(), 20);
        let g = &s.flows[0].goodput_bps;
        assert!(g.iter().all(|&x| (x - 40e6).abs() < 1.0), "{g:?}");
        assert_eq!(s.flows[0].srtt_ms[0], 20.0);
        assert_eq!(s.flows[0].srtt_ms[19], 40.0);
        assert_eq!(s.link_queue_bytes.len(), 20);
        // A sized run that did not complete has no completion time.
        let f = FlowMeasure {
            size: Some(20_000_000),
            delivered: 5,
            active_ns: 1,
            ..Default::default()
        };
        assert_eq!(run_result(&[f], 1).flows[0].fct_s, None);
    }
}
