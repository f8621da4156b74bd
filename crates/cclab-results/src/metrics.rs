//! The metrics of a run, defined once: each metric's key (its `flows.csv` column), the name
//! people read, its heading in report.html, its kind (how it is shown and compared), where
//! its value lives and its precision in CSV.
//!
//! Every view reads this table: `cclab compare` lists [`ALL`] in order, `flows.csv` writes
//! [`FLOWS_CSV`], and the terminal and HTML tables take their columns' names, values and
//! kinds from the metrics they show (their cells also combine metrics, e.g. retransmits with
//! the retransmit ratio). Human formatting of a [`Kind`] is the report crate's
//! (`cclab_report::units::of`).

use crate::{FlowResult, LinkResult, RunResult};

/// How a metric is measured, shown and compared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// Bits per second.
    Rate,
    /// Milliseconds.
    Ms,
    /// Seconds.
    Secs,
    /// A fraction (0..1), shown in percent and compared in percentage points.
    Ratio,
    /// A count.
    Count,
    /// Bytes.
    Bytes,
    /// A plain number (Jain's index), compared by its difference.
    Plain,
}

/// Where a metric's value lives.
#[derive(Clone, Copy, Debug)]
pub enum Get {
    /// A flow's figure; None when the flow has none (an unfinished flow's FCT).
    Flow(fn(&FlowResult) -> Option<f64>),
    /// A run's figure.
    Run(fn(&RunResult) -> f64),
    /// The bottleneck's figure: unknown on a real path (backend "host"), not zero.
    Link(fn(&LinkResult) -> f64),
}

/// When `cclab compare` lists a metric of a pair of runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum When {
    /// Always (a flow metric: when both flows have a value; a link metric: when both links
    /// are known).
    Always,
    /// When the pair's flows saw ECN: CE marks or CWR events on either side.
    Ecn,
    /// When either side's value is not zero.
    Nonzero,
}

/// One metric.
#[derive(Clone, Copy, Debug)]
pub struct MetricDef {
    /// Identifier and `flows.csv` column, snake_case with the unit (`rtt_p50_ms`).
    pub key: &'static str,
    /// The name people read (`rtt p50`): `cclab compare`'s rows (its JSON key with `_` for
    /// spaces) and the terminal table's heading.
    pub name: &'static str,
    /// Heading in report.html's summary table.
    pub heading: &'static str,
    pub kind: Kind,
    pub get: Get,
    /// Decimals in `flows.csv`.
    pub csv_decimals: usize,
    pub when: When,
}

impl MetricDef {
    /// A flow metric's value; None for a run or link metric.
    pub fn of_flow(&self, f: &FlowResult) -> Option<f64> {
        match self.get {
            Get::Flow(g) => g(f),
            _ => None,
        }
    }

    /// A run or link metric's value; None for a flow metric.
    pub fn of_run(&self, r: &RunResult) -> Option<f64> {
        match self.get {
            Get::Flow(_) => None,
            Get::Run(g) => Some(g(r)),
            Get::Link(g) => Some(g(&r.link)),
        }
    }

    /// The value for one flow of a run: a flow metric's from the flow, a run or link
    /// metric's from the run.
    pub fn of(&self, r: &RunResult, f: &FlowResult) -> Option<f64> {
        match self.get {
            Get::Flow(g) => g(f),
            _ => self.of_run(r),
        }
    }

    /// Whether the value is the bottleneck's (unknown on a real path).
    pub fn is_link(&self) -> bool {
        matches!(self.get, Get::Link(_))
    }

    /// The value as `flows.csv` writes it: fixed decimals, empty when there is none.
    pub fn csv(&self, v: Option<f64>) -> String {
        v.map(|x| format!("{x:.*}", self.csv_decimals))
            .unwrap_or_default()
    }
}

/// A metric with its name as its HTML heading, always compared.
const fn metric(
    key: &'static str,
    name: &'static str,
    kind: Kind,
    get: Get,
    csv_decimals: usize,
) -> MetricDef {
    MetricDef {
        key,
        name,
        heading: name,
        kind,
        get,
        csv_decimals,
        when: When::Always,
    }
}

/// A flow metric.
const fn flow(
    key: &'static str,
    name: &'static str,
    kind: Kind,
    get: fn(&FlowResult) -> Option<f64>,
    csv_decimals: usize,
) -> MetricDef {
    metric(key, name, kind, Get::Flow(get), csv_decimals)
}

/// A bottleneck metric.
const fn link(
    key: &'static str,
    name: &'static str,
    kind: Kind,
    get: fn(&LinkResult) -> f64,
    csv_decimals: usize,
) -> MetricDef {
    metric(key, name, kind, Get::Link(get), csv_decimals)
}

pub const GOODPUT: MetricDef = flow(
    "goodput_bps",
    "goodput",
    Kind::Rate,
    |f| Some(f.goodput_bps),
    0,
);
pub const THROUGHPUT: MetricDef = flow(
    "throughput_bps",
    "throughput",
    Kind::Rate,
    |f| Some(f.throughput_bps),
    0,
);
pub const BYTES_DELIVERED: MetricDef = flow(
    "bytes_delivered",
    "bytes delivered",
    Kind::Bytes,
    |f| Some(f.bytes_delivered as f64),
    0,
);
pub const RETRANSMITS: MetricDef = flow(
    "retransmits",
    "retransmits",
    Kind::Count,
    |f| Some(f.retransmits as f64),
    0,
);
pub const RETRANS_RATIO: MetricDef = flow(
    "retrans_ratio",
    "retrans ratio",
    Kind::Ratio,
    |f| Some(f.retrans_ratio),
    6,
);
pub const SEGMENTS_SENT: MetricDef = flow(
    "segments_sent",
    "segments sent",
    Kind::Count,
    |f| Some(f.segments_sent as f64),
    0,
);
pub const RTO_COUNT: MetricDef = flow(
    "rto_count",
    "rto count",
    Kind::Count,
    |f| Some(f.rto_count as f64),
    0,
);
pub const RTT_MIN: MetricDef = flow("rtt_min_ms", "rtt min", Kind::Ms, |f| Some(f.rtt_ms.min), 3);
pub const RTT_P50: MetricDef = MetricDef {
    heading: "RTT p50",
    ..flow("rtt_p50_ms", "rtt p50", Kind::Ms, |f| Some(f.rtt_ms.p50), 3)
};
pub const RTT_P95: MetricDef = flow("rtt_p95_ms", "rtt p95", Kind::Ms, |f| Some(f.rtt_ms.p95), 3);
pub const RTT_P99: MetricDef = MetricDef {
    heading: "RTT p99",
    ..flow("rtt_p99_ms", "rtt p99", Kind::Ms, |f| Some(f.rtt_ms.p99), 3)
};
pub const CE_MARKS: MetricDef = MetricDef {
    when: When::Ecn,
    ..flow(
        "ce_marks",
        "ce marks",
        Kind::Count,
        |f| Some(f.ce_marks as f64),
        0,
    )
};
pub const CWR_EVENTS: MetricDef = MetricDef {
    when: When::Ecn,
    ..flow(
        "cwr_events",
        "cwr events",
        Kind::Count,
        |f| Some(f.cwr_events as f64),
        0,
    )
};
/// Flow completion time: sized flows that completed.
pub const FCT: MetricDef = MetricDef {
    heading: "FCT",
    ..flow("fct_s", "fct", Kind::Secs, |f| f.fct_s, 4)
};

/// The run's goodput: the sum over its flows.
pub const TOTAL_GOODPUT: MetricDef = metric(
    "total_goodput_bps",
    "total goodput",
    Kind::Rate,
    Get::Run(|r| r.flows.iter().map(|f| f.goodput_bps).sum::<f64>()),
    0,
);
pub const LINK_UTILIZATION: MetricDef = MetricDef {
    heading: "link used",
    ..link(
        "link_utilization",
        "link utilization",
        Kind::Ratio,
        |l| l.utilization,
        4,
    )
};
pub const QUEUE_P50: MetricDef = link(
    "queue_p50_ms",
    "queue delay p50",
    Kind::Ms,
    |l| l.queue_delay_ms.p50,
    3,
);
pub const QUEUE_P95: MetricDef = link(
    "queue_p95_ms",
    "queue delay p95",
    Kind::Ms,
    |l| l.queue_delay_ms.p95,
    3,
);
pub const QUEUE_P99: MetricDef = MetricDef {
    heading: "queue p99",
    ..link(
        "queue_p99_ms",
        "queue delay p99",
        Kind::Ms,
        |l| l.queue_delay_ms.p99,
        3,
    )
};
pub const DROPS_BUFFER: MetricDef = link(
    "drops_buffer",
    "drops buffer",
    Kind::Count,
    |l| l.drops_buffer as f64,
    0,
);
pub const DROPS_RANDOM: MetricDef = link(
    "drops_random",
    "drops random",
    Kind::Count,
    |l| l.drops_random as f64,
    0,
);
pub const DROPS_ACK: MetricDef = link(
    "drops_ack",
    "drops ack",
    Kind::Count,
    |l| l.drops_ack as f64,
    0,
);
pub const DROPS_AQM: MetricDef = link(
    "drops_aqm",
    "drops aqm",
    Kind::Count,
    |l| l.drops_aqm as f64,
    0,
);
pub const DROPS_POLICER: MetricDef = link(
    "drops_policer",
    "drops policer",
    Kind::Count,
    |l| l.drops_policer as f64,
    0,
);
pub const FORWARDED: MetricDef = link(
    "forwarded_pkts",
    "forwarded packets",
    Kind::Count,
    |l| l.forwarded_pkts as f64,
    0,
);
/// Jain's fairness index over the run's flows' goodputs.
pub const JAIN: MetricDef = MetricDef {
    heading: "Jain",
    ..metric("jain", "jain", Kind::Plain, Get::Run(|r| r.jain), 4)
};
pub const DURATION: MetricDef = metric(
    "duration_s",
    "duration",
    Kind::Secs,
    Get::Run(|r| r.duration_s),
    4,
);
/// Packets the bottleneck marked CE.
pub const LINK_MARKS: MetricDef = MetricDef {
    when: When::Nonzero,
    ..link(
        "link_marks",
        "ce marks (link)",
        Kind::Count,
        |l| l.marks as f64,
        0,
    )
};

/// Every metric, in the order `cclab compare` lists them: a flow's, then the run's.
pub const ALL: &[&MetricDef] = &[
    &GOODPUT,
    &THROUGHPUT,
    &BYTES_DELIVERED,
    &RETRANSMITS,
    &RETRANS_RATIO,
    &SEGMENTS_SENT,
    &RTO_COUNT,
    &RTT_MIN,
    &RTT_P50,
    &RTT_P95,
    &RTT_P99,
    &CE_MARKS,
    &CWR_EVENTS,
    &FCT,
    &TOTAL_GOODPUT,
    &LINK_UTILIZATION,
    &QUEUE_P50,
    &QUEUE_P95,
    &QUEUE_P99,
    &DROPS_BUFFER,
    &DROPS_RANDOM,
    &DROPS_ACK,
    &DROPS_AQM,
    &DROPS_POLICER,
    &FORWARDED,
    &JAIN,
    &DURATION,
    &LINK_MARKS,
];

/// The metric columns of `flows.csv`, in order (after run, seed, the swept params, flow and
/// cc). A file-format contract: columns may be added at the end, never moved.
pub const FLOWS_CSV: &[&MetricDef] = &[
    &GOODPUT,
    &THROUGHPUT,
    &BYTES_DELIVERED,
    &RETRANSMITS,
    &RETRANS_RATIO,
    &RTT_MIN,
    &RTT_P50,
    &RTT_P95,
    &RTT_P99,
    &FCT,
    &LINK_UTILIZATION,
    &DROPS_BUFFER,
    &DROPS_RANDOM,
    &QUEUE_P50,
    &QUEUE_P99,
    &JAIN,
    &CE_MARKS,
    &CWR_EVENTS,
    &LINK_MARKS,
    &DROPS_AQM,
    &DROPS_POLICER,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_names_are_unique() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!(a.key, b.key);
                assert_ne!(a.name, b.name);
            }
        }
        assert!(FLOWS_CSV.iter().all(|m| ALL.iter().any(|a| a.key == m.key)));
    }

    #[test]
    fn values_come_from_their_scope() {
        let f = FlowResult {
            fct_s: None,
            retransmits: 7,
            ..Default::default()
        };
        assert_eq!(RETRANSMITS.of_flow(&f), Some(7.0));
        assert_eq!(FCT.of_flow(&f), None);
        assert_eq!(FCT.csv(FCT.of_flow(&f)), "");
        let r = crate::testing::RunBuilder::new().jain(0.5).marks(3).build();
        assert_eq!(JAIN.of_run(&r), Some(0.5));
        assert_eq!(LINK_MARKS.of_run(&r), Some(3.0));
        assert!(LINK_MARKS.is_link() && !JAIN.is_link());
        assert_eq!(JAIN.csv(Some(0.5)), "0.5000");
    }
}
