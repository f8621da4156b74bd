//! The user-space link element: reads IP packets from a TUN device in the router namespace,
//! runs them through the scenario's path, the same chains of elements the simulator runs
//! (`cclab_path`: random loss -> rate-limited drop-tail bottleneck -> per-group propagation
//! delay in the data direction; ACK loss -> per-group delay in the ACK direction), and writes
//! them back into the TUN device, from where the router's main routing table forwards them.
//!
//! Its parts: `driver` (the element's thread: the TUN device read, the path pumped, packets
//! written back, the wait for the next event, the statistics at the end), `path` (a packet's
//! way through the data and ACK chains, with the trace, RTT and turnaround it feeds),
//! `counters` (the queues' delays and the chains' counters within the counting window),
//! `packet` (the packet on the path: buffers, GSO segmentation, ECN marking, checksums),
//! `parse` (the IPv4/TCP headers read) and `rtt` (the per-ACK RTT each flow shows).

mod counters;
mod driver;
mod packet;
mod parse;
mod path;
mod rtt;
#[cfg(test)]
mod tests;

pub use driver::{run, spawn};
pub use rtt::RttTrack;

use crate::sys;
use cclab_path::LinkDesc;
use cclab_results::Histogram;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// How the element waits for its next event (packet arrival or a packet falling due).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ElementTiming {
    /// Never sleep: poll the TUN device and the clock in a loop (one core at 100%).
    Spin,
    /// Sleep in `ppoll` until the next due time or a packet (timer slack 1 ns).
    Sleep,
    /// Spin while packets keep arriving (one within the last 2 ms); when the path is idle,
    /// sleep in `ppoll` until shortly (100 us) before the next due time, then spin.
    Hybrid,
}

/// What the element emulates.
#[derive(Clone, Debug)]
pub struct ElementConfig {
    /// The path, as the scenario's `[link]` describes it (`cclab_path` builds it).
    pub link: LinkDesc,
    /// Bottleneck buffer, bytes (the scenario's `link.buffer` resolved on the link).
    pub buffer_bytes: u64,
    pub seed: u64,
    /// Extra RTT of each flow group, ns.
    pub group_extra_ns: Vec<u64>,
    /// Group of each flow (flow i uses source port `addr::FLOW_PORT_BASE + i`).
    pub flow_group: Vec<u32>,
    /// Groups whose controller sends ECT(1) (L4S: Prague). Linux 6.18 sends a connection's
    /// data ECT(0) whatever its controller asks (only the SYN can be ECT(1)), so the element
    /// rewrites their ECT(0) data packets to ECT(1) as they arrive, before any queue sees
    /// them: what a kernel with the L4S team's `TCP_ECN_ECT_1` would have sent.
    pub group_ect1: Vec<bool>,
    pub timing: ElementTiming,
    /// Run the element thread under SCHED_FIFO.
    pub realtime: bool,
    /// How packets cross the TUN device (see [`ElementMode`]).
    pub mode: ElementMode,
    /// Pin the element to a CPU of its own (see [`sys::placement`]); the caller pins the
    /// endpoints' threads to the others.
    pub pin: bool,
    /// The flows' MSS, bytes (trace sequence numbers count segments of this size).
    pub mss: u32,
    /// Time-series bin, ns (queueing delays are averaged per bin from the run's time zero).
    pub bin_ns: u64,
}

/// How packets cross the element's TUN device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ElementMode {
    /// TUN without offloads: the router's stack software-segments every GSO super-packet,
    /// the element sees only MTU-sized packets (one read and one write per segment).
    Segments,
    /// TUN with `IFF_VNET_HDR` and `TSO4`/`CSUM` offload: GSO super-packets cross whole
    /// (one read and one write per up to ~44 segments). Random loss is still drawn per
    /// segment; a super-packet that loses a segment, or does not fit the buffer whole, is
    /// split into its segments in user space (headers, sequence numbers, checksums fixed).
    /// The bottleneck serialises a super-packet as the sum of its segments' wire sizes.
    Gso,
}

impl ElementMode {
    pub fn name(self) -> &'static str {
        match self {
            ElementMode::Segments => "segments",
            ElementMode::Gso => "gso",
        }
    }
}

/// Open the element's TUN device `name` for `mode` in the calling thread's namespace.
pub fn open_tun(name: &str, mode: ElementMode) -> io::Result<OwnedFd> {
    match mode {
        ElementMode::Segments => sys::open_tun(name),
        ElementMode::Gso => sys::open_tun_gso(name).map(|(fd, _)| fd),
    }
}

/// State shared between the element thread and the run.
#[derive(Debug, Default)]
pub struct ElementShared {
    pub stop: AtomicBool,
    /// Counting window (CLOCK_MONOTONIC ns): statistics cover packets in [start, end].
    pub count_from: AtomicU64,
    pub count_until: AtomicU64,
    /// Bottleneck backlog (bytes), updated every loop.
    pub backlog: AtomicU64,
}

impl ElementShared {
    pub fn new() -> Self {
        let s = ElementShared::default();
        s.count_from.store(u64::MAX, Ordering::Relaxed);
        s.count_until.store(u64::MAX, Ordering::Relaxed);
        s
    }
}

/// What the element saw within the counting window.
#[derive(Clone, Debug, Default)]
pub struct ElementStats {
    pub forwarded_pkts: u64,
    pub forwarded_bytes: u64,
    pub drops_buffer: u64,
    pub drops_random: u64,
    pub drops_ack: u64,
    /// Data packets (TCP with payload, or non-TCP) that entered the path.
    pub data_pkts_in: u64,
    /// Pure ACKs that entered the ACK direction.
    pub acks_in: u64,
    /// Bottleneck queueing delay, ns.
    pub queue_delay: Histogram,
    /// Queueing delay of each queueing element (`"data.queue"`, `"data.shaper"`), ns.
    pub queues: BTreeMap<String, Histogram>,
    /// Mean queueing delay of each queueing element per time-series bin from the run's time
    /// zero, ms.
    pub queue_bins_ms: BTreeMap<String, Vec<f64>>,
    /// How late packets left the delay line relative to their due time, ns.
    pub lateness: Histogram,
    /// Receiver turnaround, ns: from the element writing a data segment to it reading the ACK
    /// that acknowledges exactly up to that segment's end (the receiving host's stack, its
    /// ACK decision and the way back; delayed ACKs included).
    pub turnaround: Histogram,
    /// Times the element released packets more than [`STALL_NS`] late (its thread did not
    /// run in time): the lab's own timing faults, each of which bunches packets.
    pub stalls: u64,
    /// TCP payload bytes of each flow that crossed the bottleneck (retransmissions included).
    pub flow_payload_bytes: Vec<u64>,
    /// Segments of each flow the bottleneck marked CE.
    pub flow_ce_marks: Vec<u64>,
    /// Data segments of each flow that carried CWR (one per window reduction for ECN).
    pub flow_cwr: Vec<u64>,
    /// Data segments of each flow by the ECN field they arrived with (after the ECT(1)
    /// stand-in, [`ElementConfig::group_ect1`]), indexed by the field: Not-ECT, ECT(1),
    /// ECT(0), CE.
    pub flow_ecn_in: Vec<[u64; 4]>,
    /// Data segments the bottleneck marked CE.
    pub marks: u64,
    /// Largest packet read from the TUN device (shows whether super-packets reach the element).
    pub max_packet: u32,
    /// Packets of all kinds read from the TUN device (whole run, setup included).
    pub packets_read: u64,
    /// GSO super-packets split into segments because one of them was lost or the whole did
    /// not fit the buffer (GSO mode).
    pub gso_splits: u64,
    /// Data packets read by segment count: `burst_segs[n]` packets of n segments (n >= 64
    /// in the last slot). Sender TSO bursts in GSO mode; all 1 in segments mode.
    pub burst_segs: Vec<u64>,
    /// Per-ACK RTT samples of each flow, ns, measured by the element (see [`RttTrack`]).
    pub flow_rtt: Vec<Histogram>,
    /// Each path element's counters within the counting window (`"data.queue"` ->
    /// `{"dropped": 3, ...}`).
    pub elements: BTreeMap<String, BTreeMap<String, u64>>,
}

/// Lateness beyond which a release counts as a stall of the element (its thread did not run:
/// a preempted vCPU, softirq work), ns. Normal wake-up jitter stays far below it.
pub const STALL_NS: u64 = 500_000;
