//! BBRv1 (placeholder: being written; see issue #2).
use super::{tcp_reno_ssthresh, CongestionControl, TcpState};

#[derive(Debug)]
pub struct Bbr {
    _seed: u64,
}
impl Bbr {
    pub fn new(seed: u64) -> Self {
        Bbr { _seed: seed }
    }
}
impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp_reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, ack: u64, acked: u32) {
        super::reno::Reno.cong_avoid(tp, ack, acked)
    }
    fn needs_pacing(&self) -> bool {
        true
    }
}
