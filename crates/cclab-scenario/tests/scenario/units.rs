//! Units (rates, times, sizes, loss, buffers, their formatting), controller names, and the
//! defaults and typed values of a loaded scenario.

use cclab_scenario::*;

use crate::common::*;
use cclab_scenario::units::{
    fmt_rate, fmt_size, fmt_time, parse_loss_str, parse_rate, parse_size, parse_time,
};

#[test]
fn rate_units_bits() {
    assert_eq!(parse_rate("100mbit"), Ok(100_000_000));
    assert_eq!(parse_rate("10gbit"), Ok(10_000_000_000));
    assert_eq!(parse_rate("1.5gbit"), Ok(1_500_000_000));
    assert_eq!(parse_rate("500kbit"), Ok(500_000));
    assert_eq!(parse_rate("9600bit"), Ok(9600));
    assert_eq!(parse_rate("1tbit"), Ok(1_000_000_000_000));
    assert_eq!(parse_rate("100mbps"), Ok(100_000_000));
    assert_eq!(parse_rate("100Mbps"), Ok(100_000_000));
    assert_eq!(parse_rate("100MBPS"), Ok(100_000_000));
    assert_eq!(parse_rate("2gbps"), Ok(2_000_000_000));
    assert_eq!(parse_rate("64kbps"), Ok(64_000));
    assert_eq!(parse_rate("300bps"), Ok(300));
    assert_eq!(parse_rate("100 Mbit"), Ok(100_000_000));
    assert_eq!(parse_rate(" 100mbit/s "), Ok(100_000_000));
    assert_eq!(parse_rate("1e2mbit"), Ok(100_000_000));
    assert_eq!(parse_rate("0.1mbit"), Ok(100_000));
}

#[test]
fn rate_units_bytes() {
    assert_eq!(parse_rate("12.5MB/s"), Ok(100_000_000));
    assert_eq!(parse_rate("1kB/s"), Ok(8_000));
    assert_eq!(parse_rate("1KB/s"), Ok(8_000));
    assert_eq!(parse_rate("1GB/s"), Ok(8_000_000_000));
    assert_eq!(parse_rate("100B/s"), Ok(800));
    assert_eq!(parse_rate("1MiB/s"), Ok(8 * 1024 * 1024));
}

#[test]
fn rate_rejects_bad_input() {
    for (text, needle) in [
        ("100", "needs a unit"),
        ("100mbps/s", "unknown rate unit \"mbps/s\""),
        ("100MBps", "ambiguous"),
        ("100mb/s", "ambiguous"),
        ("100mb", "unknown rate unit"),
        ("fast", "not a rate"),
        ("", "empty rate"),
        ("-5mbit", "positive"),
        ("0mbit", "positive"),
        ("0.0001bit", "positive"),
        ("1e30gbit", "too large"),
        ("inf mbit", "not a rate"),
        ("nan", "not a rate"),
    ] {
        let e = parse_rate(text).expect_err(text);
        assert!(e.contains(needle), "{text}: {e}");
    }
}

#[test]
fn time_units() {
    assert_eq!(parse_time("10s"), Ok(10_000_000_000));
    assert_eq!(parse_time("100ms"), Ok(100_000_000));
    assert_eq!(parse_time("1.1s"), Ok(1_100_000_000));
    assert_eq!(parse_time("500us"), Ok(500_000));
    assert_eq!(parse_time("500µs"), Ok(500_000));
    assert_eq!(parse_time("250ns"), Ok(250));
    assert_eq!(parse_time("2.5MS"), Ok(2_500_000));
    assert_eq!(parse_time("0"), Ok(0));
    assert_eq!(parse_time("0s"), Ok(0));
    assert_eq!(parse_time("0.5ns"), Ok(1)); // rounds to the nearest ns
    for (text, needle) in [
        ("10", "needs a unit"),
        ("10min", "unknown time unit"),
        ("-1s", "negative"),
        ("s", "not a time"),
    ] {
        let e = parse_time(text).expect_err(text);
        assert!(e.contains(needle), "{text}: {e}");
    }
}

#[test]
fn size_units() {
    assert_eq!(parse_size("25mb"), Ok(25_000_000));
    assert_eq!(parse_size("25MB"), Ok(25_000_000));
    assert_eq!(parse_size("256kb"), Ok(256_000));
    assert_eq!(parse_size("1gb"), Ok(1_000_000_000));
    assert_eq!(parse_size("1.5kb"), Ok(1_500));
    assert_eq!(parse_size("64kib"), Ok(65_536));
    assert_eq!(parse_size("1MiB"), Ok(1_048_576));
    assert_eq!(parse_size("1gib"), Ok(1 << 30));
    assert_eq!(parse_size("1500b"), Ok(1500));
    assert_eq!(parse_size("1500"), Ok(1500));
    assert_eq!(parse_size("3 bytes"), Ok(3));
    for (text, needle) in [
        ("25mbit", "unknown size unit"),
        ("-1kb", "negative"),
        ("kb", "not a size"),
    ] {
        let e = parse_size(text).expect_err(text);
        assert!(e.contains(needle), "{text}: {e}");
    }
}

#[test]
fn loss_units() {
    assert_eq!(parse_loss_str("1%"), Ok(0.01));
    assert_eq!(parse_loss_str("0.1%"), Ok(0.001)); // exact: no 0.1/100 rounding error
    assert_eq!(parse_loss_str("0.01"), Ok(0.01));
    assert_eq!(parse_loss_str("0%"), Ok(0.0));
    assert_eq!(parse_loss_str("99.9%"), Ok(0.999));
    for (text, needle) in [
        ("100%", "below 100%"),
        ("1", "write \"1%\""),
        ("0.5", "write \"50%\" if that is meant, or \"0.5%\""),
        ("-1%", "negative"),
        ("1 percent", "unknown loss unit"),
    ] {
        let e = parse_loss_str(text).expect_err(text);
        assert!(e.contains(needle), "{text}: {e}");
    }
}

#[test]
fn buffer_units() {
    assert_eq!(Buffer::parse("1bdp"), Ok(Buffer::Bdp(1.0)));
    assert_eq!(Buffer::parse("0.5BDP"), Ok(Buffer::Bdp(0.5)));
    assert_eq!(Buffer::parse("100p"), Ok(Buffer::Packets(100)));
    assert_eq!(Buffer::parse("100pkt"), Ok(Buffer::Packets(100)));
    assert_eq!(Buffer::parse("100 packets"), Ok(Buffer::Packets(100)));
    assert_eq!(Buffer::parse("256kb"), Ok(Buffer::Bytes(256_000)));
    assert_eq!(Buffer::parse("64KiB"), Ok(Buffer::Bytes(65_536)));
    for (text, needle) in [
        ("100", "needs a unit"),
        ("1.5pkt", "whole number"),
        ("0bdp", "positive"),
        ("0pkt", "positive"),
        ("1xyz", "unknown buffer unit"),
    ] {
        let e = Buffer::parse(text).expect_err(text);
        assert!(e.contains(needle), "{text}: {e}");
    }
    // Bytes on a link: 100mbit x 20ms = 250 kB; packets are mss + 52 bytes.
    let link = one(BASE).link;
    assert_eq!(link.bdp_bytes(), 250_000);
    assert_eq!(link.packet_bytes(), 1500);
    assert_eq!(Buffer::Bdp(0.5).bytes(&link), 125_000);
    assert_eq!(Buffer::Packets(100).bytes(&link), 150_000);
    assert_eq!(Buffer::Bytes(4000).bytes(&link), 4000);
    assert_eq!(
        Buffer::Bdp(0.000001).bytes(&link),
        1500,
        "never below one packet"
    );
    assert_eq!(link.buffer, Buffer::Bdp(1.0), "default buffer");
    assert_eq!(link.buffer_bytes(), 250_000);
}

#[test]
fn formatters_round_trip() {
    for bps in [1, 999, 1000, 1_500_000_000, 100_000_000, 12_345_678] {
        assert_eq!(parse_rate(&fmt_rate(bps)), Ok(bps));
    }
    for ns in [0, 1, 1500, 100_000_000, 10_000_000_000, 1_234_567_891] {
        assert_eq!(parse_time(&fmt_time(ns)), Ok(ns));
    }
    for b in [1, 1448, 25_000_000, 1_048_576] {
        assert_eq!(parse_size(&fmt_size(b)), Ok(b));
    }
    assert_eq!(fmt_rate(1_500_000_000), "1500mbit");
    assert_eq!(fmt_time(100_000_000), "100ms");
    assert_eq!(fmt_size(25_000_000), "25mb");
}

#[test]
fn cc_names() {
    assert_eq!(canonical_cc("NewReno"), Some("reno"));
    assert_eq!(canonical_cc("cubic"), Some("cubic"));
    assert_eq!(canonical_cc(" BBR "), Some("bbr"));
    assert_eq!(canonical_cc("vegas"), None);
}

#[test]
fn defaults() {
    let s = one(BASE);
    assert_eq!(s.name, "t");
    assert_eq!(s.duration_ns, Some(10_000_000_000));
    assert_eq!(s.seed, 1);
    assert_eq!(s.description, None);
    assert_eq!(s.link.path.rate_bps, 100_000_000.0);
    assert_eq!(s.link.path.rtt_ns, 20_000_000);
    assert_eq!(
        (s.link.path.loss, s.link.path.ack_loss, s.link.mss),
        (0.0, 0.0, 1448)
    );
    assert_eq!(
        s.flows,
        vec![FlowSpec {
            cc: "cubic".into(),
            cc_params: vec![],
            count: 1,
            start_ns: 0,
            size_bytes: None,
            rtt_extra_ns: 0,
            init_cwnd: 10,
            ecn: false,
            accecn: false,
        }]
    );
    assert_eq!(s.reference, None);
    assert_eq!(s.run_limit_ns(), 10_000_000_000);
}

#[test]
fn sized_flows_need_no_duration() {
    let s = one("name = \"x\"\n[link]\nrate = \"1gbit\"\nrtt = \"1ms\"\n[[flows]]\ncc = \"newreno\"\nsize = \"25mb\"\n");
    assert_eq!(s.duration_ns, None);
    assert_eq!(s.run_limit_ns(), SIZED_RUN_CAP_NS);
    assert_eq!(s.flows[0].cc, "reno");
    assert_eq!(s.flows[0].size_bytes, Some(25_000_000));
}

#[test]
fn loss_as_number_and_percent() {
    assert_eq!(one(&with_link("loss = 0.02")).link.path.loss, 0.02);
    assert_eq!(one(&with_link("loss = \"2%\"")).link.path.loss, 0.02);
    assert_eq!(one(&with_link("loss = 0")).link.path.loss, 0.0);
    assert_eq!(
        one(&with_link("ack_loss = \"0.5%\"")).link.path.ack_loss,
        0.005
    );
}
