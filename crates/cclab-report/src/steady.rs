//! Steady-state figures: a run's figures over its time-series bins from a moment on
//! (`cclab run --from 10s`), next to the whole-run figures, which include the start-up.
//!
//! They come from the run's series (100 ms bins by default), bins that start at or after
//! `from`, and are weighted by time, one value per bin:
//! - goodput: the mean of the flow's per-bin goodput;
//! - srtt p50/p99: percentiles of the flow's smoothed RTT at each bin's end (the
//!   whole-run RTT percentiles are of every RTT sample, one per ACK; bins before the flow's
//!   first sample, srtt 0, are left out);
//! - queue p99: the 99th percentile of the bottleneck queue's mean sojourn per bin (the
//!   whole-run figure is of every packet's sojourn).
//!
//! A run without series (or without a bin after `from`) has none.

use cclab_results::RunResult;

/// One run's figures from `from_s` on.
#[derive(Clone, Debug, PartialEq)]
pub struct Steady {
    /// Per flow, in the run's order: (goodput bit/s, srtt p50 ms, srtt p99 ms); None for a
    /// flow without bins.
    pub flows: Vec<Option<(f64, f64, f64)>>,
    /// The bottleneck queue's p99 of per-bin mean delays, ms.
    pub queue_p99_ms: Option<f64>,
    /// How many bins counted.
    pub bins: usize,
}

/// The p-quantile of sorted values, by nearest rank.
fn quantile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    let i = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
    sorted[i]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// The run's figures over the bins that start at or after `from_s`; None without series or
/// without such a bin.
pub fn of_run(r: &RunResult, from_s: f64) -> Option<Steady> {
    let s = r.series.as_ref()?;
    let keep: Vec<usize> = s
        .t_s
        .iter()
        .enumerate()
        .filter(|(_, t)| **t - s.interval_s >= from_s - 1e-9)
        .map(|(i, _)| i)
        .collect();
    if keep.is_empty() {
        return None;
    }
    let pick = |v: &[f64]| -> Vec<f64> { keep.iter().filter_map(|&i| v.get(i).copied()).collect() };
    let flows = r
        .flows
        .iter()
        .map(|f| {
            let fs = s.flows.iter().find(|x| x.id == f.id)?;
            let g = pick(&fs.goodput_bps);
            if g.is_empty() {
                return None;
            }
            let goodput = g.iter().sum::<f64>() / g.len() as f64;
            let rtt = sorted(pick(&fs.srtt_ms).into_iter().filter(|x| *x > 0.0).collect());
            let (p50, p99) = if rtt.is_empty() {
                (f64::NAN, f64::NAN)
            } else {
                (quantile(&rtt, 0.5), quantile(&rtt, 0.99))
            };
            Some((goodput, p50, p99))
        })
        .collect();
    let queue = s
        .queue_delay_ms
        .get("data.queue")
        .or_else(|| s.queue_delay_ms.values().next())
        .map(|v| sorted(pick(v)))
        .filter(|v| !v.is_empty())
        .map(|v| quantile(&v, 0.99));
    Some(Steady {
        flows,
        queue_p99_ms: queue,
        bins: keep.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::RunBuilder;
    use cclab_results::{FlowSeries, TimeSeries};

    /// 20 bins of 0.5 s: a start-up (goodput 1, srtt 300, queue 100) for 5 s, then steady
    /// (goodput 10, srtt 100 + i, queue 5).
    fn run() -> RunResult {
        let t: Vec<f64> = (1..=20).map(|i| i as f64 * 0.5).collect();
        let late = |i: usize| i >= 10;
        let g: Vec<f64> = (0..20).map(|i| if late(i) { 10.0 } else { 1.0 }).collect();
        let rtt: Vec<f64> = (0..20)
            .map(|i| if late(i) { 100.0 + i as f64 } else { 300.0 })
            .collect();
        let q: Vec<f64> = (0..20).map(|i| if late(i) { 5.0 } else { 100.0 }).collect();
        let mut s = TimeSeries {
            interval_s: 0.5,
            t_s: t,
            flows: vec![FlowSeries {
                id: 0,
                cc: "cubic".into(),
                goodput_bps: g,
                srtt_ms: rtt,
                ..Default::default()
            }],
            ..Default::default()
        };
        s.queue_delay_ms.insert("data.queue".into(), q);
        RunBuilder::new().flow("cubic", 5.5).series(s).build()
    }

    #[test]
    fn figures_count_only_bins_from_the_moment_on() {
        let r = run();
        let s = of_run(&r, 5.0).unwrap();
        assert_eq!(s.bins, 10);
        let (g, p50, p99) = s.flows[0].unwrap();
        assert_eq!(g, 10.0);
        assert_eq!((p50, p99), (114.0, 119.0));
        assert_eq!(s.queue_p99_ms, Some(5.0));
        // From 0: the start-up's bins count, and dominate the tail.
        let s = of_run(&r, 0.0).unwrap();
        assert_eq!((s.bins, s.flows[0].unwrap().0), (20, 5.5));
        assert_eq!(s.queue_p99_ms, Some(100.0));
        // After the end: nothing.
        assert_eq!(of_run(&r, 10.0), None);
    }
}
