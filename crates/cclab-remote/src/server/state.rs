//! What the server keeps between connections: the log, the refusals counted per address and
//! window, the pool of connections in their handshake, and each client address's sessions,
//! runs and bytes moved, held against the [`Limits`](super::Limits).

use super::Limits;
use crate::auth::Key;
use crate::protocol::{MAC_LEN, SESSION_LEN};
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Use by one client address.
#[derive(Default)]
pub(super) struct Client {
    /// Authenticated control sessions.
    pub(super) sessions: usize,
    pub(super) runs: u16,
    /// Bytes moved, with when (the last hour's count against `max_bytes`).
    pub(super) moved: Moved,
}

/// Bytes moved, with when; the last hour's sum is held against `max_bytes`.
#[derive(Default)]
pub(super) struct Moved(VecDeque<(Instant, u64)>);

impl Moved {
    pub(super) fn last_hour(&mut self) -> u64 {
        let hour = Duration::from_secs(3600);
        while self.0.front().is_some_and(|(t, _)| t.elapsed() > hour) {
            self.0.pop_front();
        }
        self.0.iter().map(|(_, b)| b).sum()
    }
    pub(super) fn add(&mut self, bytes: u64) {
        self.0.push_back((Instant::now(), bytes));
    }
}

/// Connections in their handshake (see the module docs).
#[derive(Default)]
pub(super) struct Unauth {
    pub(super) per_addr: HashMap<IpAddr, usize>,
    /// (id, address, a handle that closes it), oldest first.
    pub(super) queue: VecDeque<(u64, IpAddr, TcpStream)>,
    pub(super) next_id: u64,
}

impl Unauth {
    /// Close and forget the oldest waiting connection (of `ip` if given).
    pub(super) fn evict_oldest(&mut self, ip: Option<IpAddr>) -> Option<IpAddr> {
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
    pub(super) fn remove(&mut self, id: u64) {
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
pub(super) struct Refusals {
    /// Per address (`None`: every address beyond [`REFUSAL_ADDRS`]): when its window began,
    /// and by reason the refusals counted after the first (which was logged).
    by_addr: HashMap<Option<IpAddr>, (Instant, Counts)>,
}

/// A run waiting for its data connections.
pub(super) struct Pending {
    pub(super) run: u32,
    pub(super) seen: Vec<bool>,
    pub(super) tx: mpsc::SyncSender<(u16, TcpStream)>,
}

pub(super) struct Session {
    pub(super) key: [u8; MAC_LEN],
    pub(super) peer: IpAddr,
    pub(super) pending: Option<Pending>,
}

pub(super) struct State {
    pub(super) key: Option<Key>,
    pub(super) limits: Limits,
    pub(super) log_stderr: bool,
    pub(super) log: Mutex<VecDeque<String>>,
    /// Connection threads running (authenticated or not).
    pub(super) conns: AtomicUsize,
    /// Authenticated control sessions, against `max_clients`.
    pub(super) authenticated: AtomicUsize,
    pub(super) unauth: Mutex<Unauth>,
    pub(super) refusals: Mutex<Refusals>,
    /// Bytes moved under the key (all addresses), against `max_bytes`.
    pub(super) key_moved: Mutex<Moved>,
    pub(super) clients: Mutex<HashMap<IpAddr, Client>>,
    pub(super) sessions: Mutex<HashMap<[u8; SESSION_LEN], Session>>,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) kernel: String,
    pub(super) ccs: Vec<String>,
}

/// Most log lines kept in memory.
const LOG_KEEP: usize = 1000;

impl State {
    pub(super) fn log(&self, msg: String) {
        if self.log_stderr {
            eprintln!("cclab serve: {msg}");
        }
        let mut l = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if l.len() >= LOG_KEEP {
            l.pop_front();
        }
        l.push_back(msg);
    }

    pub(super) fn client<T>(&self, ip: IpAddr, f: impl FnOnce(&mut Client) -> T) -> T {
        let mut c = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        let r = f(c.entry(ip).or_default());
        c.retain(|_, v| v.sessions > 0 || v.runs > 0 || !v.moved.0.is_empty());
        r
    }

    /// A refused or failed connection of a peer that has not authenticated: logged in full
    /// if it is the first of its address in the current window, else counted (`reason` is
    /// the count's label).
    pub(super) fn refusal(&self, ip: IpAddr, reason: &'static str, line: impl FnOnce() -> String) {
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
    pub(super) fn flush_refusals(&self, all: bool) {
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
