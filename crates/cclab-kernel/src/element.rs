//! The user-space link element: reads IP packets from a TUN device in the router namespace,
//! runs them through the scenario's path, the same chains of elements the simulator runs
//! (`cclab_path`: random loss -> rate-limited drop-tail bottleneck -> per-group propagation
//! delay in the data direction; ACK loss -> per-group delay in the ACK direction), and writes
//! them back into the TUN device, from where the router's main routing table forwards them.

use crate::addr;
use crate::sys;
use cclab_path::{Chain, Departure, LinkDesc, Packet, PathDesc, BOTTLENECK};
use cclab_results::trace::TraceWriter;
use cclab_results::Histogram;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

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
    pub seed: u64,
    /// Extra RTT of each flow group, ns.
    pub group_extra_ns: Vec<u64>,
    /// Group of each flow (flow i uses source port `addr::FLOW_PORT_BASE + i`).
    pub flow_group: Vec<u32>,
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

thread_local! {
    /// Packet buffers of the element's thread, reused: a FIFO of live allocations that glibc
    /// keeps trimming and regrowing cost millisecond stalls at 50 ms delay.
    static POOL: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An empty packet buffer.
fn buffer() -> Vec<u8> {
    let mut b = POOL
        .with(|p| p.borrow_mut().pop())
        .unwrap_or_else(|| Vec::with_capacity(2048));
    b.clear();
    b
}

/// Give a packet buffer back for reuse.
fn recycle(d: Vec<u8>) {
    if d.capacity() <= 4096 {
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < 1 << 16 {
                p.push(d);
            }
        });
    }
}

/// An IP packet on the path (a whole GSO super-packet in GSO mode).
struct Pkt {
    /// What is written back to the TUN device (with the vnet header in GSO mode).
    data: Vec<u8>,
    /// Bytes of vnet header before the IP packet.
    vnet: usize,
    flow: Option<u32>,
    payload: u32,
    /// Delay class: the flow's group, or the last class for packets of no flow.
    line: usize,
    /// Bytes on the wire: the IP packet, or the sum of a super-packet's segments.
    wire: u32,
    /// TCP sequence number of the first payload byte (data packets).
    seq: u32,
    /// Segments (more than one for a GSO super-packet) and their payload size.
    segs: u32,
    mss: u32,
    /// IP and TCP header lengths.
    ihl: usize,
    doff: usize,
    /// Random loss leaves it alone (see [`Packet::loss_exempt`]).
    exempt: bool,
    /// The bottleneck marked it CE.
    marked: bool,
    /// Flow-queue key: the flow's index + 1, or a hash of the addresses and ports.
    key: u64,
}

impl Pkt {
    /// TCP sequence number after the payload.
    fn end_seq(&self) -> u32 {
        self.seq.wrapping_add(self.payload)
    }
}

impl Packet for Pkt {
    fn wire_len(&self) -> u32 {
        self.wire
    }
    fn class(&self) -> usize {
        self.line
    }
    fn segments(&self) -> u32 {
        self.segs
    }
    fn segment_wire_len(&self) -> u32 {
        if self.segs > 1 {
            self.mss + (self.ihl + self.doff) as u32
        } else {
            self.wire
        }
    }
    /// Cut a super-packet into its segments, headers fixed (see `tcp_segment`).
    fn split(self, out: &mut Vec<Self>) {
        if self.segs <= 1 {
            out.push(self);
            return;
        }
        let raw = &self.data[self.vnet..];
        let hl = (self.ihl + self.doff) as u32;
        for i in 0..self.segs as usize {
            let mut d = buffer();
            tcp_segment(
                raw,
                self.ihl,
                self.doff,
                self.mss as usize,
                i,
                self.segs as usize,
                self.vnet,
                &mut d,
            );
            let wire = (d.len() - self.vnet) as u32;
            out.push(Pkt {
                data: d,
                vnet: self.vnet,
                flow: self.flow,
                payload: wire - hl,
                line: self.line,
                wire,
                seq: self.seq.wrapping_add(i as u32 * self.mss),
                segs: 1,
                mss: self.mss,
                ihl: self.ihl,
                doff: self.doff,
                exempt: self.exempt,
                marked: self.marked,
                key: self.key,
            });
        }
        recycle(self.data);
    }
    fn loss_exempt(&self) -> bool {
        self.exempt
    }
    fn flow_key(&self) -> u64 {
        self.key
    }
    /// The IPv4 header's ECN field is ECT(0), ECT(1) or CE.
    fn is_ect(&self) -> bool {
        self.data.len() >= self.vnet + 20 && self.data[self.vnet + 1] & 0x03 != 0
    }
    /// Set CE in the IPv4 header and recompute its checksum (a GSO super-packet's header is
    /// copied to every segment, so all of them arrive marked).
    fn set_ce(&mut self) {
        let ip = &mut self.data[self.vnet..];
        if ip.len() < self.ihl || ip[1] & 0x03 == 0x03 {
            self.marked = true;
            return;
        }
        ip[1] |= 0x03;
        ip[10] = 0;
        ip[11] = 0;
        let c = csum_fold(csum_add(0, &ip[..self.ihl]));
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        self.marked = true;
    }
}

fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
fn seq_le(a: u32, b: u32) -> bool {
    !seq_lt(b, a)
}

struct Sent {
    start: u32,
    end: u32,
    t: u64,
    sacked: bool,
    retx: bool,
}

/// Per-ACK RTT of one flow as the element sees it, with the sender's rules
/// (`tcp_ack_update_rtt`, and the simulator's `rtt_sample`): each first transmission of a
/// segment is stamped when it reaches the element; an ACK that newly acknowledges
/// segments (cumulatively, or by a SACK block) gives one sample, from the most recently sent
/// of them, to the ACK's arrival; the cumulative part gives none when it covers a
/// retransmitted segment (Karn), SACKed retransmissions give none. The caller adds the ACK's
/// remaining one-way delay (ACKs are sampled when they reach the element).
#[derive(Default)]
pub struct RttTrack {
    q: std::collections::VecDeque<Sent>,
    max_end: Option<u32>,
}

impl RttTrack {
    /// A data segment `[start, end)` reached the element at `now`.
    pub fn on_data(&mut self, start: u32, end: u32, now: u64) {
        match self.max_end {
            Some(m) if seq_le(end, m) => {
                // A retransmission: its segments give no cumulative sample.
                let i = self.q.partition_point(|s| seq_le(s.end, start));
                for s in self.q.range_mut(i..) {
                    if seq_le(end, s.start) {
                        break;
                    }
                    s.retx = true;
                }
            }
            _ => {
                let st = match self.max_end {
                    Some(m) if seq_lt(start, m) => m,
                    _ => start,
                };
                if self.q.len() >= 1 << 20 {
                    self.q.pop_front();
                }
                self.q.push_back(Sent {
                    start: st,
                    end,
                    t: now,
                    sacked: false,
                    retx: false,
                });
                self.max_end = Some(end);
            }
        }
    }

    /// An ACK (cumulative `ack`, SACK blocks) reached the element at `now`: the RTT sample.
    pub fn on_ack(&mut self, ack: u32, sacks: &[(u32, u32)], now: u64) -> Option<u64> {
        let mut cum_t: Option<u64> = None;
        let mut cum_retx = false;
        while let Some(f) = self.q.front() {
            if !seq_le(f.end, ack) {
                break;
            }
            let f = self.q.pop_front().expect("front");
            if !f.sacked {
                if f.retx {
                    cum_retx = true;
                } else {
                    cum_t = Some(cum_t.map_or(f.t, |x| x.max(f.t)));
                }
            }
        }
        let mut sack_t: Option<u64> = None;
        for &(l, r) in sacks {
            if seq_le(r, ack) {
                continue; // D-SACK
            }
            let i = self.q.partition_point(|s| seq_lt(s.start, l));
            for s in self.q.range_mut(i..) {
                if seq_lt(r, s.end) {
                    break;
                }
                if !s.sacked {
                    s.sacked = true;
                    if !s.retx {
                        sack_t = Some(sack_t.map_or(s.t, |x| x.max(s.t)));
                    }
                }
            }
        }
        let t = sack_t.or(if cum_retx { None } else { cum_t })?;
        Some(now.saturating_sub(t))
    }
}

/// Internet checksum (ones' complement sum) of `data`, starting from `sum`.
fn csum_add(mut sum: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        sum += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
    }
    let mut rest = chunks.remainder();
    if rest.len() >= 2 {
        sum += u16::from_be_bytes([rest[0], rest[1]]) as u64;
        rest = &rest[2..];
    }
    if let Some(&b) = rest.first() {
        sum += (b as u64) << 8;
    }
    sum
}

fn csum_fold(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Segment `i` of a TCP/IPv4 GSO super-packet `raw` (IP header first): headers copied and
/// fixed (total length, IP id + i, sequence number, CWR only on the first, PSH/FIN only on
/// the last, both checksums computed in full), payload `[i*mss, (i+1)*mss)`. Appended to
/// `out` after `vnet` zero bytes (a vnet header without offload requests).
#[allow(clippy::too_many_arguments)]
fn tcp_segment(
    raw: &[u8],
    ihl: usize,
    doff: usize,
    mss: usize,
    i: usize,
    segs: usize,
    vnet: usize,
    out: &mut Vec<u8>,
) {
    let hl = ihl + doff;
    let total = raw.len() - hl;
    let s = i * mss;
    let e = (s + mss).min(total);
    out.clear();
    out.resize(vnet, 0);
    out.extend_from_slice(&raw[..hl]);
    out.extend_from_slice(&raw[hl + s..hl + e]);
    let p = &mut out[vnet..];
    let tot = (hl + e - s) as u16;
    p[2..4].copy_from_slice(&tot.to_be_bytes());
    let id = u16::from_be_bytes([p[4], p[5]]).wrapping_add(i as u16);
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[10] = 0;
    p[11] = 0;
    let c = csum_fold(csum_add(0, &p[..ihl]));
    p[10..12].copy_from_slice(&c.to_be_bytes());
    let (ip, tcp) = p.split_at_mut(ihl);
    let seq = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]).wrapping_add(s as u32);
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    if i > 0 {
        tcp[13] &= !0x80; // CWR
    }
    if i + 1 < segs {
        tcp[13] &= !0x09; // FIN, PSH
    }
    tcp[16] = 0;
    tcp[17] = 0;
    let len = tcp.len() as u64;
    let pseudo = csum_add(csum_add(0, &ip[12..20]), &[0, libc::IPPROTO_TCP as u8]) + len;
    let c = csum_fold(csum_add(pseudo, tcp));
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
}

#[derive(PartialEq)]
enum Dir {
    Data,
    Ack,
}

struct Parsed {
    dir: Dir,
    flow: Option<u32>,
    /// The flow group of the receiver-side address (destination of data, source of ACKs):
    /// what places traffic of no cclab flow (`cclab lab up`) on its group's path.
    group: Option<usize>,
    tcp: bool,
    payload: u32,
    /// SYN, FIN or RST.
    control: bool,
    syn: bool,
    ihl: usize,
    doff: usize,
    seq: u32,
    ack: u32,
    ack_flag: bool,
    /// The TCP CWR flag.
    cwr: bool,
    sacks: [(u32, u32); 4],
    nsacks: usize,
}

/// `p` is one IP packet; for a GSO super-packet its length stands for the whole.
fn parse(p: &[u8], nflows: usize) -> Parsed {
    let mut r = Parsed {
        dir: Dir::Data,
        flow: None,
        group: None,
        tcp: false,
        payload: 0,
        control: false,
        syn: false,
        ihl: 20,
        doff: 20,
        seq: 0,
        ack: 0,
        ack_flag: false,
        cwr: false,
        sacks: [(0, 0); 4],
        nsacks: 0,
    };
    if p.len() < 20 || p[0] >> 4 != 4 {
        return r;
    }
    let dst = [p[16], p[17], p[18], p[19]];
    if addr::is_sender_side(dst) {
        r.dir = Dir::Ack;
    }
    let src = [p[12], p[13], p[14], p[15]];
    r.group = addr::group_of(if r.dir == Dir::Data { dst } else { src });
    let ihl = (p[0] & 0xf) as usize * 4;
    if p[9] != libc::IPPROTO_TCP as u8 || p.len() < ihl + 20 {
        return r;
    }
    r.tcp = true;
    r.ihl = ihl;
    let t = &p[ihl..];
    let sport = u16::from_be_bytes([t[0], t[1]]);
    let dport = u16::from_be_bytes([t[2], t[3]]);
    let doff = ((t[12] >> 4) as usize * 4).clamp(20, t.len().max(20));
    r.doff = doff;
    // The packet's length, not the IP total length: a GSO super-packet's can be stale.
    r.payload = p.len().saturating_sub(ihl + doff) as u32;
    r.control = t[13] & 0x07 != 0;
    r.syn = t[13] & 0x02 != 0;
    r.ack_flag = t[13] & 0x10 != 0;
    r.cwr = t[13] & 0x80 != 0;
    r.seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
    r.ack = u32::from_be_bytes([t[8], t[9], t[10], t[11]]);
    if r.dir == Dir::Ack && doff > 20 && t.len() >= doff {
        let o = &t[20..doff];
        let mut i = 0;
        while i < o.len() {
            match o[i] {
                0 => break,
                1 => i += 1,
                kind => {
                    let len = o.get(i + 1).copied().unwrap_or(0) as usize;
                    if len < 2 || i + len > o.len() {
                        break;
                    }
                    if kind == 5 {
                        for b in o[i + 2..i + len].chunks_exact(8) {
                            if r.nsacks < 4 {
                                r.sacks[r.nsacks] = (
                                    u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                                    u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                                );
                                r.nsacks += 1;
                            }
                        }
                    }
                    i += len;
                }
            }
        }
    }
    let port = if r.dir == Dir::Data { sport } else { dport };
    r.flow = port
        .checked_sub(addr::FLOW_PORT_BASE)
        .map(|i| i as u32)
        .filter(|&i| (i as usize) < nflows);
    r
}

/// A flow key for a packet of no cclab flow: its IPv4 addresses, protocol and ports mixed
/// (0 for what is too short to tell).
fn five_tuple_key(ip: &[u8]) -> u64 {
    if ip.len() < 20 {
        return 0;
    }
    let ihl = ((ip[0] & 0x0f) as usize * 4).max(20);
    let mut k = u64::from_be_bytes([
        ip[12], ip[13], ip[14], ip[15], ip[16], ip[17], ip[18], ip[19],
    ]);
    k ^= (ip[9] as u64) << 56;
    if ip.len() >= ihl + 4 {
        k = k.rotate_left(17)
            ^ u32::from_be_bytes([ip[ihl], ip[ihl + 1], ip[ihl + 2], ip[ihl + 3]]) as u64;
    }
    k | 1 << 63
}

/// Lateness beyond which a release counts as a stall of the element (its thread did not run:
/// a preempted vCPU, softirq work), ns. Normal wake-up jitter stays far below it.
pub const STALL_NS: u64 = 500_000;

/// The element's state (one per run).
struct El<'a> {
    cfg: &'a ElementConfig,
    fd: i32,
    /// Bytes of vnet header before each packet (0 or 10).
    vnet: usize,
    /// The path, as the simulator has it: data and ACK chains from the one factory.
    data: Chain<Pkt>,
    acks: Chain<Pkt>,
    /// Position of the bottleneck in the data chain.
    bottleneck: usize,
    /// Per data-chain position: the queueing element's delays and per-bin sums, if it
    /// queues.
    queues: Vec<Option<QueueTrack>>,
    /// One-way delay of each class in the ACK direction (added to RTT samples).
    rev_delay: Vec<u64>,
    st: ElementStats,
    rtt: Vec<RttTrack>,
    /// End of the last stall counted in `st.stalls`.
    stall_end: u64,
    /// Per flow: (end sequence, release time) of data packets written back, for turnaround.
    released: Vec<std::collections::VecDeque<(u32, u64)>>,
    /// Packet trace, and each flow's first sequence number (trace numbers count segments).
    trace: Option<TraceWriter>,
    trace_base: Vec<Option<u32>>,
    /// Each flow's highest data sequence number seen (what ends below it is a retransmission).
    trace_max_end: Vec<Option<u32>>,
    /// When the counting window opened (trace times count from it).
    t0: u64,
}

impl El<'_> {
    /// Segment number of sequence number `seq` in flow `f` (rounded up for ACK edges).
    fn seg_no(&self, f: u32, seq: u32, up: bool) -> u64 {
        let base = self.trace_base[f as usize].unwrap_or(seq);
        let off = seq.wrapping_sub(base) as u64;
        let mss = self.cfg.mss.max(1) as u64;
        if up {
            off.div_ceil(mss)
        } else {
            off / mss
        }
    }

    /// Trace line of one packet (written inside the counting window; the flow's sequence
    /// numbers are followed from its SYN on).
    fn trace_packet(&mut self, p: &Parsed, b: &[u8], now: u64, counting: bool) {
        let Some(f) = p.flow else { return };
        if self.trace.is_none() || !p.tcp {
            return;
        }
        // The flow's first data byte: after the SYN's sequence number, or the first data seen.
        let base = &mut self.trace_base[f as usize];
        if p.dir == Dir::Data && base.is_none() {
            if p.control && p.payload == 0 && p.syn {
                *base = Some(p.seq.wrapping_add(1));
            } else if p.payload > 0 {
                *base = Some(p.seq);
            }
        }
        let t = now.saturating_sub(self.t0);
        let end = p.seq.wrapping_add(p.payload);
        let max_end = &mut self.trace_max_end[f as usize];
        let retrans =
            p.dir == Dir::Data && p.payload > 0 && max_end.is_some_and(|m| seq_le(end, m));
        if p.dir == Dir::Data && p.payload > 0 && !retrans {
            *max_end = Some(end);
        }
        if !counting {
            return;
        }
        match p.dir {
            Dir::Data if p.payload > 0 => {
                let gs = if self.vnet > 0 {
                    u16::from_le_bytes([b[4], b[5]]) as u32
                } else {
                    0
                };
                let segs = if gs > 0 { p.payload.div_ceil(gs) } else { 1 };
                let seq = self.seg_no(f, p.seq, false);
                if let Some(tr) = self.trace.as_mut() {
                    tr.data(t, f, seq, segs, p.payload as u64, retrans);
                }
            }
            Dir::Ack if p.ack_flag => {
                let ack = self.seg_no(f, p.ack, true);
                let sack = (p.nsacks > 0).then(|| {
                    (
                        self.seg_no(f, p.sacks[0].0, false),
                        self.seg_no(f, p.sacks[0].1, true),
                    )
                });
                if let Some(tr) = self.trace.as_mut() {
                    tr.ack(t, f, ack, sack);
                }
            }
            _ => {}
        }
    }

    /// One packet read from the TUN device (`b`: vnet header + IP packet).
    fn arrive(&mut self, b: &[u8], now: u64, counting: bool) {
        let nflows = self.cfg.flow_group.len();
        let ngroups = self.cfg.group_extra_ns.len();
        let raw = &b[self.vnet..];
        let p = parse(raw, nflows);
        let line = match p.flow {
            Some(f) => self.cfg.flow_group[f as usize] as usize,
            None => p.group.filter(|&g| g < ngroups).unwrap_or(ngroups),
        };
        self.trace_packet(&p, b, now, counting);
        let hl = (p.ihl + p.doff) as u32;
        let mut d = buffer();
        d.extend_from_slice(b);
        let mut pkt = Pkt {
            data: d,
            vnet: self.vnet,
            flow: p.flow,
            payload: p.payload,
            line,
            wire: raw.len() as u32,
            seq: p.seq,
            segs: 1,
            mss: p.payload,
            ihl: p.ihl,
            doff: p.doff,
            exempt: true,
            marked: false,
            key: p.flow.map_or_else(|| five_tuple_key(raw), |f| f as u64 + 1),
        };
        match p.dir {
            Dir::Data => {
                let is_data = !p.tcp || (p.payload > 0 && !p.control);
                // Segments of a TCP GSO super-packet (gso_type TCPV4, gso_size).
                if self.vnet > 0 && p.tcp && b[1] & 0x7f == 1 {
                    let gs = u16::from_le_bytes([b[4], b[5]]) as u32;
                    if gs > 0 && p.payload > gs {
                        pkt.mss = gs;
                        pkt.segs = p.payload.div_ceil(gs);
                    }
                }
                if p.tcp {
                    pkt.wire = p.payload + pkt.segs * hl;
                }
                pkt.exempt = !is_data;
                if is_data {
                    if counting {
                        self.st.data_pkts_in += pkt.segs as u64;
                        if let (true, Some(f)) = (p.cwr, p.flow) {
                            self.st.flow_cwr[f as usize] += 1;
                        }
                        if self.st.burst_segs.is_empty() {
                            self.st.burst_segs = vec![0; 65];
                        }
                        self.st.burst_segs[(pkt.segs as usize).min(64)] += 1;
                    }
                    if let Some(f) = p.flow {
                        let mss = pkt.mss as usize;
                        for i in 0..pkt.segs as usize {
                            let s = p.seq.wrapping_add((i * mss) as u32);
                            let e = p
                                .seq
                                .wrapping_add(((i + 1) * mss).min(p.payload as usize) as u32);
                            self.rtt[f as usize].on_data(s, e, now);
                        }
                    }
                }
                let mut r = Rec {
                    queues: &mut self.queues,
                    bottleneck: self.bottleneck,
                    t0: self.t0,
                    bin_ns: self.cfg.bin_ns,
                };
                let st = &mut self.st;
                self.data.enqueue(now, pkt, &mut |j, d: &Departure<Pkt>| {
                    record(st, &mut r, counting, j, d)
                });
            }
            Dir::Ack => {
                let pure_ack = p.tcp && p.payload == 0 && !p.control;
                pkt.exempt = !pure_ack;
                if pure_ack && counting {
                    self.st.acks_in += 1;
                }
                if let (Some(f), true) = (p.flow, p.tcp && p.ack_flag) {
                    // Receiver turnaround: from writing the segment this ACK acknowledges up
                    // to reading the ACK.
                    let q = &mut self.released[f as usize];
                    while q.front().is_some_and(|&(e, _)| seq_lt(e, p.ack)) {
                        q.pop_front();
                    }
                    if let Some(&(e, t)) = q.front() {
                        if e == p.ack {
                            q.pop_front();
                            if counting {
                                self.st.turnaround.record(now.saturating_sub(t));
                            }
                        }
                    }
                    let sample = self.rtt[f as usize].on_ack(p.ack, &p.sacks[..p.nsacks], now);
                    if let (Some(r), true) = (sample, counting) {
                        self.st.flow_rtt[f as usize].record(r + self.rev_delay[line]);
                    }
                }
                self.acks.enqueue(now, pkt, &mut |_, _| {});
            }
        }
    }

    /// Move every packet due by `now` on through the path, each at its exact time.
    fn pump(&mut self, now: u64, counting: bool) {
        let mut r = Rec {
            queues: &mut self.queues,
            bottleneck: self.bottleneck,
            t0: self.t0,
            bin_ns: self.cfg.bin_ns,
        };
        let st = &mut self.st;
        self.data.pump(now, &mut |j, d: &Departure<Pkt>| {
            record(st, &mut r, counting, j, d)
        });
        self.acks.pump(now, &mut |_, _| {});
    }

    /// Write back every packet that has left the path.
    fn release(&mut self, now: u64, counting: bool) {
        for data_dir in [true, false] {
            loop {
                let out = if data_dir {
                    self.data.pop_output()
                } else {
                    self.acks.pop_output()
                };
                let Some((due, p)) = out else { break };
                if let (true, Some(f), true) = (data_dir, p.flow, p.payload > 0) {
                    let q = &mut self.released[f as usize];
                    if q.len() >= 1 << 16 {
                        q.pop_front();
                    }
                    q.push_back((p.end_seq(), now));
                }
                if counting {
                    self.st.lateness.record(now.saturating_sub(due));
                    // A stall: the first packet it made late (the others were due during it).
                    if now.saturating_sub(due) > STALL_NS && due > self.stall_end {
                        self.st.stalls += 1;
                        self.stall_end = now;
                    }
                }
                // An error (the stack refused it, e.g. no route yet) is a loss outside the model.
                let _ = sys::write_fd(self.fd, &p.data);
                recycle(p.data);
            }
        }
    }

    fn next_event(&self) -> Option<u64> {
        [self.data.next_event(), self.acks.next_event()]
            .into_iter()
            .flatten()
            .min()
    }

    /// The counting window opens: `t0` is the run's time zero (trace times, schedules and
    /// periodic releases count from it; series bins too).
    fn open_window(&mut self, t0: u64) {
        self.t0 = t0;
        self.data.start(t0);
        self.acks.start(t0);
    }

    /// Both chains' counters.
    fn counters(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        let mut m = self.data.counters("data.");
        m.extend(self.acks.counters("ack."));
        m
    }
}

/// One queueing element's delays within the counting window.
#[derive(Default)]
struct QueueTrack {
    hist: Histogram,
    /// Per time-series bin from the run's time zero: (sum of delays ns, count).
    bins: Vec<(f64, u64)>,
}

/// Where departures are recorded: the queues' tracks, the bottleneck's position, the run's
/// time zero and the series bin.
struct Rec<'a> {
    queues: &'a mut [Option<QueueTrack>],
    bottleneck: usize,
    t0: u64,
    bin_ns: u64,
}

/// Statistics of a departure from element `j` inside the counting window.
fn record(st: &mut ElementStats, r: &mut Rec<'_>, counting: bool, j: usize, d: &Departure<Pkt>) {
    if !counting {
        return;
    }
    if let Some(Some(q)) = r.queues.get_mut(j) {
        q.hist.record(d.sojourn);
        if let Some(b) = d.at.saturating_sub(r.t0).checked_div(r.bin_ns) {
            let b = b as usize;
            if b < 1 << 20 {
                if q.bins.len() <= b {
                    q.bins.resize(b + 1, (0.0, 0));
                }
                q.bins[b].0 += d.sojourn as f64;
                q.bins[b].1 += 1;
            }
        }
    }
    if j == r.bottleneck {
        st.queue_delay.record(d.sojourn);
        if let Some(f) = d.pkt.flow {
            st.flow_payload_bytes[f as usize] += d.pkt.payload as u64;
            if d.pkt.marked {
                st.flow_ce_marks[f as usize] += d.pkt.segs as u64;
            }
        }
    }
}

/// `after - before`, counter by counter.
fn counters_between(
    before: &BTreeMap<String, BTreeMap<String, u64>>,
    after: &BTreeMap<String, BTreeMap<String, u64>>,
) -> BTreeMap<String, BTreeMap<String, u64>> {
    after
        .iter()
        .map(|(el, cs)| {
            let b = before.get(el);
            let d = cs
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.saturating_sub(b.and_then(|b| b.get(k)).copied().unwrap_or(0)),
                    )
                })
                .collect();
            (el.clone(), d)
        })
        .collect()
}

/// Starts the element on a thread inside namespace `ns`: opens the TUN device for
/// `cfg.mode` and runs until `shared.stop`, writing `trace` if given. Returns once the
/// device exists, with the error if it could not be opened (the thread has then already
/// ended).
pub fn spawn(
    ns: String,
    cfg: ElementConfig,
    shared: Arc<ElementShared>,
    trace: Option<TraceWriter>,
) -> (
    std::thread::JoinHandle<io::Result<ElementStats>>,
    io::Result<()>,
) {
    let (tx, rx) = std::sync::mpsc::channel();
    let mode = cfg.mode;
    let handle = std::thread::spawn(move || {
        match sys::enter_netns(&ns).and_then(|_| open_tun(crate::topo::TUN, mode)) {
            Ok(t) => {
                let _ = tx.send(Ok(()));
                run(t, cfg, shared, trace)
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                Ok(ElementStats::default())
            }
        }
    });
    let ready = rx
        .recv()
        .unwrap_or_else(|_| Err(io::Error::other("the element thread died")));
    (handle, ready)
}

/// Runs the element on `tun` until `shared.stop`; call on a thread inside the router
/// namespace. A trace that could not be written is an error.
pub fn run(
    tun: OwnedFd,
    cfg: ElementConfig,
    shared: Arc<ElementShared>,
    trace: Option<TraceWriter>,
) -> io::Result<ElementStats> {
    sys::set_timer_slack(1);
    if cfg.pin {
        sys::place(true);
    }
    if cfg.realtime {
        // Keep the sender's and receiver's work from delaying the path (best effort).
        sys::set_realtime(10);
    }
    let fd = tun.as_raw_fd();
    let nflows = cfg.flow_group.len();
    // Classes 0..ngroups: groups; class ngroups: packets of no flow (base RTT).
    let mut extras = cfg.group_extra_ns.clone();
    extras.push(0);
    let path = PathDesc {
        link: cfg.link.clone(),
        class_extra_rtt_ns: extras.clone(),
        seed: cfg.seed,
    };
    let data = path.data_chain();
    let mut queues: Vec<Option<QueueTrack>> = (0..data.names().len()).map(|_| None).collect();
    for j in data.queue_positions() {
        queues[j] = Some(QueueTrack::default());
    }
    let mut el = El {
        queues,
        cfg: &cfg,
        fd,
        vnet: if cfg.mode == ElementMode::Gso {
            sys::VNET_HDR_LEN
        } else {
            0
        },
        bottleneck: data.position(BOTTLENECK).unwrap_or(0),
        data,
        acks: path.ack_chain(),
        rev_delay: (0..extras.len()).map(|k| path.one_way(k).1).collect(),
        st: ElementStats {
            flow_payload_bytes: vec![0; nflows],
            flow_ce_marks: vec![0; nflows],
            flow_cwr: vec![0; nflows],
            flow_rtt: vec![Histogram::default(); nflows],
            ..Default::default()
        },
        rtt: (0..nflows).map(|_| RttTrack::default()).collect(),
        stall_end: 0,
        released: vec![std::collections::VecDeque::new(); nflows],
        trace,
        trace_base: vec![None; nflows],
        trace_max_end: vec![None; nflows],
        t0: 0,
    };
    // Until the run's time zero, schedules and traces run from the element's start (the
    // handshakes see them from their beginning too).
    let started = sys::now_ns();
    el.data.start(started);
    el.acks.start(started);
    // The path's counters when the counting window opened and when it closed.
    let mut base: Option<BTreeMap<String, BTreeMap<String, u64>>> = None;
    let mut final_counters: Option<BTreeMap<String, BTreeMap<String, u64>>> = None;
    let mut buf = vec![0u8; 65536 + 64];
    let mut last_arrival = 0u64;
    let in_window = |now: u64| {
        now >= shared.count_from.load(Ordering::Relaxed)
            && now <= shared.count_until.load(Ordering::Relaxed)
    };

    while !shared.stop.load(Ordering::Relaxed) {
        // 1. Take in what arrived; every few packets, let out what fell due meanwhile so a
        //    burst of arrivals does not hold back releases.
        for k in 0..256 {
            let n = match sys::read_fd(fd, &mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let now = sys::now_ns();
            let counting = in_window(now);
            if counting && base.is_none() {
                base = Some(el.counters());
                el.open_window(shared.count_from.load(Ordering::Relaxed));
            }
            el.st.packets_read += 1;
            last_arrival = now;
            if n > el.vnet {
                el.st.max_packet = el.st.max_packet.max((n - el.vnet) as u32);
                el.arrive(&buf[..n], now, counting);
            }
            if k % 8 == 7 {
                el.pump(now, counting);
                el.release(now, counting);
            }
        }
        // 2. Packets move on through the path at their exact times.
        let now = sys::now_ns();
        let counting = in_window(now);
        if counting && base.is_none() {
            base = Some(el.counters());
            el.open_window(shared.count_from.load(Ordering::Relaxed));
        }
        if base.is_some()
            && !counting
            && final_counters.is_none()
            && now > shared.count_until.load(Ordering::Relaxed)
        {
            final_counters = Some(el.counters());
        }
        el.pump(now, counting);
        shared
            .backlog
            .store(el.data.backlog_bytes(), Ordering::Relaxed);
        // 3. Release what is due.
        el.release(now, counting);
        // 4. Wait for the next event.
        let next = el.next_event();
        let now = sys::now_ns();
        let wait = next.map(|n| n.saturating_sub(now));
        match cfg.timing {
            ElementTiming::Spin => std::hint::spin_loop(),
            ElementTiming::Sleep => {
                let w = wait.unwrap_or(10_000_000).min(10_000_000);
                if w > 0 {
                    sys::wait_readable(fd, Some(w))?;
                }
            }
            ElementTiming::Hybrid => {
                // While packets keep arriving, never sleep: a thread that sleeps in ppoll
                // between packets is woken late (milliseconds at p99 once the endpoints
                // keep the other core busy), and every packet due meanwhile leaves late.
                const SPIN_NS: u64 = 100_000;
                const BUSY_NS: u64 = 2_000_000;
                let w = wait.unwrap_or(10_000_000).min(10_000_000);
                if w > SPIN_NS && now.saturating_sub(last_arrival) > BUSY_NS {
                    sys::wait_readable(fd, Some(w - SPIN_NS))?;
                }
            }
        }
    }
    let end = final_counters.unwrap_or_else(|| el.counters());
    let b = base.unwrap_or_else(|| end.clone());
    let d = counters_between(&b, &end);
    let c = |el: &str, k: &str| d.get(el).and_then(|m| m.get(k)).copied().unwrap_or(0);
    let mut st = std::mem::take(&mut el.st);
    st.forwarded_pkts = c("data.queue", "forwarded");
    st.forwarded_bytes = c("data.queue", "forwarded_bytes");
    st.drops_buffer = c("data.queue", "dropped");
    st.drops_random = c("data.loss", "dropped");
    st.drops_ack = c("ack.loss", "dropped");
    st.marks = c("data.queue", "marked");
    st.gso_splits = c("data.queue", "split") + c("data.loss", "split");
    st.elements = d;
    let names = el.data.names();
    for (j, q) in el.queues.iter().enumerate() {
        if let Some(q) = q {
            let name = format!("data.{}", names[j]);
            st.queues.insert(name.clone(), q.hist.clone());
            st.queue_bins_ms.insert(
                name,
                q.bins
                    .iter()
                    .map(|&(sum, n)| if n > 0 { sum / n as f64 / 1e6 } else { 0.0 })
                    .collect(),
            );
        }
    }
    if let Some(t) = el.trace.take() {
        t.finish()?;
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(
        src: [u8; 4],
        dst: [u8; 4],
        sport: u16,
        dport: u16,
        flags: u8,
        payload: usize,
    ) -> Vec<u8> {
        let tot = 20 + 32 + payload;
        let mut p = vec![0u8; tot];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(tot as u16).to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&src);
        p[16..20].copy_from_slice(&dst);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p[32] = 8 << 4; // 32-byte header (timestamps)
        p[33] = flags;
        p
    }

    #[test]
    fn splits_a_gso_super_packet_into_valid_segments() {
        // 3 segments of mss 1000 (last one 500 bytes), PSH|ACK|CWR on the super-packet.
        let mut p = tcp(
            addr::SENDER,
            addr::receiver(0),
            addr::FLOW_PORT_BASE,
            addr::RECEIVER_PORT,
            0x98,
            2500,
        );
        p[4..6].copy_from_slice(&7u16.to_be_bytes());
        p[24..28].copy_from_slice(&0xffff_fc00u32.to_be_bytes()); // sequence wraps
        for (i, b) in p[52..].iter_mut().enumerate() {
            *b = i as u8;
        }
        let mut out = Vec::new();
        for i in 0..3 {
            tcp_segment(&p, 20, 32, 1000, i, 3, 10, &mut out);
            assert!(out[..10].iter().all(|&b| b == 0));
            let s = &out[10..];
            let len = if i < 2 { 1000 } else { 500 };
            assert_eq!(s.len(), 52 + len);
            assert_eq!(u16::from_be_bytes([s[2], s[3]]) as usize, s.len());
            assert_eq!(u16::from_be_bytes([s[4], s[5]]), 7 + i as u16);
            // Checksums verify: the sum over header (+ pseudo header) folds to zero.
            assert_eq!(csum_fold(csum_add(0, &s[..20])), 0);
            let pseudo = csum_add(csum_add(0, &s[12..20]), &[0, 6]) + (s.len() - 20) as u64;
            assert_eq!(csum_fold(csum_add(pseudo, &s[20..])), 0);
            let seq = u32::from_be_bytes([s[24], s[25], s[26], s[27]]);
            assert_eq!(seq, 0xffff_fc00u32.wrapping_add(1000 * i as u32));
            let flags = s[33];
            assert_eq!(flags & 0x80 != 0, i == 0, "CWR only on the first");
            assert_eq!(flags & 0x08 != 0, i == 2, "PSH only on the last");
            assert_eq!(s[52], (1000 * i) as u8);
        }
    }

    #[test]
    fn rtt_track_follows_the_senders_rules() {
        let mut t = RttTrack::default();
        let base = u32::MAX - 2000; // wraps
        for i in 0..5u32 {
            t.on_data(
                base.wrapping_add(i * 1000),
                base.wrapping_add((i + 1) * 1000),
                1000 + i as u64,
            );
        }
        // Cumulative ACK of the first two: sample from the newest of them (sent at 1001).
        assert_eq!(t.on_ack(base.wrapping_add(2000), &[], 5000), Some(3999));
        // Segment 2 is lost; a SACK of segment 4 gives a sample from it.
        let s4 = (base.wrapping_add(4000), base.wrapping_add(5000));
        assert_eq!(
            t.on_ack(base.wrapping_add(2000), &[s4], 6000),
            Some(6000 - 1004)
        );
        // Segment 2 is retransmitted; the cumulative ACK covering it gives no sample (Karn).
        t.on_data(base.wrapping_add(2000), base.wrapping_add(3000), 7000);
        assert_eq!(t.on_ack(base.wrapping_add(5000), &[], 8000), None);
        // Nothing new acknowledged: no sample.
        assert_eq!(t.on_ack(base.wrapping_add(5000), &[], 9000), None);
    }

    #[test]
    fn classifies_direction_flow_and_payload() {
        let d = tcp(
            addr::SENDER,
            addr::receiver(1),
            addr::FLOW_PORT_BASE + 2,
            addr::RECEIVER_PORT,
            0x10,
            1448,
        );
        assert_eq!(d.len(), 1500);
        let p = parse(&d, 3);
        assert!(p.dir == Dir::Data && p.tcp && !p.control);
        assert_eq!((p.flow, p.payload), (Some(2), 1448));
        let a = tcp(
            addr::receiver(1),
            addr::SENDER,
            addr::RECEIVER_PORT,
            addr::FLOW_PORT_BASE + 2,
            0x10,
            0,
        );
        let p = parse(&a, 3);
        assert!(p.dir == Dir::Ack && p.payload == 0 && !p.control);
        assert_eq!(p.flow, Some(2));
        // A flow index beyond the run's flows is "no flow"; SYN is control.
        let s = tcp(
            addr::SENDER,
            addr::receiver(0),
            addr::FLOW_PORT_BASE + 7,
            addr::RECEIVER_PORT,
            0x02,
            0,
        );
        let p = parse(&s, 3);
        assert!(p.control && p.flow.is_none());
        // Not IPv4: data direction, not TCP.
        let p = parse(&[0x60; 40], 3);
        assert!(p.dir == Dir::Data && !p.tcp);
    }
}
