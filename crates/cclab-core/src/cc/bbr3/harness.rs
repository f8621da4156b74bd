//! The closed-loop test path ([`crate::cc::testpath`]) driving version 3, and the trace row
//! it keeps: mode and phase, cwnd and inflight, and the inflight bounds.

use super::{Bbr3, Mode, Phase};
use crate::cc::testpath::{self, Traced};
use crate::cc::TcpState;

pub use crate::cc::testpath::MSS;

/// The path with a BBRv3 flow (`ecn_low` off).
pub type Path = testpath::Path<Bbr3>;

#[derive(Clone, Copy, Debug)]
#[allow(dead_code)] // every field is shown when an assertion prints a row
pub struct Row {
    pub now_ns: u64,
    pub mode: Mode,
    pub phase: Phase,
    pub cwnd: u32,
    pub inflight: u32,
    pub pacing_gain: u32,
    pub app_limited: u64,
    pub min_rtt_us: u32,
    pub inflight_hi: u32,
    pub inflight_lo: u32,
    pub losses: u32,
}

impl Traced for Bbr3 {
    type Row = Row;

    fn for_test(seed: u64) -> Self {
        Bbr3::new(seed, false)
    }

    fn row(&self, tp: &TcpState, now_ns: u64, losses: u32) -> Row {
        Row {
            now_ns,
            mode: self.mode,
            phase: self.cycle_idx,
            cwnd: tp.snd_cwnd,
            inflight: tp.packets_in_flight(),
            pacing_gain: self.pacing_gain,
            app_limited: tp.app_limited,
            min_rtt_us: self.min_rtt_us,
            inflight_hi: self.inflight_hi,
            inflight_lo: self.inflight_lo,
            losses,
        }
    }
}
