use cclab_core::cc::Params;
use cclab_core::Nanos;

/// The bottleneck and the path around it.
#[derive(Clone, Debug)]
pub struct SimLink {
    /// Bottleneck rate, bits per second (of IP packets).
    pub rate_bps: f64,
    /// Base round-trip propagation delay, ns.
    pub rtt_ns: Nanos,
    /// Drop-tail buffer, bytes.
    pub buffer_bytes: u64,
    /// Probability that a data packet is lost (Bernoulli).
    pub loss: f64,
    /// Probability that an ACK is lost (Bernoulli).
    pub ack_loss: f64,
    /// Payload bytes per segment.
    pub mss: u32,
}

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
    /// The receiver's window clamp, bytes (see [`rcv_window_clamp`]).
    pub rcv_window_clamp: u64,
}

/// The receive-window clamp Linux derives from a socket buffer of `sockbuf` bytes: the
/// kernel doubles `SO_RCVBUF` for overhead and advertises the payload share of it
/// (`tcp_win_from_space()`, `scaling_ratio`), which the kernel lab measured as 5/8 for
/// full-size segments: a 4 MiB buffer opens to 5 MiB.
pub fn rcv_window_clamp(sockbuf: u64) -> u64 {
    sockbuf * 2 * 5 / 8
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub link: SimLink,
    pub flows: Vec<SimFlow>,
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
}

/// Every packet takes the end hosts some time to handle.
///
/// Between the wire and the TCP state machine lie the driver, the softirq that runs the
/// stack (woken by an interrupt, or on another CPU by an IPI), the socket lock, and on the
/// way out the qdisc and driver again. A receiver answers a segment, and a sender answers an
/// ACK, tens of microseconds after it arrived, and now and then hundreds. The model puts
/// both hosts' time on the ACK path, where the kernel's RTT samples see it too: each ACK
/// reaches the sender's TCP `base_ns` plus an exponentially distributed extra of mean
/// `mean_ns` after the path's delay, and never before the ACK sent ahead of it (a host
/// handles its packets in order, so one slow packet holds up the next, and the ACKs behind
/// it arrive as a train). On paths of a few milliseconds and more this only adds its mean to
/// the RTT; below a millisecond it is 10-20% of the RTT, and its spread decides how bursts
/// meet at a small buffer (docs/fidelity.md, item 15).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostLatency {
    /// The least time the two hosts take together, ns.
    pub base_ns: Nanos,
    /// Mean of the exponentially distributed rest, ns.
    pub mean_ns: Nanos,
}

impl HostLatency {
    /// The kernel lab's hosts (`[hosts] latency = "40us"`, `jitter = "40us"` in the
    /// calibration scenarios): 40 us + Exp(40 us), p10/p50/p90/p99 44/68/132/224 us. The
    /// link element timed each host: from writing a segment to reading its ACK (the
    /// receiver) p10/p50/p90/p99 24/42/65/252 us at 500 Mbit/s x 1 ms and 26/46/85/752 us at
    /// 500 Mbit/s x 0.5 ms; from writing an ACK to reading the data it released (the
    /// sender) 26/38/60/79 and 30/41/56/92 us. A lighter tail (20 us + Exp(20 us) per host)
    /// fits the medians as well but loses the ACK trains that inflate BBR's bandwidth
    /// samples at 1 Gbit/s (docs/fidelity.md, item 15).
    pub const LAB: HostLatency = HostLatency {
        base_ns: 40_000,
        mean_ns: 40_000,
    };

    /// The hosts' time for one ACK, drawn from `rng`.
    pub fn sample(&self, rng: &mut cclab_link::Rng) -> Nanos {
        let u = 1.0 - rng.next_f64(); // in (0, 1]
        self.base_ns + (-u.ln() * self.mean_ns as f64) as Nanos
    }
}

/// An idle host is slow to answer its first packet.
///
/// A CPU with nothing to do goes to sleep (a C-state on bare metal; `HLT` and a trip through
/// the hypervisor's scheduler in a virtual machine), and the interrupt of the next packet
/// that arrives finds it asleep: that packet is handled `wake_ns` late, together with any
/// that arrived meanwhile. In slow start, every round begins after such a pause: its first
/// ACKs reach the sender as a batch and release their segments back to back, so each round
/// starts with a burst of 4-6 segments where an instant host sends pairs (see
/// docs/fidelity.md). A host that was busy less than `idle_ns` ago is still awake (polling
/// idle loops, the hypervisor's halt polling) and answers at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostWake {
    /// Idle time after which the CPU sleeps, ns.
    pub idle_ns: Nanos,
    /// Extra time to handle a packet that finds it asleep, ns.
    pub wake_ns: Nanos,
    /// Senders and receivers share one CPU (the kernel lab: receive steering puts both
    /// endpoints' TCP work on one CPU), so either's work keeps it awake.
    pub shared_cpu: bool,
}

impl HostWake {
    /// The kernel lab's hosts (a 2-vCPU KVM guest whose endpoints share one CPU): the sender
    /// answers the first ACK after a slow-start round's pause about 100 us later than the
    /// others; the idle time is bounded, not measured (docs/fidelity.md, item 13). The
    /// default of a scenario's `[hosts]`.
    pub const LAB: HostWake = HostWake {
        idle_ns: cclab_scenario::DEFAULT_WAKE_IDLE_NS,
        wake_ns: cclab_scenario::DEFAULT_WAKE_NS,
        shared_cpu: true,
    };
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
    /// controller's name (panics otherwise).
    pub fn single(
        cc: &str,
        rate_bps: f64,
        rtt_ns: Nanos,
        buffer_bdp: f64,
        loss: f64,
        duration_ns: Nanos,
    ) -> Self {
        let bdp = rate_bps / 8.0 * rtt_ns as f64 / 1e9;
        SimConfig {
            link: SimLink {
                rate_bps,
                rtt_ns,
                buffer_bytes: (bdp * buffer_bdp).round() as u64,
                loss,
                ack_loss: 0.0,
                mss: 1448,
            },
            flows: vec![SimFlow {
                cc: cclab_core::cc::by_name(cc).unwrap_or_else(|| panic!("no controller {cc}")),
                group: 0,
                start_ns: 0,
                size: None,
                rtt_extra_ns: 0,
                init_cwnd: 10,
                pacing: None,
                rcv_window_clamp: rcv_window_clamp(cclab_scenario::socket_buffer_for(
                    bdp,
                    (bdp * buffer_bdp).round() as u64,
                )),
            }],
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
        }
    }
}
