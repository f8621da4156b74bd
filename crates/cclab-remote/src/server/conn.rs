//! A connection from accept to its end: admission to the handshake pool, the first message,
//! a control session (`Hello`, `Challenge`, `Auth`, `Welcome`, then its runs one after the
//! other), and a data connection checked by its token and handed to its run.

use super::run::{serve_run, RunReq};
use super::state::{Session, State};
use super::{is_loopback, Server};
use crate::auth;
use crate::protocol::{code, Conn, LimitsMsg, Msg, ProtoError, MAC_LEN, SESSION_LEN, VERSION};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

impl Server {
    pub(super) fn admit(&self, s: TcpStream, peer: SocketAddr) {
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
