//! The element's state for a run, and a packet's way through the path: classified on
//! arrival (trace line, per-flow RTT and turnaround, the statistics of what entered), moved on
//! through the data and ACK chains at its exact time, and written back to the TUN device.

use super::counters::{record, QueueTrack, Rec};
use super::packet::{buffer, recycle, Pkt};
use super::parse::{five_tuple_key, parse, Dir, Parsed};
use super::rtt::{seq_le, seq_lt, RttTrack};
use super::{ElementConfig, ElementStats, STALL_NS};
use crate::sys;
use cclab_path::{Chain, Departure, Packet};
use cclab_results::trace::TraceWriter;
use std::collections::{BTreeMap, VecDeque};

/// The element's state (one per run).
pub(super) struct El<'a> {
    pub(super) cfg: &'a ElementConfig,
    pub(super) fd: i32,
    /// Bytes of vnet header before each packet (0 or 10).
    pub(super) vnet: usize,
    /// The path, as the simulator has it: data and ACK chains from the one factory.
    pub(super) data: Chain<Pkt>,
    pub(super) acks: Chain<Pkt>,
    /// Position of the bottleneck in the data chain.
    pub(super) bottleneck: usize,
    /// Per data-chain position: the queueing element's delays and per-bin sums, if it
    /// queues.
    pub(super) queues: Vec<Option<QueueTrack>>,
    /// One-way delay of each class in the ACK direction (added to RTT samples).
    pub(super) rev_delay: Vec<u64>,
    pub(super) st: ElementStats,
    pub(super) rtt: Vec<RttTrack>,
    /// End of the last stall counted in `st.stalls`.
    pub(super) stall_end: u64,
    /// Per flow: (end sequence, release time) of data packets written back, for turnaround.
    pub(super) released: Vec<VecDeque<(u32, u64)>>,
    /// Packet trace, and each flow's first sequence number (trace numbers count segments).
    pub(super) trace: Option<TraceWriter>,
    pub(super) trace_base: Vec<Option<u32>>,
    /// Each flow's highest data sequence number seen (what ends below it is a retransmission).
    pub(super) trace_max_end: Vec<Option<u32>>,
    /// When the counting window opened (trace times count from it).
    pub(super) t0: u64,
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
    pub(super) fn arrive(&mut self, b: &[u8], now: u64, counting: bool) {
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
                // The ECT(1) stand-in (ElementConfig::group_ect1): before any queue.
                if p.flow.is_some()
                    && pkt.ecn_field() == 0b10
                    && self.cfg.group_ect1.get(line).copied().unwrap_or(false)
                {
                    pkt.set_ecn_field(0b01);
                }
                if is_data {
                    if let (true, Some(f)) = (counting, p.flow) {
                        self.st.flow_ecn_in[f as usize][pkt.ecn_field() as usize] +=
                            pkt.segs as u64;
                    }
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
                // ACK loss takes pure ACKs and UDP (a probe's echo, as on the simulator).
                pkt.exempt = !(pure_ack || p.udp);
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
    pub(super) fn pump(&mut self, now: u64, counting: bool) {
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
    pub(super) fn release(&mut self, now: u64, counting: bool) {
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

    pub(super) fn next_event(&self) -> Option<u64> {
        [self.data.next_event(), self.acks.next_event()]
            .into_iter()
            .flatten()
            .min()
    }

    /// The counting window opens: `t0` is the run's time zero (trace times, schedules and
    /// periodic releases count from it; series bins too).
    pub(super) fn open_window(&mut self, t0: u64) {
        self.t0 = t0;
        self.data.start(t0);
        self.acks.start(t0);
    }

    /// Both chains' counters.
    pub(super) fn counters(&self) -> BTreeMap<String, BTreeMap<String, u64>> {
        let mut m = self.data.counters("data.");
        m.extend(self.acks.counters("ack."));
        m
    }
}
