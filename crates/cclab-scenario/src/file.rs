//! `ScenarioFile`: a parsed scenario file (values may be lists), overrides and matrix
//! expansion into concrete [`Scenario`]s.

use std::path::Path;
use std::rc::Rc;

use cclab_core::cc::{Param, ParamKind, ParamValue};
use cclab_core::host::HostTcp;
use serde_json::{Map, Value};
use toml::de::{DeTable, DeValue};

use crate::error::{ErrorKind, ScenarioError};
use crate::model::*;
use crate::raw::{self, Entry, LineIndex, Loc, Node, RawV, Table};
use crate::units::{self, Buffer};

// ---------------------------------------------------------------------------------------------
// The schema
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
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
    /// `CONFIG_HZ`: one of [`HZ_VALUES`].
    Hz,
    /// A time, or `"off"` (= 0).
    TimeOrOff,
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
    /// A token bucket's `burst`: a positive size.
    BucketBurst,
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
    fn sweepable(self) -> bool {
        !matches!(self, Kind::Name | Kind::Description)
    }
}

const TOP_SCALARS: &[(&str, Kind)] = &[
    ("name", Kind::Name),
    ("duration", Kind::Duration),
    ("seed", Kind::Seed),
    ("description", Kind::Description),
];
const TOP_TABLES: &[&str] = &["link", "hosts", "flows", "reference"];
/// The largest trace file `link.trace` reads, bytes (a 10 Gbit/s trace of 10 minutes).
const MAX_TRACE_BYTES: u64 = 256 << 20;

/// Queue disciplines `link.aqm` may name.
pub const AQM_NAMES: &[&str] = &["droptail", "codel", "fq_codel", "pie"];
/// Units of random loss (`link.loss_unit`).
pub const LOSS_UNITS: &[&str] = &["segment", "gso"];
const LINK_KEYS: &[(&str, Kind)] = &[
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
    ("policer", Kind::Bucket),
    ("shaper", Kind::Bucket),
    ("trace", Kind::Trace),
    ("jitter", Kind::RttExtra),
    ("reorder", Kind::Bool),
    ("ack_aggregation", Kind::RttExtra),
    // Old names of `hosts.latency` and `hosts.jitter`, still accepted.
    ("host_latency", Kind::RttExtra),
    ("host_jitter", Kind::RttExtra),
];
/// Keys of a `[link.aqm]` table: the discipline and every parameter any of them takes
/// (which ones a discipline takes: [`aqm_params`]).
const AQM_KEYS: &[(&str, Kind)] = &[
    ("kind", Kind::AqmName),
    ("target", Kind::PosTime),
    ("interval", Kind::PosTime),
    ("ecn", Kind::Bool),
    ("flows", Kind::Int { lo: 1, hi: 65536 }),
    (
        "quantum",
        Kind::Int {
            lo: 256,
            hi: 1 << 20,
        },
    ),
    ("drop_batch", Kind::Int { lo: 1, hi: 1024 }),
    ("tupdate", Kind::PosTime),
    ("alpha", Kind::Int { lo: 0, hi: 32 }),
    ("beta", Kind::Int { lo: 0, hi: 32 }),
    ("max_burst", Kind::RttExtra),
    ("bytemode", Kind::Bool),
    ("dq_rate_estimator", Kind::Bool),
];
/// Keys of a `[link.policer]` or `[link.shaper]` table.
const BUCKET_KEYS: &[(&str, Kind)] = &[("rate", Kind::Rate), ("burst", Kind::BucketBurst)];

/// The `[link.aqm]` parameters each discipline takes.
pub fn aqm_params(kind: &str) -> &'static [&'static str] {
    match kind {
        "codel" => &["target", "interval", "ecn"],
        "fq_codel" => &[
            "target",
            "interval",
            "ecn",
            "flows",
            "quantum",
            "drop_batch",
        ],
        "pie" => &[
            "target",
            "tupdate",
            "alpha",
            "beta",
            "max_burst",
            "ecn",
            "bytemode",
            "dq_rate_estimator",
        ],
        _ => &[],
    }
}

const HOST_KEYS: &[(&str, Kind)] = &[
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
    ("probe_start", Kind::Bool),
    ("profile", Kind::Profile),
];
const FLOW_KEYS: &[(&str, Kind)] = &[
    ("cc", Kind::Cc),
    ("count", Kind::Count),
    ("start", Kind::Start),
    ("size", Kind::Size),
    ("rtt_extra", Kind::RttExtra),
    ("init_cwnd", Kind::InitCwnd),
    ("ecn", Kind::Bool),
];
/// The key of a flow group's controller parameters (a table, checked against the catalog).
const CC_PARAMS: &str = "cc_params";

/// Words people write for a key, mapped to the key's qualified name.
const SYNONYMS: &[(&str, &str)] = &[
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
enum Section {
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
enum Sub {
    Aqm,
    Policer,
    Shaper,
}

impl Sub {
    const ALL: [Sub; 3] = [Sub::Aqm, Sub::Policer, Sub::Shaper];
    fn key(self) -> &'static str {
        match self {
            Sub::Aqm => "aqm",
            Sub::Policer => "policer",
            Sub::Shaper => "shaper",
        }
    }
    fn of(key: &str) -> Option<Sub> {
        Sub::ALL.into_iter().find(|s| s.key() == key)
    }
    fn keys(self) -> &'static [(&'static str, Kind)] {
        match self {
            Sub::Aqm => AQM_KEYS,
            Sub::Policer | Sub::Shaper => BUCKET_KEYS,
        }
    }
    /// The key that names what the table is (the one a bare value stands for).
    fn main_key(self) -> &'static str {
        match self {
            Sub::Aqm => "kind",
            Sub::Policer | Sub::Shaper => "rate",
        }
    }
}

/// The keys of a table, with their kinds; `cc_params` keys come from the catalog.
fn section_keys(s: Section, cat: &CcCatalog) -> Vec<(&'static str, Kind)> {
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

fn key_kind(s: Section, key: &str, cat: &CcCatalog) -> Option<Kind> {
    section_keys(s, cat)
        .into_iter()
        .find(|(k, _)| *k == key)
        .map(|(_, kind)| kind)
}

/// A parsed scalar value in base units.
#[derive(Clone, Debug)]
enum Val {
    Str(String),
    Int(u64),
    Ns(u64),
    Bps(u64),
    Bytes(u64),
    Prob(f64),
    Buf(Buffer),
    Bool(bool),
    Param(ParamValue),
    Triple([u64; 3]),
    /// A rate schedule: (from, bit/s) steps.
    Schedule(Vec<(u64, u64)>),
}

impl Val {
    /// The value in SI units for params and reports.
    fn to_json(&self) -> Value {
        match self {
            Val::Str(s) => Value::from(s.clone()),
            Val::Int(n) | Val::Bps(n) | Val::Bytes(n) => Value::from(*n),
            Val::Ns(ns) => Value::from(*ns as f64 / 1e9),
            Val::Prob(p) => Value::from(*p),
            Val::Buf(b) => Value::from(b.to_string()),
            Val::Bool(b) => Value::from(*b),
            Val::Param(v) => crate::model::param_json(*v),
            Val::Triple(t) => Value::from(format!("{} {} {}", t[0], t[1], t[2])),
            Val::Schedule(steps) => Value::from(
                steps
                    .iter()
                    .map(|&(at, bps)| serde_json::json!({"at": at as f64 / 1e9, "rate": bps}))
                    .collect::<Vec<_>>(),
            ),
        }
    }
}

fn int_in(v: &RawV, what: &str, lo: u64, hi: u64) -> Result<u64, (ErrorKind, String)> {
    match v {
        RawV::Int(n) if *n >= lo as i64 && (*n as u64) <= hi => Ok(*n as u64),
        RawV::Int(_) => Err((
            ErrorKind::BadValue,
            format!("{what} must be between {lo} and {hi}"),
        )),
        other => Err((
            ErrorKind::WrongType,
            format!(
                "expected a whole number ({what}, {lo} to {hi}), found {}",
                other.type_name()
            ),
        )),
    }
}

fn bare_number_text(v: &RawV) -> Option<String> {
    match v {
        RawV::Int(i) => Some(i.to_string()),
        RawV::Float(f) => Some(f.to_string()),
        _ => None,
    }
}

fn time_val(v: &RawV, positive: bool, what: &str) -> Result<u64, (ErrorKind, String)> {
    let ns = match v {
        RawV::Str(s) => units::parse_time(s).map_err(|m| (ErrorKind::BadValue, m))?,
        RawV::Int(0) => 0,
        RawV::Int(_) | RawV::Float(_) => {
            let t = bare_number_text(v).unwrap_or_default();
            return Err((
                ErrorKind::BadValue,
                format!(
                    "a time needs a unit (write e.g. \"{t}s\" or \"{t}ms\"; units: ns, us, ms, s)"
                ),
            ));
        }
        other => {
            return Err((
                ErrorKind::WrongType,
                format!(
                    "expected a time string like \"10s\" or \"100ms\", found {}",
                    other.type_name()
                ),
            ))
        }
    };
    if positive && ns == 0 {
        return Err((
            ErrorKind::BadValue,
            format!("{what} must be positive (e.g. {})", units::TIME_EXAMPLES),
        ));
    }
    Ok(ns)
}

fn parse_val(kind: Kind, v: &RawV, cat: &CcCatalog) -> Result<Val, (ErrorKind, String)> {
    use ErrorKind::{BadValue, WrongType};
    let wrong = |exp: &str| {
        Err((
            WrongType,
            format!("expected {exp}, found {}", v.type_name()),
        ))
    };
    match kind {
        Kind::Name => match v {
            RawV::Str(s) if s.trim().is_empty() => Err((BadValue, "name must not be empty".into())),
            RawV::Str(s) => Ok(Val::Str(s.clone())),
            _ => wrong("a string"),
        },
        Kind::Description => match v {
            RawV::Str(s) => Ok(Val::Str(s.clone())),
            _ => wrong("a string"),
        },
        Kind::Duration => time_val(v, true, "duration").map(Val::Ns),
        Kind::Rtt => time_val(v, true, "rtt").map(Val::Ns),
        Kind::Start | Kind::RttExtra => time_val(v, false, "time").map(Val::Ns),
        Kind::Seed => int_in(v, "seed", 0, i64::MAX as u64).map(Val::Int),
        Kind::Mss => int_in(v, "mss (bytes)", MSS_MIN as u64, MSS_MAX as u64).map(Val::Int),
        Kind::Count => int_in(v, "count", 1, MAX_COUNT as u64).map(Val::Int),
        Kind::InitCwnd => int_in(v, "init_cwnd (packets)", 1, MAX_INIT_CWND as u64).map(Val::Int),
        Kind::Rate if is_schedule(v) => schedule_val(v),
        Kind::Rate => match v {
            RawV::Str(s) => units::parse_rate(s)
                .map(Val::Bps)
                .map_err(|m| (BadValue, m)),
            RawV::Int(_) | RawV::Float(_) => {
                let t = bare_number_text(v).unwrap_or_default();
                if t.starts_with('-') || t == "0" || t == "0.0" {
                    return Err((
                        BadValue,
                        format!(
                            "a rate must be positive (use e.g. {})",
                            units::RATE_EXAMPLES
                        ),
                    ));
                }
                Err((
                    BadValue,
                    format!("a rate needs a unit: write e.g. \"{t}mbit\" for bits/s or \"{t}MB/s\" for bytes/s"),
                ))
            }
            _ => wrong("a rate string like \"100mbit\""),
        },
        Kind::Buffer => match v {
            RawV::Str(s) => Buffer::parse(s).map(Val::Buf).map_err(|m| (BadValue, m)),
            RawV::Int(_) | RawV::Float(_) => {
                let t = bare_number_text(v).unwrap_or_default();
                Err((
                    BadValue,
                    format!("a buffer needs a unit: write e.g. \"{t}pkt\" for packets, \"{t}kb\" for bytes or \"1bdp\""),
                ))
            }
            _ => wrong("a buffer string like \"1bdp\", \"100pkt\" or \"256kb\""),
        },
        Kind::Loss => match v {
            RawV::Int(_) | RawV::Float(_) => {
                let x = match v {
                    RawV::Int(i) => *i as f64,
                    RawV::Float(f) => *f,
                    _ => f64::NAN,
                };
                let text = bare_number_text(v).unwrap_or_default();
                units::check_bare_loss(x, &text)
                    .map(Val::Prob)
                    .map_err(|m| (BadValue, m))
            }
            RawV::Str(s) => units::parse_loss_str(s)
                .map(Val::Prob)
                .map_err(|m| (BadValue, m)),
            _ => wrong("a loss like \"1%\" or 0.01"),
        },
        Kind::Cc => match v {
            RawV::Str(s) => match cat.find(s) {
                Some(c) => Ok(Val::Str(c.name.clone())),
                None => {
                    // A controller the simulator has but this backend lacks (dctcp, bbr3
                    // on a mainline kernel): say where it does run.
                    let sim = cclab_core::cc::find(s)
                        .filter(|_| cat.owner != "the simulator")
                        .map(|c| format!("; the simulator has {}: use --backend sim", c.name))
                        .unwrap_or_default();
                    Err((
                        BadValue,
                        format!(
                            "unknown congestion control \"{}\" ({} has: {}){sim}",
                            s,
                            cat.owner,
                            cat.list()
                        ),
                    ))
                }
            },
            _ => wrong(&format!("a congestion control name ({})", cat.list())),
        },
        Kind::Bool => match v {
            RawV::Bool(b) => Ok(Val::Bool(*b)),
            _ => wrong("true or false"),
        },
        Kind::Hz => {
            let n = int_in(v, "hz", 1, 100_000)?;
            if HZ_VALUES.contains(&(n as u32)) {
                Ok(Val::Int(n))
            } else {
                Err((
                    BadValue,
                    format!("hz is a kernel's CONFIG_HZ: one of {HZ_VALUES:?}"),
                ))
            }
        }
        Kind::Burst => {
            let x = match v {
                RawV::Int(i) => *i as f64,
                RawV::Float(f) => *f,
                _ => return wrong("a number of packets like 4"),
            };
            if (1.0..=1000.0).contains(&x) {
                Ok(Val::Prob(x))
            } else {
                Err((
                    BadValue,
                    "loss_burst is the mean run of losses in packets, from 1 (independent loss) to 1000".into(),
                ))
            }
        }
        Kind::Aqm | Kind::AqmName => match v {
            RawV::Str(s) => {
                let t = s.trim().to_ascii_lowercase().replace('-', "_");
                let t = match t.as_str() {
                    "drop_tail" | "fifo" | "bfifo" | "none" => "droptail".to_string(),
                    "fqcodel" => "fq_codel".to_string(),
                    _ => t,
                };
                match AQM_NAMES.iter().find(|n| **n == t) {
                    Some(n) => Ok(Val::Str(n.to_string())),
                    None => Err((
                        BadValue,
                        format!(
                            "unknown queue discipline \"{s}\" (one of: {})",
                            AQM_NAMES.join(", ")
                        ),
                    )),
                }
            }
            _ if kind == Kind::Aqm => wrong(&format!(
                "a queue discipline ({}) or a [link.aqm] table",
                AQM_NAMES.join(", ")
            )),
            _ => wrong(&format!("a queue discipline ({})", AQM_NAMES.join(", "))),
        },
        Kind::Bucket => match v {
            RawV::Str(_) => parse_val(Kind::Rate, v, cat),
            _ => wrong("a rate like \"10mbit\", or a table with rate and burst"),
        },
        Kind::LossUnit => match v {
            RawV::Str(s) => match LOSS_UNITS.iter().find(|n| n.eq_ignore_ascii_case(s.trim())) {
                Some(n) => Ok(Val::Str(n.to_string())),
                None => Err((
                    BadValue,
                    format!(
                        "unknown loss unit \"{s}\" (segment: one draw per segment; gso: one per GSO packet, as netem on a TSO sender)"
                    ),
                )),
            },
            _ => wrong("\"segment\" or \"gso\""),
        },
        Kind::Trace => match v {
            RawV::Str(s) if s.trim().is_empty() => {
                Err((BadValue, "empty path: name a trace file".into()))
            }
            RawV::Str(s) => Ok(Val::Str(s.clone())),
            _ => wrong("the path of a Mahimahi trace file"),
        },
        Kind::PosTime => time_val(v, true, "time").map(Val::Ns),
        Kind::Int { lo, hi } => int_in(v, "value", lo, hi).map(Val::Int),
        Kind::TimeOrOff => match v {
            RawV::Str(s) if s.trim().eq_ignore_ascii_case("off") => Ok(Val::Ns(0)),
            _ => time_val(v, false, "time").map(Val::Ns),
        },
        Kind::MemTriple => match v {
            RawV::Str(s) => {
                let parts: Vec<&str> = s.split_whitespace().collect();
                if parts.len() != 3 {
                    return Err((BadValue, format!("expected three sizes, min default max, as the sysctl takes them (e.g. \"4096 131072 6291456\" or \"4kb 128kb 6mb\"), found {} value(s)", parts.len())));
                }
                let mut t = [0u64; 3];
                for (i, p) in parts.iter().enumerate() {
                    t[i] = units::parse_size(p).map_err(|m| (BadValue, m))?;
                }
                cclab_core::host::check_mem(t).map_err(|m| (BadValue, m))?;
                Ok(Val::Triple(t))
            }
            _ => wrong("a string of three sizes like \"4096 131072 6291456\""),
        },
        Kind::SizeOrOff => {
            let n = match v {
                RawV::Str(s) if s.trim().eq_ignore_ascii_case("off") => return Ok(Val::Bytes(0)),
                RawV::Str(s) => units::parse_size(s).map_err(|m| (BadValue, m))?,
                RawV::Int(i) if *i > 0 => *i as u64,
                RawV::Int(_) => {
                    return Err((BadValue, "must be positive bytes, or \"off\"".into()))
                }
                _ => return wrong("a size like \"4mb\", or \"off\""),
            };
            cclab_core::host::check_sockbuf(n)
                .map_err(|m| (BadValue, format!("{m}, or \"off\"")))?;
            Ok(Val::Bytes(n))
        }
        Kind::Profile => match v {
            RawV::Str(s) => match HOST_PROFILES
                .iter()
                .find(|p| p.eq_ignore_ascii_case(s.trim()))
            {
                Some(p) => Ok(Val::Str(p.to_string())),
                None => Err((
                    BadValue,
                    format!(
                        "unknown host profile \"{s}\" (profiles: {})",
                        HOST_PROFILES.join(", ")
                    ),
                )),
            },
            _ => wrong(&format!("a profile name ({})", HOST_PROFILES.join(", "))),
        },
        Kind::RtoMin => {
            let ns = time_val(v, true, "rto_min")?;
            cclab_core::host::check_rto_min(ns).map_err(|m| (BadValue, m))?;
            Ok(Val::Ns(ns))
        }
        Kind::Param(spec) => {
            let pv = match (spec.kind, v) {
                (ParamKind::Bool, RawV::Bool(b)) => ParamValue::Bool(*b),
                (ParamKind::Bool, _) => return wrong("true or false"),
                (ParamKind::Int { .. }, RawV::Int(i)) => ParamValue::Int(*i),
                (ParamKind::Int { .. }, _) => return wrong("a whole number"),
            };
            spec.check(pv).map(Val::Param).map_err(|m| (BadValue, m))
        }
        Kind::Size | Kind::BucketBurst => {
            let n = match v {
                RawV::Str(s) => units::parse_size(s).map_err(|m| (BadValue, m))?,
                RawV::Int(i) if *i >= 0 => *i as u64,
                RawV::Int(_) => return Err((BadValue, "a size must not be negative".into())),
                _ => return wrong("a size like \"25mb\" or a whole number of bytes"),
            };
            if n == 0 {
                let fix = if kind == Kind::BucketBurst {
                    "a burst must hold at least one packet (leave burst out for the default)"
                } else {
                    "size must be positive (leave size out for a bulk flow)"
                };
                return Err((BadValue, fix.into()));
            }
            Ok(Val::Bytes(n))
        }
    }
}

/// Whether a value is a rate schedule: a list of tables (`[{at = "0s", rate = "100mbit"}]`),
/// one value rather than a sweep.
fn is_schedule(v: &RawV) -> bool {
    matches!(v, RawV::Array(a) if !a.is_empty() && a.iter().all(|n| matches!(n.v, RawV::Table(_))))
}

/// Whether a key's value is a list to sweep (a schedule is one value).
fn sweeps(kind: Kind, v: &RawV) -> bool {
    matches!(v, RawV::Array(_)) && !(kind == Kind::Rate && is_schedule(v))
}

/// A rate schedule: steps `{at, rate}`, the first at 0, times increasing.
fn schedule_val(v: &RawV) -> Result<Val, (ErrorKind, String)> {
    use ErrorKind::BadValue;
    let RawV::Array(a) = v else {
        return Err((BadValue, "expected a list of steps".into()));
    };
    let example =
        "e.g. rate = [{at = \"0s\", rate = \"100mbit\"}, {at = \"20s\", rate = \"20mbit\"}]";
    let mut steps: Vec<(u64, u64)> = Vec::new();
    for (i, n) in a.iter().enumerate() {
        let RawV::Table(t) = &n.v else {
            return Err((BadValue, format!("step {i} is not a table ({example})")));
        };
        let (mut at, mut rate) = (None, None);
        for e in &t.entries {
            match e.key.as_str() {
                "at" => {
                    at = Some(
                        time_val(&e.node.v, false, "at")
                            .map_err(|(k, m)| (k, format!("step {i}: {m}")))?,
                    )
                }
                "rate" => match match &e.node.v {
                    RawV::Str(r) => units::parse_rate(r),
                    _ => Err("a rate is a string like \"100mbit\"".to_string()),
                } {
                    Ok(r) => rate = Some(r),
                    Err(m) => return Err((BadValue, format!("step {i}: {m}"))),
                },
                k => {
                    return Err((
                        BadValue,
                        format!("step {i}: unknown key {k} (a step has at and rate; {example})"),
                    ))
                }
            }
        }
        let (Some(at), Some(rate)) = (at, rate) else {
            return Err((BadValue, format!("step {i} needs at and rate ({example})")));
        };
        if i == 0 && at != 0 {
            return Err((
                BadValue,
                format!("the first step must be at \"0s\" ({example})"),
            ));
        }
        if steps.last().is_some_and(|&(prev, _)| at <= prev) {
            return Err((
                BadValue,
                format!(
                    "step {i} is not later than step {}: steps go in time order",
                    i - 1
                ),
            ));
        }
        steps.push((at, rate));
    }
    Ok(Val::Schedule(steps))
}

// ---------------------------------------------------------------------------------------------
// Unknown-key suggestions
// ---------------------------------------------------------------------------------------------

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// All keys with their qualified names and the section they belong to.
fn all_keys() -> Vec<(&'static str, String)> {
    let mut v: Vec<(&str, String)> = Vec::new();
    for (k, _) in TOP_SCALARS {
        v.push((k, k.to_string()));
    }
    for k in TOP_TABLES {
        v.push((k, k.to_string()));
    }
    for (k, _) in LINK_KEYS {
        v.push((k, format!("link.{k}")));
    }
    for (k, _) in HOST_KEYS {
        v.push((k, format!("hosts.{k}")));
    }
    for (k, _) in FLOW_KEYS {
        v.push((k, format!("flows.{k}")));
    }
    v.push((CC_PARAMS, format!("flows.{CC_PARAMS}")));
    v
}

/// "did you mean ...?" text for an unknown `key` found in `section_prefix` ("", "link.", "flows.").
fn suggestion(key: &str, section_prefix: &str) -> String {
    match suggest(key, section_prefix) {
        (Some(hint), allowed) => {
            format!("unknown key; did you mean {hint}? (allowed here: {allowed})")
        }
        (None, allowed) => format!("unknown key (allowed here: {allowed})"),
    }
}

/// The closest known key (in words, e.g. `rate under [link]`) and the keys allowed here.
fn suggest(key: &str, section_prefix: &str) -> (Option<String>, String) {
    let lower = key.to_ascii_lowercase();
    let here: Vec<&str> = match section_prefix {
        "" => TOP_SCALARS
            .iter()
            .map(|(k, _)| *k)
            .chain(TOP_TABLES.iter().copied())
            .collect(),
        "link." => LINK_KEYS.iter().map(|(k, _)| *k).collect(),
        "hosts." => HOST_KEYS.iter().map(|(k, _)| *k).collect(),
        "link.aqm." => AQM_KEYS.iter().map(|(k, _)| *k).collect(),
        "link.bucket." => BUCKET_KEYS.iter().map(|(k, _)| *k).collect(),
        _ => FLOW_KEYS
            .iter()
            .map(|(k, _)| *k)
            .chain([CC_PARAMS])
            .collect(),
    };
    let limit = match lower.chars().count() {
        0..=3 => 1,
        4..=6 => 2,
        _ => 3,
    };
    let allowed = here.join(", ");
    let place = |q: &str| -> String {
        if !section_prefix.is_empty() && q.starts_with(section_prefix) {
            q[section_prefix.len()..].to_string()
        } else if let Some(k) = q.strip_prefix("link.") {
            format!("{k} under [link]")
        } else if let Some(k) = q.strip_prefix("hosts.") {
            format!("{k} under [hosts]")
        } else if let Some(k) = q.strip_prefix("flows.") {
            format!("{k} under [[flows]]")
        } else if q == "flows" {
            "[[flows]]".to_string()
        } else if q == "link" || q == "hosts" || q == "reference" {
            format!("[{q}]")
        } else {
            format!("{q} at the top level")
        }
    };
    let best_here = here.iter().map(|k| (levenshtein(&lower, k), *k)).min();
    let best_elsewhere = all_keys()
        .into_iter()
        .filter(|(_, q)| {
            if section_prefix.is_empty() {
                q.contains('.')
            } else {
                !q.starts_with(section_prefix)
            }
        })
        .map(|(k, q)| (levenshtein(&lower, k), q))
        .min();
    // 1. The exact name of a key of another table.
    if let (Some((0, q)), false) = (&best_elsewhere, here.contains(&lower.as_str())) {
        return (Some(place(q)), allowed);
    }
    // 2. A close key in the same table.
    if let Some((d, k)) = best_here {
        if d <= limit {
            return (Some(k.to_string()), allowed);
        }
    }
    // 3. A synonym, or a close key of another table.
    for (syn, q) in SYNONYMS {
        if *syn == lower {
            return (Some(place(q)), allowed);
        }
    }
    if let Some((d, q)) = best_elsewhere {
        if d <= limit {
            return (Some(place(&q)), allowed);
        }
    }
    (None, allowed)
}

// ---------------------------------------------------------------------------------------------
// ScenarioFile
// ---------------------------------------------------------------------------------------------

/// A parsed and checked scenario file. Values may still be lists; [`ScenarioFile::expand`]
/// turns it into concrete scenarios.
#[derive(Clone, Debug)]
pub struct ScenarioFile {
    origin: String,
    root: Table,
    /// The controllers `flows.cc` may name, and their parameters.
    catalog: CcCatalog,
    /// The folder of the scenario file: paths in it (`link.trace`) are relative to it.
    dir: Option<std::path::PathBuf>,
}

/// One concrete scenario of a matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixPoint {
    /// 0-based position in the expansion order.
    pub index: usize,
    /// The swept keys of this point and their values, in axis order (see
    /// [`ScenarioFile::sweep_keys`]); empty when nothing is swept. Values are in SI units:
    /// bit/s, seconds, bytes, probability; strings for `cc` and `buffer`.
    pub params: Map<String, Value>,
    pub scenario: Scenario,
}

impl MatrixPoint {
    /// `key=value` pairs of `params` joined by `,` (`"link.loss=0.01,flows.cc=bbr"`), or `""`.
    pub fn label(&self) -> String {
        label_of(&self.params)
    }

    /// Every resolved key of the scenario; see [`Scenario::resolved`].
    pub fn resolved(&self) -> Map<String, Value> {
        self.scenario.resolved()
    }
}

/// The traces one `expand` has read, by path: each file is read and parsed once, and every
/// matrix point that runs it shares the one copy.
type TraceCache =
    std::cell::RefCell<Vec<(std::path::PathBuf, std::sync::Arc<cclab_path::TraceDesc>)>>;

/// One swept key: where it is and how many values it has.
struct Axis {
    section: Section,
    key: &'static str,
    kind: Kind,
    len: usize,
}

struct Ctx<'a> {
    origin: &'a str,
    cat: &'a CcCatalog,
}

impl Ctx<'_> {
    fn err(
        &self,
        kind: ErrorKind,
        loc: &Loc,
        key: Option<String>,
        value: Option<&RawV>,
        msg: impl Into<String>,
    ) -> ScenarioError {
        let mut e = ScenarioError::new(kind, self.origin, msg);
        match loc {
            Loc::File { line, col } => {
                e.line = Some(*line);
                e.column = Some(*col);
            }
            Loc::Set(s) => e.set = Some(s.to_string()),
        }
        e.key = key;
        e.value = value.map(raw::render);
        e
    }
}

fn qualified(section: Section, key: &str) -> String {
    match section {
        Section::Top => key.to_string(),
        Section::Link => format!("link.{key}"),
        Section::Hosts => format!("hosts.{key}"),
        Section::Flow(i) => format!("flows.{i}.{key}"),
        Section::CcParams(i) => format!("flows.{i}.{CC_PARAMS}.{key}"),
        Section::LinkSub(sub) => format!("link.{}.{key}", sub.key()),
    }
}

const FILE_START: Loc = Loc::File { line: 1, col: 1 };

impl ScenarioFile {
    /// Reads and checks a scenario file for the simulator's controllers. Errors name the
    /// path as given.
    pub fn from_file(path: impl AsRef<Path>) -> Result<ScenarioFile, ScenarioError> {
        Self::from_file_for(path, CcCatalog::simulator())
    }

    /// Reads and checks a scenario file for a backend that offers the controllers of
    /// `catalog` (`flows.cc` must name one of them; `cc_params` must be theirs).
    pub fn from_file_for(
        path: impl AsRef<Path>,
        catalog: CcCatalog,
    ) -> Result<ScenarioFile, ScenarioError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ScenarioError::new(
                ErrorKind::Io,
                &origin,
                format!("cannot read scenario file: {e}"),
            )
        })?;
        let mut file = Self::from_str_for(&text, &origin, catalog)?;
        file.dir = path.parent().map(|p| p.to_path_buf());
        Ok(file)
    }

    /// Parses and checks scenario text for the simulator's controllers. `origin` names it in
    /// errors (usually the file name).
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<ScenarioFile, ScenarioError> {
        Self::from_str_for(text, origin, CcCatalog::simulator())
    }

    /// Parses and checks scenario text for the controllers of `catalog`.
    pub fn from_str_for(
        text: &str,
        origin: &str,
        catalog: CcCatalog,
    ) -> Result<ScenarioFile, ScenarioError> {
        let ctx = Ctx {
            origin,
            cat: &catalog,
        };
        let index = LineIndex::new(text);
        let at = |off: usize| index.loc(off);
        let doc = DeTable::parse(text).map_err(|e| syntax_error(&ctx, text, &index, &e))?;
        let root = raw::convert_table(doc.get_ref(), &at)
            .map_err(|(loc, m)| ctx.err(ErrorKind::BadValue, &loc, None, None, m))?;
        let file = ScenarioFile {
            origin: origin.to_string(),
            root,
            catalog: catalog.clone(),
            dir: None,
        };
        file.check()?;
        Ok(file)
    }

    /// The controllers this file was checked against.
    pub fn catalog(&self) -> &CcCatalog {
        &self.catalog
    }

    /// The file name (or origin name) used in errors.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The scenario's `name`.
    pub fn name(&self) -> &str {
        match self.root.get("name").map(|e| &e.node.v) {
            Some(RawV::Str(s)) => s,
            _ => "",
        }
    }

    /// Number of `[[flows]]` groups.
    pub fn flow_groups(&self) -> usize {
        match self.root.get("flows").map(|e| &e.node.v) {
            Some(RawV::Array(a)) => a.len(),
            _ => 0,
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            origin: &self.origin,
            cat: &self.catalog,
        }
    }

    fn link(&self) -> Option<&Table> {
        match self.root.get("link").map(|e| &e.node.v) {
            Some(RawV::Table(t)) => Some(t),
            _ => None,
        }
    }

    fn flow(&self, i: usize) -> Option<&Table> {
        match self.root.get("flows").map(|e| &e.node.v) {
            Some(RawV::Array(a)) => match a.get(i).map(|n| &n.v) {
                Some(RawV::Table(t)) => Some(t),
                _ => None,
            },
            _ => None,
        }
    }

    fn table(&self, key: &str) -> Option<&Table> {
        match self.root.get(key).map(|e| &e.node.v) {
            Some(RawV::Table(t)) => Some(t),
            _ => None,
        }
    }

    fn section(&self, s: Section) -> Option<&Table> {
        match s {
            Section::Top => Some(&self.root),
            Section::Link => self.link(),
            Section::Hosts => self.table("hosts"),
            Section::Flow(i) => self.flow(i),
            Section::CcParams(i) => match self.flow(i)?.get(CC_PARAMS).map(|e| &e.node.v) {
                Some(RawV::Table(t)) => Some(t),
                _ => None,
            },
            Section::LinkSub(sub) => match self.link()?.get(sub.key()).map(|e| &e.node.v) {
                Some(RawV::Table(t)) => Some(t),
                _ => None,
            },
        }
    }

    /// Checks structure and every value (each list element on its own). Cross-key rules that
    /// depend on one matrix point are checked by `expand`.
    fn check(&self) -> Result<(), ScenarioError> {
        let ctx = self.ctx();
        for e in &self.root.entries {
            if let Some((_, kind)) = TOP_SCALARS.iter().find(|(k, _)| *k == e.key) {
                check_value(&ctx, Section::Top, &e.key, *kind, &e.node)?;
            } else if !TOP_TABLES.contains(&e.key.as_str()) {
                return Err(ctx.err(
                    ErrorKind::UnknownKey,
                    &e.key_loc,
                    Some(e.key.clone()),
                    None,
                    suggestion(&e.key, ""),
                ));
            }
        }
        if self.root.get("name").is_none() {
            return Err(ctx.err(
                ErrorKind::MissingKey,
                &FILE_START,
                Some("name".into()),
                None,
                "missing required key (add e.g. name = \"lossy-lan\" at the top)",
            ));
        }
        // [link]
        let link = self.root.get("link").ok_or_else(|| {
            ctx.err(
                ErrorKind::MissingKey,
                &FILE_START,
                Some("link".into()),
                None,
                "missing required table [link] (with at least rate and rtt)",
            )
        })?;
        let RawV::Table(lt) = &link.node.v else {
            return Err(ctx.err(
                ErrorKind::WrongType,
                &link.node.loc,
                Some("link".into()),
                Some(&link.node.v),
                format!(
                    "expected a table ([link]), found {}",
                    link.node.v.type_name()
                ),
            ));
        };
        check_table(&ctx, Section::Link, lt, &link.node.loc)?;
        // [hosts]
        if let Some(h) = self.root.get("hosts") {
            let RawV::Table(ht) = &h.node.v else {
                return Err(ctx.err(
                    ErrorKind::WrongType,
                    &h.node.loc,
                    Some("hosts".into()),
                    Some(&h.node.v),
                    format!("expected a table ([hosts]), found {}", h.node.v.type_name()),
                ));
            };
            check_table(&ctx, Section::Hosts, ht, &h.node.loc)?;
            for (new, old) in [("latency", "host_latency"), ("jitter", "host_jitter")] {
                if let (Some(e), Some(_)) = (ht.get(new), lt.get(old)) {
                    return Err(ctx.err(ErrorKind::Inconsistent, &e.key_loc, Some(format!("hosts.{new}")), None, format!("given twice: hosts.{new} and its old name link.{old}; keep hosts.{new}")));
                }
            }
        }
        // [[flows]]
        let flows = self.root.get("flows").ok_or_else(|| {
            ctx.err(
                ErrorKind::MissingKey,
                &FILE_START,
                Some("flows".into()),
                None,
                "missing flows: add at least one [[flows]] group with a cc (e.g. cc = \"cubic\")",
            )
        })?;
        let groups = match &flows.node.v {
            RawV::Array(a) => a,
            other => {
                return Err(ctx.err(
                    ErrorKind::WrongType,
                    &flows.node.loc,
                    Some("flows".into()),
                    None,
                    format!(
                    "expected a list of tables (write [[flows]] with double brackets), found {}",
                    other.type_name()
                ),
                ))
            }
        };
        if groups.is_empty() {
            return Err(ctx.err(
                ErrorKind::MissingKey,
                &flows.node.loc,
                Some("flows".into()),
                Some(&flows.node.v),
                "empty: add at least one [[flows]] group with a cc (e.g. cc = \"cubic\")",
            ));
        }
        for (i, g) in groups.iter().enumerate() {
            let RawV::Table(t) = &g.v else {
                return Err(ctx.err(
                    ErrorKind::WrongType,
                    &g.loc,
                    Some(format!("flows.{i}")),
                    Some(&g.v),
                    format!(
                        "expected a table ([[flows]] group), found {}",
                        g.v.type_name()
                    ),
                ));
            };
            check_table(&ctx, Section::Flow(i), t, &g.loc)?;
        }
        // [reference]
        if let Some(r) = self.root.get("reference") {
            if !matches!(r.node.v, RawV::Table(_)) {
                return Err(ctx.err(
                    ErrorKind::WrongType,
                    &r.node.loc,
                    Some("reference".into()),
                    Some(&r.node.v),
                    format!(
                        "expected a table ([reference]), found {}",
                        r.node.v.type_name()
                    ),
                ));
            }
        }
        // A bulk flow runs for the whole run, so the run needs a length.
        if self.root.get("duration").is_none() {
            for (i, g) in groups.iter().enumerate() {
                if let RawV::Table(t) = &g.v {
                    if t.get("size").is_none() {
                        return Err(ctx.err(ErrorKind::Inconsistent, &g.loc, Some(format!("flows.{i}")), None, "this flow group has no size, so it is bulk and the scenario needs a duration (add e.g. duration = \"10s\" at the top, or give the flows a size)"));
                    }
                }
            }
        }
        Ok(())
    }

    /// The params keys of the matrix, in expansion order (the last varies fastest).
    pub fn sweep_keys(&self) -> Vec<String> {
        let single = self.flow_groups() == 1;
        self.axes()
            .iter()
            .map(|a| param_name(a.section, a.key, single))
            .collect()
    }

    /// Number of matrix points (the product of the list lengths; 1 if nothing is swept).
    /// Saturates at `usize::MAX`.
    pub fn matrix_len(&self) -> usize {
        self.axes()
            .iter()
            .fold(1usize, |acc, a| acc.saturating_mul(a.len))
    }

    fn axes(&self) -> Vec<Axis> {
        let cat = &self.catalog;
        let mut axes = Vec::new();
        let visit = |axes: &mut Vec<Axis>, section: Section, t: &Table| {
            for e in &t.entries {
                if let Some((k, kind)) = section_keys(section, cat)
                    .into_iter()
                    .find(|(k, _)| *k == e.key)
                {
                    if let (true, RawV::Array(a)) = (sweeps(kind, &e.node.v), &e.node.v) {
                        axes.push(Axis {
                            section,
                            key: k,
                            kind,
                            len: a.len(),
                        });
                    }
                }
            }
        };
        for e in &self.root.entries {
            match e.key.as_str() {
                "link" => {
                    if let RawV::Table(t) = &e.node.v {
                        visit(&mut axes, Section::Link, t);
                        for sub in Sub::ALL {
                            if let Some(st) = self.section(Section::LinkSub(sub)) {
                                visit(&mut axes, Section::LinkSub(sub), st);
                            }
                        }
                    }
                }
                "hosts" => {
                    if let RawV::Table(t) = &e.node.v {
                        visit(&mut axes, Section::Hosts, t)
                    }
                }
                "flows" => {
                    if let RawV::Array(a) = &e.node.v {
                        for (i, g) in a.iter().enumerate() {
                            if let RawV::Table(t) = &g.v {
                                visit(&mut axes, Section::Flow(i), t);
                                if let Some(pt) = self.section(Section::CcParams(i)) {
                                    visit(&mut axes, Section::CcParams(i), pt);
                                }
                            }
                        }
                    }
                }
                _ => {
                    if let Some((k, kind)) = TOP_SCALARS.iter().find(|(k, _)| *k == e.key) {
                        if let RawV::Array(a) = &e.node.v {
                            axes.push(Axis {
                                section: Section::Top,
                                key: k,
                                kind: *kind,
                                len: a.len(),
                            });
                        }
                    }
                }
            }
        }
        axes
    }

    /// Expands the file into its matrix: the cartesian product of every list-valued key, in
    /// file order of the keys with the last key varying fastest. Each point is validated.
    pub fn expand(&self) -> Result<Vec<MatrixPoint>, ScenarioError> {
        let ctx = self.ctx();
        let axes = self.axes();
        let total = self.matrix_len();
        if total > MAX_MATRIX_POINTS {
            let (k, loc) = axes
                .last()
                .and_then(|a| {
                    self.section(a.section)
                        .and_then(|t| t.get(a.key))
                        .map(|e| (qualified(a.section, a.key), e.key_loc.clone()))
                })
                .unwrap_or(("matrix".into(), FILE_START));
            return Err(ctx.err(ErrorKind::Inconsistent, &loc, Some(k), None, format!("the lists expand to {total} matrix points; at most {MAX_MATRIX_POINTS} are allowed")));
        }
        let single = self.flow_groups() == 1;
        let reference = self
            .root
            .get("reference")
            .map(|e| std::sync::Arc::new(raw::to_json(&e.node.v)));
        let mut points = Vec::with_capacity(total);
        let traces = TraceCache::default();
        let mut choice = vec![0usize; axes.len()];
        for index in 0..total {
            // Mixed-radix digits of `index`, last axis fastest.
            let mut rem = index;
            for (i, a) in axes.iter().enumerate().rev() {
                choice[i] = rem % a.len;
                rem /= a.len;
            }
            let pick = |section: Section, key: &str| -> Option<&Node> {
                let node = &self.section(section)?.get(key)?.node;
                match &node.v {
                    RawV::Array(a) => {
                        match axes
                            .iter()
                            .position(|x| x.section == section && x.key == key)
                        {
                            Some(ai) => a.get(choice[ai]),
                            // One value that is a list (a rate schedule).
                            None => Some(node),
                        }
                    }
                    _ => Some(node),
                }
            };
            // A `cc_params` key sweeps only the runs of controllers that have it: for the
            // others only its first value is a run of its own, and it is not in their params.
            let applies = |a: &Axis| match a.section {
                Section::CcParams(g) => self
                    .point_controller(g, &pick)
                    .is_none_or(|c| c.param(a.key).is_some()),
                // An AQM parameter sweeps only the runs of disciplines that take it.
                Section::LinkSub(Sub::Aqm) if a.key != "kind" => {
                    match pick(Section::LinkSub(Sub::Aqm), "kind").map(|n| &n.v) {
                        Some(RawV::Str(k)) => aqm_params(k).contains(&a.key),
                        _ => true,
                    }
                }
                _ => true,
            };
            if axes
                .iter()
                .zip(&choice)
                .any(|(a, &c)| c != 0 && !applies(a))
            {
                continue;
            }
            let mut params = Map::new();
            for (i, a) in axes.iter().enumerate() {
                if !applies(a) {
                    continue;
                }
                if let Some(n) = pick(a.section, a.key) {
                    let v = parse_val(a.kind, &n.v, &self.catalog).map_err(|(k, m)| {
                        ctx.err(
                            k,
                            &n.loc,
                            Some(format!("{}[{}]", qualified(a.section, a.key), choice[i])),
                            Some(&n.v),
                            m,
                        )
                    })?;
                    params.insert(param_name(a.section, a.key, single), v.to_json());
                }
            }
            let scenario = self
                .build(&ctx, &pick, reference.clone(), &traces)
                .map_err(|mut e| {
                    if !params.is_empty() && e.kind == ErrorKind::Inconsistent {
                        let label = label_of(&params);
                        e.message = format!(
                            "{} (in matrix point {} of {total}: {label})",
                            e.message,
                            index + 1
                        );
                    }
                    e
                })?;
            points.push(MatrixPoint {
                index: points.len(),
                params,
                scenario,
            });
        }
        Ok(points)
    }

    /// The registry controller flow group `g` runs at the matrix point `pick` describes, if
    /// the simulator has it.
    fn point_controller<'a>(
        &'a self,
        g: usize,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
    ) -> Option<&'static cclab_core::cc::Controller> {
        match &pick(Section::Flow(g), "cc")?.v {
            RawV::Str(s) => self.catalog.find(s)?.controller,
            _ => None,
        }
    }

    /// Builds one concrete scenario from scalar picks.
    fn build<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
        reference: Option<std::sync::Arc<Value>>,
        traces: &TraceCache,
    ) -> Result<Scenario, ScenarioError> {
        let get = |section: Section, key: &str| -> Result<Option<(Val, &Node)>, ScenarioError> {
            let Some(n) = pick(section, key) else {
                return Ok(None);
            };
            let kind = key_kind(section, key, &self.catalog).unwrap_or(Kind::Description);
            let v = parse_val(kind, &n.v, &self.catalog).map_err(|(k, m)| {
                ctx.err(k, &n.loc, Some(qualified(section, key)), Some(&n.v), m)
            })?;
            Ok(Some((v, n)))
        };
        let s = |v: Option<(Val, &Node)>| match v {
            Some((Val::Str(s), _)) => Some(s),
            _ => None,
        };
        let n = |v: Option<(Val, &Node)>| match v {
            Some((Val::Int(x) | Val::Ns(x) | Val::Bps(x) | Val::Bytes(x), _)) => Some(x),
            _ => None,
        };
        let p = |v: Option<(Val, &Node)>| match v {
            Some((Val::Prob(x), _)) => Some(x),
            _ => None,
        };
        let b = |v: Option<(Val, &Node)>| match v {
            Some((Val::Bool(x), _)) => Some(x),
            _ => None,
        };
        let missing = |section: Section, key: &str| {
            let loc = match section {
                Section::Top => FILE_START,
                _ => self.section_loc(section),
            };
            ctx.err(
                ErrorKind::MissingKey,
                &loc,
                Some(qualified(section, key)),
                None,
                "missing required key",
            )
        };
        let name = s(get(Section::Top, "name")?).ok_or_else(|| missing(Section::Top, "name"))?;
        let description = s(get(Section::Top, "description")?);
        let duration_ns = n(get(Section::Top, "duration")?);
        let seed = n(get(Section::Top, "seed")?).unwrap_or(DEFAULT_SEED);
        let sl = Section::Link;
        let buffer_node = get(sl, "buffer")?;
        let buffer_loc = buffer_node.as_ref().map(|(_, n)| (*n).clone());
        let buffer = match buffer_node {
            Some((Val::Buf(b), _)) => b,
            _ => Buffer::Bdp(1.0),
        };
        // The rate: fixed, a schedule, or a trace (which a --set trace puts in place of the
        // file's rate).
        let trace = self.trace(ctx, pick, traces)?;
        let rate_val = if trace.is_some() {
            None
        } else {
            get(sl, "rate")?
        };
        let (rate_bps, rate_varies) = match (&trace, rate_val) {
            (Some(t), _) => (
                (cclab_path::RateDesc::Trace(t.clone()).mean_bps().round() as u64).max(1),
                Some(cclab_path::RateDesc::Trace(t.clone())),
            ),
            (None, Some((Val::Schedule(steps), node))) => {
                let desc = cclab_path::RateDesc::schedule(
                    steps.iter().map(|&(at, r)| (at, r as f64)).collect(),
                )
                .map_err(|m| {
                    ctx.err(
                        ErrorKind::BadValue,
                        &node.loc,
                        Some("link.rate".into()),
                        Some(&node.v),
                        m,
                    )
                })?;
                (desc.mean_bps().round() as u64, Some(desc))
            }
            (None, Some((Val::Bps(r), _))) => (r, None),
            (None, _) => return Err(missing(sl, "rate")),
        };
        let mss = n(get(sl, "mss")?).map(|x| x as u32).unwrap_or(DEFAULT_MSS);
        let packet_bytes = mss as u64 + HEADER_BYTES;
        let bucket = |sub: Sub| -> Result<Option<cclab_path::TokenBucket>, ScenarioError> {
            let ss = Section::LinkSub(sub);
            let (rate, burst) = match pick(sl, sub.key()).map(|n| &n.v) {
                None => return Ok(None),
                Some(RawV::Table(_)) => {
                    let rate = get(ss, "rate")?;
                    if let Some((Val::Schedule(_), node)) = &rate {
                        return Err(ctx.err(
                            ErrorKind::BadValue,
                            &node.loc,
                            Some(qualified(ss, "rate")),
                            Some(&node.v),
                            format!(
                                "a {} has one rate, not a schedule (e.g. rate = \"10mbit\"; a schedule is for link.rate)",
                                sub.key()
                            ),
                        ));
                    }
                    (n(rate), n(get(ss, "burst")?))
                }
                Some(_) => (n(get(sl, sub.key())?), None),
            };
            let Some(rate) = rate else {
                return Err(missing(ss, "rate"));
            };
            // By default a bucket holds 10 ms at its rate, and at least 64 KiB.
            let burst = burst.unwrap_or_else(|| (rate / 800).max(64 * 1024));
            if burst < packet_bytes {
                return Err(ctx.err(
                    ErrorKind::Inconsistent,
                    &self.section_loc(ss),
                    Some(qualified(ss, "burst")),
                    None,
                    format!(
                        "a burst of {burst} bytes cannot pass one packet of {packet_bytes} bytes; use at least \"{}\"",
                        units::fmt_size(packet_bytes)
                    ),
                ));
            }
            Ok(Some(cclab_path::TokenBucket {
                rate_bps: rate as f64,
                burst_bytes: burst,
            }))
        };
        let link = LinkSpec {
            rate_bps,
            rate_varies,
            aqm: self.aqm(ctx, pick)?,
            policer: bucket(Sub::Policer)?,
            shaper: bucket(Sub::Shaper)?,
            loss_unit: match s(get(sl, "loss_unit")?).as_deref() {
                Some("gso") => cclab_path::LossUnit::Gso,
                _ => cclab_path::LossUnit::Segment,
            },
            jitter_ns: n(get(sl, "jitter")?).unwrap_or(0),
            reorder: b(get(sl, "reorder")?).unwrap_or(false),
            ack_aggregation_ns: n(get(sl, "ack_aggregation")?).unwrap_or(0),
            rtt_ns: n(get(sl, "rtt")?).ok_or_else(|| missing(sl, "rtt"))?,
            buffer,
            loss: p(get(sl, "loss")?).unwrap_or(0.0),
            loss_burst: p(get(sl, "loss_burst")?).unwrap_or(1.0),
            ack_loss: p(get(sl, "ack_loss")?).unwrap_or(0.0),
            mss,
            ecn_threshold_ns: n(get(sl, "ecn_threshold")?),
        };
        let sh = Section::Hosts;
        let wake_ns = n(get(sh, "wake")?).unwrap_or(DEFAULT_WAKE_NS);
        // A profile is where the TCP settings start; the keys given override it.
        let profile = s(get(sh, "profile")?).unwrap_or_else(|| "linux".into());
        let base = host_profile(&profile);
        let hosts = HostsSpec {
            latency_ns: n(get(sh, "latency")?)
                .or(n(get(sl, "host_latency")?))
                .unwrap_or(0),
            jitter_ns: n(get(sh, "jitter")?)
                .or(n(get(sl, "host_jitter")?))
                .unwrap_or(0),
            wake: (wake_ns > 0)
                .then(|| -> Result<WakeSpec, ScenarioError> {
                    Ok(WakeSpec {
                        idle_ns: n(get(sh, "wake_idle")?).unwrap_or(DEFAULT_WAKE_IDLE_NS),
                        delay_ns: wake_ns,
                        shared_cpu: b(get(sh, "shared_cpu")?).unwrap_or(true),
                    })
                })
                .transpose()?,
            hz: n(get(sh, "hz")?).map(|x| x as u32).unwrap_or(DEFAULT_HZ),
            tcp: {
                let d = &base.tcp;
                let triple = |v: Option<(Val, &Node)>, d: [u64; 3]| match v {
                    Some((Val::Triple(t), _)) => t,
                    _ => d,
                };
                let off = |v: Option<u64>| v.filter(|&x| x > 0);
                HostTcp {
                    tcp_rmem: triple(get(sh, "tcp_rmem")?, d.tcp_rmem),
                    tcp_wmem: triple(get(sh, "tcp_wmem")?, d.tcp_wmem),
                    rcvbuf: off(n(get(sh, "rcvbuf")?)),
                    sndbuf: off(n(get(sh, "sndbuf")?)),
                    init_rwnd: n(get(sh, "init_rwnd")?).map(|x| x as u32),
                    rto_min: n(get(sh, "rto_min")?).unwrap_or(d.rto_min),
                    slow_start_after_idle: b(get(sh, "slow_start_after_idle")?)
                        .unwrap_or(d.slow_start_after_idle),
                    notsent_lowat: off(n(get(sh, "notsent_lowat")?)),
                    probe_start: b(get(sh, "probe_start")?).unwrap_or(d.probe_start),
                }
            },
            init_cwnd: n(get(sh, "init_cwnd")?).map(|x| x as u32),
            pacing: b(get(sh, "pacing")?).unwrap_or(base.pacing),
            profile,
        };
        if let Err(e) = hosts.tcp.validate() {
            return Err(ctx.err(
                ErrorKind::BadValue,
                &self.section_loc(sh),
                Some("hosts".into()),
                None,
                e,
            ));
        }
        if link.loss_burst > 1.0 && cclab_path::gilbert_to_bad(link.loss, link.loss_burst) > 1.0 {
            return Err(ctx.err(
                ErrorKind::Inconsistent,
                &self.section_loc(sl),
                Some("link.loss_burst".into()),
                None,
                format!(
                    "a mean loss of {}% in bursts of {} packets is impossible: the bursts would have to overlap (use loss_burst >= {:.2})",
                    link.loss * 100.0,
                    link.loss_burst,
                    link.loss / (1.0 - link.loss)
                ),
            ));
        }
        if let (Buffer::Bytes(b), Some(node)) = (buffer, &buffer_loc) {
            if b < link.packet_bytes() {
                return Err(ctx.err(ErrorKind::Inconsistent, &node.loc, Some("link.buffer".into()), Some(&node.v), format!("a buffer of {b} bytes cannot hold one packet of {} bytes (mss + {HEADER_BYTES}); use at least \"1pkt\"", link.packet_bytes())));
            }
        }
        let mut flows = Vec::new();
        for i in 0..self.flow_groups() {
            let sf = Section::Flow(i);
            let start = get(sf, "start")?;
            let start_node = start.as_ref().map(|(_, n)| (*n).clone());
            let cc = s(get(sf, "cc")?).ok_or_else(|| missing(sf, "cc"))?;
            let mut cc_params = Vec::new();
            if let (Some(c), Some(pt)) = (
                self.catalog.find(&cc).and_then(|e| e.controller),
                self.section(Section::CcParams(i)),
            ) {
                for pe in &pt.entries {
                    if c.param(&pe.key).is_none() {
                        continue; // another controller's (the group sweeps cc)
                    }
                    if let Some((Val::Param(v), _)) = get(Section::CcParams(i), &pe.key)? {
                        cc_params.push((pe.key.clone(), v));
                    }
                }
            }
            let f = FlowSpec {
                cc,
                cc_params,
                count: n(get(sf, "count")?).map(|x| x as u32).unwrap_or(1),
                start_ns: n(start).unwrap_or(0),
                size_bytes: n(get(sf, "size")?),
                rtt_extra_ns: n(get(sf, "rtt_extra")?).unwrap_or(0),
                init_cwnd: n(get(sf, "init_cwnd")?)
                    .map(|x| x as u32)
                    .or(hosts.init_cwnd)
                    .unwrap_or(DEFAULT_INIT_CWND),
                ecn: b(get(sf, "ecn")?).unwrap_or(false),
            };
            if f.size_bytes.is_none() && duration_ns.is_none() {
                return Err(ctx.err(
                    ErrorKind::Inconsistent,
                    &self.section_loc(sf),
                    Some(format!("flows.{i}")),
                    None,
                    "this flow group has no size, so it is bulk and the scenario needs a duration",
                ));
            }
            let limit = duration_ns.unwrap_or(SIZED_RUN_CAP_NS);
            if f.start_ns >= limit {
                let (loc, v) = match &start_node {
                    Some(n) => (n.loc.clone(), Some(&n.v)),
                    None => (self.section_loc(sf), None),
                };
                let why = if duration_ns.is_some() {
                    "the duration"
                } else {
                    "the 300s cap of a run without duration"
                };
                return Err(ctx.err(ErrorKind::Inconsistent, &loc, Some(format!("flows.{i}.start")), v, format!("the flows start at {} but the run ends at {} ({why}); start must be earlier", units::fmt_time(f.start_ns), units::fmt_time(limit))));
            }
            flows.push(f);
        }
        Ok(Scenario {
            name,
            description,
            duration_ns,
            seed,
            link,
            hosts,
            flows,
            reference,
        })
    }

    /// The bottleneck's queue discipline at the matrix point `pick` describes, its
    /// parameters Linux's defaults unless the `[link.aqm]` table sets them.
    fn aqm<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
    ) -> Result<cclab_path::AqmDesc, ScenarioError> {
        use cclab_path::{AqmDesc, CodelParams, FqCodelParams, PieParams};
        let sa = Section::LinkSub(Sub::Aqm);
        let val = |section: Section, key: &str| -> Result<Option<Val>, ScenarioError> {
            let Some(n) = pick(section, key) else {
                return Ok(None);
            };
            let kind = key_kind(section, key, &self.catalog).unwrap_or(Kind::Description);
            parse_val(kind, &n.v, &self.catalog)
                .map(Some)
                .map_err(|(k, m)| ctx.err(k, &n.loc, Some(qualified(section, key)), Some(&n.v), m))
        };
        let name = match pick(Section::Link, "aqm").map(|n| &n.v) {
            None => return Ok(AqmDesc::DropTail),
            Some(RawV::Table(_)) => val(sa, "kind")?,
            Some(_) => val(Section::Link, "aqm")?,
        };
        let name = match name {
            Some(Val::Str(s)) => s,
            _ => "droptail".into(),
        };
        // (A parameter the discipline does not take was refused by `check_aqm_params`.)
        let t = |k: &str, d: u64| -> Result<u64, ScenarioError> {
            Ok(match val(sa, k)? {
                Some(Val::Ns(x) | Val::Int(x)) => x,
                _ => d,
            })
        };
        let flag = |k: &str, d: bool| -> Result<bool, ScenarioError> {
            Ok(match val(sa, k)? {
                Some(Val::Bool(x)) => x,
                _ => d,
            })
        };
        Ok(match name.as_str() {
            "codel" => {
                let d = CodelParams::default();
                AqmDesc::Codel(CodelParams {
                    target_ns: t("target", d.target_ns)?,
                    interval_ns: t("interval", d.interval_ns)?,
                    ecn: flag("ecn", d.ecn)?,
                })
            }
            "fq_codel" => {
                let d = FqCodelParams::default();
                AqmDesc::FqCodel(FqCodelParams {
                    target_ns: t("target", d.target_ns)?,
                    interval_ns: t("interval", d.interval_ns)?,
                    ecn: flag("ecn", d.ecn)?,
                    flows: t("flows", d.flows as u64)? as u32,
                    quantum: t("quantum", d.quantum as u64)? as u32,
                    drop_batch: t("drop_batch", d.drop_batch as u64)? as u32,
                })
            }
            "pie" => {
                let d = PieParams::default();
                AqmDesc::Pie(PieParams {
                    target_ns: t("target", d.target_ns)?,
                    tupdate_ns: t("tupdate", d.tupdate_ns)?,
                    alpha: t("alpha", d.alpha as u64)? as u32,
                    beta: t("beta", d.beta as u64)? as u32,
                    max_burst_ns: t("max_burst", d.max_burst_ns)?,
                    ecn: flag("ecn", d.ecn)?,
                    bytemode: flag("bytemode", d.bytemode)?,
                    dq_rate_estimator: flag("dq_rate_estimator", d.dq_rate_estimator)?,
                })
            }
            _ => AqmDesc::DropTail,
        })
    }

    /// The trace `link.trace` names at the matrix point `pick` describes, read and checked. A
    /// path in the file is relative to the file's folder; one given with `--set`, to the
    /// current directory. A trace given in the file beside a rate is an error (a `--set`
    /// trace replaces the file's rate, and a `--set` rate the file's trace).
    fn trace<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
        traces: &TraceCache,
    ) -> Result<Option<std::sync::Arc<cclab_path::TraceDesc>>, ScenarioError> {
        let Some(node) = pick(Section::Link, "trace") else {
            return Ok(None);
        };
        let RawV::Str(p) = &node.v else {
            return Ok(None);
        };
        let key = Some("link.trace".to_string());
        if let (Loc::File { .. }, Some(rate)) = (&node.loc, pick(Section::Link, "rate")) {
            if matches!(rate.loc, Loc::File { .. }) {
                return Err(ctx.err(
                    ErrorKind::Inconsistent,
                    &node.loc,
                    key,
                    Some(&node.v),
                    "link.trace and link.rate both give the bottleneck's rate: keep one (the trace's mean rate sizes buffers given in bdp)",
                ));
            }
        }
        let path = match (&node.loc, &self.dir) {
            (Loc::File { .. }, Some(d)) if !std::path::Path::new(p).is_absolute() => d.join(p),
            _ => std::path::PathBuf::from(p),
        };
        if let Some((_, t)) = traces.borrow().iter().find(|(q, _)| *q == path) {
            return Ok(Some(t.clone()));
        }
        let relative_to = match (&node.loc, &self.dir) {
            (Loc::File { .. }, Some(_)) => "a path in a scenario file is relative to its folder",
            (Loc::File { .. }, None) => "this scenario was not read from a file, so the path is relative to the current directory",
            (Loc::Set(_), _) => "a path given with --set is relative to the current directory",
        };
        let bad = |m: String| {
            ctx.err(
                ErrorKind::BadValue,
                &node.loc,
                key.clone(),
                Some(&node.v),
                m,
            )
        };
        let cannot = |e: std::io::Error| {
            bad(format!(
                "cannot read trace file {}: {e} ({relative_to}; traces ship under scenarios/traces/)",
                path.display()
            ))
        };
        // A regular file of sane size (not a device or a pipe that never ends).
        let meta = std::fs::metadata(&path).map_err(cannot)?;
        if !meta.is_file() || meta.len() > MAX_TRACE_BYTES {
            return Err(bad(format!(
                "{} is not a trace file: a trace is a regular file of at most {} MB",
                path.display(),
                MAX_TRACE_BYTES >> 20
            )));
        }
        let text = std::fs::read_to_string(&path).map_err(cannot)?;
        // Named by its absolute path, so a scenario written out next to results (and its
        // results' resolved values) still finds it from anywhere.
        let name = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        let t = cclab_path::TraceDesc::parse(&name.display().to_string(), &text)
            .map_err(|m| ctx.err(ErrorKind::BadValue, &node.loc, key, Some(&node.v), m))?;
        let t = std::sync::Arc::new(t);
        traces.borrow_mut().push((path, t.clone()));
        Ok(Some(t))
    }

    fn section_loc(&self, s: Section) -> Loc {
        match s {
            Section::Top => FILE_START,
            Section::Link => self
                .root
                .get("link")
                .map(|e| e.node.loc.clone())
                .unwrap_or(FILE_START),
            Section::LinkSub(sub) => self
                .link()
                .and_then(|t| t.get(sub.key()))
                .map(|e| e.node.loc.clone())
                .unwrap_or_else(|| self.section_loc(Section::Link)),
            Section::Hosts => self
                .root
                .get("hosts")
                .map(|e| e.node.loc.clone())
                .unwrap_or(FILE_START),
            Section::Flow(i) | Section::CcParams(i) => {
                match self.root.get("flows").map(|e| &e.node.v) {
                    Some(RawV::Array(a)) => a.get(i).map(|n| n.loc.clone()).unwrap_or(FILE_START),
                    _ => FILE_START,
                }
            }
        }
    }

    /// The table of `section` to edit, created empty (at the end of its parent) when the
    /// file lacks it; `None` if the file's structure has no place for it.
    fn table_mut(&mut self, section: Section, loc: &Loc) -> Option<&mut Table> {
        fn sub<'t>(t: &'t mut Table, key: &str, loc: &Loc) -> Option<&'t mut Table> {
            if t.get(key).is_none() {
                t.set(
                    key,
                    Node {
                        v: RawV::Table(Table::default()),
                        loc: loc.clone(),
                    },
                );
            }
            match &mut t.get_mut(key)?.node.v {
                RawV::Table(t) => Some(t),
                _ => None,
            }
        }
        match section {
            Section::Top => Some(&mut self.root),
            Section::Link => sub(&mut self.root, "link", loc),
            Section::LinkSub(s) => {
                let link = sub(&mut self.root, "link", loc)?;
                // A bare value (`aqm = "codel"`, `policer = "10mbit"`) becomes the table's
                // main key, so one of its parameters can be set beside it.
                if let Some(e) = link.get_mut(s.key()) {
                    if !matches!(e.node.v, RawV::Table(_)) {
                        let bare = e.node.clone();
                        let mut t = Table::default();
                        t.set(s.main_key(), bare);
                        e.node = Node {
                            v: RawV::Table(t),
                            loc: e.node.loc.clone(),
                        };
                    }
                }
                sub(link, s.key(), loc)
            }
            Section::Hosts => sub(&mut self.root, "hosts", loc),
            Section::Flow(i) | Section::CcParams(i) => {
                let RawV::Array(a) = &mut self.root.get_mut("flows")?.node.v else {
                    return None;
                };
                let RawV::Table(g) = &mut a.get_mut(i)?.v else {
                    return None;
                };
                if section == Section::Flow(i) {
                    Some(g)
                } else {
                    sub(g, CC_PARAMS, loc)
                }
            }
        }
    }

    /// Applies a `--set key=value` override. `value` is read as a TOML value (`2`, `0.01`,
    /// `"1%"`, `[0, "1%"]`); if it is not valid TOML it is taken as a bare string (`bbr`,
    /// `1%`, `100mbit`). Keys: `name`, `duration`, `seed`, `description`, `link.<key>`,
    /// `hosts.<key>`, `flows.<key>` (every flow group), `flows.<i>.<key>` (group i, 0-based),
    /// `flows.cc_params.<name>` (every group whose controller has the parameter) and
    /// `flows.<i>.cc_params.<name>`. A key the file lacks is added at the end of its table.
    /// `link.rate` and `link.trace` replace each other. On error the file is left unchanged.
    pub fn apply_override(&mut self, spec: &str) -> Result<(), ScenarioError> {
        let loc = Loc::Set(Rc::from(spec));
        let origin = self.origin.clone();
        let catalog = self.catalog.clone();
        let ctx = Ctx {
            origin: &origin,
            cat: &catalog,
        };
        let bad = |key: Option<String>, msg: String| {
            ctx.err(ErrorKind::BadOverride, &loc, key, None, msg)
        };
        let Some((key, value)) = spec.split_once('=') else {
            return Err(bad(
                None,
                "expected key=value (e.g. link.loss=1% or 'flows.cc=[\"cubic\",\"bbr\"]')".into(),
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        if value.is_empty() {
            return Err(bad(
                Some(key.into()),
                "empty value (e.g. link.loss=1%)".into(),
            ));
        }
        let parsed = parse_override_value(value, &loc).map_err(|m| bad(Some(key.into()), m))?;
        let parts: Vec<&str> = key.split('.').collect();
        let known = |section: Section, k: &str| key_kind(section, k, &catalog).is_some();
        let unknown = |prefix: &str, k: &str| {
            ctx.err(ErrorKind::UnknownKey, &loc, Some(key.to_string()), None, format!("{}; override keys: name, duration, seed, description, link.<key>, link.aqm.<key>, link.policer.<key>, link.shaper.<key>, hosts.<key>, flows.<key>, flows.<i>.<key>, flows.cc_params.<name>", suggestion(k, prefix)))
        };
        let unknown_param = |k: &str| {
            let all: Vec<&str> = catalog.all_params().iter().map(|p| p.name).collect();
            ctx.err(
                ErrorKind::UnknownKey,
                &loc,
                Some(key.to_string()),
                None,
                if all.is_empty() {
                    format!("no controller of {} takes parameters", catalog.owner)
                } else {
                    format!(
                        "\"{k}\" is no controller's parameter (parameters: {})",
                        all.join(", ")
                    )
                },
            )
        };
        let groups = self.flow_groups();
        let no_group = |i: usize| {
            bad(Some(key.into()), format!("there is no flow group {i}: the file has {groups} [[flows]] group(s), numbered from 0"))
        };
        let group = |i: &str| i.parse::<usize>().ok();
        // The tables to set the key in.
        let (targets, k): (Vec<Section>, &str) = match parts.as_slice() {
            [k] if known(Section::Top, k) => (vec![Section::Top], k),
            ["link", k] if known(Section::Link, k) => (vec![Section::Link], k),
            ["link", sub, k] if Sub::of(sub).is_some() => {
                let sub = Sub::of(sub).unwrap_or(Sub::Aqm);
                if !known(Section::LinkSub(sub), k) {
                    let prefix = if sub == Sub::Aqm {
                        "link.aqm."
                    } else {
                        "link.bucket."
                    };
                    return Err(unknown(prefix, k));
                }
                (vec![Section::LinkSub(sub)], k)
            }
            ["hosts", k] if known(Section::Hosts, k) => (vec![Section::Hosts], k),
            ["flows", k] if known(Section::Flow(0), k) => {
                ((0..groups).map(Section::Flow).collect(), k)
            }
            ["flows", CC_PARAMS, k] if known(Section::CcParams(0), k) => {
                // Every group one of whose controllers has the parameter.
                let with: Vec<Section> = (0..groups)
                    .filter(|&g| {
                        self.flow(g).is_some_and(|t| {
                            group_ccs(&catalog, t)
                                .iter()
                                .any(|c| c.controller.is_some_and(|c| c.param(k).is_some()))
                        })
                    })
                    .map(Section::CcParams)
                    .collect();
                if with.is_empty() {
                    return Err(bad(
                        Some(key.into()),
                        format!("no flow group runs a controller with the parameter {k}"),
                    ));
                }
                (with, k)
            }
            ["flows", CC_PARAMS, k] => return Err(unknown_param(k)),
            ["flows", i, k] if group(i).is_some() => {
                let i = group(i).unwrap_or(usize::MAX);
                if !known(Section::Flow(i), k) {
                    return Err(unknown("flows.", k));
                }
                if i >= groups {
                    return Err(no_group(i));
                }
                (vec![Section::Flow(i)], k)
            }
            ["flows", i, CC_PARAMS, k] if group(i).is_some() => {
                let i = group(i).unwrap_or(usize::MAX);
                if !known(Section::CcParams(i), k) {
                    return Err(unknown_param(k));
                }
                if i >= groups {
                    return Err(no_group(i));
                }
                (vec![Section::CcParams(i)], k)
            }
            ["link", k] => return Err(unknown("link.", k)),
            ["hosts", k] => return Err(unknown("hosts.", k)),
            ["flows", k] => return Err(unknown("flows.", k)),
            _ => return Err(unknown("", parts.last().copied().unwrap_or(key))),
        };
        let before = self.root.clone();
        // The rate and the trace each give the bottleneck's rate: setting one replaces the other.
        let replaces = match (targets.as_slice(), k) {
            ([Section::Link], "rate") => Some("trace"),
            ([Section::Link], "trace") => Some("rate"),
            _ => None,
        };
        if let Some(other) = replaces {
            if let Some(RawV::Table(t)) = self.root.get_mut("link").map(|e| &mut e.node.v) {
                t.entries.retain(|e| e.key != other);
            }
        }
        for section in targets {
            match self.table_mut(section, &loc) {
                Some(t) => t.set(k, parsed.clone()),
                None => {
                    self.root = before;
                    return Err(bad(
                        Some(key.into()),
                        "the file has no table to hold it".into(),
                    ));
                }
            }
        }
        if let Err(e) = self.check() {
            self.root = before;
            return Err(e);
        }
        Ok(())
    }
}

/// A TOML syntax error, with the key guessed from the offending line when it has `key = ...`.
fn syntax_error(
    ctx: &Ctx<'_>,
    text: &str,
    index: &LineIndex<'_>,
    e: &toml::de::Error,
) -> ScenarioError {
    let offset = e.span().map(|s| s.start).unwrap_or(0);
    let loc = index.loc(offset);
    let mut key = None;
    let mut msg = format!("invalid TOML: {}", e.message());
    if let Loc::File { line, .. } = loc {
        let line_text = text.lines().nth(line as usize - 1).unwrap_or("");
        if let Some((lhs, rhs)) = line_text.split_once('=') {
            let lhs = lhs.trim();
            let keyish = !lhs.is_empty()
                && lhs.len() <= 64
                && lhs
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.\"' ".contains(c));
            if keyish {
                key = Some(lhs.to_string());
                let rhs = rhs.split('#').next().unwrap_or("").trim();
                if e.message().contains("must be quoted")
                    && !rhs.is_empty()
                    && !rhs.contains(['"', '[', '{'])
                {
                    msg.push_str(&format!(" (write {lhs} = \"{rhs}\")"));
                }
            }
        }
    }
    ctx.err(ErrorKind::Syntax, &loc, key, None, msg)
}

/// Reads the value of a `--set`: TOML if it parses; otherwise a bare string, or a list of bare
/// words and TOML values (`[cubic, bbr]`, `[0, 1%]`).
fn parse_override_value(value: &str, loc: &Loc) -> Result<Node, String> {
    let one = |text: &str| -> Result<Node, String> {
        match DeValue::parse(text) {
            Ok(v) => raw::convert(&v, &|_| loc.clone()).map_err(|(_, m)| m),
            Err(e) if text.starts_with(['[', '{', '"', '\'']) => Err(format!(
                "value is not valid TOML: {} (e.g. [0, \"1%\"] or [cubic, bbr])",
                e.message()
            )),
            Err(_) => Ok(Node {
                v: RawV::Str(text.to_string()),
                loc: loc.clone(),
            }),
        }
    };
    if DeValue::parse(value).is_err() {
        if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            if !inner.contains(['[', ']', '{', '}']) {
                let inner = inner.trim().trim_end_matches(',');
                let mut items = Vec::new();
                if !inner.trim().is_empty() {
                    for part in inner.split(',') {
                        let part = part.trim();
                        if part.is_empty() {
                            return Err("empty element in list".into());
                        }
                        items.push(one(part)?);
                    }
                }
                return Ok(Node {
                    v: RawV::Array(items),
                    loc: loc.clone(),
                });
            }
        }
    }
    one(value)
}

fn param_name(section: Section, key: &str, single_group: bool) -> String {
    match section {
        Section::Flow(_) if single_group => format!("flows.{key}"),
        Section::CcParams(_) if single_group => format!("flows.{CC_PARAMS}.{key}"),
        s => qualified(s, key),
    }
}

fn label_of(params: &Map<String, Value>) -> String {
    params
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Checks the keys of `[link]`, `[hosts]` or one `[[flows]]` group and their values.
fn check_table(
    ctx: &Ctx<'_>,
    section: Section,
    t: &Table,
    table_loc: &Loc,
) -> Result<(), ScenarioError> {
    let prefix = match section {
        Section::Link => "link.",
        Section::Hosts => "hosts.",
        Section::LinkSub(Sub::Aqm) => "link.aqm.",
        Section::LinkSub(_) => "link.bucket.",
        _ => "flows.",
    };
    for e in &t.entries {
        if let (Section::Flow(i), CC_PARAMS) = (section, e.key.as_str()) {
            check_cc_params(ctx, i, t, e)?;
            continue;
        }
        if let (Section::Link, Some(sub), RawV::Table(st)) = (section, Sub::of(&e.key), &e.node.v) {
            check_table(ctx, Section::LinkSub(sub), st, &e.node.loc)?;
            continue;
        }
        match key_kind(section, &e.key, ctx.cat) {
            Some(kind) => check_value(ctx, section, &e.key, kind, &e.node)?,
            None => {
                return Err(ctx.err(
                    ErrorKind::UnknownKey,
                    &e.key_loc,
                    Some(qualified(section, &e.key)),
                    None,
                    suggestion(&e.key, prefix),
                ));
            }
        }
    }
    let required: &[(&str, &str)] = match section {
        // A trace gives the rate.
        Section::Link if t.get("trace").is_some() => &[("rtt", "rtt = \"20ms\"")],
        Section::Link => &[("rate", "rate = \"100mbit\""), ("rtt", "rtt = \"20ms\"")],
        Section::Flow(_) => &[("cc", "cc = \"cubic\"")],
        Section::LinkSub(Sub::Aqm) => &[("kind", "kind = \"codel\"")],
        Section::LinkSub(_) => &[("rate", "rate = \"10mbit\"")],
        _ => &[],
    };
    for (k, example) in required {
        if t.get(k).is_none() {
            let head = match section {
                Section::Link => "[link]".to_string(),
                Section::LinkSub(sub) => format!("[link.{}]", sub.key()),
                _ => "this [[flows]] group".to_string(),
            };
            return Err(ctx.err(
                ErrorKind::MissingKey,
                table_loc,
                Some(qualified(section, k)),
                None,
                format!("missing required key (add e.g. {example} to {head})"),
            ));
        }
    }
    if section == Section::LinkSub(Sub::Aqm) {
        check_aqm_params(ctx, t)?;
    }
    Ok(())
}

/// Checks that each parameter of a `[link.aqm]` table is one its discipline takes, or, when the
/// table sweeps `kind`, one that at least one of its disciplines takes (each run takes its own).
/// It depends on the file alone, so it is checked once, not at every matrix point.
fn check_aqm_params(ctx: &Ctx<'_>, t: &Table) -> Result<(), ScenarioError> {
    let sa = Section::LinkSub(Sub::Aqm);
    let name = |n: &Node| match parse_val(Kind::AqmName, &n.v, ctx.cat) {
        Ok(Val::Str(s)) => Some(s),
        _ => None,
    };
    let (kinds, swept): (Vec<String>, bool) = match t.get("kind").map(|e| &e.node) {
        Some(Node {
            v: RawV::Array(a), ..
        }) => {
            let mut v: Vec<String> = Vec::new();
            for k in a.iter().filter_map(name) {
                if !v.contains(&k) {
                    v.push(k);
                }
            }
            (v, true)
        }
        Some(n) => (name(n).into_iter().collect(), false),
        None => return Ok(()),
    };
    for e in &t.entries {
        let k = e.key.as_str();
        if k == "kind" || kinds.iter().any(|n| aqm_params(n).contains(&k)) {
            continue;
        }
        let others: Vec<&str> = AQM_NAMES
            .iter()
            .copied()
            .filter(|n| aqm_params(n).contains(&k))
            .collect();
        let who = match others.as_slice() {
            [one] => format!("{one} takes it"),
            [init @ .., last] => format!("{} and {last} take it", init.join(", ")),
            [] => "no discipline takes it".to_string(),
        };
        let msg = match (swept, kinds.first()) {
            (false, Some(name)) => {
                let takes = aqm_params(name);
                format!(
                    "{name} has no parameter {k} ({name} takes: {}; {who})",
                    if takes.is_empty() {
                        "none".to_string()
                    } else {
                        takes.join(", ")
                    },
                )
            }
            _ => format!(
                "none of the swept kinds ({}) has a parameter {k} ({who})",
                kinds.join(", "),
            ),
        };
        return Err(ctx.err(
            ErrorKind::Inconsistent,
            &e.key_loc,
            Some(qualified(sa, k)),
            None,
            msg,
        ));
    }
    Ok(())
}

/// The controllers flow group table `group` may run: its `cc` value, or each of its list.
fn group_ccs<'c>(cat: &'c CcCatalog, group: &Table) -> Vec<&'c CcEntry> {
    let names: Vec<&str> = match group.get("cc").map(|e| &e.node.v) {
        Some(RawV::Str(s)) => vec![s.as_str()],
        Some(RawV::Array(a)) => a
            .iter()
            .filter_map(|n| match &n.v {
                RawV::Str(s) => Some(s.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<&CcEntry> = Vec::new();
    for e in names.into_iter().filter_map(|n| cat.find(n)) {
        if !out.iter().any(|x| x.name == e.name) {
            out.push(e);
        }
    }
    out
}

/// Checks `cc_params` of flow group `i`: a table whose every key is a parameter of at least
/// one of the group's controllers (a group that sweeps `cc` may set the parameters of any of
/// them; each run applies those of its own controller).
fn check_cc_params(ctx: &Ctx<'_>, i: usize, group: &Table, e: &Entry) -> Result<(), ScenarioError> {
    let RawV::Table(pt) = &e.node.v else {
        return Err(ctx.err(
            ErrorKind::WrongType,
            &e.node.loc,
            Some(qualified(Section::Flow(i), CC_PARAMS)),
            Some(&e.node.v),
            format!(
                "expected a table of controller parameters (e.g. cc_params = {{ hystart = false }}), found {}",
                e.node.v.type_name()
            ),
        ));
    };
    let ccs = group_ccs(ctx.cat, group);
    for pe in &pt.entries {
        let spec = ccs
            .iter()
            .find_map(|c| c.controller.and_then(|k| k.param(&pe.key)));
        let Some(spec) = spec else {
            let names = ccs
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let candidates: Vec<&str> = ccs
                .iter()
                .filter_map(|c| c.controller)
                .flat_map(|k| k.params.iter().map(|p| p.name))
                .collect();
            let msg = if candidates.is_empty() {
                let simulated = ccs
                    .iter()
                    .any(|c| cclab_core::cc::find(&c.name).is_some_and(|k| !k.params.is_empty()));
                if simulated {
                    format!(
                        "{names} takes no parameters on {} (controller parameters are the simulator's; a kernel's module parameters belong to the host)",
                        ctx.cat.owner
                    )
                } else {
                    format!("{names} takes no parameters")
                }
            } else {
                let near = candidates
                    .iter()
                    .map(|c| (levenshtein(&pe.key.to_ascii_lowercase(), c), *c))
                    .min()
                    .filter(|(d, _)| *d <= 3)
                    .map(|(_, c)| format!("did you mean {c}? "))
                    .unwrap_or_default();
                format!(
                    "not a parameter of {names} ({near}parameters: {})",
                    candidates.join(", ")
                )
            };
            return Err(ctx.err(
                ErrorKind::UnknownKey,
                &pe.key_loc,
                Some(qualified(Section::CcParams(i), &pe.key)),
                None,
                msg,
            ));
        };
        check_value(
            ctx,
            Section::CcParams(i),
            &pe.key,
            Kind::Param(spec),
            &pe.node,
        )?;
    }
    Ok(())
}

/// Checks one value, or each element of a list.
fn check_value(
    ctx: &Ctx<'_>,
    section: Section,
    key: &str,
    kind: Kind,
    node: &Node,
) -> Result<(), ScenarioError> {
    let q = qualified(section, key);
    match &node.v {
        RawV::Array(a) if sweeps(kind, &node.v) => {
            if !kind.sweepable() {
                return Err(ctx.err(
                    ErrorKind::WrongType,
                    &node.loc,
                    Some(q),
                    Some(&node.v),
                    format!("{key} cannot be a list (only one value is allowed)"),
                ));
            }
            if a.is_empty() {
                return Err(ctx.err(
                    ErrorKind::BadValue,
                    &node.loc,
                    Some(q),
                    Some(&node.v),
                    "empty list: give at least one value (a list sweeps the key over its values)",
                ));
            }
            for (i, el) in a.iter().enumerate() {
                let schedule = kind == Kind::Rate && is_schedule(&el.v);
                if matches!(el.v, RawV::Array(_) | RawV::Table(_)) && !schedule {
                    return Err(ctx.err(
                        ErrorKind::WrongType,
                        &el.loc,
                        Some(format!("{q}[{i}]")),
                        Some(&el.v),
                        "lists cannot be nested and list elements cannot be tables",
                    ));
                }
                parse_val(kind, &el.v, ctx.cat).map_err(|(k, m)| {
                    ctx.err(k, &el.loc, Some(format!("{q}[{i}]")), Some(&el.v), m)
                })?;
            }
            Ok(())
        }
        v => parse_val(kind, v, ctx.cat)
            .map(|_| ())
            .map_err(|(k, m)| ctx.err(k, &node.loc, Some(q), Some(v), m)),
    }
}
