//! The element's thread: it enters the router namespace, opens the TUN device, then reads
//! packets, moves them through the path, writes back what is due and waits for the next
//! event until told to stop; at the end, the statistics of the counting window.

use super::counters::{counters_between, QueueTrack};
use super::path::El;
use super::RttTrack;
use super::{open_tun, ElementConfig, ElementMode, ElementShared, ElementStats, ElementTiming};
use crate::sys;
use cclab_path::{PathDesc, BOTTLENECK};
use cclab_results::trace::TraceWriter;
use cclab_results::Histogram;
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;

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
        buffer_bytes: cfg.buffer_bytes,
        class_extra_rtt_ns: extras.clone(),
        seed: cfg.seed,
    };
    let data = path.data_chain();
    let mut queues: Vec<Option<QueueTrack>> = (0..data.names().len()).map(|_| None).collect();
    for j in data.queue_positions() {
        queues[j] = Some(QueueTrack::with_subs(data.subqueues(j)));
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
            flow_ecn_in: vec![[0; 4]; nflows],
            flow_rtt: vec![Histogram::default(); nflows],
            ..Default::default()
        },
        rtt: (0..nflows).map(|_| RttTrack::default()).collect(),
        stall_end: 0,
        released: vec![VecDeque::new(); nflows],
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
        let Some(q) = q else { continue };
        for (name, q) in q.named(format!("data.{}", names[j])) {
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
