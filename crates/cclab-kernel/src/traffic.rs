//! cclab's own traffic: a receiver thread in the receiver namespace that reads and counts,
//! and a sender thread in the sender namespace that connects every flow, writes on
//! schedule and samples TCP_INFO.

#![allow(clippy::needless_range_loop)] // flows are indexed across several parallel vectors

use crate::addr;
use crate::sys::{self, TcpInfo};
use crate::KernelError;
use cclab_results::Histogram;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// One flow of a run.
#[derive(Clone, Debug)]
pub struct FlowPlan {
    pub cc: String,
    pub group: u32,
    pub start_ns: u64,
    pub size: Option<u64>,
    /// `SO_SNDBUF` as the scenario forces it (`hosts.sndbuf`), bytes; `None` = autotuned.
    pub sndbuf: Option<u64>,
    /// Pace the socket though its controller does not ask (`hosts.pacing`).
    pub pacing: bool,
}

/// State the threads of a run share.
#[derive(Debug)]
pub struct Shared {
    pub stop: AtomicBool,
    /// CLOCK_MONOTONIC of the run's time zero (0 until every flow is connected).
    pub t0: AtomicU64,
    /// CLOCK_MONOTONIC at which the run ends (u64::MAX until known).
    pub end: AtomicU64,
    /// Bytes the receiving application read, per flow (within the run).
    pub delivered: Vec<AtomicU64>,
    /// CLOCK_MONOTONIC when a sized flow's last byte was read (0 = not yet).
    pub completed: Vec<AtomicU64>,
    pub accepted: AtomicUsize,
}

impl Shared {
    pub fn new(n: usize) -> Self {
        Shared {
            stop: AtomicBool::new(false),
            t0: AtomicU64::new(0),
            end: AtomicU64::new(u64::MAX),
            delivered: (0..n).map(|_| AtomicU64::new(0)).collect(),
            completed: (0..n).map(|_| AtomicU64::new(0)).collect(),
            accepted: AtomicUsize::new(0),
        }
    }
}

/// A `poll` entry waiting for `events` (`libc::POLLIN`, `libc::POLLOUT`) on `fd`.
pub(crate) fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

pub(crate) fn poll(fds: &mut [libc::pollfd], timeout_ns: u64) -> io::Result<usize> {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as _,
        tv_nsec: (timeout_ns % 1_000_000_000) as _,
    };
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as _, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(0);
        }
        return Err(e);
    }
    Ok(r as usize)
}

// ---- receiver --------------------------------------------------------------------------

/// Listening sockets, one per group; create on a thread inside the receiver namespace.
/// `rcvbuf`: `SO_RCVBUF` as the scenario forces it (`hosts.rcvbuf`); `None` = autotuned.
/// `group_cc`: the controller a group's receiving sockets run (accepted sockets inherit
/// it), where its receiver half matters (see `controllers::receiver_cc`); `None` leaves
/// the namespace's default.
pub fn listen(
    groups: usize,
    rcvbuf: Option<u64>,
    group_cc: &[Option<String>],
) -> io::Result<Vec<OwnedFd>> {
    let mut v = Vec::new();
    for g in 0..groups {
        let s = sys::new_socket(libc::SOCK_STREAM)?;
        let fd = s.as_raw_fd();
        sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
        if let Some(Some(cc)) = group_cc.get(g) {
            sys::set_congestion(fd, cc)?;
        }
        if let Some(b) = rcvbuf {
            // Accepted sockets inherit the size and its lock (no autotuning).
            sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, b as i32)?;
        }
        sys::bind(fd, addr::receiver(g), addr::RECEIVER_PORT)?;
        if unsafe { libc::listen(fd, 1024) } < 0 {
            return Err(io::Error::last_os_error());
        }
        sys::set_nonblocking(fd)?;
        v.push(s);
    }
    Ok(v)
}

/// Accept every flow and read until stopped, counting bytes per flow.
pub fn receive(listeners: Vec<OwnedFd>, plans: Vec<FlowPlan>, sh: Arc<Shared>) -> io::Result<()> {
    let n = plans.len();
    let mut conns: Vec<Option<OwnedFd>> = (0..n).map(|_| None).collect();
    let mut buf = vec![0u8; 1 << 20];
    let mut total: Vec<u64> = vec![0; n];
    while !sh.stop.load(Ordering::Relaxed) {
        let mut fds: Vec<libc::pollfd> = listeners
            .iter()
            .map(|l| pollfd(l.as_raw_fd(), libc::POLLIN))
            .collect();
        let mut idx = Vec::new();
        for (i, c) in conns.iter().enumerate() {
            if let Some(c) = c {
                fds.push(pollfd(c.as_raw_fd(), libc::POLLIN));
                idx.push(i);
            }
        }
        poll(&mut fds, 5_000_000)?;
        for (k, l) in listeners.iter().enumerate() {
            if fds[k].revents == 0 {
                continue;
            }
            loop {
                let c = unsafe {
                    libc::accept4(
                        l.as_raw_fd(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                    )
                };
                if c < 0 {
                    break;
                }
                let c = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(c) };
                // Closed with RST after the run, as the sender's are: a FIN left to time out
                // in a deleted namespace would keep the socket (and a BPF controller's
                // program) alive for minutes.
                sys::set_abortive_close(c.as_raw_fd())?;
                let port = sys::peer_port(c.as_raw_fd())?;
                if let Some(i) = port
                    .checked_sub(addr::FLOW_PORT_BASE)
                    .map(|i| i as usize)
                    .filter(|&i| i < n)
                {
                    conns[i] = Some(c);
                    sh.accepted.fetch_add(1, Ordering::SeqCst);
                }
            }
        }
        for (j, &i) in idx.iter().enumerate() {
            if fds[listeners.len() + j].revents == 0 {
                continue;
            }
            let fd = conns[i].as_ref().unwrap().as_raw_fd();
            let mut eof = false;
            loop {
                match sys::read_fd(fd, &mut buf) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(k) => {
                        let now = sys::now_ns();
                        if now <= sh.end.load(Ordering::Relaxed) {
                            total[i] += k as u64;
                            sh.delivered[i].store(total[i], Ordering::Relaxed);
                            if let Some(sz) = plans[i].size {
                                if total[i] >= sz && sh.completed[i].load(Ordering::Relaxed) == 0 {
                                    sh.completed[i].store(now, Ordering::SeqCst);
                                }
                            }
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        eof = true;
                        break;
                    }
                }
            }
            if eof {
                conns[i] = None;
            }
        }
    }
    Ok(())
}

// ---- sender ----------------------------------------------------------------------------

/// Per-flow record the sender thread returns.
#[derive(Clone, Debug, Default)]
pub struct FlowOutcome {
    /// Last TCP_INFO read (at the end of the run).
    pub info: TcpInfo,
    pub info_len: usize,
    /// Smoothed RTT (tcpi_rtt) samples, ns.
    pub rtt: Histogram,
    pub cwnd: Vec<f64>,
    pub inflight: Vec<f64>,
    pub pacing_bps: Vec<f64>,
    pub srtt_ms: Vec<f64>,
    pub delivery_bps: Vec<f64>,
    pub goodput_bps: Vec<f64>,
}

/// What the sender thread returns.
#[derive(Debug, Default)]
pub struct SendOutcome {
    pub flows: Vec<FlowOutcome>,
    /// End time of each series bin, s from time zero.
    pub t_s: Vec<f64>,
    pub link_queue: Vec<f64>,
    /// Run end, ns from time zero.
    pub end_rel: u64,
    pub interrupted: Option<i32>,
    /// Congestion control each socket reports (getsockopt TCP_CONGESTION).
    pub cc_used: Vec<String>,
}

pub struct SendConfig {
    pub plans: Vec<FlowPlan>,
    pub duration_ns: Option<u64>,
    pub limit_ns: u64,
    pub connect_timeout_ns: u64,
    pub sample_ns: u64,
    pub bin_ns: u64,
}

/// Create, configure and connect the flows' sockets (on a thread in the sender namespace).
fn connect_all(cfg: &SendConfig, sh: &Shared) -> Result<Vec<OwnedFd>, KernelError> {
    let mut socks = Vec::new();
    let io = |what: &str, e: io::Error| KernelError::Io(format!("{what}: {e}"));
    for (i, p) in cfg.plans.iter().enumerate() {
        let s = sys::new_socket(libc::SOCK_STREAM).map_err(|e| io("socket", e))?;
        let fd = s.as_raw_fd();
        sys::set_congestion(fd, &p.cc).map_err(|e| {
            if e.raw_os_error() == Some(libc::ENOENT) {
                KernelError::CcUnavailable {
                    cc: p.cc.clone(),
                    available: crate::available_ccs(),
                }
            } else {
                io(&format!("setting TCP_CONGESTION {}", p.cc), e)
            }
        })?;
        if let Some(b) = p.sndbuf {
            sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, b as i32)
                .map_err(|e| io("hosts.sndbuf (SO_SNDBUFFORCE)", e))?;
        }
        if p.pacing {
            // Any finite SO_MAX_PACING_RATE turns on TCP's internal pacing
            // (`SK_PACING_NEEDED`) for every controller, as the fq qdisc would pace it;
            // this rate is far above any lab link, so the controller's own rate rules.
            sys::setsockopt_raw(
                fd,
                libc::SOL_SOCKET,
                libc::SO_MAX_PACING_RATE,
                &(1u64 << 40).to_ne_bytes(),
            )
            .map_err(|e| io("hosts.pacing (SO_MAX_PACING_RATE)", e))?;
        }
        sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)
            .map_err(|e| io("SO_REUSEADDR", e))?;
        sys::set_abortive_close(fd).map_err(|e| io("SO_LINGER", e))?;
        sys::bind(fd, addr::SENDER, addr::FLOW_PORT_BASE + i as u16).map_err(|e| io("bind", e))?;
        sys::set_nonblocking(fd).map_err(|e| io("O_NONBLOCK", e))?;
        sys::connect(fd, addr::receiver(p.group as usize), addr::RECEIVER_PORT)
            .map_err(|e| io("connect", e))?;
        socks.push(s);
    }
    let deadline = sys::now_ns() + cfg.connect_timeout_ns;
    let mut pending: Vec<usize> = (0..socks.len()).collect();
    while !pending.is_empty() {
        if sh.stop.load(Ordering::Relaxed) || sys::interrupted().is_some() {
            return Err(KernelError::Interrupted(
                sys::interrupted().unwrap_or(libc::SIGTERM),
            ));
        }
        let now = sys::now_ns();
        if now > deadline {
            return Err(KernelError::Timeout(format!(
                "{} of {} flows could not connect through the emulated path within {:.0} s",
                pending.len(),
                socks.len(),
                cfg.connect_timeout_ns as f64 / 1e9
            )));
        }
        let mut fds: Vec<libc::pollfd> = pending
            .iter()
            .map(|&i| pollfd(socks[i].as_raw_fd(), libc::POLLOUT))
            .collect();
        poll(&mut fds, 10_000_000).map_err(|e| io("poll", e))?;
        let mut still = Vec::new();
        for (k, &i) in pending.iter().enumerate() {
            if fds[k].revents != 0 {
                let err = sys::socket_error(socks[i].as_raw_fd()).map_err(|e| io("SO_ERROR", e))?;
                if err != 0 {
                    return Err(KernelError::Io(format!(
                        "flow {i} could not connect: {}",
                        io::Error::from_raw_os_error(err)
                    )));
                }
            } else {
                still.push(i);
            }
        }
        pending = still;
    }
    // Every connection accepted by the receiver too.
    while sh.accepted.load(Ordering::SeqCst) < socks.len() {
        if sys::now_ns() > deadline {
            return Err(KernelError::Timeout(
                "the receiver did not accept every flow in time".into(),
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    Ok(socks)
}

/// The whole timeline of a run: connect, set time zero, write, sample, end.
pub fn send(
    cfg: SendConfig,
    sh: Arc<Shared>,
    backlog: Arc<crate::element::ElementShared>,
) -> Result<SendOutcome, KernelError> {
    let socks = connect_all(&cfg, &sh)?;
    let n = socks.len();
    let t0 = sys::now_ns();
    sh.t0.store(t0, Ordering::SeqCst);
    backlog.count_from.store(t0, Ordering::SeqCst);
    let zeros = vec![0u8; 1 << 20];
    let mut out = SendOutcome {
        flows: vec![FlowOutcome::default(); n],
        ..Default::default()
    };
    out.cc_used = socks
        .iter()
        .map(|s| sys::get_congestion(s.as_raw_fd()).unwrap_or_default())
        .collect();
    let mut written: Vec<u64> = vec![0; n];
    let mut write_done: Vec<bool> = vec![false; n];
    // A flow whose last write found the buffer full waits for POLLOUT, which Linux gives
    // once a third of the send buffer is free (`sk_stream_is_writeable()`), as an
    // event-driven server (nginx, iperf3) does; it does not retry on every wake-up.
    let mut blocked: Vec<bool> = vec![false; n];
    let mut writable: Vec<bool> = vec![false; n];
    let mut last_delivered: Vec<u64> = vec![0; n];
    let mut next_sample = 0u64;
    let mut next_bin = cfg.bin_ns;
    let all_sized = cfg.plans.iter().all(|p| p.size.is_some());
    let limit = cfg.duration_ns.unwrap_or(cfg.limit_ns);
    let fds: Vec<RawFd> = socks.iter().map(|s| s.as_raw_fd()).collect();
    let end_rel;
    loop {
        let now = sys::now_ns();
        let rel = now - t0;
        if let Some(sig) = sys::interrupted() {
            out.interrupted = Some(sig);
            end_rel = rel;
            break;
        }
        if sh.stop.load(Ordering::Relaxed) {
            out.interrupted = Some(libc::SIGTERM);
            end_rel = rel;
            break;
        }
        if rel >= limit {
            end_rel = limit;
            break;
        }
        if cfg.duration_ns.is_none() && all_sized {
            let done: Vec<u64> = sh
                .completed
                .iter()
                .map(|c| c.load(Ordering::SeqCst))
                .collect();
            if done.iter().all(|&c| c != 0) {
                end_rel = done.iter().max().unwrap() - t0;
                break;
            }
        }
        // Writes.
        for i in 0..n {
            let p = &cfg.plans[i];
            if rel < p.start_ns || write_done[i] || (blocked[i] && !writable[i]) {
                continue;
            }
            writable[i] = false;
            loop {
                let want = match p.size {
                    Some(sz) => (sz - written[i]).min(zeros.len() as u64) as usize,
                    None => zeros.len(),
                };
                if want == 0 {
                    unsafe { libc::shutdown(fds[i], libc::SHUT_WR) };
                    write_done[i] = true;
                    break;
                }
                match sys::write_fd(fds[i], &zeros[..want]) {
                    Ok(k) => {
                        written[i] += k as u64;
                        blocked[i] = false;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        blocked[i] = true;
                        break;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        // Reset by the peer: nothing more to send.
                        write_done[i] = true;
                        break;
                    }
                }
            }
        }
        // Samples.
        if rel >= next_sample {
            for i in 0..n {
                if rel < cfg.plans[i].start_ns {
                    continue;
                }
                if let Ok((ti, len)) = sys::tcp_info(fds[i]) {
                    if ti.rtt > 0
                        && ti.data_segs_out > 0
                        && sh.completed[i].load(Ordering::Relaxed) == 0
                    {
                        out.flows[i].rtt.record(ti.rtt as u64 * 1000);
                    }
                    out.flows[i].info = ti;
                    out.flows[i].info_len = len;
                }
            }
            next_sample = rel + cfg.sample_ns;
        }
        if rel >= next_bin {
            bin(
                &mut out,
                &cfg,
                &sh,
                &mut last_delivered,
                rel,
                next_bin - cfg.bin_ns,
                &backlog,
            );
            next_bin += cfg.bin_ns;
        }
        // Wait for writability or the next deadline.
        let mut next = next_sample.min(next_bin).min(limit);
        for p in &cfg.plans {
            if p.start_ns > rel {
                next = next.min(p.start_ns);
            }
        }
        if all_sized && cfg.duration_ns.is_none() {
            next = next.min(rel + 2_000_000);
        }
        let waiting: Vec<usize> = (0..n).filter(|&i| blocked[i] && !write_done[i]).collect();
        let mut pfds: Vec<libc::pollfd> = waiting
            .iter()
            .map(|&i| pollfd(fds[i], libc::POLLOUT))
            .collect();
        let wait = next.saturating_sub(sys::now_ns() - t0).max(1);
        poll(&mut pfds, wait).map_err(|e| KernelError::Io(format!("poll: {e}")))?;
        for (k, &i) in waiting.iter().enumerate() {
            writable[i] = pfds[k].revents != 0;
        }
    }
    let end_abs = t0 + end_rel;
    sh.end.store(end_abs, Ordering::SeqCst);
    backlog.count_until.store(end_abs, Ordering::SeqCst);
    // Final TCP_INFO and a last (partial) bin.
    for i in 0..n {
        if let Ok((ti, len)) = sys::tcp_info(fds[i]) {
            out.flows[i].info = ti;
            out.flows[i].info_len = len;
        }
    }
    let last_bin_start = next_bin - cfg.bin_ns;
    if end_rel > last_bin_start || out.t_s.is_empty() {
        bin(
            &mut out,
            &cfg,
            &sh,
            &mut last_delivered,
            end_rel,
            last_bin_start,
            &backlog,
        );
    }
    out.end_rel = end_rel;
    Ok(out)
}

fn bin(
    out: &mut SendOutcome,
    cfg: &SendConfig,
    sh: &Shared,
    last_delivered: &mut [u64],
    t: u64,
    from: u64,
    backlog: &crate::element::ElementShared,
) {
    let dt = (t.saturating_sub(from)).max(1) as f64 / 1e9;
    out.t_s.push(t as f64 / 1e9);
    out.link_queue
        .push(backlog.backlog.load(Ordering::Relaxed) as f64);
    for (i, f) in out.flows.iter_mut().enumerate() {
        let d = sh.delivered[i].load(Ordering::Relaxed);
        f.goodput_bps
            .push((d - last_delivered[i]) as f64 * 8.0 / dt);
        last_delivered[i] = d;
        let started = t >= cfg.plans[i].start_ns;
        let ti = &f.info;
        let v = |x: f64| if started { x } else { 0.0 };
        f.cwnd.push(v(ti.snd_cwnd as f64));
        f.inflight.push(v(sys::packets_in_flight(ti) as f64));
        let pacing = if ti.pacing_rate == u64::MAX {
            0.0
        } else {
            ti.pacing_rate as f64 * 8.0
        };
        f.pacing_bps.push(v(pacing));
        f.srtt_ms.push(v(ti.rtt as f64 / 1000.0));
        f.delivery_bps.push(v(ti.delivery_rate as f64 * 8.0));
    }
}
