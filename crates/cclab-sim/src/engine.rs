//! The event loop: the path's two chains, each flow's sender and receiver, and the hosts
//! between them, driven in simulated time.
//!
//! Every component has at most one pending event ([`Timers`]):
//!
//! | slot              | fires when                                                        |
//! |-------------------|-------------------------------------------------------------------|
//! | `DATA`            | a data packet leaves an element of the data chain (queue, delay)   |
//! | `ACKS`            | an ACK leaves the ACK chain                                        |
//! | `TICK`            | a time-series bin ends                                             |
//! | flow `FWD`        | the receiving host, asleep when segments arrived, has woken up     |
//! | flow `REV`        | an ACK held by the hosts' handling time is due at the sender       |
//! | flow `SND`        | the sender's timer (RTO, loss probe, RACK, pacing release)          |
//! | flow `RCV`        | the receiver's timer (delayed ACK)                                 |
//! | flow `START`      | the flow starts                                                    |
//! | probe `SEND`      | a latency probe sends its next datagram ([`crate::probe`])        |
//!
//! Packets that leave the path are handed to their endpoint at once when its host is awake,
//! so a data packet costs about two events (leaving the bottleneck, then the delay) and an
//! ACK one.

use crate::config::SimConfig;
use crate::hosts::{Host, HostCpus, Nic};
use crate::monitor::{AckStats, IntervalStats, Monitor};
use crate::probe::ProbeFlow;
use crate::timers::Timers;
use cclab_core::cc::external::Action;
use cclab_core::packet::{Ack, Ecn, Segment};
use cclab_core::receiver::{EcnEcho, Receiver, ReceiverConfig};
use cclab_core::sender::{Sender, SenderConfig};
use cclab_core::Nanos;
use cclab_path::{streams, Chain, DelayLine, Departure, Packet, PathDesc, Rng, BOTTLENECK};
use cclab_results::trace::TraceWriter;
use cclab_results::{
    AccEcnCounts, DelayBins, FlowRecord, FlowSeries, Histogram, LinkRecord, RunRecord, RunResult,
    TimeSeries,
};
use serde_json::{json, Map, Value};

/// A data segment on the path, or a latency probe's datagram (its `class` carries
/// [`PROBE`]; `flow` counts on from the last flow, `seg.seq` is the probe's number and
/// `seg.len` its payload). (Its fields are kept small: every element moves it, and the delay
/// holds a round trip's worth of them; a probe flag of its own would add 8 bytes to each.)
struct DataPkt {
    flow: u32,
    class: u32,
    seg: Segment,
}

/// The bit of a packet's `class` that marks a latency probe's datagram or its echo (the
/// delay class itself is the rest).
const PROBE: u32 = 1 << 31;

impl DataPkt {
    fn is_probe(&self) -> bool {
        self.class & PROBE != 0
    }
}

impl Packet for DataPkt {
    fn wire_len(&self) -> u32 {
        if self.is_probe() {
            self.seg.len + PROBE_HEADER_BYTES
        } else {
            self.seg.wire_len()
        }
    }
    fn class(&self) -> usize {
        (self.class & !PROBE) as usize
    }
    /// The receiver cannot coalesce a burst that did not arrive whole: every segment ends one.
    fn mark_burst_broken(&mut self) {
        self.seg.burst_end = true;
    }
    fn is_ect(&self) -> bool {
        self.seg.ecn.is_ect()
    }
    fn ecn_field(&self) -> u8 {
        match self.seg.ecn {
            Ecn::NotEct => 0,
            Ecn::Ect1 => 1,
            Ecn::Ect0 => 2,
            Ecn::Ce => 3,
        }
    }
    /// A CE segment also ends a coalesced burst: GRO does not merge segments whose ECN
    /// field differs.
    fn set_ce(&mut self) {
        self.seg.ecn = Ecn::Ce;
        self.seg.burst_end = true;
    }
    fn flow_key(&self) -> u64 {
        self.flow as u64 + 1
    }
}

/// An ACK on the path, or a probe's echo (its `class` carries [`PROBE`]; then `flow` is the
/// probe's as on the way out, `ack.cum` the probe's number and `ack.wnd` its payload, and
/// the rest of `ack` is unused: an ACK is moved as often as a segment, and an echo of its own
/// shape would make every one larger).
struct AckPkt {
    flow: u32,
    class: u32,
    ack: Ack,
}

impl AckPkt {
    fn is_echo(&self) -> bool {
        self.class & PROBE != 0
    }
}

impl Packet for AckPkt {
    fn wire_len(&self) -> u32 {
        if self.is_echo() {
            self.ack.wnd as u32 + PROBE_HEADER_BYTES
        } else {
            self.ack.wire_len()
        }
    }
    fn class(&self) -> usize {
        (self.class & !PROBE) as usize
    }
}

struct Flow {
    sender: Sender,
    receiver: Receiver,
    /// Segments that reached the receiving host while it was asleep.
    inbox: Vec<Segment>,
    /// ACKs that left the path, held by the hosts' handling time.
    acks: DelayLine<Ack>,
    class: u32,
    started: bool,
    start_ns: Nanos,
    rtt_hist: Histogram,
    wire_payload_bytes: u64,
    /// Receiver's delivered bytes at the previous series sample.
    last_delivered: u64,
    series: FlowSeries,
    /// The monitor interval in progress, for a flow whose controller is external.
    monitor: Option<Monitor>,
    /// The ACKs of a watched external flow not yet taken ([`Simulation::watch_acks`]).
    ack_log: Option<Vec<AckStats>>,
}

/// Bytes of IPv4 + UDP header on a probe's datagram.
const PROBE_HEADER_BYTES: u32 = cclab_scenario::PROBE_HEADER_BYTES;

// Component slots: per-flow slots follow the global ones.
const SLOT_DATA: usize = 0;
const SLOT_ACKS: usize = 1;
const SLOT_TICK: usize = 2;
const GLOBAL_SLOTS: usize = 3;
const FWD: usize = 0;
const REV: usize = 1;
const SND: usize = 2;
const RCV: usize = 3;
const START: usize = 4;
const PER_FLOW: usize = 5;

/// A simulation in progress. Most callers just use [`run`].
pub struct Simulation {
    cfg: SimConfig,
    now: Nanos,
    end: Nanos,
    flows: Vec<Flow>,
    /// Latency probes; their send slots follow the flows' slots.
    probes: Vec<ProbeFlow>,
    /// The probes' delay class: the path's own RTT.
    probe_class: u32,
    data: Chain<DataPkt>,
    acks: Chain<AckPkt>,
    /// Position of the bottleneck in the data chain.
    bottleneck: usize,
    /// Queueing delays of each queueing element of the data chain, by position.
    queue_stats: Vec<Option<QueueStats>>,
    /// Draws the hosts' handling times ([`crate::HostLatency`]).
    host_rng: Rng,
    hosts: HostCpus,
    timers: Timers,
    t_s: Vec<f64>,
    link_queue: Vec<f64>,
    events: u64,
    idle_sender_wakeups: u64,
    /// Flows that got ACKs from the ACK chain in the current event.
    acked: Vec<usize>,
    /// The buffer a sender's TSO burst is gathered in (kept for its capacity).
    burst: Vec<DataPkt>,
    /// The sending host's interface, when the scenario gives its rate.
    nic: Option<Nic>,
    trace: Option<TraceWriter>,
    /// Some flow's ACKs are watched: the event loop with the per-ACK hook runs.
    watching: bool,
    /// A watched flow got ACKs in the last event: [`Self::advance_to`] stops there.
    acks_waiting: bool,
}

/// The queueing delays of one queueing element: all of them, and their mean per series bin;
/// the same for each of its sub-queues (by name), if its queue has several.
#[derive(Default)]
struct QueueStats {
    hist: Histogram,
    bins: DelayBins,
    subs: Vec<(&'static str, QueueStats)>,
}

impl QueueStats {
    fn record(&mut self, d: &Departure<DataPkt>) {
        self.hist.record(d.sojourn);
        self.bins.record(d.sojourn);
        if let Some((_, s)) = self.subs.get_mut(d.sub as usize) {
            s.hist.record(d.sojourn);
            s.bins.record(d.sojourn);
        }
    }

    fn close(&mut self) {
        self.bins.close();
        for (_, s) in &mut self.subs {
            s.bins.close();
        }
    }

    /// Its records by name: its own as `name` (`"data.queue"`), each sub-queue's as
    /// `name.sub` (`"data.queue.l"`).
    fn named(&self, name: String) -> Vec<(String, &QueueStats)> {
        let mut v: Vec<(String, &QueueStats)> = self
            .subs
            .iter()
            .map(|(k, s)| (format!("{name}.{k}"), s))
            .collect();
        v.insert(0, (name, self));
        v
    }
}

/// A data packet left element `j` of the path: a queue's departures give its queueing
/// delays, the bottleneck's each flow's bytes through it.
fn left_element(
    queues: &mut [Option<QueueStats>],
    flows: &mut [Flow],
    bottleneck: usize,
    j: usize,
    d: &Departure<DataPkt>,
) {
    if let Some(Some(q)) = queues.get_mut(j) {
        q.record(d);
    }
    if j == bottleneck && !d.pkt.is_probe() {
        flows[d.pkt.flow as usize].wire_payload_bytes += d.pkt.seg.len as u64;
    }
}

/// Run a configuration to completion and return its record.
pub fn run(cfg: &SimConfig) -> RunResult {
    let mut sim = Simulation::new(cfg.clone());
    sim.run_to_end();
    sim.into_result()
}

impl Simulation {
    pub fn new(cfg: SimConfig) -> Self {
        let mss = cfg.mss;
        // One delay class per distinct extra RTT (a flow group's `rtt_extra`).
        let mut extras: Vec<Nanos> = Vec::new();
        for f in &cfg.flows {
            if !extras.contains(&f.rtt_extra_ns) {
                extras.push(f.rtt_extra_ns);
            }
        }
        // Probes take the path's own RTT.
        if !cfg.probes.is_empty() && !extras.contains(&0) {
            extras.push(0);
        }
        let probe_class = extras.iter().position(|&e| e == 0).unwrap_or(0) as u32;
        let path = PathDesc {
            link: cfg.link.clone(),
            buffer_bytes: cfg.buffer_bytes,
            class_extra_rtt_ns: extras.clone(),
            seed: cfg.seed,
        };
        let flows: Vec<Flow> = cfg
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let cc =
                    f.cc.build(cfg.seed.wrapping_mul(1_000_003).wrapping_add(i as u64));
                let class = extras
                    .iter()
                    .position(|&e| e == f.rtt_extra_ns)
                    .unwrap_or(0) as u32;
                // ECN: the flow asks, or its controller needs it; the receiver echoes the
                // way the controller wants, or accurately when the flow asks for AccECN.
                let ecn = f.ecn || cc.needs_ecn();
                let accecn = f.accecn || cc.needs_accecn();
                let receiver = Receiver::new(ReceiverConfig {
                    mss,
                    size: f.size,
                    delayed_ack: cfg.delayed_ack,
                    rtt_hint: cfg.link.rtt_ns + f.rtt_extra_ns,
                    host: f.host.clone(),
                    gro: cfg.gro,
                    ecn: match (ecn, accecn, cc.wants_ce_events()) {
                        (false, _, _) => EcnEcho::Off,
                        (true, true, _) => EcnEcho::Accurate,
                        (true, false, false) => EcnEcho::Classic,
                        (true, false, true) => EcnEcho::Precise,
                    },
                });
                let mut sender = Sender::new(
                    SenderConfig {
                        mss,
                        init_cwnd: f.init_cwnd,
                        size: f.size,
                        pacing: f.pacing,
                        tso: cfg.tso,
                        hz: cfg.hz,
                        host: f.host.clone(),
                        peer_init_wnd: receiver.advertised_window(),
                        ecn,
                        accecn: f.accecn,
                    },
                    cc,
                );
                // The first interval of an external flow begins when the flow starts.
                let monitor = sender
                    .external_interval()
                    .map(|d| Monitor::new(f.start_ns, f.start_ns + d, &sender));
                Flow {
                    sender,
                    receiver,
                    inbox: Vec::new(),
                    acks: DelayLine::new(0),
                    class,
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
                    monitor,
                    ack_log: None,
                }
            })
            .collect();
        let end = cfg.duration_ns.unwrap_or(cfg.max_duration_ns);
        let n_slots = GLOBAL_SLOTS + PER_FLOW * flows.len() + cfg.probes.len();
        let probes: Vec<ProbeFlow> = cfg.probes.iter().cloned().map(ProbeFlow::new).collect();
        let mut data = path.data_chain();
        let bottleneck = data.position(BOTTLENECK).unwrap_or(0);
        // `left_element` records only the queues' departures and the bottleneck's.
        let mut observed = data.queue_positions();
        observed.push(bottleneck);
        data.observe_only(&observed);
        let mut queue_stats: Vec<Option<QueueStats>> =
            (0..data.names().len()).map(|_| None).collect();
        for j in data.queue_positions() {
            queue_stats[j] = Some(QueueStats {
                subs: data
                    .subqueues(j)
                    .iter()
                    .map(|&n| (n, QueueStats::default()))
                    .collect(),
                ..QueueStats::default()
            });
        }
        let mut sim = Simulation {
            now: 0,
            end,
            data,
            acks: path.ack_chain(),
            bottleneck,
            queue_stats,
            host_rng: Rng::derive(cfg.seed, streams::HOSTS),
            hosts: HostCpus::new(cfg.host_wake),
            timers: Timers::new(n_slots),
            t_s: Vec::new(),
            link_queue: Vec::new(),
            events: 0,
            idle_sender_wakeups: 0,
            acked: Vec::new(),
            burst: Vec::new(),
            nic: cfg.nic_rate_bps.map(Nic::new),
            trace: None,
            watching: false,
            acks_waiting: false,
            flows,
            probes,
            probe_class,
            cfg,
        };
        for i in 0..sim.flows.len() {
            let t = sim.flows[i].start_ns;
            sim.schedule(Self::slot(i, START), Some(t));
        }
        for p in 0..sim.probes.len() {
            let t = sim.probes[p].first_send();
            sim.schedule(sim.probe_slot(p), Some(t));
        }
        if sim.cfg.series_interval_ns > 0 {
            sim.schedule(SLOT_TICK, Some(sim.cfg.series_interval_ns));
        }
        sim
    }

    fn slot(flow: usize, what: usize) -> usize {
        GLOBAL_SLOTS + flow * PER_FLOW + what
    }

    /// The send slot of probe group `p`.
    fn probe_slot(&self, p: usize) -> usize {
        GLOBAL_SLOTS + self.flows.len() * PER_FLOW + p
    }

    /// Set a component's pending event time (None = nothing pending).
    #[inline]
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

    /// Write a packet trace ([`cclab_results::trace`]): a `D` line per burst entering the
    /// path, an `A` line per ACK leaving the receiver.
    pub fn set_trace(&mut self, t: TraceWriter) {
        self.trace = Some(t);
    }

    /// The trace, to finish it (after [`Self::run_to_end`]).
    pub fn take_trace(&mut self) -> Option<TraceWriter> {
        self.trace.take()
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
        self.data.counter(BOTTLENECK, "forwarded")
    }

    fn all_sized_done(&self) -> bool {
        self.flows
            .iter()
            .all(|f| f.receiver.completed_at().is_some())
    }

    pub fn run_to_end(&mut self) {
        self.run_events(self.end);
        self.finish();
    }

    /// Process every event due by `limit` (at most the run's end); `false` once the run is
    /// over (its end reached, or every sized flow complete in a run without a duration).
    fn run_events(&mut self, limit: Nanos) -> bool {
        // Two copies of the event loop: an ordinary run's has no per-ACK hook at all.
        if self.watching {
            self.run_events_as::<true>(limit)
        } else {
            self.run_events_as::<false>(limit)
        }
    }

    /// The event loop; `WATCH`: some flow's ACKs are watched ([`Self::watch_acks`]), and the
    /// loop stops after an event that gave one ACKs.
    fn run_events_as<const WATCH: bool>(&mut self, limit: Nanos) -> bool {
        while let Some((t, slot)) = self.timers.pop(limit.min(self.end)) {
            self.now = t;
            self.events += 1;
            self.dispatch::<WATCH>(slot);
            if self.cfg.duration_ns.is_none() && self.all_sized_done() {
                self.end = self.now;
                return false;
            }
            if WATCH && self.acks_waiting {
                return true;
            }
        }
        limit < self.end
    }

    /// Close the run at its end: what is still inside the paths is counted and the series'
    /// last bin is taken. (Done by [`Self::run_to_end`]; a stepped run calls it once
    /// [`Self::advance_to`] returns `false`.)
    pub fn finish(&mut self) {
        if self.cfg.duration_ns.is_none() && !self.all_sized_done() {
            self.end = self.end.max(self.now);
        }
        self.now = self.end;
        // The paths wake the run only when something leaves them: what left the elements
        // inside them by the end is counted now.
        self.catch_up_data_path();
        self.acks.pump(self.now, &mut |_, _| {});
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

    // ---------------------------------------------------------------- stepping
    // A run driven from outside: advance to a time, read a monitor interval, set an
    // external flow's action, continue. Ordinary runs never call these.

    /// Simulated time now, ns.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Run every event up to `t` (at most the run's end) and stand at `t`; `false` once the
    /// run is over (then call [`Self::finish`]). With a watched flow ([`Self::watch_acks`])
    /// it stops early, at the event in which such a flow got ACKs: [`Self::acks_waiting`]
    /// then says so, and the time is [`Self::now`].
    pub fn advance_to(&mut self, t: Nanos) -> bool {
        let running = self.run_events(t);
        if running && !self.acks_waiting {
            self.now = self.now.max(t);
        }
        running
    }

    /// Show external flow `f`'s ACKs one by one ([`Self::take_acks`] after each stop of
    /// [`Self::advance_to`]): the per-ACK hooks. Slow (the run stops at every ACK event),
    /// so only for a driver that asks; an error if `f` is not an external flow.
    pub fn watch_acks(&mut self, f: usize) -> Result<(), String> {
        let n = self.flows.len();
        let fl = self
            .flows
            .get_mut(f)
            .ok_or_else(|| format!("flow {f} does not exist (the run has {n})"))?;
        if fl.monitor.is_none() {
            return Err(format!(
                "flow {f} runs {}, not the external controller",
                fl.sender.cc_name()
            ));
        }
        fl.ack_log.get_or_insert_with(Vec::new);
        self.watching = true;
        Ok(())
    }

    /// Whether flow `f` runs the external controller (is decided from outside).
    pub fn is_external(&self, f: usize) -> bool {
        self.flows.get(f).is_some_and(|fl| fl.monitor.is_some())
    }

    /// Whether the last [`Self::advance_to`] stopped for ACKs of a watched flow.
    pub fn acks_waiting(&self) -> bool {
        self.acks_waiting
    }

    /// Move watched flow `f`'s ACKs since the last call into `out` (emptied first), oldest
    /// first; once every watched flow's ACKs are taken, [`Self::acks_waiting`] is `false`.
    pub fn take_acks(&mut self, f: usize, out: &mut Vec<AckStats>) {
        out.clear();
        if let Some(log) = self.flows.get_mut(f).and_then(|fl| fl.ack_log.as_mut()) {
            std::mem::swap(log, out);
        }
        self.acks_waiting = self
            .flows
            .iter()
            .any(|fl| fl.ack_log.as_ref().is_some_and(|l| !l.is_empty()));
    }

    /// The external flow whose monitor interval ends first, and when (`None` when no flow is
    /// external).
    pub fn next_decision(&self) -> Option<(usize, Nanos)> {
        self.flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.monitor.as_ref().map(|m| (i, m.end_ns)))
            .min_by_key(|&(i, t)| (t, i))
    }

    /// Close flow `f`'s monitor interval now and start the next one (its length from the
    /// controller: see `cclab_core::cc::external`); `None` if `f` is not external.
    pub fn take_interval(&mut self, f: usize) -> Option<IntervalStats> {
        let now = self.now;
        let fl = self.flows.get_mut(f)?;
        let st = fl.monitor.as_ref()?.stats(now, &fl.sender);
        let d = fl.sender.external_interval()?;
        fl.monitor = Some(Monitor::new(now, now + d, &fl.sender));
        Some(st)
    }

    /// Hand flow `f`'s external controller a decision, applied now (the sender sends what
    /// the new window and rate allow); an error if `f` is not an external flow.
    pub fn set_action(&mut self, f: usize, a: &Action) -> Result<(), String> {
        let n = self.flows.len();
        let fl = self
            .flows
            .get_mut(f)
            .ok_or_else(|| format!("flow {f} does not exist (the run has {n})"))?;
        if !fl.sender.set_external_action(a) {
            return Err(format!(
                "flow {f} runs {}, not the external controller",
                fl.sender.cc_name()
            ));
        }
        // The next interval's length may have changed with the decision.
        if let (Some(d), Some(m)) = (fl.sender.external_interval(), fl.monitor.as_mut()) {
            m.end_ns = m.end_ns.max(self.now).min(self.now + d);
        }
        self.drive_sender(f);
        Ok(())
    }

    /// The run's end (its duration, or when its sized flows completed), ns.
    pub fn end(&self) -> Nanos {
        self.end
    }

    fn dispatch<const WATCH: bool>(&mut self, slot: usize) {
        let now = self.now;
        match slot {
            SLOT_DATA => self.data_path_event(),
            SLOT_ACKS => self.ack_path_event::<WATCH>(),
            SLOT_TICK => {
                self.sample();
                let next = now + self.cfg.series_interval_ns;
                self.schedule(SLOT_TICK, Some(next));
            }
            _ if slot >= self.probe_slot(0) => self.send_probe(slot - self.probe_slot(0)),
            _ => {
                let f = (slot - GLOBAL_SLOTS) / PER_FLOW;
                match (slot - GLOBAL_SLOTS) % PER_FLOW {
                    FWD => self.receive_inbox(f),
                    REV => self.process_acks::<WATCH>(f),
                    SND => {
                        self.hosts.busy(Host::Sender, now);
                        let fired = self.flows[f].sender.on_timeout(now);
                        let sent = self.flows[f].sender.stats().segments_sent;
                        self.drive_sender(f);
                        let snd = &self.flows[f].sender;
                        if !fired && snd.stats().segments_sent == sent && !snd.is_deferring() {
                            self.idle_sender_wakeups += 1;
                        }
                    }
                    RCV => {
                        self.hosts.busy(Host::Receiver, now);
                        if let Some(ack) = self.flows[f].receiver.on_timeout(now) {
                            self.send_ack(f, ack);
                        }
                        let t = self.flows[f].receiver.next_timeout();
                        self.schedule(Self::slot(f, RCV), t);
                    }
                    START => {
                        self.hosts.busy(Host::Sender, now);
                        self.flows[f].started = true;
                        self.drive_sender(f);
                    }
                    _ => unreachable!(),
                }
            }
        }
    }

    /// Packets leave elements of the data chain; those leaving the path reach their receiver.
    fn data_path_event(&mut self) {
        self.pump_data_path();
        self.deliver_outputs();
        let next = self.data.next_output();
        self.schedule(SLOT_DATA, next);
    }

    /// Move what the data path's elements have due by now on, recording what leaves them
    /// (queueing delays, bytes through the bottleneck).
    fn pump_data_path(&mut self) {
        let now = self.now;
        let (q, flows, b) = (&mut self.queue_stats, &mut self.flows, self.bottleneck);
        self.data
            .pump(now, &mut |j, d| left_element(q, flows, b, j, d));
    }

    /// Bring the data path's elements up to now without waiting for its next output, before
    /// anything reads what they recorded. (Nothing leaves the path itself here: its next
    /// output is never earlier than the data path's own event.)
    fn catch_up_data_path(&mut self) {
        self.pump_data_path();
        let next = self.data.next_output();
        self.schedule(SLOT_DATA, next);
    }

    /// A segment reaches flow `f`'s receiving host now.
    fn deliver(&mut self, f: usize, seg: Segment) {
        let now = self.now;
        if self.flows[f].inbox.is_empty() {
            match self.hosts.asleep(Host::Receiver, now) {
                None => {
                    self.receive_segment(f, &seg);
                    let t = self.flows[f].receiver.next_timeout();
                    self.schedule(Self::slot(f, RCV), t);
                    return;
                }
                Some(wake) => self.schedule(Self::slot(f, FWD), Some(wake)),
            }
        }
        self.flows[f].inbox.push(seg);
    }

    /// Flow `f`'s receiver takes a segment in now; the ACKs it sends go out.
    fn receive_segment(&mut self, f: usize, seg: &Segment) {
        let now = self.now;
        let ack = self.flows[f].receiver.on_segment(now, seg);
        if let Some(prior) = self.flows[f].receiver.take_prior_ack() {
            self.send_ack(f, prior);
        }
        if let Some(ack) = ack {
            self.send_ack(f, ack);
        }
    }

    /// The receiving host of flow `f` woke up: it takes what arrived meanwhile.
    fn receive_inbox(&mut self, f: usize) {
        let now = self.now;
        if let Some(t) = self.hosts.asleep(Host::Receiver, now) {
            self.schedule(Self::slot(f, FWD), Some(t));
            return;
        }
        // (Taking segments in only sends ACKs: nothing reaches the inbox meanwhile.)
        let mut inbox = std::mem::take(&mut self.flows[f].inbox);
        for seg in inbox.drain(..) {
            self.receive_segment(f, &seg);
        }
        self.flows[f].inbox = inbox;
        let t = self.flows[f].receiver.next_timeout();
        self.schedule(Self::slot(f, RCV), t);
    }

    /// ACKs leave the ACK chain: the hosts take their time over each ([`crate::HostLatency`]),
    /// then the sender gets them.
    fn ack_path_event<const WATCH: bool>(&mut self) {
        let now = self.now;
        self.acks.pump(now, &mut |_, _| {});
        while let Some((t, p)) = self.acks.pop_output() {
            if p.is_echo() {
                let g = p.flow as usize - self.flows.len();
                self.probes[g].echoed(p.ack.cum, t);
                continue;
            }
            let f = p.flow as usize;
            let extra = match self.cfg.host_latency {
                Some(l) => l.sample(&mut self.host_rng),
                None => 0,
            };
            self.flows[f].acks.push_after(t, extra, p.ack);
            if !self.acked.contains(&f) {
                self.acked.push(f);
            }
        }
        let mut acked = std::mem::take(&mut self.acked);
        acked.sort_unstable();
        for &f in &acked {
            let due = self.flows[f].acks.next_due();
            if self.timers.get(Self::slot(f, REV)).is_none() && due.is_some_and(|d| d <= now) {
                self.process_acks::<WATCH>(f);
            } else {
                self.schedule(Self::slot(f, REV), due);
            }
        }
        acked.clear();
        self.acked = acked;
        let next = self.acks.next_output();
        self.schedule(SLOT_ACKS, next);
    }

    /// The ACKs of flow `f` due now reach its sender, which then sends what it may.
    fn process_acks<const WATCH: bool>(&mut self, f: usize) {
        let now = self.now;
        if let Some(t) = self.hosts.asleep(Host::Sender, now) {
            self.schedule(Self::slot(f, REV), Some(t));
            return;
        }
        while let Some((_, ack)) = self.flows[f].acks.pop_due(now) {
            let out = self.flows[f].sender.on_ack(now, &ack);
            if let Some(r) = out.rtt_sample {
                let fl = &mut self.flows[f];
                fl.rtt_hist.record(r);
                if let Some(m) = fl.monitor.as_mut() {
                    m.rtt(now, r);
                }
            }
            if WATCH {
                let fl = &mut self.flows[f];
                if let Some(log) = fl.ack_log.as_mut() {
                    log.push(AckStats::of(now, &ack, &out, &fl.sender));
                    self.acks_waiting = true;
                }
            }
        }
        let due = self.flows[f].acks.next_due();
        self.schedule(Self::slot(f, REV), due);
        self.drive_sender(f);
    }

    fn send_ack(&mut self, f: usize, ack: Ack) {
        let now = self.now;
        if let Some(t) = self.trace.as_mut() {
            let sack = ack.sack_blocks().first().map(|b| (b.start, b.end));
            t.ack(now, f as u32, ack.cum, sack);
        }
        let pkt = AckPkt {
            flow: f as u32,
            class: self.flows[f].class,
            ack,
        };
        self.acks.enqueue(now, pkt, &mut |_, _| {});
        let next = self.acks.next_output().map(|t| t.max(now));
        self.schedule(SLOT_ACKS, next);
    }

    /// Let flow `f` send what it may now, then set its timer.
    fn drive_sender(&mut self, f: usize) {
        if !self.flows[f].started {
            return;
        }
        let now = self.now;
        let class = self.flows[f].class;
        // One TSO burst at a time: it reaches the bottleneck whole, and the receiver may take
        // it in as one (GRO) only if the path did not break it up.
        let mut burst = std::mem::take(&mut self.burst);
        let mut sent = false;
        while let Some(seg) = self.flows[f].sender.poll_transmit(now) {
            sent = true;
            let end = seg.burst_end;
            burst.push(DataPkt {
                flow: f as u32,
                class,
                seg,
            });
            if !end {
                continue;
            }
            self.send_burst(&mut burst);
        }
        // (A burst always ends within one loop; this only guards the invariant.)
        if let Some(last) = burst.last_mut() {
            last.seg.burst_end = true;
            self.send_burst(&mut burst);
        }
        self.burst = burst;
        if sent {
            let next = self.data.next_output().map(|t| t.max(now));
            self.schedule(SLOT_DATA, next);
        }
        let t = self.flows[f].sender.next_timeout().map(|t| t.max(now + 1));
        self.schedule(Self::slot(f, SND), t);
    }

    fn send_burst(&mut self, burst: &mut Vec<DataPkt>) {
        let now = self.now;
        if let (Some(nic), Some(first)) = (self.nic.as_mut(), burst.first()) {
            // The burst (a flow's: probes go through `send_probe`) is one buffer to the
            // interface; TCP small queues count it until the interface has sent it.
            let ip: u64 = burst.iter().map(|p| p.wire_len() as u64).sum();
            let done = nic.transmit(now, burst.len() as u64, ip);
            let payload: u64 = burst.iter().map(|p| p.seg.len as u64).sum();
            self.flows[first.flow as usize]
                .sender
                .on_tx_handed(payload, done);
        }
        if let (Some(t), Some(first)) = (self.trace.as_mut(), burst.first()) {
            let bytes: u64 = burst.iter().map(|p| p.seg.len as u64).sum();
            t.data(
                now,
                first.flow,
                first.seg.seq,
                burst.len() as u32,
                bytes,
                first.seg.retrans,
            );
        }
        let (q, flows, b) = (&mut self.queue_stats, &mut self.flows, self.bottleneck);
        self.data
            .enqueue_burst(now, burst, &mut |j, d| left_element(q, flows, b, j, d));
        self.deliver_outputs();
    }

    /// Segments that left the path reach their receivers; probes are echoed at once.
    fn deliver_outputs(&mut self) {
        while let Some((_, p)) = self.data.pop_output() {
            if p.is_probe() {
                self.echo_probe(p);
            } else {
                self.deliver(p.flow as usize, p.seg);
            }
        }
    }

    /// Probe group `p` sends its next datagram into the data path now.
    fn send_probe(&mut self, p: usize) {
        let now = self.now;
        let (seq, next) = self.probes[p].send(now);
        let pkt = DataPkt {
            flow: (self.flows.len() + p) as u32,
            class: self.probe_class | PROBE,
            seg: Segment {
                seq,
                len: self.probes[p].spec.size_bytes,
                retrans: false,
                sent_ns: now,
                burst_end: true,
                tsecr: 0,
                ecn: Ecn::NotEct,
                cwr: false,
                psh: true,
            },
        };
        if let Some(nic) = self.nic.as_mut() {
            nic.transmit(now, 1, pkt.wire_len() as u64);
        }
        let (q, flows, b) = (&mut self.queue_stats, &mut self.flows, self.bottleneck);
        self.data
            .enqueue(now, pkt, &mut |j, d| left_element(q, flows, b, j, d));
        self.deliver_outputs();
        let next_out = self.data.next_output().map(|t| t.max(now));
        self.schedule(SLOT_DATA, next_out);
        self.schedule(self.probe_slot(p), Some(next));
    }

    /// A probe reached the receiving side: its echo goes back through the ACK path now.
    fn echo_probe(&mut self, p: DataPkt) {
        let now = self.now;
        let pkt = AckPkt {
            flow: p.flow,
            class: p.class,
            ack: Ack {
                cum: p.seg.seq,
                wnd: p.seg.len as u64,
                ..Ack::default()
            },
        };
        self.acks.enqueue(now, pkt, &mut |_, _| {});
        let next = self.acks.next_output().map(|t| t.max(now));
        self.schedule(SLOT_ACKS, next);
    }

    fn sample(&mut self) {
        self.catch_up_data_path();
        let now = self.now;
        let prev = self.t_s.last().map_or(0.0, |&t| t);
        let t = now as f64 / 1e9;
        let dt = (t - prev).max(1e-9);
        self.t_s.push(t);
        self.link_queue.push(self.data.backlog_bytes() as f64);
        for q in self.queue_stats.iter_mut().flatten() {
            q.close();
        }
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

    /// The simulator's own settings that shaped the run (recorded as `settings`).
    fn settings(&self) -> Map<String, Value> {
        let c = &self.cfg;
        let mut m = Map::new();
        m.insert("sim.tso".into(), json!(c.tso));
        m.insert("sim.gro".into(), json!(c.gro));
        m.insert("sim.delayed_ack".into(), json!(c.delayed_ack));
        m.insert("sim.hz".into(), json!(c.hz));
        m.insert(
            "sim.host_wake".into(),
            c.host_wake.map_or(Value::Null, |w| {
                json!({"idle_s": w.idle_ns as f64 / 1e9, "wake_s": w.wake_ns as f64 / 1e9, "shared_cpu": w.shared_cpu})
            }),
        );
        m.insert(
            "sim.host_latency".into(),
            c.host_latency.map_or(
                Value::Null,
                |l| json!({"base_s": l.base_ns as f64 / 1e9, "mean_s": l.mean_ns as f64 / 1e9}),
            ),
        );
        m.insert(
            "sim.series_interval_s".into(),
            json!(c.series_interval_ns as f64 / 1e9),
        );
        m
    }

    /// Build the run record (call after [`Self::run_to_end`]).
    pub fn into_result(self) -> RunResult {
        let settings = self.settings();
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let spec = &self.cfg.flows[i];
                let st = fl.sender.stats();
                FlowRecord {
                    cc: spec.cc.name().to_string(),
                    group: spec.group,
                    start_ns: fl.start_ns,
                    size_bytes: spec.size,
                    completed_ns: fl.receiver.completed_at(),
                    delivered_bytes: fl.receiver.delivered_bytes(),
                    wire_payload_bytes: fl.wire_payload_bytes,
                    segments_sent: st.segments_sent,
                    retransmits: st.retransmits,
                    rto_count: st.rto_count,
                    rtt: fl.rtt_hist.clone(),
                    rtt_min_ns: None,
                    ce_marks: fl.receiver.ce_marks(),
                    cwr_events: st.cwr_events,
                    // As the kernel lab reads them from TCP_INFO.
                    accecn: fl.sender.accecn_counts().map(|(ce, b)| AccEcnCounts {
                        delivered_ce_segments: ce,
                        delivered_ect0_bytes: b[0] as u64,
                        delivered_ect1_bytes: b[1] as u64,
                        delivered_ce_bytes: b[2] as u64,
                    }),
                    ..Default::default()
                }
            })
            .collect();
        let mut elements = self.data.counters("data.");
        elements.extend(self.acks.counters("ack."));
        let first_start = self.flows.iter().map(|f| f.start_ns).min().unwrap_or(0);
        let names = self.data.names();
        let queue = |j: usize| format!("data.{}", names[j]);
        let link = LinkRecord {
            rate_bps: self.cfg.link.mean_bps(first_start, self.end),
            queues: self
                .queue_stats
                .iter()
                .enumerate()
                .filter_map(|(j, q)| q.as_ref().map(|q| q.named(queue(j))))
                .flatten()
                .map(|(k, q)| (k, q.hist.clone()))
                .collect(),
            forwarded_pkts: self.data.counter(BOTTLENECK, "forwarded"),
            forwarded_bytes: self.data.counter(BOTTLENECK, "forwarded_bytes"),
            drops_buffer: self.data.counter(BOTTLENECK, "dropped"),
            drops_random: self.data.counter("loss", "dropped"),
            drops_ack: self.acks.counter("loss", "dropped"),
            marks: self.data.counter(BOTTLENECK, "marked"),
            queue_delay: self.queue_stats[self.bottleneck]
                .as_ref()
                .map(|q| q.hist.clone())
                .unwrap_or_default(),
            elements,
        };
        let series = (self.cfg.series_interval_ns > 0).then(|| TimeSeries {
            interval_s: self.cfg.series_interval_ns as f64 / 1e9,
            t_s: self.t_s.clone(),
            flows: self.flows.iter().map(|f| f.series.clone()).collect(),
            link_queue_bytes: self.link_queue.clone(),
            queue_delay_ms: self
                .queue_stats
                .iter()
                .enumerate()
                .filter_map(|(j, q)| q.as_ref().map(|q| q.named(queue(j))))
                .flatten()
                .map(|(k, q)| (k, q.bins.bins_ms.clone()))
                .collect(),
            link_rate_bps: self.cfg.link.rate_series(&self.t_s),
        });
        let mut r = RunRecord {
            seed: self.cfg.seed,
            end_ns: self.end,
            flows,
            link,
            series,
            lab: None,
        }
        .build();
        r.settings = settings;
        r.probes = self
            .probes
            .iter()
            .map(|p| p.record(self.end).build())
            .collect();
        r
    }
}
