//! Unit tests of the element's packet work: GSO segmentation, the RTT tracker, header parsing.

use super::packet::{csum_add, csum_fold, tcp_segment};
use super::parse::{parse, Dir};
use super::RttTrack;
use crate::addr;

fn tcp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, flags: u8, payload: usize) -> Vec<u8> {
    let tot = 20 + 32 + payload;
    let mut p = vec![0u8; tot];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(tot as u16).to_be_bytes());
    p[9] = 6;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&dport.to_be_bytes());
    p[32] = 8 << 4; // 32-byte header (timestamps)
    p[33] = flags;
    p
}

#[test]
fn splits_a_gso_super_packet_into_valid_segments() {
    // 3 segments of mss 1000 (last one 500 bytes), PSH|ACK|CWR on the super-packet.
    let mut p = tcp(
        addr::SENDER,
        addr::receiver(0),
        addr::FLOW_PORT_BASE,
        addr::RECEIVER_PORT,
        0x98,
        2500,
    );
    p[4..6].copy_from_slice(&7u16.to_be_bytes());
    p[24..28].copy_from_slice(&0xffff_fc00u32.to_be_bytes()); // sequence wraps
    for (i, b) in p[52..].iter_mut().enumerate() {
        *b = i as u8;
    }
    let mut out = Vec::new();
    for i in 0..3 {
        tcp_segment(&p, 20, 32, 1000, i, 3, 10, &mut out);
        assert!(out[..10].iter().all(|&b| b == 0));
        let s = &out[10..];
        let len = if i < 2 { 1000 } else { 500 };
        assert_eq!(s.len(), 52 + len);
        assert_eq!(u16::from_be_bytes([s[2], s[3]]) as usize, s.len());
        assert_eq!(u16::from_be_bytes([s[4], s[5]]), 7 + i as u16);
        // Checksums verify: the sum over header (+ pseudo header) folds to zero.
        assert_eq!(csum_fold(csum_add(0, &s[..20])), 0);
        let pseudo = csum_add(csum_add(0, &s[12..20]), &[0, 6]) + (s.len() - 20) as u64;
        assert_eq!(csum_fold(csum_add(pseudo, &s[20..])), 0);
        let seq = u32::from_be_bytes([s[24], s[25], s[26], s[27]]);
        assert_eq!(seq, 0xffff_fc00u32.wrapping_add(1000 * i as u32));
        let flags = s[33];
        assert_eq!(flags & 0x80 != 0, i == 0, "CWR only on the first");
        assert_eq!(flags & 0x08 != 0, i == 2, "PSH only on the last");
        assert_eq!(s[52], (1000 * i) as u8);
    }
}

#[test]
fn rtt_track_follows_the_senders_rules() {
    let mut t = RttTrack::default();
    let base = u32::MAX - 2000; // wraps
    for i in 0..5u32 {
        t.on_data(
            base.wrapping_add(i * 1000),
            base.wrapping_add((i + 1) * 1000),
            1000 + i as u64,
        );
    }
    // Cumulative ACK of the first two: sample from the newest of them (sent at 1001).
    assert_eq!(t.on_ack(base.wrapping_add(2000), &[], 5000), Some(3999));
    // Segment 2 is lost; a SACK of segment 4 gives a sample from it.
    let s4 = (base.wrapping_add(4000), base.wrapping_add(5000));
    assert_eq!(
        t.on_ack(base.wrapping_add(2000), &[s4], 6000),
        Some(6000 - 1004)
    );
    // Segment 2 is retransmitted; the cumulative ACK covering it gives no sample (Karn).
    t.on_data(base.wrapping_add(2000), base.wrapping_add(3000), 7000);
    assert_eq!(t.on_ack(base.wrapping_add(5000), &[], 8000), None);
    // Nothing new acknowledged: no sample.
    assert_eq!(t.on_ack(base.wrapping_add(5000), &[], 9000), None);
}

#[test]
fn classifies_direction_flow_and_payload() {
    let d = tcp(
        addr::SENDER,
        addr::receiver(1),
        addr::FLOW_PORT_BASE + 2,
        addr::RECEIVER_PORT,
        0x10,
        1448,
    );
    assert_eq!(d.len(), 1500);
    let p = parse(&d, 3);
    assert!(p.dir == Dir::Data && p.tcp && !p.control);
    assert_eq!((p.flow, p.payload), (Some(2), 1448));
    let a = tcp(
        addr::receiver(1),
        addr::SENDER,
        addr::RECEIVER_PORT,
        addr::FLOW_PORT_BASE + 2,
        0x10,
        0,
    );
    let p = parse(&a, 3);
    assert!(p.dir == Dir::Ack && p.payload == 0 && !p.control);
    assert_eq!(p.flow, Some(2));
    // A flow index beyond the run's flows is "no flow"; SYN is control.
    let s = tcp(
        addr::SENDER,
        addr::receiver(0),
        addr::FLOW_PORT_BASE + 7,
        addr::RECEIVER_PORT,
        0x02,
        0,
    );
    let p = parse(&s, 3);
    assert!(p.control && p.flow.is_none());
    // Not IPv4: data direction, not TCP.
    let p = parse(&[0x60; 40], 3);
    assert!(p.dir == Dir::Data && !p.tcp);
}

/// The ECT(1) stand-in rewrites the ECN field and keeps the IPv4 header checksum valid; a
/// CE packet is never unmarked; marking CE still works on a rewritten packet.
#[test]
fn rewrites_the_ecn_field_with_a_valid_checksum() {
    use super::packet::Pkt;
    use cclab_path::Packet;
    let mut ip = tcp(
        addr::SENDER,
        addr::receiver(0),
        addr::FLOW_PORT_BASE,
        addr::RECEIVER_PORT,
        0x10,
        100,
    );
    ip[1] = 0b10; // ECT(0)
    let c = csum_fold(csum_add(0, &ip[..20]));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut pkt = Pkt {
        data: ip,
        vnet: 0,
        flow: Some(0),
        payload: 100,
        line: 0,
        wire: 152,
        seq: 0,
        segs: 1,
        mss: 100,
        ihl: 20,
        doff: 32,
        exempt: false,
        marked: false,
        key: 1,
    };
    assert_eq!(pkt.ecn_field(), 0b10);
    assert!(pkt.set_ecn_field(0b01));
    assert_eq!(pkt.ecn_field(), 0b01);
    assert_eq!(
        csum_fold(csum_add(0, &pkt.data[..20])),
        0,
        "header checksum"
    );
    pkt.set_ce();
    assert_eq!(pkt.ecn_field(), 0b11);
    assert!(pkt.marked);
    assert_eq!(
        csum_fold(csum_add(0, &pkt.data[..20])),
        0,
        "header checksum"
    );
    assert!(!pkt.set_ecn_field(0b01), "CE stays CE");
    assert_eq!(pkt.ecn_field(), 0b11);
}

/// A UDP datagram of `payload` bytes from `src:sport` to `dst:dport`.
fn udp(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16, payload: usize) -> Vec<u8> {
    let tot = 28 + payload;
    let mut p = vec![0u8; tot];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(tot as u16).to_be_bytes());
    p[9] = 17;
    p[12..16].copy_from_slice(&src);
    p[16..20].copy_from_slice(&dst);
    p[20..22].copy_from_slice(&sport.to_be_bytes());
    p[22..24].copy_from_slice(&dport.to_be_bytes());
    p
}

#[test]
fn a_probe_and_its_echo_are_udp_of_no_flow_and_no_group() {
    // Whatever the number of flows, a probe's port is none of theirs, and its echo address
    // is no group's (the element gives it the path's own RTT).
    let probe = udp(
        addr::SENDER,
        addr::PROBE_RECEIVER,
        addr::PROBE_PORT_BASE,
        addr::PROBE_PORT,
        64,
    );
    let p = parse(&probe, addr::MAX_FLOWS);
    assert!(p.dir == Dir::Data && p.udp && !p.tcp);
    assert_eq!((p.flow, p.group), (None, None));
    let echo = udp(
        addr::PROBE_RECEIVER,
        addr::SENDER,
        addr::PROBE_PORT,
        addr::PROBE_PORT_BASE,
        64,
    );
    let e = parse(&echo, addr::MAX_FLOWS);
    assert!(e.dir == Dir::Ack && e.udp && !e.tcp);
    assert_eq!((e.flow, e.group), (None, None));
    // A TCP segment is not UDP.
    let t = tcp(
        addr::SENDER,
        addr::receiver(0),
        addr::FLOW_PORT_BASE,
        addr::RECEIVER_PORT,
        0x10,
        100,
    );
    assert!(!parse(&t, 1).udp);
}
