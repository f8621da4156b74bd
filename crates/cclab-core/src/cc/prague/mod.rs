//! TCP Prague, the L4S scalable sender (RFC 9331), as the L4S team's
//! `net/ipv4/tcp_prague.c` (github.com/L4STeam/linux, module version 0.7, commit
//! 893e1479793e4cd975adf062fab3ff44206f76b1).
//!
//! Prague descends from DCTCP: the receiver reports how many segments arrived CE-marked,
//! and the sender keeps alpha, an EWMA (gain 1/16) of the marked fraction per round trip,
//! and cuts its window once per round that saw marks, by alpha / 2. What it adds:
//!
//! - A fractional window (`frac_cwnd`, 2^-20 packets). Each ACK grows it by the
//!   *unmarked* segments it acknowledges (`ai_ack_increase` / cwnd per segment: one packet
//!   per round at most, less the marked share), whatever the CA state but Loss; a CE
//!   reduction takes `alpha / 2` of it with unbiased rounding. `snd_cwnd` follows it one
//!   packet per ACK, rounded up, never below 2.
//! - Alpha in 2^-24 units, kept multiplied by 16 so the EWMA's remainders are not lost;
//!   it starts at 0 and the first CE mark halves the window (`prague_alpha_mode` = 0), and
//!   it is not updated before that first mark.
//! - RTT independence: after `rtt_transition` rounds out of slow start, a flow whose RTT
//!   is below `rtt_target` (25 ms) grows as if its RTT were the target (its per-ACK
//!   increase is scaled by (rtt / target)^2), updates alpha and reduces at most once per
//!   target interval. Flows of different RTTs then get similar rates on a shared L4S
//!   queue, and a short-RTT flow does not saturate the marking.
//! - Pacing at 100% of cwnd per srtt (200% in early slow start), in bursts of at most
//!   2^-`burst_shift` s (about 250 us) of data.
//! - Small windows (`prague_cwnd_mode` = 2): once marked, at or below `cwnd_transit` full
//!   packets of window the flow switches to a rate-based mode: the pacing rate is the
//!   state (`rate_bytes`), grows by one 1500-byte packet per virtual RTT (the larger of the
//!   target and srtt), is cut by alpha / 2, and oscillates +-3% within each virtual RTT
//!   so that a step-marking queue sees a steady trickle of marks.
//! - Loss: halve the window and stop growing until Open again (the Reno reaction).
//!
//! | Linux                          | here                                     |
//! |--------------------------------|------------------------------------------|
//! | `prague_init`                  | [`CongestionControl::init`]              |
//! | `prague_cong_control`          | [`CongestionControl::cong_control`]      |
//! | `prague_state`                 | [`CongestionControl::set_state`]         |
//! | `prague_cwnd_event` (loss)     | [`CongestionControl::cwnd_event`]        |
//! | `prague_ssthresh`              | [`CongestionControl::ssthresh`]          |
//! | `prague_cwnd_undo`             | [`CongestionControl::undo_cwnd`]         |
//! | `prague_tso_segs`              | [`CongestionControl::tso_segs`]          |
//! | `TCP_CONG_NEEDS_ECN`, `_NEEDS_ACCECN`, `_WANTS_ECT_1` | [`CongestionControl::needs_ecn`], [`CongestionControl::needs_accecn`], [`CongestionControl::ect1`] |
//!
//! Feedback. Prague needs Accurate ECN (`TCP_CONG_NEEDS_ACCECN`,
//! [`CongestionControl::needs_accecn`]): the receiver counts every CE-marked segment in the
//! ACE field and the AccECN option (`receiver/accecn.rs`), the sender takes the count into
//! `delivered_ce` (`sender/accecn.rs`), and Prague reads each ACK's increase of it as the
//! L4S kernel's `rs->ece_delta`.
//!
//! Without ECN the kernel swaps in plain Reno (`prague-reno`); this controller asks for
//! ECN, which a Linux peer grants (as for DCTCP), so in the simulator that fallback runs
//! only if a test builds it on a connection without ECN.
//!
//! Not modelled: lowering the MSS (down to 150 bytes) when the virtual window is below two
//! packets, i.e. below about 1 Mbit/s at 25 ms (`tcp_sync_mss` with
//! `mss_cache_set_by_cca`; the model's MSS is fixed); ECT(1) on pure ACKs (the model's
//! ACKs carry no ECN field).

use super::{
    tcp_reno_cong_avoid, tcp_reno_ssthresh, tcp_reno_undo_cwnd, tcp_slow_start, CaEvent, CaState,
    CongestionControl, Controller, Param, ParamKind, ParamValue, Params, RateSample, TcpState,
};
use crate::host::MAX_TCP_HEADER;
use crate::packet::HEADER_BYTES;

/// The largest TSO buffer, bytes (`GSO_LEGACY_MAX_SIZE`).
const GSO_MAX_SIZE: u64 = 65_536;

/// The smallest `snd_cwnd` (`MIN_CWND_RTT`).
const MIN_CWND: u32 = 2;
/// Alpha's resolution, bits (`PRAGUE_ALPHA_BITS`): alpha = 1.0 is `MAX_ALPHA`.
pub const ALPHA_BITS: u32 = 24;
pub const MAX_ALPHA: u64 = 1 << ALPHA_BITS;
/// The fractional window's resolution, bits (`CWND_UNIT`): one packet is `ONE_CWND`.
pub const CWND_UNIT: u32 = 20;
pub const ONE_CWND: u64 = 1 << CWND_UNIT;
/// Alpha's EWMA gain, 1/2^4 (`PRAGUE_SHIFT_G`).
pub const SHIFT_G: u32 = 4;
/// The lowest pacing rate, bytes per second (100 kbit/s, `MINIMUM_RATE`).
const MIN_RATE: u64 = 12_500;
/// RTTs above this many us are not scaled (`MAX_SCALED_RTT`).
const MAX_SCALED_RTT_US: u64 = 100_000;
/// The reference packet size the increase is counted in (`MTU_SYS`).
const MTU_SYS: u64 = 1500;
/// The rate mode's pacing swing, 4/128 (about 3%) of the rate (`RATE_OFFSET`, `OFFSET_UNIT`).
const RATE_OFFSET: u64 = 4;
const OFFSET_SHIFT: u32 = 7;
/// The slow srtt average's gain, 1/2^7 per round (`HSRTT_SHIFT`).
const HSRTT_SHIFT: u32 = 7;
/// Rate x RTT (in srtt units, us x 8) to bytes: >> 23 (`RTT2SEC_SHIFT`; 2^23 stands in for
/// 8 x 10^6, as in the kernel).
const RTT2SEC_SHIFT: u32 = 23;

/// TCP Prague in the registry, with the module parameters that change its behaviour and
/// their defaults.
pub const CONTROLLER: Controller = Controller {
    name: "prague",
    aliases: &["tcp_prague"],
    title: "Prague",
    summary: "TCP Prague (L4S, RFC 9331) as L4STeam's tcp_prague.c v0.7: DCTCP-like scalable ECN response with ECT(1), a fractional window, RTT independence and pacing",
    params: &[
        Param {
            name: "rtt_target",
            kind: ParamKind::Int {
                min: 0,
                max: 1_000_000,
            },
            default: ParamValue::Int(25_000),
            unit: "us",
            help: "flows with a shorter RTT behave as if their RTT were this; 0 turns RTT independence off (module parameter prague_rtt_target)",
        },
        Param {
            name: "rtt_transition",
            kind: ParamKind::Int {
                min: 0,
                max: 1_000_000,
            },
            default: ParamValue::Int(4),
            unit: "rounds",
            help: "rounds after slow start before RTT independence starts (module parameter prague_rtt_transition)",
        },
        Param {
            name: "alpha_mode",
            kind: ParamKind::Int { min: 0, max: 1 },
            default: ParamValue::Int(0),
            unit: "",
            help: "0: alpha starts at 0 and the first mark halves the window; 1: alpha starts at 1 (module parameter prague_alpha_mode)",
        },
        Param {
            name: "cwnd_mode",
            kind: ParamKind::Int { min: 0, max: 2 },
            default: ParamValue::Int(2),
            unit: "",
            help: "0: fractional window; 1: rate-based once RTT-independent; 2: rate-based at or below cwnd_transit packets (module parameter prague_cwnd_mode)",
        },
        Param {
            name: "cwnd_transit",
            kind: ParamKind::Int { min: 0, max: 1_000_000 },
            default: ParamValue::Int(4),
            unit: "packets",
            help: "window, in 1500-byte packets, at or below which cwnd_mode 2 is rate-based (module parameter prague_cwnd_transit)",
        },
        Param {
            name: "burst_shift",
            kind: ParamKind::Int { min: 0, max: 40 },
            default: ParamValue::Int(12),
            unit: "",
            help: "a TSO burst carries at most 2^-burst_shift s of data at the pacing rate (module parameter prague_burst_shift)",
        },
        Param {
            name: "max_tso_segs",
            kind: ParamKind::Int { min: 0, max: 65_535 },
            default: ParamValue::Int(0),
            unit: "packets",
            help: "largest TSO burst, 0 = no limit (module parameter prague_max_tso_segs)",
        },
    ],
    build,
};

fn build(p: &Params, _seed: u64) -> Box<dyn CongestionControl> {
    Box::new(Prague::new(PragueParams {
        rtt_target_us: p.int("rtt_target") as u32,
        rtt_transition: p.int("rtt_transition") as u32,
        alpha_mode: p.int("alpha_mode") as u32,
        cwnd_mode: p.int("cwnd_mode") as u32,
        cwnd_transit: p.int("cwnd_transit") as u32,
        burst_shift: p.int("burst_shift") as u32,
        max_tso_segs: p.int("max_tso_segs") as u32,
    }))
}

/// The module parameters, in Linux's units.
#[derive(Clone, Copy, Debug)]
pub struct PragueParams {
    pub rtt_target_us: u32,
    pub rtt_transition: u32,
    pub alpha_mode: u32,
    pub cwnd_mode: u32,
    pub cwnd_transit: u32,
    pub burst_shift: u32,
    pub max_tso_segs: u32,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            rtt_target_us: 25_000,
            rtt_transition: 4,
            alpha_mode: 0,
            cwnd_mode: 2,
            cwnd_transit: 4,
            burst_shift: 12,
            max_tso_segs: 0,
        }
    }
}

/// `a * b / d` rounded to nearest, without overflow.
fn mul_div_round(a: u64, b: u64, d: u64) -> u64 {
    let d = d.max(1) as u128;
    ((a as u128 * b as u128 + d / 2) / d) as u64
}

/// `a * b >> s`, without overflow (`mul_u64_u64_shr`).
fn mul_shr(a: u64, b: u64, s: u32) -> u64 {
    ((a as u128 * b as u128) >> s) as u64
}

#[derive(Debug, Clone)]
pub struct Prague {
    p: PragueParams,
    /// When the last CE reduction was made, us (`cwr_stamp`).
    cwr_stamp: u64,
    /// When alpha was last updated, us (`alpha_stamp`).
    alpha_stamp: u64,
    /// Alpha x 16, in 2^-24 (`upscaled_alpha`).
    upscaled_alpha: u64,
    /// Window growth per unmarked acknowledged packet, 2^-20 packets x cwnd
    /// (`ai_ack_increase`).
    ai_ack_increase: u64,
    /// A slow average of srtt, srtt units (us x 8) x 2^7 (`hsrtt_us`).
    hsrtt: u64,
    /// `hsrtt` still waits for the first RTT sample (see `init`).
    hsrtt_unset: bool,
    /// The window, 2^-20 packets (`frac_cwnd`).
    frac_cwnd: u64,
    /// The rate-based mode's state, bytes per second (`rate_bytes`).
    rate_bytes: u64,
    /// `rate_bytes` and `snd_cwnd` before the last loss reduction, for undo.
    loss_rate_bytes: u64,
    loss_cwnd: u32,
    /// Largest TSO burst, packets (`max_tso_burst`).
    max_tso_burst: u32,
    /// `tp.delivered` / `tp.delivered_ce` at the round's start, and the round's end.
    old_delivered: u64,
    old_delivered_ce: u64,
    next_seq: u64,
    /// Rounds since slow start ended (`round`).
    round: u32,
    /// A CE mark has been seen: there is an L4S queue on the path (`saw_ce`).
    saw_ce: bool,
    /// Alpha started at 1 (`alpha_mode`).
    alpha_starts_at_one: bool,
    /// `cwnd_mode` 2: switch between the two modes by window size (`cwnd_mode_transit`).
    mode_switching: bool,
    /// The rate-based mode (`cwnd_mode` = 1).
    rate_mode: bool,
    /// A loss reduction is under way: no growth (`in_loss`).
    in_loss: bool,
    /// `tp.delivered_ce` at the previous ACK, for the marks each ACK reports (`ece_delta`).
    last_delivered_ce: u64,
    /// No ECN on this connection: plain Reno (`prague_reno`).
    reno: bool,
}

impl Prague {
    pub fn new(p: PragueParams) -> Self {
        Prague {
            p,
            cwr_stamp: 0,
            alpha_stamp: 0,
            upscaled_alpha: 0,
            ai_ack_increase: ONE_CWND,
            hsrtt: 0,
            hsrtt_unset: true,
            frac_cwnd: 0,
            rate_bytes: MIN_RATE,
            loss_rate_bytes: 0,
            loss_cwnd: 0,
            max_tso_burst: 1,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            alpha_starts_at_one: false,
            mode_switching: false,
            rate_mode: false,
            in_loss: false,
            last_delivered_ce: 0,
            reno: false,
        }
    }

    /// Alpha, 2^-24 (`prague_alpha` in `INET_DIAG_PRAGUEINFO`).
    pub fn alpha(&self) -> u64 {
        self.upscaled_alpha >> SHIFT_G
    }

    /// The fractional window, 2^-20 packets.
    pub fn frac_cwnd(&self) -> u64 {
        self.frac_cwnd
    }

    /// The per-ACK additive increase, 2^-20 packets x cwnd.
    pub fn ai_ack_increase(&self) -> u64 {
        self.ai_ack_increase
    }

    /// Rounds since slow start ended.
    pub fn round(&self) -> u32 {
        self.round
    }

    /// The rate-based mode is on.
    pub fn rate_mode(&self) -> bool {
        self.rate_mode
    }

    /// The largest TSO burst the pacing rate allows, packets.
    pub fn max_tso_burst(&self) -> u32 {
        self.max_tso_burst
    }

    fn mtu(tp: &TcpState) -> u64 {
        (tp.mss + HEADER_BYTES) as u64
    }

    /// srtt in the kernel's unit, us x 8 (`tp->srtt_us`).
    fn srtt8(tp: &TcpState) -> u64 {
        (tp.srtt_us as u64) << 3
    }

    /// The target RTT, us x 8.
    fn target8(&self) -> u64 {
        (self.p.rtt_target_us as u64) << 3
    }

    /// `prague_is_rtt_indep()`: out of slow start for long enough.
    fn rtt_indep(&self, tp: &TcpState) -> bool {
        !tp.in_slow_start() && self.round >= self.p.rtt_transition
    }

    fn since_alpha_update(&self, tp: &TcpState) -> u64 {
        tp.now_us.saturating_sub(self.alpha_stamp)
    }

    /// `prague_should_update_ewma()`: a round has ended, and once RTT-independent, a
    /// target interval has passed too.
    fn should_update_ewma(&self, tp: &TcpState) -> bool {
        tp.snd_una >= self.next_seq
            && (!self.rtt_indep(tp) || self.target8() >> 3 <= self.since_alpha_update(tp))
    }

    /// `prague_virtual_rtt()`: the RTT the flow behaves as if it had, us x 8.
    fn virtual_rtt8(&self, tp: &TcpState) -> u64 {
        self.target8().max(Self::srtt8(tp))
    }

    /// Rate-based mode in force now (its switch and RTT independence both on).
    fn rate_based(&self, tp: &TcpState) -> bool {
        self.rate_mode && self.rtt_indep(tp)
    }

    /// `prague_frac_cwnd_to_snd_cwnd()`: rounded up, at least 2, at most the clamp.
    fn cwnd_from_frac(&self, tp: &TcpState) -> u32 {
        let up = (self.frac_cwnd + (ONE_CWND - 1)) >> CWND_UNIT;
        (up.min(u32::MAX as u64) as u32)
            .max(MIN_CWND)
            .min(tp.snd_cwnd_clamp)
    }

    /// `prague_pacing_rate_to_frac_cwnd()`: the window the rate-based state fills in a
    /// (slowly averaged) RTT.
    fn frac_from_rate(&self, tp: &TcpState) -> u64 {
        let avg = self.hsrtt >> HSRTT_SHIFT;
        let rtt = if avg != 0 { avg } else { Self::srtt8(tp) };
        mul_shr(self.rate_bytes, rtt, RTT2SEC_SHIFT - CWND_UNIT).div_ceil(Self::mtu(tp))
    }

    /// `prague_frac_cwnd_to_pacing_rate()`: one window per srtt, at least `MIN_RATE`.
    fn rate_from_frac(&self, tp: &TcpState) -> u64 {
        let mut per_pkt = 8_000_000 * Self::mtu(tp);
        if tp.srtt_us != 0 {
            per_pkt /= Self::srtt8(tp);
        }
        mul_shr(per_pkt, self.frac_cwnd, CWND_UNIT).max(MIN_RATE)
    }

    /// `prague_rate_scaled_ai_ack_increase()`: below the target, the increase shrinks by
    /// (rtt / target)^2, so that the window grows by (rtt / target)^2 per round and the rate
    /// by one packet per target RTT per target RTT, whatever the flow's own RTT.
    fn rate_scaled_increase(&self, rtt8: u64) -> u64 {
        let target = self.target8();
        if rtt8 >= target {
            return ONE_CWND;
        }
        mul_div_round(rtt8 << CWND_UNIT, rtt8, target * target)
    }

    /// `prague_ai_ack_increase()`.
    fn update_ai_ack_increase(&mut self, tp: &TcpState) {
        let rtt8 = Self::srtt8(tp);
        self.ai_ack_increase =
            if self.round < self.p.rtt_transition || rtt8 == 0 || rtt8 > MAX_SCALED_RTT_US << 3 {
                ONE_CWND
            } else {
                self.rate_scaled_increase(rtt8)
            };
    }

    /// `prague_update_pacing_rate()`, which also sizes TSO bursts.
    fn update_pacing_rate(&mut self, tp: &mut TcpState) {
        let mtu = Self::mtu(tp);
        let mut rate = if self.rate_based(tp) {
            // Faster in the first half of each virtual RTT, slower in the second.
            let offset = mul_shr(RATE_OFFSET, self.rate_bytes, OFFSET_SHIFT);
            if self.virtual_rtt8(tp) >> 4 <= self.since_alpha_update(tp) {
                self.rate_bytes - offset
            } else {
                self.rate_bytes + offset
            }
        } else {
            let pkts = (self.frac_cwnd >> CWND_UNIT).max(tp.packets_in_flight() as u64);
            let mut per_pkt = 8_000_000 * mtu;
            if tp.srtt_us != 0 {
                per_pkt /= Self::srtt8(tp);
            }
            let r = per_pkt.saturating_mul(pkts).max(MIN_RATE);
            self.rate_bytes = r;
            r
        };
        if tp.snd_cwnd < tp.snd_ssthresh / 2 {
            rate = rate.saturating_mul(2);
        }
        rate = rate.min(tp.max_pacing_rate);
        let burst = rate / mtu;
        self.max_tso_burst = ((burst >> self.p.burst_shift).min(u32::MAX as u64) as u32).max(1);
        tp.pacing_rate = rate;
    }

    /// `prague_new_round()`.
    fn new_round(&mut self, tp: &TcpState) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
        if !tp.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.p.rtt_transition;
            }
        }
        self.update_ai_ack_increase(tp);
    }

    /// `prague_update_alpha()`: fold the round's marked fraction into alpha (once the path
    /// has shown it marks), then start the next round.
    fn update_alpha(&mut self, tp: &TcpState) {
        if self.saw_ce {
            let mut marked = tp.delivered_ce - self.old_delivered_ce;
            if marked != 0 {
                let delivered = (tp.delivered - self.old_delivered).max(1);
                marked = (marked << ALPHA_BITS) / delivered;
            }
            let a = self.upscaled_alpha;
            self.upscaled_alpha = (a - (a >> SHIFT_G) + marked).min(MAX_ALPHA << SHIFT_G);
            self.alpha_stamp = tp.now_us;
        }
        self.hsrtt = self.hsrtt + Self::srtt8(tp) - (self.hsrtt >> HSRTT_SHIFT);
        self.new_round(tp);
    }

    /// `prague_update_cwnd()`: grow by the unmarked part of what this ACK delivered, then
    /// move `snd_cwnd` one packet toward the fractional window.
    fn update_cwnd(&mut self, tp: &mut TcpState, rs: &RateSample) {
        let mut acked = rs.acked_sacked as i64;
        let marked = tp.delivered_ce - self.last_delivered_ce;
        self.last_delivered_ce = tp.delivered_ce;
        if marked > 0 {
            if !self.saw_ce && !self.alpha_starts_at_one {
                // The first mark: halve, as alpha (still 0) would not.
                self.frac_cwnd = (self.frac_cwnd + 1) >> 1;
            }
            self.saw_ce = true;
            acked -= marked as i64;
        }
        if acked > 0 && !self.in_loss && tp.is_cwnd_limited() {
            let mut acked = acked as u64;
            if tp.in_slow_start() {
                acked = tcp_slow_start(tp, acked as u32) as u64;
                self.frac_cwnd = (tp.snd_cwnd as u64) << CWND_UNIT;
                if acked == 0 {
                    self.update_ai_ack_increase(tp);
                    return;
                }
            }
            if self.rate_based(tp) {
                let vrtt = self.virtual_rtt8(tp);
                let mtu = Self::mtu(tp);
                let inc = ((acked * MTU_SYS) << RTT2SEC_SHIFT) / vrtt;
                let wnd = ((self.rate_bytes as u128 * vrtt as u128)
                    .div_ceil((mtu as u128) << RTT2SEC_SHIFT)) as u64;
                // Rounded to nearest; nothing while the window rounds to 0.
                if let Some(step) = (inc + wnd / 2).checked_div(wnd) {
                    self.rate_bytes += step;
                }
                self.frac_cwnd = (self.frac_cwnd + acked).max(self.frac_from_rate(tp));
            } else {
                let mut inc = acked * self.ai_ack_increase;
                if self.frac_cwnd != 0 {
                    inc = mul_div_round(inc, ONE_CWND, self.frac_cwnd);
                }
                inc = inc * MTU_SYS / Self::mtu(tp);
                self.frac_cwnd += inc.max(acked);
                let r = self.rate_from_frac(tp);
                self.rate_bytes = (self.rate_bytes + acked).max(r);
            }
        }
        let target = self.cwnd_from_frac(tp);
        if tp.snd_cwnd > target {
            tp.snd_cwnd -= 1;
            tp.snd_ssthresh = tp.snd_cwnd;
            self.update_ai_ack_increase(tp);
        } else if tp.snd_cwnd < target {
            tp.snd_cwnd += 1;
            self.update_ai_ack_increase(tp);
        }
    }

    /// `prague_enter_loss()`: halve (the window, or the rate in rate-based mode) and stop
    /// growing until Open.
    fn enter_loss(&mut self, tp: &TcpState) {
        self.loss_cwnd = tp.snd_cwnd;
        self.loss_rate_bytes = self.rate_bytes;
        if self.rate_based(tp) {
            self.rate_bytes -= self.rate_bytes >> 1;
            self.frac_cwnd = self.frac_from_rate(tp);
        } else {
            self.frac_cwnd -= self.frac_cwnd >> 1;
            self.rate_bytes = self.rate_from_frac(tp);
        }
        self.in_loss = true;
    }

    /// `prague_enter_cwr()`: the CE reduction, by alpha / 2 (at most once per target
    /// interval once RTT-independent).
    fn enter_cwr(&mut self, tp: &TcpState) {
        if self.rtt_indep(tp) && self.target8() >> 3 > tp.now_us.saturating_sub(self.cwr_stamp) {
            return;
        }
        self.cwr_stamp = tp.now_us;
        let alpha = self.alpha();
        if self.rate_based(tp) {
            let cut = mul_shr(self.rate_bytes, alpha, ALPHA_BITS + 1);
            self.rate_bytes = self.rate_bytes.saturating_sub(cut).max(MIN_RATE);
            self.frac_cwnd = self.frac_from_rate(tp);
        } else {
            // + 1/2 before the shift: rounding to nearest, not down.
            let cut = ((alpha as u128 * self.frac_cwnd as u128 + MAX_ALPHA as u128)
                >> (ALPHA_BITS + 1)) as u64;
            self.frac_cwnd -= cut;
            self.rate_bytes = self.rate_from_frac(tp);
        }
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn init(&mut self, tp: &mut TcpState) {
        if !tp.ecn_ok {
            self.reno = true;
            return;
        }
        self.alpha_stamp = tp.now_us;
        self.alpha_starts_at_one = self.p.alpha_mode & 1 == 1;
        self.upscaled_alpha = if self.alpha_starts_at_one {
            MAX_ALPHA << SHIFT_G
        } else {
            0
        };
        self.frac_cwnd = (tp.snd_cwnd as u64) << CWND_UNIT;
        self.max_tso_burst = 1;
        self.rate_bytes = if tp.srtt_us != 0 {
            let pkts = tp.snd_cwnd.max(tp.packets_in_flight()) as u64;
            (8_000_000 * Self::mtu(tp) / Self::srtt8(tp) * pkts).max(MIN_RATE)
        } else {
            MIN_RATE
        };
        self.update_pacing_rate(tp);
        self.loss_rate_bytes = 0;
        self.round = 0;
        self.saw_ce = tp.delivered_ce != 0;
        self.last_delivered_ce = tp.delivered_ce;
        // The kernel starts the slow srtt average at the handshake's RTT. The model has no
        // handshake, so it starts at the first RTT sample instead (see `cong_control`).
        self.hsrtt_unset = tp.srtt_us == 0;
        self.hsrtt = if self.hsrtt_unset {
            1 << (HSRTT_SHIFT + 3)
        } else {
            Self::srtt8(tp) << HSRTT_SHIFT
        };
        self.mode_switching = self.p.cwnd_mode & 2 != 0;
        self.rate_mode = self.p.cwnd_mode & 1 == 1;
        self.new_round(tp);
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        if self.reno {
            return tcp_reno_ssthresh(tp);
        }
        // The reductions are Prague's own (`set_state`, `cwnd_event`).
        tp.snd_ssthresh
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, _ack: u64, acked: u32) {
        // Only the Reno fallback gets here: Prague proper owns cwnd in `cong_control`.
        tcp_reno_cong_avoid(tp, acked);
    }

    fn undo_cwnd(&mut self, tp: &mut TcpState) -> u32 {
        if self.reno {
            return tcp_reno_undo_cwnd(tp);
        }
        self.in_loss = false;
        self.rate_bytes = self.rate_bytes.max(self.loss_rate_bytes);
        self.frac_cwnd = self.frac_from_rate(tp);
        self.loss_cwnd.max(tp.snd_cwnd)
    }

    fn set_state(&mut self, tp: &mut TcpState, new_state: CaState) {
        if self.reno || new_state == tp.ca_state {
            return;
        }
        match new_state {
            CaState::Recovery => self.enter_loss(tp),
            CaState::Cwr => self.enter_cwr(tp),
            CaState::Open => self.in_loss = false,
            _ => {}
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpState, ev: CaEvent) {
        if !self.reno && ev == CaEvent::Loss {
            self.enter_loss(tp);
        }
    }

    fn cong_control(&mut self, tp: &mut TcpState, rs: &RateSample) -> bool {
        if self.reno {
            return false;
        }
        if self.hsrtt_unset && tp.srtt_us != 0 {
            self.hsrtt = Self::srtt8(tp) << HSRTT_SHIFT;
            self.hsrtt_unset = false;
        }
        self.update_cwnd(tp, rs);
        if self.should_update_ewma(tp) {
            self.update_alpha(tp);
        }
        self.update_pacing_rate(tp);
        if self.mode_switching {
            let wnd_bytes = tp.snd_cwnd as u64 * Self::mtu(tp);
            let transit = self.p.cwnd_transit as u64 * MTU_SYS;
            if self.saw_ce && wnd_bytes <= transit {
                self.rate_mode = true;
                self.frac_cwnd = self.frac_from_rate(tp);
            } else {
                self.rate_mode = false;
                self.rate_bytes = self.rate_from_frac(tp);
            }
        }
        true
    }

    fn tso_segs(&self, tp: &TcpState) -> Option<u32> {
        if self.reno {
            return None;
        }
        let mut n = self.max_tso_burst;
        if self.p.max_tso_segs != 0 {
            n = n.min(self.p.max_tso_segs);
        }
        // The kernel's buffers hold at most 64 KB less header room (`tcp_xmit_size_goal()`),
        // which bounds a burst whatever this asks; the model's sender leaves that to us.
        let skb_segs = (GSO_MAX_SIZE - 1 - MAX_TCP_HEADER) / tp.mss.max(1) as u64;
        Some(n.min(skb_segs as u32).max(1))
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    /// `TCP_CONG_NEEDS_ACCECN`: the receiver's ACE counts (see the module docs).
    fn needs_accecn(&self) -> bool {
        true
    }

    fn ect1(&self) -> bool {
        !self.reno
    }

    fn mode_name(&self) -> &'static str {
        if self.reno {
            "prague-reno"
        } else if self.rate_mode {
            "prague-rate"
        } else {
            "prague"
        }
    }
}

#[cfg(test)]
mod tests;
