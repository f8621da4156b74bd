//! The user-space link element: reads IP packets from a TUN device in the router namespace,
//! applies the scenario's path (random loss -> rate-limited drop-tail bottleneck -> per-flow
//! propagation delay in the data direction; ACK loss -> per-flow delay in the ACK direction)
//! with the shared `cclab_link` model, and writes them back into the TUN device, from where
//! the router's main routing table forwards them on.

use crate::addr;
use crate::sys;
use cclab_link::{Bottleneck, DelayLine, LossModel, Rng, WireLen};
use cclab_results::Histogram;
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
    /// Sleep in `ppoll` until shortly (100 us) before the next due time, then spin.
    Hybrid,
}

/// What the element emulates.
#[derive(Clone, Debug)]
pub struct ElementConfig {
    pub rate_bps: f64,
    pub buffer_bytes: u64,
    pub loss: f64,
    pub ack_loss: f64,
    pub seed: u64,
    /// Base round-trip propagation delay, ns.
    pub rtt_ns: u64,
    /// Extra RTT of each flow group, ns.
    pub group_extra_ns: Vec<u64>,
    /// Group of each flow (flow i uses source port `addr::FLOW_PORT_BASE + i`).
    pub flow_group: Vec<u32>,
    pub timing: ElementTiming,
    /// Run the element thread under SCHED_FIFO.
    pub realtime: bool,
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
    /// How late packets left the delay line relative to their due time, ns.
    pub lateness: Histogram,
    /// TCP payload bytes of each flow that crossed the bottleneck (retransmissions included).
    pub flow_payload_bytes: Vec<u64>,
    /// Largest packet read from the TUN device (shows whether super-packets reach the element).
    pub max_packet: u32,
    /// Packets of all kinds read from the TUN device (whole run, setup included).
    pub packets_read: u64,
}

struct Pkt {
    data: Vec<u8>,
    flow: Option<u32>,
    payload: u32,
    line: usize,
}

impl WireLen for Pkt {
    fn wire_len(&self) -> u32 {
        self.data.len() as u32
    }
}

#[derive(PartialEq)]
enum Dir {
    Data,
    Ack,
}

struct Parsed {
    dir: Dir,
    flow: Option<u32>,
    tcp: bool,
    payload: u32,
    /// SYN, FIN or RST.
    control: bool,
}

fn parse(p: &[u8], nflows: usize) -> Parsed {
    let mut r = Parsed {
        dir: Dir::Data,
        flow: None,
        tcp: false,
        payload: 0,
        control: false,
    };
    if p.len() < 20 || p[0] >> 4 != 4 {
        return r;
    }
    let dst = [p[16], p[17], p[18], p[19]];
    if addr::is_sender_side(dst) {
        r.dir = Dir::Ack;
    }
    let ihl = (p[0] & 0xf) as usize * 4;
    let tot = u16::from_be_bytes([p[2], p[3]]) as usize;
    if p[9] != libc::IPPROTO_TCP as u8 || p.len() < ihl + 20 {
        return r;
    }
    r.tcp = true;
    let t = &p[ihl..];
    let sport = u16::from_be_bytes([t[0], t[1]]);
    let dport = u16::from_be_bytes([t[2], t[3]]);
    let doff = (t[12] >> 4) as usize * 4;
    r.payload = tot.saturating_sub(ihl + doff) as u32;
    r.control = t[13] & 0x07 != 0;
    let port = if r.dir == Dir::Data { sport } else { dport };
    r.flow = port
        .checked_sub(addr::FLOW_PORT_BASE)
        .map(|i| i as u32)
        .filter(|&i| (i as usize) < nflows);
    r
}

/// Runs the element on `tun` until `shared.stop`; call on a thread inside the router namespace.
pub fn run(
    tun: OwnedFd,
    cfg: ElementConfig,
    shared: Arc<ElementShared>,
) -> io::Result<ElementStats> {
    sys::set_timer_slack(1);
    if cfg.realtime {
        // Keep the sender's and receiver's work from delaying the path (best effort).
        sys::set_realtime(10);
    }
    let fd = tun.as_raw_fd();
    let nflows = cfg.flow_group.len();
    let ngroups = cfg.group_extra_ns.len();
    // Lines 0..ngroups: groups; line ngroups: packets of no flow (base RTT).
    let mut fwd: Vec<DelayLine<Pkt>> = Vec::new();
    let mut rev: Vec<DelayLine<Pkt>> = Vec::new();
    for g in 0..=ngroups {
        let rtt = cfg.rtt_ns + cfg.group_extra_ns.get(g).copied().unwrap_or(0);
        let one_way_fwd = rtt / 2;
        fwd.push(DelayLine::new(one_way_fwd));
        rev.push(DelayLine::new(rtt - one_way_fwd));
    }
    let mut bn: Bottleneck<Pkt> = Bottleneck::new(cfg.rate_bps, cfg.buffer_bytes);
    let loss = LossModel::from_probability(cfg.loss);
    let ack_loss = LossModel::from_probability(cfg.ack_loss);
    let mut loss_rng = Rng::derive(cfg.seed, 1);
    let mut ack_rng = Rng::derive(cfg.seed, 2);
    let mut st = ElementStats {
        flow_payload_bytes: vec![0; nflows],
        ..Default::default()
    };
    // Bottleneck counters when the counting window opened, and whether it has.
    let mut base: Option<cclab_link::LinkCounters> = None;
    let mut final_counters: Option<cclab_link::LinkCounters> = None;
    let mut buf = vec![0u8; 65536];
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let in_window = |now: u64| {
        now >= shared.count_from.load(Ordering::Relaxed)
            && now <= shared.count_until.load(Ordering::Relaxed)
    };

    while !shared.stop.load(Ordering::Relaxed) {
        // 1. Take in what arrived.
        for _ in 0..512 {
            let n = match sys::read_fd(fd, &mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let now = sys::now_ns();
            let counting = in_window(now);
            if counting && base.is_none() {
                base = Some(bn.counters().clone());
            }
            st.packets_read += 1;
            st.max_packet = st.max_packet.max(n as u32);
            let p = parse(&buf[..n], nflows);
            let line = p
                .flow
                .map_or(ngroups, |f| cfg.flow_group[f as usize] as usize);
            // Buffers are reused: a FIFO of live allocations that glibc keeps trimming and
            // regrowing cost millisecond stalls at 50 ms delay.
            let mut data = pool.pop().unwrap_or_else(|| Vec::with_capacity(2048));
            data.clear();
            data.extend_from_slice(&buf[..n]);
            let pkt = Pkt {
                data,
                flow: p.flow,
                payload: p.payload,
                line,
            };
            match p.dir {
                Dir::Data => {
                    let is_data = !p.tcp || (p.payload > 0 && !p.control);
                    if is_data {
                        if counting {
                            st.data_pkts_in += 1;
                        }
                        if loss.drop(&mut loss_rng) {
                            if counting {
                                st.drops_random += 1;
                            }
                            continue;
                        }
                    }
                    // Events in time order: departures due by now leave before this arrival
                    // (the Bottleneck assumes it, as in the simulator's event loop).
                    drain(&mut bn, &mut fwd, &mut st, now, counting);
                    let _ = bn.enqueue(now, pkt);
                }
                Dir::Ack => {
                    if p.tcp && p.payload == 0 && !p.control {
                        if counting {
                            st.acks_in += 1;
                        }
                        if ack_loss.drop(&mut ack_rng) {
                            if counting {
                                st.drops_ack += 1;
                            }
                            continue;
                        }
                    }
                    rev[line].push(now, pkt);
                }
            }
        }
        // 2. Bottleneck departures enter their delay lines at their exact departure time.
        let now = sys::now_ns();
        let counting = in_window(now);
        if counting && base.is_none() {
            base = Some(bn.counters().clone());
        }
        if base.is_some()
            && !counting
            && final_counters.is_none()
            && now > shared.count_until.load(Ordering::Relaxed)
        {
            final_counters = Some(bn.counters().clone());
        }
        drain(&mut bn, &mut fwd, &mut st, now, counting);
        shared.backlog.store(bn.backlog_bytes(), Ordering::Relaxed);
        // 3. Release what is due.
        for line in fwd.iter_mut().chain(rev.iter_mut()) {
            while let Some(due) = line.next_due() {
                if due > now {
                    break;
                }
                let p = line.pop_due(now).expect("due");
                if counting {
                    st.lateness.record(now - due);
                }
                // An error (the stack refused it, e.g. no route yet) is a loss outside the model.
                let _ = sys::write_fd(fd, &p.data);
                if pool.len() < 1 << 16 {
                    pool.push(p.data);
                }
            }
        }
        // 4. Wait for the next event.
        let mut next = bn.next_departure();
        for line in fwd.iter().chain(rev.iter()) {
            if let Some(d) = line.next_due() {
                next = Some(next.map_or(d, |n: u64| n.min(d)));
            }
        }
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
                const SPIN_NS: u64 = 100_000;
                let w = wait.unwrap_or(10_000_000).min(10_000_000);
                if w > SPIN_NS {
                    sys::wait_readable(fd, Some(w - SPIN_NS))?;
                }
            }
        }
    }
    let end = final_counters.unwrap_or_else(|| bn.counters().clone());
    let b = base.unwrap_or_else(|| end.clone());
    st.forwarded_pkts = end.forwarded_pkts - b.forwarded_pkts;
    st.forwarded_bytes = end.forwarded_bytes - b.forwarded_bytes;
    st.drops_buffer = end.drops_buffer - b.drops_buffer;
    Ok(st)
}

/// Move every bottleneck departure due by `now` into its delay line, at its exact departure time.
fn drain(
    bn: &mut Bottleneck<Pkt>,
    fwd: &mut [DelayLine<Pkt>],
    st: &mut ElementStats,
    now: u64,
    counting: bool,
) {
    while let Some(t) = bn.next_departure() {
        if t > now {
            break;
        }
        let d = bn.dequeue(now).expect("due packet");
        if counting {
            st.queue_delay.record(d.queue_delay);
            if let Some(f) = d.pkt.flow {
                st.flow_payload_bytes[f as usize] += d.pkt.payload as u64;
            }
        }
        let l = d.pkt.line;
        fwd[l].push(t, d.pkt);
    }
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
