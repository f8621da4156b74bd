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

use crate::auth::{self, Key};
use crate::protocol::{
    code, Conn, LimitsMsg, Msg, ProtoError, StreamDone, MAC_LEN, SESSION_LEN, VERSION,
};
use crate::transfer::{self, SendPlan};
use crate::{sampler, RemoteError};
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
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

/// Use by one client address.
#[derive(Default)]
struct Client {
    /// Authenticated control sessions.
    sessions: usize,
    runs: u16,
    /// Bytes moved, with when (the last hour's count against `max_bytes`).
    moved: Moved,
}

/// Bytes moved, with when; the last hour's sum is held against `max_bytes`.
#[derive(Default)]
struct Moved(VecDeque<(Instant, u64)>);

impl Moved {
    fn last_hour(&mut self) -> u64 {
        let hour = Duration::from_secs(3600);
        while self.0.front().is_some_and(|(t, _)| t.elapsed() > hour) {
            self.0.pop_front();
        }
        self.0.iter().map(|(_, b)| b).sum()
    }
    fn add(&mut self, bytes: u64) {
        self.0.push_back((Instant::now(), bytes));
    }
}

/// Connections in their handshake (see the module docs).
#[derive(Default)]
struct Unauth {
    per_addr: HashMap<IpAddr, usize>,
    /// (id, address, a handle that closes it), oldest first.
    queue: VecDeque<(u64, IpAddr, TcpStream)>,
    next_id: u64,
}

impl Unauth {
    /// Close and forget the oldest waiting connection (of `ip` if given).
    fn evict_oldest(&mut self, ip: Option<IpAddr>) -> Option<IpAddr> {
        let i = match ip {
            Some(ip) => self.queue.iter().position(|(_, a, _)| *a == ip)?,
            None if self.queue.is_empty() => return None,
            None => 0,
        };
        let (_, a, s) = self.queue.remove(i)?;
        let _ = s.shutdown(std::net::Shutdown::Both);
        self.forget_addr(a);
        Some(a)
    }
    fn forget_addr(&mut self, a: IpAddr) {
        if let Some(n) = self.per_addr.get_mut(&a) {
            *n -= 1;
            if *n == 0 {
                self.per_addr.remove(&a);
            }
        }
    }
    /// The connection `id` finished its handshake, or ended: it leaves the pool.
    fn remove(&mut self, id: u64) {
        if let Some(i) = self.queue.iter().position(|(k, _, _)| *k == id) {
            let (_, a, _) = self.queue.remove(i).expect("present");
            self.forget_addr(a);
        }
    }
}

/// Refusals are logged in full once per address, reason and window, then counted; a summary
/// line per address closes each window. Bounds the log under a flood of connections that
/// never authenticate (issue #27).
pub const REFUSAL_WINDOW: Duration = Duration::from_secs(10);
/// Addresses whose refusals are counted separately; beyond, they share one count.
const REFUSAL_ADDRS: usize = 256;

/// Refusals counted after the first of each reason, by reason.
type Counts = Vec<(&'static str, u64)>;

#[derive(Default)]
struct Refusals {
    /// Per address (`None`: every address beyond [`REFUSAL_ADDRS`]): when its window began,
    /// and by reason the refusals counted after the first (which was logged).
    by_addr: HashMap<Option<IpAddr>, (Instant, Counts)>,
}

/// A run waiting for its data connections.
struct Pending {
    run: u32,
    seen: Vec<bool>,
    tx: mpsc::SyncSender<(u16, TcpStream)>,
}

struct Session {
    key: [u8; MAC_LEN],
    peer: IpAddr,
    pending: Option<Pending>,
}

struct State {
    key: Option<Key>,
    limits: Limits,
    log_stderr: bool,
    log: Mutex<VecDeque<String>>,
    /// Connection threads running (authenticated or not).
    conns: AtomicUsize,
    /// Authenticated control sessions, against `max_clients`.
    authenticated: AtomicUsize,
    unauth: Mutex<Unauth>,
    refusals: Mutex<Refusals>,
    /// Bytes moved under the key (all addresses), against `max_bytes`.
    key_moved: Mutex<Moved>,
    clients: Mutex<HashMap<IpAddr, Client>>,
    sessions: Mutex<HashMap<[u8; SESSION_LEN], Session>>,
    stop: Arc<AtomicBool>,
    kernel: String,
    ccs: Vec<String>,
}

/// Most log lines kept in memory.
const LOG_KEEP: usize = 1000;

impl State {
    fn log(&self, msg: String) {
        if self.log_stderr {
            eprintln!("cclab serve: {msg}");
        }
        let mut l = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if l.len() >= LOG_KEEP {
            l.pop_front();
        }
        l.push_back(msg);
    }

    fn client<T>(&self, ip: IpAddr, f: impl FnOnce(&mut Client) -> T) -> T {
        let mut c = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let r = f(c.entry(ip).or_default());
        c.retain(|_, v| v.sessions > 0 || v.runs > 0 || !v.moved.0.is_empty());
        r
    }

    /// A refused or failed connection of a peer that has not authenticated: logged in full
    /// if it is the first of its address in the current window, else counted (`reason` is
    /// the count's label).
    fn refusal(&self, ip: IpAddr, reason: &'static str, line: impl FnOnce() -> String) {
        let now = Instant::now();
        let first = {
            let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
            let key = if r.by_addr.contains_key(&Some(ip)) || r.by_addr.len() < REFUSAL_ADDRS {
                Some(ip)
            } else {
                None
            };
            let (_, counts) = r.by_addr.entry(key).or_insert_with(|| (now, Vec::new()));
            match counts.iter_mut().find(|(k, _)| *k == reason) {
                Some((_, n)) => {
                    *n += 1;
                    false
                }
                None => {
                    counts.push((reason, 0));
                    true
                }
            }
        };
        if first {
            self.log(format!(
                "{} (more like it from this address in the next {} s are counted, not logged)",
                line(),
                REFUSAL_WINDOW.as_secs()
            ));
        }
        self.flush_refusals(false);
    }

    /// Log a summary for every window that has ended (every window with `all`).
    fn flush_refusals(&self, all: bool) {
        let done: Vec<(Option<IpAddr>, Counts)> = {
            let mut r = self.refusals.lock().unwrap_or_else(|e| e.into_inner());
            let ended: Vec<Option<IpAddr>> = r
                .by_addr
                .iter()
                .filter(|(_, (t, _))| all || t.elapsed() >= REFUSAL_WINDOW)
                .map(|(k, _)| *k)
                .collect();
            ended
                .into_iter()
                .filter_map(|k| r.by_addr.remove(&k).map(|(_, c)| (k, c)))
                .collect()
        };
        for (addr, counts) in done {
            let total: u64 = counts.iter().map(|(_, n)| n).sum();
            if total == 0 {
                continue;
            }
            let what = counts
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!("{k} x{n}"))
                .collect::<Vec<_>>()
                .join(", ");
            self.log(format!(
                "{}: {total} more refused in {} s ({what})",
                addr.map_or("other addresses".to_string(), |a| a.to_string()),
                REFUSAL_WINDOW.as_secs()
            ));
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

    fn admit(&self, s: TcpStream, peer: SocketAddr) {
        let st = &self.st;
        let _ = s.set_nonblocking(false);
        let ip = peer.ip();
        if st.key.is_none() && !is_loopback(ip) {
            st.refusal(ip, "not loopback", || {
                format!("refused {peer}: not a loopback peer and this server has no key")
            });
            if let Ok(c) = s.try_clone() {
                let _ = c.set_write_timeout(Some(Duration::from_secs(1)));
                Conn { stream: c }.send_error(
                    code::REFUSED,
                    "this cclab server has no key and serves loopback peers only; start it with --key-file F and give perf the same key",
                );
            }
            return;
        }
        // The handshake pool: room is made by closing the oldest waiting connection, of
        // this address if it has its share, else of all.
        let Ok(closer) = s.try_clone() else { return };
        let l = &st.limits;
        let (id, evicted) = {
            let mut u = st.unauth.lock().unwrap_or_else(|e| e.into_inner());
            let mut evicted = None;
            if u.per_addr.get(&ip).copied().unwrap_or(0) >= l.max_unauthenticated_per_addr {
                evicted = u.evict_oldest(Some(ip));
            }
            if u.queue.len() >= l.max_unauthenticated {
                evicted = u.evict_oldest(None);
            }
            let id = u.next_id;
            u.next_id += 1;
            u.queue.push_back((id, ip, closer));
            *u.per_addr.entry(ip).or_default() += 1;
            (id, evicted)
        };
        if let Some(a) = evicted {
            st.refusal(a, "closed unauthenticated for a newer connection", || {
                format!("{a}: a connection still in its handshake was closed to make room for a newer one")
            });
        }
        st.conns.fetch_add(1, Ordering::SeqCst);
        let st = st.clone();
        std::thread::spawn(move || {
            struct Count(Arc<State>, u64);
            impl Drop for Count {
                fn drop(&mut self) {
                    self.0
                        .unauth
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(self.1);
                    self.0.conns.fetch_sub(1, Ordering::SeqCst);
                }
            }
            let _count = Count(st.clone(), id);
            let deadline = Instant::now() + st.limits.handshake_timeout;
            handle(&st, s, peer, id, deadline);
        });
    }
}

/// A loopback address, IPv4-mapped IPv6 included.
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v) => v.is_loopback(),
        IpAddr::V6(v) => v.is_loopback() || v.to_ipv4_mapped().is_some_and(|m| m.is_loopback()),
    }
}

/// Time left until `deadline` (at least 1 ms, so a read that is due at once still waits
/// for bytes already sent).
fn left(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

fn handle(st: &Arc<State>, s: TcpStream, peer: SocketAddr, id: u64, deadline: Instant) {
    let mut conn = match Conn::new(s) {
        Ok(c) => c,
        Err(_) => return,
    };
    match conn.recv(left(deadline)) {
        Ok(Msg::Hello { version, nonce }) => control(st, conn, peer, version, nonce, id, deadline),
        Ok(Msg::DataHello {
            session,
            run,
            stream,
            mac,
        }) => data(st, conn, peer, session, run, stream, mac, id),
        Ok(m) => {
            st.refusal(peer.ip(), "wrong first message", || {
                format!("{peer}: sent {} first; closed", m.name())
            });
            conn.send_error(
                code::BAD_REQUEST,
                &format!("expected Hello or DataHello, got {}", m.name()),
            );
        }
        Err(e) => reject(st, &mut conn, peer, "opening", e, true),
    }
}

/// Log a failed read and tell the peer when it sent something wrong; `unauth`: the peer has
/// not authenticated, so the line goes through the refusal log.
fn reject(st: &State, conn: &mut Conn, peer: SocketAddr, when: &str, e: ProtoError, unauth: bool) {
    match &e {
        ProtoError::Malformed(_) | ProtoError::BadLength(_) => {
            conn.send_error(code::BAD_REQUEST, &e.to_string());
        }
        ProtoError::Timeout => {
            conn.send_error(
                code::BAD_REQUEST,
                &format!("nothing arrived in time ({when})"),
            );
        }
        _ => {}
    }
    let line = || format!("{peer}: {when}: {e}; closed");
    if unauth {
        let reason = match &e {
            ProtoError::Timeout => "handshake not done in time",
            ProtoError::Closed => "closed in its handshake",
            _ => "bad handshake",
        };
        st.refusal(peer.ip(), reason, line);
    } else {
        st.log(line());
    }
}

#[allow(clippy::too_many_arguments)]
fn data(
    st: &State,
    conn: Conn,
    peer: SocketAddr,
    session: [u8; SESSION_LEN],
    run: u32,
    stream: u16,
    mac: [u8; MAC_LEN],
    id: u64,
) {
    let mut sock = Some(conn.stream);
    let mut sessions = st.sessions.lock().unwrap_or_else(|e| e.into_inner());
    let why = match sessions.get_mut(&session) {
        None => "no such session".to_string(),
        Some(s) if s.peer != peer.ip() => {
            "a data connection from another address than its session".into()
        }
        Some(s) if !auth::data_token_ok(&s.key, &session, run, stream, &mac) => {
            "bad data token".into()
        }
        Some(s) => match &mut s.pending {
            Some(p)
                if p.run == run && (stream as usize) < p.seen.len() && !p.seen[stream as usize] =>
            {
                p.seen[stream as usize] = true;
                // Authenticated by its token: out of the handshake pool before the run
                // takes it (the pool's eviction must not close it).
                st.unauth
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(id);
                match p.tx.try_send((stream, sock.take().expect("socket"))) {
                    Ok(()) => return,
                    Err(
                        mpsc::TrySendError::Full((_, s)) | mpsc::TrySendError::Disconnected((_, s)),
                    ) => sock = Some(s),
                }
                "the run is no longer waiting".into()
            }
            _ => format!("run {run} stream {stream} is not expected"),
        },
    };
    drop(sessions);
    st.refusal(peer.ip(), "data connection refused", || {
        format!("{peer}: data connection refused: {why}")
    });
    if let Some(s) = sock {
        Conn { stream: s }.send_error(code::AUTH, &format!("data connection refused: {why}"));
    }
}

/// Removes the session and its counts (the client's and the server's) when the control
/// thread of an authenticated session ends.
struct SessionGuard<'a> {
    st: &'a State,
    ip: IpAddr,
    id: [u8; SESSION_LEN],
}

impl Drop for SessionGuard<'_> {
    fn drop(&mut self) {
        self.st
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        self.st.client(self.ip, |c| c.sessions -= 1);
        self.st.authenticated.fetch_sub(1, Ordering::SeqCst);
    }
}

fn control(
    st: &Arc<State>,
    mut conn: Conn,
    peer: SocketAddr,
    version: u16,
    nc: [u8; 32],
    id: u64,
    deadline: Instant,
) {
    let ip = peer.ip();
    if version != VERSION {
        st.refusal(ip, "protocol version", || {
            format!("{peer}: protocol version {version}; closed")
        });
        conn.send_error(
            code::VERSION,
            &format!("this server speaks cclab protocol {VERSION}, the client {version}; run the same cclab version on both hosts"),
        );
        return;
    }
    let ns = match auth::nonce() {
        Ok(n) => n,
        Err(e) => {
            conn.send_error(code::INTERNAL, &e.to_string());
            return;
        }
    };
    if conn
        .send(&Msg::Challenge {
            version: VERSION,
            nonce: ns,
            key_required: st.key.is_some(),
        })
        .is_err()
    {
        return;
    }
    let mac = match conn.recv(left(deadline)) {
        Ok(Msg::Auth { mac }) => mac,
        Ok(m) => {
            st.refusal(ip, "no Auth", || {
                format!("{peer}: sent {} instead of Auth; closed", m.name())
            });
            conn.send_error(
                code::BAD_REQUEST,
                &format!("expected Auth, got {}", m.name()),
            );
            return;
        }
        Err(e) => return reject(st, &mut conn, peer, "authenticating", e, true),
    };
    let key: &[u8] = st.key.as_ref().map_or(&[], |k| k.bytes());
    if st.key.is_some() {
        let ok = mac.is_some_and(|m| auth::verify(key, auth::CLIENT, &[&nc, &ns], &m));
        if !ok {
            let reason = if mac.is_some() {
                "authentication failed (wrong key)"
            } else {
                "authentication failed (no key)"
            };
            st.refusal(ip, reason, || {
                format!(
                    "{peer}: authentication failed ({})",
                    if mac.is_some() { "wrong key" } else { "no key" }
                )
            });
            conn.send_error(
                code::AUTH,
                if mac.is_some() {
                    "authentication failed: the client's key is not this server's"
                } else {
                    "this server needs a key: pass --key-file with the server's key"
                },
            );
            return;
        }
    }
    // Authenticated: out of the handshake pool, into the sessions the caps count.
    st.unauth
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(id);
    let l = &st.limits;
    if st.authenticated.fetch_add(1, Ordering::SeqCst) >= l.max_clients {
        st.authenticated.fetch_sub(1, Ordering::SeqCst);
        st.log(format!(
            "{peer}: refused: {} sessions already (--max-clients)",
            l.max_clients
        ));
        conn.send_error(
            code::BUSY,
            "the server has as many clients as it takes; try again later",
        );
        return;
    }
    let admitted = st.client(ip, |c| {
        if c.sessions >= l.max_sessions {
            false
        } else {
            c.sessions += 1;
            true
        }
    });
    if !admitted {
        st.authenticated.fetch_sub(1, Ordering::SeqCst);
        st.log(format!(
            "{peer}: refused: {} sessions of this client already",
            l.max_sessions
        ));
        conn.send_error(
            code::LIMIT,
            &format!(
                "this client has {} sessions open already (the server's limit)",
                l.max_sessions
            ),
        );
        return;
    }
    let session: [u8; SESSION_LEN] = match auth::random() {
        Ok(s) => s,
        Err(e) => {
            st.client(ip, |c| c.sessions -= 1);
            st.authenticated.fetch_sub(1, Ordering::SeqCst);
            conn.send_error(code::INTERNAL, &e.to_string());
            return;
        }
    };
    let sk = auth::session_key(key, &nc, &ns);
    st.sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(
            session,
            Session {
                key: sk,
                peer: ip,
                pending: None,
            },
        );
    let _guard = SessionGuard {
        st,
        ip,
        id: session,
    };
    let l = &st.limits;
    let welcome = Msg::Welcome {
        mac: st
            .key
            .as_ref()
            .map(|k| auth::mac(k.bytes(), auth::SERVER, &[&nc, &ns])),
        session,
        kernel: st.kernel.clone(),
        ccs: st.ccs.clone(),
        limits: LimitsMsg {
            max_duration_ms: l.max_duration.as_millis().min(u32::MAX as u128) as u32,
            max_parallel: l.max_parallel,
            max_runs: l.max_runs,
            max_bytes: l.max_bytes,
        },
    };
    if conn.send(&welcome).is_err() {
        return;
    }
    st.log(format!("{peer}: session opened"));
    let mut last_run = 0u32;
    loop {
        if st.stop.load(Ordering::SeqCst) {
            conn.send_error(code::INTERNAL, "the server is shutting down");
            break;
        }
        // Between runs the session waits in short slices so a shutdown is noticed.
        let msg = match recv_idle(st, &mut conn) {
            Ok(m) => m,
            Err(ProtoError::Closed) => break,
            Err(e) => return reject(st, &mut conn, peer, "waiting for a run", e, false),
        };
        match msg {
            Msg::RunRequest {
                run,
                cc,
                reverse,
                duration_ms,
                size,
                parallel,
                pace,
            } => {
                if run <= last_run {
                    conn.send_error(
                        code::BAD_REQUEST,
                        &format!("run {run} after run {last_run}: run numbers must increase"),
                    );
                    st.log(format!("{peer}: run number {run} reused; closed"));
                    break;
                }
                last_run = run;
                let req = RunReq {
                    run,
                    cc,
                    reverse,
                    duration: Duration::from_millis(duration_ms as u64),
                    size: (size > 0).then_some(size),
                    parallel,
                    pace,
                };
                match serve_run(st, &mut conn, peer, session, &req) {
                    Ok(()) => {}
                    Err((code, why, fatal)) => {
                        st.log(format!("{peer}: run {run}: {why}"));
                        conn.send_error(code, &why);
                        if fatal {
                            break;
                        }
                    }
                }
            }
            Msg::Bye => break,
            m => {
                st.log(format!("{peer}: sent {} between runs; closed", m.name()));
                conn.send_error(
                    code::BAD_REQUEST,
                    &format!("expected RunRequest or Bye, got {}", m.name()),
                );
                break;
            }
        }
    }
    st.log(format!("{peer}: session closed"));
}

/// The next message of an idle session: up to the idle timeout, in 1 s slices that check
/// the stop flag (a slice that ends inside a frame is an error, as it should be: a peer
/// sends whole frames).
fn recv_idle(st: &State, conn: &mut Conn) -> Result<Msg, ProtoError> {
    let deadline = Instant::now() + st.limits.idle_timeout;
    loop {
        if st.stop.load(Ordering::SeqCst) {
            return Err(ProtoError::Closed);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProtoError::Timeout);
        }
        let first = cclab_sys::wait_readable(
            std::os::fd::AsRawFd::as_raw_fd(&conn.stream),
            Some(left.min(Duration::from_secs(1)).as_nanos() as u64),
        )
        .map_err(ProtoError::Io)?;
        if first {
            return conn.recv(st.limits.handshake_timeout);
        }
    }
}

struct RunReq {
    run: u32,
    cc: String,
    reverse: bool,
    duration: Duration,
    size: Option<u64>,
    parallel: u16,
    /// Pacing cap of each sending socket, bytes/s (0: none; an upload's client sets its own).
    pace: u64,
}

/// A controller name as Linux spells them (at most 15 bytes of `[a-z0-9_]`).
pub fn valid_cc_name(cc: &str) -> bool {
    !cc.is_empty()
        && cc.len() < 16
        && cc
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// Releases the client's run slot.
struct RunSlot<'a> {
    st: &'a State,
    ip: IpAddr,
}

impl Drop for RunSlot<'_> {
    fn drop(&mut self) {
        self.st.client(self.ip, |c| c.runs -= 1);
    }
}

/// Clears the session's pending run.
struct PendingGuard<'a> {
    st: &'a State,
    session: [u8; SESSION_LEN],
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Some(s) = self
            .st
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(&self.session)
        {
            s.pending = None;
        }
    }
}

/// Time the client has to open a run's data connections.
const DATA_CONNECT: Duration = Duration::from_secs(10);
/// What a receiving server waits beyond the run's duration for the client's last bytes
/// (issue #27: an upload asked for 2 s was accepted for 12 s).
const UPLOAD_GRACE: Duration = Duration::from_secs(2);

/// One run; errors are (code, message, whether the session must end).
fn serve_run(
    st: &Arc<State>,
    conn: &mut Conn,
    peer: SocketAddr,
    session: [u8; SESSION_LEN],
    req: &RunReq,
) -> Result<(), (u16, String, bool)> {
    let l = &st.limits;
    let ip = peer.ip();
    if !valid_cc_name(&req.cc) {
        return Err((
            code::BAD_REQUEST,
            format!(
                "\"{}\" is not a congestion control name",
                crate::text::escape(&req.cc)
            ),
            true,
        ));
    }
    if req.parallel == 0 || req.parallel > l.max_parallel {
        return Err((
            code::LIMIT,
            format!(
                "{} streams asked; this server takes 1 to {} (--max-parallel on serve)",
                req.parallel, l.max_parallel
            ),
            false,
        ));
    }
    if req.duration.is_zero() || req.duration > l.max_duration {
        return Err((
            code::LIMIT,
            format!("a run of {:.1} s asked; this server takes runs up to {} s (--max-duration on serve)", req.duration.as_secs_f64(), l.max_duration.as_secs_f64()),
            false,
        ));
    }
    if !req.reverse {
        sampler::check_cc(&req.cc).map_err(|m| (code::CC, m, false))?;
    }
    let budget = st.client(ip, |c| {
        if c.runs >= l.max_runs {
            return Err((code::LIMIT, format!("this client has {} runs going already (the server's limit; --max-runs on serve)", c.runs), false));
        }
        let moved = c.moved.last_hour();
        if moved >= l.max_bytes {
            return Err((code::LIMIT, format!("this client moved {moved} bytes in the last hour, the server's limit is {} (--max-bytes on serve)", l.max_bytes), false));
        }
        // The key's own budget: every address that holds it together.
        let key_moved = if st.key.is_some() {
            st.key_moved.lock().unwrap_or_else(|e| e.into_inner()).last_hour()
        } else {
            0
        };
        if key_moved >= l.max_bytes {
            return Err((code::LIMIT, format!("clients with this server's key moved {key_moved} bytes in the last hour, the server's limit per key is {} (--max-bytes on serve)", l.max_bytes), false));
        }
        c.runs += 1;
        Ok(l.max_bytes - moved.max(key_moved))
    })?;
    let slot = RunSlot { st, ip };
    let n = req.parallel as usize;
    let (tx, rx) = mpsc::sync_channel(n);
    {
        let mut s = st.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = s.get_mut(&session) {
            s.pending = Some(Pending {
                run: req.run,
                seen: vec![false; n],
                tx,
            });
        }
    }
    let pending = PendingGuard { st, session };
    let io = |e: std::io::Error| (code::INTERNAL, format!("control connection: {e}"), true);
    conn.send(&Msg::RunReady { run: req.run }).map_err(io)?;
    let mut streams: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    let deadline = Instant::now() + DATA_CONNECT;
    for _ in 0..n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, s)) => streams[i as usize] = Some(s),
            Err(_) => {
                return Err((
                    code::BAD_REQUEST,
                    format!(
                        "the client opened {} of {n} data connections within {} s",
                        streams.iter().flatten().count(),
                        DATA_CONNECT.as_secs()
                    ),
                    true,
                ));
            }
        }
    }
    drop(pending);
    let streams: Vec<TcpStream> = streams.into_iter().flatten().collect();
    if !req.reverse {
        for s in &streams {
            sampler::set_cc(std::os::fd::AsRawFd::as_raw_fd(s), &req.cc)
                .map_err(|m| (code::CC, m, false))?;
            if req.pace > 0 {
                sampler::set_max_pacing(std::os::fd::AsRawFd::as_raw_fd(s), req.pace)
                    .map_err(|m| (code::INTERNAL, m, false))?;
            }
        }
    }
    conn.send(&Msg::RunStart { run: req.run }).map_err(io)?;
    let started = Instant::now();
    let (done, moved, note) = if !req.reverse {
        let plan = SendPlan {
            duration: req.duration,
            size: req.size,
            budget,
            batch: Duration::from_millis(250),
            keep: false,
        };
        let mut ctl_ok = true;
        let out = transfer::send(streams, &plan, &st.stop, |stream, samples| {
            ctl_ok = ctl_ok
                && conn
                    .send(&Msg::Samples {
                        run: req.run,
                        stream,
                        samples: samples.to_vec(),
                    })
                    .is_ok();
            ctl_ok
        });
        let moved: u64 = out.streams.iter().map(|s| s.bytes).sum();
        let done: Vec<StreamDone> = out
            .streams
            .iter()
            .map(|s| StreamDone {
                bytes: s.bytes,
                elapsed_ns: s.elapsed_ns,
                cc: s.cc.clone(),
            })
            .collect();
        let note = if out.budget_hit {
            "stopped at the server's byte limit for this client"
        } else if out.stopped {
            "stopped early (the server is shutting down, or the client went away)"
        } else if out.broken {
            "stopped early: the client closed a data connection"
        } else {
            ""
        };
        (done, moved, note)
    } else {
        let t0 = Instant::now();
        let (recv, hit) = transfer::receive(
            streams,
            t0,
            t0 + req.duration + UPLOAD_GRACE,
            budget,
            &st.stop,
            None,
        );
        let moved = recv.iter().map(|r| r.bytes).sum();
        let done = recv
            .iter()
            .map(|r| StreamDone {
                bytes: r.bytes,
                elapsed_ns: r.last_ns,
                cc: String::new(),
            })
            .collect();
        (
            done,
            moved,
            if hit {
                "stopped at the server's byte limit for this client"
            } else {
                ""
            },
        )
    };
    st.client(ip, |c| c.moved.add(moved));
    if st.key.is_some() {
        st.key_moved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(moved);
    }
    // The run is over for the limits before the client hears so (it may start the next).
    drop(slot);
    let secs = started.elapsed().as_secs_f64().max(1e-9);
    st.log(format!(
        "{peer}: run {} {} {} x{}: {} bytes in {:.1} s ({:.1} Mbit/s){}",
        req.run,
        req.cc,
        if req.reverse { "upload" } else { "download" },
        req.parallel,
        moved,
        secs,
        moved as f64 * 8.0 / secs / 1e6,
        if note.is_empty() {
            String::new()
        } else {
            format!("; {note}")
        }
    ));
    conn.send(&Msg::RunDone {
        run: req.run,
        streams: done,
        note: note.to_string(),
    })
    .map_err(io)?;
    Ok(())
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
