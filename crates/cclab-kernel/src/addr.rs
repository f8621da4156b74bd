//! Addresses and ports of a run. Everything lives in 198.18.0.0/23 (RFC 2544's range for
//! network benchmarks), and only inside the run's own namespaces:
//!
//! | where | interface | address |
//! |---|---|---|
//! | `-snd` | `s0` | 198.18.0.2/24 |
//! | `-rtr` | `r0` (to snd) | 198.18.0.1/24 |
//! | `-rtr` | `r1` (to rcv) | 198.18.1.1/24 |
//! | `-rcv` | `c0` | 198.18.1.(10+g)/24, one per flow group g |
//!
//! Flow i connects from 198.18.0.2 port `FLOW_PORT_BASE + i` to its group's receiver
//! address, port `RECEIVER_PORT`, which is how the element tells flows apart. Latency probe
//! group p sends UDP from 198.18.0.2 port `PROBE_PORT_BASE + p` to `PROBE_RECEIVER` (an
//! address of no flow group: the path's own RTT), port `PROBE_PORT`.

pub const SENDER: [u8; 4] = [198, 18, 0, 2];
pub const ROUTER_SND: [u8; 4] = [198, 18, 0, 1];
pub const ROUTER_RCV: [u8; 4] = [198, 18, 1, 1];
pub const RECEIVER_PORT: u16 = 5201;
pub const FLOW_PORT_BASE: u16 = 20000;
/// The latency probes' echo (`crate::probe`): 198.18.1.250, outside the groups' range.
pub const PROBE_RECEIVER: [u8; 4] = [198, 18, 1, 250];
pub const PROBE_PORT: u16 = 7007;
pub const PROBE_PORT_BASE: u16 = 30000;
/// Most flows a kernel run takes (ports 20000..21000).
pub const MAX_FLOWS: usize = 1000;
/// Most flow groups (receiver addresses 198.18.1.10 ..= .209).
pub const MAX_GROUPS: usize = 200;

/// Receiver address of flow group `g`.
pub fn receiver(g: usize) -> [u8; 4] {
    [198, 18, 1, 10 + g as u8]
}

/// The flow group whose receiver address `a` is, if it is one.
pub fn group_of(a: [u8; 4]) -> Option<usize> {
    (a[..3] == [198, 18, 1] && (10..10 + MAX_GROUPS).contains(&(a[3] as usize)))
        .then(|| a[3] as usize - 10)
}

pub fn is_sender_side(a: [u8; 4]) -> bool {
    a[0] == 198 && a[1] == 18 && a[2] == 0
}

pub fn fmt(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}
