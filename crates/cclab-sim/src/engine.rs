use crate::config::SimConfig;
use crate::timers::Timers;
use cclab_core::packet::{Ack, Segment};
use cclab_core::receiver::{Receiver, ReceiverConfig};
use cclab_core::sender::{Sender, SenderConfig};
use cclab_core::Nanos;
use cclab_link::{Bottleneck, DelayLine, LossModel, Rng, WireLen};
use cclab_results::{
    jain, FlowResult, FlowSeries, Histogram, LinkResult, Percentiles, QueuePercentiles, RunResult,
    TimeSeries,
};
use std::io::Write as _;

/// A data packet on the shared bottleneck.
struct Pkt {
    flow: u32,
    seg: Segment,
}

impl WireLen for Pkt {
    fn wire_len(&self) -> u32 {
        self.seg.wire_len()
    }
}

struct Flow {
    sender: Sender,
    receiver: Receiver,
    fwd: DelayLine<Segment>,
    rev: DelayLine<Ack>,
    started: bool,
    start_ns: Nanos,
    rtt_hist: Histogram,
    wire_payload_bytes: u64,
    /// Receiver's delivered bytes at the previous series sample.
    last_delivered: u64,
    series: FlowSeries,
}

// Component slots: per-flow slots follow the global ones.
const SLOT_LINK: usize = 0;
const SLOT_TICK: usize = 1;
const GLOBAL_SLOTS: usize = 2;
const FWD: usize = 0;
const REV: usize = 1;
const SND: usize = 2;
const RCV: usize = 3;
const START: usize = 4;
const PER_FLOW: usize = 5;
// End hosts (see [`crate::config::HostWake`]): every sender on one, every receiver on another
// (or both on one CPU, as in the kernel lab: `HostWake::shared_cpu`).
const SENDER_HOST: usize = 0;
const RECEIVER_HOST: usize = 1;

/// A host CPU's sleep state.
#[derive(Clone, Copy, Debug, Default)]
struct HostCpu {
    /// Last time it did anything.
    last_active: Nanos,
    /// While waking up: when it can handle packets again.
    waking_until: Option<Nanos>,
}

/// A simulation in progress. Most callers just use [`run`].
pub struct Simulation {
    cfg: SimConfig,
    now: Nanos,
    end: Nanos,
    flows: Vec<Flow>,
    link: Bottleneck<Pkt>,
    loss: LossModel,
    ack_loss: LossModel,
    loss_rng: Rng,
    ack_rng: Rng,
    /// Draws the hosts' handling times ([`crate::config::HostLatency`]).
    host_rng: Rng,
    drops_random: u64,
    drops_ack: u64,
    queue_hist: Histogram,
    timers: Timers,
    t_s: Vec<f64>,
    link_queue: Vec<f64>,
    events: u64,
    idle_sender_wakeups: u64,
    hosts: [HostCpu; 2],
    /// Packet trace for fidelity work (see [`Simulation::set_trace`]).
    trace: Option<Box<dyn std::io::Write + Send>>,
}

/// Run a configuration to completion and return its record.
pub fn run(cfg: &SimConfig) -> RunResult {
    let mut sim = Simulation::new(cfg.clone());
    sim.run_to_end();
    sim.into_result()
}

impl Simulation {
    pub fn new(cfg: SimConfig) -> Self {
        let mss = cfg.link.mss;
        let flows: Vec<Flow> = cfg
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let one_way_fwd = (cfg.link.rtt_ns + f.rtt_extra_ns) / 2;
                let one_way_rev = cfg.link.rtt_ns + f.rtt_extra_ns - one_way_fwd;
                let cc =
                    f.cc.build(cfg.seed.wrapping_mul(1_000_003).wrapping_add(i as u64));
                Flow {
                    sender: Sender::new(
                        SenderConfig {
                            mss,
                            init_cwnd: f.init_cwnd,
                            size: f.size,
                            pacing: f.pacing,
                            tso: cfg.tso,
                            hz: cfg.hz,
                        },
                        cc,
                    ),
                    receiver: Receiver::new(ReceiverConfig {
                        mss,
                        size: f.size,
                        delayed_ack: cfg.delayed_ack,
                        rtt_hint: cfg.link.rtt_ns + f.rtt_extra_ns,
                        window_clamp: f.rcv_window_clamp,
                        gro: cfg.gro,
                    }),
                    fwd: DelayLine::new(one_way_fwd),
                    rev: DelayLine::new(one_way_rev),
                    started: false,
                    start_ns: f.start_ns,
                    rtt_hist: Histogram::new(),
                    wire_payload_bytes: 0,
                    last_delivered: 0,
                    series: FlowSeries {
                        id: i as u32,
                        cc: f.cc.name().to_string(),
                        ..Default::default()
                    },
                }
            })
            .collect();
        let end = cfg.duration_ns.unwrap_or(cfg.max_duration_ns);
        let n_slots = GLOBAL_SLOTS + PER_FLOW * flows.len();
        let mut sim = Simulation {
            now: 0,
            end,
            link: Bottleneck::new(cfg.link.rate_bps, cfg.link.buffer_bytes),
            loss: LossModel::from_probability(cfg.link.loss),
            ack_loss: LossModel::from_probability(cfg.link.ack_loss),
            loss_rng: Rng::derive(cfg.seed, 1),
            ack_rng: Rng::derive(cfg.seed, 2),
            host_rng: Rng::derive(cfg.seed, 3),
            drops_random: 0,
            drops_ack: 0,
            queue_hist: Histogram::new(),
            timers: Timers::new(n_slots),
            t_s: Vec::new(),
            link_queue: Vec::new(),
            events: 0,
            idle_sender_wakeups: 0,
            hosts: [HostCpu::default(); 2],
            trace: None,
            flows,
            cfg,
        };
        for i in 0..sim.flows.len() {
            let t = sim.flows[i].start_ns;
            sim.schedule(Self::slot(i, START), Some(t));
        }
        if sim.cfg.series_interval_ns > 0 {
            sim.schedule(SLOT_TICK, Some(sim.cfg.series_interval_ns));
        }
        sim
    }

    fn slot(flow: usize, what: usize) -> usize {
        GLOBAL_SLOTS + flow * PER_FLOW + what
    }

    /// Set a component's pending event time (None = nothing pending).
    fn schedule(&mut self, slot: usize, t: Option<Nanos>) {
        self.timers.set(slot, t);
    }

    /// Events processed so far (for benchmarks).
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Times a sender was woken with no timer due and then neither sent nor decided to wait
    /// for an ACK (TSO deferral, which Linux too decides when its pacing timer fires): a
    /// sender that asks to be called back when it has nothing to decide (see
    /// `Sender::next_timeout`). Zero in a healthy run.
    pub fn idle_sender_wakeups(&self) -> u64 {
        self.idle_sender_wakeups
    }

    /// Write a packet trace in the format of the kernel element's (`CCLAB_ELEMENT_TRACE`):
    /// `D t_us flow seq segs payload` per burst entering the path (at the bottleneck, where
    /// the element reads it), `A t_us flow ack sack_left sack_right` per ACK leaving the
    /// receiver (before the reverse delay, where the element reads it); sequence numbers in
    /// segments, not bytes.
    pub fn set_trace(&mut self, w: Box<dyn std::io::Write + Send>) {
        self.trace = Some(w);
    }

    /// Each flow's sender counters (recoveries, probes, RTOs...), for diagnostics.
    pub fn sender_stats(&self) -> Vec<cclab_core::sender::SenderStats> {
        self.flows
            .iter()
            .map(|f| f.sender.stats().clone())
            .collect()
    }

    /// Packets that crossed the bottleneck so far.
    pub fn packets_forwarded(&self) -> u64 {
        self.link.counters().forwarded_pkts
    }

    fn all_sized_done(&self) -> bool {
        self.flows
            .iter()
            .all(|f| f.receiver.completed_at().is_some())
    }

    pub fn run_to_end(&mut self) {
        while let Some((t, slot)) = self.timers.pop(self.end) {
            self.now = t;
            self.events += 1;
            self.dispatch(slot);
            if self.cfg.duration_ns.is_none() && self.all_sized_done() {
                self.end = self.now;
                break;
            }
        }
        if self.cfg.duration_ns.is_none() && !self.all_sized_done() {
            self.end = self.end.max(self.now);
        }
        self.now = self.end;
        // A final partial bin, so series cover the whole run.
        if self.cfg.series_interval_ns > 0
            && self
                .t_s
                .last()
                .is_none_or(|&l| l < self.end as f64 / 1e9 - 1e-9)
        {
            self.sample();
        }
    }

    fn dispatch(&mut self, slot: usize) {
        let now = self.now;
        match slot {
            SLOT_LINK => {
                if let Some(d) = self.link.dequeue(now) {
                    self.queue_hist.record(d.queue_delay);
                    let f = d.pkt.flow as usize;
                    self.flows[f].wire_payload_bytes += d.pkt.seg.len as u64;
                    self.flows[f].fwd.push(now, d.pkt.seg);
                    let due = self.flows[f].fwd.next_due();
                    if self.timers.get(Self::slot(f, FWD)).is_none() {
                        self.schedule(Self::slot(f, FWD), due);
                    }
                }
                let next = self.link.next_departure();
                self.schedule(SLOT_LINK, next);
            }
            SLOT_TICK => {
                self.sample();
                let next = now + self.cfg.series_interval_ns;
                self.schedule(SLOT_TICK, Some(next));
            }
            _ => {
                let f = (slot - GLOBAL_SLOTS) / PER_FLOW;
                match (slot - GLOBAL_SLOTS) % PER_FLOW {
                    FWD => {
                        if let Some(t) = self.host_asleep(RECEIVER_HOST) {
                            self.schedule(slot, Some(t));
                            return;
                        }
                        while let Some(seg) = self.flows[f].fwd.pop_due(now) {
                            if let Some(ack) = self.flows[f].receiver.on_segment(now, &seg) {
                                self.send_ack(f, ack);
                            }
                        }
                        let due = self.flows[f].fwd.next_due();
                        self.schedule(Self::slot(f, FWD), due);
                        let t = self.flows[f].receiver.next_timeout();
                        self.schedule(Self::slot(f, RCV), t);
                    }
                    REV => {
                        if let Some(t) = self.host_asleep(SENDER_HOST) {
                            self.schedule(slot, Some(t));
                            return;
                        }
                        while let Some(ack) = self.flows[f].rev.pop_due(now) {
                            let out = self.flows[f].sender.on_ack(now, &ack);
                            if let Some(r) = out.rtt_sample {
                                self.flows[f].rtt_hist.record(r);
                            }
                        }
                        let due = self.flows[f].rev.next_due();
                        self.schedule(Self::slot(f, REV), due);
                        self.drive_sender(f);
                    }
                    SND => {
                        self.host_busy(SENDER_HOST);
                        let fired = self.flows[f].sender.on_timeout(now);
                        let sent = self.flows[f].sender.stats().segments_sent;
                        self.drive_sender(f);
                        let snd = &self.flows[f].sender;
                        if !fired && snd.stats().segments_sent == sent && !snd.is_deferring() {
                            self.idle_sender_wakeups += 1;
                        }
                    }
                    RCV => {
                        self.host_busy(RECEIVER_HOST);
                        if let Some(ack) = self.flows[f].receiver.on_timeout(now) {
                            self.send_ack(f, ack);
                        }
                        let t = self.flows[f].receiver.next_timeout();
                        self.schedule(Self::slot(f, RCV), t);
                    }
                    START => {
                        self.host_busy(SENDER_HOST);
                        self.flows[f].started = true;
                        self.drive_sender(f);
                    }
                    _ => unreachable!(),
                }
            }
        }
    }

    /// A packet reached `host` now: `None` if it can handle it now (it is then busy until
    /// now), or the time it will have woken up to (see [`crate::config::HostWake`]).
    /// Timers (delayed ACK, pacing, RTO) keep a host awake but are not delayed themselves.
    fn host_asleep(&mut self, host: usize) -> Option<Nanos> {
        let w = self.cfg.host_wake?;
        let now = self.now;
        let h = &mut self.hosts[Self::cpu_of(w, host)];
        if let Some(t) = h.waking_until {
            if now < t {
                return Some(t);
            }
            h.waking_until = None;
        } else if now.saturating_sub(h.last_active) > w.idle_ns && w.wake_ns > 0 {
            h.waking_until = Some(now + w.wake_ns);
            return h.waking_until;
        }
        h.last_active = now;
        None
    }

    /// `host` did something now (a timer fired): its CPU is awake.
    fn host_busy(&mut self, host: usize) {
        if let Some(w) = self.cfg.host_wake {
            self.hosts[Self::cpu_of(w, host)].last_active = self.now;
        }
    }

    /// The CPU `host` runs on: its own, or the one both share.
    fn cpu_of(w: crate::config::HostWake, host: usize) -> usize {
        if w.shared_cpu {
            SENDER_HOST
        } else {
            host
        }
    }

    fn send_ack(&mut self, f: usize, ack: Ack) {
        if self.ack_loss.drop(&mut self.ack_rng) {
            self.drops_ack += 1;
            return;
        }
        let now = self.now;
        if let Some(t) = self.trace.as_mut() {
            let (l, r) = ack
                .sack_blocks()
                .first()
                .map_or((0, 0), |b| (b.start, b.end));
            let _ = writeln!(t, "A {} {f} {} {l} {r}", now / 1000, ack.cum);
        }
        match self.cfg.host_latency {
            // The receiver's turnaround and the sender's, in order (see `HostLatency`).
            Some(l) => {
                let extra = l.sample(&mut self.host_rng);
                self.flows[f].rev.push_after(now, extra, ack);
            }
            None => self.flows[f].rev.push(now, ack),
        }
        if self.timers.get(Self::slot(f, REV)).is_none() {
            let due = self.flows[f].rev.next_due();
            self.schedule(Self::slot(f, REV), due);
        }
    }

    /// Let flow `f` send what it may now, then set its timer.
    fn drive_sender(&mut self, f: usize) {
        if !self.flows[f].started {
            return;
        }
        let now = self.now;
        // One TSO burst at a time: it reaches the bottleneck whole, and the receiver may take
        // it in as one (GRO) only if none of it is lost, as a GSO packet that a router splits
        // to drop part of it arrives as separate segments.
        let mut burst: Vec<(Segment, bool)> = Vec::new();
        while let Some(seg) = self.flows[f].sender.poll_transmit(now) {
            let lost = self.loss.drop(&mut self.loss_rng);
            let end = seg.burst_end;
            burst.push((seg, lost));
            if !end {
                continue;
            }
            if let Some(t) = self.trace.as_mut() {
                let first = &burst[0].0;
                let bytes: u32 = burst.iter().map(|(s, _)| s.len).sum();
                let _ = writeln!(
                    t,
                    "D {} {f} {} {} {bytes}{}",
                    now / 1000,
                    first.seq,
                    burst.len(),
                    if first.retrans { " R" } else { "" }
                );
            }
            let mut whole = burst.iter().all(|&(_, lost)| !lost);
            if whole && burst.len() > 1 {
                let mut idle = self.link.next_departure().is_none();
                let mut backlog = self.link.backlog_bytes();
                for (seg, _) in &burst {
                    if idle {
                        idle = false;
                    } else {
                        backlog += seg.wire_len() as u64;
                    }
                }
                whole = backlog <= self.link.buffer_bytes();
            }
            for (mut seg, lost) in burst.drain(..) {
                if lost {
                    self.drops_random += 1;
                    continue;
                }
                seg.burst_end |= !whole;
                let _ = self.link.enqueue(
                    now,
                    Pkt {
                        flow: f as u32,
                        seg,
                    },
                );
            }
        }
        // (A burst always ends within one loop; this only guards the invariant.)
        for (mut seg, lost) in burst.drain(..) {
            if lost {
                self.drops_random += 1;
                continue;
            }
            seg.burst_end = true;
            let _ = self.link.enqueue(
                now,
                Pkt {
                    flow: f as u32,
                    seg,
                },
            );
        }
        if self.timers.get(SLOT_LINK).is_none() {
            let next = self.link.next_departure();
            self.schedule(SLOT_LINK, next);
        }
        let t = self.flows[f].sender.next_timeout().map(|t| t.max(now + 1));
        self.schedule(Self::slot(f, SND), t);
    }

    fn sample(&mut self) {
        let now = self.now;
        let prev = self.t_s.last().map_or(0.0, |&t| t);
        let t = now as f64 / 1e9;
        let dt = (t - prev).max(1e-9);
        self.t_s.push(t);
        self.link_queue.push(self.link.backlog_bytes() as f64);
        for fl in &mut self.flows {
            let d = fl.receiver.delivered_bytes();
            let tcp = fl.sender.tcp();
            fl.series
                .goodput_bps
                .push((d - fl.last_delivered) as f64 * 8.0 / dt);
            fl.last_delivered = d;
            fl.series.cwnd_pkts.push(tcp.snd_cwnd as f64);
            fl.series.inflight_pkts.push(tcp.packets_in_flight() as f64);
            fl.series.pacing_rate_bps.push(fl.sender.pacing_rate_bps());
            fl.series.srtt_ms.push(fl.sender.rtt().srtt() as f64 / 1e6);
            fl.series
                .delivery_rate_bps
                .push(fl.sender.delivery_rate_bps());
        }
    }

    /// Build the run record (call after [`Self::run_to_end`]).
    pub fn into_result(self) -> RunResult {
        let end = self.end;
        let first_start = self.flows.iter().map(|f| f.start_ns).min().unwrap_or(0);
        let flows: Vec<FlowResult> = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let spec = &self.cfg.flows[i];
                let fct = fl
                    .receiver
                    .completed_at()
                    .map(|t| t.saturating_sub(fl.start_ns));
                let active_end = fl.receiver.completed_at().unwrap_or(end);
                let active = active_end.saturating_sub(fl.start_ns) as f64 / 1e9;
                let per_s = |bytes: u64| {
                    if active > 0.0 {
                        bytes as f64 * 8.0 / active
                    } else {
                        0.0
                    }
                };
                let st = fl.sender.stats();
                let ms = |v: Option<u64>| v.map_or(0.0, |x| x as f64 / 1e6);
                FlowResult {
                    id: i as u32,
                    cc: spec.cc.name().to_string(),
                    group: spec.group,
                    start_s: fl.start_ns as f64 / 1e9,
                    goodput_bps: per_s(fl.receiver.delivered_bytes()),
                    throughput_bps: per_s(fl.wire_payload_bytes),
                    bytes_delivered: fl.receiver.delivered_bytes(),
                    retransmits: st.retransmits,
                    segments_sent: st.segments_sent,
                    retrans_ratio: if st.segments_sent > 0 {
                        st.retransmits as f64 / st.segments_sent as f64
                    } else {
                        0.0
                    },
                    rtt_ms: Percentiles {
                        min: ms(fl.rtt_hist.min()),
                        p50: ms(fl.rtt_hist.quantile(0.5)),
                        p95: ms(fl.rtt_hist.quantile(0.95)),
                        p99: ms(fl.rtt_hist.quantile(0.99)),
                    },
                    fct_s: fct.map(|t| t as f64 / 1e9),
                    size_bytes: spec.size,
                    rto_count: st.rto_count,
                }
            })
            .collect();
        let span = end.saturating_sub(first_start) as f64 / 1e9;
        let c = self.link.counters();
        let util = if span > 0.0 {
            c.forwarded_bytes as f64 * 8.0 / (self.cfg.link.rate_bps * span)
        } else {
            0.0
        };
        let qms = |q: f64| self.queue_hist.quantile(q).map_or(0.0, |x| x as f64 / 1e6);
        let link = LinkResult {
            rate_bps: self.cfg.link.rate_bps,
            utilization: util.min(1.0),
            drops_buffer: c.drops_buffer,
            drops_random: self.drops_random,
            drops_ack: self.drops_ack,
            forwarded_pkts: c.forwarded_pkts,
            queue_delay_ms: QueuePercentiles {
                p50: qms(0.5),
                p95: qms(0.95),
                p99: qms(0.99),
            },
        };
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
        let series = (self.cfg.series_interval_ns > 0).then(|| TimeSeries {
            interval_s: self.cfg.series_interval_ns as f64 / 1e9,
            t_s: self.t_s.clone(),
            flows: self.flows.iter().map(|f| f.series.clone()).collect(),
            link_queue_bytes: self.link_queue.clone(),
        });
        RunResult {
            params: serde_json::Map::new(),
            seed: self.cfg.seed,
            duration_s: end as f64 / 1e9,
            jain: jain(&goodputs),
            flows,
            link,
            reference: None,
            series,
            lab: None,
        }
    }
}
