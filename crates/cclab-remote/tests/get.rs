//! `cclab get` against the crate's tiny HTTP server on loopback (no root needed); the lab
//! tests (tests/lab.rs) run it across an emulated path.

use cclab_remote::{httpd, GetOptions, RemoteError};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn server(conns: usize) -> (String, std::thread::JoinHandle<usize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", l.local_addr().unwrap());
    (base, httpd::serve(l, conns, Duration::from_secs(10)))
}

fn get(
    url: String,
    f: impl FnOnce(&mut GetOptions),
) -> Result<cclab_results::ResultsDoc, RemoteError> {
    let mut o = GetOptions {
        url,
        ..Default::default()
    };
    f(&mut o);
    cclab_remote::get(&o)
}

#[test]
fn sized_and_chunked_downloads_are_measured() {
    let (base, h) = server(3);
    let doc = get(format!("{base}/bytes/30000000"), |o| o.repeat = 2).unwrap();
    assert_eq!(
        (doc.backend.as_str(), doc.scenario.as_str(), doc.runs.len()),
        ("host", "get", 2)
    );
    for (i, r) in doc.runs.iter().enumerate() {
        let f = &r.flows[0];
        assert_eq!(r.seed, i as u64 + 1);
        assert_eq!(
            (f.bytes_delivered, f.size_bytes),
            (30_000_000, Some(30_000_000))
        );
        let fct = f.fct_s.expect("a completed download has a completion time");
        assert!(fct > 0.0 && (f.goodput_bps - 30e6 * 8.0 / fct).abs() < 1.0);
        assert!(
            f.rtt_ms.min > 0.0 && f.rtt_ms.min < 5.0,
            "loopback min RTT {}",
            f.rtt_ms.min
        );
        assert_eq!(r.settings["host.http_status"], 200);
        assert!(r.series.as_ref().is_some_and(|s| !s.t_s.is_empty()));
    }
    let doc = get(format!("{base}/chunked/5000000"), |_| {}).unwrap();
    assert_eq!(doc.runs[0].flows[0].bytes_delivered, 5_000_000);
    assert!(doc.runs[0].flows[0].fct_s.is_some());
    assert_eq!(h.join().unwrap(), 3);
}

#[test]
fn errors_and_bounds() {
    let (base, h) = server(2);
    let e = get(format!("{base}/missing"), |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("answered 404 Not Found") && !e.contains('\n'),
        "{e}"
    );
    // The max size stops a download; what arrived is measured and marked.
    let doc = get(format!("{base}/bytes/50000000"), |o| o.max_size = 2_000_000).unwrap();
    let r = &doc.runs[0];
    assert!((2_000_000..2_300_000).contains(&r.flows[0].bytes_delivered));
    assert_eq!(r.flows[0].fct_s, None);
    assert_eq!(r.settings["host.truncated"], "max size");
    h.join().unwrap();
    // A server that never answers: the timeout ends it with a one-line error.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x", l.local_addr().unwrap());
    let t = Instant::now();
    let e = get(url, |o| o.timeout = Duration::from_millis(500)).unwrap_err();
    assert!(
        matches!(e, RemoteError::Timeout(_)) && e.to_string().contains("--timeout"),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(3));
    drop(l);
    for (u, want) in [
        ("https://example.org/", "https is not supported"),
        ("http://127.0.0.1:1/", "cannot connect"),
    ] {
        let e = get(u.into(), |_| {}).unwrap_err().to_string();
        assert!(e.contains(want), "{u}: {e}");
    }
}

/// A one-shot hostile HTTP server: answers the first request with `head`, then `body`
/// (`None`: an endless stream of one-byte chunks).
fn hostile(head: &'static [u8], body: Option<&'static [u8]>) -> String {
    use std::io::{Read, Write};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/x", l.local_addr().unwrap());
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut req = [0u8; 4096];
        let _ = s.read(&mut req);
        let _ = s.write_all(head);
        match body {
            Some(b) => {
                let _ = s.write_all(b);
            }
            None => {
                let chunk = b"1\r\nX\r\n".repeat(4096);
                let t = Instant::now();
                while t.elapsed() < Duration::from_secs(20) && s.write_all(&chunk).is_ok() {}
            }
        }
    });
    url
}

/// Issue #27: what a hostile server puts in its status line, reason phrase or `Location`
/// reaches the user escaped; a body of endless tiny chunks is cut at once, not at the
/// timeout.
#[test]
fn hostile_servers_cannot_reach_the_terminal_or_spin_the_client() {
    let url = hostile(
        b"HTTP/1.1 302 Found\x1b]0;pwned\x07\r\nLocation: http://x/\x1b[2J\r\n\r\n",
        Some(b""),
    );
    let e = get(url, |_| {}).unwrap_err().to_string();
    assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
    assert!(
        e.contains("Found\\x1b]0;pwned\\x07") && e.contains("http://x/\\x1b[2J"),
        "{e}"
    );
    let url = hostile(b"\x1b[31mHTTP/9 200\r\n\r\n", Some(b""));
    let e = get(url, |_| {}).unwrap_err().to_string();
    assert!(
        !e.chars().any(|c| c.is_control()) && e.contains("\\x1b[31m"),
        "{e:?}"
    );
    // Endless one-byte chunks: stopped with an error well before the 20 s timeout.
    let url = hostile(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        None,
    );
    let t = Instant::now();
    let e = get(url, |o| o.timeout = Duration::from_secs(20))
        .unwrap_err()
        .to_string();
    assert!(e.contains("tiny chunks"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}
