//! A packet on the element's path: its reused buffer, what the path's elements read of it
//! (wire size, class, segments, flow key), a GSO super-packet cut into its segments, CE set in
//! its IPv4 header, and the Internet checksums these recompute.

use cclab_path::Packet;

thread_local! {
    /// Packet buffers of the element's thread, reused: a FIFO of live allocations that glibc
    /// keeps trimming and regrowing cost millisecond stalls at 50 ms delay.
    static POOL: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// An empty packet buffer.
pub(super) fn buffer() -> Vec<u8> {
    let mut b = POOL
        .with(|p| p.borrow_mut().pop())
        .unwrap_or_else(|| Vec::with_capacity(2048));
    b.clear();
    b
}

/// Give a packet buffer back for reuse.
pub(super) fn recycle(d: Vec<u8>) {
    if d.capacity() <= 4096 {
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < 1 << 16 {
                p.push(d);
            }
        });
    }
}

/// An IP packet on the path (a whole GSO super-packet in GSO mode).
pub(super) struct Pkt {
    /// What is written back to the TUN device (with the vnet header in GSO mode).
    pub(super) data: Vec<u8>,
    /// Bytes of vnet header before the IP packet.
    pub(super) vnet: usize,
    pub(super) flow: Option<u32>,
    pub(super) payload: u32,
    /// Delay class: the flow's group, or the last class for packets of no flow.
    pub(super) line: usize,
    /// Bytes on the wire: the IP packet, or the sum of a super-packet's segments.
    pub(super) wire: u32,
    /// TCP sequence number of the first payload byte (data packets).
    pub(super) seq: u32,
    /// Segments (more than one for a GSO super-packet) and their payload size.
    pub(super) segs: u32,
    pub(super) mss: u32,
    /// IP and TCP header lengths.
    pub(super) ihl: usize,
    pub(super) doff: usize,
    /// Random loss leaves it alone (see [`Packet::loss_exempt`]).
    pub(super) exempt: bool,
    /// The bottleneck marked it CE.
    pub(super) marked: bool,
    /// Flow-queue key: the flow's index + 1, or a hash of the addresses and ports.
    pub(super) key: u64,
}

impl Pkt {
    /// TCP sequence number after the payload.
    pub(super) fn end_seq(&self) -> u32 {
        self.seq.wrapping_add(self.payload)
    }
}

impl Packet for Pkt {
    fn wire_len(&self) -> u32 {
        self.wire
    }
    fn class(&self) -> usize {
        self.line
    }
    fn segments(&self) -> u32 {
        self.segs
    }
    fn segment_wire_len(&self) -> u32 {
        if self.segs > 1 {
            self.mss + (self.ihl + self.doff) as u32
        } else {
            self.wire
        }
    }
    /// Cut a super-packet into its segments, headers fixed (see `tcp_segment`).
    fn split(self, out: &mut Vec<Self>) {
        if self.segs <= 1 {
            out.push(self);
            return;
        }
        let raw = &self.data[self.vnet..];
        let hl = (self.ihl + self.doff) as u32;
        for i in 0..self.segs as usize {
            let mut d = buffer();
            tcp_segment(
                raw,
                self.ihl,
                self.doff,
                self.mss as usize,
                i,
                self.segs as usize,
                self.vnet,
                &mut d,
            );
            let wire = (d.len() - self.vnet) as u32;
            out.push(Pkt {
                data: d,
                vnet: self.vnet,
                flow: self.flow,
                payload: wire - hl,
                line: self.line,
                wire,
                seq: self.seq.wrapping_add(i as u32 * self.mss),
                segs: 1,
                mss: self.mss,
                ihl: self.ihl,
                doff: self.doff,
                exempt: self.exempt,
                marked: self.marked,
                key: self.key,
            });
        }
        recycle(self.data);
    }
    fn loss_exempt(&self) -> bool {
        self.exempt
    }
    fn flow_key(&self) -> u64 {
        self.key
    }
    /// The IPv4 header's ECN field is ECT(0), ECT(1) or CE.
    fn is_ect(&self) -> bool {
        self.data.len() >= self.vnet + 20 && self.data[self.vnet + 1] & 0x03 != 0
    }
    /// The IPv4 header's ECN field (Not-ECT for a packet too short to have one).
    fn ecn_field(&self) -> u8 {
        if self.data.len() >= self.vnet + 20 {
            self.data[self.vnet + 1] & 0x03
        } else {
            0
        }
    }
    /// Set CE in the IPv4 header and recompute its checksum (a GSO super-packet's header is
    /// copied to every segment, so all of them arrive marked).
    fn set_ce(&mut self) {
        self.set_ecn_field(0x03);
        self.marked = true;
    }
}

impl Pkt {
    /// Write `field` into the IPv4 header's ECN bits and recompute the header checksum
    /// (a GSO super-packet's header is copied to every segment); false, and nothing
    /// written, for a packet too short to have a header or one already CE (never unmarked).
    pub(super) fn set_ecn_field(&mut self, field: u8) -> bool {
        let ip = &mut self.data[self.vnet..];
        if ip.len() < self.ihl || ip[1] & 0x03 == 0x03 {
            return false;
        }
        ip[1] = (ip[1] & !0x03) | (field & 0x03);
        ip[10] = 0;
        ip[11] = 0;
        let c = csum_fold(csum_add(0, &ip[..self.ihl]));
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        true
    }
}

/// Internet checksum (ones' complement sum) of `data`, starting from `sum`.
pub(super) fn csum_add(mut sum: u64, data: &[u8]) -> u64 {
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        sum += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
    }
    let mut rest = chunks.remainder();
    if rest.len() >= 2 {
        sum += u16::from_be_bytes([rest[0], rest[1]]) as u64;
        rest = &rest[2..];
    }
    if let Some(&b) = rest.first() {
        sum += (b as u64) << 8;
    }
    sum
}

pub(super) fn csum_fold(mut sum: u64) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Segment `i` of a TCP/IPv4 GSO super-packet `raw` (IP header first): headers copied and
/// fixed (total length, IP id + i, sequence number, CWR only on the first, PSH/FIN only on
/// the last, both checksums computed in full), payload `[i*mss, (i+1)*mss)`. Appended to
/// `out` after `vnet` zero bytes (a vnet header without offload requests).
#[allow(clippy::too_many_arguments)]
pub(super) fn tcp_segment(
    raw: &[u8],
    ihl: usize,
    doff: usize,
    mss: usize,
    i: usize,
    segs: usize,
    vnet: usize,
    out: &mut Vec<u8>,
) {
    let hl = ihl + doff;
    let total = raw.len() - hl;
    let s = i * mss;
    let e = (s + mss).min(total);
    out.clear();
    out.resize(vnet, 0);
    out.extend_from_slice(&raw[..hl]);
    out.extend_from_slice(&raw[hl + s..hl + e]);
    let p = &mut out[vnet..];
    let tot = (hl + e - s) as u16;
    p[2..4].copy_from_slice(&tot.to_be_bytes());
    let id = u16::from_be_bytes([p[4], p[5]]).wrapping_add(i as u16);
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[10] = 0;
    p[11] = 0;
    let c = csum_fold(csum_add(0, &p[..ihl]));
    p[10..12].copy_from_slice(&c.to_be_bytes());
    let (ip, tcp) = p.split_at_mut(ihl);
    let seq = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]).wrapping_add(s as u32);
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    if i > 0 {
        tcp[13] &= !0x80; // CWR
    }
    if i + 1 < segs {
        tcp[13] &= !0x09; // FIN, PSH
    }
    tcp[16] = 0;
    tcp[17] = 0;
    let len = tcp.len() as u64;
    let pseudo = csum_add(csum_add(0, &ip[12..20]), &[0, libc::IPPROTO_TCP as u8]) + len;
    let c = csum_fold(csum_add(pseudo, tcp));
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
}
