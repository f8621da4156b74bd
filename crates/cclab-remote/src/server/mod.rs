//! `cclab serve`: the far end of `cclab perf`.
//!
//! One thread per connection and a deadline on every read. The server only accepts: every
//! connection, control and data, downloads included, is opened by the client (no reflection,
//! no amplification towards a third host). Without a key it takes loopback peers only.
//!
//! Admission (docs/remote.md, "Admission"): a peer that has not authenticated cannot keep a
//! key holder out. A new connection has [`Limits::handshake_timeout`] (2 s) for its whole
//! handshake (`Hello` and `Auth`, or a `DataHello`). Until then it counts against a pool of
//! its own, [`Limits::max_unauthenticated`] in all and
//! [`Limits::max_unauthenticated_per_addr`] per address; when either is full, the oldest
//! waiting connection (of that address, else of all) is closed to make room, so a new
//! connection always gets its 2 s. [`Limits::max_clients`] and [`Limits::max_sessions`]
//! count authenticated control sessions only. Refusals are logged once per address and
//! interval, then summed up ([`REFUSAL_WINDOW`]), so a flood cannot fill the log.
//!
//! A control session: `Hello` -> `Challenge` -> `Auth` -> `Welcome`, then runs. A run:
//! `RunRequest` -> `RunReady`; the client opens one data connection per stream, each starting
//! with a `DataHello` whose token is MACed with the session key; -> `RunStart`; the data;
//! (download: `Samples` each second) -> `RunDone`.
//!
//! Its parts: `state` (what the server keeps: the log, the refusal counts, the handshake
//! pool, each address's sessions, runs and bytes), `conn` (a connection from accept to its
//! end: admission, the handshake, a control session's loop, a data connection handed to its
//! run), `run` (one run: its checks against the limits, its data connections, the transfer).

mod conn;
mod run;
mod state;

pub use run::valid_cc_name;
pub use state::REFUSAL_WINDOW;

use crate::auth::Key;
use crate::{sampler, RemoteError};
use state::{Moved, Refusals, State, Unauth};
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the server allows each client (per client address).
#[derive(Clone, Debug)]
pub struct Limits {
    /// Longest run (default 60 s).
    pub max_duration: Duration,
    /// Most streams in one run (default 8).
    pub max_parallel: u16,
    /// Runs one client address may have going at once (default 2).
    pub max_runs: u16,
    /// Bytes one client address, and the key, may move in any hour (default 100 GB: one 60 s
    /// run at 10 Gbit/s and change). Per key as well as per address: a key holder with many
    /// addresses gets one budget.
    pub max_bytes: u64,
    /// Authenticated control sessions the server serves at once, all clients together
    /// (default 32).
    pub max_clients: usize,
    /// Authenticated control sessions one client address may have at once (default 4).
    pub max_sessions: usize,
    /// Time a new connection has for its whole handshake, `Hello` to `Auth` or its
    /// `DataHello` (default 2 s).
    pub handshake_timeout: Duration,
    /// Connections still in their handshake, all addresses together (default 64); when
    /// full, the oldest is closed for a new one.
    pub max_unauthenticated: usize,
    /// Connections still in their handshake from one address (default 4); when full, that
    /// address's oldest is closed for a new one.
    pub max_unauthenticated_per_addr: usize,
    /// Time a control session may stay silent between runs (default 60 s).
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_duration: Duration::from_secs(60),
            max_parallel: 8,
            max_runs: 2,
            max_bytes: 100_000_000_000,
            max_clients: 32,
            max_sessions: 4,
            handshake_timeout: Duration::from_secs(2),
            max_unauthenticated: 64,
            max_unauthenticated_per_addr: 4,
            idle_timeout: Duration::from_secs(60),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// The pre-shared key; without one only loopback peers are served.
    pub key: Option<Key>,
    pub limits: Limits,
    /// Write log lines to stderr (they are kept for [`ServerHandle::log`] either way).
    pub log_stderr: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: SocketAddr::from(([0, 0, 0, 0], crate::DEFAULT_PORT)),
            key: None,
            limits: Limits::default(),
            log_stderr: true,
        }
    }
}

/// A bound server (call [`Server::run`] or [`Server::spawn`]).
pub struct Server {
    listener: TcpListener,
    st: Arc<State>,
}

/// A server running on its own thread (tests, embedding).
pub struct ServerHandle {
    pub addr: SocketAddr,
    st: Arc<State>,
    thread: Option<std::thread::JoinHandle<Result<(), RemoteError>>>,
}

impl ServerHandle {
    /// The log lines so far.
    pub fn log(&self) -> Vec<String> {
        self.st
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    /// Connections being handled now (authenticated or not).
    pub fn connections(&self) -> usize {
        self.st.conns.load(Ordering::SeqCst)
    }

    /// Write the refusals counted so far as summary lines now (they are written when their
    /// 10 s window ends, and when the server stops).
    pub fn flush_refusals(&self) {
        self.st.flush_refusals(true);
    }

    /// Connections in their handshake now.
    pub fn unauthenticated(&self) -> usize {
        self.st
            .unauth
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .queue
            .len()
    }

    /// Stop accepting, end every session, and wait for their threads (up to 10 s).
    pub fn stop(mut self) -> Result<(), RemoteError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), RemoteError> {
        self.st.stop.store(true, Ordering::SeqCst);
        match self.thread.take() {
            Some(t) => t
                .join()
                .map_err(|_| RemoteError::Io("the server thread panicked".into()))?,
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl Server {
    /// Bind the listening socket (in the calling thread's network namespace).
    pub fn bind(opts: ServeOptions) -> Result<Server, RemoteError> {
        let listener = TcpListener::bind(opts.listen).map_err(|e| {
            RemoteError::Usage(format!(
                "cannot listen on {}: {e}{}",
                opts.listen,
                if e.kind() == std::io::ErrorKind::AddrInUse {
                    "; another server has the port (pick one with --listen ADDR:PORT)"
                } else {
                    ""
                }
            ))
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| RemoteError::Io(format!("listening socket: {e}")))?;
        Ok(Server {
            listener,
            st: Arc::new(State {
                key: opts.key,
                limits: opts.limits,
                log_stderr: opts.log_stderr,
                log: Mutex::new(VecDeque::new()),
                conns: AtomicUsize::new(0),
                authenticated: AtomicUsize::new(0),
                unauth: Mutex::new(Unauth::default()),
                refusals: Mutex::new(Refusals::default()),
                key_moved: Mutex::new(Moved::default()),
                clients: Mutex::new(HashMap::new()),
                sessions: Mutex::new(HashMap::new()),
                stop: Arc::new(AtomicBool::new(false)),
                kernel: sampler::kernel_release(),
                ccs: sampler::available(),
            }),
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// Run on a thread of its own; stop it with [`ServerHandle::stop`] (or drop the handle).
    pub fn spawn(self) -> ServerHandle {
        let addr = self.local_addr();
        let st = self.st.clone();
        let thread = std::thread::spawn(move || self.run());
        ServerHandle {
            addr,
            st,
            thread: Some(thread),
        }
    }

    /// Serve until SIGINT/SIGTERM (or the handle's stop); then close every session.
    pub fn run(self) -> Result<(), RemoteError> {
        let _signals = cclab_sys::SignalGuard::install();
        let st = &self.st;
        st.log(format!(
            "listening on {} ({}; kernel {}, controllers: {})",
            self.local_addr(),
            if st.key.is_some() {
                "key required"
            } else {
                "no key: loopback peers only"
            },
            st.kernel,
            st.ccs.join(" ")
        ));
        loop {
            if st.stop.load(Ordering::SeqCst) {
                break;
            }
            if let Some(sig) = cclab_sys::interrupted() {
                st.log(format!(
                    "stopped by {}: closing every session",
                    if sig == libc::SIGTERM {
                        "SIGTERM"
                    } else {
                        "SIGINT"
                    }
                ));
                break;
            }
            st.flush_refusals(false);
            match self.listener.accept() {
                Ok((s, peer)) => self.admit(s, peer),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let _ = cclab_sys::wait_readable(
                        std::os::fd::AsRawFd::as_raw_fd(&self.listener),
                        Some(100_000_000),
                    );
                }
                Err(e) => {
                    st.log(format!("accept failed: {e}"));
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        st.stop.store(true, Ordering::SeqCst);
        st.flush_refusals(true);
        // Every thread notices the flag within a read timeout or a sample period.
        let deadline = Instant::now() + Duration::from_secs(10);
        while st.conns.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

/// A loopback address, IPv4-mapped IPv6 included.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v) => v.is_loopback(),
        IpAddr::V6(v) => v.is_loopback() || v.to_ipv4_mapped().is_some_and(|m| m.is_loopback()),
    }
}

/// `ADDR:PORT`, `ADDR` (port [`crate::DEFAULT_PORT`]) or `:PORT` (all addresses).
pub fn parse_listen(s: &str) -> Result<SocketAddr, RemoteError> {
    let s = s.trim();
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, crate::DEFAULT_PORT));
    }
    if let Some(p) = s.strip_prefix(':').and_then(|p| p.parse::<u16>().ok()) {
        return Ok(SocketAddr::from(([0, 0, 0, 0], p)));
    }
    Err(RemoteError::Usage(format!(
        "--listen \"{s}\": expected ADDR:PORT, ADDR or :PORT (e.g. 0.0.0.0:{})",
        crate::DEFAULT_PORT
    )))
}
