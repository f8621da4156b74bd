//! A tiny HTTP/1.1 server for tests of `cclab get` (not for serving anything real): answers
//! `GET /bytes/N` with N zero bytes (Content-Length), `GET /chunked/N` with N bytes in
//! chunks, and 404 otherwise; serves at most `max_conns` connections, each bounded in time,
//! then stops. Runs in the calling thread's network namespace.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

/// Largest body it serves.
pub const MAX_BODY: u64 = 4_000_000_000;

/// Serve up to `max_conns` connections on `l`, giving up `idle` after the last one.
pub fn serve(l: TcpListener, max_conns: usize, idle: Duration) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        let _ = l.set_nonblocking(true);
        let mut served = 0;
        let mut last = Instant::now();
        while served < max_conns && last.elapsed() < idle {
            match l.accept() {
                Ok((s, _)) => {
                    let _ = s.set_nonblocking(false);
                    one(s);
                    served += 1;
                    last = Instant::now();
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        served
    })
}

fn one(mut s: TcpStream) {
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.set_write_timeout(Some(Duration::from_secs(30)));
    let mut req = Vec::new();
    let mut b = [0u8; 1024];
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 8192 {
        match s.read(&mut b) {
            Ok(0) | Err(_) => return,
            Ok(k) => req.extend_from_slice(&b[..k]),
        }
    }
    let text = String::from_utf8_lossy(&req);
    let path = text.split_whitespace().nth(1).unwrap_or("/");
    let num = |p: &str| p.parse::<u64>().ok().filter(|n| *n <= MAX_BODY);
    let chunk = vec![0u8; 64 * 1024];
    if let Some(n) = path.strip_prefix("/bytes/").and_then(num) {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nContent-Length: {n}\r\nConnection: close\r\n\r\n"
        );
        let mut left = n;
        while left > 0 {
            let k = left.min(chunk.len() as u64) as usize;
            if s.write_all(&chunk[..k]).is_err() {
                return;
            }
            left -= k as u64;
        }
    } else if let Some(n) = path.strip_prefix("/chunked/").and_then(num) {
        let _ = write!(
            s,
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        );
        let mut left = n;
        while left > 0 {
            let k = left.min(chunk.len() as u64) as usize;
            if write!(s, "{k:x}\r\n").is_err()
                || s.write_all(&chunk[..k]).is_err()
                || s.write_all(b"\r\n").is_err()
            {
                return;
            }
            left -= k as u64;
        }
        let _ = s.write_all(b"0\r\n\r\n");
    } else {
        let _ = write!(
            s,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
    }
    let _ = s.flush();
}
