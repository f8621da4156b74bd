//! The concrete, validated scenario that a simulator or a real-TCP runner consumes.

use cclab_core::cc::{Controller, Param, ParamValue, Params};
use cclab_core::host::HostTcp;
use serde_json::{Map, Value};

use crate::units::{fmt_rate, fmt_size, fmt_time, Buffer};

/// Default `seed`.
pub const DEFAULT_SEED: u64 = 1;
/// Default `link.mss`, bytes (1500-byte MTU minus IPv4, TCP and timestamp-option headers).
pub const DEFAULT_MSS: u32 = 1448;
/// Smallest allowed `link.mss`, bytes (the IPv4 default MSS of RFC 879).
pub const MSS_MIN: u32 = 536;
/// Largest allowed `link.mss`, bytes (9000-byte jumbo frames).
pub const MSS_MAX: u32 = 9000;
/// Bytes a data packet carries on the wire beyond its payload: IPv4 (20) + TCP (20) + the
/// TCP timestamp option (12), as Linux sends by default. A full packet is `mss + 52` bytes,
/// 1500 for the default mss. Buffer sizes given in packets use this packet size.
pub const HEADER_BYTES: u64 = 52;
/// Default `flows.init_cwnd`, packets (Linux's initial window, RFC 6928).
pub const DEFAULT_INIT_CWND: u32 = 10;
/// Largest allowed `flows.init_cwnd`, packets.
pub const MAX_INIT_CWND: u32 = 100_000;
/// Largest allowed `flows.count`.
pub const MAX_COUNT: u32 = 10_000;
/// Run length when `duration` is absent (allowed only when every flow is sized): the run
/// ends when the last flow completes, or after this long, whichever is first.
pub const SIZED_RUN_CAP_NS: u64 = 300_000_000_000;
/// Most matrix points one file may expand to.
pub const MAX_MATRIX_POINTS: usize = 100_000;

/// The canonical name of a controller the simulator has (`"NewReno"` -> `"reno"`), or `None`
/// (see [`CcCatalog`] for another backend's list).
pub fn canonical_cc(name: &str) -> Option<&'static str> {
    cclab_core::cc::find(name).map(|c| c.name)
}

/// How `flows.cc` names a user's BPF struct_ops object (`cc = "bpf:my_cc.bpf.o"`, kernel
/// backend only); a relative path is taken from the scenario file's folder.
pub const BPF_PREFIX: &str = "bpf:";

/// How `flows.cc` names a Python controller class (`cc = "py:my_policies:DelayRate"`):
/// the flow runs the `external` controller, decided by an instance of the class at each
/// monitor interval. Only the Python package runs these (`cclab.run`); the CLI does not
/// embed Python.
pub const PY_PREFIX: &str = "py:";

/// `("module", "Class")` of a `py:module:Class` name, or `None` if `cc` is not one or is
/// malformed (an empty part, or not exactly two).
pub fn py_class(cc: &str) -> Option<(&str, &str)> {
    let (m, c) = cc.strip_prefix(PY_PREFIX)?.split_once(':')?;
    let ident = |s: &str| !s.is_empty() && !s.contains(':') && !s.contains(char::is_whitespace);
    (ident(m) && ident(c)).then_some((m, c))
}

/// One controller a backend offers, as scenario validation sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct CcEntry {
    /// Canonical name (`"cubic"`).
    pub name: String,
    pub aliases: Vec<String>,
    /// The registry entry when the simulator has this controller: its parameters may then be
    /// set with `cc_params`. `None` for controllers only a kernel offers.
    pub controller: Option<&'static Controller>,
    /// How the backend provides it when that is worth saying (`"bpf"`: a BPF controller
    /// the kernel lab registers for the run); listed as `dctcp (bpf)`.
    pub via: Option<String>,
}

/// The controllers a backend offers: what `flows.cc` may name and which `cc_params` each
/// takes. The simulator's list is the registry (`cclab_core::cc::CONTROLLERS`); the kernel
/// backend's is what the kernel offers, without parameters (a kernel's module parameters are
/// the host's, not the run's).
#[derive(Clone, Debug, PartialEq)]
pub struct CcCatalog {
    /// Who offers them, for error messages (`"the simulator"`, `"this kernel"`).
    pub owner: String,
    pub entries: Vec<CcEntry>,
    /// Whether `cc = "bpf:PATH"` (a user's BPF struct_ops object) is taken too.
    pub bpf_objects: bool,
    /// Whether `cc = "py:module:Class"` (a Python controller, [`PY_PREFIX`]) is taken too:
    /// set by the Python package, which drives those flows.
    pub py_objects: bool,
}

impl CcCatalog {
    /// The simulator's controllers: the registry.
    pub fn simulator() -> Self {
        CcCatalog {
            owner: "the simulator".into(),
            entries: cclab_core::cc::CONTROLLERS
                .iter()
                .map(|c| CcEntry {
                    name: c.name.into(),
                    aliases: c.aliases.iter().map(|a| a.to_string()).collect(),
                    controller: Some(*c),
                    via: None,
                })
                .collect(),
            bpf_objects: false,
            py_objects: false,
        }
    }

    /// Controllers known only by name (a kernel's `tcp_available_congestion_control`);
    /// names the registry knows keep its aliases, none takes parameters.
    pub fn names(owner: &str, names: &[String]) -> Self {
        CcCatalog {
            owner: owner.into(),
            entries: names
                .iter()
                .map(|n| {
                    let n = n.trim().to_ascii_lowercase();
                    let reg = cclab_core::cc::find(&n).filter(|c| c.name == n);
                    CcEntry {
                        aliases: reg
                            .map(|c| c.aliases.iter().map(|a| a.to_string()).collect())
                            .unwrap_or_default(),
                        name: n,
                        controller: None,
                        via: None,
                    }
                })
                .collect(),
            bpf_objects: false,
            py_objects: false,
        }
    }

    /// The entry `name` (any case, aliases included) stands for.
    /// A Python controller (`py:module:Class`, when taken) stands for `external`.
    pub fn find(&self, name: &str) -> Option<&CcEntry> {
        if self.py_objects && name.starts_with(PY_PREFIX) {
            let ext = cclab_core::cc::external::CONTROLLER.name;
            return self.entries.iter().find(|e| e.name == ext);
        }
        let n = name.trim().to_ascii_lowercase();
        self.entries
            .iter()
            .find(|e| e.name == n || e.aliases.contains(&n))
    }

    /// "reno (or newreno), cubic, bbr (or bbr1, bbrv1)".
    pub fn list(&self) -> String {
        self.entries
            .iter()
            .map(|e| {
                let name = match &e.via {
                    Some(v) => format!("{} ({v})", e.name),
                    None => e.name.clone(),
                };
                if e.aliases.is_empty() {
                    name
                } else {
                    format!("{name} (or {})", e.aliases.join(", "))
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every parameter any of these controllers takes, with its spec (the first one wins
    /// when two controllers share a name: a shared name means the same setting).
    pub fn all_params(&self) -> Vec<&'static Param> {
        let mut v: Vec<&'static Param> = Vec::new();
        for c in self.entries.iter().filter_map(|e| e.controller) {
            for p in c.params {
                if !v.iter().any(|q| q.name == p.name) {
                    v.push(p);
                }
            }
        }
        v
    }
}

impl Default for CcCatalog {
    fn default() -> Self {
        Self::simulator()
    }
}

/// Socket buffer for a path of `bdp` bytes with a bottleneck buffer of `buffer` bytes:
/// 4 x (bdp + buffer) within [4 MiB, 512 MiB] (see [`Scenario::socket_buffer_bytes`]).
pub fn socket_buffer_for(bdp: f64, buffer: u64) -> u64 {
    (4.0 * (bdp + buffer.min(1 << 30) as f64)).clamp(4.0 * 1048576.0, 512.0 * 1048576.0) as u64
}

/// A path element's setting in results, in the SI units of [`Scenario::resolved`]: a time
/// in seconds, a number (rate, size, count) and a flag as they are.
fn setting_json(v: cclab_path::SettingValue) -> Value {
    use cclab_path::SettingValue;
    match v {
        SettingValue::Time(ns) => Value::from(ns as f64 / 1e9),
        SettingValue::Int(i) => Value::from(i),
        SettingValue::Bool(b) => Value::from(b),
    }
}

/// A path element's setting as scenario text: a time, rate or size as its unit's text
/// (`"5ms"`, `"10mbit"`, `"64kb"`), a number and a flag as they are.
fn setting_toml(kind: cclab_path::SettingKind, v: cclab_path::SettingValue) -> toml::Value {
    use cclab_path::{SettingKind, SettingValue};
    match (kind, v) {
        (_, SettingValue::Time(ns)) => fmt_time(ns).into(),
        (_, SettingValue::Bool(b)) => b.into(),
        (SettingKind::Rate, SettingValue::Int(x)) => fmt_rate(x).into(),
        (SettingKind::Size, SettingValue::Int(x)) => fmt_size(x).into(),
        (_, SettingValue::Int(x)) => toml::Value::Integer(x.min(i64::MAX as u64) as i64),
    }
}

/// The bottleneck link: the path as every backend's path factory takes it, and what a
/// `[link]` gives beside it (the buffer as written, the MSS). A backend builds its path from
/// [`LinkSpec::path`] and [`LinkSpec::buffer_bytes`], resolved when it builds it.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// The path (`cclab_path::LinkDesc`): rate, base RTT, loss, ECN marking, how the rate
    /// varies, queue discipline, policer, shaper, jitter, reordering, ACK aggregation. Its
    /// `rate_bps` is whole bits per second (> 0); with a rate schedule or trace it is the
    /// nominal rate that buffers in BDP use.
    pub path: cclab_path::LinkDesc,
    /// Bottleneck queue capacity.
    pub buffer: Buffer,
    /// Maximum segment size (payload bytes per packet), in [`MSS_MIN`, `MSS_MAX`].
    pub mss: u32,
}

impl Default for LinkSpec {
    /// 100 Mbit/s, 20 ms, 1 BDP drop-tail, MSS 1448, nothing else.
    fn default() -> Self {
        LinkSpec {
            path: cclab_path::LinkDesc::default(),
            buffer: Buffer::Bdp(1.0),
            mss: DEFAULT_MSS,
        }
    }
}

/// Default `hosts.wake`: the extra time an idle host takes to answer, ns (the kernel lab's).
pub const DEFAULT_WAKE_NS: u64 = 100_000;
/// Default `hosts.wake_idle`: idle time after which a host's CPU sleeps, ns.
pub const DEFAULT_WAKE_IDLE_NS: u64 = 500_000;
/// Default `hosts.hz`: Debian's (and the kernel lab's) `CONFIG_HZ`.
pub const DEFAULT_HZ: u32 = 250;
/// `CONFIG_HZ` values Linux offers.
pub const HZ_VALUES: [u32; 4] = [100, 250, 300, 1000];

/// Host profiles (`hosts.profile`): named starting points for the TCP settings.
pub const HOST_PROFILES: &[&str] = &["linux", "accelerated"];

/// What a host profile sets, before `[hosts]` keys override it.
#[derive(Clone, Debug, PartialEq)]
pub struct HostProfile {
    pub tcp: HostTcp,
    /// `hosts.pacing`.
    pub pacing: bool,
}

/// A host profile:
/// - `linux`: Linux's defaults ([`HostTcp::default`]), no pacing beyond the controller's;
/// - `accelerated`: the small-files seed's vendor sender (docs/seeds.md) as far as cclab
///   can model it: its published parameters (`tcp_wmem` 4096 16384 4194304, `rto_min`
///   200 ms, an initial window of 10, all Linux's too), paced sending and a probing start
///   (`probe_start`). Its own SACK, RACK, RTO and retransmission modules are Linux's in
///   cclab. Unknown names give Linux's.
pub fn host_profile(name: &str) -> HostProfile {
    match name {
        "accelerated" => HostProfile {
            tcp: HostTcp {
                tcp_wmem: [4096, 16384, 4194304],
                rto_min: 200_000_000,
                probe_start: true,
                ..HostTcp::default()
            },
            pacing: true,
        },
        _ => HostProfile {
            tcp: HostTcp::default(),
            pacing: false,
        },
    }
}

/// The end hosts (`[hosts]`): their TCP settings (socket buffers, initial windows, timeouts,
/// pacing), how long they take to handle packets and how their kernels keep time. The
/// simulator models all of them; the kernel lab applies the TCP settings inside its
/// namespaces, and its hosts' timing is this machine's, which takes what it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct HostsSpec {
    /// TCP settings as Linux names them (`cclab_core::host`); each acts at the end it
    /// belongs to (the receive buffer at the receiver, the send buffer at the sender).
    pub tcp: HostTcp,
    /// Route attribute `initcwnd`: the senders' initial congestion window, segments; a flow
    /// group's `init_cwnd` overrides it.
    pub init_cwnd: Option<u32>,
    /// Pace every controller's sending (as the fq qdisc does), not only those that ask.
    pub pacing: bool,
    /// The sending host's interface rate, bit/s (`nic_rate`): TCP small queues count a
    /// buffer until the interface has sent it. `None` = freed as soon as it is handed over,
    /// as on the kernel lab's veth (the lab emulates an interface with a `tbf` qdisc).
    pub nic_rate_bps: Option<f64>,
    /// The named set the TCP settings started from (`hosts.profile`: [`HOST_PROFILES`]);
    /// keys given in `[hosts]` override it.
    pub profile: String,
    /// The least time the two hosts take together to answer a packet, ns (`latency`; old
    /// name `link.host_latency`). 0 = instant.
    pub latency_ns: u64,
    /// Mean of the exponentially distributed time on top of `latency_ns`, ns (`jitter`; old
    /// name `link.host_jitter`). 0 = none.
    pub jitter_ns: u64,
    /// How an idle host wakes up; `None` = hosts never sleep (`wake = "off"`).
    pub wake: Option<WakeSpec>,
    /// The hosts' kernel tick rate (`CONFIG_HZ`).
    pub hz: u32,
}

/// An idle host's CPU sleeps, and the first packet that finds it asleep is handled late.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WakeSpec {
    /// Idle time after which the CPU sleeps, ns (`wake_idle`).
    pub idle_ns: u64,
    /// Extra time to handle a packet that finds it asleep, ns (`wake`).
    pub delay_ns: u64,
    /// Senders and receivers share one CPU, so either's work keeps it awake (`shared_cpu`).
    pub shared_cpu: bool,
}

impl Default for HostsSpec {
    /// Linux hosts as in the kernel lab that answer at once but sleep when idle.
    fn default() -> Self {
        HostsSpec {
            tcp: HostTcp::default(),
            init_cwnd: None,
            pacing: false,
            nic_rate_bps: None,
            profile: "linux".into(),
            latency_ns: 0,
            jitter_ns: 0,
            wake: Some(WakeSpec {
                idle_ns: DEFAULT_WAKE_IDLE_NS,
                delay_ns: DEFAULT_WAKE_NS,
                shared_cpu: true,
            }),
            hz: DEFAULT_HZ,
        }
    }
}

impl LinkSpec {
    /// The path elements' keys with their resolved values (`link.aqm`, its parameters,
    /// `link.policer.*`, `link.shaper.*`, the rate schedule or trace, loss unit, jitter,
    /// reordering, ACK aggregation), in the SI units of [`Scenario::resolved`].
    pub fn path_values(&self) -> Vec<(String, Value)> {
        use cclab_path::{LossUnit, RateDesc};
        let secs = |ns: u64| Value::from(ns as f64 / 1e9);
        let mut v: Vec<(String, Value)> = Vec::new();
        let mut put = |k: &str, x: Value| v.push((k.to_string(), x));
        match &self.path.rate_varies {
            Some(RateDesc::Schedule(steps)) => put(
                "link.rate_schedule",
                Value::from(
                    steps
                        .iter()
                        .map(
                            |&(at, r)| serde_json::json!({"at": at as f64 / 1e9, "rate": r as u64}),
                        )
                        .collect::<Vec<_>>(),
                ),
            ),
            Some(RateDesc::Trace(t)) => put("link.trace", Value::from(t.name.clone())),
            _ => {}
        }
        put(
            "link.loss_unit",
            Value::from(match self.path.loss_unit {
                LossUnit::Segment => "segment",
                LossUnit::Gso => "gso",
            }),
        );
        put("link.aqm", Value::from(self.path.aqm.name()));
        let aqm = &self.path.aqm;
        for (s, v) in aqm.kind().settings.iter().zip(aqm.values()) {
            put(&format!("link.aqm.{}", s.name), setting_json(v));
        }
        for (e, b) in self.buckets() {
            match b {
                // Each declared setting: the rate in whole bit/s (as `link.rate` and the
                // params of a swept rate), the burst in bytes.
                Some(b) => {
                    for (s, v) in e.settings.iter().zip(b.values()) {
                        put(&format!("link.{}.{}", e.name, s.name), setting_json(v));
                    }
                }
                None => put(&format!("link.{}", e.name), Value::Null),
            }
        }
        put("link.jitter", secs(self.path.jitter_ns));
        put("link.reorder", Value::from(self.path.reorder));
        put("link.ack_aggregation", secs(self.path.ack_aggregation_ns));
        v
    }

    /// The path elements' keys as scenario text (see [`Scenario::to_toml_string`]): only
    /// what differs from a plain drop-tail link.
    fn path_toml(&self, lt: &mut toml::Table) {
        use cclab_path::{AqmDesc, LossUnit, RateDesc};
        match &self.path.rate_varies {
            Some(RateDesc::Schedule(steps)) => {
                let list: Vec<toml::Value> = steps
                    .iter()
                    .map(|&(at, r)| {
                        let mut t = toml::Table::new();
                        t.insert("at".into(), fmt_time(at).into());
                        t.insert("rate".into(), fmt_rate(r as u64).into());
                        toml::Value::Table(t)
                    })
                    .collect();
                lt.insert("rate".into(), toml::Value::Array(list));
            }
            Some(RateDesc::Trace(t)) => {
                lt.remove("rate");
                lt.insert("trace".into(), t.name.clone().into());
            }
            _ => {}
        }
        if self.path.loss_unit == LossUnit::Gso {
            lt.insert("loss_unit".into(), "gso".into());
        }
        let mut at = toml::Table::new();
        at.insert("kind".into(), self.path.aqm.name().into());
        let aqm = &self.path.aqm;
        for (s, v) in aqm.kind().settings.iter().zip(aqm.values()) {
            at.insert(s.name.into(), setting_toml(s.kind, v));
        }
        if self.path.aqm != AqmDesc::default() {
            lt.insert("aqm".into(), toml::Value::Table(at));
        }
        for (e, b) in self.buckets() {
            if let Some(b) = b {
                let mut t = toml::Table::new();
                for (s, v) in e.settings.iter().zip(b.values()) {
                    t.insert(s.name.into(), setting_toml(s.kind, v));
                }
                lt.insert(e.name.into(), toml::Value::Table(t));
            }
        }
        if self.path.jitter_ns > 0 {
            lt.insert("jitter".into(), fmt_time(self.path.jitter_ns).into());
        }
        if self.path.reorder {
            lt.insert("reorder".into(), true.into());
        }
        if self.path.ack_aggregation_ns > 0 {
            lt.insert(
                "ack_aggregation".into(),
                fmt_time(self.path.ack_aggregation_ns).into(),
            );
        }
    }

    /// Each token bucket before the bottleneck (`cclab_path::BUCKETS`) with its bucket here,
    /// if the link has one.
    fn buckets(
        &self,
    ) -> [(
        &'static cclab_path::Bucket,
        Option<&cclab_path::TokenBucket>,
    ); 2] {
        [
            (&cclab_path::POLICER, self.path.policer.as_ref()),
            (&cclab_path::SHAPER, self.path.shaper.as_ref()),
        ]
    }

    /// Wire size of a full data packet: `mss + HEADER_BYTES`.
    pub fn packet_bytes(&self) -> u64 {
        self.mss as u64 + HEADER_BYTES
    }

    /// Bandwidth-delay product of the base path, bytes: `rate_bps / 8 * rtt` (rounded).
    pub fn bdp_bytes(&self) -> u64 {
        (self.path.rate_bps / 8.0 * self.path.rtt_ns as f64 / 1e9).round() as u64
    }

    /// The buffer in bytes for this link (`cclab_path::PathDesc::buffer_bytes`, the limit of
    /// the bottleneck's queue); see [`Buffer::bytes`].
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer.bytes(self)
    }
}

impl Buffer {
    /// Capacity in bytes on `link`: `Bytes(n)` is n; `Packets(n)` is n x `link.packet_bytes()`;
    /// `Bdp(x)` is x x `link.bdp_bytes()` rounded, and never less than one packet.
    pub fn bytes(&self, link: &LinkSpec) -> u64 {
        match *self {
            Buffer::Bytes(n) => n,
            Buffer::Packets(n) => n.saturating_mul(link.packet_bytes()),
            Buffer::Bdp(x) => {
                let b = (x * link.bdp_bytes() as f64).round();
                let b = if b.is_finite() && b < 1.8e19 {
                    b as u64
                } else {
                    u64::MAX
                };
                b.max(link.packet_bytes())
            }
        }
    }
}

/// Values `flows.kind` takes: a TCP flow (the default), or a latency probe.
pub const FLOW_KINDS: &[&str] = &["bulk", "probe"];
/// `flows.kind` of a latency probe.
pub const PROBE_KIND: &str = "probe";
/// A probe's interval when not given, ns (100 ms).
pub const DEFAULT_PROBE_INTERVAL_NS: u64 = 100_000_000;
/// The intervals a probe accepts, ns (1 ms to 10 s).
pub const PROBE_INTERVAL_NS: (u64, u64) = (1_000_000, 10_000_000_000);
/// A probe's payload when not given, bytes.
pub const DEFAULT_PROBE_BYTES: u32 = 64;
/// The payloads a probe accepts, bytes (a datagram of at most 1428 bytes on the wire fits
/// any link's MTU).
pub const PROBE_BYTES: (u64, u64) = (16, 1400);
/// Bytes of IPv4 + UDP header on a probe's datagram.
pub const PROBE_HEADER_BYTES: u32 = 28;

/// One `[[flows]]` group of `kind = "probe"`: a UDP echo probe beside the TCP flows (as
/// irtt or flent's ping). A datagram of `size_bytes` leaves the sender side every
/// `interval_ns` from `start_ns` on, crosses the forward path, and the receiver side echoes
/// it back through the return path; its RTT is the echo's arrival minus its send time.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSpec {
    /// Index of its `[[flows]]` group in the file.
    pub group: u32,
    /// Time between two probes, ns.
    pub interval_ns: u64,
    /// Payload of each datagram, bytes (UDP/IP headers come on top).
    pub size_bytes: u32,
    /// First probe's send time from the start of the run, ns.
    pub start_ns: u64,
}

/// One `[[flows]]` group: `count` identical flows.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Canonical congestion-control name from the backend's [`CcCatalog`] (e.g. `"bbr"`).
    pub cc: String,
    /// `cc_params` that apply to `cc`, as given (the others keep their defaults; see
    /// [`FlowSpec::controller`]).
    pub cc_params: Vec<(String, ParamValue)>,
    /// Number of identical flows in this group (>= 1).
    pub count: u32,
    /// Start time from the beginning of the run, nanoseconds.
    pub start_ns: u64,
    /// Bytes to transfer; `None` = bulk (sends until the run ends).
    pub size_bytes: Option<u64>,
    /// Extra round-trip time of these flows on top of `link.path.rtt_ns`, nanoseconds.
    pub rtt_extra_ns: u64,
    /// Initial congestion window, packets (>= 1).
    pub init_cwnd: u32,
    /// These flows ask for ECN (`flows.ecn`; Linux's default `tcp_ecn = 2` never asks). A
    /// controller that needs ECN (DCTCP) negotiates it anyway.
    pub ecn: bool,
    /// These flows ask for Accurate ECN feedback (`flows.ecn = "accecn"`, as `tcp_ecn = 3`
    /// would on both hosts); `ecn` is then true too. A controller that needs AccECN
    /// (Prague) negotiates it anyway.
    pub accecn: bool,
}

/// `flows.ecn`'s value that asks for Accurate ECN feedback.
pub const ACCECN: &str = "accecn";

/// `flows.ecn` as resolved: `true`/`false`, or `"accecn"`.
fn ecn_json(f: &FlowSpec) -> Value {
    if f.accecn {
        Value::from(ACCECN)
    } else {
        Value::from(f.ecn)
    }
}

impl FlowSpec {
    /// The simulator's controller for this group, every parameter resolved (the given
    /// `cc_params` over the defaults); an error names what the registry lacks.
    /// A Python controller (`py:module:Class`) runs the `external` controller.
    pub fn controller(&self) -> Result<Params, String> {
        let name = if self.cc.starts_with(PY_PREFIX) {
            cclab_core::cc::external::CONTROLLER.name
        } else {
            &self.cc
        };
        let c = cclab_core::cc::find(name).ok_or_else(|| {
            format!(
                "congestion control \"{}\" is not in the simulator (it has: {})",
                self.cc,
                CcCatalog::simulator().list()
            )
        })?;
        c.resolve(self.cc_params.iter().map(|(k, v)| (k.as_str(), *v)))
    }
}

/// A concrete scenario: one point of a matrix, every value resolved and validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    /// Run length; `None` only when every flow is sized (see [`Scenario::run_limit_ns`]).
    pub duration_ns: Option<u64>,
    pub seed: u64,
    pub link: LinkSpec,
    pub hosts: HostsSpec,
    /// TCP flow groups in file order (at least one); probe groups are in `probes`.
    pub flows: Vec<FlowSpec>,
    /// Latency probes (`[[flows]]` groups of `kind = "probe"`), in file order.
    pub probes: Vec<ProbeSpec>,
    /// The free-form `[reference]` table, as JSON (shared by the points of a matrix).
    pub reference: Option<std::sync::Arc<Value>>,
}

impl Scenario {
    /// Reads a scenario file; alias of [`crate::ScenarioFile::from_file`].
    pub fn from_file(
        path: impl AsRef<std::path::Path>,
    ) -> Result<crate::ScenarioFile, crate::ScenarioError> {
        crate::ScenarioFile::from_file(path)
    }

    /// Parses scenario text; alias of [`crate::ScenarioFile::from_str`].
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<crate::ScenarioFile, crate::ScenarioError> {
        crate::ScenarioFile::from_str(text, origin)
    }

    /// When the run stops at the latest: `duration_ns`, or [`SIZED_RUN_CAP_NS`] when absent.
    pub fn run_limit_ns(&self) -> u64 {
        self.duration_ns.unwrap_or(SIZED_RUN_CAP_NS)
    }

    /// Total number of flows (sum of the groups' counts).
    pub fn total_flows(&self) -> u64 {
        self.flows.iter().map(|f| f.count as u64).sum()
    }

    /// Round-trip propagation time of a flow of `group`: `link.path.rtt_ns + rtt_extra_ns`.
    pub fn flow_rtt_ns(&self, group: usize) -> Option<u64> {
        self.flows
            .get(group)
            .map(|f| self.link.path.rtt_ns.saturating_add(f.rtt_extra_ns))
    }

    /// Socket buffer of each endpoint of a flow of `group`, bytes: 4 x (BDP of the flow's
    /// path plus the bottleneck buffer), within [4 MiB, 512 MiB]. The kernel lab sets it with
    /// `SO_SNDBUFFORCE`/`SO_RCVBUFFORCE` so neither end is window-limited; the simulator derives
    /// the receiver's window clamp from it (see `cclab_core::receiver`), so both backends mean
    /// the same receiver.
    pub fn socket_buffer_bytes(&self, group: usize) -> u64 {
        let rtt = self.flow_rtt_ns(group).unwrap_or(self.link.path.rtt_ns);
        let bdp = self.link.path.rate_bps / 8.0 * rtt as f64 / 1e9;
        socket_buffer_for(bdp, self.link.buffer_bytes())
    }

    /// Every key with its resolved value (defaults filled in) as a flat, ordered map, in the
    /// same SI units as matrix params: rates in bit/s, times in seconds, sizes in bytes, loss
    /// as a probability, `link.buffer` in canonical text plus `link.buffer_bytes`,
    /// `link.bdp_bytes` and `link.packet_bytes` derived. Flow keys are `flows.<key>` with one
    /// group and `flows.<i>.<key>` with several (TCP groups only); a latency probe's are
    /// `probes.<g>.interval`, `probes.<g>.size` and `probes.<g>.start`, `g` its `[[flows]]`
    /// group's index in the file. `duration` and `flows.size` are null when absent.
    /// `description` and `reference` are not included.
    pub fn resolved(&self) -> Map<String, Value> {
        let mut m = Map::new();
        let secs = |ns: u64| Value::from(ns as f64 / 1e9);
        m.insert("name".into(), Value::from(self.name.clone()));
        m.insert(
            "duration".into(),
            self.duration_ns.map(secs).unwrap_or(Value::Null),
        );
        m.insert("seed".into(), Value::from(self.seed));
        let l = &self.link;
        m.insert("link.rate".into(), Value::from(l.path.rate_bps as u64));
        m.insert("link.rtt".into(), secs(l.path.rtt_ns));
        m.insert("link.buffer".into(), Value::from(l.buffer.to_string()));
        m.insert("link.buffer_bytes".into(), Value::from(l.buffer_bytes()));
        m.insert("link.bdp_bytes".into(), Value::from(l.bdp_bytes()));
        m.insert("link.packet_bytes".into(), Value::from(l.packet_bytes()));
        m.insert("link.loss".into(), Value::from(l.path.loss));
        m.insert("link.loss_burst".into(), Value::from(l.path.loss_burst));
        m.insert("link.ack_loss".into(), Value::from(l.path.ack_loss));
        m.insert("link.mss".into(), Value::from(l.mss));
        m.insert(
            "link.ecn_threshold".into(),
            l.path.ecn_threshold_ns.map(secs).unwrap_or(Value::Null),
        );
        for (k, v) in l.path_values() {
            m.insert(k, v);
        }
        let h = &self.hosts;
        m.insert("hosts.latency".into(), secs(h.latency_ns));
        m.insert("hosts.jitter".into(), secs(h.jitter_ns));
        // Hosts that never sleep: no wake-up delay, the default idle time.
        let w = h.wake.unwrap_or(WakeSpec {
            idle_ns: DEFAULT_WAKE_IDLE_NS,
            delay_ns: 0,
            shared_cpu: true,
        });
        m.insert("hosts.wake".into(), secs(w.delay_ns));
        m.insert("hosts.wake_idle".into(), secs(w.idle_ns));
        m.insert("hosts.shared_cpu".into(), Value::from(w.shared_cpu));
        m.insert("hosts.hz".into(), Value::from(h.hz));
        let t = &h.tcp;
        let triple = |v: [u64; 3]| Value::from(format!("{} {} {}", v[0], v[1], v[2]));
        let opt = |v: Option<u64>| v.map(Value::from).unwrap_or(Value::Null);
        m.insert("hosts.tcp_rmem".into(), triple(t.tcp_rmem));
        m.insert("hosts.tcp_wmem".into(), triple(t.tcp_wmem));
        m.insert("hosts.rcvbuf".into(), opt(t.rcvbuf));
        m.insert("hosts.sndbuf".into(), opt(t.sndbuf));
        m.insert(
            "hosts.init_cwnd".into(),
            Value::from(h.init_cwnd.unwrap_or(DEFAULT_INIT_CWND)),
        );
        m.insert("hosts.init_rwnd".into(), opt(t.init_rwnd.map(u64::from)));
        m.insert("hosts.rto_min".into(), secs(t.rto_min));
        m.insert(
            "hosts.slow_start_after_idle".into(),
            Value::from(t.slow_start_after_idle),
        );
        m.insert("hosts.notsent_lowat".into(), opt(t.notsent_lowat));
        m.insert("hosts.pacing".into(), Value::from(h.pacing));
        m.insert(
            "hosts.nic_rate".into(),
            h.nic_rate_bps.map(Value::from).unwrap_or(Value::Null),
        );
        m.insert("hosts.probe_start".into(), Value::from(t.probe_start));
        m.insert("hosts.profile".into(), Value::from(h.profile.clone()));
        let single = self.flows.len() == 1;
        for (i, f) in self.flows.iter().enumerate() {
            let p = if single {
                "flows.".to_string()
            } else {
                format!("flows.{i}.")
            };
            m.insert(format!("{p}cc"), Value::from(f.cc.clone()));
            m.insert(format!("{p}count"), Value::from(f.count));
            m.insert(format!("{p}start"), secs(f.start_ns));
            m.insert(
                format!("{p}size"),
                f.size_bytes.map(Value::from).unwrap_or(Value::Null),
            );
            m.insert(format!("{p}rtt_extra"), secs(f.rtt_extra_ns));
            m.insert(format!("{p}init_cwnd"), Value::from(f.init_cwnd));
            m.insert(format!("{p}ecn"), ecn_json(f));
            // Every parameter of the controller, defaults included, when the simulator has it.
            match f.controller() {
                Ok(params) => {
                    for (k, v) in params.values() {
                        m.insert(format!("{p}cc_params.{k}"), param_json(*v));
                    }
                }
                Err(_) => {
                    for (k, v) in &f.cc_params {
                        m.insert(format!("{p}cc_params.{k}"), param_json(*v));
                    }
                }
            }
        }
        // Latency probes by their group's index in the file (as `probes[].group` and the
        // table's "probe flows.N" name them); none without probes.
        for pr in &self.probes {
            let p = format!("probes.{}.", pr.group);
            m.insert(format!("{p}interval"), secs(pr.interval_ns));
            m.insert(format!("{p}size"), Value::from(pr.size_bytes));
            m.insert(format!("{p}start"), secs(pr.start_ns));
        }
        m
    }

    /// This scenario as a scenario file with every key explicit (no lists), suitable for
    /// saving next to results. Parsing it back yields one matrix point equal to `self`.
    pub fn to_toml_string(&self) -> String {
        let mut t = toml::Table::new();
        t.insert("name".into(), self.name.clone().into());
        if let Some(d) = &self.description {
            t.insert("description".into(), d.clone().into());
        }
        if let Some(d) = self.duration_ns {
            t.insert("duration".into(), fmt_time(d).into());
        }
        t.insert(
            "seed".into(),
            toml::Value::Integer(self.seed.min(i64::MAX as u64) as i64),
        );
        let l = &self.link;
        let mut lt = toml::Table::new();
        lt.insert("rate".into(), fmt_rate(l.path.rate_bps as u64).into());
        lt.insert("rtt".into(), fmt_time(l.path.rtt_ns).into());
        lt.insert("buffer".into(), l.buffer.to_string().into());
        lt.insert("loss".into(), crate::units::loss_toml(l.path.loss));
        lt.insert("loss_burst".into(), l.path.loss_burst.into());
        lt.insert("ack_loss".into(), crate::units::loss_toml(l.path.ack_loss));
        lt.insert("mss".into(), toml::Value::Integer(l.mss as i64));
        if let Some(t) = l.path.ecn_threshold_ns {
            lt.insert("ecn_threshold".into(), fmt_time(t).into());
        }
        l.path_toml(&mut lt);
        t.insert("link".into(), toml::Value::Table(lt));
        let h = &self.hosts;
        let mut ht = toml::Table::new();
        ht.insert("latency".into(), fmt_time(h.latency_ns).into());
        ht.insert("jitter".into(), fmt_time(h.jitter_ns).into());
        match h.wake {
            Some(w) => {
                ht.insert("wake".into(), fmt_time(w.delay_ns).into());
                ht.insert("wake_idle".into(), fmt_time(w.idle_ns).into());
                ht.insert("shared_cpu".into(), w.shared_cpu.into());
            }
            None => {
                ht.insert("wake".into(), "off".into());
            }
        }
        ht.insert("hz".into(), toml::Value::Integer(h.hz as i64));
        let tcp = &h.tcp;
        let triple = |v: [u64; 3]| format!("{} {} {}", v[0], v[1], v[2]);
        ht.insert("tcp_rmem".into(), triple(tcp.tcp_rmem).into());
        ht.insert("tcp_wmem".into(), triple(tcp.tcp_wmem).into());
        for (k, v) in [
            ("rcvbuf", tcp.rcvbuf),
            ("sndbuf", tcp.sndbuf),
            ("notsent_lowat", tcp.notsent_lowat),
        ] {
            ht.insert(
                k.into(),
                v.map(|b| fmt_size(b).into())
                    .unwrap_or_else(|| "off".into()),
            );
        }
        if let Some(n) = h.init_cwnd {
            ht.insert("init_cwnd".into(), toml::Value::Integer(n as i64));
        }
        if let Some(n) = tcp.init_rwnd {
            ht.insert("init_rwnd".into(), toml::Value::Integer(n as i64));
        }
        ht.insert("rto_min".into(), fmt_time(tcp.rto_min).into());
        ht.insert(
            "slow_start_after_idle".into(),
            tcp.slow_start_after_idle.into(),
        );
        ht.insert("pacing".into(), h.pacing.into());
        if let Some(r) = h.nic_rate_bps {
            ht.insert("nic_rate".into(), crate::units::fmt_rate(r as u64).into());
        }
        ht.insert("probe_start".into(), tcp.probe_start.into());
        ht.insert("profile".into(), h.profile.clone().into());
        t.insert("hosts".into(), toml::Value::Table(ht));
        let flows = self
            .flows
            .iter()
            .map(|f| {
                let mut ft = toml::Table::new();
                ft.insert("cc".into(), f.cc.clone().into());
                ft.insert("count".into(), toml::Value::Integer(f.count as i64));
                ft.insert("start".into(), fmt_time(f.start_ns).into());
                if let Some(s) = f.size_bytes {
                    ft.insert("size".into(), fmt_size(s).into());
                }
                ft.insert("rtt_extra".into(), fmt_time(f.rtt_extra_ns).into());
                ft.insert("init_cwnd".into(), toml::Value::Integer(f.init_cwnd as i64));
                ft.insert(
                    "ecn".into(),
                    if f.accecn {
                        ACCECN.into()
                    } else {
                        f.ecn.into()
                    },
                );
                if !f.cc_params.is_empty() {
                    let pt: toml::Table = f
                        .cc_params
                        .iter()
                        .map(|(k, v)| {
                            let tv = match *v {
                                ParamValue::Bool(b) => toml::Value::Boolean(b),
                                ParamValue::Int(i) => toml::Value::Integer(i),
                            };
                            (k.clone(), tv)
                        })
                        .collect();
                    ft.insert("cc_params".into(), toml::Value::Table(pt));
                }
                toml::Value::Table(ft)
            })
            .collect::<Vec<_>>();
        // Probes go back to their places among the groups.
        let mut flows = flows.into_iter();
        let mut all = Vec::new();
        for p in &self.probes {
            while all.len() < p.group as usize {
                match flows.next() {
                    Some(f) => all.push(f),
                    None => break,
                }
            }
            let mut pt = toml::Table::new();
            pt.insert("kind".into(), PROBE_KIND.into());
            pt.insert("interval".into(), fmt_time(p.interval_ns).into());
            pt.insert("size".into(), toml::Value::Integer(p.size_bytes as i64));
            pt.insert("start".into(), fmt_time(p.start_ns).into());
            all.push(toml::Value::Table(pt));
        }
        all.extend(flows);
        t.insert("flows".into(), toml::Value::Array(all));
        if let Some(r) = self.reference.as_deref().and_then(json_to_toml) {
            t.insert("reference".into(), r);
        }
        toml::to_string(&t).unwrap_or_default()
    }
}

/// JSON to TOML for `[reference]`; nulls (which TOML cannot hold) are dropped.
fn json_to_toml(v: &Value) -> Option<toml::Value> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(b) => toml::Value::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64()?),
        },
        Value::String(s) => toml::Value::String(s.clone()),
        Value::Array(a) => toml::Value::Array(a.iter().filter_map(json_to_toml).collect()),
        Value::Object(o) => toml::Value::Table(
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect(),
        ),
    })
}

/// A controller parameter's value in JSON.
pub(crate) fn param_json(v: ParamValue) -> Value {
    match v {
        ParamValue::Bool(b) => Value::from(b),
        ParamValue::Int(i) => Value::from(i),
    }
}
