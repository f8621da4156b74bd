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

use super::{
    tcp_cong_avoid_ai, tcp_slow_start, AckSample, CaEvent, CaState, CongestionControl, Controller,
    Param, ParamKind, ParamValue, Params, TcpState,
};

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

/// Scale of `beta` (`BICTCP_BETA_SCALE`).
const BETA_SCALE: u32 = 1024;
/// Multiplicative decrease: 717/1024 ~ 0.7.
const BETA: u32 = 717;
/// C scaled by 1024: 41/1024 ~ 0.04, times the 100 ms reference RTT factor of 10 gives 0.4.
const BIC_SCALE: u32 = 41;
/// The curve's time unit is 1/2^BICTCP_HZ seconds.
const BICTCP_HZ: u32 = 10;

/// Reno-emulation step, in ACKed packets per cwnd, scaled by 8:
/// `8 (1024 + beta) / 3 / (1024 - beta)` = 15 with integer division, as Linux computes it.
const BETA_SCALE_FRIENDLY: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// `c / rtt` scaled by 1024: `bic_scale * 10` = 410.
const CUBE_RTT_SCALE: u32 = BIC_SCALE * 10;
/// `2^(10 + 3 * BICTCP_HZ) / (bic_scale * 10)`: turns `W_max - cwnd` into `K^3` in
/// (1/1024 s)^3 units.
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE as u64 * 10);

/// `hystart_detect` bit: ACK-train detection.
pub const HYSTART_ACK_TRAIN: u8 = 0x1;
/// `hystart_detect` bit: delay-increase detection.
pub const HYSTART_DELAY: u8 = 0x2;
/// RTT samples per round before the delay test may fire.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Lower clamp of the delay-increase threshold, us.
const HYSTART_DELAY_MIN: u32 = 4000;
/// Upper clamp of the delay-increase threshold, us.
const HYSTART_DELAY_MAX: u32 = 16000;

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

/// 1-based index of the most significant set bit, 0 for 0 (kernel `fls64`).
fn fls64(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// Approximate cube root with Linux's table-plus-one-Newton-step method (see module docs).
///
/// `CBRT_TABLE[i]` is roughly `cbrt(i * 2^18) - 1`, i.e. the cube root of a 6-bit value in
/// 1/64 units, hand-tuned in the kernel; the values are taken unchanged.
pub fn cubic_root(a: u64) -> u32 {
    const CBRT_TABLE: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, //
        123, 129, 134, 138, 143, 147, 151, 156, //
        157, 161, 164, 168, 170, 173, 176, 179, //
        181, 185, 187, 190, 192, 194, 197, 199, //
        200, 202, 204, 206, 209, 211, 213, 215, //
        217, 219, 221, 222, 224, 225, 227, 229, //
        231, 232, 234, 236, 237, 239, 240, 242, //
        244, 245, 246, 248, 250, 251, 252, 254, //
    ];

    let bits = fls64(a);
    if bits < 7 {
        // Small inputs (< 64) come straight from the table, rounded.
        return (CBRT_TABLE[a as usize] as u32 + 35) >> 6;
    }
    // `b` ~ bits/3 - 1: the cube root has about `b` more bits than the table entry, and
    // `a >> 3b` leaves a 6-bit index into the table.
    let b = ((bits * 84) >> 8) - 1;
    let idx = (a >> (b * 3)) as usize;
    let x0 = ((CBRT_TABLE[idx] as u32 + 10) << b) >> 6;

    // One Newton step for x^3 = a, using x*(x-1) in place of x^2 (as the kernel does), and
    // 341/1024 in place of 1/3. x0 >= 2 here, so the divisor is never 0.
    let x0 = x0 as u64;
    let q = (a / (x0 * (x0 - 1))) as u32;
    let x = (2 * x0 as u32).wrapping_add(q);
    x.wrapping_mul(341) >> 10
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

    /// `bictcp_hystart_reset`: start a new HyStart round ending at the current snd_nxt.
    fn hystart_reset(&mut self, tp: &TcpState) {
        let now = tp.now_us as u32;
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: recompute `cnt` for the current cwnd. `now` is in jiffies.
    fn update(&mut self, cwnd: u32, acked: u32, now: u32, hz: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);

        // Same cwnd and evaluated less than ~31 ms ago: keep the old cnt (and do not even
        // advance the Reno estimate; its ACK count keeps accumulating).
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }

        // The curve itself moves at most once per jiffy; within the same jiffy only the
        // Reno estimate is refreshed. A window reduction clears epoch_start, which forces
        // a fresh evaluation.
        if !(self.epoch_start != 0 && now == self.last_time) {
            self.update_cubic(cwnd, acked, now, hz);
        }

        if self.tcp_friendliness {
            self.update_friendly(cwnd);
        }

        // Never faster than +1 per 2 ACKed packets (x1.5 per RTT).
        self.cnt = self.cnt.max(2);
    }

    /// The cubic-curve part of `bictcp_update`.
    fn update_cubic(&mut self, cwnd: u32, acked: u32, now: u32, hz: u32) {
        self.last_cwnd = cwnd;
        self.last_time = now;

        if self.epoch_start == 0 {
            // New epoch: anchor the curve here.
            self.epoch_start = now;
            self.ack_cnt = acked;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                // Already at or beyond W_max: start on the convex side right away.
                self.bic_k = 0;
                self.bic_origin_point = cwnd;
            } else {
                // K^3 = (W_max - cwnd) / C, in (1/1024 s)^3.
                self.bic_k =
                    cubic_root(CUBE_FACTOR.wrapping_mul((self.last_max_cwnd - cwnd) as u64));
                self.bic_origin_point = self.last_max_cwnd;
            }
        }

        // Elapsed time in the epoch (signed in the kernel, then widened), evaluated one
        // delay_min ahead, converted from jiffies to 1/1024 s.
        let elapsed = (now.wrapping_sub(self.epoch_start) as i32) as i64 as u64;
        let t =
            (elapsed.wrapping_add(usecs_to_jiffies(self.delay_min, hz)) << BICTCP_HZ) / hz as u64;

        let k = self.bic_k as u64;
        let offs = k.abs_diff(t);

        // C * (t - K)^3 in packets.
        let delta = ((CUBE_RTT_SCALE as u64)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            >> (10 + 3 * BICTCP_HZ)) as u32;
        let bic_target = if t < k {
            self.bic_origin_point.wrapping_sub(delta)
        } else {
            self.bic_origin_point.wrapping_add(delta)
        };

        // Spread the distance to the target over one window of ACKs; if the target is not
        // above cwnd, creep (+1 per 100 windows).
        self.cnt = if bic_target > cwnd {
            cwnd / (bic_target - cwnd)
        } else {
            100u32.wrapping_mul(cwnd)
        };

        // No loss seen yet (W_max unknown): grow at least 5% per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// The TCP-friendly (Reno emulation) part of `bictcp_update`.
    fn update_friendly(&mut self, cwnd: u32) {
        // The estimate gains one packet per `cwnd * 15 / 8` ACKed packets. Linux loops
        // "while ack_cnt > step"; this is the same in closed form.
        let step = cwnd.wrapping_mul(BETA_SCALE_FRIENDLY) >> 3;
        if step > 0 && self.ack_cnt > step {
            let n = (self.ack_cnt - 1) / step;
            self.ack_cnt -= n * step;
            self.tcp_cwnd = self.tcp_cwnd.wrapping_add(n);
        }

        if self.tcp_cwnd > cwnd {
            // Reno would be ahead: grow at least fast enough to close the gap in one window.
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
    }

    /// `hystart_ack_delay`: allowance for TSO/GRO batching in the ACK-train test, us:
    /// the time to send 4 GSO-sized bursts at the pacing rate, capped at 1 ms.
    fn hystart_ack_delay(&self, tp: &TcpState) -> u32 {
        let rate = tp.pacing_rate;
        if rate == 0 {
            return 0;
        }
        (self.gso_max_size as u64 * 4 * USEC_PER_SEC / rate).min(USEC_PER_MSEC) as u32
    }

    /// `hystart_update`: called in slow start with an RTT sample `delay` (us).
    fn hystart_update(&mut self, tp: &mut TcpState, delay: u32) {
        // A segment sent after the round began has been ACKed: a new round starts.
        if tp.snd_una > self.end_seq {
            self.hystart_reset(tp);
        }

        if tp.snd_cwnd < self.hystart_low_window {
            return;
        }

        if self.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = tp.now_us as u32;
            // Only closely spaced ACKs extend the train.
            if (now.wrapping_sub(self.last_ack) as i32) <= self.hystart_ack_delta_us as i32 {
                self.last_ack = now;

                let mut threshold = self.delay_min.wrapping_add(self.hystart_ack_delay(tp));
                // Unpaced senders emit the window in a burst, so a train lasting half the
                // minimum RTT already means the pipe is full. With fq pacing the burst can
                // itself stretch to RTT/2, so the full delay_min is used.
                if !self.fq_pacing && !tp.paced {
                    threshold >>= 1;
                }

                // The kernel compares an s32 against a u32 here, which C performs unsigned.
                if now.wrapping_sub(self.round_start) > threshold {
                    self.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }

        if self.hystart_detect & HYSTART_DELAY != 0 {
            // Track this round's minimum RTT; judge it only once enough samples are in.
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if self.curr_rtt > self.delay_min.wrapping_add(thresh) {
                    self.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;

    const MS: u64 = 1_000_000;
    /// Start tests at 1 s so nothing sits at time 0.
    const T0: u64 = 1_000 * MS;

    fn set_now(tp: &mut TcpState, ns: u64) {
        tp.now_ns = ns;
        tp.now_us = ns / 1000;
    }

    /// A flow in congestion avoidance: `cwnd` packets, cwnd-limited.
    fn ca_flow(cwnd: u32) -> TcpState {
        let mut tp = TcpState::new(1448, cwnd);
        tp.snd_ssthresh = cwnd;
        tp.is_cwnd_limited = true;
        tp.max_packets_out = cwnd;
        set_now(&mut tp, T0);
        tp
    }

    /// The sender's part of a loss: ssthresh, then (after recovery) cwnd = ssthresh.
    fn loss(cc: &mut dyn CongestionControl, tp: &mut TcpState) -> u32 {
        let ss = cc.ssthresh(tp);
        tp.snd_ssthresh = ss;
        tp.snd_cwnd = ss;
        tp.snd_cwnd_cnt = 0;
        ss
    }

    /// Drive `dur_ns` of ACK clocking at a fixed RTT: each round, cwnd single-packet ACKs
    /// evenly spaced over one RTT. Calls `pkts_acked` then `cong_avoid` per ACK (Linux order).
    /// Returns (time since start in s, cwnd after the ACK) for every ACK.
    fn run(
        cc: &mut dyn CongestionControl,
        tp: &mut TcpState,
        rtt_us: u64,
        dur_ns: u64,
        rtt_samples: bool,
    ) -> Vec<(f64, u32)> {
        let start = tp.now_ns;
        let mut now = start;
        let mut trace = Vec::new();
        while now - start < dur_ns {
            let n = tp.snd_cwnd as u64;
            tp.max_packets_out = tp.snd_cwnd;
            for i in 0..n {
                let t = now + (i + 1) * rtt_us * 1000 / n;
                set_now(tp, t);
                tp.snd_una += 1;
                tp.snd_nxt += 1;
                let s = AckSample {
                    pkts_acked: 1,
                    rtt_us: if rtt_samples { rtt_us as i64 } else { -1 },
                    in_flight: n as u32,
                };
                cc.pkts_acked(tp, &s);
                let una = tp.snd_una;
                cc.cong_avoid(tp, una, 1);
                trace.push(((t - start) as f64 / 1e9, tp.snd_cwnd));
            }
            now += rtt_us * 1000;
        }
        trace
    }

    fn first_time_at_least(trace: &[(f64, u32)], w: u32) -> f64 {
        trace
            .iter()
            .find(|&&(_, c)| c >= w)
            .map(|&(t, _)| t)
            .expect("level never reached")
    }

    fn cwnd_at(trace: &[(f64, u32)], t: f64) -> u32 {
        trace
            .iter()
            .take_while(|&&(tt, _)| tt <= t)
            .last()
            .unwrap()
            .1
    }

    #[test]
    fn constants_match_linux() {
        assert_eq!(BETA_SCALE_FRIENDLY, 15);
        assert_eq!(CUBE_RTT_SCALE, 410);
        assert_eq!(CUBE_FACTOR, 2_681_735_677);
        assert_eq!(jiffies32(0, 1000), 0xFFFB_6C20);
    }

    #[test]
    fn cubic_root_matches_kernel() {
        // Reference outputs of the kernel's cubic_root(), compiled in user space.
        let reference: [(u64, u32); 9] = [
            (0, 0),
            (1, 1),
            (7, 2),
            (8, 2),
            (63, 4),
            (64, 4),
            (1000, 10),
            (1 << 40, 10323),
            (u64::MAX, 2_641_850),
        ];
        for (a, r) in reference {
            assert_eq!(cubic_root(a), r, "a={a}");
        }
        // K (in 1/1024 s) for W_max - cwnd = d packets, as the kernel computes it.
        let k_ref: [(u64, u32); 7] = [
            (1, 1388),
            (12, 3179),
            (30, 4316),
            (300, 9294),
            (3000, 20033),
            (30_000, 43169),
            (300_000, 92967),
        ];
        for (d, k) in k_ref {
            assert_eq!(cubic_root(CUBE_FACTOR * d), k, "d={d}");
        }
        // Against the exact root: within ~1 for small inputs, and within 0.3% over the range
        // CUBIC uses (CUBE_FACTOR * d >= 2^31).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = x >> (i % 64);
            let r = cubic_root(a) as f64;
            let e = (a as f64).cbrt();
            assert!((r - e).abs() < 1.0 + 0.003 * e, "a={a} r={r} e={e}");
            if a >= 1 << 31 {
                assert!((r - e).abs() / e < 0.003, "a={a} r={r} e={e}");
            }
        }
        // K for 30 packets: cbrt(75) s = 4.217 s.
        assert!((cubic_root(CUBE_FACTOR * 30) as f64 / 1024.0 - 75f64.cbrt()).abs() < 0.01);
    }

    /// (5) ssthresh after loss = max(cwnd * 717 / 1024, 2).
    #[test]
    fn ssthresh_is_beta_times_cwnd_floor_two() {
        for cwnd in [1u32, 2, 3, 4, 10, 100, 1000, 12345] {
            let mut cc = Cubic::new();
            let tp = ca_flow(cwnd);
            let want = (cwnd * 717 / 1024).max(2);
            assert_eq!(cc.ssthresh(&tp), want, "cwnd={cwnd}");
        }
        let mut cc = Cubic::new();
        assert_eq!(cc.ssthresh(&ca_flow(100)), 70);
        assert_eq!(cc.ssthresh(&ca_flow(1000)), 700);
        assert_eq!(cc.ssthresh(&ca_flow(2)), 2);
    }

    /// (1) Loss at W_max = 100: cwnd 70, then back to W_max around K = cbrt(30 / 0.4) s.
    #[test]
    fn cubic_curve_returns_to_wmax_at_k() {
        let mut cc = Cubic::new();
        // Isolate the curve from the Reno-emulation floor.
        cc.tcp_friendliness = false;
        let mut tp = ca_flow(100);
        cc.init(&mut tp);
        tp.snd_ssthresh = 100;
        assert_eq!(loss(&mut cc, &mut tp), 70);
        assert_eq!(tp.snd_cwnd, 70);
        assert_eq!(cc.last_max_cwnd(), 100);

        let k = (100.0 * (1.0 - 717.0 / 1024.0) / 0.4f64).cbrt();
        let trace = run(&mut cc, &mut tp, 100_000, 9_000 * MS, true);
        assert_eq!(cc.delay_min_us(), 100_000);

        // The curve is point-symmetric about (K, W_max): the midpoint of the times it
        // crosses W_max - 10 and W_max + 10 estimates K.
        let t_lo = first_time_at_least(&trace, 90);
        let t_hi = first_time_at_least(&trace, 110);
        let k_est = (t_lo + t_hi) / 2.0;
        assert!(
            (k_est - k).abs() / k < 0.03,
            "K est {k_est:.3} s vs {k:.3} s"
        );
        // And each crossing sits where C (t - K)^3 = +-10 says it should.
        let d = (10.0 / 0.4f64).cbrt();
        assert!((t_lo - (k - d)).abs() < 0.25, "t_lo {t_lo}");
        assert!((t_hi - (k + d)).abs() < 0.25, "t_hi {t_hi}");
        // At K the window is on the plateau at W_max.
        let w_k = cwnd_at(&trace, k);
        assert!((99..=101).contains(&w_k), "cwnd at K = {w_k}");
        // Concave then convex: slower growth near the plateau than early on.
        let early = cwnd_at(&trace, 1.0) - 70;
        let plateau = cwnd_at(&trace, k + 0.5) - cwnd_at(&trace, k - 0.5);
        assert!(
            early >= 10 && plateau <= 2,
            "early {early}, plateau {plateau}"
        );
    }

    /// (2) Fast convergence: a loss below the previous W_max remembers a lower W_max.
    #[test]
    fn fast_convergence_lowers_wmax() {
        let mut cc = Cubic::new();
        let mut tp = ca_flow(100);
        cc.init(&mut tp);
        loss(&mut cc, &mut tp);
        assert_eq!(cc.last_max_cwnd(), 100);

        // Next loss at 80 < 100: W_max = 80 * (1 + 0.7) / 2 = 68, not 80.
        tp.snd_cwnd = 80;
        assert_eq!(loss(&mut cc, &mut tp), 56);
        assert_eq!(cc.last_max_cwnd(), 68);

        // The next epoch's curve is anchored at the lowered W_max.
        run(&mut cc, &mut tp, 100_000, 200 * MS, false);
        assert_eq!(cc.bic_origin_point, 68);
        assert_eq!(cc.bic_k, cubic_root(CUBE_FACTOR * 12));

        // A loss above the previous W_max keeps cwnd as W_max.
        tp.snd_cwnd = 90;
        loss(&mut cc, &mut tp);
        assert_eq!(cc.last_max_cwnd(), 90);

        // With fast convergence off, the loss point is kept as is.
        let mut cc = Cubic::new();
        cc.fast_convergence = false;
        let mut tp = ca_flow(100);
        loss(&mut cc, &mut tp);
        tp.snd_cwnd = 80;
        loss(&mut cc, &mut tp);
        assert_eq!(cc.last_max_cwnd(), 80);
    }

    /// (3) TCP-friendly region: at a small RTT the Reno emulation (AIMD with beta = 0.7 and
    /// alpha = 3(1-beta)/(1+beta) ~ 0.53 per RTT) drives cwnd, far above the cubic curve.
    #[test]
    fn tcp_friendly_region_grows_like_reno_emulation() {
        let rtt_us = 2_000;
        let rounds = 500.0; // 1 s
        let grow = |friendly: bool| {
            let mut cc = Cubic::new();
            cc.tcp_friendliness = friendly;
            let mut tp = ca_flow(20);
            cc.init(&mut tp);
            loss(&mut cc, &mut tp);
            assert_eq!(tp.snd_cwnd, 14);
            run(&mut cc, &mut tp, rtt_us, 1_000 * MS, true);
            tp.snd_cwnd
        };
        let with = grow(true);
        let without = grow(false);

        // Pure cubic: K = cbrt(6 / 0.4) = 2.47 s, so after 1 s it is still below W_max = 20.
        assert!(without <= 20, "cubic-only cwnd {without}");
        // Reno emulation: 14 + 0.53 * 500 = 279; allow lag from cnt updates and rounding.
        let alpha = 3.0 * (1.0 - 717.0 / 1024.0) / (1.0 + 717.0 / 1024.0);
        let reno_est = 14.0 + alpha * rounds;
        assert!(
            with as f64 >= 0.9 * reno_est,
            "friendly cwnd {with} vs Reno estimate {reno_est}"
        );
        assert!(
            with as f64 <= 1.1 * reno_est,
            "friendly cwnd {with} vs Reno estimate {reno_est}"
        );

        // Over the same ACK stream, a real Reno flow restarting from the same window grows
        // by ~1 per RTT: CUBIC's emulated-Reno rate is about half of that, by design.
        let mut reno = Reno::new();
        let mut tp = ca_flow(14);
        run(&mut reno, &mut tp, rtt_us, 1_000 * MS, false);
        assert!(tp.snd_cwnd > with, "reno {} cubic {with}", tp.snd_cwnd);
    }

    /// Set up a slow-start flow for HyStart tests: cwnd fixed, one round of `cwnd` ACKs.
    fn hystart_flow(cwnd: u32) -> (Cubic, TcpState) {
        let mut tp = TcpState::new(1448, cwnd);
        set_now(&mut tp, T0);
        tp.snd_nxt = cwnd as u64;
        let mut cc = Cubic::new();
        cc.init(&mut tp);
        (cc, tp)
    }

    /// Deliver `n` ACKs `spacing_us` apart, each with RTT `rtt_us`. New data is sent as each
    /// ACK arrives, so snd_nxt stays cwnd ahead of snd_una.
    fn acks(cc: &mut Cubic, tp: &mut TcpState, n: u32, spacing_us: u64, rtt_us: i64) {
        for _ in 0..n {
            let t = tp.now_ns + spacing_us * 1000;
            set_now(tp, t);
            tp.snd_una += 1;
            let s = AckSample {
                pkts_acked: 1,
                rtt_us,
                in_flight: tp.snd_cwnd,
            };
            cc.pkts_acked(tp, &s);
            tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64;
        }
    }

    /// (4) HyStart delay detection.
    #[test]
    fn hystart_delay_exits_slow_start() {
        // ACKs 5 ms apart: never an ACK train, so only the delay test can fire.
        let (mut cc, mut tp) = hystart_flow(20);
        // Round 1: base RTT 10 ms.
        acks(&mut cc, &mut tp, 20, 5000, 10_000);
        assert_eq!(cc.delay_min_us(), 10_000);
        assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
        // Round 2: RTT 15 ms, above delay_min + clamp(10000/8, 4000, 16000) = 14 ms.
        // The first HYSTART_MIN_SAMPLES samples only count...
        acks(&mut cc, &mut tp, 8, 5000, 15_000);
        assert!(!cc.hystart_found());
        assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
        // ...and the next one triggers.
        acks(&mut cc, &mut tp, 1, 5000, 15_000);
        assert!(cc.hystart_found());
        assert_eq!(tp.snd_ssthresh, 20);
        assert!(!tp.in_slow_start());
    }

    #[test]
    fn hystart_delay_needs_rise_above_threshold() {
        // A rise of 3.9 ms stays under the 4 ms floor of the threshold.
        let (mut cc, mut tp) = hystart_flow(20);
        acks(&mut cc, &mut tp, 20, 5000, 10_000);
        acks(&mut cc, &mut tp, 40, 5000, 13_900);
        assert!(!cc.hystart_found());
        assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);

        // With a large base RTT the threshold is delay_min/8 (here 100 ms -> 12.5 ms).
        let (mut cc, mut tp) = hystart_flow(20);
        acks(&mut cc, &mut tp, 20, 5000, 100_000);
        acks(&mut cc, &mut tp, 40, 5000, 112_000);
        assert!(!cc.hystart_found());
        let (mut cc, mut tp) = hystart_flow(20);
        acks(&mut cc, &mut tp, 20, 5000, 100_000);
        acks(&mut cc, &mut tp, 40, 5000, 113_000);
        assert!(cc.hystart_found());
    }

    #[test]
    fn hystart_inactive_below_low_window() {
        let (mut cc, mut tp) = hystart_flow(15);
        acks(&mut cc, &mut tp, 15, 5000, 10_000);
        acks(&mut cc, &mut tp, 60, 5000, 30_000);
        assert!(!cc.hystart_found());
        assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
        // Rounds are still tracked below the low window (6.13+ behaviour): the round that
        // started at the last reset ends at snd_nxt then.
        assert!(cc.end_seq > 15);
    }

    #[test]
    fn hystart_ack_train_exits_slow_start() {
        let (mut cc, mut tp) = hystart_flow(200);
        // Round 1 with spaced ACKs establishes delay_min = 10 ms.
        acks(&mut cc, &mut tp, 200, 5000, 10_000);
        assert!(!cc.hystart_found());
        // Round 2: a dense train (100 us apart) at constant RTT. Without pacing the
        // threshold is delay_min / 2 = 5 ms after the round start.
        // The first ACK of the round restarts it; the train must then last > 5000 us.
        acks(&mut cc, &mut tp, 51, 100, 10_000);
        assert!(!cc.hystart_found(), "fired too early");
        acks(&mut cc, &mut tp, 1, 100, 10_000);
        assert!(cc.hystart_found());
        assert_eq!(tp.snd_ssthresh, 200);

        // With fq pacing the threshold is the full delay_min (plus the GSO allowance).
        let (mut cc, mut tp) = hystart_flow(200);
        cc.fq_pacing = true;
        tp.pacing_rate = 1_000_000_000; // 65536*4 B at 1 GB/s = 262 us allowance
        acks(&mut cc, &mut tp, 200, 5000, 10_000);
        // Threshold 10262 us: the 104th ACK of the round (at +10300 us) is the first past it.
        acks(&mut cc, &mut tp, 103, 100, 10_000);
        assert!(!cc.hystart_found());
        acks(&mut cc, &mut tp, 1, 100, 10_000);
        assert!(cc.hystart_found());

        // A sender that paces every connection (`SO_MAX_PACING_RATE`: `SK_PACING_NEEDED`)
        // keeps the full threshold too.
        let (mut cc, mut tp) = hystart_flow(200);
        tp.paced = true;
        tp.pacing_rate = 1_000_000_000;
        acks(&mut cc, &mut tp, 200, 5000, 10_000);
        acks(&mut cc, &mut tp, 103, 100, 10_000);
        assert!(!cc.hystart_found(), "halved although paced");
        acks(&mut cc, &mut tp, 1, 100, 10_000);
        assert!(cc.hystart_found());
    }

    #[test]
    fn ack_delay_allowance() {
        let cc = Cubic::new();
        let mut tp = TcpState::new(1448, 10);
        assert_eq!(cc.hystart_ack_delay(&tp), 0);
        tp.pacing_rate = 1_000_000_000;
        assert_eq!(cc.hystart_ack_delay(&tp), 262);
        tp.pacing_rate = 1_000_000; // slow: capped at 1 ms
        assert_eq!(cc.hystart_ack_delay(&tp), 1000);
    }

    #[test]
    fn rto_resets_state_and_undo_is_reno() {
        let mut cc = Cubic::new();
        let mut tp = ca_flow(100);
        cc.init(&mut tp);
        loss(&mut cc, &mut tp);
        run(&mut cc, &mut tp, 100_000, 2_000 * MS, true);
        assert!(cc.epoch_start != 0 && cc.delay_min_us() > 0);
        cc.found = true;
        tp.snd_nxt = 5000;
        cc.set_state(&mut tp, CaState::Loss);
        assert_eq!(cc.last_max_cwnd(), 0);
        assert_eq!(cc.epoch_start, 0);
        assert_eq!(cc.delay_min_us(), 0);
        assert!(!cc.hystart_found());
        assert_eq!(cc.end_seq, 5000);
        // Other transitions leave state alone.
        cc.last_max_cwnd = 42;
        cc.set_state(&mut tp, CaState::Recovery);
        assert_eq!(cc.last_max_cwnd(), 42);
    }

    #[test]
    fn tx_start_after_idle_shifts_epoch() {
        let mut cc = Cubic::new();
        let mut tp = ca_flow(100);
        cc.init(&mut tp);
        loss(&mut cc, &mut tp);
        run(&mut cc, &mut tp, 100_000, 500 * MS, false);
        let e0 = cc.epoch_start;
        assert_ne!(e0, 0);
        // Last send just now, then 300 ms of idle before the next transmission.
        tp.lsndtime_ns = tp.now_ns;
        let resume = tp.now_ns + 300 * MS;
        set_now(&mut tp, resume);
        cc.cwnd_event(&mut tp, CaEvent::TxStart);
        // 300 ms of jiffies (75 at HZ = 250).
        let idle = 300 * tp.hz / 1000;
        assert_eq!(cc.epoch_start, e0.wrapping_add(idle));
        // Other events do nothing.
        cc.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!(cc.epoch_start, e0.wrapping_add(idle));
        // The shift never moves the epoch past now.
        let mut cc2 = cc.clone();
        cc2.epoch_start = jiffies32(tp.now_ns, tp.hz) - 5;
        tp.lsndtime_ns = tp.now_ns - 100 * MS;
        cc2.cwnd_event(&mut tp, CaEvent::TxStart);
        assert_eq!(cc2.epoch_start, jiffies32(tp.now_ns, tp.hz));
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_and_rtt_samples_gated() {
        let mut cc = Cubic::new();
        let mut tp = ca_flow(50);
        cc.init(&mut tp);
        tp.is_cwnd_limited = false;
        cc.cong_avoid(&mut tp, 0, 100);
        assert_eq!(tp.snd_cwnd, 50);
        // Within 1 s of an epoch start, RTT samples are ignored.
        tp.is_cwnd_limited = true;
        loss(&mut cc, &mut tp);
        cc.cong_avoid(&mut tp, 0, 1);
        assert_ne!(cc.epoch_start, 0);
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 5000,
                in_flight: 30,
            },
        );
        assert_eq!(cc.delay_min_us(), 0);
        let later = tp.now_ns + 1_001 * MS;
        set_now(&mut tp, later);
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 5000,
                in_flight: 30,
            },
        );
        assert_eq!(cc.delay_min_us(), 5000);
        // rtt -1: no sample; rtt 0 counts as 1 us.
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: -1,
                in_flight: 30,
            },
        );
        assert_eq!(cc.delay_min_us(), 5000);
        cc.pkts_acked(
            &mut tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us: 0,
                in_flight: 30,
            },
        );
        assert_eq!(cc.delay_min_us(), 1);
    }

    #[test]
    fn slow_start_before_first_loss_then_5_percent_floor() {
        // Without HyStart firing (spaced ACKs, constant RTT) slow start doubles per RTT;
        // past ssthresh with no W_max yet, cnt is capped at 20 (>= 5% per RTT).
        let mut cc = Cubic::new();
        let mut tp = TcpState::new(1448, 10);
        set_now(&mut tp, T0);
        tp.snd_ssthresh = 40;
        tp.is_cwnd_limited = true;
        cc.init(&mut tp);
        run(&mut cc, &mut tp, 100_000, 200 * MS, false);
        assert!(tp.snd_cwnd >= 40);
        let w = tp.snd_cwnd;
        run(&mut cc, &mut tp, 100_000, 1_000 * MS, false);
        // 10 RTTs at >= 5% each.
        assert!(
            tp.snd_cwnd as f64 >= w as f64 * 1.05f64.powi(9),
            "{w} -> {}",
            tp.snd_cwnd
        );
    }
}
