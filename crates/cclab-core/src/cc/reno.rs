//! NewReno (RFC 5681 / RFC 6582), as Linux `tcp_reno_*` in net/ipv4/tcp_cong.c.
//!
//! Slow start grows cwnd by one packet per packet acknowledged until ssthresh; congestion
//! avoidance then adds one packet per window (`tcp_cong_avoid_ai` with `w = cwnd`). A loss
//! halves the window (`tcp_reno_ssthresh`). The NewReno part (staying in recovery until
//! every segment outstanding at the loss is acknowledged, RFC 6582) and the recovery-time
//! window (PRR, RFC 6937) live in the sender, as they do in Linux's tcp_input.c.

use super::{
    tcp_reno_cong_avoid, tcp_reno_ssthresh, CongestionControl, Controller, Params, TcpState,
};

/// NewReno in the registry: no parameters (Linux's `reno` has none).
pub const CONTROLLER: Controller = Controller {
    name: "reno",
    aliases: &["newreno"],
    title: "NewReno",
    summary: "NewReno (RFC 5681/6582) as Linux's tcp_reno_* in net/ipv4/tcp_cong.c",
    params: &[],
    build,
};

fn build(_: &Params, _seed: u64) -> Box<dyn CongestionControl> {
    Box::new(Reno::new())
}

#[derive(Debug, Default)]
pub struct Reno;

impl Reno {
    pub fn new() -> Self {
        Reno
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn ssthresh(&mut self, tp: &TcpState) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut TcpState, _ack: u64, acked: u32) {
        tcp_reno_cong_avoid(tp, acked);
    }

    fn mode_name(&self) -> &'static str {
        "reno"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_linear() {
        let mut tp = TcpState::new(1448, 10);
        tp.max_packets_out = 10;
        tp.is_cwnd_limited = true;
        let mut r = Reno::new();
        r.cong_avoid(&mut tp, 10, 10);
        assert_eq!(tp.snd_cwnd, 20);
        tp.snd_ssthresh = 20;
        // One full window of ACKs in congestion avoidance adds one packet.
        for _ in 0..20 {
            r.cong_avoid(&mut tp, 0, 1);
        }
        assert_eq!(tp.snd_cwnd, 21);
        assert_eq!(r.ssthresh(&tp), 10);
    }

    #[test]
    fn not_cwnd_limited_does_not_grow() {
        let mut tp = TcpState::new(1448, 10);
        tp.snd_ssthresh = 5;
        tp.is_cwnd_limited = false;
        let mut r = Reno::new();
        r.cong_avoid(&mut tp, 0, 100);
        assert_eq!(tp.snd_cwnd, 10);
    }
}
