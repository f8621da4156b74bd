//! CUBIC (placeholder: being written; see issue #2).
use super::{tcp_reno_ssthresh, CongestionControl, TcpState};

#[derive(Debug, Default)]
pub struct Cubic;
impl Cubic {
    pub fn new() -> Self {
        Cubic
    }
}
impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp_reno_ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpState, ack: u64, acked: u32) {
        super::reno::Reno.cong_avoid(tp, ack, acked)
    }
}
