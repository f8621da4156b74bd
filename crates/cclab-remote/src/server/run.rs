//! One run of a control session: the request checked against the limits and the client's
//! budget, its data connections awaited, the controller set, the bytes sent or received, and
//! what it moved counted.

use super::state::{Pending, State};
use crate::protocol::{code, Conn, Msg, StreamDone, SESSION_LEN};
use crate::sampler;
use crate::transfer::{self, SendPlan};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

pub(super) struct RunReq {
    pub(super) run: u32,
    pub(super) cc: String,
    pub(super) reverse: bool,
    pub(super) duration: Duration,
    pub(super) size: Option<u64>,
    pub(super) parallel: u16,
    /// Pacing cap of each sending socket, bytes/s (0: none; an upload's client sets its own).
    pub(super) pace: u64,
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
pub(super) fn serve_run(
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
