//! What the element reads of a packet's IPv4 and TCP headers: its direction, flow, group,
//! payload, flags, sequence and ACK numbers and SACK blocks; and a flow key for packets of no
//! cclab flow.

use crate::addr;

#[derive(PartialEq)]
pub(super) enum Dir {
    Data,
    Ack,
}

pub(super) struct Parsed {
    pub(super) dir: Dir,
    pub(super) flow: Option<u32>,
    /// The flow group of the receiver-side address (destination of data, source of ACKs):
    /// what places traffic of no cclab flow (`cclab lab up`) on its group's path.
    pub(super) group: Option<usize>,
    pub(super) tcp: bool,
    /// A UDP datagram (a latency probe or its echo, or other UDP traffic).
    pub(super) udp: bool,
    pub(super) payload: u32,
    /// SYN, FIN or RST.
    pub(super) control: bool,
    pub(super) syn: bool,
    pub(super) ihl: usize,
    pub(super) doff: usize,
    pub(super) seq: u32,
    pub(super) ack: u32,
    pub(super) ack_flag: bool,
    /// The TCP CWR flag.
    pub(super) cwr: bool,
    pub(super) sacks: [(u32, u32); 4],
    pub(super) nsacks: usize,
}

/// `p` is one IP packet; for a GSO super-packet its length stands for the whole.
pub(super) fn parse(p: &[u8], nflows: usize) -> Parsed {
    let mut r = Parsed {
        dir: Dir::Data,
        flow: None,
        group: None,
        tcp: false,
        udp: false,
        payload: 0,
        control: false,
        syn: false,
        ihl: 20,
        doff: 20,
        seq: 0,
        ack: 0,
        ack_flag: false,
        cwr: false,
        sacks: [(0, 0); 4],
        nsacks: 0,
    };
    if p.len() < 20 || p[0] >> 4 != 4 {
        return r;
    }
    let dst = [p[16], p[17], p[18], p[19]];
    if addr::is_sender_side(dst) {
        r.dir = Dir::Ack;
    }
    let src = [p[12], p[13], p[14], p[15]];
    r.group = addr::group_of(if r.dir == Dir::Data { dst } else { src });
    let ihl = (p[0] & 0xf) as usize * 4;
    r.udp = p[9] == libc::IPPROTO_UDP as u8;
    if p[9] != libc::IPPROTO_TCP as u8 || p.len() < ihl + 20 {
        return r;
    }
    r.tcp = true;
    r.ihl = ihl;
    let t = &p[ihl..];
    let sport = u16::from_be_bytes([t[0], t[1]]);
    let dport = u16::from_be_bytes([t[2], t[3]]);
    let doff = ((t[12] >> 4) as usize * 4).clamp(20, t.len().max(20));
    r.doff = doff;
    // The packet's length, not the IP total length: a GSO super-packet's can be stale.
    r.payload = p.len().saturating_sub(ihl + doff) as u32;
    r.control = t[13] & 0x07 != 0;
    r.syn = t[13] & 0x02 != 0;
    r.ack_flag = t[13] & 0x10 != 0;
    r.cwr = t[13] & 0x80 != 0;
    r.seq = u32::from_be_bytes([t[4], t[5], t[6], t[7]]);
    r.ack = u32::from_be_bytes([t[8], t[9], t[10], t[11]]);
    if r.dir == Dir::Ack && doff > 20 && t.len() >= doff {
        let o = &t[20..doff];
        let mut i = 0;
        while i < o.len() {
            match o[i] {
                0 => break,
                1 => i += 1,
                kind => {
                    let len = o.get(i + 1).copied().unwrap_or(0) as usize;
                    if len < 2 || i + len > o.len() {
                        break;
                    }
                    if kind == 5 {
                        for b in o[i + 2..i + len].chunks_exact(8) {
                            if r.nsacks < 4 {
                                r.sacks[r.nsacks] = (
                                    u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                                    u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                                );
                                r.nsacks += 1;
                            }
                        }
                    }
                    i += len;
                }
            }
        }
    }
    let port = if r.dir == Dir::Data { sport } else { dport };
    r.flow = port
        .checked_sub(addr::FLOW_PORT_BASE)
        .map(|i| i as u32)
        .filter(|&i| (i as usize) < nflows);
    r
}

/// A flow key for a packet of no cclab flow: its IPv4 addresses, protocol and ports mixed
/// (0 for what is too short to tell).
pub(super) fn five_tuple_key(ip: &[u8]) -> u64 {
    if ip.len() < 20 {
        return 0;
    }
    let ihl = ((ip[0] & 0x0f) as usize * 4).max(20);
    let mut k = u64::from_be_bytes([
        ip[12], ip[13], ip[14], ip[15], ip[16], ip[17], ip[18], ip[19],
    ]);
    k ^= (ip[9] as u64) << 56;
    if ip.len() >= ihl + 4 {
        k = k.rotate_left(17)
            ^ u32::from_be_bytes([ip[ihl], ip[ihl + 1], ip[ihl + 2], ip[ihl + 3]]) as u64;
    }
    k | 1 << 63
}
