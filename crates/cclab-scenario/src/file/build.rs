//! Building one concrete [`Scenario`] from the values a matrix point picks: the link (rate,
//! schedule or trace, queue discipline, policer and shaper), the hosts and the flows, with the
//! cross-key rules that depend on the point.

use cclab_core::host::HostTcp;
use serde_json::Value;

use super::schema::*;
use super::value::{parse_val, Val};
use super::{Ctx, ScenarioFile, FILE_START};
use crate::error::{ErrorKind, ScenarioError};
use crate::model::*;
use crate::raw::{Loc, Node, RawV};
use crate::units::{self, Buffer};

/// The largest trace file `link.trace` reads, bytes (a 10 Gbit/s trace of 10 minutes).
const MAX_TRACE_BYTES: u64 = 256 << 20;

/// The traces one `expand` has read, by path: each file is read and parsed once, and every
/// matrix point that runs it shares the one copy.
pub(super) type TraceCache =
    std::cell::RefCell<Vec<(std::path::PathBuf, std::sync::Arc<cclab_path::TraceDesc>)>>;

impl ScenarioFile {
    /// The value of `key` in `section` at the matrix point `pick` describes, read as the key's
    /// kind, with its node; `None` when the point does not set the key.
    fn value_at<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
        section: Section,
        key: &str,
    ) -> Result<Option<(Val, &'a Node)>, ScenarioError> {
        let Some(n) = pick(section, key) else {
            return Ok(None);
        };
        let kind = key_kind(section, key, &self.catalog).unwrap_or(Kind::Description);
        let v = parse_val(kind, &n.v, &self.catalog)
            .map_err(|(k, m)| ctx.err(k, &n.loc, Some(qualified(section, key)), Some(&n.v), m))?;
        Ok(Some((v, n)))
    }

    /// Builds one concrete scenario from scalar picks.
    pub(super) fn build<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
        reference: Option<std::sync::Arc<Value>>,
        traces: &TraceCache,
    ) -> Result<Scenario, ScenarioError> {
        let get = |section: Section, key: &str| self.value_at(ctx, pick, section, key);
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
        let bucket =
            |b: &cclab_path::Bucket| -> Result<Option<cclab_path::TokenBucket>, ScenarioError> {
                let sub = Sub::bucket(b);
                let ss = Section::LinkSub(sub);
                let given = match pick(sl, sub.key()).map(|n| &n.v) {
                    None => return Ok(None),
                    Some(RawV::Table(_)) => {
                        if let Some((Val::Schedule(_), node)) = get(ss, "rate")? {
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
                        self.given(ctx, pick, ss, b.settings)?
                    }
                    // A bare value is the table's main key (the rate).
                    Some(_) => match n(get(sl, sub.key())?) {
                        Some(x) => vec![(sub.main_key(), cclab_path::SettingValue::Int(x))],
                        None => Vec::new(),
                    },
                };
                if let Some(s) = b.settings.iter().find(|s| {
                    s.default == cclab_path::SettingDefault::Required
                        && !given.iter().any(|(k, _)| *k == s.name)
                }) {
                    return Err(missing(ss, s.name));
                }
                let get = |k: &str| given.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
                let bucket = cclab_path::TokenBucket::from_settings(&cclab_path::Given::new(
                    b.settings, &get,
                ));
                let burst = bucket.burst_bytes;
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
                Ok(Some(bucket))
            };
        let path = cclab_path::LinkDesc {
            rate_bps: rate_bps as f64,
            rate_varies,
            aqm: self.aqm(ctx, pick)?,
            policer: bucket(&cclab_path::POLICER)?,
            shaper: bucket(&cclab_path::SHAPER)?,
            loss_unit: match s(get(sl, "loss_unit")?).as_deref() {
                Some("gso") => cclab_path::LossUnit::Gso,
                _ => cclab_path::LossUnit::Segment,
            },
            jitter_ns: n(get(sl, "jitter")?).unwrap_or(0),
            reorder: b(get(sl, "reorder")?).unwrap_or(false),
            ack_aggregation_ns: n(get(sl, "ack_aggregation")?).unwrap_or(0),
            rtt_ns: n(get(sl, "rtt")?).ok_or_else(|| missing(sl, "rtt"))?,
            loss: p(get(sl, "loss")?).unwrap_or(0.0),
            loss_burst: p(get(sl, "loss_burst")?).unwrap_or(1.0),
            ack_loss: p(get(sl, "ack_loss")?).unwrap_or(0.0),
            ecn_threshold_ns: n(get(sl, "ecn_threshold")?),
        };
        let link = LinkSpec { path, buffer, mss };
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
            nic_rate_bps: n(get(sh, "nic_rate")?).filter(|&r| r > 0).map(|r| r as f64),
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
        if let Some(r) = hosts.nic_rate_bps.filter(|&r| r <= link.path.rate_bps) {
            return Err(ctx.err(
                ErrorKind::Inconsistent,
                &self.section_loc(sh),
                Some("hosts.nic_rate".into()),
                None,
                format!(
                    "the sending interface ({}) must be faster than link.rate ({}): cclab models the sending interface's transmit completions, not the interface as the bottleneck (raise nic_rate, or make the link the slower one)",
                    units::fmt_rate(r as u64),
                    units::fmt_rate(link.path.rate_bps as u64)
                ),
            ));
        }
        let (loss, loss_burst) = (link.path.loss, link.path.loss_burst);
        if loss_burst > 1.0 && cclab_path::gilbert_to_bad(loss, loss_burst) > 1.0 {
            return Err(ctx.err(
                ErrorKind::Inconsistent,
                &self.section_loc(sl),
                Some("link.loss_burst".into()),
                None,
                format!(
                    "a mean loss of {}% in bursts of {} packets is impossible: the bursts would have to overlap (use loss_burst >= {:.2})",
                    loss * 100.0,
                    loss_burst,
                    loss / (1.0 - loss)
                ),
            ));
        }
        if let (Buffer::Bytes(b), Some(node)) = (buffer, &buffer_loc) {
            if b < link.packet_bytes() {
                return Err(ctx.err(ErrorKind::Inconsistent, &node.loc, Some("link.buffer".into()), Some(&node.v), format!("a buffer of {b} bytes cannot hold one packet of {} bytes (mss + {HEADER_BYTES}); use at least \"1pkt\"", link.packet_bytes())));
            }
        }
        let mut flows = Vec::new();
        let mut probes = Vec::new();
        for i in 0..self.flow_groups() {
            let sf = Section::Flow(i);
            if self.is_probe(i) {
                probes.push(self.probe(ctx, i, pick, duration_ns)?);
                continue;
            }
            let start = get(sf, "start")?;
            let start_node = start.as_ref().map(|(_, n)| (*n).clone());
            let cc_node = get(sf, "cc")?;
            let cc_loc = cc_node.as_ref().map(|(_, n)| n.loc.clone());
            let mut cc = s(cc_node).ok_or_else(|| missing(sf, "cc"))?;
            // A BPF object's path, like a trace's, is relative to the file's folder.
            if let (Some(p), Some(Loc::File { .. }), Some(d)) =
                (cc.strip_prefix(BPF_PREFIX), &cc_loc, &self.dir)
            {
                if !std::path::Path::new(p).is_absolute() {
                    cc = format!("{BPF_PREFIX}{}", d.join(p).display());
                }
            }
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
            // `ecn`: true (classic), false, or "accecn" (Accurate ECN, which is ECN too).
            let (ecn, accecn) = match get(sf, "ecn")? {
                Some((Val::Str(s), _)) => (true, s == ACCECN),
                Some((Val::Bool(b), _)) => (b, false),
                _ => (false, false),
            };
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
                ecn,
                accecn,
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
            probes,
            reference,
        })
    }

    /// The probe of `[[flows]]` group `i` (`kind = "probe"`) at a matrix point: its payload
    /// within [`PROBE_BYTES`], its start before the run's end.
    fn probe<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        i: usize,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
        duration_ns: Option<u64>,
    ) -> Result<ProbeSpec, ScenarioError> {
        let sf = Section::Flow(i);
        let get = |section: Section, key: &str| self.value_at(ctx, pick, section, key);
        let num = |v: Option<(Val, &Node)>| match v {
            Some((Val::Ns(x) | Val::Bytes(x) | Val::Int(x), n)) => Some((x, n.clone())),
            _ => None,
        };
        let size = num(get(sf, "size")?);
        let (lo, hi) = PROBE_BYTES;
        if let Some((b, node)) = size.as_ref().filter(|(b, _)| *b < lo || *b > hi) {
            return Err(ctx.err(ErrorKind::BadValue, &node.loc, Some(format!("flows.{i}.size")), Some(&node.v), format!("a probe's size is its payload: {b} bytes is out of range; use {lo} to {hi} bytes (e.g. size = 64)")));
        }
        let start = num(get(sf, "start")?);
        let start_ns = start.as_ref().map_or(0, |(x, _)| *x);
        let limit = duration_ns.unwrap_or(SIZED_RUN_CAP_NS);
        if start_ns >= limit {
            let (loc, v) = match &start {
                Some((_, n)) => (n.loc.clone(), Some(&n.v)),
                None => (self.section_loc(sf), None),
            };
            return Err(ctx.err(
                ErrorKind::Inconsistent,
                &loc,
                Some(format!("flows.{i}.start")),
                v,
                format!(
                    "the probe starts at {} but the run ends at {}; start must be earlier",
                    units::fmt_time(start_ns),
                    units::fmt_time(limit)
                ),
            ));
        }
        Ok(ProbeSpec {
            group: i as u32,
            interval_ns: num(get(sf, "interval")?).map_or(DEFAULT_PROBE_INTERVAL_NS, |(x, _)| x),
            size_bytes: size.map_or(DEFAULT_PROBE_BYTES, |(b, _)| b as u32),
            start_ns,
        })
    }

    /// The bottleneck's queue discipline at the matrix point `pick` describes, its
    /// parameters Linux's defaults unless the `[link.aqm]` table sets them.
    fn aqm<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
    ) -> Result<cclab_path::AqmDesc, ScenarioError> {
        use cclab_path::{AqmDesc, Given};
        let sa = Section::LinkSub(Sub::Aqm);
        let val = |section: Section, key: &str| -> Result<Option<Val>, ScenarioError> {
            Ok(self.value_at(ctx, pick, section, key)?.map(|(v, _)| v))
        };
        let name = match pick(Section::Link, "aqm").map(|n| &n.v) {
            None => return Ok(AqmDesc::default()),
            Some(RawV::Table(_)) => val(sa, "kind")?,
            Some(_) => val(Section::Link, "aqm")?,
        };
        let name = match name {
            Some(Val::Str(s)) => s,
            _ => "droptail".into(),
        };
        // (A parameter the discipline does not take was refused by `check_aqm_params`.)
        let Some(aqm) = cclab_path::Aqm::by_name(&name) else {
            return Ok(AqmDesc::default());
        };
        let given = self.given(ctx, pick, sa, aqm.settings)?;
        let get = |k: &str| given.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        Ok(aqm.describe(&Given::new(aqm.settings, &get)))
    }

    /// Each of the `declared` settings that `section` gives at the matrix point `pick`
    /// describes, read in the order they are declared.
    fn given<'a>(
        &'a self,
        ctx: &Ctx<'_>,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
        section: Section,
        declared: &'static [cclab_path::Setting],
    ) -> Result<Vec<(&'static str, cclab_path::SettingValue)>, ScenarioError> {
        use cclab_path::SettingValue;
        let mut given = Vec::new();
        for s in declared {
            let at = self.value_at(ctx, pick, section, s.name)?;
            if let (Some((Val::Int(x), node)), cclab_path::SettingKind::Int { min, max }) =
                (&at, &s.kind)
            {
                if !(*min..=*max).contains(x) {
                    return Err(ctx.err(
                        ErrorKind::BadValue,
                        &node.loc,
                        Some(qualified(section, s.name)),
                        Some(&node.v),
                        format!("value must be between {min} and {max} for this discipline"),
                    ));
                }
            }
            let v = match at.map(|(v, _)| v) {
                Some(Val::Ns(x)) => SettingValue::Time(x),
                Some(Val::Int(x) | Val::Bps(x) | Val::Bytes(x)) => SettingValue::Int(x),
                Some(Val::Bool(x)) => SettingValue::Bool(x),
                _ => continue,
            };
            given.push((s.name, v));
        }
        Ok(given)
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
}
