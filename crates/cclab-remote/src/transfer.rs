//! The data of a run: the sending side writes on every stream (a thread each) while the
//! calling thread samples TCP_INFO every 10 ms; the receiving side reads and counts (a thread
//! each). Both stop at their deadline, at a byte budget, or on a stop flag / SIGINT.

use crate::protocol::Sample;
use crate::sampler;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes per write and per read.
const CHUNK: usize = 256 * 1024;
/// How long the sender keeps sampling after its last write while data is unacknowledged.
const DRAIN: Duration = Duration::from_secs(5);

/// What the sending side does.
#[derive(Clone, Debug)]
pub struct SendPlan {
    /// Run length (also the bound of a sized run).
    pub duration: Duration,
    /// Bytes per stream; `None`: write until the duration is over.
    pub size: Option<u64>,
    /// Bytes all streams together may write (a per-client byte limit).
    pub budget: u64,
    /// How often sample batches are handed to `on_batch`.
    pub batch: Duration,
    /// Keep every sample (the client, which builds the results) or only the last.
    pub keep: bool,
}

/// One stream of a run, as its sender saw it.
#[derive(Clone, Debug, Default)]
pub struct StreamSent {
    pub bytes: u64,
    /// From the start to the last write, ns.
    pub elapsed_ns: u64,
    /// Every sample (with `keep`), else the last one.
    pub samples: Vec<Sample>,
    pub cc: String,
    /// Wrote its whole size (sized runs).
    pub completed: bool,
}

#[derive(Debug, Default)]
pub struct SendOutcome {
    pub streams: Vec<StreamSent>,
    /// The byte budget ran out before the run was over.
    pub budget_hit: bool,
    /// The stop flag or a signal ended the run.
    pub stopped: bool,
    /// A stream broke before its end (the receiver closed or reset it).
    pub broken: bool,
}

fn stop_now(stop: &AtomicBool) -> bool {
    stop.load(Ordering::Relaxed) || cclab_sys::interrupted().is_some()
}

/// Send on `streams` as `plan` says; `on_batch(stream, samples)` gets the new samples of
/// each stream every `plan.batch` and at the end (returning false stops the run).
pub fn send(
    streams: Vec<TcpStream>,
    plan: &SendPlan,
    stop: &Arc<AtomicBool>,
    mut on_batch: impl FnMut(u16, &[Sample]) -> bool,
) -> SendOutcome {
    let n = streams.len();
    let t0 = Instant::now();
    let deadline = t0 + plan.duration;
    let budget = Arc::new(AtomicU64::new(plan.budget));
    let budget_hit = Arc::new(AtomicBool::new(false));
    let halt = Arc::new(AtomicBool::new(false));
    let broken = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for s in &streams {
        let s = match s.try_clone() {
            Ok(s) => s,
            Err(_) => continue,
        };
        let (budget, budget_hit, halt, stop, broken) = (
            budget.clone(),
            budget_hit.clone(),
            halt.clone(),
            stop.clone(),
            broken.clone(),
        );
        let size = plan.size;
        writers.push(std::thread::spawn(move || {
            let flags = Flags {
                budget_hit: &budget_hit,
                halt: &halt,
                stop: &stop,
                broken: &broken,
            };
            write_stream(s, t0, deadline, size, &budget, flags)
        }));
    }
    let fds: Vec<i32> = streams.iter().map(|s| s.as_raw_fd()).collect();
    let mut all: Vec<Vec<Sample>> = vec![Vec::new(); n];
    let mut pending: Vec<Vec<Sample>> = vec![Vec::new(); n];
    let mut last: Vec<Sample> = vec![Sample::default(); n];
    let mut next = t0;
    let mut next_batch = t0 + plan.batch;
    let mut writing_done_at: Option<Instant> = None;
    let mut stopped = false;
    loop {
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        next += Duration::from_nanos(sampler::SAMPLE_NS);
        let now = Instant::now();
        if next < now {
            // Fell behind (a busy machine): skip the missed ticks rather than burst.
            next = now + Duration::from_nanos(sampler::SAMPLE_NS);
        }
        let t_us = now.duration_since(t0).as_micros().min(u32::MAX as u128) as u32;
        for (i, &fd) in fds.iter().enumerate() {
            if let Some(s) = sampler::sample(fd, t_us) {
                last[i] = s;
                pending[i].push(s);
                if plan.keep {
                    all[i].push(s);
                }
            }
        }
        if stop_now(stop) {
            stopped = true;
            halt.store(true, Ordering::SeqCst);
        }
        if now >= next_batch {
            next_batch += plan.batch;
            if !flush(&mut pending, &mut on_batch) {
                halt.store(true, Ordering::SeqCst);
                stopped = true;
            }
        }
        if writing_done_at.is_none() && writers.iter().all(|w| w.is_finished()) {
            writing_done_at = Some(now);
        }
        if let Some(done) = writing_done_at {
            // Sample on until every stream's data is acknowledged (its tail counts too).
            let drained = fds
                .iter()
                .all(|&fd| matches!(sampler::unacked(fd), None | Some((0, 0))));
            if drained || now.duration_since(done) > DRAIN || stopped {
                break;
            }
        }
    }
    flush(&mut pending, &mut on_batch);
    let mut out = SendOutcome {
        budget_hit: budget_hit.load(Ordering::SeqCst),
        stopped,
        broken: broken.load(Ordering::SeqCst),
        ..Default::default()
    };
    for (i, w) in writers.into_iter().enumerate() {
        let (bytes, elapsed_ns, completed) = w.join().unwrap_or((0, 0, false));
        out.streams.push(StreamSent {
            bytes,
            elapsed_ns,
            samples: if plan.keep {
                std::mem::take(&mut all[i])
            } else {
                vec![last[i]]
            },
            cc: sampler::cc_of(fds[i]),
            completed,
        });
    }
    out
}

/// Hand every stream's pending samples to `on_batch` (in frames of at most MAX_SAMPLES).
fn flush(pending: &mut [Vec<Sample>], on_batch: &mut impl FnMut(u16, &[Sample]) -> bool) -> bool {
    let mut ok = true;
    for (i, p) in pending.iter_mut().enumerate() {
        for c in p.chunks(crate::protocol::MAX_SAMPLES) {
            ok &= on_batch(i as u16, c);
        }
        p.clear();
    }
    ok
}

/// What a writer shares with the run.
struct Flags<'a> {
    budget_hit: &'a AtomicBool,
    halt: &'a AtomicBool,
    stop: &'a AtomicBool,
    broken: &'a AtomicBool,
}

fn write_stream(
    mut s: TcpStream,
    t0: Instant,
    deadline: Instant,
    size: Option<u64>,
    budget: &AtomicU64,
    f: Flags,
) -> (u64, u64, bool) {
    let buf = vec![0u8; CHUNK];
    let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
    let mut written = 0u64;
    let mut last = Instant::now();
    let mut completed = false;
    loop {
        if f.halt.load(Ordering::Relaxed) || stop_now(f.stop) || Instant::now() >= deadline {
            break;
        }
        let want = match size {
            Some(sz) if written >= sz => {
                completed = true;
                break;
            }
            Some(sz) => (sz - written).min(CHUNK as u64),
            None => CHUNK as u64,
        };
        // Reserve from the budget first: no stream writes past the client's byte limit.
        let got = match budget.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| {
            (b > 0).then(|| b - b.min(want))
        }) {
            Ok(b) => b.min(want),
            Err(_) => {
                f.budget_hit.store(true, Ordering::SeqCst);
                break;
            }
        };
        match s.write(&buf[..got as usize]) {
            Ok(k) => {
                written += k as u64;
                last = Instant::now();
                budget.fetch_add(got - k as u64, Ordering::SeqCst);
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut
                    || e.kind() == std::io::ErrorKind::Interrupted =>
            {
                budget.fetch_add(got, Ordering::SeqCst);
            }
            Err(_) => {
                budget.fetch_add(got, Ordering::SeqCst);
                f.broken.store(true, Ordering::SeqCst);
                break;
            }
        }
    }
    let _ = s.shutdown(Shutdown::Write);
    (
        written,
        last.saturating_duration_since(t0).as_nanos() as u64,
        completed,
    )
}

/// One stream of a run, as its receiver saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamRecv {
    pub bytes: u64,
    /// From the start to the last byte read, ns.
    pub last_ns: u64,
    /// The sender closed the stream (its data all arrived).
    pub eof: bool,
}

/// Read every stream until its sender closes it, `deadline`, the byte `budget` (then the
/// stream is closed) or a stop; `progress` counts the bytes of all streams as they arrive.
pub fn receive(
    streams: Vec<TcpStream>,
    t0: Instant,
    deadline: Instant,
    budget: u64,
    stop: &Arc<AtomicBool>,
    progress: Option<Arc<AtomicU64>>,
) -> (Vec<StreamRecv>, bool) {
    let budget = Arc::new(AtomicU64::new(budget));
    let hit = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = streams
        .into_iter()
        .map(|mut s| {
            let (budget, hit, stop, progress) =
                (budget.clone(), hit.clone(), stop.clone(), progress.clone());
            std::thread::spawn(move || {
                let mut buf = vec![0u8; CHUNK];
                let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
                let mut r = StreamRecv::default();
                loop {
                    if stop_now(&stop) || Instant::now() >= deadline {
                        break;
                    }
                    match s.read(&mut buf) {
                        Ok(0) => {
                            r.eof = true;
                            break;
                        }
                        Ok(k) => {
                            r.bytes += k as u64;
                            r.last_ns = t0.elapsed().as_nanos() as u64;
                            if let Some(p) = &progress {
                                p.fetch_add(k as u64, Ordering::Relaxed);
                            }
                            if budget
                                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| {
                                    b.checked_sub(k as u64)
                                })
                                .is_err()
                            {
                                hit.store(true, Ordering::SeqCst);
                                break;
                            }
                        }
                        Err(e)
                            if e.kind() == std::io::ErrorKind::WouldBlock
                                || e.kind() == std::io::ErrorKind::TimedOut
                                || e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
                let _ = s.shutdown(Shutdown::Both);
                r
            })
        })
        .collect();
    let out = readers
        .into_iter()
        .map(|h| h.join().unwrap_or_default())
        .collect();
    (out, hit.load(Ordering::SeqCst))
}
