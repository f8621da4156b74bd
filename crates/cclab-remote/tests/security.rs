//! The server's security properties over loopback (no root needed): authentication both
//! ways, data connections bound to their session, per-client limits, hostile input, the cap
//! on clients, and controllers the sender lacks. Each test runs its own server on its own
//! port.

use cclab_remote::auth;
use cclab_remote::protocol::{code, read_msg, Conn, Msg, MAC_LEN, SESSION_LEN, VERSION};
use cclab_remote::{Key, Limits, PerfOptions, RemoteError, ServeOptions, Server, ServerHandle};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

const KEY: &[u8] = b"0123456789abcdef-secret";

fn serve(key: Option<&[u8]>, limits: Limits) -> ServerHandle {
    Server::bind(ServeOptions {
        listen: "127.0.0.1:0".parse().unwrap(),
        key: key.map(|k| Key::from_bytes(k).unwrap()),
        limits,
        log_stderr: false,
    })
    .unwrap()
    .spawn()
}

fn perf(
    srv: &ServerHandle,
    key: Option<&[u8]>,
    f: impl FnOnce(&mut PerfOptions),
) -> Result<cclab_results::ResultsDoc, RemoteError> {
    let mut o = PerfOptions {
        target: srv.addr.to_string(),
        duration: Duration::from_millis(300),
        key: key.map(|k| Key::from_bytes(k).unwrap()),
        ..Default::default()
    };
    f(&mut o);
    cclab_remote::perf(&o)
}

/// A hand-driven control session (to send what `perf` never would).
struct Raw {
    conn: Conn,
    session: [u8; SESSION_LEN],
    sk: [u8; MAC_LEN],
}

fn raw(addr: SocketAddr, key: &[u8]) -> Raw {
    handshake(TcpStream::connect(addr).unwrap(), key)
        .unwrap_or_else(|m| panic!("no welcome: {m:?}"))
}

/// The client's handshake over `s`: the session, or the message the server sent instead of
/// `Welcome`.
fn handshake(s: TcpStream, key: &[u8]) -> Result<Raw, Msg> {
    let mut conn = Conn::new(s).unwrap();
    let nc = auth::nonce().unwrap();
    conn.send(&Msg::Hello {
        version: VERSION,
        nonce: nc,
    })
    .unwrap();
    let Msg::Challenge { nonce: ns, .. } = conn.recv(Duration::from_secs(5)).unwrap() else {
        panic!("no challenge")
    };
    let mac = (!key.is_empty()).then(|| auth::mac(key, auth::CLIENT, &[&nc, &ns]));
    conn.send(&Msg::Auth { mac }).unwrap();
    match conn.recv(Duration::from_secs(5)).unwrap() {
        Msg::Welcome { session, .. } => Ok(Raw {
            conn,
            session,
            sk: auth::session_key(key, &nc, &ns),
        }),
        m => Err(m),
    }
}

impl Raw {
    fn request(&mut self, run: u32, duration_ms: u32, parallel: u16) -> Msg {
        self.conn
            .send(&Msg::RunRequest {
                run,
                cc: "cubic".into(),
                reverse: false,
                duration_ms,
                size: 0,
                parallel,
                pace: 0,
            })
            .unwrap();
        self.conn.recv(Duration::from_secs(5)).unwrap()
    }
    fn data(
        &self,
        addr: SocketAddr,
        session: [u8; 16],
        run: u32,
        stream: u16,
        mac: [u8; 32],
    ) -> TcpStream {
        let mut d = TcpStream::connect(addr).unwrap();
        d.write_all(
            &Msg::DataHello {
                session,
                run,
                stream,
                mac,
            }
            .encode(),
        )
        .unwrap();
        d
    }
    /// The remaining messages of a run up to RunDone.
    fn finish(&mut self) -> Msg {
        loop {
            match self.conn.recv(Duration::from_secs(20)).unwrap() {
                Msg::Samples { .. } | Msg::RunStart { .. } => continue,
                m => return m,
            }
        }
    }
}

/// The error (code, message) a connection received, if any.
fn error_of(s: &mut TcpStream) -> Option<(u16, String)> {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    match read_msg(s) {
        Ok(Msg::Error { code, message }) => Some((code, message)),
        _ => None,
    }
}

fn wait_log(srv: &ServerHandle, what: &str) -> Vec<String> {
    let t = Instant::now();
    loop {
        let log = srv.log();
        if log.iter().any(|l| l.contains(what)) || t.elapsed() > Duration::from_secs(5) {
            return log;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn keys_are_checked_both_ways() {
    let srv = serve(Some(KEY), Limits::default());
    // No key, a wrong key: refused with a one-line reason, and logged.
    let e = perf(&srv, None, |_| {}).unwrap_err();
    assert!(
        matches!(e, RemoteError::Auth(_)) && e.to_string().contains("--key-file"),
        "{e}"
    );
    let e = perf(&srv, Some(b"not-the-key-at-all!"), |_| {}).unwrap_err();
    assert!(e.to_string().contains("authentication failed"), "{e}");
    assert!(!e.to_string().contains('\n'));
    let log = wait_log(&srv, "wrong key");
    assert!(
        log.iter()
            .any(|l| l.contains("authentication failed (wrong key)")),
        "{log:?}"
    );
    // A replayed or forged proof (a MAC over other nonces) fails too.
    let mut c = Conn::new(TcpStream::connect(srv.addr).unwrap()).unwrap();
    c.send(&Msg::Hello {
        version: VERSION,
        nonce: [1; 32],
    })
    .unwrap();
    let Msg::Challenge { key_required, .. } = c.recv(Duration::from_secs(5)).unwrap() else {
        panic!()
    };
    assert!(key_required);
    c.send(&Msg::Auth {
        mac: Some(auth::mac(KEY, auth::CLIENT, &[&[1; 32], &[2; 32]])),
    })
    .unwrap();
    assert!(matches!(
        c.recv(Duration::from_secs(5)).unwrap(),
        Msg::Error {
            code: code::AUTH,
            ..
        }
    ));
    // The right key works.
    let doc = perf(&srv, Some(KEY), |_| {}).unwrap();
    assert!(doc.runs[0].flows[0].bytes_delivered > 0);
    srv.stop().unwrap();

    // The client checks the server too: an impostor that does not know the key cannot
    // complete the handshake, and a keyless server is not taken for a keyed one.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let fake = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let mut c = Conn::new(s).unwrap();
        let _ = c.recv(Duration::from_secs(5));
        c.send(&Msg::Challenge {
            version: VERSION,
            nonce: [9; 32],
            key_required: true,
        })
        .unwrap();
        let _ = c.recv(Duration::from_secs(5));
        c.send(&Msg::Welcome {
            mac: Some([0; 32]),
            session: [0; 16],
            kernel: "x".into(),
            ccs: vec!["cubic".into()],
            limits: cclab_remote::protocol::LimitsMsg {
                max_duration_ms: 60_000,
                max_parallel: 8,
                max_runs: 2,
                max_bytes: u64::MAX,
            },
        })
        .unwrap();
        // Anything after this would be a run the client should never have asked for.
        c.stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        read_msg(&mut c.stream).ok()
    });
    let e = cclab_remote::perf(&PerfOptions {
        target: addr.to_string(),
        key: Some(Key::from_bytes(KEY).unwrap()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("did not prove it knows the key"),
        "{e}"
    );
    assert_eq!(
        fake.join().unwrap(),
        None,
        "the client went on with an impostor"
    );
    let keyless = serve(None, Limits::default());
    let e = perf(&keyless, Some(KEY), |_| {}).unwrap_err();
    assert!(e.to_string().contains("the server has no key"), "{e}");
    // Without a key on either side, loopback peers are served.
    assert!(perf(&keyless, None, |_| {}).unwrap().runs[0].flows[0].bytes_delivered > 0);
    keyless.stop().unwrap();
    assert!(cclab_remote::server::is_loopback(
        "::ffff:127.0.0.1".parse().unwrap()
    ));
    assert!(!cclab_remote::server::is_loopback(
        "198.18.0.2".parse().unwrap()
    ));
}

#[test]
fn data_connections_are_bound_to_their_session() {
    let srv = serve(Some(KEY), Limits::default());
    let mut a = raw(srv.addr, KEY);
    let b = raw(srv.addr, KEY);
    assert!(matches!(a.request(1, 500, 1), Msg::RunReady { run: 1 }));
    let good = auth::data_token(&a.sk, &a.session, 1, 0);
    let refusals = [
        // (session, run, stream, mac, why)
        (a.session, 1, 0, [0u8; 32], "bad data token"),
        ([7; 16], 1, 0, good, "no such session"),
        (
            a.session,
            1,
            0,
            auth::data_token(&b.sk, &a.session, 1, 0),
            "bad data token",
        ),
        (
            b.session,
            1,
            0,
            auth::data_token(&b.sk, &b.session, 1, 0),
            "not expected",
        ),
        (
            a.session,
            2,
            0,
            auth::data_token(&a.sk, &a.session, 2, 0),
            "not expected",
        ),
        (
            a.session,
            1,
            1,
            auth::data_token(&a.sk, &a.session, 1, 1),
            "not expected",
        ),
    ];
    for (session, run, stream, mac, why) in refusals {
        let mut d = a.data(srv.addr, session, run, stream, mac);
        let (c, m) = error_of(&mut d).expect("an error");
        assert!(c == code::AUTH && m.contains(why), "{why}: {m}");
    }
    let d = a.data(srv.addr, a.session, 1, 0, good);
    assert!(matches!(
        a.conn.recv(Duration::from_secs(5)).unwrap(),
        Msg::RunStart { run: 1 }
    ));
    // The same token again (a replay) is refused while the run goes.
    let mut again = a.data(srv.addr, a.session, 1, 0, good);
    assert!(error_of(&mut again).is_some_and(|(_, m)| m.contains("not expected")));
    let drain = std::thread::spawn(move || {
        let mut d = d;
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        while let Ok(k) = d.read(&mut buf) {
            if k == 0 {
                break;
            }
            n += k as u64;
        }
        n
    });
    let Msg::RunDone { streams, .. } = a.finish() else {
        panic!("no RunDone")
    };
    assert_eq!(drain.join().unwrap(), streams[0].bytes);
    // The first refusal is logged in full, the others of its 10 s window counted.
    srv.flush_refusals();
    let log = srv.log();
    assert_eq!(
        log.iter()
            .filter(|l| l.contains(": data connection refused:"))
            .count(),
        1,
        "{log:?}"
    );
    let counted: u64 = log
        .iter()
        .filter_map(|l| l.split("data connection refused x").nth(1))
        .filter_map(|n| {
            n.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    assert!(counted >= 6, "{log:?}");
    srv.stop().unwrap();
}

#[test]
fn per_client_limits_hold() {
    let srv = serve(
        Some(KEY),
        Limits {
            max_duration: Duration::from_secs(2),
            max_parallel: 2,
            max_runs: 1,
            max_bytes: 20_000_000,
            ..Default::default()
        },
    );
    // perf checks the server's limits before asking ...
    let e = perf(&srv, Some(KEY), |o| o.duration = Duration::from_secs(3)).unwrap_err();
    assert!(
        e.to_string()
            .contains("longer than the server allows (2.0s)"),
        "{e}"
    );
    let e = perf(&srv, Some(KEY), |o| o.parallel = 3).unwrap_err();
    assert!(
        e.to_string().contains("more than the server allows (2)"),
        "{e}"
    );
    // ... and the server enforces them whatever a client asks.
    let mut a = raw(srv.addr, KEY);
    assert!(
        matches!(a.request(1, 3000, 1), Msg::Error { code: code::LIMIT, message } if message.contains("up to 2 s"))
    );
    assert!(
        matches!(a.request(2, 1000, 3), Msg::Error { code: code::LIMIT, message } if message.contains("1 to 2"))
    );
    assert!(matches!(
        a.request(3, 0, 1),
        Msg::Error {
            code: code::LIMIT,
            ..
        }
    ));
    // One run at a time per client address: a second session's run is refused meanwhile.
    assert!(matches!(a.request(4, 1500, 1), Msg::RunReady { run: 4 }));
    let d = a.data(
        srv.addr,
        a.session,
        4,
        0,
        auth::data_token(&a.sk, &a.session, 4, 0),
    );
    let mut b = raw(srv.addr, KEY);
    assert!(
        matches!(b.request(1, 1000, 1), Msg::Error { code: code::LIMIT, message } if message.contains("runs going"))
    );
    // Bytes: the run stops at the client's hourly budget, and the next one is refused.
    let drain = std::thread::spawn(move || {
        let mut d = d;
        let mut buf = vec![0u8; 1 << 18];
        let mut n = 0u64;
        while let Ok(k) = d.read(&mut buf) {
            if k == 0 {
                break;
            }
            n += k as u64;
        }
        n
    });
    let Msg::RunDone { streams, note, .. } = a.finish() else {
        panic!()
    };
    let got = drain.join().unwrap();
    assert!(
        streams[0].bytes <= 20_000_000 && got == streams[0].bytes,
        "{} {got}",
        streams[0].bytes
    );
    assert!(
        note.contains("byte limit"),
        "loopback moves 20 MB in under 1.5 s: {note:?}"
    );
    assert!(
        matches!(b.request(2, 1000, 1), Msg::Error { code: code::LIMIT, message } if message.contains("last hour"))
    );
    // Run numbers only go up (a replayed request ends the session).
    assert!(matches!(
        a.request(4, 1000, 1),
        Msg::Error {
            code: code::BAD_REQUEST,
            ..
        }
    ));
    srv.stop().unwrap();
}

#[test]
fn hostile_input_gets_an_error_and_everyone_else_is_served() {
    let srv = serve(
        Some(KEY),
        Limits {
            max_clients: 6,
            max_sessions: 8,
            handshake_timeout: Duration::from_secs(1),
            ..Default::default()
        },
    );
    let hostile: Vec<(&str, Vec<u8>, u16)> = vec![
        (
            "http",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            code::BAD_REQUEST,
        ),
        (
            "huge length",
            u32::MAX.to_be_bytes().to_vec(),
            code::BAD_REQUEST,
        ),
        ("unknown type", vec![0, 0, 0, 1, 99], code::BAD_REQUEST),
        ("wrong first message", Msg::Bye.encode(), code::BAD_REQUEST),
        (
            "old version",
            Msg::Hello {
                version: 0,
                nonce: [0; 32],
            }
            .encode(),
            code::VERSION,
        ),
        (
            "truncated",
            {
                let mut f = Msg::Hello {
                    version: VERSION,
                    nonce: [0; 32],
                }
                .encode();
                f.truncate(20);
                f
            },
            code::BAD_REQUEST,
        ),
    ];
    // Two slow peers (one byte, then nothing) stay connected while the rest goes on.
    let mut slow: Vec<TcpStream> = (0..2)
        .map(|_| {
            let mut s = TcpStream::connect(srv.addr).unwrap();
            s.write_all(&[0]).unwrap();
            s
        })
        .collect();
    for (what, bytes, want) in &hostile {
        let mut s = TcpStream::connect(srv.addr).unwrap();
        s.write_all(bytes).unwrap();
        let got = error_of(&mut s);
        assert!(
            got.as_ref().is_some_and(|(c, _)| c == want),
            "{what}: {got:?}"
        );
    }
    // Garbage inside an authenticated session ends that session only.
    let mut a = raw(srv.addr, KEY);
    a.conn.stream.write_all(&[0, 0, 0, 3, 5, 0, 0]).unwrap();
    assert!(error_of(&mut a.conn.stream).is_some_and(|(c, _)| c == code::BAD_REQUEST));
    let doc = perf(&srv, Some(KEY), |_| {}).unwrap();
    assert!(doc.runs[0].flows[0].bytes_delivered > 0);
    // The slow peers were cut off by the handshake timeout.
    for s in &mut slow {
        let e = error_of(s);
        assert!(
            e.as_ref().is_some_and(|(_, m)| m.contains("in time")),
            "{e:?}"
        );
    }
    // The cap on clients counts authenticated sessions: with six of them open, the seventh
    // is told the server is busy ...
    let settle = |n: usize| {
        let t = Instant::now();
        while srv.connections() != n && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(srv.connections(), n);
    };
    settle(0);
    let sessions: Vec<Raw> = (0..6).map(|_| raw(srv.addr, KEY)).collect();
    let seventh = handshake(TcpStream::connect(srv.addr).unwrap(), KEY);
    assert!(
        matches!(
            seventh,
            Err(Msg::Error {
                code: code::BUSY,
                ..
            })
        ),
        "{:?}",
        seventh.err()
    );
    // ... and served again once one closes.
    drop(sessions);
    settle(0);
    assert!(perf(&srv, Some(KEY), |_| {}).is_ok());
    let log = srv.log();
    assert!(
        log.iter().any(|l| l.contains("6 sessions already")),
        "{log:?}"
    );
    srv.stop().unwrap();
}

#[test]
fn random_frames_to_a_live_server_leave_it_serving() {
    let srv = serve(
        Some(KEY),
        Limits {
            handshake_timeout: Duration::from_millis(300),
            idle_timeout: Duration::from_millis(300),
            ..Default::default()
        },
    );
    let mut rng = cclab_path::Rng::new(7);
    let t = Instant::now();
    let mut n = 0;
    while t.elapsed() < Duration::from_secs(3) && n < 300 {
        let mut s = TcpStream::connect(srv.addr).unwrap();
        let len = (rng.next_u64() % 100) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if rng.next_u64() & 1 == 0 {
            // A plausible length prefix, so the body reaches the message parser.
            let body = (len.saturating_sub(4)) as u32;
            if len >= 4 {
                bytes[..4].copy_from_slice(&body.to_be_bytes());
            }
        }
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(std::net::Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
        n += 1;
    }
    assert!(
        perf(&srv, Some(KEY), |_| {}).is_ok(),
        "after {n} hostile connections"
    );
    let t = Instant::now();
    while srv.connections() > 0 && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(srv.connections(), 0, "every connection's thread ended");
    srv.stop().unwrap();
}

#[test]
fn a_controller_the_sender_lacks_is_a_one_line_error() {
    let srv = serve(Some(KEY), Limits::default());
    let avail = cclab_sys::available_ccs();
    let e = perf(&srv, Some(KEY), |o| o.ccs = vec!["nosuchcc".into()]).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("\"nosuchcc\" is not in the server's kernel") && m.contains(&avail.join(", ")),
        "{m}"
    );
    // Upload: this host is the sender and says what it has.
    let e = perf(&srv, Some(KEY), |o| {
        o.ccs = vec!["nosuchcc".into()];
        o.reverse = true
    })
    .unwrap_err();
    assert!(e.to_string().contains("not in the sender's kernel"), "{e}");
    let e = perf(&srv, Some(KEY), |o| o.ccs = vec!["BBR!".into()]).unwrap_err();
    assert!(
        e.to_string().contains("is not a congestion control name"),
        "{e}"
    );
    // The server checks on its own too.
    let mut a = raw(srv.addr, KEY);
    a.conn
        .send(&Msg::RunRequest {
            run: 1,
            cc: "nosuchcc".into(),
            reverse: false,
            duration_ms: 500,
            size: 0,
            parallel: 1,
            pace: 0,
        })
        .unwrap();
    match a.conn.recv(Duration::from_secs(5)).unwrap() {
        Msg::Error {
            code: code::CC,
            message,
        } => assert!(message.contains("it has:"), "{message}"),
        m => panic!("{m:?}"),
    }
    srv.stop().unwrap();
}

#[test]
fn a_pacing_cap_holds_and_a_bad_one_is_refused() {
    let srv = serve(Some(KEY), Limits::default());
    let mut a = raw(srv.addr, KEY);
    // 3 MB capped at 1 MB/s (8 Mbit/s) over loopback, which would carry it in milliseconds:
    // about 3 s (loopback's 64 kB segments make the unpaced initial window 640 kB).
    a.conn
        .send(&Msg::RunRequest {
            run: 1,
            cc: "cubic".into(),
            reverse: false,
            duration_ms: 10_000,
            size: 3_000_000,
            parallel: 1,
            pace: 1_000_000,
        })
        .unwrap();
    assert!(matches!(
        a.conn.recv(Duration::from_secs(5)).unwrap(),
        Msg::RunReady { run: 1 }
    ));
    let d = a.data(
        srv.addr,
        a.session,
        1,
        0,
        auth::data_token(&a.sk, &a.session, 1, 0),
    );
    let t0 = Instant::now();
    let drain = std::thread::spawn(move || {
        let mut d = d;
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0u64;
        while let Ok(k) = d.read(&mut buf) {
            if k == 0 {
                break;
            }
            n += k as u64;
        }
        (n, t0.elapsed())
    });
    let Msg::RunDone { streams, .. } = a.finish() else {
        panic!("no RunDone")
    };
    let (got, took) = drain.join().unwrap();
    let rate = got as f64 / took.as_secs_f64();
    eprintln!("paced at 1 MB/s: {got} bytes in {took:?} ({rate:.0} bytes/s)");
    assert_eq!((got, streams[0].bytes), (3_000_000, 3_000_000));
    assert!((0.9e6..1.5e6).contains(&rate), "{rate}");
    // An explicit zero (no cap is the field left out) is a malformed request: an error, and
    // the session ends; the server serves on.
    let mut f = Msg::RunRequest {
        run: 2,
        cc: "cubic".into(),
        reverse: false,
        duration_ms: 500,
        size: 0,
        parallel: 1,
        pace: 0,
    }
    .encode();
    f.extend(0u64.to_be_bytes());
    let len = (f.len() - 4) as u32;
    f[..4].copy_from_slice(&len.to_be_bytes());
    (&a.conn.stream).write_all(&f).unwrap();
    match a.conn.recv(Duration::from_secs(5)) {
        Ok(Msg::Error { code: c, message }) => {
            assert!(
                c == code::BAD_REQUEST && message.contains("pacing"),
                "{message}"
            )
        }
        m => panic!("{m:?}"),
    }
    assert!(perf(&srv, Some(KEY), |_| {}).is_ok());
    srv.stop().unwrap();
}

/// A TCP connection to `to` from the loopback address `from` (127.0.0.0/8 is all loopback
/// on Linux), as another host would make it.
fn connect_from(from: [u8; 4], to: SocketAddr) -> std::io::Result<TcpStream> {
    use std::os::fd::FromRawFd;
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let s = unsafe { TcpStream::from_raw_fd(fd) };
    let sa = |ip: [u8; 4], port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ip),
        },
        sin_zero: [0; 8],
    };
    let SocketAddr::V4(to) = to else {
        panic!("IPv4 only")
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let src = sa(from, 0);
    let dst = sa(to.ip().octets(), to.port());
    if unsafe { libc::bind(fd, &src as *const _ as *const libc::sockaddr, len) } != 0
        || unsafe { libc::connect(fd, &dst as *const _ as *const libc::sockaddr, len) } != 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(s)
}

/// What an attacking connection does on each 20 ms tick (false: it is done).
type Feed = fn(&mut TcpStream, u32) -> bool;

/// An attacker without the key: keeps `n` connections from `from` open, reopening each the
/// moment the server closes it, and does `feed` with each (nothing, a byte now and then, a
/// Hello, a partial frame), until `stop`.
fn attack(
    srv: SocketAddr,
    from: Vec<[u8; 4]>,
    n: usize,
    feed: Feed,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    use std::sync::atomic::Ordering;
    std::thread::spawn(move || {
        let mut conns: Vec<Option<(TcpStream, u32)>> = (0..n).map(|_| None).collect();
        let mut opened = 0u64;
        let mut buf = [0u8; 4096];
        while !stop.load(Ordering::Relaxed) {
            for (i, c) in conns.iter_mut().enumerate() {
                let alive = match c {
                    Some((s, tick)) => {
                        *tick += 1;
                        let _ = s.set_nonblocking(true);
                        let closed = matches!(s.read(&mut buf), Ok(0))
                            || matches!(s.read(&mut buf), Err(e) if e.kind() != std::io::ErrorKind::WouldBlock);
                        !closed && feed(s, *tick)
                    }
                    None => false,
                };
                if !alive {
                    *c = connect_from(from[i % from.len()], srv).ok().map(|s| (s, 0));
                    opened += 1;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        opened
    })
}

/// Issue #27: peers without the key cannot lock a key holder out. Idle connections from one
/// address reopened as soon as they are cut, idle ones from seven, slowloris dribblers, partial
/// 64 KiB frames, and Hellos without Auth from the client's own address, all at once: the
/// key holder's runs succeed throughout, and the log stays short.
#[test]
fn unauthenticated_peers_cannot_lock_out_a_key_holder() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let srv = serve(Some(KEY), Limits::default());
    let stop = Arc::new(AtomicBool::new(false));
    let idle: Feed = |_, _| true;
    let drip: Feed = |s, t| t % 10 != 0 || s.write_all(&[0]).is_ok();
    let partial: Feed = |s, t| {
        t != 1 || s.write_all(&[0, 1, 0, 0, 1, 2, 3]).is_ok() // a 64 KiB frame begun
    };
    let hello: Feed = |s, t| {
        t != 1
            || s.write_all(
                &Msg::Hello {
                    version: VERSION,
                    nonce: [9; 32],
                }
                .encode(),
            )
            .is_ok()
    };
    let others: Vec<[u8; 4]> = (2..9).map(|i| [127, 0, 0, i]).collect();
    let attackers = vec![
        attack(srv.addr, vec![[127, 0, 0, 2]], 32, idle, stop.clone()),
        attack(srv.addr, others.clone(), 300, idle, stop.clone()),
        attack(srv.addr, others.clone(), 50, drip, stop.clone()),
        attack(srv.addr, vec![[127, 0, 0, 8]], 40, partial, stop.clone()),
        attack(srv.addr, vec![[127, 0, 0, 1]], 4, hello, stop.clone()),
    ];
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    let mut runs = 0;
    while t.elapsed() < Duration::from_secs(5) {
        let r = perf(&srv, Some(KEY), |_| {});
        assert!(r.is_ok(), "run {runs} under attack: {:?}", r.err());
        runs += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let opened: u64 = attackers.into_iter().map(|a| a.join().unwrap()).sum();
    assert!(opened > 400, "the attack opened {opened} connections");
    assert!(runs >= 5, "{runs} runs in 5 s");
    // Hundreds of refusals a second, a few lines in the log: one per address and reason,
    // then a summary of each.
    srv.flush_refusals();
    let log = srv.log();
    assert!(log.len() < 150, "{} log lines: {log:#?}", log.len());
    assert!(
        log.iter().any(|l| l.contains("more refused in 10 s")),
        "{log:#?}"
    );
    srv.stop().unwrap();
}

/// Issue #27: an unauthenticated impostor's error text is shown escaped.
#[test]
fn an_impostors_error_text_is_escaped() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        let mut c = Conn::new(s).unwrap();
        let _ = c.recv(Duration::from_secs(5));
        c.send_error(code::REFUSED, "go away\x1b]0;owned\x07\x1b[2J");
    });
    let e = cclab_remote::perf(&PerfOptions {
        target: addr.to_string(),
        duration: Duration::from_millis(300),
        ..Default::default()
    })
    .unwrap_err()
    .to_string();
    assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
    assert!(e.contains("go away\\x1b]0;owned\\x07\\x1b[2J"), "{e}");
}

/// Issue #27: a key file that is a FIFO (or any non-file) is a one-line error at once.
#[test]
fn a_fifo_as_key_file_is_an_error_not_a_hang() {
    let dir = std::env::temp_dir().join(format!("cclab-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("key");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let t = Instant::now();
    let e = Key::load(&fifo).unwrap_err().to_string();
    assert!(t.elapsed() < Duration::from_secs(1));
    assert!(e.contains("not a regular file") && !e.contains('\n'), "{e}");
    let e = Key::load(&dir).unwrap_err().to_string();
    assert!(
        e.contains("not a regular file") || e.contains("cannot read"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue #27: the byte budget holds per key, not only per address: a key holder's second
/// address does not get a fresh budget.
#[test]
fn the_byte_budget_holds_per_key_across_addresses() {
    let srv = serve(
        Some(KEY),
        Limits {
            max_bytes: 20_000_000,
            max_duration: Duration::from_secs(3),
            ..Default::default()
        },
    );
    // Address 127.0.0.1 spends the budget ...
    let mut a = raw(srv.addr, KEY);
    assert!(matches!(a.request(1, 2500, 1), Msg::RunReady { run: 1 }));
    let d = a.data(
        srv.addr,
        a.session,
        1,
        0,
        auth::data_token(&a.sk, &a.session, 1, 0),
    );
    let drain = std::thread::spawn(move || {
        let mut d = d;
        let mut buf = vec![0u8; 1 << 18];
        while let Ok(k) = d.read(&mut buf) {
            if k == 0 {
                break;
            }
        }
    });
    let Msg::RunDone { note, .. } = a.finish() else {
        panic!()
    };
    drain.join().unwrap();
    assert!(note.contains("byte limit"), "{note}");
    // ... and 127.0.0.2, with the same key, is refused for the key's hour.
    let mut b = handshake(connect_from([127, 0, 0, 2], srv.addr).unwrap(), KEY).unwrap();
    let m = b.request(1, 1000, 1);
    assert!(
        matches!(&m, Msg::Error { code: code::LIMIT, message } if message.contains("per key")),
        "{m:?}"
    );
    srv.stop().unwrap();
}

/// Issue #27, opt-in (2.5 min): each attack of the lock-out test alone for 30 s, a key
/// holder's 3 s runs measured throughout, against an undisturbed run: every run succeeds and
/// the median goodput stays within 20%.
/// `cargo test --release -p cclab-remote --test security -- --ignored soak --nocapture`
#[test]
#[ignore]
fn soak_each_attack_for_30_s() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    // Loopback moves 100 GB (the default hourly budget) in under a minute.
    let srv = serve(
        Some(KEY),
        Limits {
            max_bytes: u64::MAX / 4,
            ..Default::default()
        },
    );
    let goodput = || {
        perf(&srv, Some(KEY), |o| o.duration = Duration::from_secs(3))
            .map(|d| d.runs[0].flows[0].goodput_bps)
    };
    let mut base: Vec<f64> = (0..3).map(|_| goodput().unwrap()).collect();
    base.sort_by(f64::total_cmp);
    let base = base[1];
    let idle: Feed = |_, _| true;
    let drip: Feed = |s, t| t % 10 != 0 || s.write_all(&[0]).is_ok();
    let partial: Feed = |s, t| t != 1 || s.write_all(&[0, 1, 0, 0, 1, 2, 3]).is_ok();
    let others: Vec<[u8; 4]> = (2..9).map(|i| [127, 0, 0, i]).collect();
    let attacks: Vec<(&str, Vec<[u8; 4]>, usize, Feed)> = vec![
        ("32 idle from one address", vec![[127, 0, 0, 2]], 32, idle),
        ("300 idle from seven", others.clone(), 300, idle),
        ("50 slowloris", others.clone(), 50, drip),
        (
            "40 partial 64 KiB frames",
            vec![[127, 0, 0, 8]],
            40,
            partial,
        ),
    ];
    for (what, from, n, feed) in attacks {
        let stop = Arc::new(AtomicBool::new(false));
        let a = attack(srv.addr, from, n, feed, stop.clone());
        let t = Instant::now();
        let mut g = Vec::new();
        while t.elapsed() < Duration::from_secs(30) {
            g.push(goodput().unwrap_or_else(|e| panic!("{what}: a run failed: {e}")));
        }
        stop.store(true, Ordering::SeqCst);
        let opened = a.join().unwrap();
        g.sort_by(f64::total_cmp);
        let med = g[g.len() / 2];
        eprintln!(
            "{what}: {} runs, median {:.0} Mbit/s against {:.0} undisturbed ({:+.1}%), {opened} attacking connections",
            g.len(),
            med / 1e6,
            base / 1e6,
            (med / base - 1.0) * 100.0
        );
        assert!(med > 0.8 * base, "{what}: {med} against {base}");
    }
    srv.flush_refusals();
    eprintln!("log: {} lines", srv.log().len());
    srv.stop().unwrap();
}
