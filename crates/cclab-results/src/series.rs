//! Time series in fixed bins (100 ms by default).

use serde::{Deserialize, Serialize};

/// One flow's series; every vector has one value per bin.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FlowSeries {
    pub id: u32,
    pub cc: String,
    /// Bytes delivered to the application in the bin, as bits per second.
    pub goodput_bps: Vec<f64>,
    /// Congestion window at the end of the bin, packets.
    pub cwnd_pkts: Vec<f64>,
    /// Packets in flight at the end of the bin.
    pub inflight_pkts: Vec<f64>,
    /// Pacing rate at the end of the bin, bits per second (0 = not computed).
    pub pacing_rate_bps: Vec<f64>,
    /// Smoothed RTT at the end of the bin, ms.
    pub srtt_ms: Vec<f64>,
    /// Latest delivery-rate sample at the end of the bin, bits per second.
    #[serde(default)]
    pub delivery_rate_bps: Vec<f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TimeSeries {
    pub interval_s: f64,
    /// End time of each bin, s.
    pub t_s: Vec<f64>,
    pub flows: Vec<FlowSeries>,
    /// Bottleneck backlog at the end of each bin, bytes.
    pub link_queue_bytes: Vec<f64>,
    /// Each queue's mean queueing delay of the packets that left it in the bin, ms (0 when
    /// none left), by element (`"data.queue"`, `"data.shaper"`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub queue_delay_ms: std::collections::BTreeMap<String, Vec<f64>>,
    /// The bottleneck's capacity in each bin, bits per second, when its rate varies (a
    /// schedule, a trace); empty when it is fixed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_rate_bps: Vec<f64>,
}

/// Mean queueing delay per bin of one queue: departures are added as they happen and a bin
/// is closed at each sample.
#[derive(Clone, Debug, Default)]
pub struct DelayBins {
    sum_ns: f64,
    n: u64,
    /// One value per closed bin, ms.
    pub bins_ms: Vec<f64>,
}

impl DelayBins {
    /// A packet left the queue after waiting `sojourn_ns`.
    pub fn record(&mut self, sojourn_ns: u64) {
        self.sum_ns += sojourn_ns as f64;
        self.n += 1;
    }
    /// Close the current bin.
    pub fn close(&mut self) {
        self.bins_ms.push(if self.n > 0 {
            self.sum_ns / self.n as f64 / 1e6
        } else {
            0.0
        });
        self.sum_ns = 0.0;
        self.n = 0;
    }
}

impl TimeSeries {
    /// Goodput of all flows together in bin `i`, bit/s (0 past a flow's last bin).
    pub fn total_goodput_bps(&self, i: usize) -> f64 {
        self.flows
            .iter()
            .map(|f| f.goodput_bps.get(i).copied().unwrap_or(0.0))
            .sum()
    }

    /// Long-format CSV: one row per (bin, flow), the link's columns repeated on each row:
    /// the bottleneck's backlog, then (when present) the link's capacity and each queue's
    /// mean delay (`queue_delay_ms.<element>`).
    pub fn to_csv(&self) -> String {
        let mut s = String::from("t_s,flow,cc,goodput_bps,cwnd_pkts,inflight_pkts,pacing_rate_bps,srtt_ms,delivery_rate_bps,link_queue_bytes");
        if !self.link_rate_bps.is_empty() {
            s.push_str(",link_rate_bps");
        }
        for k in self.queue_delay_ms.keys() {
            s.push_str(&format!(",queue_delay_ms.{k}"));
        }
        s.push('\n');
        for (i, t) in self.t_s.iter().enumerate() {
            for f in &self.flows {
                let g = |v: &Vec<f64>| v.get(i).copied().unwrap_or(0.0);
                s.push_str(&format!(
                    "{:.3},{},{},{:.0},{:.1},{:.1},{:.0},{:.3},{:.0},{:.0}",
                    t,
                    f.id,
                    f.cc,
                    g(&f.goodput_bps),
                    g(&f.cwnd_pkts),
                    g(&f.inflight_pkts),
                    g(&f.pacing_rate_bps),
                    g(&f.srtt_ms),
                    g(&f.delivery_rate_bps),
                    self.link_queue_bytes.get(i).copied().unwrap_or(0.0)
                ));
                if !self.link_rate_bps.is_empty() {
                    s.push_str(&format!(",{:.0}", g(&self.link_rate_bps)));
                }
                for v in self.queue_delay_ms.values() {
                    s.push_str(&format!(",{:.4}", g(v)));
                }
                s.push('\n');
            }
        }
        s
    }

    /// Mean goodput of each flow over bins whose end time lies in `[from_s, to_s]`.
    pub fn mean_goodput_between(&self, from_s: f64, to_s: f64) -> Vec<f64> {
        self.flows
            .iter()
            .map(|f| {
                let v: Vec<f64> = self
                    .t_s
                    .iter()
                    .zip(&f.goodput_bps)
                    .filter(|(t, _)| **t >= from_s && **t <= to_s)
                    .map(|(_, g)| *g)
                    .collect();
                if v.is_empty() {
                    0.0
                } else {
                    v.iter().sum::<f64>() / v.len() as f64
                }
            })
            .collect()
    }
}
