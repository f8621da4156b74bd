use crate::hosts::{HostLatency, HostWake};
use cclab_core::cc::Params;
use cclab_core::host::HostTcp;
use cclab_core::Nanos;
use cclab_path::LinkDesc;

/// One flow (a `[[flows]]` group with `count = n` becomes n of these).
#[derive(Clone, Debug)]
pub struct SimFlow {
    /// The controller and its parameters.
    pub cc: Params,
    /// `[[flows]]` group index, reported in results.
    pub group: u32,
    pub start_ns: Nanos,
    /// Bytes to transfer; `None` = bulk until the end of the run.
    pub size: Option<u64>,
    pub rtt_extra_ns: Nanos,
    pub init_cwnd: u32,
    /// Force pacing on/off; `None` = the controller's choice (BBR paces, loss-based do not).
    pub pacing: Option<bool>,
    /// The hosts' TCP settings (socket buffers, `rto_min`, ...; `cclab_core::host`): each
    /// acts at the end it belongs to (receive buffer at the receiver, send buffer at the
    /// sender).
    pub host: HostTcp,
    /// The flow asks for ECN (`flows.ecn`).
    pub ecn: bool,
    /// The flow asks for Accurate ECN feedback (`flows.ecn = "accecn"`; `ecn` is true too).
    pub accecn: bool,
}

/// One latency probe group (`[[flows]]` of `kind = "probe"`; see [`crate::probe`]).
#[derive(Clone, Debug)]
pub struct SimProbe {
    /// `[[flows]]` group index, reported in results.
    pub group: u32,
    pub start_ns: Nanos,
    pub interval_ns: Nanos,
    /// Payload bytes of each datagram (UDP/IP headers come on top).
    pub size_bytes: u32,
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The path, as the scenario's `[link]` describes it (`cclab_path` builds it).
    pub link: LinkDesc,
    /// Bottleneck buffer, bytes (the scenario's `link.buffer` resolved on the link).
    pub buffer_bytes: u64,
    /// Payload bytes per segment.
    pub mss: u32,
    pub flows: Vec<SimFlow>,
    /// Latency probes beside the flows.
    pub probes: Vec<SimProbe>,
    /// Run length; `None` = until every (sized) flow completes, capped at `max_duration_ns`.
    pub duration_ns: Option<Nanos>,
    pub max_duration_ns: Nanos,
    pub seed: u64,
    /// Time-series bin width, ns (0 = no series).
    pub series_interval_ns: Nanos,
    pub delayed_ack: bool,
    /// Senders send TSO/GSO bursts and defer as Linux does (`cclab_core::sender`).
    pub tso: bool,
    /// Receivers coalesce bursts that arrive whole (GRO, `cclab_core::receiver`); see
    /// [`gro_for_rate`].
    pub gro: bool,
    /// The hosts' kernel tick rate (`CONFIG_HZ`): jiffies-based timers and clocks of the
    /// senders and controllers. [`cclab_core::cc::DEFAULT_HZ`] (250) unless set.
    pub hz: u32,
    /// How the end hosts' CPUs wake up (see [`HostWake`]); `None` = hosts answer instantly.
    pub host_wake: Option<HostWake>,
    /// How long the end hosts take to handle each packet (see [`HostLatency`]); `None` =
    /// no time at all (the default; scenarios set it with `hosts.latency` and
    /// `hosts.jitter`).
    pub host_latency: Option<HostLatency>,
    /// The sending host's interface rate, bit/s (`hosts.nic_rate`; see [`crate::hosts::Nic`]);
    /// `None` = buffers are freed as soon as they are sent, as on the kernel lab's veth.
    pub nic_rate_bps: Option<f64>,
}

/// Link rate above which receivers coalesce (GRO), bit/s. Below it a full-size packet takes
/// more than 60 us on the bottleneck, longer than a receiving host's poll interval, so
/// segments are taken in one at a time; above it a burst that crossed the bottleneck back
/// to back is one buffer. (The kernel lab switches to GSO super-packets at the same rate.)
pub const GRO_MIN_RATE_BPS: f64 = 200e6;

/// Whether receivers on a link of `rate_bps` coalesce bursts.
pub fn gro_for_rate(rate_bps: f64) -> bool {
    rate_bps > GRO_MIN_RATE_BPS
}

impl SimConfig {
    /// A single-flow configuration, handy in tests and benchmarks; `cc` is a registered
    /// controller's name (panics otherwise). Its hosts have socket buffers big enough never
    /// to limit the window.
    pub fn single(
        cc: &str,
        rate_bps: f64,
        rtt_ns: Nanos,
        buffer_bdp: f64,
        loss: f64,
        duration_ns: Nanos,
    ) -> Self {
        let bdp = rate_bps / 8.0 * rtt_ns as f64 / 1e9;
        let buffer_bytes = (bdp * buffer_bdp).round() as u64;
        SimConfig {
            link: LinkDesc {
                rate_bps,
                rtt_ns,
                loss,
                ack_loss: 0.0,
                ecn_threshold_ns: None,
                loss_burst: 1.0,
                ..LinkDesc::default()
            },
            buffer_bytes,
            mss: 1448,
            flows: vec![SimFlow {
                cc: cclab_core::cc::by_name(cc).unwrap_or_else(|| panic!("no controller {cc}")),
                group: 0,
                start_ns: 0,
                size: None,
                rtt_extra_ns: 0,
                init_cwnd: 10,
                pacing: None,
                // Socket buffers that never bind (`SO_SNDBUF`/`SO_RCVBUF` of 4 x (BDP +
                // buffer)), as a window-limit-free experiment wants.
                host: {
                    let b = cclab_scenario::socket_buffer_for(bdp, buffer_bytes);
                    HostTcp {
                        sndbuf: Some(b),
                        rcvbuf: Some(b),
                        ..HostTcp::default()
                    }
                },
                ecn: false,
                accecn: false,
            }],
            probes: Vec::new(),
            duration_ns: Some(duration_ns),
            max_duration_ns: 300 * 1_000_000_000,
            seed: 1,
            series_interval_ns: 100_000_000,
            delayed_ack: true,
            tso: true,
            gro: gro_for_rate(rate_bps),
            hz: cclab_core::cc::DEFAULT_HZ,
            host_wake: Some(HostWake::LAB),
            host_latency: None,
            nic_rate_bps: None,
        }
    }
}
