//! `cclab get URL`: a download over plain HTTP/1.1 from any web server (no cclab on the far
//! end), as the field reports' wget did. Measures goodput, completion time and the
//! receiver-side RTT (TCP_INFO of the receiving socket every 10 ms: `tcpi_rcv_rtt`, and
//! `tcpi_min_rtt` from the handshake and the request's ACK). Bounded by `timeout` and
//! `max_size`; a download cut by either is kept, marked in `settings`.

use crate::protocol::Sample;
use crate::results::{self, FlowMeasure};
use crate::text::escape;
use crate::RemoteError;
use cclab_results::ResultsDoc;
use cclab_sys as sys;
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct GetOptions {
    pub url: String,
    pub repeat: u32,
    /// Longest a download may take, connection included (default 60 s).
    pub timeout: Duration,
    /// Most body bytes read (default 1 GB).
    pub max_size: u64,
    /// A line each second on stderr.
    pub progress: bool,
    /// The results document's scenario name.
    pub name: String,
}

impl Default for GetOptions {
    fn default() -> Self {
        GetOptions {
            url: String::new(),
            repeat: 1,
            timeout: Duration::from_secs(60),
            max_size: 1_000_000_000,
            progress: false,
            name: "get".into(),
        }
    }
}

/// The parts of an `http://` URL a request needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Url {
    pub host: String,
    pub port: u16,
    /// Path and query, from `/`.
    pub path: String,
}

/// Parse `http://host[:port][/path]`; anything else is a one-line error.
pub fn parse_url(s: &str) -> Result<Url, RemoteError> {
    let bad = |why: &str| RemoteError::Usage(format!("URL \"{s}\": {why}"));
    let rest = if let Some(r) = s.strip_prefix("http://") {
        r
    } else if s.starts_with("https://") {
        return Err(bad(
            "https is not supported (cclab get measures plain TCP); use an http:// URL",
        ));
    } else {
        return Err(bad("expected http://HOST[:PORT]/PATH"));
    };
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad(
            "spaces and control characters are not allowed (percent-encode them)",
        ));
    }
    let (hostport, path) = match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], rest[i..].to_string()),
        Some(i) => (&rest[..i], format!("/{}", &rest[i..])),
        None => (rest, "/".to_string()),
    };
    let path = path.split('#').next().unwrap_or("/").to_string();
    if hostport.contains('@') {
        return Err(bad("credentials in URLs are not supported"));
    }
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| bad("unclosed [ in the host"))?;
        let port = match after.strip_prefix(':') {
            Some(p) => p
                .parse()
                .map_err(|_| bad("the port is not a number up to 65535"))?,
            None if after.is_empty() => 80,
            None => return Err(bad("junk after the IPv6 address")),
        };
        (format!("[{h}]"), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse()
                    .map_err(|_| bad("the port is not a number up to 65535"))?,
            ),
            None => (hostport.to_string(), 80),
        }
    };
    if host.is_empty() || host == "[]" {
        return Err(bad("no host"));
    }
    Ok(Url { host, port, path })
}

/// Download `url` `repeat` times; one results document.
pub fn get(o: &GetOptions) -> Result<ResultsDoc, RemoteError> {
    if o.repeat == 0 {
        return Err(RemoteError::Usage("--repeat must be at least 1".into()));
    }
    if o.timeout.is_zero() {
        return Err(RemoteError::Usage(
            "--timeout must be more than 0 (e.g. 60s)".into(),
        ));
    }
    if o.max_size == 0 {
        return Err(RemoteError::Usage(
            "--max-size must be more than 0 (e.g. 1gb)".into(),
        ));
    }
    let url = parse_url(&o.url)?;
    let lookup = format!("{}:{}", url.host, url.port);
    let addr = lookup
        .to_socket_addrs()
        .map_err(|e| RemoteError::Usage(format!("cannot resolve \"{}\": {e}", url.host)))?
        .next()
        .ok_or_else(|| RemoteError::Usage(format!("\"{}\" has no address", url.host)))?;
    let _signals = sys::SignalGuard::install();
    let mut runs = Vec::new();
    for rep in 1..=o.repeat {
        let f = fetch(&url, addr, o)?;
        let truncated = f.truncated;
        let mut r = results::run_result(&[f.flow], rep as u64);
        r.params.insert("url".into(), json!(o.url));
        r.resolved.insert("url".into(), json!(o.url));
        let st = &mut r.settings;
        st.insert("host.peer".into(), json!(addr.to_string()));
        st.insert("host.direction".into(), json!("download"));
        st.insert("host.sender".into(), json!("http server"));
        st.insert("host.http_status".into(), json!(f.status));
        st.insert(
            "host.local_kernel".into(),
            json!(crate::sampler::kernel_release()),
        );
        st.insert(
            "host.rtt_source".into(),
            json!("receiver: tcpi_rcv_rtt, min tcpi_min_rtt"),
        );
        st.insert("host.sample_interval_ms".into(), json!(10));
        if let Some(t) = truncated {
            st.insert("host.truncated".into(), json!(t));
            if o.progress {
                eprintln!(
                    "cclab get: run {rep}: stopped at the {t}; the figures cover what arrived"
                );
            }
        }
        runs.push(r);
    }
    Ok(ResultsDoc {
        cclab: cclab_results::VERSION.to_string(),
        scenario: o.name.clone(),
        backend: results::BACKEND.into(),
        runs,
        ..Default::default()
    })
}

struct Fetched {
    flow: FlowMeasure,
    status: u16,
    truncated: Option<&'static str>,
}

/// Largest response head, bytes.
const MAX_HEAD: usize = 16 * 1024;

/// How the body ends.
enum Body {
    Length(u64),
    Chunked(Chunked),
    Close,
}

fn fetch(url: &Url, addr: SocketAddr, o: &GetOptions) -> Result<Fetched, RemoteError> {
    let start = Instant::now();
    let deadline = start + o.timeout;
    let s = TcpStream::connect_timeout(&addr, o.timeout.min(Duration::from_secs(10)))
        .map_err(|e| RemoteError::Io(format!("cannot connect to {addr}: {e}")))?;
    let fd = s.as_raw_fd();
    let host = if url.port == 80 {
        url.host.clone()
    } else {
        format!("{}:{}", url.host, url.port)
    };
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: cclab/{}\r\nAccept: */*\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n",
        url.path,
        cclab_results::VERSION
    );
    s.set_write_timeout(Some(Duration::from_secs(10)))
        .and_then(|_| (&s).write_all(req.as_bytes()))
        .map_err(|e| RemoteError::Io(format!("sending the request to {addr}: {e}")))?;
    let t0 = Instant::now();
    let mut buf = vec![0u8; 256 * 1024];
    let mut head: Vec<u8> = Vec::new();
    let mut body: Option<Body> = None;
    let mut status = 0u16;
    let mut got = 0u64;
    let mut last_ns = 0u64;
    let mut samples: Vec<Sample> = Vec::new();
    let mut next_sample = t0;
    let mut next_line = 1u64;
    let mut line_bytes = 0u64;
    let mut truncated = None;
    let mut done = false;
    let mut size = None;
    while !done {
        if let Some(sig) = sys::interrupted() {
            return Err(RemoteError::Interrupted(sig));
        }
        let now = Instant::now();
        if now >= deadline {
            if body.is_none() {
                return Err(RemoteError::Timeout(format!(
                    "{addr} sent no complete response head within {:.0} s (--timeout)",
                    o.timeout.as_secs_f64()
                )));
            }
            truncated = Some("timeout");
            break;
        }
        if now >= next_sample {
            sample_into(fd, t0, &mut samples);
            next_sample += Duration::from_millis(10);
            if next_sample < now {
                next_sample = now + Duration::from_millis(10);
            }
        }
        if o.progress && now >= t0 + Duration::from_secs(next_line) {
            eprintln!(
                "[{:>4}-{:>4} s] {:>8.2} Mbit/s  rcv rtt {:.1} ms",
                next_line - 1,
                next_line,
                (got - line_bytes) as f64 * 8.0 / 1e6,
                samples.last().map_or(0.0, |s| s.srtt_us as f64 / 1e3)
            );
            line_bytes = got;
            next_line += 1;
        }
        let wait = next_sample
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
            .min(
                deadline
                    .saturating_duration_since(Instant::now())
                    .max(Duration::from_millis(1)),
            );
        let _ = s.set_read_timeout(Some(wait));
        let k = match (&s).read(&mut buf) {
            Ok(0) => {
                match &body {
                    None => {
                        return Err(RemoteError::Protocol(format!(
                            "{addr} closed the connection before a complete HTTP response head"
                        )))
                    }
                    Some(Body::Length(n)) if got < *n => {
                        return Err(RemoteError::Io(format!(
                            "{addr} closed the connection after {got} of {n} bytes"
                        )))
                    }
                    Some(Body::Chunked(_)) => {
                        return Err(RemoteError::Io(format!(
                            "{addr} closed the connection inside a chunked body ({got} bytes)"
                        )))
                    }
                    _ => {}
                }
                break;
            }
            Ok(k) => k,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) =>
            {
                continue
            }
            Err(e) => return Err(RemoteError::Io(format!("reading from {addr}: {e}"))),
        };
        let mut data = &buf[..k];
        if body.is_none() {
            head.extend_from_slice(data);
            let Some(end) = find(&head, b"\r\n\r\n") else {
                if head.len() > MAX_HEAD {
                    return Err(RemoteError::Protocol(format!(
                        "{addr} sent a response head over {} kB",
                        MAX_HEAD / 1024
                    )));
                }
                continue;
            };
            let (st, b) = parse_head(&head[..end], url)?;
            status = st;
            if let Body::Length(n) = b {
                size = Some(n);
            }
            body = Some(b);
            let rest = head.split_off(end + 4);
            head.clear();
            got += count_body(body.as_mut().expect("set"), &rest, &mut done)?;
            if got > 0 {
                last_ns = t0.elapsed().as_nanos() as u64;
            }
            data = &[];
        }
        if !data.is_empty() {
            got += count_body(body.as_mut().expect("set"), data, &mut done)?;
            last_ns = t0.elapsed().as_nanos() as u64;
        }
        if let Some(Body::Length(n)) = &body {
            if got >= *n {
                done = true;
            }
        }
        let framing = match &body {
            Some(Body::Chunked(c)) => c.framing,
            _ => 0,
        };
        if got + framing >= o.max_size && !done {
            truncated = Some("max size");
            break;
        }
    }
    sample_into(fd, t0, &mut samples);
    drop(s);
    Ok(Fetched {
        flow: FlowMeasure {
            cc: "remote".into(),
            delivered: got,
            active_ns: last_ns,
            size: if truncated.is_none() {
                size.or(Some(got))
            } else {
                size
            },
            samples,
        },
        status,
        truncated,
    })
}

/// The receiver's view: `srtt_us` = `tcpi_rcv_rtt`, `bytes_acked` = `tcpi_bytes_received`.
fn sample_into(fd: i32, t0: Instant, v: &mut Vec<Sample>) {
    if let Ok((ti, _)) = sys::tcp_info(fd) {
        v.push(Sample {
            t_us: t0.elapsed().as_micros().min(u32::MAX as u128) as u32,
            srtt_us: ti.rcv_rtt,
            min_rtt_us: if ti.min_rtt == u32::MAX {
                0
            } else {
                ti.min_rtt
            },
            bytes_acked: ti.bytes_received,
            ..Default::default()
        });
    }
}

fn find(h: &[u8], pat: &[u8]) -> Option<usize> {
    h.windows(pat.len()).position(|w| w == pat)
}

fn parse_head(head: &[u8], url: &Url) -> Result<(u16, Body), RemoteError> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.splitn(3, ' ');
    let (v, code, reason) = (parts.next(), parts.next(), parts.next().unwrap_or(""));
    let code: u16 = match (v, code.and_then(|c| c.parse().ok())) {
        (Some(v), Some(c)) if v.starts_with("HTTP/1.") => c,
        _ => {
            return Err(RemoteError::Protocol(format!(
                "not an HTTP/1.x response: \"{}\"",
                escape(&status_line.chars().take(60).collect::<String>())
            )))
        }
    };
    let mut length = None;
    let mut chunked = false;
    let mut location = None;
    for l in lines {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let v = v.trim();
        match k.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                length = Some(v.parse::<u64>().map_err(|_| {
                    RemoteError::Protocol(format!("bad Content-Length \"{}\"", escape(v)))
                })?)
            }
            "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
            "location" => location = Some(v.to_string()),
            _ => {}
        }
    }
    if !(200..300).contains(&code) {
        let hint = match (code, location) {
            (300..=399, Some(l)) => {
                format!(
                    "; it points to {} (cclab get does not follow redirects: give that URL)",
                    escape(&l)
                )
            }
            _ => String::new(),
        };
        return Err(RemoteError::Refused(format!(
            "http://{}:{}{} answered {code} {}{hint}",
            url.host,
            url.port,
            url.path,
            escape(reason)
        )));
    }
    let body = if chunked {
        Body::Chunked(Chunked::default())
    } else if let Some(n) = length {
        Body::Length(n)
    } else {
        Body::Close
    };
    Ok((code, body))
}

/// Body bytes in `data`; sets `done` at the end of a chunked body.
fn count_body(b: &mut Body, data: &[u8], done: &mut bool) -> Result<u64, RemoteError> {
    match b {
        Body::Length(_) | Body::Close => Ok(data.len() as u64),
        Body::Chunked(c) => {
            let (n, end) = c.feed(data).map_err(RemoteError::Protocol)?;
            *done |= end;
            Ok(n)
        }
    }
}

/// A chunked-transfer decoder that counts the payload (RFC 9112 7.1), bounded line sizes.
/// It also counts the framing around the payload (size lines, CRLFs, trailers), which the
/// download's `--max-size` counts too, and refuses a body of endless tiny chunks
/// ([`TINY_CHUNKS`]): each costs a parse for next to no payload.
#[derive(Default, Debug)]
pub struct Chunked {
    state: ChunkState,
    line: Vec<u8>,
    /// Chunks begun.
    pub chunks: u64,
    /// Payload bytes so far.
    pub payload: u64,
    /// Bytes of framing so far.
    pub framing: u64,
}

/// After this many chunks, a body whose chunks average under [`TINY_CHUNK_BYTES`] of payload
/// is cut with an error.
pub const TINY_CHUNKS: u64 = 100_000;
/// See [`TINY_CHUNKS`].
pub const TINY_CHUNK_BYTES: u64 = 64;

#[derive(Default, Debug, PartialEq)]
enum ChunkState {
    #[default]
    Size,
    Data(u64),
    DataEnd,
    Trailer,
    Done,
}

const MAX_CHUNK_LINE: usize = 4096;

impl Chunked {
    /// Feed received bytes: (payload bytes among them, whether the body ended).
    pub fn feed(&mut self, mut d: &[u8]) -> Result<(u64, bool), String> {
        let mut payload = 0u64;
        while !d.is_empty() && self.state != ChunkState::Done {
            match self.state {
                ChunkState::Data(left) => {
                    let k = (left as usize).min(d.len());
                    payload += k as u64;
                    self.payload += k as u64;
                    d = &d[k..];
                    self.state = if left as usize == k {
                        ChunkState::DataEnd
                    } else {
                        ChunkState::Data(left - k as u64)
                    };
                }
                _ => {
                    let b = d[0];
                    d = &d[1..];
                    self.framing += 1;
                    if b != b'\n' {
                        if self.line.len() >= MAX_CHUNK_LINE {
                            return Err("a chunk line over 4 kB".into());
                        }
                        self.line.push(b);
                        continue;
                    }
                    let line = String::from_utf8_lossy(&self.line)
                        .trim_end_matches('\r')
                        .to_string();
                    self.line.clear();
                    self.state = match self.state {
                        ChunkState::Size => {
                            let hex = line.split(';').next().unwrap_or("").trim();
                            let n = u64::from_str_radix(hex, 16)
                                .map_err(|_| format!("bad chunk size \"{}\"", escape(hex)))?;
                            self.chunks += 1;
                            if self.chunks >= TINY_CHUNKS
                                && self.payload < self.chunks * TINY_CHUNK_BYTES
                            {
                                return Err(format!(
                                    "{} chunks averaging {} bytes: a stream of tiny chunks, not a download (cclab get stops after {TINY_CHUNKS} chunks under {TINY_CHUNK_BYTES} bytes on average)",
                                    self.chunks,
                                    self.payload / self.chunks
                                ));
                            }
                            if n == 0 {
                                ChunkState::Trailer
                            } else {
                                ChunkState::Data(n)
                            }
                        }
                        ChunkState::DataEnd if line.is_empty() => ChunkState::Size,
                        ChunkState::DataEnd => return Err("no CRLF after a chunk".into()),
                        ChunkState::Trailer if line.is_empty() => ChunkState::Done,
                        ChunkState::Trailer => ChunkState::Trailer,
                        _ => unreachable!("data states are handled above"),
                    };
                }
            }
        }
        Ok((payload, self.state == ChunkState::Done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            parse_url("http://example.org/a/b?c=1#frag").unwrap(),
            Url {
                host: "example.org".into(),
                port: 80,
                path: "/a/b?c=1".into()
            }
        );
        assert_eq!(parse_url("http://10.0.0.1:8080").unwrap().port, 8080);
        assert_eq!(parse_url("http://[::1]:81/x").unwrap().host, "[::1]");
        assert_eq!(parse_url("http://h?q").unwrap().path, "/?q");
        for (u, why) in [
            ("https://x/", "https is not supported"),
            ("ftp://x/", "expected http://"),
            ("http://x:99999/", "port"),
            ("http:///a", "no host"),
            ("http://u:p@x/", "credentials"),
            ("http://x/a b", "spaces"),
        ] {
            let e = parse_url(u).unwrap_err().to_string();
            assert!(e.contains(why), "{u}: {e}");
        }
    }

    #[test]
    fn chunked_bodies_are_counted_across_any_split() {
        let body =
            b"4\r\nWiki\r\n6;ext=1\r\npedia \r\nE\r\nin \r\n\r\nchunks.\r\n0\r\nX-T: 1\r\n\r\n";
        for split in 1..body.len() {
            let mut c = Chunked::default();
            let (a, d1) = c.feed(&body[..split]).unwrap();
            let (b, d2) = c.feed(&body[split..]).unwrap();
            assert_eq!(a + b, 4 + 6 + 14, "split {split}");
            assert!(d2 && (!d1 || split == body.len()), "split {split}");
        }
        assert!(Chunked::default().feed(b"zz\r\n").is_err());
        assert!(Chunked::default().feed(b"1\r\nabc\r\n").is_err());
        assert!(Chunked::default().feed(&[b'1'; 5000]).is_err());
    }
}
