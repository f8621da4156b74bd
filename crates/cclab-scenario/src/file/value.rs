//! Values: reading one raw value of a [`Kind`] into base units ([`Val`]), with the messages
//! for a value that is wrong; rate schedules; which values are lists to sweep.

use cclab_core::cc::{ParamKind, ParamValue};
use serde_json::Value;

use super::schema::{Kind, AQM_ALIASES, AQM_NAMES, LOSS_UNITS};
use crate::error::ErrorKind;
use crate::model::*;
use crate::raw::RawV;
use crate::units::{self, Buffer};

/// A parsed scalar value in base units.
#[derive(Clone, Debug)]
pub(super) enum Val {
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
    pub(super) fn to_json(&self) -> Value {
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

pub(super) fn parse_val(kind: Kind, v: &RawV, cat: &CcCatalog) -> Result<Val, (ErrorKind, String)> {
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
            RawV::Str(s) if s.starts_with(PY_PREFIX) => {
                if !cat.py_objects {
                    Err((
                        BadValue,
                        format!(
                            "\"{s}\" names a Python controller class, which only the Python package runs (cclab.run(...) in Python; the cclab command does not embed Python); {} has: {}",
                            cat.owner,
                            cat.list()
                        ),
                    ))
                } else if py_class(s).is_none() {
                    Err((
                        BadValue,
                        format!("\"{s}\": a Python controller is named \"py:module:Class\" (an importable module and a class in it with on_interval(stats))"),
                    ))
                } else {
                    Ok(Val::Str(s.clone()))
                }
            }
            RawV::Str(s) if s.starts_with(BPF_PREFIX) => {
                if !cat.bpf_objects {
                    Err((
                        BadValue,
                        format!(
                            "\"{s}\" names a BPF congestion-control object, which only the kernel backend loads (--backend kernel); {} has: {}",
                            cat.owner,
                            cat.list()
                        ),
                    ))
                } else if s.len() == BPF_PREFIX.len() {
                    Err((
                        BadValue,
                        "bpf: needs the object's path, like \"bpf:my_cc.bpf.o\" (built with clang -target bpf)".into(),
                    ))
                } else {
                    Ok(Val::Str(s.clone()))
                }
            }
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
                            "unknown congestion control \"{}\"{} ({} has: {}){sim}",
                            s,
                            cc_hint(cat, s),
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
        Kind::Ecn => match v {
            RawV::Bool(b) => Ok(Val::Bool(*b)),
            RawV::Str(s) if s.trim().eq_ignore_ascii_case(crate::model::ACCECN) => {
                Ok(Val::Str(crate::model::ACCECN.into()))
            }
            _ => wrong("true (classic ECN), false, or \"accecn\" (Accurate ECN feedback)"),
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
                let t = match AQM_ALIASES.iter().find(|(a, _)| *a == t) {
                    Some((_, name)) => name.to_string(),
                    None => t,
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
        Kind::RateOrOff => match v {
            RawV::Str(s) if s.trim().eq_ignore_ascii_case("off") => Ok(Val::Bps(0)),
            RawV::Str(_) | RawV::Int(_) | RawV::Float(_) => parse_val(Kind::Rate, v, cat),
            _ => wrong("a rate like \"1gbit\", or \"off\""),
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
        Kind::Workload => match v {
            RawV::Str(s) if crate::model::FLOW_KINDS.contains(&s.trim()) => {
                Ok(Val::Str(s.trim().to_string()))
            }
            RawV::Str(s) => Err((
                BadValue,
                format!("unknown flow kind \"{s}\"; use \"bulk\" (a TCP flow, the default) or \"probe\" (a UDP echo probe)"),
            )),
            _ => wrong("\"bulk\" or \"probe\""),
        },
        Kind::ProbeInterval => {
            let ns = time_val(v, true, "interval")?;
            let (lo, hi) = crate::model::PROBE_INTERVAL_NS;
            if ns < lo || ns > hi {
                return Err((
                    BadValue,
                    format!(
                        "a probe interval of {} is out of range; use 1ms to 10s",
                        units::fmt_time(ns)
                    ),
                ));
            }
            Ok(Val::Ns(ns))
        }
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
        Kind::Size | Kind::ElementSize => {
            let n = match v {
                RawV::Str(s) => units::parse_size(s).map_err(|m| (BadValue, m))?,
                RawV::Int(i) if *i >= 0 => *i as u64,
                RawV::Int(_) => return Err((BadValue, "a size must not be negative".into())),
                _ => return wrong("a size like \"25mb\" or a whole number of bytes"),
            };
            if n == 0 {
                let fix = if kind == Kind::ElementSize {
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
pub(super) fn is_schedule(v: &RawV) -> bool {
    matches!(v, RawV::Array(a) if !a.is_empty() && a.iter().all(|n| matches!(n.v, RawV::Table(_))))
}

/// Whether a key's value is a list to sweep (a schedule is one value).
pub(super) fn sweeps(kind: Kind, v: &RawV) -> bool {
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

/// What an unknown controller name was probably meant to be: `; did you mean "bbr3"?`
/// (by name or alias, the canonical name given), or "" when nothing is close. BBRv2, which
/// Google's v3 superseded and no backend here runs, is pointed to v3.
fn cc_hint(cat: &crate::model::CcCatalog, name: &str) -> String {
    let n = name.trim().to_ascii_lowercase().replace(['-', '_'], "");
    if n == "bbr2" || n == "bbrv2" {
        if let Some(e) = cat.find("bbr3") {
            return format!(
                "; BBRv2 is not here (Google's v3 superseded it): did you mean \"{}\"?",
                e.name
            );
        }
    }
    // Two edits at most (a typo, a swapped pair), and fewer than the name has letters.
    let best = cat
        .entries
        .iter()
        .flat_map(|e| {
            std::iter::once(&e.name)
                .chain(&e.aliases)
                .map(move |a| (a, e))
        })
        .map(|(a, e)| (super::suggest::levenshtein(&n, a), &e.name))
        .min();
    match best {
        Some((d, canon)) if d <= 2 && d < n.chars().count() => {
            format!("; did you mean \"{canon}\"?")
        }
        _ => String::new(),
    }
}
