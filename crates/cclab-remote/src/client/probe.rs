//! The probe phase of `cclab perf`: four short single-stream runs in the measured direction,
//! before the measured ones, whose samples [`crate::fit`] turns into a path.
//!
//! 1. `rtt`: CUBIC paced at 1 Mbit/s for 1.5 s (no queue): the base RTT;
//! 2. `rate`: BBR (or the best controller the sender has) for its start-up (2 s or 20 RTT,
//!    the longer) and 4 s + 20 RTT more, 6 to 12 s in all: the bottleneck rate from what it
//!    delivers once past start-up;
//! 3. `loss`: BBR paced at 70% of that rate (no queue, so no congestion loss), about 40,000
//!    segments (3 to 8 s), then more parts until 100 losses (an interval of +-20%) or an
//!    upper bound too small to limit a loss-based controller on this path
//!    ([`fit::loss_read_enough`]), 30 s at most: retransmitted / sent segments, summed over
//!    the parts, read the random loss;
//! 4. `buffer`: CUBIC for 2 s + 20 RTT, 4 to 8 s: its queueing (RTT above the base) when
//!    it overflows the buffer.
//!
//! 15 to 55 s in all (the loss phase's length turns on the loss), a progress line per phase.

use super::{run_flows, PerfOptions, Session};
use crate::fit::{self, ProbeRun};
use crate::{sampler, RemoteError};
use std::time::Duration;

/// Pacing of the RTT phase, bytes/s (1 Mbit/s of packets).
const RTT_PACE: u64 = 125_000;
/// Share of the rate the loss phase paces at.
const LOSS_PACE_SHARE: f64 = 0.7;
/// Segments of the loss phase's first part (an interval of about +-30% at 0.1% loss).
const LOSS_SEGMENTS: f64 = 40_000.0;
/// Longest the loss phase goes on for a precise count, s.
const LOSS_BUDGET_S: f64 = 30.0;

fn clamp_s(s: f64, lo: f64, hi: f64) -> Duration {
    Duration::from_secs_f64(s.clamp(lo, hi))
}

/// The first of `prefs` the sender has, else its first controller.
fn pick(have: &[String], prefs: &[&str]) -> Option<String> {
    prefs
        .iter()
        .find(|p| have.iter().any(|h| h == *p))
        .map(|p| p.to_string())
        .or_else(|| have.first().cloned())
}

/// Run the probe phases; the runs and notes on what was substituted.
pub(crate) fn run(
    s: &mut Session,
    o: &PerfOptions,
) -> Result<(Vec<ProbeRun>, Vec<String>), RemoteError> {
    let have: Vec<String> = if o.reverse {
        sampler::available()
    } else {
        s.ccs.clone()
    };
    let mut notes = Vec::new();
    let cubic = pick(&have, &["cubic", "reno"])
        .ok_or_else(|| RemoteError::Refused("the sender lists no congestion control".into()))?;
    let bbr = pick(&have, &["bbr", "bbr3", "bbr2", "cubic"]).unwrap_or(cubic.clone());
    if bbr != "bbr" {
        notes.push(format!(
            "the sender has no bbr: the rate and loss phases ran {bbr} (the rate may read low)"
        ));
    }
    let max = Duration::from_millis(s.limits.max_duration_ms as u64);
    let say = |m: String| {
        if o.progress {
            eprintln!("cclab perf: probe {m}");
        }
    };
    let mut out: Vec<ProbeRun> = Vec::new();
    let phase = |s: &mut Session,
                 name: &str,
                 cc: &str,
                 d: Duration,
                 pace: u64|
     -> Result<ProbeRun, RemoteError> {
        // A paced phase is a sized transfer of the pace times its length (bounded at twice
        // that): bulk writes would fill the send buffer, whose paced drain would outlast it.
        let po = PerfOptions {
            ccs: vec![cc.to_string()],
            duration: if pace > 0 { 2 * d } else { d }.min(max),
            size: (pace > 0).then_some((pace as f64 * d.as_secs_f64()) as u64),
            parallel: 1,
            progress: false,
            repeat: 1,
            ..o.clone()
        };
        let mut flows = run_flows(s, &po, cc, pace)?;
        let f = flows.swap_remove(0);
        Ok(ProbeRun {
            phase: name.into(),
            cc: cc.into(),
            pace_bps: pace as f64 * 8.0,
            duration_s: d.as_secs_f64(),
            delivered: f.delivered,
            active_ns: f.active_ns,
            samples: f.samples,
        })
    };

    say(format!("1/4: base RTT ({cubic} paced at 1 Mbit/s, 1.5 s)"));
    let r = phase(s, "rtt", &cubic, Duration::from_millis(1500), RTT_PACE)?;
    let rtt = r.summary().min_rtt_ms / 1e3;
    say(format!("     lowest RTT {:.2} ms", rtt * 1e3));
    out.push(r);
    let rtt = if rtt > 0.0 { rtt } else { 0.1 };

    let (skip, window) = fit::rate_windows(rtt);
    let d = clamp_s(skip + 4.0 + 20.0 * rtt, 6.0, 12.0);
    say(format!(
        "2/4: bottleneck rate ({bbr}, {:.1} s)",
        d.as_secs_f64()
    ));
    let r = phase(s, "rate", &bbr, d, 0)?;
    let rate = fit::bottleneck_rate(&r.samples, skip, window, &fit::Pooled::default())
        .map(|e| e.value)
        .unwrap_or(0.0);
    say(format!("     {:.2} Mbit/s on the wire", rate / 1e6));
    out.push(r);
    if rate <= 0.0 {
        return Err(RemoteError::Io(
            "the rate probe delivered nothing; is the path up? (--no-probe skips the probe)".into(),
        ));
    }

    let pace = ((rate / 8.0 * LOSS_PACE_SHARE) as u64).clamp(RTT_PACE, crate::protocol::MAX_PACE);
    let per_s = pace as f64 / fit::PACKET;
    let bdp_pkts = rate / 8.0 * rtt / fit::PACKET;
    let mut d = clamp_s(LOSS_SEGMENTS / per_s, 3.0, 8.0);
    say(format!(
        "3/4: random loss ({bbr} paced at {:.1} Mbit/s, until {} losses, or too few to matter on this path, or {:.0} s)",
        pace as f64 * 8.0 / 1e6,
        fit::LOSS_TARGET,
        LOSS_BUDGET_S
    ));
    // In parts, each a fresh connection (the paced start keeps it queue-free), until the
    // count is precise or shown too small to matter, within the budget.
    let mut spent = 0.0f64;
    let part_max = (max.as_secs_f64() / 2.0).max(1.0);
    loop {
        out.push(phase(s, "loss", &bbr, d, pace)?);
        // Counted as the fit counts them: congestion bursts left out.
        let c = fit::loss_phase_count(&out);
        let (k, n) = (c.lost, c.sent);
        spent += d.as_secs_f64();
        say(format!(
            "     {k} retransmitted of {n} segments ({:.0} s){}",
            spent,
            if c.episodes > 0 {
                format!(
                    "; {} in {} congestion burst(s) left out",
                    c.episode_lost, c.episodes
                )
            } else {
                String::new()
            }
        ));
        let left = LOSS_BUDGET_S - spent;
        if fit::loss_read_enough(k, n, bdp_pkts) {
            break;
        }
        if left < 2.0 {
            notes.push(format!(
                "the loss phase ran its {LOSS_BUDGET_S:.0} s with {k} losses (fewer than {}): the loss interval is wide",
                fit::LOSS_TARGET
            ));
            break;
        }
        let want = fit::loss_segments_wanted(k, n) / per_s;
        let hi = left.min(part_max);
        d = clamp_s(want, 3.0_f64.min(hi), hi);
    }

    let d = clamp_s(2.0 + 20.0 * rtt, 4.0, 8.0);
    say(format!(
        "4/4: buffer ({cubic}'s queueing, {:.1} s)",
        d.as_secs_f64()
    ));
    let r = phase(s, "buffer", &cubic, d, 0)?;
    let sm = r.summary();
    say(format!(
        "     RTT up to {:.1} ms, {} retransmitted",
        sm.srtt_max_ms, sm.retransmits
    ));
    out.push(r);
    Ok((out, notes))
}
