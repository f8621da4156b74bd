//! What the element counts within the counting window: each queueing element's delays (a
//! histogram and per-bin means), the bottleneck's per-flow bytes and marks, and the chains'
//! counters between the window's opening and closing.

use super::packet::Pkt;
use super::ElementStats;
use cclab_path::Departure;
use cclab_results::Histogram;
use std::collections::BTreeMap;

/// One queueing element's delays within the counting window (and each of its sub-queues',
/// by name, if its queue has several).
#[derive(Default)]
pub(super) struct QueueTrack {
    pub(super) hist: Histogram,
    /// Per time-series bin from the run's time zero: (sum of delays ns, count).
    pub(super) bins: Vec<(f64, u64)>,
    pub(super) subs: Vec<(&'static str, QueueTrack)>,
}

impl QueueTrack {
    /// A track of a queue with these sub-queues.
    pub(super) fn with_subs(names: &[&'static str]) -> Self {
        QueueTrack {
            subs: names.iter().map(|&n| (n, QueueTrack::default())).collect(),
            ..QueueTrack::default()
        }
    }

    fn record(&mut self, sojourn: u64, bin: Option<usize>) {
        self.hist.record(sojourn);
        if let Some(b) = bin {
            if self.bins.len() <= b {
                self.bins.resize(b + 1, (0.0, 0));
            }
            self.bins[b].0 += sojourn as f64;
            self.bins[b].1 += 1;
        }
    }

    /// Its tracks by name: its own as `name` (`"data.queue"`), each sub-queue's as
    /// `name.sub` (`"data.queue.l"`).
    pub(super) fn named(&self, name: String) -> Vec<(String, &QueueTrack)> {
        let mut v: Vec<(String, &QueueTrack)> = self
            .subs
            .iter()
            .map(|(k, s)| (format!("{name}.{k}"), s))
            .collect();
        v.insert(0, (name, self));
        v
    }
}

/// Where departures are recorded: the queues' tracks, the bottleneck's position, the run's
/// time zero and the series bin.
pub(super) struct Rec<'a> {
    pub(super) queues: &'a mut [Option<QueueTrack>],
    pub(super) bottleneck: usize,
    pub(super) t0: u64,
    pub(super) bin_ns: u64,
}

/// Statistics of a departure from element `j` inside the counting window.
pub(super) fn record(
    st: &mut ElementStats,
    r: &mut Rec<'_>,
    counting: bool,
    j: usize,
    d: &Departure<Pkt>,
) {
    if !counting {
        return;
    }
    if let Some(Some(q)) = r.queues.get_mut(j) {
        let bin =
            d.at.saturating_sub(r.t0)
                .checked_div(r.bin_ns)
                .map(|b| b as usize)
                .filter(|&b| b < 1 << 20);
        q.record(d.sojourn, bin);
        if let Some((_, s)) = q.subs.get_mut(d.sub as usize) {
            s.record(d.sojourn, bin);
        }
    }
    if j == r.bottleneck {
        st.queue_delay.record(d.sojourn);
        if let Some(f) = d.pkt.flow {
            st.flow_payload_bytes[f as usize] += d.pkt.payload as u64;
            if d.pkt.marked {
                st.flow_ce_marks[f as usize] += d.pkt.segs as u64;
            }
        }
    }
}

/// `after - before`, counter by counter.
pub(super) fn counters_between(
    before: &BTreeMap<String, BTreeMap<String, u64>>,
    after: &BTreeMap<String, BTreeMap<String, u64>>,
) -> BTreeMap<String, BTreeMap<String, u64>> {
    after
        .iter()
        .map(|(el, cs)| {
            let b = before.get(el);
            let d = cs
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.saturating_sub(b.and_then(|b| b.get(k)).copied().unwrap_or(0)),
                    )
                })
                .collect();
            (el.clone(), d)
        })
        .collect()
}
