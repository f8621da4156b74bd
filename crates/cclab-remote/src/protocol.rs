//! The control protocol: versioned, length-prefixed frames with a bounded size, and a parser
//! that turns any byte string into a message or an error (never a panic, never more memory
//! than the frame it was given).
//!
//! ```text
//! frame   = len:u32be  type:u8  body          (1 <= len <= MAX_FRAME; len counts type + body)
//! string  = n:u16be  n bytes of UTF-8          (n <= MAX_STR)
//! list    = n:u16be  n items                   (n bounded per list: MAX_CCS, MAX_SAMPLES, MAX_STREAMS)
//! ```
//!
//! A control connection opens with `Hello` (magic `CCLB`, version), a data connection with
//! `DataHello`; see `docs/remote.md` for the exchange.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Protocol version (both ends must speak the same one).
pub const VERSION: u16 = 1;
/// First bytes of a `Hello`.
pub const MAGIC: [u8; 4] = *b"CCLB";
/// Largest frame (type + body), bytes.
pub const MAX_FRAME: usize = 64 * 1024;
/// Longest string, bytes.
pub const MAX_STR: usize = 256;
/// Most controllers a server lists.
pub const MAX_CCS: usize = 64;
/// Most samples in one `Samples` frame.
pub const MAX_SAMPLES: usize = 1024;
/// Most streams in one run.
pub const MAX_STREAMS: usize = 64;
pub const NONCE_LEN: usize = 32;
pub const MAC_LEN: usize = 32;
pub const SESSION_LEN: usize = 16;
/// Highest pacing cap a `RunRequest` may carry, bytes/s (100 Gbit/s); a cap is 1 or more (no
/// cap is the field left out, so every request has one encoding).
pub const MAX_PACE: u64 = 12_500_000_000;

/// Error codes of an `Error` message.
pub mod code {
    /// The peer speaks another protocol version.
    pub const VERSION: u16 = 1;
    /// Authentication failed or is missing.
    pub const AUTH: u16 = 2;
    /// The peer's address is not allowed (a server without a key takes loopback only).
    pub const REFUSED: u16 = 3;
    /// A per-client limit (duration, concurrent runs, bytes, streams).
    pub const LIMIT: u16 = 4;
    /// A malformed or unexpected message.
    pub const BAD_REQUEST: u16 = 5;
    /// The sender's kernel lacks or does not allow the congestion control.
    pub const CC: u16 = 6;
    /// Too many clients.
    pub const BUSY: u16 = 7;
    /// Something failed on the server.
    pub const INTERNAL: u16 = 8;
}

/// One TCP_INFO sample of a sending socket (10 ms apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sample {
    /// Time since the run's start at the sender, us.
    pub t_us: u32,
    /// `tcpi_snd_cwnd`, packets.
    pub cwnd: u32,
    /// Packets in flight (unacked - sacked - lost + retrans).
    pub inflight: u32,
    /// `tcpi_rtt` (smoothed RTT), us.
    pub srtt_us: u32,
    /// `tcpi_min_rtt`, us.
    pub min_rtt_us: u32,
    /// `tcpi_total_retrans`, segments.
    pub retrans: u32,
    /// `tcpi_data_segs_out`.
    pub segs_out: u32,
    /// `tcpi_total_rto` (0 before Linux 6.7).
    pub rtos: u32,
    /// `tcpi_delivery_rate`, bytes/s.
    pub delivery_rate: u64,
    /// `tcpi_pacing_rate`, bytes/s.
    pub pacing_rate: u64,
    /// `tcpi_bytes_acked`.
    pub bytes_acked: u64,
    /// `tcpi_bytes_sent` (retransmissions included).
    pub bytes_sent: u64,
}

const SAMPLE_LEN: usize = 8 * 4 + 4 * 8;

/// What the server allows each client (sent in `Welcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitsMsg {
    pub max_duration_ms: u32,
    pub max_parallel: u16,
    pub max_runs: u16,
    /// Bytes a client may move per hour.
    pub max_bytes: u64,
}

/// One stream's end of a run as the server saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamDone {
    /// Bytes the server's application wrote (download) or read (upload).
    pub bytes: u64,
    /// From the run's start to the last byte written (download) or read (upload), ns.
    pub elapsed_ns: u64,
    /// The congestion control the sending socket used (download; empty for upload).
    pub cc: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// C->S, first frame of a control connection.
    Hello {
        version: u16,
        nonce: [u8; NONCE_LEN],
    },
    /// S->C: the server's nonce and whether it needs a key.
    Challenge {
        version: u16,
        nonce: [u8; NONCE_LEN],
        key_required: bool,
    },
    /// C->S: HMAC(key, client label, nonces), or none without a key.
    Auth { mac: Option<[u8; MAC_LEN]> },
    /// S->C: the server's proof (mutual authentication), the session, and what it offers.
    Welcome {
        mac: Option<[u8; MAC_LEN]>,
        session: [u8; SESSION_LEN],
        kernel: String,
        ccs: Vec<String>,
        limits: LimitsMsg,
    },
    /// C->S: start a run.
    RunRequest {
        run: u32,
        cc: String,
        /// The client sends (an upload); otherwise the server sends (a download).
        reverse: bool,
        duration_ms: u32,
        /// Bytes per stream (0: bulk for the duration).
        size: u64,
        parallel: u16,
        /// Cap on the sender's pacing rate (`SO_MAX_PACING_RATE`), bytes/s per stream; 0 =
        /// none. An optional trailing field: written only when set, so an unpaced request is
        /// the same frame as before the field existed (see [`MAX_PACE`]).
        pace: u64,
    },
    /// S->C: open the data connections now.
    RunReady { run: u32 },
    /// C->S, first frame of a data connection: which run and stream, MACed with the session key.
    DataHello {
        session: [u8; SESSION_LEN],
        run: u32,
        stream: u16,
        mac: [u8; MAC_LEN],
    },
    /// S->C: every stream is connected; the run starts.
    RunStart { run: u32 },
    /// S->C (download): TCP_INFO samples of one stream.
    Samples {
        run: u32,
        stream: u16,
        samples: Vec<Sample>,
    },
    /// S->C: the run is over.
    RunDone {
        run: u32,
        streams: Vec<StreamDone>,
        note: String,
    },
    /// C->S: the session ends.
    Bye,
    /// Either way: what went wrong, one line.
    Error { code: u16, message: String },
}

/// Why a frame could not be read or parsed.
#[derive(Debug)]
pub enum ProtoError {
    /// The peer closed the connection.
    Closed,
    /// Nothing (or not the whole frame) arrived in time.
    Timeout,
    /// SIGINT/SIGTERM while waiting.
    Interrupted(i32),
    Io(io::Error),
    /// The frame is larger than [`MAX_FRAME`] (or empty).
    BadLength(u32),
    /// The frame's content is not a valid message.
    Malformed(String),
}

impl std::fmt::Display for ProtoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProtoError::Closed => f.write_str("the peer closed the connection"),
            ProtoError::Timeout => f.write_str("the peer sent nothing in time"),
            ProtoError::Interrupted(_) => f.write_str("interrupted"),
            ProtoError::Io(e) => write!(f, "{e}"),
            ProtoError::BadLength(n) => {
                write!(f, "frame of {n} bytes (1..={MAX_FRAME} allowed)")
            }
            ProtoError::Malformed(m) => write!(f, "malformed message: {m}"),
        }
    }
}

// ---- encoding --------------------------------------------------------------------------

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    /// Strings longer than [`MAX_STR`] are cut (at a character boundary).
    fn str(&mut self, s: &str) {
        let mut n = s.len().min(MAX_STR);
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        self.u16(n as u16);
        self.bytes(&s.as_bytes()[..n]);
    }
    fn opt_mac(&mut self, m: &Option<[u8; MAC_LEN]>) {
        match m {
            Some(m) => {
                self.u8(1);
                self.bytes(m);
            }
            None => self.u8(0),
        }
    }
}

struct R<'a> {
    b: &'a [u8],
    i: usize,
}

fn bad(m: impl Into<String>) -> ProtoError {
    ProtoError::Malformed(m.into())
}

impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        if self.b.len() - self.i < n {
            return Err(bad("message ends early"));
        }
        let s = &self.b[self.i..self.i + n];
        self.i += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, ProtoError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ProtoError> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, ProtoError> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, ProtoError> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], ProtoError> {
        Ok(self.take(N)?.try_into().unwrap())
    }
    fn bool(&mut self) -> Result<bool, ProtoError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(bad(format!("flag {v} (0 or 1)"))),
        }
    }
    fn str(&mut self) -> Result<String, ProtoError> {
        let n = self.u16()? as usize;
        if n > MAX_STR {
            return Err(bad(format!("string of {n} bytes (at most {MAX_STR})")));
        }
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| bad("string is not UTF-8"))
    }
    fn count(&mut self, max: usize, what: &str) -> Result<usize, ProtoError> {
        let n = self.u16()? as usize;
        if n > max {
            return Err(bad(format!("{n} {what} (at most {max})")));
        }
        Ok(n)
    }
    fn opt_mac(&mut self) -> Result<Option<[u8; MAC_LEN]>, ProtoError> {
        Ok(if self.bool()? {
            Some(self.arr()?)
        } else {
            None
        })
    }
    fn end(&self) -> Result<(), ProtoError> {
        if self.i != self.b.len() {
            return Err(bad(format!(
                "{} bytes after the message",
                self.b.len() - self.i
            )));
        }
        Ok(())
    }
}

impl Msg {
    fn kind(&self) -> u8 {
        match self {
            Msg::Hello { .. } => 1,
            Msg::Challenge { .. } => 2,
            Msg::Auth { .. } => 3,
            Msg::Welcome { .. } => 4,
            Msg::RunRequest { .. } => 5,
            Msg::RunReady { .. } => 6,
            Msg::DataHello { .. } => 7,
            Msg::RunStart { .. } => 8,
            Msg::Samples { .. } => 9,
            Msg::RunDone { .. } => 10,
            Msg::Bye => 11,
            Msg::Error { .. } => 12,
        }
    }

    /// The whole frame (length prefix included). Lists longer than their bound are cut to
    /// it, so every frame this writes is one the parser takes.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = W(vec![0, 0, 0, 0]);
        w.u8(self.kind());
        match self {
            Msg::Hello { version, nonce } => {
                w.bytes(&MAGIC);
                w.u16(*version);
                w.bytes(nonce);
            }
            Msg::Challenge {
                version,
                nonce,
                key_required,
            } => {
                w.u16(*version);
                w.bytes(nonce);
                w.u8(*key_required as u8);
            }
            Msg::Auth { mac } => w.opt_mac(mac),
            Msg::Welcome {
                mac,
                session,
                kernel,
                ccs,
                limits,
            } => {
                w.opt_mac(mac);
                w.bytes(session);
                w.str(kernel);
                let n = ccs.len().min(MAX_CCS);
                w.u16(n as u16);
                for c in &ccs[..n] {
                    w.str(c);
                }
                w.u32(limits.max_duration_ms);
                w.u16(limits.max_parallel);
                w.u16(limits.max_runs);
                w.u64(limits.max_bytes);
            }
            Msg::RunRequest {
                run,
                cc,
                reverse,
                duration_ms,
                size,
                parallel,
                pace,
            } => {
                w.u32(*run);
                w.str(cc);
                w.u8(*reverse as u8);
                w.u32(*duration_ms);
                w.u64(*size);
                w.u16(*parallel);
                if *pace > 0 {
                    w.u64((*pace).min(MAX_PACE));
                }
            }
            Msg::RunReady { run } | Msg::RunStart { run } => w.u32(*run),
            Msg::DataHello {
                session,
                run,
                stream,
                mac,
            } => {
                w.bytes(session);
                w.u32(*run);
                w.u16(*stream);
                w.bytes(mac);
            }
            Msg::Samples {
                run,
                stream,
                samples,
            } => {
                w.u32(*run);
                w.u16(*stream);
                let n = samples.len().min(MAX_SAMPLES);
                w.u16(n as u16);
                for s in &samples[..n] {
                    for v in [
                        s.t_us,
                        s.cwnd,
                        s.inflight,
                        s.srtt_us,
                        s.min_rtt_us,
                        s.retrans,
                        s.segs_out,
                        s.rtos,
                    ] {
                        w.u32(v);
                    }
                    for v in [s.delivery_rate, s.pacing_rate, s.bytes_acked, s.bytes_sent] {
                        w.u64(v);
                    }
                }
            }
            Msg::RunDone { run, streams, note } => {
                w.u32(*run);
                let n = streams.len().min(MAX_STREAMS);
                w.u16(n as u16);
                for s in &streams[..n] {
                    w.u64(s.bytes);
                    w.u64(s.elapsed_ns);
                    w.str(&s.cc);
                }
                w.str(note);
            }
            Msg::Bye => {}
            Msg::Error { code, message } => {
                w.u16(*code);
                w.str(message);
            }
        }
        let len = (w.0.len() - 4) as u32;
        w.0[..4].copy_from_slice(&len.to_be_bytes());
        w.0
    }

    /// Parse one frame's content (type + body, without the length prefix).
    pub fn decode(frame: &[u8]) -> Result<Msg, ProtoError> {
        if frame.is_empty() || frame.len() > MAX_FRAME {
            return Err(ProtoError::BadLength(frame.len() as u32));
        }
        let mut r = R { b: frame, i: 1 };
        let m = match frame[0] {
            1 => {
                if r.arr::<4>()? != MAGIC {
                    return Err(bad("not a cclab peer (no CCLB magic)"));
                }
                Msg::Hello {
                    version: r.u16()?,
                    nonce: r.arr()?,
                }
            }
            2 => Msg::Challenge {
                version: r.u16()?,
                nonce: r.arr()?,
                key_required: r.bool()?,
            },
            3 => Msg::Auth { mac: r.opt_mac()? },
            4 => {
                let mac = r.opt_mac()?;
                let session = r.arr()?;
                let kernel = r.str()?;
                let n = r.count(MAX_CCS, "controllers")?;
                let mut ccs = Vec::with_capacity(n);
                for _ in 0..n {
                    ccs.push(r.str()?);
                }
                Msg::Welcome {
                    mac,
                    session,
                    kernel,
                    ccs,
                    limits: LimitsMsg {
                        max_duration_ms: r.u32()?,
                        max_parallel: r.u16()?,
                        max_runs: r.u16()?,
                        max_bytes: r.u64()?,
                    },
                }
            }
            5 => {
                let (run, cc, reverse) = (r.u32()?, r.str()?, r.bool()?);
                let (duration_ms, size, parallel) = (r.u32()?, r.u64()?, r.u16()?);
                let pace = if r.i < frame.len() {
                    let p = r.u64()?;
                    if p == 0 || p > MAX_PACE {
                        return Err(bad(format!(
                            "pacing cap of {p} bytes/s (1 to {MAX_PACE}; none is the field left out)"
                        )));
                    }
                    p
                } else {
                    0
                };
                Msg::RunRequest {
                    run,
                    cc,
                    reverse,
                    duration_ms,
                    size,
                    parallel,
                    pace,
                }
            }
            6 => Msg::RunReady { run: r.u32()? },
            7 => Msg::DataHello {
                session: r.arr()?,
                run: r.u32()?,
                stream: r.u16()?,
                mac: r.arr()?,
            },
            8 => Msg::RunStart { run: r.u32()? },
            9 => {
                let run = r.u32()?;
                let stream = r.u16()?;
                let n = r.count(MAX_SAMPLES, "samples")?;
                // The count is checked against what is left before anything is allocated.
                if frame.len() - r.i != n * SAMPLE_LEN {
                    return Err(bad(format!(
                        "{n} samples need {} bytes, the frame has {}",
                        n * SAMPLE_LEN,
                        frame.len() - r.i
                    )));
                }
                let mut samples = Vec::with_capacity(n);
                for _ in 0..n {
                    let mut u = [0u32; 8];
                    for v in &mut u {
                        *v = r.u32()?;
                    }
                    samples.push(Sample {
                        t_us: u[0],
                        cwnd: u[1],
                        inflight: u[2],
                        srtt_us: u[3],
                        min_rtt_us: u[4],
                        retrans: u[5],
                        segs_out: u[6],
                        rtos: u[7],
                        delivery_rate: r.u64()?,
                        pacing_rate: r.u64()?,
                        bytes_acked: r.u64()?,
                        bytes_sent: r.u64()?,
                    });
                }
                Msg::Samples {
                    run,
                    stream,
                    samples,
                }
            }
            10 => {
                let run = r.u32()?;
                let n = r.count(MAX_STREAMS, "streams")?;
                let mut streams = Vec::with_capacity(n);
                for _ in 0..n {
                    streams.push(StreamDone {
                        bytes: r.u64()?,
                        elapsed_ns: r.u64()?,
                        cc: r.str()?,
                    });
                }
                Msg::RunDone {
                    run,
                    streams,
                    note: r.str()?,
                }
            }
            11 => Msg::Bye,
            12 => Msg::Error {
                code: r.u16()?,
                message: r.str()?,
            },
            t => return Err(bad(format!("unknown message type {t}"))),
        };
        r.end()?;
        Ok(m)
    }

    /// A short name for messages about unexpected messages.
    pub fn name(&self) -> &'static str {
        match self {
            Msg::Hello { .. } => "Hello",
            Msg::Challenge { .. } => "Challenge",
            Msg::Auth { .. } => "Auth",
            Msg::Welcome { .. } => "Welcome",
            Msg::RunRequest { .. } => "RunRequest",
            Msg::RunReady { .. } => "RunReady",
            Msg::DataHello { .. } => "DataHello",
            Msg::RunStart { .. } => "RunStart",
            Msg::Samples { .. } => "Samples",
            Msg::RunDone { .. } => "RunDone",
            Msg::Bye => "Bye",
            Msg::Error { .. } => "Error",
        }
    }
}

/// Read one frame's content from `r` (length checked before anything is allocated).
pub fn read_frame<Rd: Read>(r: &mut Rd) -> Result<Vec<u8>, ProtoError> {
    let mut len = [0u8; 4];
    read_all(r, &mut len, true)?;
    let n = u32::from_be_bytes(len);
    if n == 0 || n as usize > MAX_FRAME {
        return Err(ProtoError::BadLength(n));
    }
    let mut buf = vec![0u8; n as usize];
    read_all(r, &mut buf, false)?;
    Ok(buf)
}

/// Read and parse one message from `r`.
pub fn read_msg<Rd: Read>(r: &mut Rd) -> Result<Msg, ProtoError> {
    Msg::decode(&read_frame(r)?)
}

fn read_all<Rd: Read>(r: &mut Rd, buf: &mut [u8], first: bool) -> Result<(), ProtoError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 && first => return Err(ProtoError::Closed),
            Ok(0) => return Err(bad("connection closed inside a frame")),
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                if let Some(sig) = cclab_sys::interrupted() {
                    return Err(ProtoError::Interrupted(sig));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(ProtoError::Timeout),
            Err(e) => return Err(ProtoError::Io(e)),
        }
    }
    Ok(())
}

/// A [`Read`] over a socket that gives up at a deadline (however slowly the peer dribbles
/// bytes) and on SIGINT/SIGTERM.
pub struct DeadlineReader<'a> {
    pub stream: &'a TcpStream,
    pub deadline: Instant,
}

impl Read for DeadlineReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if cclab_sys::interrupted().is_some() {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            // Short slices, so a signal is noticed within a quarter second.
            self.stream
                .set_read_timeout(Some(left.min(Duration::from_millis(250))))?;
            match (&mut &*self.stream).read(buf) {
                Err(e)
                    if e.kind() == io::ErrorKind::WouldBlock
                        || e.kind() == io::ErrorKind::TimedOut =>
                {
                    continue
                }
                r => return r,
            }
        }
    }
}

/// A control connection: messages in and out, every read bounded in time.
pub struct Conn {
    pub stream: TcpStream,
}

impl Conn {
    pub fn new(stream: TcpStream) -> io::Result<Conn> {
        stream.set_nodelay(true)?;
        stream.set_write_timeout(Some(Duration::from_secs(10)))?;
        Ok(Conn { stream })
    }

    /// The next message, or an error if none arrives within `timeout`.
    pub fn recv(&mut self, timeout: Duration) -> Result<Msg, ProtoError> {
        let mut r = DeadlineReader {
            stream: &self.stream,
            deadline: Instant::now() + timeout,
        };
        match read_msg(&mut r) {
            Err(ProtoError::Io(e)) if e.kind() == io::ErrorKind::Interrupted => Err(
                ProtoError::Interrupted(cclab_sys::interrupted().unwrap_or(libc::SIGINT)),
            ),
            other => other,
        }
    }

    pub fn send(&mut self, m: &Msg) -> io::Result<()> {
        (&self.stream).write_all(&m.encode())
    }

    /// Send an error (best effort: the peer may be gone).
    pub fn send_error(&mut self, code: u16, message: &str) {
        let _ = self.send(&Msg::Error {
            code,
            message: message.to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Msg> {
        let s = Sample {
            t_us: 10_000,
            cwnd: 10,
            inflight: 9,
            srtt_us: 20_500,
            min_rtt_us: 20_001,
            retrans: 3,
            segs_out: 1000,
            rtos: 1,
            delivery_rate: 6_000_000,
            pacing_rate: 7_000_000,
            bytes_acked: 1 << 33,
            bytes_sent: (1 << 33) + 5,
        };
        vec![
            Msg::Hello {
                version: VERSION,
                nonce: [7; 32],
            },
            Msg::Challenge {
                version: VERSION,
                nonce: [8; 32],
                key_required: true,
            },
            Msg::Auth { mac: Some([1; 32]) },
            Msg::Auth { mac: None },
            Msg::Welcome {
                mac: Some([2; 32]),
                session: [3; 16],
                kernel: "6.8.0".into(),
                ccs: vec!["reno".into(), "cubic".into(), "bbr".into()],
                limits: LimitsMsg {
                    max_duration_ms: 60_000,
                    max_parallel: 8,
                    max_runs: 2,
                    max_bytes: 1 << 34,
                },
            },
            Msg::RunRequest {
                run: 4,
                cc: "bbr".into(),
                reverse: true,
                duration_ms: 30_000,
                size: 25_000_000,
                parallel: 4,
                pace: 0,
            },
            Msg::RunRequest {
                run: 5,
                cc: "bbr".into(),
                reverse: false,
                duration_ms: 5_000,
                size: 0,
                parallel: 1,
                pace: 1_250_000,
            },
            Msg::RunReady { run: 4 },
            Msg::DataHello {
                session: [3; 16],
                run: 4,
                stream: 2,
                mac: [9; 32],
            },
            Msg::RunStart { run: 4 },
            Msg::Samples {
                run: 4,
                stream: 1,
                samples: vec![s; 100],
            },
            Msg::RunDone {
                run: 4,
                streams: vec![StreamDone {
                    bytes: 123,
                    elapsed_ns: 456,
                    cc: "bbr".into(),
                }],
                note: String::new(),
            },
            Msg::Bye,
            Msg::Error {
                code: code::LIMIT,
                message: "too long: ünïcode".into(),
            },
        ]
    }

    #[test]
    fn every_message_round_trips() {
        for m in all() {
            let f = m.encode();
            assert!(f.len() - 4 <= MAX_FRAME);
            let back = read_msg(&mut &f[..]).unwrap();
            assert_eq!(back, m);
        }
    }

    #[test]
    fn bounds_are_enforced() {
        // A length prefix over the bound is refused before any allocation.
        let mut f = (MAX_FRAME as u32 + 1).to_be_bytes().to_vec();
        f.extend([1; 16]);
        assert!(matches!(
            read_frame(&mut &f[..]),
            Err(ProtoError::BadLength(n)) if n as usize == MAX_FRAME + 1
        ));
        assert!(matches!(
            read_frame(&mut &[0u8, 0, 0, 0][..]),
            Err(ProtoError::BadLength(0))
        ));
        // A list count over its bound.
        let mut w = W(vec![9]);
        w.u32(1);
        w.u16(0);
        w.u16(MAX_SAMPLES as u16 + 1);
        assert!(
            matches!(Msg::decode(&w.0), Err(ProtoError::Malformed(m)) if m.contains("samples"))
        );
        // A string over its bound.
        let mut w = W(vec![12]);
        w.u16(1);
        w.u16(MAX_STR as u16 + 1);
        w.bytes(&[b'a'; MAX_STR + 1]);
        assert!(Msg::decode(&w.0).is_err());
        // Trailing bytes, an unknown type, a wrong magic, a bad flag.
        let mut f = Msg::Bye.encode()[4..].to_vec();
        f.push(0);
        assert!(Msg::decode(&f).is_err());
        assert!(Msg::decode(&[200]).is_err());
        let mut h = Msg::Hello {
            version: 1,
            nonce: [0; 32],
        }
        .encode()[4..]
            .to_vec();
        h[1] = b'X';
        assert!(matches!(Msg::decode(&h), Err(ProtoError::Malformed(m)) if m.contains("magic")));
        let mut c = Msg::Challenge {
            version: 1,
            nonce: [0; 32],
            key_required: false,
        }
        .encode()[4..]
            .to_vec();
        *c.last_mut().unwrap() = 2;
        assert!(Msg::decode(&c).is_err());
        // Encoding cuts what the parser would refuse.
        let long = Msg::Error {
            code: 1,
            message: "é".repeat(200),
        };
        let Msg::Error { message, .. } = Msg::decode(&long.encode()[4..]).unwrap() else {
            panic!()
        };
        assert!(message.len() <= MAX_STR && message.chars().all(|c| c == 'é'));
        // A pacing cap: none is the field left out (so an unpaced request is the frame a
        // peer without the field sends); 0 or one over the bound is refused.
        let req = |pace| Msg::RunRequest {
            run: 1,
            cc: "cubic".into(),
            reverse: false,
            duration_ms: 1000,
            size: 0,
            parallel: 1,
            pace,
        };
        assert_eq!(req(0).encode().len() + 8, req(1).encode().len());
        for p in [0u64, MAX_PACE + 1, u64::MAX] {
            let mut f = req(0).encode()[4..].to_vec();
            f.extend(p.to_be_bytes());
            assert!(
                matches!(Msg::decode(&f), Err(ProtoError::Malformed(m)) if m.contains("pacing")),
                "{p}"
            );
        }
        let mut f = req(0).encode()[4..].to_vec();
        f.extend([0, 0, 1]);
        assert!(Msg::decode(&f).is_err(), "a cut pacing field");
        assert!(
            matches!(Msg::decode(&req(u64::MAX).encode()[4..]), Ok(Msg::RunRequest { pace, .. }) if pace == MAX_PACE)
        );
        // A closed connection before / inside a frame.
        assert!(matches!(read_frame(&mut &[][..]), Err(ProtoError::Closed)));
        assert!(matches!(
            read_frame(&mut &[0u8, 0, 0, 5, 1][..]),
            Err(ProtoError::Malformed(_))
        ));
    }
}
