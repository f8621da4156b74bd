//! How fast the link element can go: UDP packets of 1500 bytes (IP) at increasing rates
//! through a lab whose bottleneck is far faster than the offered load, counting what
//! arrives. The capacity is the highest offered rate that arrives with <= 1% loss.
//!
//! With a queue discipline (`aqm`), the bottleneck runs 5% faster than the offered load, so
//! packets that arrive in a bunch wait in the discipline's queue (every packet passes its
//! enqueue and dequeue) while its standing queue stays short of dropping.

use crate::element::{self, ElementMode, ElementShared, ElementTiming};
use crate::{addr, sys, topo, KernelError};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// One measured rate.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CapacityPoint {
    pub one_way_delay_ms: f64,
    pub offered_bps: f64,
    /// What the sender managed to send.
    pub sent_bps: f64,
    pub sent_pkts: u64,
    pub received_pkts: u64,
    /// 1 - received / sent.
    pub loss: f64,
    /// Median and p99 of how late the element released packets, us.
    pub lateness_p50_us: f64,
    pub lateness_p99_us: f64,
    pub lateness_max_us: f64,
    /// Bottleneck queueing delay p99, us: packets that waited in the queue discipline (the
    /// AQM cases run the bottleneck 5% above the offered rate so that bunched ones do).
    pub queue_p99_us: f64,
    /// "segments" or "gso".
    pub mode: String,
    /// Mean IP bytes per packet the element read (1500 per segment; more with GSO).
    pub mean_read_bytes: f64,
}

/// Segments per GSO send in the GSO benchmark (44 x 1472 = 64768 bytes of UDP payload).
const GSO_SEGS: usize = 44;
const SOL_UDP: libc::c_int = 17;
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

const PKT: usize = 1500;
const UDP_PAYLOAD: usize = PKT - 28;

/// Offer each of `rates_bps` for `secs` through an element with `one_way_delay_ns` of delay
/// in the data direction; stops after the first rate with more than 1% loss. In
/// [`ElementMode::Gso`] the sender sends UDP GSO super-packets (`UDP_SEGMENT`, 44 segments
/// of 1500-byte IP packets) that cross the TUN device whole when the kernel offers `USO4`.
pub fn element_capacity(
    one_way_delay_ns: u64,
    rates_bps: &[f64],
    secs: f64,
    timing: ElementTiming,
    mode: ElementMode,
    aqm: &cclab_path::AqmDesc,
) -> Result<Vec<CapacityPoint>, KernelError> {
    crate::check_privileges()?;
    let _signals = sys::SignalGuard::install();
    let topo = topo::Topology::create(&topo::TopoConfig {
        mtu: PKT as u32,
        group_init_cwnd: vec![10],
        group_ecn: vec![],
        host: Default::default(),
        nic_rate_bps: None,
    })?;
    let mut points = Vec::new();
    for &rate in rates_bps {
        if sys::interrupted().is_some() {
            break;
        }
        let p = one_point(&topo, one_way_delay_ns, rate, secs, timing, mode, aqm)?;
        let stop = p.loss > 0.01 || p.sent_bps < 0.9 * p.offered_bps;
        points.push(p);
        if stop {
            break;
        }
    }
    Ok(points)
}

fn one_point(
    topo: &topo::Topology,
    delay: u64,
    rate: f64,
    secs: f64,
    timing: ElementTiming,
    mode: ElementMode,
    aqm: &cclab_path::AqmDesc,
) -> Result<CapacityPoint, KernelError> {
    let el_shared = Arc::new(ElementShared::new());
    let mut cfg = bench_element(2 * delay, vec![], timing, mode);
    if *aqm != cclab_path::AqmDesc::default() {
        cfg.link.aqm = aqm.clone();
        cfg.link.rate_bps = rate * 1.05;
    }
    let (el, ready) = element::spawn(topo.rtr.clone(), cfg, el_shared.clone(), None);
    let stop_el = |el: std::thread::JoinHandle<std::io::Result<element::ElementStats>>| {
        el_shared.stop.store(true, Ordering::SeqCst);
        el.join()
    };
    if let Err(e) = ready {
        let _ = stop_el(el);
        return Err(KernelError::Setup(format!("TUN: {e}")));
    }
    // Routes through the TUN device exist only while a TUN of that name does: re-add each time.
    if let Err(e) = topo.route_through_tun(PKT as u32) {
        let _ = stop_el(el);
        return Err(e);
    }
    el_shared.count_from.store(0, Ordering::SeqCst);

    let received = Arc::new(AtomicU64::new(0));
    let rstop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let (rcv, r2, rs2) = (topo.rcv.clone(), received.clone(), rstop.clone());
    let receiver = std::thread::spawn(move || -> std::io::Result<()> {
        let r = (|| {
            sys::place(false);
            sys::enter_netns(&rcv)?;
            let s = sys::new_socket(libc::SOCK_DGRAM)?;
            sys::setsockopt_int(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                256 << 20,
            )?;
            // Coalesced reads (one per GSO super-packet): the receiver must not be the limit.
            let _ = sys::setsockopt_int(s.as_raw_fd(), SOL_UDP, UDP_GRO, 1);
            sys::bind(s.as_raw_fd(), addr::receiver(0), 9000)?;
            sys::set_nonblocking(s.as_raw_fd())?;
            Ok(s)
        })();
        let s = match r {
            Ok(s) => {
                let _ = tx.send(Ok(()));
                s
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                return Ok(());
            }
        };
        let mut buf = vec![0u8; 65536];
        while !rs2.load(Ordering::Relaxed) {
            match sys::read_fd(s.as_raw_fd(), &mut buf) {
                Ok(k) => {
                    // Datagrams of 1472 bytes, coalesced or not.
                    r2.fetch_add(k.div_ceil(UDP_PAYLOAD) as u64, Ordering::Relaxed);
                }
                Err(_) => {
                    sys::wait_readable(s.as_raw_fd(), Some(1_000_000))?;
                }
            }
        }
        Ok(())
    });
    let rr = rx
        .recv()
        .unwrap_or(Err(std::io::Error::other("receiver died")));

    let snd = topo.snd.clone();
    let sent = if rr.is_ok() {
        std::thread::spawn(move || -> std::io::Result<(u64, f64)> {
            sys::place(false);
            sys::enter_netns(&snd)?;
            let s = sys::new_socket(libc::SOCK_DGRAM)?;
            sys::setsockopt_int(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUFFORCE,
                16 << 20,
            )?;
            sys::connect(s.as_raw_fd(), addr::receiver(0), 9000)?;
            let per_msg = if mode == ElementMode::Gso {
                sys::setsockopt_int(s.as_raw_fd(), SOL_UDP, UDP_SEGMENT, UDP_PAYLOAD as i32)?;
                GSO_SEGS
            } else {
                1
            };
            let payload = vec![0u8; UDP_PAYLOAD * per_msg];
            const BATCH: usize = 64;
            let mut iov: Vec<libc::iovec> = (0..BATCH)
                .map(|_| libc::iovec {
                    iov_base: payload.as_ptr() as *mut _,
                    iov_len: payload.len(),
                })
                .collect();
            let mut msgs: Vec<libc::mmsghdr> = (0..BATCH)
                .map(|i| {
                    let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                    h.msg_hdr.msg_iov = &mut iov[i];
                    h.msg_hdr.msg_iovlen = 1;
                    h
                })
                .collect();
            sys::set_timer_slack(1);
            let pps = rate / (PKT as f64 * 8.0);
            let start = sys::now_ns();
            let dur = (secs * 1e9) as u64;
            let mut n = 0u64;
            loop {
                let el = sys::now_ns() - start;
                if el >= dur {
                    break;
                }
                let target = (el as f64 / 1e9 * pps) as u64;
                if n >= target {
                    // Pace in 100 us steps, sleeping: a spinning sender would take the CPU
                    // the element and the receiver need on a 2-core machine.
                    std::thread::sleep(std::time::Duration::from_micros(100));
                    continue;
                }
                let k = ((target - n) as usize).div_ceil(per_msg).min(BATCH);
                let r = unsafe { libc::sendmmsg(s.as_raw_fd(), msgs.as_mut_ptr(), k as u32, 0) };
                if r > 0 {
                    n += r as u64 * per_msg as u64;
                }
            }
            let el = (sys::now_ns() - start) as f64 / 1e9;
            Ok((n, el))
        })
        .join()
        .map_err(|_| std::io::Error::other("sender panicked"))
        .and_then(|r| r)
    } else {
        Err(std::io::Error::other("receiver failed"))
    };
    // Let the delay line drain.
    std::thread::sleep(std::time::Duration::from_nanos(delay + 300_000_000));
    rstop.store(true, Ordering::SeqCst);
    let _ = receiver.join();
    let st = stop_el(el);
    rr.map_err(|e| KernelError::Io(format!("bench receiver: {e}")))?;
    let (n, el) = sent.map_err(|e| KernelError::Io(format!("bench sender: {e}")))?;
    let st = st
        .map_err(|_| KernelError::Io("element panicked".into()))?
        .map_err(|e| KernelError::Io(format!("element: {e}")))?;
    let got = received.load(Ordering::SeqCst);
    Ok(CapacityPoint {
        one_way_delay_ms: delay as f64 / 1e6,
        offered_bps: rate,
        sent_bps: n as f64 * PKT as f64 * 8.0 / el,
        sent_pkts: n,
        received_pkts: got,
        loss: if n > 0 {
            1.0 - got as f64 / n as f64
        } else {
            0.0
        },
        lateness_p50_us: st.lateness.quantile(0.5).unwrap_or(0) as f64 / 1e3,
        lateness_p99_us: st.lateness.quantile(0.99).unwrap_or(0) as f64 / 1e3,
        lateness_max_us: st.lateness.max().unwrap_or(0) as f64 / 1e3,
        queue_p99_us: st.queue_delay.quantile(0.99).unwrap_or(0) as f64 / 1e3,
        mode: mode.name().to_string(),
        mean_read_bytes: if st.packets_read > 0 {
            // Reads carry the vnet header in GSO mode; close enough for a mean size.
            (n as f64 * PKT as f64) / st.packets_read as f64
        } else {
            0.0
        },
    })
}

/// Idle round-trip time through an emulated path of `rtt_ns` (no load): the time of `n`
/// TCP connects (SYN -> SYN-ACK) from the sender to the receiver namespace, ns each.
pub fn idle_rtt(rtt_ns: u64, n: usize, timing: ElementTiming) -> Result<Vec<u64>, KernelError> {
    crate::check_privileges()?;
    let _signals = sys::SignalGuard::install();
    let topo = topo::Topology::create(&topo::TopoConfig {
        mtu: PKT as u32,
        group_init_cwnd: vec![10],
        group_ecn: vec![],
        host: Default::default(),
        nic_rate_bps: None,
    })?;
    let el_shared = Arc::new(ElementShared::new());
    let mut cfg = bench_element(rtt_ns, vec![], timing, ElementMode::Segments);
    cfg.link.rate_bps = 1e9;
    cfg.buffer_bytes = 1 << 20;
    let (el, ready) = element::spawn(topo.rtr.clone(), cfg, el_shared.clone(), None);
    let res = (|| {
        ready.map_err(|e| KernelError::Setup(format!("TUN: {e}")))?;
        topo.route_through_tun(PKT as u32)?;
        let rcv = topo.rcv.clone();
        let l = sys::in_netns(&rcv, || {
            sys::place(false);
            let s = sys::new_socket(libc::SOCK_STREAM)?;
            sys::setsockopt_int(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
            sys::bind(s.as_raw_fd(), addr::receiver(0), addr::RECEIVER_PORT)?;
            if unsafe { libc::listen(s.as_raw_fd(), 4096) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(s)
        })
        .map_err(|e| KernelError::Io(format!("listen: {e}")))?;
        let snd = topo.snd.clone();
        let samples = sys::in_netns(&snd, move || {
            // Off the element's CPU: sharing it with the element's spinning costs ~1 ms.
            sys::place(false);
            let mut v = Vec::new();
            for _ in 0..n {
                if sys::interrupted().is_some() {
                    break;
                }
                let s = sys::new_socket(libc::SOCK_STREAM)?;
                let tv = libc::timeval {
                    tv_sec: 5,
                    tv_usec: 0,
                };
                sys::setsockopt_struct(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDTIMEO, &tv)?;
                let t = sys::now_ns();
                sys::connect(s.as_raw_fd(), addr::receiver(0), addr::RECEIVER_PORT)?;
                v.push(sys::now_ns() - t);
                drop(s);
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Ok(v)
        })
        .map_err(|e| KernelError::Io(format!("connect: {e}")))?;
        drop(l);
        Ok(samples)
    })();
    el_shared.stop.store(true, Ordering::SeqCst);
    let _ = el.join();
    res
}

/// Offered rates of the capacity sweep of each mode, bit/s.
pub fn sweep_rates(mode: ElementMode) -> Vec<f64> {
    let m: &[f64] = match mode {
        ElementMode::Segments => &[
            100.0, 200.0, 400.0, 600.0, 800.0, 1000.0, 1200.0, 1500.0, 2000.0,
        ],
        ElementMode::Gso => &[
            1000.0, 2000.0, 3000.0, 4000.0, 5000.0, 6000.0, 8000.0, 10000.0, 12000.0,
        ],
    };
    m.iter().map(|x| x * 1e6).collect()
}

/// Lateness (p99) up to which a point counts as delay-accurate, us.
pub const ACCURATE_P99_US: f64 = 1000.0;

/// The result of one capacity sweep (one mode, one delay).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Capacity {
    pub mode: String,
    pub one_way_delay_ms: f64,
    /// Highest offered rate carried with <= 1% loss (and sent at >= 95% of the offer).
    pub capacity_bps: f64,
    /// Highest such rate whose release lateness p99 is also <= [`ACCURATE_P99_US`].
    pub accurate_bps: f64,
    pub points: Vec<CapacityPoint>,
}

impl Capacity {
    fn from_points(mode: ElementMode, delay: u64, points: Vec<CapacityPoint>) -> Self {
        let ok = |p: &&CapacityPoint| p.loss <= 0.01 && p.sent_bps >= 0.95 * p.offered_bps;
        let capacity_bps = points
            .iter()
            .filter(ok)
            .map(|p| p.offered_bps)
            .fold(0.0, f64::max);
        let accurate_bps = points
            .iter()
            .filter(ok)
            .filter(|p| p.lateness_p99_us <= ACCURATE_P99_US)
            .map(|p| p.offered_bps)
            .fold(0.0, f64::max);
        Capacity {
            mode: mode.name().to_string(),
            one_way_delay_ms: delay as f64 / 1e6,
            capacity_bps,
            accurate_bps,
            points,
        }
    }
}

impl std::fmt::Display for Capacity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let best = self
            .points
            .iter()
            .find(|p| p.offered_bps == self.capacity_bps);
        write!(
            f,
            "element {:<8} {:>3.0} ms one-way: capacity {:>6.0} Mbit/s (<= 1% loss), delay-accurate (p99 lateness <= {:.0} us) to {:>6.0} Mbit/s",
            self.mode,
            self.one_way_delay_ms,
            self.capacity_bps / 1e6,
            ACCURATE_P99_US,
            self.accurate_bps / 1e6
        )?;
        if let Some(p) = best {
            write!(
                f,
                "; at capacity: loss {:.2}%, lateness p50 {:.0} us p99 {:.0} us",
                p.loss * 100.0,
                p.lateness_p50_us,
                p.lateness_p99_us
            )?;
            if p.queue_p99_us > 0.0 {
                write!(f, ", queue p99 {:.0} us", p.queue_p99_us)?;
            }
        }
        Ok(())
    }
}

/// [`element_capacity`] over [`sweep_rates`], summarised.
pub fn capacity_sweep(
    mode: ElementMode,
    one_way_delay_ns: u64,
    secs: f64,
    timing: ElementTiming,
    aqm: &cclab_path::AqmDesc,
) -> Result<Capacity, KernelError> {
    let pts = element_capacity(
        one_way_delay_ns,
        &sweep_rates(mode),
        secs,
        timing,
        mode,
        aqm,
    )?;
    Ok(Capacity::from_points(mode, one_way_delay_ns, pts))
}

/// One point of the TCP (GSO) capacity benchmark: one TCP flow (CUBIC), its rate capped by
/// `SO_MAX_PACING_RATE` at `rate_bps` (IP bytes), through an element of mode `mode` with
/// round-trip delay `rtt_ns`, an unlimited bottleneck and no random loss, for `secs`. The
/// sender hands GSO super-packets to its veth as Linux does; in GSO mode they cross the
/// element whole. "Loss" is what TCP had to retransmit (the element dropped nothing on
/// purpose); the rate is what arrived after the first second (slow start excluded).
pub fn tcp_capacity_point(
    mode: ElementMode,
    rtt_ns: u64,
    rate_bps: f64,
    secs: f64,
    timing: ElementTiming,
) -> Result<CapacityPoint, KernelError> {
    crate::check_privileges()?;
    let _signals = sys::SignalGuard::install();
    let topo = topo::Topology::create(&topo::TopoConfig {
        mtu: PKT as u32,
        group_init_cwnd: vec![10],
        group_ecn: vec![],
        host: Default::default(),
        nic_rate_bps: None,
    })?;
    let el_shared = Arc::new(ElementShared::new());
    let cfg = bench_element(rtt_ns, vec![0], timing, mode);
    let (el, ready) = element::spawn(topo.rtr.clone(), cfg, el_shared.clone(), None);
    let res = (|| -> Result<(u64, u64, f64, u64, u64), KernelError> {
        ready.map_err(|e| KernelError::Setup(format!("TUN: {e}")))?;
        topo.route_through_tun(PKT as u32)?;
        el_shared.count_from.store(0, Ordering::SeqCst);
        let bdp = (rate_bps / 8.0 * rtt_ns as f64 / 1e9) as i32;
        let buf = (4 * bdp).clamp(8 << 20, 512 << 20);
        let l = sys::in_netns(&topo.rcv, move || {
            let s = sys::new_socket(libc::SOCK_STREAM)?;
            sys::setsockopt_int(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
            sys::setsockopt_int(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, buf)?;
            sys::bind(s.as_raw_fd(), addr::receiver(0), addr::RECEIVER_PORT)?;
            if unsafe { libc::listen(s.as_raw_fd(), 16) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(s)
        })
        .map_err(|e| KernelError::Io(format!("listen: {e}")))?;
        let got = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (g2, s2, rcv) = (got.clone(), stop.clone(), topo.rcv.clone());
        let receiver = std::thread::spawn(move || -> std::io::Result<()> {
            sys::place(false);
            sys::enter_netns(&rcv)?;
            while !s2.load(Ordering::Relaxed) {
                if sys::wait_readable(l.as_raw_fd(), Some(10_000_000))? {
                    break;
                }
            }
            let c =
                unsafe { libc::accept(l.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut()) };
            if c < 0 {
                return Ok(());
            }
            let c = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(c) };
            sys::set_nonblocking(c.as_raw_fd())?;
            let mut b = vec![0u8; 1 << 20];
            while !s2.load(Ordering::Relaxed) {
                match sys::read_fd(c.as_raw_fd(), &mut b) {
                    Ok(0) => break,
                    Ok(k) => {
                        g2.fetch_add(k as u64, Ordering::Relaxed);
                    }
                    Err(_) => {
                        sys::wait_readable(c.as_raw_fd(), Some(5_000_000))?;
                    }
                }
            }
            Ok(())
        });
        let (snd, g3) = (topo.snd.clone(), got.clone());
        let sender = std::thread::spawn(move || -> std::io::Result<(u64, u64, f64, u64, u64)> {
            sys::place(false);
            sys::enter_netns(&snd)?;
            let s = sys::new_socket(libc::SOCK_STREAM)?;
            let fd = s.as_raw_fd();
            sys::set_congestion(fd, "cubic")?;
            sys::setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, buf)?;
            let pace = (rate_bps / 8.0) as u64;
            sys::setsockopt_raw(
                fd,
                libc::SOL_SOCKET,
                libc::SO_MAX_PACING_RATE,
                &pace.to_ne_bytes(),
            )?;
            sys::set_abortive_close(fd)?;
            sys::connect(fd, addr::receiver(0), addr::RECEIVER_PORT)?;
            sys::set_nonblocking(fd)?;
            let zeros = vec![0u8; 1 << 20];
            let start = sys::now_ns();
            let dur = (secs * 1e9) as u64;
            let (mut b1, mut t1) = (None, 0u64);
            loop {
                let now = sys::now_ns();
                if now - start >= dur || sys::interrupted().is_some() {
                    break;
                }
                if b1.is_none() && now - start >= 1_000_000_000 {
                    b1 = Some(g3.load(Ordering::Relaxed));
                    t1 = now;
                }
                match sys::write_fd(fd, &zeros) {
                    Ok(_) => {}
                    Err(_) => {
                        let mut p = crate::traffic::pollfd(fd, libc::POLLOUT);
                        unsafe { libc::poll(&mut p, 1, 5) };
                    }
                }
            }
            let end = sys::now_ns();
            let b2 = g3.load(Ordering::Relaxed);
            let (ti, _) = sys::tcp_info(fd)?;
            let b1 = b1.unwrap_or(0);
            let el = (end - t1.max(start)) as f64 / 1e9;
            Ok((
                b2 - b1,
                ti.data_segs_out as u64,
                el,
                ti.total_retrans as u64,
                b2,
            ))
        });
        let r = sender
            .join()
            .map_err(|_| KernelError::Io("sender panicked".into()))?;
        stop.store(true, Ordering::SeqCst);
        let _ = receiver.join();
        r.map_err(|e| KernelError::Io(format!("bench sender: {e}")))
    })();
    el_shared.stop.store(true, Ordering::SeqCst);
    let st = el.join();
    let (bytes, segs, el_s, retx, _total) = res?;
    let st = st
        .map_err(|_| KernelError::Io("element panicked".into()))?
        .map_err(|e| KernelError::Io(format!("element: {e}")))?;
    // Payload to IP bytes: 1448 of every 1500.
    let ip_bps = bytes as f64 * 8.0 / el_s * PKT as f64 / 1448.0;
    Ok(CapacityPoint {
        one_way_delay_ms: rtt_ns as f64 / 2e6,
        offered_bps: rate_bps,
        sent_bps: ip_bps,
        sent_pkts: segs,
        received_pkts: segs.saturating_sub(retx),
        loss: if segs > 0 {
            retx as f64 / segs as f64
        } else {
            0.0
        },
        lateness_p50_us: st.lateness.quantile(0.5).unwrap_or(0) as f64 / 1e3,
        lateness_p99_us: st.lateness.quantile(0.99).unwrap_or(0) as f64 / 1e3,
        lateness_max_us: st.lateness.max().unwrap_or(0) as f64 / 1e3,
        queue_p99_us: st.queue_delay.quantile(0.99).unwrap_or(0) as f64 / 1e3,
        mode: mode.name().to_string(),
        mean_read_bytes: if st.packets_read > 0 {
            st.forwarded_bytes as f64 / st.packets_read as f64
        } else {
            0.0
        },
    })
}

/// TCP capacity sweep of `mode` at round-trip delay `rtt_ns` (see [`tcp_capacity_point`]):
/// stops after the first rate that is not sustained.
pub fn tcp_capacity_sweep(
    mode: ElementMode,
    rtt_ns: u64,
    secs: f64,
    timing: ElementTiming,
) -> Result<Capacity, KernelError> {
    let mut pts = Vec::new();
    for rate in sweep_rates(mode) {
        if sys::interrupted().is_some() {
            break;
        }
        let p = tcp_capacity_point(mode, rtt_ns, rate, secs, timing)?;
        let stop = p.loss > 0.01 || p.sent_bps < 0.95 * p.offered_bps;
        pts.push(p);
        if stop {
            break;
        }
    }
    Ok(Capacity::from_points(mode, rtt_ns / 2, pts))
}

/// An element that only delays: no rate limit to speak of, no buffer limit, no loss, pinned.
fn bench_element(
    rtt_ns: u64,
    flow_group: Vec<u32>,
    timing: ElementTiming,
    mode: ElementMode,
) -> element::ElementConfig {
    element::ElementConfig {
        link: cclab_path::LinkDesc {
            rate_bps: 1e12,
            loss: 0.0,
            ack_loss: 0.0,
            ecn_threshold_ns: None,
            loss_burst: 1.0,
            rtt_ns,
            ..cclab_path::LinkDesc::default()
        },
        buffer_bytes: 1 << 30,
        seed: 1,
        group_extra_ns: vec![0],
        group_ect1: vec![false],
        flow_group,
        timing,
        realtime: false,
        mode,
        pin: true,
        mss: 1448,
        bin_ns: 0,
    }
}
