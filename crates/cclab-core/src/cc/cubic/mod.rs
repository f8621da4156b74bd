//! CUBIC with HyStart, ported from Linux `net/ipv4/tcp_cubic.c` (module version "2.3"), as in
//! mainline 6.17-rc. Older 6.x trees differ in one place: they test `hystart_low_window` in
//! `cubictcp_acked` before calling `hystart_update`, so HyStart rounds were not tracked below
//! that window; 6.17 tests it inside `hystart_update`, after the round-start check, and that
//! is what is done here.
//!
//! Each Linux hook maps onto one method here:
//!
//! | Linux                       | here                                           |
//! |-----------------------------|------------------------------------------------|
//! | `cubictcp_init`             | [`CongestionControl::init`]                    |
//! | `cubictcp_recalc_ssthresh`  | [`CongestionControl::ssthresh`]                |
//! | `cubictcp_cong_avoid`       | [`CongestionControl::cong_avoid`]              |
//! | `bictcp_update`             | `Cubic::update` (private)                      |
//! | `cubictcp_state`            | [`CongestionControl::set_state`]               |
//! | `cubictcp_cwnd_event`       | [`CongestionControl::cwnd_event`]              |
//! | `cubictcp_acked`            | [`CongestionControl::pkts_acked`]              |
//! | `hystart_update`            | `Cubic::hystart_update` (private)              |
//! | `hystart_ack_delay`         | `Cubic::hystart_ack_delay` (private)           |
//!
//! The hooks, the state and the clocks are in this file; the curve (`bictcp_update`, the
//! cube root and the folded constants) is in `curve.rs`, HyStart in `hystart.rs`, the tests
//! in `tests.rs`.
//!
//! # Model
//!
//! After a loss at window `W_max` the window is cut to `beta * W_max` (beta = 717/1024) and
//! then follows `W(t) = C (t - K)^3 + W_max` with C = 0.4 (`bic_scale` = 41/1024 scaled by
//! the 100 ms reference RTT folded into `cube_rtt_scale` = 410 and `cube_factor` =
//! 2^40 / 410) and `K = cbrt(W_max (1 - beta) / C)`. Time inside the curve is counted in
//! 1/1024 s units (`BICTCP_HZ` = 10). The curve is evaluated one `delay_min` ahead, so that
//! the window aims where the curve will be one RTT later. The per-ACK increment is expressed
//! as `cnt` (ACKed packets per +1 cwnd) and applied by [`tcp_cong_avoid_ai`].
//!
//! The TCP-friendly region runs a Reno emulation that grows by one packet per
//! `cwnd * beta_scale / 8` ACKed packets (`beta_scale` = 15, i.e. an AIMD flow with
//! alpha = 3(1-beta)/(1+beta) ~ 0.53 per RTT) and, if that estimate is above cwnd, caps `cnt`
//! so cwnd grows at least as fast as the estimate.
//!
//! HyStart (both ACK-train and delay detection, the Linux default `hystart_detect = 3`)
//! leaves slow start by setting `ssthresh = cwnd`.
//!
//! # Clocks and units
//!
//! - Linux `tcp_jiffies32` at the host's `CONFIG_HZ` (`TcpState::hz`, 250 by default):
//!   `now_ns / (1e9 / hz)`, plus Linux's boot offset `INITIAL_JIFFIES` (-300 s, wrapped to
//!   32 bits). The offset changes nothing except where
//!   the counter crosses 0: Linux uses `epoch_start == 0` to mean "no epoch", and without the
//!   offset every flow of the simulator (whose clock starts at 0) would hit that ambiguity in
//!   its first millisecond. With the offset it happens at simulated t = 300 s, as it does on a
//!   Linux host 5 minutes after boot. All jiffy arithmetic wraps like the kernel's `u32`/`s32`.
//! - `bictcp_clock_us()` (= `tp->tcp_mstamp`, truncated to `u32`): `tp.now_us as u32`.
//! - `tp->lsndtime` (jiffies in Linux): derived from `tp.lsndtime_ns` with the same mapping.
//! - Sequence numbers count segments (not bytes) and are 64-bit here, so HyStart's round
//!   end test `after(snd_una, end_seq)` is a plain `>`.
//!
//! # Cube root
//!
//! `cubic_root` is Linux's method, bit for bit: a 64-entry table of 8-bit cube roots (the
//! table values are reproduced as data) gives a first estimate from the top bits, followed by
//! a single Newton-Raphson step, with the division by 3 done as `* 341 >> 10`. It is not an
//! exact integer cube root (Linux quotes ~0.2% average error); it is kept so that `K` matches
//! the kernel's integer value.
//!
//! # Things this model lacks
//!
//! - `sk->sk_gso_max_size` (used by `hystart_ack_delay`): [`Cubic::gso_max_size`], default
//!   65536 bytes (`GSO_LEGACY_MAX_SIZE`, the usual device value without BIG TCP).
//! - `sk->sk_pacing_status`: `TcpState::paced` (the sender paces: `[hosts] pacing`, i.e.
//!   `SK_PACING_NEEDED`) or [`Cubic::fq_pacing`] (sch_fq, `SK_PACING_FQ`); either stops the
//!   ACK-train threshold from being halved. CUBIC itself does not request pacing.
//! - Module parameters are plain public fields with the Linux defaults. `beta` and
//!   `bic_scale` are constants here, because Linux folds them into `beta_scale`,
//!   `cube_rtt_scale` and `cube_factor` once at module load.

mod curve;
mod hystart;

#[cfg(test)]
mod tests;

use super::{
    tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaState, CongestionControl, Controller,
    Param, ParamKind, ParamValue, Params, TcpState,
};
pub use curve::cubic_root;
use curve::{BETA, BETA_SCALE};
pub use hystart::{HYSTART_ACK_TRAIN, HYSTART_DELAY};

/// CUBIC in the registry. Its parameters are Linux's module parameters of `tcp_cubic` (the
/// ones this model can vary; `beta` and `bic_scale` are folded into constants at module load),
/// with their defaults.
pub const CONTROLLER: Controller = Controller {
    name: "cubic",
    aliases: &[],
    title: "CUBIC",
    summary: "CUBIC with HyStart as Linux's net/ipv4/tcp_cubic.c",
    params: &[
        Param {
            name: "hystart",
            kind: ParamKind::Bool,
            default: ParamValue::Bool(true),
            unit: "",
            help: "leave slow start early on ACK trains or rising delay (module parameter hystart)",
        },
        Param {
            name: "hystart_detect",
            kind: ParamKind::Int { min: 0, max: 3 },
            default: ParamValue::Int(3),
            unit: "",
            help: "HyStart's signals: 1 ACK train, 2 delay increase, 3 both (hystart_detect)",
        },
        Param {
            name: "hystart_low_window",
            kind: ParamKind::Int {
                min: 1,
                max: 1_000_000,
            },
            default: ParamValue::Int(16),
            unit: "packets",
            help: "HyStart acts only from this cwnd on (hystart_low_window)",
        },
        Param {
            name: "hystart_ack_delta_us",
            kind: ParamKind::Int {
                min: 0,
                max: 1_000_000,
            },
            default: ParamValue::Int(2000),
            unit: "us",
            help: "largest ACK spacing that still counts as a train (hystart_ack_delta_us)",
        },
        Param {
            name: "fast_convergence",
            kind: ParamKind::Bool,
            default: ParamValue::Bool(true),
            unit: "",
            help: "release bandwidth faster when W_max shrinks (fast_convergence)",
        },
        Param {
            name: "tcp_friendliness",
            kind: ParamKind::Bool,
            default: ParamValue::Bool(true),
            unit: "",
            help: "grow at least as fast as Reno would (tcp_friendliness)",
        },
        Param {
            name: "initial_ssthresh",
            kind: ParamKind::Int {
                min: 0,
                max: 0x7fff_ffff,
            },
            default: ParamValue::Int(0),
            unit: "packets",
            help: "slow-start threshold at start when HyStart is off; 0 = none (initial_ssthresh)",
        },
    ],
    build,
};

fn build(p: &Params, _seed: u64) -> Box<dyn CongestionControl> {
    let mut c = Cubic::new();
    c.hystart = p.bool("hystart");
    c.hystart_detect = p.int("hystart_detect") as u8;
    c.hystart_low_window = p.int("hystart_low_window") as u32;
    c.hystart_ack_delta_us = p.int("hystart_ack_delta_us") as u32;
    c.fast_convergence = p.bool("fast_convergence");
    c.tcp_friendliness = p.bool("tcp_friendliness");
    c.initial_ssthresh = p.int("initial_ssthresh") as u32;
    Box::new(c)
}

const USEC_PER_MSEC: u64 = 1000;
const USEC_PER_SEC: u64 = 1_000_000;

/// `tcp_jiffies32` for a time in ns, with Linux's boot offset `INITIAL_JIFFIES`
/// (`(u32)(-300 * HZ)`, see the module docs).
fn jiffies32(ns: u64, hz: u32) -> u32 {
    ((ns / (1_000_000_000 / hz as u64)) as u32).wrapping_add((-300i64 * hz as i64) as u32)
}

/// `usecs_to_jiffies()`: rounds up to whole jiffies.
fn usecs_to_jiffies(us: u32, hz: u32) -> u64 {
    let us_per_jiffy = USEC_PER_SEC / hz as u64;
    (us as u64).div_ceil(us_per_jiffy)
}

/// Kernel `after(a, b)` on 32-bit wrapping counters: `a` is later than `b`.
fn after32(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// Linux CUBIC (`tcp_cubic.c`) with HyStart.
#[derive(Debug, Clone)]
pub struct Cubic {
    // ---- Tunables: Linux module parameters, with their defaults. ----
    /// `fast_convergence` (default on).
    pub fast_convergence: bool,
    /// `tcp_friendliness` (default on).
    pub tcp_friendliness: bool,
    /// `hystart` (default on).
    pub hystart: bool,
    /// `hystart_detect`: bit set of [`HYSTART_ACK_TRAIN`] and [`HYSTART_DELAY`] (default both).
    pub hystart_detect: u8,
    /// `hystart_low_window`: HyStart only acts at or above this cwnd (default 16).
    pub hystart_low_window: u32,
    /// `hystart_ack_delta_us`: max ACK spacing that still counts as a train (default 2000).
    pub hystart_ack_delta_us: u32,
    /// `initial_ssthresh` (default 0 = leave ssthresh alone; only used with HyStart off).
    pub initial_ssthresh: u32,
    /// Stand-in for `sk->sk_gso_max_size`, bytes (default 65536).
    pub gso_max_size: u32,
    /// Stand-in for `sk->sk_pacing_status == SK_PACING_FQ` (default `false`, i.e. NONE).
    pub fq_pacing: bool,

    // ---- Per-connection state (`struct bictcp`). ----
    /// ACKed packets per +1 cwnd.
    cnt: u32,
    /// W_max: cwnd at the last loss (lowered by fast convergence).
    last_max_cwnd: u32,
    /// cwnd at the last curve evaluation.
    last_cwnd: u32,
    /// Jiffies at the last curve evaluation.
    last_time: u32,
    /// W_max of the current epoch's curve (its plateau).
    bic_origin_point: u32,
    /// K, in 1/1024 s.
    bic_k: u32,
    /// Minimum RTT seen, us (0 = none).
    delay_min: u32,
    /// Jiffies when the current epoch began (0 = no epoch).
    epoch_start: u32,
    /// Packets ACKed since the Reno estimate last moved.
    ack_cnt: u32,
    /// Reno-emulation window estimate.
    tcp_cwnd: u32,
    /// HyStart: RTT samples taken this round.
    sample_cnt: u8,
    /// HyStart: exit point found (stays set until an RTO).
    found: bool,
    /// HyStart: us clock at the start of this round.
    round_start: u32,
    /// HyStart: the round ends once snd_una passes this segment number.
    end_seq: u64,
    /// HyStart: us clock of the last ACK that belonged to the train.
    last_ack: u32,
    /// HyStart: minimum RTT of this round, us.
    curr_rtt: u32,
}

impl Default for Cubic {
    fn default() -> Self {
        Self::new()
    }
}

impl Cubic {
    pub fn new() -> Self {
        Cubic {
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            initial_ssthresh: 0,
            gso_max_size: 65536,
            fq_pacing: false,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            // As if a HyStart round had been started; `init` does that properly.
            curr_rtt: u32::MAX,
        }
    }

    /// Current W_max (`last_max_cwnd`), packets.
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// Minimum RTT seen by CUBIC (`delay_min`), us; 0 = none.
    pub fn delay_min_us(&self) -> u32 {
        self.delay_min
    }

    /// Whether HyStart has found its exit point.
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    /// `bictcp_reset`: clear the curve state and the HyStart exit flag. The HyStart round
    /// fields are left alone (Linux only clears the fields before `unused` here).
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = 0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, tp: &mut TcpState) {
        self.reset();
        if self.hystart {
            self.hystart_reset(tp);
        }
        if !self.hystart && self.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.initial_ssthresh;
        }
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        let cwnd = tp.snd_cwnd;
        // The current epoch ends; the next cong_avoid starts a new curve.
        self.epoch_start = 0;

        // Fast convergence: losing below the previous W_max suggests a competing flow took
        // bandwidth, so remember a W_max further down ((1 + beta)/2 of cwnd) to yield sooner.
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.fast_convergence {
            cwnd.wrapping_mul(BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };

        (cwnd.wrapping_mul(BETA) / BETA_SCALE).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, _ack: u64, mut acked: u32) {
        if !tp.is_cwnd_limited() {
            return;
        }
        if tp.in_slow_start() {
            acked = tcp_slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        let now = jiffies32(tp.now_ns, tp.hz);
        self.update(tp.snd_cwnd, acked, now, tp.hz);
        let cnt = self.cnt;
        tcp_cong_avoid_ai(tp, cnt, acked);
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        // An RTO forgets everything, including delay_min, and re-arms HyStart.
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        // Sending resumes after an idle (application-limited) period: slide the epoch forward
        // by the idle time so the curve does not jump ahead, but never into the future.
        let now = jiffies32(tp.now_ns, tp.hz);
        let idle = now.wrapping_sub(jiffies32(tp.lsndtime_ns, tp.hz)) as i32;
        if self.epoch_start != 0 && idle > 0 {
            self.epoch_start = self.epoch_start.wrapping_add(idle as u32);
            if after32(self.epoch_start, now) {
                self.epoch_start = now;
            }
        }
    }

    fn pkts_acked(&mut self, tp: &mut TcpState, sample: &AckSample) {
        // No usable RTT sample on this ACK.
        if sample.rtt_us < 0 {
            return;
        }

        // Ignore RTT samples in the first second of an epoch (just after a recovery).
        let now = jiffies32(tp.now_ns, tp.hz);
        if self.epoch_start != 0 && (now.wrapping_sub(self.epoch_start) as i32) < tp.hz as i32 {
            return;
        }

        let delay = match sample.rtt_us as u32 {
            0 => 1,
            d => d,
        };
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }

        if !self.found && tp.in_slow_start() && self.hystart {
            self.hystart_update(tp, delay);
        }
    }

    fn mode_name(&self) -> &'static str {
        "cubic"
    }
}
