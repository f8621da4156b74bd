//! Latency probes on the kernel lab (`[[flows]]` groups of `kind = "probe"`): real UDP
//! datagrams through the element, as the simulator's probes cross its path.
//!
//! An echo thread in the receiver namespace answers on [`addr::PROBE_RECEIVER`] port
//! [`addr::PROBE_PORT`], sending each datagram back unchanged; a sender thread in the sender
//! namespace sends, for probe group `p` from port `PROBE_PORT_BASE + p`, one datagram of the
//! probe's payload every interval from its start (time zero is the TCP flows', once they are
//! connected), carrying its number and its send time (CLOCK_MONOTONIC). RTT = the echo's
//! arrival - that send time. The receiver address belongs to no flow group, so the element
//! gives probes the path's own RTT, as the simulator does; the datagrams meet the same
//! loss, queue and delay as the TCP packets, and the echo meets ACK loss as an ACK does (as
//! on the simulator). Both threads stop at the run's end, on [`Probes`]' drop (an error) and
//! on SIGINT/SIGTERM; their sockets close with them.

use crate::addr;
use crate::traffic::Shared;
use cclab_results::ProbeRecord;
use cclab_scenario::ProbeSpec;
use cclab_sys as sys;
use std::io;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The probe threads of one run; dropping it stops and joins them.
pub(crate) struct Probes {
    stop: Arc<AtomicBool>,
    echo: Option<JoinHandle<()>>,
    sender: Option<JoinHandle<io::Result<Vec<ProbeRecord>>>>,
}

/// Longest a probe thread sleeps between two looks at its stop flags, ns.
const TICK_NS: u64 = 5_000_000;

impl Probes {
    /// Starts the echo in namespace `rcv` and the sender in `snd` (nothing without probes),
    /// on the endpoints' CPUs when `pin` (as the flows' threads). Returns once both sockets are bound, or the error that kept one from it.
    pub(crate) fn start(
        specs: &[ProbeSpec],
        limit_ns: u64,
        pin: bool,
        snd: &str,
        rcv: &str,
        sh: Arc<Shared>,
    ) -> io::Result<Probes> {
        let mut me = Probes {
            stop: Arc::new(AtomicBool::new(false)),
            echo: None,
            sender: None,
        };
        if specs.is_empty() {
            return Ok(me);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (rcv, stop) = (rcv.to_string(), me.stop.clone());
        let tx2 = tx.clone();
        me.echo = Some(std::thread::spawn(move || {
            if pin {
                sys::place(false);
            }
            let sock = sys::enter_netns(&rcv).and_then(|_| {
                let s = UdpSocket::bind((Ipv4Addr::from(addr::PROBE_RECEIVER), addr::PROBE_PORT))?;
                s.set_read_timeout(Some(std::time::Duration::from_nanos(TICK_NS)))?;
                Ok(s)
            });
            match sock {
                Ok(s) => {
                    let _ = tx2.send(Ok(()));
                    echo(&s, &stop);
                }
                Err(e) => {
                    let _ = tx2.send(Err(e));
                }
            }
        }));
        rx.recv()
            .unwrap_or_else(|_| Err(io::Error::other("the probe echo thread died")))?;
        let (snd, stop, specs) = (snd.to_string(), me.stop.clone(), specs.to_vec());
        me.sender = Some(std::thread::spawn(move || {
            if pin {
                sys::place(false);
            }
            let socks = sys::enter_netns(&snd).and_then(|_| sender_sockets(specs.len()));
            match socks {
                Ok(socks) => {
                    let _ = tx.send(Ok(()));
                    Ok(send(&specs, &socks, limit_ns, &sh, &stop))
                }
                Err(e) => {
                    let _ = tx.send(Err(io::Error::new(e.kind(), e.to_string())));
                    Err(e)
                }
            }
        }));
        rx.recv()
            .unwrap_or_else(|_| Err(io::Error::other("the probe sender thread died")))?;
        Ok(me)
    }

    /// Waits for the sender's end (it stops at the run's end), stops the echo and returns
    /// each probe group's record, times from the run's time zero.
    pub(crate) fn finish(mut self) -> io::Result<Vec<ProbeRecord>> {
        let out = match self.sender.take() {
            Some(h) => h
                .join()
                .map_err(|_| io::Error::other("the probe sender thread panicked"))?,
            None => Ok(Vec::new()),
        };
        self.stop_all();
        out
    }

    fn stop_all(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.echo.take() {
            let _ = h.join();
        }
        if let Some(h) = self.sender.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Probes {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Sends back every datagram at once, unchanged, until `stop`.
fn echo(s: &UdpSocket, stop: &AtomicBool) {
    let mut buf = [0u8; 2048];
    while !stop.load(Ordering::Relaxed) && sys::interrupted().is_none() {
        if let Ok((n, from)) = s.recv_from(&mut buf) {
            let _ = s.send_to(&buf[..n], from);
        }
    }
}

/// One connected, non-blocking socket per probe group.
fn sender_sockets(n: usize) -> io::Result<Vec<UdpSocket>> {
    (0..n)
        .map(|p| {
            let s = UdpSocket::bind((
                Ipv4Addr::from(addr::SENDER),
                addr::PROBE_PORT_BASE + p as u16,
            ))?;
            s.connect((Ipv4Addr::from(addr::PROBE_RECEIVER), addr::PROBE_PORT))?;
            s.set_nonblocking(true)?;
            Ok(s)
        })
        .collect()
}

/// The probes' timeline: waits for time zero, sends on schedule until the run's end (or
/// `limit_ns` after time zero), and takes in the echoes.
fn send(
    specs: &[ProbeSpec],
    socks: &[UdpSocket],
    limit_ns: u64,
    sh: &Shared,
    stop: &AtomicBool,
) -> Vec<ProbeRecord> {
    let halted = || {
        stop.load(Ordering::Relaxed)
            || sh.stop.load(Ordering::Relaxed)
            || sys::interrupted().is_some()
    };
    let mut sent: Vec<Vec<(u64, Option<u64>)>> = vec![Vec::new(); specs.len()];
    let mut t0 = 0;
    while t0 == 0 && !halted() {
        std::thread::sleep(std::time::Duration::from_millis(1));
        t0 = sh.t0.load(Ordering::SeqCst);
    }
    let mut next: Vec<u64> = specs.iter().map(|s| t0 + s.start_ns).collect();
    let mut buf = vec![0u8; 2048];
    while t0 != 0 && !halted() {
        let now = sys::now_ns();
        let end = sh.end.load(Ordering::SeqCst).min(t0 + limit_ns);
        if now >= end {
            break;
        }
        for (p, s) in specs.iter().enumerate() {
            // A late wake-up sends every probe due (each with its own send time), so a run
            // sends as many as the simulator's.
            while next[p] <= now && next[p] < end {
                let seq = sent[p].len() as u64;
                let payload = &mut buf[..s.size_bytes as usize];
                payload.fill(0);
                payload[..8].copy_from_slice(&seq.to_le_bytes());
                let at = sys::now_ns();
                payload[8..16].copy_from_slice(&at.to_le_bytes());
                // A full socket buffer loses the probe, as a full queue would.
                let _ = socks[p].send(payload);
                sent[p].push((at - t0, None));
                next[p] += s.interval_ns;
            }
        }
        let wake = next.iter().copied().min().unwrap_or(end).min(end);
        let wait = wake.saturating_sub(sys::now_ns()).clamp(1, TICK_NS);
        let mut pfds: Vec<libc::pollfd> = socks
            .iter()
            .map(|s| crate::traffic::pollfd(s.as_raw_fd(), libc::POLLIN))
            .collect();
        let _ = crate::traffic::poll(&mut pfds, wait);
        for (p, s) in socks.iter().enumerate() {
            while let Ok(n) = s.recv(&mut buf) {
                let arrived = sys::now_ns();
                if n < 16 {
                    continue;
                }
                let seq = u64::from_le_bytes(buf[..8].try_into().unwrap_or_default());
                let at = u64::from_le_bytes(buf[8..16].try_into().unwrap_or_default());
                if let Some(e) = sent[p].get_mut(seq as usize).filter(|e| e.1.is_none()) {
                    e.1 = Some(arrived.saturating_sub(at));
                }
            }
        }
    }
    let end_rel = sh
        .end
        .load(Ordering::SeqCst)
        .min(t0.saturating_add(limit_ns))
        .saturating_sub(t0);
    specs
        .iter()
        .zip(sent)
        .map(|(s, probes)| ProbeRecord {
            group: s.group,
            interval_ns: s.interval_ns,
            size_bytes: s.size_bytes,
            start_ns: s.start_ns,
            probes,
            end_ns: end_rel,
        })
        .collect()
}
