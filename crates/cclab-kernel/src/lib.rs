//! # cclab-kernel: the same scenarios through real Linux TCP
//!
//! One run of a [`Scenario`] ([`run_scenario`]) builds a private three-namespace lab,
//! pushes cclab's own TCP flows through it, and returns the same [`RunResult`] the
//! simulator returns, with the same meaning for every field.
//!
//! ```text
//!  cclab-<pid>-<n>-snd          cclab-<pid>-<n>-rtr                     cclab-<pid>-<n>-rcv
//!  sender thread                 element thread (cclab_path chains)      receiver thread
//!  s0 198.18.0.2 ==veth== r0 --> [rule iif r0/r1: table 100 -> ctun] --> r1 ==veth== c0 198.18.1.10+g
//!                                       ctun (TUN) <-> element
//! ```
//!
//! - **Namespaces** `cclab-<pid>-<n>-{snd,rtr,rcv}` (iproute2 `ip netns`), veth pairs created
//!   directly inside them (nothing in the host namespace), addresses in 198.18.0.0/23 (see
//!   [`addr`]). Sysctls are written only inside these namespaces (IPv6 off; in the router
//!   `ip_forward=1`, `rp_filter=0`, no redirects; at the ends `tcp_no_metrics_save=1`).
//! - **Path**: in the router, policy routing (`ip rule iif r0|r1 lookup 100`, table 100 =
//!   `default dev ctun`) hands every forwarded packet to a TUN device read by the element
//!   ([`element`]), which runs the scenario's path as `cclab_path`'s factory builds it for the
//!   simulator too: random loss on data packets -> [policer -> shaper] -> the bottleneck link
//!   (its rate, fixed or varying, and queue discipline) -> per-group delay of
//!   `(rtt + rtt_extra) / 2` (with jitter); ACKs get ACK loss, [aggregation,] and the other
//!   half of the RTT. The element writes packets back into the TUN
//!   device and the router's main table forwards them on. The rate counts whole IP packets
//!   (1500 bytes for mss 1448), as in the simulator; all links use MTU `mss + 52`.
//! - **Per-segment loss** in both element modes ([`ElementMode`]): `Segments` (links up to
//!   200 Mbit/s) opens the TUN device without offloads, so the router's stack segments every
//!   GSO super-packet before the element; `Gso` (faster links) takes super-packets whole
//!   (`IFF_VNET_HDR`, `TSO4`), draws loss per segment and splits a super-packet in user space
//!   when it loses a segment or does not fit the buffer. No ethtool, no device offload changed.
//! - **Traffic** ([`traffic`]): flow i binds 198.18.0.2:(20000+i), sets `TCP_CONGESTION`
//!   per socket (and `SO_SNDBUFFORCE`/`SO_RCVBUFFORCE`, `SO_MAX_PACING_RATE` when the
//!   scenario's `[hosts]` asks), and connects to its group's receiver address before time
//!   zero (the simulator has no handshake). Group routes carry `initcwnd` (and `rto_min`);
//!   the end namespaces carry the `[hosts]` sysctls. Bulk flows write until the end; sized
//!   flows write `size` bytes and shut down. The receiver counts what the application read;
//!   TCP_INFO is sampled every 10 ms.
//! - **Latency probes** (`probe.rs`, `[[flows]] kind = "probe"`): UDP datagrams from
//!   198.18.0.2:(30000+p) to an echo on 198.18.1.250 (no group's address: the path's own RTT),
//!   through the element both ways, sent on schedule from time zero; the record is built
//!   as the simulator's ([`cclab_results::ProbeRecord`]).
//! - **Cleanup**: a guard deletes the namespaces (and with them every link, route and TUN)
//!   on success, error, panic and SIGINT/SIGTERM (handlers set a flag while a run is in
//!   progress; the run stops, cleans up, and returns [`KernelError::Interrupted`]). All
//!   lab code runs in threads of the calling process, so nothing outlives a SIGKILL except the
//!   named namespaces, which [`clean_stale`] removes.
//!
//! Field meanings in [`RunResult`] follow the simulator; where the kernel can only
//! approximate, the docs of [`run_scenario`] say how.

pub mod addr;
mod backend;
mod bench;
pub mod controllers;
mod doctor;
pub mod element;
pub mod lab;
mod probe;
pub mod testing;
mod topo;

use cclab_sys as sys;
use cclab_sys::available_ccs;
pub mod traffic;

pub use backend::KernelBackend;
pub use bench::{
    capacity_sweep, element_capacity, idle_rtt, sweep_rates, tcp_capacity_point,
    tcp_capacity_sweep, Capacity, CapacityPoint, ACCURATE_P99_US,
};
pub use doctor::{doctor, DoctorReport, Feature};
pub use element::{ElementMode, ElementStats, ElementTiming};
pub use topo::{clean_stale, list_namespaces, namespaces_of, CleanReport, PREFIX};

use cclab_results::trace::TraceWriter;
use cclab_results::{
    AccEcnCounts, EcnCounts, FlowRecord, FlowSeries, LinkRecord, RunRecord, RunResult, TimeSeries,
};
use cclab_scenario::Scenario;
use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How the kernel backend runs (defaults suit the CLI).
#[derive(Clone, Debug)]
pub struct KernelOptions {
    /// How the element waits between events (see [`ElementTiming`]).
    pub timing: ElementTiming,
    /// TCP_INFO sampling period, ns (10 ms).
    pub sample_interval_ns: u64,
    /// Time-series bin, ns (100 ms, as the simulator).
    pub series_interval_ns: u64,
    /// How long connecting every flow may take, ns (10 s).
    pub connect_timeout_ns: u64,
    /// Run the element thread under SCHED_FIFO (priority 10) so the TCP endpoints' work
    /// cannot delay packets on the path.
    pub realtime: bool,
    /// Leave the namespaces in place after the run (debugging; `clean_stale` removes them).
    pub keep_namespaces: bool,
    /// How packets cross the element; `None` picks [`auto_mode`] from the link rate.
    pub mode: Option<ElementMode>,
    /// Give the element a CPU of its own and keep the sender and receiver threads on the
    /// others (on by default; without it the scheduler's time slices make the element
    /// release packets milliseconds late at p99).
    pub pin: bool,
    /// Write the element's packet trace here (see `cclab_results::trace`).
    pub trace: Option<std::path::PathBuf>,
}

/// Link rate from which [`auto_mode`] picks [`ElementMode::Gso`], bit/s.
pub const GSO_FROM_BPS: f64 = 200e6;

/// The element mode for a link of `rate_bps`: per-segment packets up to [`GSO_FROM_BPS`]
/// (exact per-packet serialisation, enough capacity), GSO super-packets above (the only
/// way the element keeps up; loss stays per segment, see [`ElementMode::Gso`]).
pub fn auto_mode(rate_bps: f64) -> ElementMode {
    if rate_bps > GSO_FROM_BPS {
        ElementMode::Gso
    } else {
        ElementMode::Segments
    }
}

/// The element mode for `link` when none is asked for: [`auto_mode`] by its rate, and GSO
/// whenever loss is drawn per GSO packet (`link.loss_unit = "gso"`: the element must see
/// the sender's GSO packets to draw once for each).
pub fn mode_for(link: &cclab_scenario::LinkSpec) -> ElementMode {
    let path = &link.path;
    if path.loss_unit == cclab_path::LossUnit::Gso && path.loss > 0.0 {
        ElementMode::Gso
    } else {
        auto_mode(path.rate_bps)
    }
}

impl Default for KernelOptions {
    fn default() -> Self {
        KernelOptions {
            timing: ElementTiming::Hybrid,
            sample_interval_ns: 10_000_000,
            series_interval_ns: 100_000_000,
            connect_timeout_ns: 10_000_000_000,
            realtime: false,
            keep_namespaces: false,
            mode: None,
            pin: true,
            trace: None,
        }
    }
}

/// Why a kernel run could not happen; `Display` is one line with the fix.
#[derive(Clone, Debug, PartialEq)]
pub enum KernelError {
    /// Not root / no CAP_NET_ADMIN + CAP_SYS_ADMIN.
    NotPrivileged,
    /// The kernel lacks a congestion control the scenario asks for.
    CcUnavailable { cc: String, available: Vec<String> },
    /// The scenario is outside what the kernel backend takes.
    Unsupported(String),
    /// Building the lab failed (an `ip` command, a sysctl, the TUN device).
    Setup(String),
    /// A BPF controller could not be loaded or registered (`cclab_bpf`'s one-line reason).
    Bpf(String),
    /// A socket call failed.
    Io(String),
    /// Something did not happen in time.
    Timeout(String),
    /// SIGINT/SIGTERM arrived; the run stopped and cleaned up.
    Interrupted(i32),
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelError::NotPrivileged => {
                f.write_str("the kernel backend needs root (CAP_NET_ADMIN); --backend sim needs nothing")
            }
            KernelError::CcUnavailable { cc, available } => write!(
                f,
                "congestion control \"{cc}\" is not available in this kernel (it has: {}); try `modprobe tcp_{cc}` or --backend sim",
                available.join(", ")
            ),
            KernelError::Unsupported(m) => write!(f, "{m}"),
            KernelError::Setup(m) => write!(f, "kernel lab setup failed: {m} (leftovers: `cclab lab clean`)"),
            KernelError::Bpf(m) => f.write_str(m),
            KernelError::Io(m) => write!(f, "kernel run failed: {m}"),
            KernelError::Timeout(m) => write!(f, "kernel run timed out: {m}"),
            KernelError::Interrupted(s) => write!(
                f,
                "interrupted by {} ; the run stopped and its namespaces were removed",
                sys::signal_name(*s)
            ),
        }
    }
}

impl std::error::Error for KernelError {}

/// Root, or CAP_NET_ADMIN plus CAP_SYS_ADMIN (namespaces).
pub fn check_privileges() -> Result<(), KernelError> {
    if sys::is_root() || (sys::has_cap(sys::CAP_NET_ADMIN) && sys::has_cap(sys::CAP_SYS_ADMIN)) {
        Ok(())
    } else {
        Err(KernelError::NotPrivileged)
    }
}

/// Why this machine cannot run the lab with controllers `ccs`, or `None` if it can: not
/// privileged, no `/dev/net/tun`, no iproute2 `ip`, or a controller the kernel lacks. Tests use
/// it to print an explicit SKIP.
pub fn lab_unavailable(ccs: &[&str]) -> Option<String> {
    if check_privileges().is_err() {
        return Some("not root (the kernel backend needs CAP_NET_ADMIN + CAP_SYS_ADMIN)".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun".into());
    }
    if std::process::Command::new("ip").arg("-V").output().is_err() {
        return Some("no iproute2 `ip`".into());
    }
    ccs.iter().find_map(|cc| controllers::unavailable(cc))
}

/// Why the kernel lab cannot run scenario `sc` as written, if it cannot:
/// `hosts.probe_start` is an accelerated sender's module that Linux's TCP does not have, and
/// `flows.ecn = "accecn"` for a controller that does not negotiate AccECN itself needs
/// `net.ipv4.tcp_ecn = 3`, which 6.18 refuses (its `tcp_ecn_mode_max` is 2).
pub fn scenario_unsupported(sc: &Scenario) -> Option<String> {
    if sc.hosts.tcp.probe_start {
        return Some(format!(
            "{}: hosts.probe_start is an accelerated sender's module that Linux's TCP does not \
             have (and this machine cannot build a BPF controller for it); run it on the \
             simulator, or set hosts.probe_start = false to run the rest of the profile",
            sc.name
        ));
    }
    let (g, f) = sc
        .flows
        .iter()
        .enumerate()
        .find(|(_, f)| f.accecn && !controllers::negotiates_accecn(&f.cc))?;
    Some(format!(
        "{}: flows.{g}: ecn = \"accecn\" with {} needs net.ipv4.tcp_ecn = 3, which this kernel \
         refuses (Linux 6.18 negotiates AccECN only for a controller that needs it, such as \
         prague); run it on the simulator, or use ecn = true for classic ECN",
        sc.name, f.cc
    ))
}

/// Host settings of scenario `sc` that Linux takes per socket, not per namespace: cclab's
/// own flows set them on their sockets, so traffic another program starts in a lab held open
/// for it (`cclab lab up`) runs without them. One line each, with the socket option to set.
pub fn per_socket_settings(sc: &Scenario) -> Vec<String> {
    let h = &sc.hosts;
    let mut out = Vec::new();
    if let Some(b) = h.tcp.sndbuf {
        out.push(format!(
            "hosts.sndbuf = {b} is the sender socket's SO_SNDBUF (iperf3 -w {b} sets it)"
        ));
    }
    if let Some(b) = h.tcp.rcvbuf {
        out.push(format!(
            "hosts.rcvbuf = {b} is the receiver socket's SO_RCVBUF (iperf3 -w {b} sets it)"
        ));
    }
    if h.pacing {
        out.push(
            "hosts.pacing is TCP's own pacing, which any SO_MAX_PACING_RATE turns on (iperf3 --fq-rate 10G, far above the link)"
                .into(),
        );
    }
    out
}

/// The lab for scenario `sc`: its path in the element, its hosts' settings in the end
/// namespaces, a receiver address per flow group (with the group's extra RTT, initial
/// window and ECN); `flow_group`: the group of each of cclab's own flows (empty when other
/// traffic crosses the lab).
pub fn lab_config(sc: &Scenario, opts: &KernelOptions, flow_group: Vec<u32>) -> lab::LabConfig {
    let link = &sc.link;
    lab::LabConfig {
        element: element::ElementConfig {
            link: link.path.clone(),
            buffer_bytes: link.buffer_bytes(),
            seed: sc.seed,
            group_extra_ns: sc.flows.iter().map(|f| f.rtt_extra_ns).collect(),
            group_ect1: sc
                .flows
                .iter()
                .map(|f| controllers::sends_ect1(&f.cc))
                .collect(),
            flow_group,
            timing: opts.timing,
            realtime: opts.realtime,
            mode: opts.mode.unwrap_or_else(|| mode_for(link)),
            pin: opts.pin,
            mss: link.mss,
            bin_ns: opts.series_interval_ns,
        },
        mtu: link.mss + cclab_scenario::HEADER_BYTES as u32,
        group_init_cwnd: sc.flows.iter().map(|f| f.init_cwnd).collect(),
        group_ecn: sc.flows.iter().map(|f| f.ecn).collect(),
        host: sc.hosts.tcp.clone(),
        nic_rate_bps: sc.hosts.nic_rate_bps,
        keep_namespaces: opts.keep_namespaces,
    }
}

/// A run's result plus what only the kernel lab measures.
#[derive(Clone, Debug)]
pub struct KernelRun {
    pub result: RunResult,
    pub element: ElementStats,
    /// Congestion control each socket really used (read back with getsockopt).
    pub cc_used: Vec<String>,
    /// The sender namespace's TCP counters after the run (`TcpExt` and `Tcp` of
    /// /proc/net/netstat and /proc/net/snmp, non-zero ones): recoveries, probes, undos...
    /// The namespace is new for each run, so they count this run alone.
    pub sender_mib: Vec<(String, u64)>,
    /// Whether the processing of packets the element writes was steered off its CPU (RPS on
    /// the TUN device; see `Topology::steer_tun_processing`).
    pub steered: bool,
    /// The BPF controllers registered for the run (see [`controllers`]), if any.
    pub bpf: Option<serde_json::Value>,
}

/// Non-zero `Tcp`/`TcpExt` counters of the calling thread's network namespace.
fn tcp_mib() -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for file in [
        "/proc/thread-self/net/netstat",
        "/proc/thread-self/net/snmp",
    ] {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for pair in lines.chunks(2) {
            let [names, values] = pair else { continue };
            let (Some((tag, names)), Some((_, values))) =
                (names.split_once(':'), values.split_once(':'))
            else {
                continue;
            };
            if tag != "TcpExt" && tag != "Tcp" {
                continue;
            }
            for (n, v) in names.split_whitespace().zip(values.split_whitespace()) {
                if let Ok(v) = v.parse::<u64>() {
                    if v != 0 {
                        out.push((format!("{tag}.{n}"), v));
                    }
                }
            }
        }
    }
    out
}

/// One run of one concrete scenario through real Linux TCP. `params` is left empty.
///
/// Field meanings (as in the simulator, `crates/cclab-sim/src/engine.rs`):
/// - `goodput_bps`: bytes the receiving application read, per second of the flow's active
///   time (start to last byte for sized flows that completed, start to run end otherwise).
/// - `throughput_bps`: TCP payload bytes of the flow the element's bottleneck forwarded
///   (retransmissions included), per active second.
/// - `retransmits` = `tcpi_total_retrans`, `segments_sent` = `tcpi_data_segs_out`,
///   `rto_count` = `tcpi_total_rto` (kernels >= 6.7; else 0).
/// - `rtt_ms`: per-ACK RTT samples the element takes (see [`element::RttTrack`]), as the
///   simulator records them; `tcpi_min_rtt` / sampled `tcpi_rtt` only if there are none.
/// - `link`: the element's counters within the run's time window; `utilization` =
///   forwarded bytes / (rate x (end - first start)).
/// - `duration_s`: time zero (every flow connected) to the end (duration, or the last sized
///   flow's completion).
pub fn run_scenario(sc: &Scenario, opts: &KernelOptions) -> Result<RunResult, KernelError> {
    run_scenario_detailed(sc, opts).map(|r| r.result)
}

/// [`run_scenario`], also returning the element's own statistics.
pub fn run_scenario_detailed(
    sc: &Scenario,
    opts: &KernelOptions,
) -> Result<KernelRun, KernelError> {
    check_privileges()?;
    let nflows = sc.total_flows();
    if nflows as usize > addr::MAX_FLOWS {
        return Err(KernelError::Unsupported(format!(
            "{}: {nflows} flows in one run; the kernel backend takes at most {} (use --backend sim)",
            sc.name,
            addr::MAX_FLOWS
        )));
    }
    if let Some(why) = scenario_unsupported(sc) {
        return Err(KernelError::Unsupported(why));
    }
    if sc.flows.len() > addr::MAX_GROUPS {
        return Err(KernelError::Unsupported(format!(
            "{}: {} flow groups; the kernel backend takes at most {}",
            sc.name,
            sc.flows.len(),
            addr::MAX_GROUPS
        )));
    }
    // Registered before the lab and dropped after it: a BPF controller outlives its sockets.
    let ccs = controllers::prepare(&sc.flows.iter().map(|f| f.cc.as_str()).collect::<Vec<_>>())?;
    let mut plans = Vec::new();
    for (g, f) in sc.flows.iter().enumerate() {
        for _ in 0..f.count {
            plans.push(traffic::FlowPlan {
                cc: ccs.socket_name(&f.cc).to_string(),
                group: g as u32,
                start_ns: f.start_ns,
                size: f.size_bytes,
                sndbuf: sc.hosts.tcp.sndbuf,
                pacing: sc.hosts.pacing,
            });
        }
    }

    let trace = opts
        .trace
        .as_ref()
        .map(|p| TraceWriter::create(p, "kernel", &sc.name, sc.seed))
        .transpose()
        .map_err(|e| KernelError::Io(e.to_string()))?;
    let _signals = sys::SignalGuard::install();
    let mut lab = lab::Lab::create(
        lab_config(sc, opts, plans.iter().map(|p| p.group).collect()),
        trace,
    )?;
    let pin = opts.pin;
    let steered = lab.steered();
    let el_shared = lab.element().clone();
    let sh = Arc::new(traffic::Shared::new(plans.len()));
    let mut receiver = Receiver {
        sh: sh.clone(),
        handle: None,
    };

    // Receiver.
    let (tx, rx) = std::sync::mpsc::channel();
    let rcv = lab.receiver_ns().to_string();
    let (p2, s2) = (plans.clone(), sh.clone());
    let groups = sc.flows.len();
    let rcvbuf = sc.hosts.tcp.rcvbuf;
    let group_cc: Vec<Option<String>> = sc
        .flows
        .iter()
        .map(|f| controllers::receiver_cc(&f.cc, f.ecn).then(|| ccs.socket_name(&f.cc).to_string()))
        .collect();
    receiver.handle = Some(std::thread::spawn(move || {
        if pin {
            sys::place(false);
        }
        let ls = sys::enter_netns(&rcv).and_then(|_| traffic::listen(groups, rcvbuf, &group_cc));
        match ls {
            Ok(ls) => {
                let _ = tx.send(Ok(()));
                traffic::receive(ls, p2, s2)
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                Ok(())
            }
        }
    }));
    rx.recv()
        .map_err(|_| KernelError::Setup("the receiver thread died".into()))?
        .map_err(|e| KernelError::Io(format!("receiver sockets: {e}")))?;

    // Latency probes: an echo in the receiver's namespace, a sender waiting for time zero.
    let probes = probe::Probes::start(
        &sc.probes,
        sc.run_limit_ns(),
        pin,
        lab.sender_ns(),
        lab.receiver_ns(),
        sh.clone(),
    )
    .map_err(|e| KernelError::Io(format!("latency probe sockets: {e}")))?;

    // Sender: the run's timeline.
    let send_cfg = traffic::SendConfig {
        plans: plans.clone(),
        duration_ns: sc.duration_ns,
        limit_ns: sc.run_limit_ns(),
        connect_timeout_ns: opts.connect_timeout_ns,
        sample_ns: opts.sample_interval_ns,
        bin_ns: opts.series_interval_ns,
    };
    let snd = lab.sender_ns().to_string();
    let (s3, e3) = (sh.clone(), el_shared.clone());
    let steal_before = sys::steal_ms();
    let sender = std::thread::spawn(move || {
        if pin {
            sys::place(false);
        }
        sys::enter_netns(&snd).map_err(|e| KernelError::Setup(format!("entering {snd}: {e}")))?;
        let out = traffic::send(send_cfg, s3, e3)?;
        Ok::<_, KernelError>((out, tcp_mib()))
    });
    let (out, sender_mib) = sender
        .join()
        .map_err(|_| KernelError::Io("the sender thread panicked".into()))??;
    let steal_ms = steal_before.zip(sys::steal_ms()).map(|(a, b)| b - a);
    let probe_records = probes
        .finish()
        .map_err(|e| KernelError::Io(format!("latency probes: {e}")))?;
    receiver.stop();
    let el_stats = lab.stop()?;
    drop(lab);
    if let Some(sig) = out.interrupted {
        return Err(KernelError::Interrupted(sig));
    }
    let cc_used = out.cc_used.clone();
    let mut result = build_result(
        sc,
        &plans,
        &out,
        &sh,
        &el_stats,
        opts.series_interval_ns,
        steal_ms,
    );
    // The same record as the simulator's, over the same run length.
    result.probes = probe_records
        .into_iter()
        .map(|r| {
            cclab_results::ProbeRecord {
                end_ns: out.end_rel,
                ..r
            }
            .build()
        })
        .collect();
    Ok(KernelRun {
        result,
        element: el_stats,
        cc_used,
        sender_mib,
        steered,
        bpf: (!ccs.is_empty()).then(|| ccs.describe()),
    })
}

/// Stops and joins the receiver thread (also on early return).
struct Receiver {
    sh: Arc<traffic::Shared>,
    handle: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Receiver {
    fn stop(&mut self) {
        self.sh.stop.store(true, Ordering::SeqCst);
        if let Some(r) = self.handle.take() {
            let _ = r.join();
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

fn build_result(
    sc: &Scenario,
    plans: &[traffic::FlowPlan],
    out: &traffic::SendOutcome,
    sh: &traffic::Shared,
    el: &ElementStats,
    bin_ns: u64,
    lab_steal_ms: Option<f64>,
) -> RunResult {
    let t0 = sh.t0.load(Ordering::SeqCst);
    let flows = plans
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let fo = &out.flows[i];
            let ti = &fo.info;
            let done = sh.completed[i].load(Ordering::SeqCst);
            // Per-ACK samples taken by the element, as the simulator records them; with none
            // (no ACK got through), the sender's smoothed RTT and its min RTT.
            let (rtt, rtt_min_ns) = match el.flow_rtt.get(i).filter(|h| h.count() > 0) {
                Some(h) => (h.clone(), None),
                None => {
                    let min = if ti.min_rtt > 0 && ti.min_rtt != u32::MAX {
                        Some(ti.min_rtt as u64 * 1000)
                    } else {
                        fo.rtt.min()
                    };
                    (fo.rtt.clone(), min)
                }
            };
            FlowRecord {
                cc: p.cc.clone(),
                group: p.group,
                start_ns: p.start_ns,
                size_bytes: p.size,
                completed_ns: (done != 0).then(|| done.saturating_sub(t0)),
                delivered_bytes: sh.delivered[i].load(Ordering::SeqCst),
                wire_payload_bytes: el.flow_payload_bytes.get(i).copied().unwrap_or(0),
                segments_sent: ti.data_segs_out as u64,
                retransmits: ti.total_retrans as u64,
                rto_count: if fo.info_len >= sys::TCPI_TOTAL_RTO_END {
                    ti.total_rto as u64
                } else {
                    0
                },
                rtt,
                rtt_min_ns,
                ce_marks: el.flow_ce_marks.get(i).copied().unwrap_or(0),
                cwr_events: el.flow_cwr.get(i).copied().unwrap_or(0),
                ecn_in: el
                    .flow_ecn_in
                    .get(i)
                    .filter(|c| c[1] + c[2] + c[3] > 0)
                    .map(|c| EcnCounts {
                        not_ect: c[0],
                        ect1: c[1],
                        ect0: c[2],
                        ce: c[3],
                    }),
                accecn: (fo.info_len >= sys::TCPI_ACCECN_END
                    && (ti.accecn_opt_seen != 0
                        || ti.delivered_e0_bytes | ti.delivered_e1_bytes | ti.delivered_ce_bytes
                            != 0))
                    .then_some(AccEcnCounts {
                        delivered_ce_segments: ti.delivered_ce as u64,
                        delivered_ect0_bytes: ti.delivered_e0_bytes as u64,
                        delivered_ect1_bytes: ti.delivered_e1_bytes as u64,
                        delivered_ce_bytes: ti.delivered_ce_bytes as u64,
                    }),
            }
        })
        .collect();
    let desc = &sc.link.path;
    let first_start = plans.iter().map(|p| p.start_ns).min().unwrap_or(0);
    let link = LinkRecord {
        rate_bps: desc.mean_bps(first_start, out.end_rel),
        queues: el.queues.clone(),
        forwarded_pkts: el.forwarded_pkts,
        forwarded_bytes: el.forwarded_bytes,
        drops_buffer: el.drops_buffer,
        drops_random: el.drops_random,
        drops_ack: el.drops_ack,
        marks: el.marks,
        queue_delay: el.queue_delay.clone(),
        elements: el.elements.clone(),
    };
    let series = TimeSeries {
        interval_s: bin_ns as f64 / 1e9,
        t_s: out.t_s.clone(),
        flows: out
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| FlowSeries {
                id: i as u32,
                cc: plans[i].cc.clone(),
                goodput_bps: f.goodput_bps.clone(),
                cwnd_pkts: f.cwnd.clone(),
                inflight_pkts: f.inflight.clone(),
                pacing_rate_bps: f.pacing_bps.clone(),
                srtt_ms: f.srtt_ms.clone(),
                delivery_rate_bps: f.delivery_bps.clone(),
            })
            .collect(),
        link_queue_bytes: out.link_queue.clone(),
        queue_delay_ms: el
            .queue_bins_ms
            .iter()
            .map(|(k, v)| {
                let mut v = v.clone();
                v.resize(out.t_s.len(), 0.0);
                (k.clone(), v)
            })
            .collect(),
        link_rate_bps: desc.rate_series(&out.t_s),
    };
    RunRecord {
        seed: sc.seed,
        end_ns: out.end_rel,
        flows,
        link,
        series: Some(series),
        lab: Some(cclab_results::LabConditions {
            steal_ms: lab_steal_ms,
            cpus: sys::online_cpus(),
            element_stalls: el.stalls,
            retries: 0,
        }),
    }
    .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The element's buffer is the scenario's `link.buffer` resolved when the lab is built,
    /// so a buffer set after loading (as the lab tests do) is the one the element gets.
    #[test]
    fn the_elements_buffer_is_resolved_when_the_lab_is_built() {
        let text = "name = \"b\"\nduration = \"1s\"\n[link]\nrate = \"100mbit\"\nrtt = \"10ms\"\n[[flows]]\ncc = \"cubic\"\n";
        let mut sc = cclab_scenario::ScenarioFile::from_str(text, "b.toml")
            .unwrap()
            .expand()
            .unwrap()
            .remove(0)
            .scenario;
        let opts = KernelOptions::default();
        let el = lab_config(&sc, &opts, vec![0]).element;
        assert_eq!(el.buffer_bytes, 125_000, "1 BDP of 100 Mbit/s x 10 ms");
        assert_eq!(el.link, sc.link.path);
        sc.link.buffer = cclab_scenario::Buffer::Bytes(18_000);
        assert_eq!(lab_config(&sc, &opts, vec![0]).element.buffer_bytes, 18_000);
        sc.link.buffer = cclab_scenario::Buffer::Packets(10);
        assert_eq!(lab_config(&sc, &opts, vec![0]).element.buffer_bytes, 15_000);
    }

    /// `ecn = "accecn"` runs in the lab only for a controller that negotiates AccECN itself:
    /// 6.18 refuses `tcp_ecn = 3`, so CUBIC cannot ask for it; one line says so.
    #[test]
    fn accecn_for_a_classic_controller_is_refused_in_one_line() {
        let sc = |cc: &str| {
            let text = format!(
                "name = \"a\"\nduration = \"1s\"\n[link]\nrate = \"10mbit\"\nrtt = \"10ms\"\n[[flows]]\ncc = \"{cc}\"\necn = \"accecn\"\n"
            );
            cclab_scenario::ScenarioFile::from_str(&text, "a.toml")
                .unwrap()
                .expand()
                .unwrap()
                .remove(0)
                .scenario
        };
        let why = scenario_unsupported(&sc("cubic")).expect("refused");
        assert!(
            why.contains("flows.0") && why.contains("tcp_ecn = 3") && !why.contains('\n'),
            "{why}"
        );
        assert_eq!(scenario_unsupported(&sc("prague")), None);
    }
}
