//! The schema: the tables of a scenario file, the keys each takes and the kind of value each
//! key holds ([`Kind`]), synonyms people write for keys, and the qualified names errors use.

use cclab_core::cc::Param;
use cclab_path::{Setting, SettingKind};
use std::sync::LazyLock;

use crate::model::CcCatalog;

/// The kind of value a key holds: how [`super::value::parse_val`] reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Kind {
    Name,
    Description,
    Duration,
    Seed,
    Rate,
    Rtt,
    Buffer,
    Loss,
    Mss,
    Cc,
    Count,
    Start,
    Size,
    RttExtra,
    InitCwnd,
    /// `true` or `false`.
    Bool,
    /// `flows.kind`: `"bulk"` (a TCP flow, the default) or `"probe"` (a UDP echo probe).
    Workload,
    /// `flows.interval` of a probe: a time from 1 ms to 10 s.
    ProbeInterval,
    /// `flows.ecn`: `true` (classic ECN, RFC 3168), `false`, or `"accecn"`.
    Ecn,
    /// `CONFIG_HZ`: one of [`HZ_VALUES`].
    Hz,
    /// A time, or `"off"` (= 0).
    TimeOrOff,
    /// A fixed rate, or `"off"` (= 0).
    RateOrOff,
    /// A `tcp_rmem`/`tcp_wmem` triple: min, default, max sizes in one string.
    MemTriple,
    /// A size in bytes, or `"off"` (= not set).
    SizeOrOff,
    /// `rto_min`: a time from 1 ms to 10 s.
    RtoMin,
    /// `hosts.profile`: a named set of host settings ([`HOST_PROFILES`]).
    Profile,
    /// `link.loss_burst`: a mean run length in packets, a number from 1 to 1000.
    Burst,
    /// `link.aqm`: a queue discipline's name ([`AQM_NAMES`]), or a `[link.aqm]` table.
    Aqm,
    /// `link.aqm.kind`: a queue discipline's name.
    AqmName,
    /// `link.policer`, `link.shaper`: a rate, or a table with `rate` and `burst`.
    Bucket,
    /// `link.loss_unit`: one of [`LOSS_UNITS`].
    LossUnit,
    /// `link.trace`: a trace file's path.
    Trace,
    /// A path element's declared size (`SettingKind::Size`: a token bucket's `burst`): a
    /// positive size.
    ElementSize,
    /// A positive time.
    PosTime,
    /// A whole number in a range.
    Int {
        lo: u64,
        hi: u64,
    },
    /// A controller parameter (`cc_params`), of the kind its registry entry declares.
    Param(&'static Param),
}

impl Kind {
    pub(super) fn sweepable(self) -> bool {
        !matches!(self, Kind::Name | Kind::Description | Kind::Workload)
    }
}

pub(super) const TOP_SCALARS: &[(&str, Kind)] = &[
    ("name", Kind::Name),
    ("duration", Kind::Duration),
    ("seed", Kind::Seed),
    ("description", Kind::Description),
];
pub(super) const TOP_TABLES: &[&str] = &["link", "hosts", "flows", "reference"];

/// Queue disciplines `link.aqm` may name.
/// (`cclab_path::AQMS`, where each discipline is registered.)
pub static AQM_NAMES: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| cclab_path::AQMS.iter().map(|a| a.name).collect());
/// Other names `link.aqm` accepts for a queue discipline (`-` and `_` alike, any case):
/// (alias, discipline). Documented in docs/scenarios.md and listed by `cclab controllers`.
pub const AQM_ALIASES: &[(&str, &str)] = &[
    ("drop_tail", "droptail"),
    ("fifo", "droptail"),
    ("bfifo", "droptail"),
    ("none", "droptail"),
    ("fqcodel", "fq_codel"),
];
/// Units of random loss (`link.loss_unit`).
pub const LOSS_UNITS: &[&str] = &["segment", "gso"];
/// Keys of `[link]`: these, with a key per token bucket (`cclab_path::BUCKETS`) after `aqm`.
const LINK_SCALARS: &[(&str, Kind)] = &[
    ("rate", Kind::Rate),
    ("rtt", Kind::Rtt),
    ("buffer", Kind::Buffer),
    ("loss", Kind::Loss),
    ("loss_burst", Kind::Burst),
    ("ack_loss", Kind::Loss),
    ("mss", Kind::Mss),
    ("ecn_threshold", Kind::RttExtra),
    ("loss_unit", Kind::LossUnit),
    ("aqm", Kind::Aqm),
    ("trace", Kind::Trace),
    ("jitter", Kind::RttExtra),
    ("reorder", Kind::Bool),
    ("ack_aggregation", Kind::RttExtra),
    // Old names of `hosts.latency` and `hosts.jitter`, still accepted.
    ("host_latency", Kind::RttExtra),
    ("host_jitter", Kind::RttExtra),
];
/// Keys of `[link]`, in the order errors list them.
pub(super) static LINK_KEYS: LazyLock<Vec<(&'static str, Kind)>> = LazyLock::new(|| {
    let after_aqm = LINK_SCALARS
        .iter()
        .position(|(k, _)| *k == "aqm")
        .unwrap_or(0)
        + 1;
    let buckets = cclab_path::BUCKETS.iter().map(|b| (b.name, Kind::Bucket));
    let mut keys = LINK_SCALARS[..after_aqm].to_vec();
    keys.extend(buckets);
    keys.extend_from_slice(&LINK_SCALARS[after_aqm..]);
    keys
});
/// Keys of a `[link.aqm]` table: the discipline and every setting any of them declares, in
/// the order of `cclab_path::AQMS` (which ones a discipline takes: [`aqm_params`]).
pub(super) static AQM_KEYS: LazyLock<Vec<(&'static str, Kind)>> = LazyLock::new(|| {
    let mut keys = vec![("kind", Kind::AqmName)];
    for s in cclab_path::AQMS.iter().flat_map(|a| a.settings) {
        match keys.iter_mut().find(|(k, _)| *k == s.name) {
            None => keys.push((s.name, setting_kind(s))),
            // Two disciplines' integers of one name (PIE's and DualPI2's `alpha`) may differ
            // in range: the key takes either, and the discipline's own range is checked when
            // the path is built (`Loaded::given`).
            Some((_, Kind::Int { lo, hi })) => {
                if let Kind::Int { lo: l, hi: h } = setting_kind(s) {
                    *lo = (*lo).min(l);
                    *hi = (*hi).max(h);
                }
            }
            Some(_) => {}
        }
    }
    keys
});

/// How a scenario reads a path element's declared setting.
fn setting_kind(s: &Setting) -> Kind {
    match s.kind {
        SettingKind::Time { zero: false } => Kind::PosTime,
        SettingKind::Time { zero: true } => Kind::RttExtra,
        SettingKind::Int { min, max } => Kind::Int { lo: min, hi: max },
        SettingKind::Bool => Kind::Bool,
        SettingKind::Rate => Kind::Rate,
        SettingKind::Size => Kind::ElementSize,
    }
}
/// Keys of a `[link.policer]` or `[link.shaper]` table: the settings a token bucket declares
/// (`cclab_path::TokenBucket::SETTINGS`, which each of `cclab_path::BUCKETS` takes).
pub(super) static BUCKET_KEYS: LazyLock<Vec<(&'static str, Kind)>> = LazyLock::new(|| {
    cclab_path::TokenBucket::SETTINGS
        .iter()
        .map(|s| (s.name, setting_kind(s)))
        .collect()
});

/// The `[link.aqm]` parameters discipline `kind` takes (none for an unknown name).
pub fn aqm_params(kind: &str) -> Vec<&'static str> {
    cclab_path::Aqm::by_name(kind)
        .map(|a| a.settings.iter().map(|s| s.name).collect())
        .unwrap_or_default()
}

pub(super) const HOST_KEYS: &[(&str, Kind)] = &[
    ("latency", Kind::RttExtra),
    ("jitter", Kind::RttExtra),
    ("wake", Kind::TimeOrOff),
    ("wake_idle", Kind::RttExtra),
    ("shared_cpu", Kind::Bool),
    ("hz", Kind::Hz),
    ("tcp_rmem", Kind::MemTriple),
    ("tcp_wmem", Kind::MemTriple),
    ("rcvbuf", Kind::SizeOrOff),
    ("sndbuf", Kind::SizeOrOff),
    ("init_cwnd", Kind::InitCwnd),
    ("init_rwnd", Kind::InitCwnd),
    ("rto_min", Kind::RtoMin),
    ("slow_start_after_idle", Kind::Bool),
    ("notsent_lowat", Kind::SizeOrOff),
    ("pacing", Kind::Bool),
    ("nic_rate", Kind::RateOrOff),
    ("probe_start", Kind::Bool),
    ("profile", Kind::Profile),
];
pub(super) const FLOW_KEYS: &[(&str, Kind)] = &[
    ("cc", Kind::Cc),
    ("count", Kind::Count),
    ("start", Kind::Start),
    ("size", Kind::Size),
    ("rtt_extra", Kind::RttExtra),
    ("init_cwnd", Kind::InitCwnd),
    ("ecn", Kind::Ecn),
    ("kind", Kind::Workload),
    ("interval", Kind::ProbeInterval),
];
/// The keys a probe group (`kind = "probe"`) takes.
pub(super) const PROBE_KEYS: &[&str] = &["kind", "interval", "size", "start"];
/// The key of a flow group's controller parameters (a table, checked against the catalog).
pub(super) const CC_PARAMS: &str = "cc_params";

/// Words people write for a key, mapped to the key's qualified name.
pub(super) const SYNONYMS: &[(&str, &str)] = &[
    ("bandwidth", "link.rate"),
    ("bw", "link.rate"),
    ("capacity", "link.rate"),
    ("delay", "link.rtt"),
    ("latency", "link.rtt"),
    ("min_rtt", "link.rtt"),
    ("queue", "link.buffer"),
    ("qlen", "link.buffer"),
    ("queue_size", "link.buffer"),
    ("buffer_size", "link.buffer"),
    ("drop", "link.loss"),
    ("loss_rate", "link.loss"),
    ("algorithm", "flows.cc"),
    ("algo", "flows.cc"),
    ("congestion_control", "flows.cc"),
    ("cca", "flows.cc"),
    ("flow", "flows"),
    ("n", "flows.count"),
    ("num", "flows.count"),
    ("bytes", "flows.size"),
    ("initcwnd", "flows.init_cwnd"),
    ("iw", "flows.init_cwnd"),
    ("time", "duration"),
    ("length", "duration"),
    ("host", "hosts"),
    ("params", "flows.cc_params"),
    ("cc_param", "flows.cc_params"),
    ("host_delay", "hosts.latency"),
    ("config_hz", "hosts.hz"),
];

/// Which table a key is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Section {
    Top,
    Link,
    Hosts,
    Flow(usize),
    /// The `cc_params` table of flow group `i`.
    CcParams(usize),
    /// A table under `[link]`: `[link.aqm]`, `[link.policer]`, `[link.shaper]`.
    LinkSub(Sub),
}

/// The tables under `[link]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Sub {
    Aqm,
    /// A token bucket: its index in `cclab_path::BUCKETS`.
    Bucket(usize),
}

impl Sub {
    /// Every table under `[link]`: `[link.aqm]`, then a token bucket's each.
    pub(super) fn all() -> impl Iterator<Item = Sub> {
        std::iter::once(Sub::Aqm).chain((0..cclab_path::BUCKETS.len()).map(Sub::Bucket))
    }
    /// The table of token bucket `b`.
    pub(super) fn bucket(b: &cclab_path::Bucket) -> Sub {
        Sub::all()
            .find(|s| s.key() == b.name)
            .unwrap_or_else(|| unreachable!("{} is not in BUCKETS", b.name))
    }
    pub(super) fn key(self) -> &'static str {
        match self {
            Sub::Aqm => "aqm",
            Sub::Bucket(i) => cclab_path::BUCKETS[i].name,
        }
    }
    pub(super) fn of(key: &str) -> Option<Sub> {
        Sub::all().find(|s| s.key() == key)
    }
    pub(super) fn keys(self) -> &'static [(&'static str, Kind)] {
        match self {
            Sub::Aqm => &AQM_KEYS,
            Sub::Bucket(_) => &BUCKET_KEYS,
        }
    }
    /// The key that names what the table is (the one a bare value stands for): a token
    /// bucket's first setting, its rate.
    pub(super) fn main_key(self) -> &'static str {
        match self {
            Sub::Aqm => "kind",
            Sub::Bucket(_) => BUCKET_KEYS[0].0,
        }
    }
}

/// The keys of a table, with their kinds; `cc_params` keys come from the catalog.
pub(super) fn section_keys(s: Section, cat: &CcCatalog) -> Vec<(&'static str, Kind)> {
    match s {
        Section::Top => TOP_SCALARS.to_vec(),
        Section::Link => LINK_KEYS.to_vec(),
        Section::Hosts => HOST_KEYS.to_vec(),
        Section::Flow(_) => FLOW_KEYS.to_vec(),
        Section::CcParams(_) => cat
            .all_params()
            .iter()
            .map(|p| (p.name, Kind::Param(p)))
            .collect(),
        Section::LinkSub(sub) => sub.keys().to_vec(),
    }
}

pub(super) fn key_kind(s: Section, key: &str, cat: &CcCatalog) -> Option<Kind> {
    section_keys(s, cat)
        .into_iter()
        .find(|(k, _)| *k == key)
        .map(|(_, kind)| kind)
}

/// The qualified name of `key` in `section` (`link.rate`, `flows.0.cc`), as errors name it.
pub(super) fn qualified(section: Section, key: &str) -> String {
    match section {
        Section::Top => key.to_string(),
        Section::Link => format!("link.{key}"),
        Section::Hosts => format!("hosts.{key}"),
        Section::Flow(i) => format!("flows.{i}.{key}"),
        Section::CcParams(i) => format!("flows.{i}.{CC_PARAMS}.{key}"),
        Section::LinkSub(sub) => format!("link.{}.{key}", sub.key()),
    }
}
