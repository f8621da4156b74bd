//! `cclab perf`: runs against a `cclab serve`, one control connection for all of them and
//! one data connection per run and stream, results in cclab's schema (`backend: "host"`).

mod probe;

use crate::auth::{self, Key};
use crate::protocol::{Conn, LimitsMsg, Msg, Sample, MAC_LEN, SESSION_LEN, VERSION};
use crate::results::{self, FlowMeasure};
use crate::server::valid_cc_name;
use crate::text::escape;
use crate::transfer::{self, SendPlan};
use crate::{sampler, RemoteError};
use cclab_results::{ResultsDoc, RunResult};
use serde_json::json;
use std::io::Write;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `cclab perf` does.
#[derive(Clone, Debug)]
pub struct PerfOptions {
    /// `HOST[:PORT]` of the server (port [`crate::DEFAULT_PORT`] if none).
    pub target: String,
    /// Controllers, one run (or `repeat` runs) each, in order.
    pub ccs: Vec<String>,
    pub duration: Duration,
    pub repeat: u32,
    /// Bytes per stream (a sized transfer); `None`: bulk for the duration.
    pub size: Option<u64>,
    /// Upload (this host sends) instead of a download (the server sends).
    pub reverse: bool,
    pub parallel: u16,
    pub key: Option<Key>,
    /// A line each second on stderr while a run goes.
    pub progress: bool,
    /// The results document's scenario name.
    pub name: String,
    /// Probe the path first (min RTT, rate, random loss, buffer; `probe.rs`) and store the
    /// fitted path in the results' `fit` (`cclab perf` does unless `--no-probe`; never for a
    /// server on the loopback, which has no path to fit).
    pub probe: bool,
}

impl Default for PerfOptions {
    fn default() -> Self {
        PerfOptions {
            target: String::new(),
            ccs: vec!["cubic".into()],
            duration: Duration::from_secs(10),
            repeat: 1,
            size: None,
            reverse: false,
            parallel: 1,
            key: None,
            progress: false,
            name: "perf".into(),
            probe: false,
        }
    }
}

/// `HOST[:PORT]`, `[V6]:PORT` -> one address.
pub fn resolve(target: &str, default_port: u16) -> Result<SocketAddr, RemoteError> {
    let t = target.trim();
    if t.is_empty() {
        return Err(RemoteError::Usage(
            "no server given: cclab perf HOST[:PORT]".into(),
        ));
    }
    let with_port = if t.parse::<SocketAddr>().is_ok() {
        t.to_string()
    } else if t.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{t}]:{default_port}")
    } else if t
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        t.to_string()
    } else if t.contains(':') && !t.starts_with('[') {
        return Err(RemoteError::Usage(format!(
            "\"{t}\" is not HOST or HOST:PORT (the port is a number up to 65535)"
        )));
    } else {
        format!("{t}:{default_port}")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| RemoteError::Usage(format!("cannot resolve \"{t}\": {e}")))?
        .next()
        .ok_or_else(|| RemoteError::Usage(format!("\"{t}\" has no address")))
}

fn check_options(o: &PerfOptions) -> Result<(), RemoteError> {
    if o.ccs.is_empty() {
        return Err(RemoteError::Usage(
            "--cc names no controller (e.g. --cc cubic,bbr)".into(),
        ));
    }
    if let Some(c) = o.ccs.iter().find(|c| !valid_cc_name(c)) {
        return Err(RemoteError::Usage(format!(
            "--cc: \"{c}\" is not a congestion control name (Linux's: lowercase letters, digits, _; e.g. cubic, bbr)"
        )));
    }
    if o.duration < Duration::from_millis(100) {
        return Err(RemoteError::Usage(
            "--duration must be at least 100ms (e.g. 30s)".into(),
        ));
    }
    if o.duration > Duration::from_secs(3600) {
        return Err(RemoteError::Usage(
            "--duration is at most 1 h (the server's own limit is usually lower)".into(),
        ));
    }
    if o.repeat == 0 {
        return Err(RemoteError::Usage("--repeat must be at least 1".into()));
    }
    if o.parallel == 0 || o.parallel as usize > crate::protocol::MAX_STREAMS {
        return Err(RemoteError::Usage(format!(
            "--parallel must be 1 to {}",
            crate::protocol::MAX_STREAMS
        )));
    }
    if o.size == Some(0) {
        return Err(RemoteError::Usage(
            "--size must be more than 0 (e.g. 25mb)".into(),
        ));
    }
    Ok(())
}

/// An authenticated control session.
pub(crate) struct Session {
    conn: Conn,
    pub(crate) addr: SocketAddr,
    id: [u8; SESSION_LEN],
    key: [u8; MAC_LEN],
    kernel: String,
    pub(crate) ccs: Vec<String>,
    pub(crate) limits: LimitsMsg,
    next_run: u32,
}

const CONNECT: Duration = Duration::from_secs(5);
const ANSWER: Duration = Duration::from_secs(10);

fn refused(m: Msg, expected: &str) -> RemoteError {
    match m {
        // The server's text is shown to the user: escaped (`text::escape`).
        Msg::Error { message, .. } => RemoteError::Refused(escape(&message).into_owned()),
        m => RemoteError::Protocol(format!("expected {expected}, got {}", m.name())),
    }
}

fn open(addr: SocketAddr, key: Option<&Key>) -> Result<Session, RemoteError> {
    let s = TcpStream::connect_timeout(&addr, CONNECT).map_err(|e| {
        RemoteError::Io(format!(
            "cannot connect to {addr}: {e} (is `cclab serve` running there, port {}?)",
            addr.port()
        ))
    })?;
    let mut conn = Conn::new(s).map_err(|e| RemoteError::Io(e.to_string()))?;
    let nc = auth::nonce()?;
    conn.send(&Msg::Hello {
        version: VERSION,
        nonce: nc,
    })
    .map_err(|e| RemoteError::Io(format!("control connection: {e}")))?;
    let (ns, key_required) = match conn.recv(ANSWER)? {
        Msg::Challenge {
            version,
            nonce,
            key_required,
        } if version == VERSION => (nonce, key_required),
        Msg::Challenge { version, .. } => {
            return Err(RemoteError::Protocol(format!(
                "the server speaks cclab protocol {version}, this client {VERSION}; run the same cclab version on both hosts"
            )))
        }
        m => return Err(refused(m, "Challenge")),
    };
    match (key_required, key) {
        (true, None) => {
            return Err(RemoteError::Auth(
                "the server needs a key: pass --key-file F with the server's key".into(),
            ))
        }
        (false, Some(_)) => {
            return Err(RemoteError::Auth(
                "the server has no key, so it cannot prove it shares yours; give serve the same --key-file, or leave --key-file off (loopback only)".into(),
            ))
        }
        _ => {}
    }
    let kb: &[u8] = key.map_or(&[], |k| k.bytes());
    conn.send(&Msg::Auth {
        mac: key.map(|k| auth::mac(k.bytes(), auth::CLIENT, &[&nc, &ns])),
    })
    .map_err(|e| RemoteError::Io(format!("control connection: {e}")))?;
    match conn.recv(ANSWER)? {
        Msg::Welcome {
            mac,
            session,
            kernel,
            ccs,
            limits,
        } => {
            if key.is_some()
                && !mac.is_some_and(|m| auth::verify(kb, auth::SERVER, &[&nc, &ns], &m))
            {
                return Err(RemoteError::Auth(
                    "the server did not prove it knows the key (another server at that address?); no run was started".into(),
                ));
            }
            Ok(Session {
                conn,
                addr,
                id: session,
                key: auth::session_key(kb, &nc, &ns),
                // Shown in messages and recorded in results: escaped as all peer text is.
                kernel: escape(&kernel).into_owned(),
                ccs: ccs.iter().map(|c| escape(c).into_owned()).collect(),
                limits,
                next_run: 1,
            })
        }
        m => Err(refused(m, "Welcome")),
    }
}

/// What the per-second lines show.
#[derive(Default)]
struct Live {
    bytes: Arc<AtomicU64>,
    cwnd: AtomicU64,
    srtt_us: AtomicU64,
    retrans: AtomicU64,
    done: AtomicBool,
}

impl Live {
    fn update(&self, last: &[Sample]) {
        self.cwnd
            .store(last.iter().map(|s| s.cwnd as u64).sum(), Ordering::Relaxed);
        self.srtt_us.store(
            last.iter().map(|s| s.srtt_us as u64).max().unwrap_or(0),
            Ordering::Relaxed,
        );
        self.retrans.store(
            last.iter().map(|s| s.retrans as u64).sum(),
            Ordering::Relaxed,
        );
    }
}

/// Print a line each second (iperf3-like) until `live.done`.
fn progress(live: Arc<Live>, t0: Instant, cc: String) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut k = 1u64;
        let mut last_bytes = 0;
        while !live.done.load(Ordering::Relaxed) {
            let at = t0 + Duration::from_secs(k);
            let now = Instant::now();
            if now < at {
                std::thread::sleep((at - now).min(Duration::from_millis(50)));
                continue;
            }
            let b = live.bytes.load(Ordering::Relaxed);
            let _ = writeln!(
                std::io::stderr(),
                "[{:>4}-{:>4} s] {cc:<6} {:>8.2} Mbit/s  cwnd {:>5}  srtt {:>6.1} ms  retr {}",
                k - 1,
                k,
                (b.saturating_sub(last_bytes)) as f64 * 8.0 / 1e6,
                live.cwnd.load(Ordering::Relaxed),
                live.srtt_us.load(Ordering::Relaxed) as f64 / 1e3,
                live.retrans.load(Ordering::Relaxed),
            );
            last_bytes = b;
            k += 1;
        }
    })
}

/// Most samples one stream may send per run (the duration at 10 ms, the drain, slack).
fn sample_cap(duration: Duration) -> usize {
    (duration.as_millis() as usize / 10) + 2000
}

/// Run every controller (`repeat` times each) against the server; one results document.
pub fn perf(o: &PerfOptions) -> Result<ResultsDoc, RemoteError> {
    check_options(o)?;
    let addr = resolve(&o.target, crate::DEFAULT_PORT)?;
    if o.reverse {
        for cc in &o.ccs {
            sampler::check_cc(cc).map_err(RemoteError::Usage)?;
        }
    }
    let _signals = cclab_sys::SignalGuard::install();
    let mut s = open(addr, o.key.as_ref())?;
    let l = s.limits;
    if o.duration.as_millis() > l.max_duration_ms as u128 {
        return Err(RemoteError::Usage(format!(
            "--duration {:.1}s is longer than the server allows ({:.1}s)",
            o.duration.as_secs_f64(),
            l.max_duration_ms as f64 / 1e3
        )));
    }
    if o.parallel > l.max_parallel {
        return Err(RemoteError::Usage(format!(
            "--parallel {} is more than the server allows ({})",
            o.parallel, l.max_parallel
        )));
    }
    if !o.reverse {
        if let Some(cc) = o.ccs.iter().find(|c| !s.ccs.contains(c)) {
            return Err(RemoteError::Usage(format!(
                "congestion control \"{cc}\" is not in the server's kernel {} (it has: {})",
                s.kernel,
                s.ccs.join(", ")
            )));
        }
    }
    // A server on this host's loopback has no path to fit (and the probe would move tens of
    // gigabytes): the probe is skipped with a note.
    let probe = if o.probe && s.addr.ip().is_loopback() {
        if o.progress {
            eprintln!("cclab perf: no probe phase: the server is on this host's loopback, there is no path to fit");
        }
        None
    } else if o.probe {
        let (steal0, t0) = (cclab_sys::steal_ms(), std::time::Instant::now());
        let (runs, mut notes) = probe::run(&mut s, o)?;
        if let Some(share) = steal_share(steal0, t0.elapsed().as_secs_f64())
            .filter(|&x| x > cclab_results::LabConditions::MAX_STEAL_SHARE)
        {
            notes.push(format!(
                "this host's hypervisor took {:.0}% of its CPU time during the probe: the fit may describe this machine as much as the path",
                share * 100.0
            ));
        }
        Some((runs, notes))
    } else {
        None
    };
    let mut runs = Vec::new();
    // Runs during which the hypervisor took this host's CPU (1-based).
    let mut busy: Vec<usize> = Vec::new();
    for cc in &o.ccs {
        for rep in 1..=o.repeat {
            if o.progress {
                eprintln!(
                    "cclab perf: {} {cc} {} x{} to {} (run {} of {})",
                    if o.reverse { "upload" } else { "download" },
                    match o.size {
                        Some(b) => cclab_scenario::units::fmt_size(b),
                        None => format!("{:.1} s", o.duration.as_secs_f64()),
                    },
                    o.parallel,
                    s.addr,
                    runs.len() + 1,
                    o.ccs.len() * o.repeat as usize
                );
            }
            let steal0 = cclab_sys::steal_ms();
            let mut r = run_one(&mut s, o, cc, rep)?;
            annotate(&mut r, &s, o, cc);
            if let Some(share) = steal_share(steal0, r.duration_s) {
                r.settings
                    .insert("host.local_steal_pct".into(), json!(share * 100.0));
                if share > cclab_results::LabConditions::MAX_STEAL_SHARE {
                    busy.push(runs.len() + 1);
                    if o.progress {
                        eprintln!(
                            "cclab perf: warning: this host's hypervisor took {:.0}% of its CPU time during run {}: its figures may describe this machine as much as the path",
                            share * 100.0,
                            runs.len() + 1
                        );
                    }
                }
            }
            runs.push(r);
        }
    }
    let _ = s.conn.send(&Msg::Bye);
    let fit = match probe {
        Some((probe, mut notes)) => {
            if !busy.is_empty() {
                notes.push(format!(
                    "this host's hypervisor took more than {:.0}% of its CPU time during run(s) {:?}: the measured goodput may read low",
                    cclab_results::LabConditions::MAX_STEAL_SHARE * 100.0,
                    busy
                ));
            }
            let meta = crate::fit::FitMeta {
                peer: s.addr.to_string(),
                direction: if o.reverse { "upload" } else { "download" }.into(),
                duration_s: runs.first().map_or(o.duration.as_secs_f64(), |r| {
                    if o.size.is_some() {
                        r.duration_s
                    } else {
                        o.duration.as_secs_f64()
                    }
                }),
                streams: o.parallel,
                notes,
            };
            let f = crate::fit::fit(&probe, &runs, meta).map_err(|m| {
                RemoteError::Protocol(format!("the probe phase gave nothing to fit: {m}"))
            })?;
            Some(f.to_value())
        }
        None => None,
    };
    Ok(ResultsDoc {
        cclab: cclab_results::VERSION.to_string(),
        scenario: o.name.clone(),
        backend: results::BACKEND.into(),
        runs,
        fit,
        ..Default::default()
    })
}

/// Share of this host's CPU time its hypervisor took since `steal0` (ms of /proc/stat
/// `steal`) over `secs`; none where the kernel does not report steal.
fn steal_share(steal0: Option<f64>, secs: f64) -> Option<f64> {
    let ms = cclab_sys::steal_ms()? - steal0?;
    let cpus = cclab_sys::online_cpus().max(1) as f64;
    (secs > 0.0).then(|| (ms / 1e3 / (secs * cpus)).max(0.0))
}

fn annotate(r: &mut RunResult, s: &Session, o: &PerfOptions, cc: &str) {
    r.params.insert("flows.cc".into(), json!(cc));
    let rs = &mut r.resolved;
    rs.insert("duration".into(), json!(o.duration.as_secs_f64()));
    rs.insert("flows.cc".into(), json!(cc));
    rs.insert("flows.count".into(), json!(o.parallel));
    if let Some(b) = o.size {
        rs.insert("flows.size".into(), json!(b));
    }
    let st = &mut r.settings;
    st.insert("host.peer".into(), json!(s.addr.to_string()));
    st.insert(
        "host.direction".into(),
        json!(if o.reverse { "upload" } else { "download" }),
    );
    st.insert(
        "host.sender".into(),
        json!(if o.reverse { "local" } else { "peer" }),
    );
    st.insert("host.peer_kernel".into(), json!(s.kernel));
    st.insert("host.peer_ccs".into(), json!(s.ccs));
    st.insert("host.local_kernel".into(), json!(sampler::kernel_release()));
    st.insert("host.local_ccs".into(), json!(sampler::available()));
    st.insert("host.parallel".into(), json!(o.parallel));
    st.insert("host.sample_interval_ms".into(), json!(10));
}

fn run_one(s: &mut Session, o: &PerfOptions, cc: &str, rep: u32) -> Result<RunResult, RemoteError> {
    let flows = run_flows(s, o, cc, 0)?;
    Ok(results::run_result(&flows, rep as u64))
}

/// One run of `cc` as `o` says (duration, size, streams, direction), each sending socket's
/// pacing capped at `pace` bytes/s (0: no cap); the streams' measurements.
pub(crate) fn run_flows(
    s: &mut Session,
    o: &PerfOptions,
    cc: &str,
    pace: u64,
) -> Result<Vec<FlowMeasure>, RemoteError> {
    let run = s.next_run;
    s.next_run += 1;
    let n = o.parallel as usize;
    let ctl = |e: std::io::Error| RemoteError::Io(format!("control connection: {e}"));
    s.conn
        .send(&Msg::RunRequest {
            run,
            cc: cc.into(),
            reverse: o.reverse,
            duration_ms: o.duration.as_millis().min(u32::MAX as u128) as u32,
            size: o.size.unwrap_or(0),
            parallel: o.parallel,
            pace,
        })
        .map_err(ctl)?;
    match s.conn.recv(ANSWER)? {
        Msg::RunReady { run: r } if r == run => {}
        m => return Err(refused(m, "RunReady")),
    }
    let mut streams = Vec::new();
    for i in 0..n as u16 {
        let d = TcpStream::connect_timeout(&s.addr, CONNECT)
            .map_err(|e| RemoteError::Io(format!("data connection {i} to {}: {e}", s.addr)))?;
        if o.reverse {
            sampler::set_cc(d.as_raw_fd(), cc).map_err(RemoteError::Usage)?;
            if pace > 0 {
                sampler::set_max_pacing(d.as_raw_fd(), pace).map_err(RemoteError::Io)?;
            }
        }
        let _ = d.set_nodelay(false);
        let hello = Msg::DataHello {
            session: s.id,
            run,
            stream: i,
            mac: auth::data_token(&s.key, &s.id, run, i),
        };
        (&d).write_all(&hello.encode())
            .map_err(|e| RemoteError::Io(format!("data connection {i}: {e}")))?;
        streams.push(d);
    }
    match s.conn.recv(ANSWER)? {
        Msg::RunStart { run: r } if r == run => {}
        m => return Err(refused(m, "RunStart")),
    }
    let t0 = Instant::now();
    let live = Arc::new(Live::default());
    let printer = o
        .progress
        .then(|| progress(live.clone(), t0, cc.to_string()));
    let stop = Arc::new(AtomicBool::new(false));
    let outcome = if o.reverse {
        upload(s, o, run, streams, &live, &stop)
    } else {
        download(s, o, run, streams, t0, &live, &stop)
    };
    live.done.store(true, Ordering::SeqCst);
    if let Some(p) = printer {
        let _ = p.join();
    }
    if let Some(sig) = cclab_sys::interrupted() {
        return Err(RemoteError::Interrupted(sig));
    }
    outcome
}

fn download(
    s: &mut Session,
    o: &PerfOptions,
    run: u32,
    streams: Vec<TcpStream>,
    t0: Instant,
    live: &Arc<Live>,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<FlowMeasure>, RemoteError> {
    let n = streams.len();
    let deadline = t0 + o.duration + Duration::from_secs(30);
    let (bytes, stop2) = (live.bytes.clone(), stop.clone());
    let readers = std::thread::spawn(move || {
        transfer::receive(streams, t0, deadline, u64::MAX, &stop2, Some(bytes))
    });
    let cap = sample_cap(o.duration);
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); n];
    let mut last: Vec<Sample> = vec![Sample::default(); n];
    let result = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let m = match s.conn.recv(left) {
            Ok(m) => m,
            Err(e) => break Err(RemoteError::from(e)),
        };
        match m {
            Msg::Samples {
                run: r,
                stream,
                samples: v,
            } if r == run && (stream as usize) < n => {
                let st = &mut samples[stream as usize];
                if st.len() + v.len() > cap {
                    break Err(RemoteError::Protocol(format!(
                        "the server sent more than {cap} samples for one stream"
                    )));
                }
                if let Some(x) = v.last() {
                    last[stream as usize] = *x;
                }
                st.extend(v);
                live.update(&last);
            }
            Msg::RunDone {
                run: r,
                streams: done,
                note,
            } if r == run => {
                if done.len() != n {
                    break Err(RemoteError::Protocol(format!(
                        "the server reported {} streams of {n}",
                        done.len()
                    )));
                }
                if !note.is_empty() && o.progress {
                    eprintln!("cclab perf: server: {}", escape(&note));
                }
                break Ok(done);
            }
            m => break Err(refused(m, "Samples or RunDone")),
        }
    };
    if result.is_err() {
        stop.store(true, Ordering::SeqCst);
    }
    let (recv, _) = readers
        .join()
        .map_err(|_| RemoteError::Io("a reader thread panicked".into()))?;
    let done = result?;
    Ok(recv
        .iter()
        .zip(samples)
        .zip(done)
        .map(|((r, smp), d)| FlowMeasure {
            cc: if d.cc.is_empty() {
                "?".into()
            } else {
                escape(&d.cc).into_owned()
            },
            delivered: r.bytes,
            active_ns: r.last_ns,
            size: o.size,
            samples: smp,
        })
        .collect())
}

fn upload(
    s: &mut Session,
    o: &PerfOptions,
    run: u32,
    streams: Vec<TcpStream>,
    live: &Arc<Live>,
    stop: &Arc<AtomicBool>,
) -> Result<Vec<FlowMeasure>, RemoteError> {
    let n = streams.len();
    let plan = SendPlan {
        duration: o.duration,
        size: o.size,
        budget: u64::MAX,
        batch: Duration::from_millis(200),
        keep: true,
    };
    let mut last: Vec<Sample> = vec![Sample::default(); n];
    let out = transfer::send(streams, &plan, stop, |i, v| {
        if let Some(x) = v.last() {
            last[i as usize] = *x;
        }
        live.bytes
            .store(last.iter().map(|s| s.bytes_acked).sum(), Ordering::Relaxed);
        live.update(&last);
        true
    });
    if out.stopped {
        if let Some(sig) = cclab_sys::interrupted() {
            return Err(RemoteError::Interrupted(sig));
        }
    }
    let done = match s.conn.recv(ANSWER + Duration::from_secs(10))? {
        Msg::RunDone {
            run: r,
            streams: done,
            note,
        } if r == run && done.len() == n => {
            if !note.is_empty() && o.progress {
                eprintln!("cclab perf: server: {}", escape(&note));
            }
            done
        }
        Msg::RunDone { streams, .. } => {
            return Err(RemoteError::Protocol(format!(
                "the server reported {} streams of {n}",
                streams.len()
            )))
        }
        m => return Err(refused(m, "RunDone")),
    };
    Ok(out
        .streams
        .into_iter()
        .zip(done)
        .map(|(st, d)| FlowMeasure {
            cc: st.cc,
            delivered: d.bytes,
            active_ns: d.elapsed_ns,
            size: o.size,
            samples: st.samples,
        })
        .collect())
}
