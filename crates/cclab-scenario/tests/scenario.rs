//! Tests of the scenario format: units, errors, matrix expansion, overrides, round trip, and a
//! garbage-input run that must never panic.

use cclab_scenario::units::{
    fmt_rate, fmt_size, fmt_time, parse_loss_str, parse_rate, parse_size, parse_time,
};
use cclab_scenario::*;
use serde_json::json;

const BASE: &str = r#"name = "t"
duration = "10s"
[link]
rate = "100mbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
"#;

fn load(text: &str) -> ScenarioFile {
    ScenarioFile::from_str(text, "t.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn one(text: &str) -> Scenario {
    let pts = load(text).expand().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(pts.len(), 1);
    pts.into_iter().next().unwrap().scenario
}

/// Loads (and expands) `text`, expecting an error; returns its one-line display.
fn error_of(text: &str) -> (ScenarioError, String) {
    let e = match ScenarioFile::from_str(text, "t.toml") {
        Err(e) => e,
        Ok(f) => match f.expand() {
            Err(e) => e,
            Ok(_) => panic!("expected an error for:\n{text}"),
        },
    };
    let s = e.to_string();
    assert!(!s.contains('\n'), "not one line: {s}");
    (e, s)
}

/// The error names the file, the line and the key, and says `needle`.
fn assert_error(text: &str, line: u32, key: &str, needle: &str) -> ScenarioError {
    let (e, s) = error_of(text);
    assert!(
        s.starts_with(&format!("t.toml:{line}:")),
        "wrong file/line in: {s}"
    );
    assert_eq!(e.line, Some(line), "{s}");
    assert!(s.contains(key), "key {key:?} missing in: {s}");
    assert!(s.contains(needle), "{needle:?} missing in: {s}");
    e
}

/// BASE with `line` replaced by `with` (1-based), or `with` appended if `line` is 0.
fn edit(line: usize, with: &str) -> String {
    let mut lines: Vec<String> = BASE.lines().map(String::from).collect();
    if line == 0 {
        lines.push(with.to_string());
    } else {
        lines[line - 1] = with.to_string();
    }
    lines.join("\n") + "\n"
}

/// BASE with `extra` lines added at the end of [link].
fn with_link(extra: &str) -> String {
    BASE.replace("rtt = \"20ms\"\n", &format!("rtt = \"20ms\"\n{extra}\n"))
}

/// BASE with `extra` lines added at the top (after name and duration).
fn with_top(extra: &str) -> String {
    BASE.replace(
        "duration = \"10s\"\n",
        &format!("duration = \"10s\"\n{extra}\n"),
    )
}

// ------------------------------------------------------------------------------------------
// Units
// ------------------------------------------------------------------------------------------

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

// ------------------------------------------------------------------------------------------
// Defaults and typed values
// ------------------------------------------------------------------------------------------

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

// ------------------------------------------------------------------------------------------
// Errors: one line, with file, line, key, the problem and what is allowed
// ------------------------------------------------------------------------------------------

#[test]
fn error_toml_syntax() {
    let e = assert_error(&edit(2, "duration = 10s"), 2, "duration", "invalid TOML");
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert!(e.to_string().contains("duration = \"10s\""), "hint: {e}");
    assert_error(&edit(3, "[link"), 3, "t.toml:3", "invalid TOML");
    assert_error(&edit(0, "cc = \"bbr\""), 8, "cc", "duplicate key");
}

#[test]
fn error_unknown_key_with_suggestion() {
    let e = assert_error(
        &edit(4, "rat = \"100mbit\""),
        4,
        "link.rat",
        "did you mean rate?",
    );
    assert_eq!(e.kind, ErrorKind::UnknownKey);
    assert_error(
        &edit(7, "cc = \"cubic\"\nsiez = \"1mb\""),
        8,
        "flows.0.siez",
        "did you mean size?",
    );
    assert_error(
        &edit(2, "duraton = \"10s\""),
        2,
        "duraton",
        "did you mean duration?",
    );
    assert_error(
        &with_top("loss = \"1%\""),
        3,
        "loss",
        "did you mean loss under [link]?",
    );
    assert_error(
        &with_link("bandwidth = \"1gbit\""),
        6,
        "link.bandwidth",
        "did you mean rate?",
    );
    assert_error(
        &with_link("zzzzzz = 1"),
        6,
        "link.zzzzzz",
        "allowed here: rate, rtt, buffer, loss, loss_burst, ack_loss, mss",
    );
    assert_error(&edit(6, "[[flow]]"), 6, "flow", "did you mean flows?");
}

#[test]
fn error_bad_unit() {
    let e = assert_error(
        &edit(4, "rate = \"100mbps/s\""),
        4,
        "link.rate = \"100mbps/s\"",
        "unknown rate unit \"mbps/s\" (use e.g. 100mbit",
    );
    assert_eq!(e.kind, ErrorKind::BadValue);
    assert_eq!(e.column, Some(8));
    assert_error(
        &edit(5, "rtt = \"20mins\""),
        5,
        "link.rtt",
        "unknown time unit",
    );
    assert_error(&edit(4, "rate = 100"), 4, "link.rate = 100", "\"100mbit\"");
    assert_error(
        &edit(2, "duration = 10"),
        2,
        "duration = 10",
        "needs a unit",
    );
    assert_error(&with_link("buffer = 100"), 6, "link.buffer", "\"100pkt\"");
    assert_error(
        &edit(7, "cc = \"cubic\"\nsize = \"25mbit\""),
        8,
        "flows.0.size",
        "unknown size unit",
    );
}

#[test]
fn error_wrong_type() {
    let e = assert_error(
        &edit(5, "rtt = true"),
        5,
        "link.rtt = true",
        "found a boolean",
    );
    assert_eq!(e.kind, ErrorKind::WrongType);
    assert_error(
        &with_link("mss = \"1448\""),
        6,
        "link.mss",
        "expected a whole number",
    );
    assert_error(&edit(1, "name = 5"), 1, "name = 5", "expected a string");
    assert_error(
        "name = \"t\"\nduration = \"1s\"\nlink = 5\n[[flows]]\ncc = \"bbr\"\n",
        3,
        "link = 5",
        "expected a table",
    );
    assert_error(
        &edit(3, "link = 5"),
        4,
        "rate",
        "did you mean rate under [link]?",
    );
    assert_error(&edit(6, "[flows]"), 6, "flows", "[[flows]]");
    assert_error(
        &with_top("reference = 3"),
        3,
        "reference",
        "expected a table",
    );
    assert_error(
        &edit(1, "name = [\"a\", \"b\"]"),
        1,
        "name",
        "cannot be a list",
    );
    assert_error(&with_link("loss = [[0, 1]]"), 6, "link.loss[0]", "nested");
}

#[test]
fn error_nonpositive_rate() {
    assert_error(&edit(4, "rate = \"-5mbit\""), 4, "link.rate", "positive");
    assert_error(&edit(4, "rate = \"0mbit\""), 4, "link.rate", "positive");
    assert_error(&edit(4, "rate = 0"), 4, "link.rate", "positive");
    assert_error(&edit(4, "rate = -3"), 4, "link.rate", "positive");
}

#[test]
fn error_zero_rtt() {
    assert_error(
        &edit(5, "rtt = \"0ms\""),
        5,
        "link.rtt",
        "rtt must be positive",
    );
    assert_error(&edit(5, "rtt = 0"), 5, "link.rtt", "rtt must be positive");
}

#[test]
fn error_loss_out_of_range() {
    assert_error(&with_link("loss = \"100%\""), 6, "link.loss", "below 100%");
    assert_error(&with_link("loss = 1"), 6, "link.loss = 1", "write \"1%\"");
    assert_error(&with_link("loss = 1.5"), 6, "link.loss", "write \"1.5%\"");
    assert_error(&with_link("loss = 150"), 6, "link.loss", "below 100%");
    assert_error(&with_link("loss = -0.1"), 6, "link.loss", "negative");
    assert_error(
        &with_link("ack_loss = \"-1%\""),
        6,
        "link.ack_loss",
        "negative",
    );
    assert_error(&with_link("loss = nan"), 6, "link.loss", "[0, 1)");
    assert_error(
        &with_link("loss = [0, \"1%\", \"120%\"]"),
        6,
        "link.loss[2] = \"120%\"",
        "below 100%",
    );
}

/// Issue #18: a bare loss of 0.05 or more is refused, naming both readings (netem's `loss
/// 0.5` is 0.5%, a probability of 0.5 is 50%); fractions below 0.05 and percentages stay.
#[test]
fn a_bare_loss_that_could_mean_a_percentage_is_refused() {
    for key in ["loss", "ack_loss"] {
        let e = assert_error(
            &with_link(&format!("{key} = 0.5")),
            6,
            &format!("link.{key} = 0.5"),
            "as a probability it is 50% of packets, while netem's \"loss 0.5\" means 0.5%; write \"50%\" if that is meant, or \"0.5%\"",
        );
        assert_eq!(e.kind, ErrorKind::BadValue);
        assert_error(&with_link(&format!("{key} = 0.05")), 6, key, "write \"5%\"");
        assert_error(
            &with_link(&format!("{key} = \"0.2\"")),
            6,
            key,
            "write \"20%\"",
        );
    }
    // In a sweep and from --set too.
    assert_error(
        &with_link("loss = [0, 0.01, 0.1]"),
        6,
        "link.loss[2] = 0.1",
        "\"10%\"",
    );
    let e = load(BASE)
        .apply_override("link.loss=0.5")
        .unwrap_err()
        .to_string();
    assert!(e.contains("write \"50%\" if that is meant"), "{e}");
    // What stays: fractions below 0.05, and every percentage.
    for (v, p) in [
        ("0.049", 0.049),
        ("0.01", 0.01),
        ("\"50%\"", 0.5),
        ("\"0.5%\"", 0.005),
    ] {
        assert_eq!(
            one(&with_link(&format!("loss = {v}"))).link.path.loss,
            p,
            "{v}"
        );
    }
    // A scenario written out with a large loss reads back the same.
    let s = one(&with_link("loss = \"12.5%\"\nack_loss = \"50%\""));
    let back = one(&s.to_toml_string());
    assert_eq!((back.link.path.loss, back.link.path.ack_loss), (0.125, 0.5));
}

#[test]
fn error_missing_or_empty_flows() {
    let no_flows = "name = \"t\"\nduration = \"10s\"\n[link]\nrate = \"1gbit\"\nrtt = \"1ms\"\n";
    let e = assert_error(no_flows, 1, "flows", "at least one [[flows]]");
    assert_eq!(e.kind, ErrorKind::MissingKey);
    assert_error(
        &format!("flows = []\n{no_flows}"),
        1,
        "flows = []",
        "at least one [[flows]]",
    );
    assert_error(
        &edit(7, "count = 2"),
        6,
        "flows.0.cc",
        "missing required key",
    );
}

#[test]
fn error_missing_required_keys() {
    assert_error(&edit(1, ""), 1, "name", "missing required key");
    assert_error(&edit(4, ""), 3, "link.rate", "missing required key");
    assert_error(&edit(5, ""), 3, "link.rtt", "missing required key");
    let no_link = "name = \"t\"\nduration = \"1s\"\n[[flows]]\ncc = \"bbr\"\n";
    assert_error(no_link, 1, "link", "missing required table [link]");
}

#[test]
fn error_count_and_init_cwnd_zero() {
    assert_error(
        &edit(0, "count = 0"),
        8,
        "flows.0.count = 0",
        "between 1 and",
    );
    assert_error(
        &edit(0, "init_cwnd = 0"),
        8,
        "flows.0.init_cwnd = 0",
        "between 1 and",
    );
    assert_error(&edit(0, "count = -1"), 8, "flows.0.count", "between 1 and");
    assert_error(
        &edit(0, "count = 1.5"),
        8,
        "flows.0.count",
        "expected a whole number",
    );
}

#[test]
fn error_mss_out_of_range() {
    assert_error(
        &with_link("mss = 100"),
        6,
        "link.mss = 100",
        "between 536 and 9000",
    );
    assert_error(
        &with_link("mss = 65536"),
        6,
        "link.mss",
        "between 536 and 9000",
    );
}

#[test]
fn error_bulk_flow_without_duration() {
    let e = assert_error(&edit(2, ""), 6, "flows.0", "needs a duration");
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    // Sized group 0 is fine; bulk group 1 is named.
    let text = "name = \"t\"\n[link]\nrate = \"1gbit\"\nrtt = \"1ms\"\n[[flows]]\ncc = \"bbr\"\nsize = \"1mb\"\n[[flows]]\ncc = \"bbr\"\n";
    assert_error(text, 8, "flows.1", "needs a duration");
}

#[test]
fn error_unknown_cc() {
    let e = assert_error(
        &edit(7, "cc = \"vegas\""),
        7,
        "flows.0.cc = \"vegas\"",
        "unknown congestion control",
    );
    let s = e.to_string();
    assert!(
        s.contains("reno") && s.contains("cubic") && s.contains("bbr") && s.contains("newreno"),
        "{s}"
    );
    assert_error(
        &edit(7, "cc = [\"cubic\", \"vegas\"]"),
        7,
        "flows.0.cc[1]",
        "the simulator has: reno",
    );
}

#[test]
fn error_empty_list() {
    assert_error(&with_link("loss = []"), 6, "link.loss = []", "empty list");
    assert_error(&edit(7, "cc = []"), 7, "flows.0.cc", "empty list");
}

#[test]
fn error_cross_key_rules() {
    // A flow that starts after the run ends; names the matrix point when there is a matrix.
    assert_error(
        &edit(0, "start = \"10s\""),
        8,
        "flows.0.start",
        "start must be earlier",
    );
    let e = assert_error(
        &edit(0, "start = [\"1s\", \"20s\"]"),
        8,
        "flows.0.start",
        "matrix point 2 of 2: flows.start=20",
    );
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    // A byte buffer smaller than one packet.
    assert_error(
        &with_link("buffer = \"1kb\""),
        6,
        "link.buffer",
        "cannot hold one packet of 1500 bytes",
    );
}

#[test]
fn error_io_names_path() {
    let e = ScenarioFile::from_file("/nonexistent/dir/x.toml").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Io);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/dir/x.toml: cannot read"),
        "{e}"
    );
}

// ------------------------------------------------------------------------------------------
// Matrix expansion
// ------------------------------------------------------------------------------------------

const MATRIX: &str = r#"name = "m"
duration = "5s"
seed = [1, 2]
[link]
rate = ["10mbit", "100mbit"]
rtt = "10ms"
loss = [0, "1%"]
[[flows]]
cc = ["cubic", "bbr"]
"#;

#[test]
fn matrix_order_last_key_fastest() {
    let f = load(MATRIX);
    assert_eq!(
        f.sweep_keys(),
        ["seed", "link.rate", "link.loss", "flows.cc"]
    );
    assert_eq!(f.matrix_len(), 16);
    let pts = f.expand().unwrap();
    assert_eq!(pts.len(), 16);
    let labels: Vec<String> = pts.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels[0],
        "seed=1,link.rate=10000000,link.loss=0.0,flows.cc=cubic"
    );
    assert_eq!(
        labels[1],
        "seed=1,link.rate=10000000,link.loss=0.0,flows.cc=bbr"
    );
    assert_eq!(
        labels[2],
        "seed=1,link.rate=10000000,link.loss=0.01,flows.cc=cubic"
    );
    assert_eq!(
        labels[4],
        "seed=1,link.rate=100000000,link.loss=0.0,flows.cc=cubic"
    );
    assert_eq!(
        labels[15],
        "seed=2,link.rate=100000000,link.loss=0.01,flows.cc=bbr"
    );
    for (i, p) in pts.iter().enumerate() {
        assert_eq!(p.index, i);
    }
    let p = &pts[13]; // 13 = 0b1101: seed=2, rate=100mbit, loss=0, cc=bbr
    assert_eq!(
        serde_json::Value::Object(p.params.clone()),
        json!({"seed": 2, "link.rate": 100_000_000, "link.loss": 0.0, "flows.cc": "bbr"})
    );
    assert_eq!(
        p.params.keys().collect::<Vec<_>>(),
        ["seed", "link.rate", "link.loss", "flows.cc"]
    );
    assert_eq!(p.scenario.seed, 2);
    assert_eq!(p.scenario.link.path.rate_bps, 100_000_000.0);
    assert_eq!(p.scenario.link.path.loss, 0.0);
    assert_eq!(p.scenario.flows[0].cc, "bbr");
    // Every point is distinct.
    let mut uniq = labels.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), 16);
}

#[test]
fn matrix_file_order_decides() {
    // Same keys, other order in the file: loss now varies slowest within [link].
    let text = MATRIX.replace(
        "rate = [\"10mbit\", \"100mbit\"]\nrtt = \"10ms\"\nloss = [0, \"1%\"]\n",
        "loss = [0, \"1%\"]\nrtt = \"10ms\"\nrate = [\"10mbit\", \"100mbit\"]\n",
    );
    assert_eq!(
        load(&text).sweep_keys(),
        ["seed", "link.loss", "link.rate", "flows.cc"]
    );
}

#[test]
fn matrix_params_units_and_groups() {
    let text = r#"name = "g"
duration = ["1s", "500ms"]
[link]
rate = "1gbit"
rtt = ["10ms", "100ms"]
buffer = ["0.5bdp", "100pkt", "64kb"]
[[flows]]
cc = "cubic"
size = ["10kb", "1mib"]
[[flows]]
cc = "bbr"
start = ["0s", "250ms"]
"#;
    let f = load(text);
    assert_eq!(
        f.sweep_keys(),
        [
            "duration",
            "link.rtt",
            "link.buffer",
            "flows.0.size",
            "flows.1.start"
        ]
    );
    let pts = f.expand().unwrap();
    assert_eq!(pts.len(), 2 * 2 * 3 * 2 * 2);
    let last = pts.last().unwrap();
    assert_eq!(
        serde_json::Value::Object(last.params.clone()),
        json!({"duration": 0.5, "link.rtt": 0.1, "link.buffer": "64kb", "flows.0.size": 1048576, "flows.1.start": 0.25})
    );
    assert_eq!(last.scenario.link.buffer, Buffer::Bytes(64_000));
    assert_eq!(last.scenario.flows[1].start_ns, 250_000_000);
    assert_eq!(pts[0].params["link.buffer"], json!("0.5bdp"));
}

#[test]
fn no_lists_means_one_point_with_empty_params() {
    let pts = load(BASE).expand().unwrap();
    assert_eq!(pts.len(), 1);
    assert!(pts[0].params.is_empty());
    assert_eq!(pts[0].label(), "");
    assert!(load(BASE).sweep_keys().is_empty());
}

#[test]
fn matrix_too_large_is_an_error() {
    let list = format!(
        "[{}]",
        (1..=100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let text = with_top(&format!("seed = {list}")).replace(
        "cc = \"cubic\"",
        &format!("cc = \"cubic\"\ncount = {list}\ninit_cwnd = {list}"),
    );
    let f = load(&text);
    assert_eq!(f.matrix_len(), 1_000_000);
    let e = f.expand().unwrap_err();
    assert!(e.to_string().contains("at most 100000"), "{e}");
}

#[test]
fn resolved_map_has_every_key() {
    let p = &load(MATRIX).expand().unwrap()[3];
    let r = p.resolved();
    let keys: Vec<&str> = r.keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "name",
            "duration",
            "seed",
            "link.rate",
            "link.rtt",
            "link.buffer",
            "link.buffer_bytes",
            "link.bdp_bytes",
            "link.packet_bytes",
            "link.loss",
            "link.loss_burst",
            "link.ack_loss",
            "link.mss",
            "link.ecn_threshold",
            "link.loss_unit",
            "link.aqm",
            "link.policer",
            "link.shaper",
            "link.jitter",
            "link.reorder",
            "link.ack_aggregation",
            "hosts.latency",
            "hosts.jitter",
            "hosts.wake",
            "hosts.wake_idle",
            "hosts.shared_cpu",
            "hosts.hz",
            "hosts.tcp_rmem",
            "hosts.tcp_wmem",
            "hosts.rcvbuf",
            "hosts.sndbuf",
            "hosts.init_cwnd",
            "hosts.init_rwnd",
            "hosts.rto_min",
            "hosts.slow_start_after_idle",
            "hosts.notsent_lowat",
            "hosts.pacing",
            "hosts.probe_start",
            "hosts.profile",
            "flows.cc",
            "flows.count",
            "flows.start",
            "flows.size",
            "flows.rtt_extra",
            "flows.init_cwnd",
            "flows.ecn",
            "flows.cc_params.lt_bw"
        ]
    );
    assert_eq!(r["duration"], json!(5.0));
    assert_eq!(r["link.rate"], json!(10_000_000));
    assert_eq!(r["link.rtt"], json!(0.01));
    assert_eq!(r["link.buffer"], json!("1bdp"));
    assert_eq!(r["link.buffer_bytes"], json!(12_500));
    assert_eq!(r["flows.size"], json!(null));
    // Every swept param appears in the resolved map with the same value.
    for (k, v) in &p.params {
        assert_eq!(&r[k], v, "{k}");
    }
}

// ------------------------------------------------------------------------------------------
// Overrides
// ------------------------------------------------------------------------------------------

#[test]
fn override_scalar() {
    let mut f = load(BASE);
    f.apply_override("link.loss=1%").unwrap();
    f.apply_override("link.rate = 1gbit").unwrap();
    f.apply_override("duration=\"30s\"").unwrap();
    f.apply_override("seed=7").unwrap();
    f.apply_override("flows.cc=bbr").unwrap();
    f.apply_override("link.loss=0.02").unwrap(); // replaces the earlier override
    let s = &f.expand().unwrap()[0].scenario;
    assert_eq!(s.link.path.loss, 0.02);
    assert_eq!(s.link.path.rate_bps, 1_000_000_000.0);
    assert_eq!(s.duration_ns, Some(30_000_000_000));
    assert_eq!(s.seed, 7);
    assert_eq!(s.flows[0].cc, "bbr");
}

#[test]
fn override_list_makes_a_matrix() {
    let mut f = load(BASE);
    f.apply_override("link.loss=[0,\"1%\"]").unwrap();
    f.apply_override("flows.cc=[reno, bbr]").unwrap(); // bare words in a list
    assert_eq!(f.sweep_keys(), ["link.loss", "flows.cc"]);
    let pts = f.expand().unwrap();
    assert_eq!(
        pts.iter().map(|p| p.label()).collect::<Vec<_>>(),
        [
            "link.loss=0.0,flows.cc=reno",
            "link.loss=0.0,flows.cc=bbr",
            "link.loss=0.01,flows.cc=reno",
            "link.loss=0.01,flows.cc=bbr"
        ]
    );
    // A key the file lacked goes to the end of its table; a replaced key keeps its place.
    f.apply_override("link.rate=[1gbit,10gbit]").unwrap();
    assert_eq!(f.sweep_keys(), ["link.rate", "link.loss", "flows.cc"]);
}

#[test]
fn override_per_group() {
    let text = format!("{BASE}[[flows]]\ncc = \"reno\"\nstart = \"1s\"\n");
    let mut f = load(&text);
    f.apply_override("flows.1.cc=bbr").unwrap();
    f.apply_override("flows.count=3").unwrap();
    let s = &f.expand().unwrap()[0].scenario;
    assert_eq!(s.flows[0].cc, "cubic");
    assert_eq!(s.flows[1].cc, "bbr");
    assert_eq!((s.flows[0].count, s.flows[1].count), (3, 3));
    assert_eq!(s.total_flows(), 6);
    f.apply_override("flows.0.size=[1mb, 2mb]").unwrap();
    assert_eq!(f.sweep_keys(), ["flows.0.size"]);
    let e = f.apply_override("flows.2.cc=bbr").unwrap_err();
    assert!(e.to_string().contains("no flow group 2"), "{e}");
}

#[test]
fn override_errors() {
    let mut f = load(BASE);
    let cases = [
        ("link.los=1%", ErrorKind::UnknownKey, "did you mean loss?"),
        ("flows.ccc=bbr", ErrorKind::UnknownKey, "did you mean cc?"),
        ("foo=1", ErrorKind::UnknownKey, "unknown key"),
        ("reference.x=1", ErrorKind::UnknownKey, "unknown key"),
        ("flows.0.bogus=1", ErrorKind::UnknownKey, "unknown key"),
        ("link.loss", ErrorKind::BadOverride, "expected key=value"),
        ("link.loss=", ErrorKind::BadOverride, "empty value"),
        (
            "link.loss=[0, \"1%]",
            ErrorKind::BadOverride,
            "not valid TOML",
        ),
        ("link.loss=2", ErrorKind::BadValue, "write \"2%\""),
        (
            "flows.cc=vegas",
            ErrorKind::BadValue,
            "the simulator has: reno",
        ),
        ("link.rate=100", ErrorKind::BadValue, "needs a unit"),
        ("name=[a,b]", ErrorKind::WrongType, "cannot be a list"),
    ];
    for (spec, kind, needle) in cases {
        let e = f.apply_override(spec).expect_err(spec);
        let s = e.to_string();
        assert_eq!(e.kind, kind, "{spec}: {s}");
        assert!(s.starts_with("t.toml: --set "), "{s}");
        assert!(s.contains(needle), "{spec}: {s}");
        assert!(!s.contains('\n'));
    }
    // Failed overrides leave the file unchanged.
    assert_eq!(f.expand().unwrap()[0].scenario, one(BASE));
    let e = f.apply_override("link.loss=2").unwrap_err();
    assert_eq!(e.to_string(), "t.toml: --set link.loss=2: link.loss = 2: a bare 2 is not a probability (it would be 200% of packets); write \"2%\" (netem's reading) or a fraction below 1 such as 0.01 for 1%");
}

// ------------------------------------------------------------------------------------------
// Round trip of a realistic file
// ------------------------------------------------------------------------------------------

const REALISTIC: &str = r#"# BBR vs CUBIC on a shallow-buffered WAN path
name = "bbr-vs-cubic-wan"
description = "Two flows share a 100 Mbit/s, 40 ms path; does BBR starve CUBIC?"
duration = "60s"
seed = 42

[link]
rate = "100mbit"
rtt = "40ms"
buffer = "0.5bdp"
loss = "0.01%"
ack_loss = 0
mss = 1448

[[flows]]
cc = "cubic"
count = 2
start = "0s"
init_cwnd = 10

[[flows]]
cc = "bbr"
start = "5s"
rtt_extra = "10ms"
size = "250MB"

[reference]
source = "Hock et al., ICNP 2017, fig. 3"
bbr_share = 0.85
runs = [1, 2, 3]
published = 2017-10-10
"#;

#[test]
fn realistic_file_round_trip() {
    let f = load(REALISTIC);
    assert_eq!(f.name(), "bbr-vs-cubic-wan");
    assert_eq!(f.flow_groups(), 2);
    let s = one(REALISTIC);
    let expected = Scenario {
        name: "bbr-vs-cubic-wan".into(),
        description: Some(
            "Two flows share a 100 Mbit/s, 40 ms path; does BBR starve CUBIC?".into(),
        ),
        duration_ns: Some(60_000_000_000),
        seed: 42,
        link: LinkSpec {
            path: cclab_path::LinkDesc {
                rate_bps: 100e6,
                rtt_ns: 40_000_000,
                loss: 0.0001,
                ack_loss: 0.0,
                ecn_threshold_ns: None,
                loss_burst: 1.0,
                ..Default::default()
            },
            buffer: Buffer::Bdp(0.5),
            mss: 1448,
        },
        hosts: HostsSpec::default(),
        flows: vec![
            FlowSpec {
                cc: "cubic".into(),
                cc_params: vec![],
                count: 2,
                start_ns: 0,
                size_bytes: None,
                rtt_extra_ns: 0,
                init_cwnd: 10,
                ecn: false,
            },
            FlowSpec {
                cc: "bbr".into(),
                cc_params: vec![],
                count: 1,
                start_ns: 5_000_000_000,
                size_bytes: Some(250_000_000),
                rtt_extra_ns: 10_000_000,
                init_cwnd: 10,
                ecn: false,
            },
        ],
        reference: Some(std::sync::Arc::new(json!({
            "source": "Hock et al., ICNP 2017, fig. 3",
            "bbr_share": 0.85,
            "runs": [1, 2, 3],
            "published": "2017-10-10"
        }))),
    };
    assert_eq!(s, expected);
    assert_eq!(s.link.buffer_bytes(), 250_000);
    assert_eq!(s.flow_rtt_ns(1), Some(50_000_000));
    assert_eq!(s.total_flows(), 3);
    let r = s.resolved();
    assert!(r.contains_key("flows.0.cc") && r.contains_key("flows.1.rtt_extra"));
    // Written back out, it parses to the same scenario.
    let text = s.to_toml_string();
    let again = one(&text);
    assert_eq!(again, expected, "{text}");
    assert_eq!(again.to_toml_string(), text);
    // And through a real file.
    let dir = std::env::temp_dir().join(format!("cclab-scenario-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wan.toml");
    std::fs::write(&path, REALISTIC).unwrap();
    let from_file = Scenario::from_file(&path).unwrap();
    assert_eq!(from_file.origin(), path.display().to_string());
    assert_eq!(from_file.expand().unwrap()[0].scenario, expected);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn errors_name_the_file_given() {
    let e = ScenarioFile::from_str(&edit(4, "rate = \"100mbps/s\""), "seeds/x.toml").unwrap_err();
    assert_eq!(
        e.to_string(),
        "seeds/x.toml:4:8: link.rate = \"100mbps/s\": unknown rate unit \"mbps/s\" (use e.g. 100mbit, 10gbit, 1.5gbit, 500kbit, 12.5MB/s)"
    );
}

// ------------------------------------------------------------------------------------------
// Garbage in, no panic out
// ------------------------------------------------------------------------------------------

/// xorshift64*: a tiny deterministic PRNG.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Runs everything on `text`; returns whether it parsed.
fn exercise(text: &str, overrides: &[&str]) -> bool {
    match ScenarioFile::from_str(text, "fuzz.toml") {
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n') && s.starts_with("fuzz.toml"), "{s}");
            false
        }
        Ok(mut f) => {
            for o in overrides {
                if let Err(e) = f.apply_override(o) {
                    assert!(!e.to_string().contains('\n'));
                }
            }
            if f.matrix_len() <= 1000 {
                match f.expand() {
                    Ok(pts) => {
                        for p in pts {
                            let _ = p.resolved();
                            let text = p.scenario.to_toml_string();
                            // A concrete scenario always re-parses to itself.
                            let again = ScenarioFile::from_str(&text, "again.toml")
                                .unwrap_or_else(|e| panic!("{e}\n{text}"));
                            assert_eq!(again.expand().unwrap()[0].scenario, p.scenario);
                        }
                    }
                    Err(e) => assert!(!e.to_string().contains('\n')),
                }
            }
            true
        }
    }
}

#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let tokens = [
        "name",
        "duration",
        "seed",
        "link",
        "flows",
        "rate",
        "rtt",
        "buffer",
        "loss",
        "ack_loss",
        "mss",
        "cc",
        "count",
        "start",
        "size",
        "rtt_extra",
        "init_cwnd",
        "reference",
        " = ",
        "\n",
        "[",
        "]",
        "[[",
        "]]",
        "{",
        "}",
        ",",
        ".",
        "\"",
        "'",
        "#",
        "\"1%\"",
        "\"100mbit\"",
        "\"10s\"",
        "\"bbr\"",
        "\"1bdp\"",
        "\"25mb\"",
        "0",
        "1",
        "-1",
        "1e400",
        "nan",
        "inf",
        "0.5",
        "9223372036854775807",
        "99999999999999999999",
        "true",
        "1979-05-27",
        "\"\"",
        "[]",
        "µ",
        "\u{0}",
        "\\",
        "\"\"\"",
        "=",
        " ",
        "0x10",
        "1_000",
    ];
    let overrides = [
        "link.loss=[0,1%]",
        "flows.cc=bbr",
        "duration=1s",
        "flows.0.size=1mb",
        "seed=[1,2,3]",
        "link.buffer=0.5bdp",
        "x=",
        "=",
        "flows.9.cc=bbr",
    ];
    // Token soup.
    for _ in 0..300 {
        let n = rng.below(40);
        let text: String = (0..n).map(|_| tokens[rng.below(tokens.len())]).collect();
        exercise(&text, &overrides[..rng.below(overrides.len())]);
    }
    // Mutations of valid files: delete, insert or replace a few characters.
    let seeds = [BASE, MATRIX, REALISTIC];
    let mut parsed = 0;
    for i in 0..600 {
        let mut chars: Vec<char> = seeds[i % seeds.len()].chars().collect();
        for _ in 0..if i % 2 == 0 { 1 } else { 1 + rng.below(4) } {
            if chars.is_empty() {
                break;
            }
            let at = rng.below(chars.len());
            let pool: Vec<char> = "abcdefghijklmnopqrstuvwxyz0123456789 =[]{}\"'#.,\n-%µ/_\\"
                .chars()
                .collect();
            match rng.below(3) {
                0 => {
                    chars.remove(at);
                }
                1 => chars.insert(at, pool[rng.below(pool.len())]),
                _ => chars[at] = pool[rng.below(pool.len())],
            }
        }
        let text: String = chars.into_iter().collect();
        parsed += exercise(&text, &overrides[..rng.below(overrides.len())]) as usize;
    }
    // Enough mutants stay valid that expansion and the round trip are exercised too.
    assert!(parsed > 60, "only {parsed} of 600 mutants parsed");
    eprintln!("{parsed} of 600 mutants parsed");
    // Random bytes read as (lossy) UTF-8, and unit parsers on random strings.
    for _ in 0..200 {
        let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        exercise(&text, &[]);
        let _ = (
            parse_rate(&text),
            parse_time(&text),
            parse_size(&text),
            parse_loss_str(&text),
            Buffer::parse(&text),
        );
    }
}

// ------------------------------------------------------------------------------------------
// The format reference stays true
// ------------------------------------------------------------------------------------------

#[test]
fn docs_examples_parse() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    // Whole scenarios (with a name) are checked below; the [reference] fragment must load
    // when appended to a minimal scenario.
    let (blocks, fragments): (Vec<&str>, Vec<&str>) =
        blocks.into_iter().partition(|b| b.contains("name ="));
    assert_eq!(blocks.len(), 3, "toml examples in the doc");
    // The path-element example: FQ-CoDel and a policer, swept over two controllers.
    let (paths, blocks): (Vec<&str>, Vec<&str>) =
        blocks.into_iter().partition(|b| b.contains("aqm ="));
    let pts = load(paths[0]).expand().unwrap();
    assert_eq!(pts.len(), 2);
    let l = &pts[0].scenario.link;
    assert_eq!(
        l.path.aqm,
        cclab_path::AqmDesc::from(cclab_path::FqCodelParams::default())
    );
    assert_eq!(
        l.path.policer,
        Some(cclab_path::TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 65536
        })
    );
    for f in fragments {
        let text = format!("name = \"x\"\nduration = \"1s\"\n[link]\nrate = \"1mbit\"\nrtt = \"1ms\"\n[[flows]]\ncc = \"bbr\"\n{f}");
        let pts = load(&text).expand().unwrap();
        assert!(pts[0].scenario.reference.as_ref().unwrap()["results"][0]["goodput"].is_string());
    }
    let lan = load(blocks[0]).expand().unwrap();
    assert_eq!(lan.len(), 1);
    assert_eq!(lan[0].scenario.link.path.loss, 0.01);
    assert_eq!(
        lan[0].scenario.reference.as_ref().unwrap()["expected_goodput_mbit"],
        json!(11.7)
    );
    let sweep = load(blocks[1]);
    assert_eq!(
        sweep.sweep_keys(),
        ["seed", "link.rtt", "link.loss", "flows.cc"]
    );
    let pts = sweep.expand().unwrap();
    assert_eq!(pts.len(), 24);
    assert_eq!(
        pts[2].label(),
        "seed=1,link.rtt=0.01,link.loss=0.001,flows.cc=cubic"
    );
    assert_eq!(
        pts[23].label(),
        "seed=2,link.rtt=0.1,link.loss=0.01,flows.cc=bbr"
    );
    // The first documented error message is what the code prints.
    let e = ScenarioFile::from_str(&edit(4, "rate = \"100mbps/s\""), "seeds/x.toml").unwrap_err();
    assert!(doc.contains(&e.to_string()), "{e}");
    let e = ScenarioFile::from_str(&with_link("queue = \"1bdp\""), "seeds/x.toml").unwrap_err();
    assert!(doc.contains(&e.to_string()), "{e}");
    let e = load(BASE).apply_override("link.loss=2").unwrap_err();
    assert!(
        doc.contains(&e.to_string().replace("t.toml", "seeds/x.toml")),
        "{e}"
    );
}

#[test]
fn host_latency_keys() {
    let s = one(BASE);
    assert_eq!(
        (s.hosts.latency_ns, s.hosts.jitter_ns),
        (0, 0),
        "instant hosts by default"
    );
    // The old names under [link] still work.
    let s = one(&with_link(
        "host_latency = \"40us\"\nhost_jitter = \"0.05ms\"",
    ));
    assert_eq!((s.hosts.latency_ns, s.hosts.jitter_ns), (40_000, 50_000));
    let r = s.resolved();
    assert_eq!(r["hosts.latency"], json!(4e-5));
    assert_eq!(r["hosts.jitter"], json!(5e-5));
    assert_error(
        &with_link("host_jitter = \"-1us\""),
        6,
        "link.host_jitter",
        "negative",
    );
}

#[test]
fn hosts_tcp_settings() {
    // Linux's defaults when absent.
    let s = one(BASE);
    assert_eq!(s.hosts.tcp, cclab_core::host::HostTcp::default());
    assert_eq!(
        s.resolved()["hosts.tcp_rmem"],
        json!("4096 131072 33554432")
    );
    assert_eq!(s.resolved()["hosts.rto_min"], json!(0.2));
    let text = format!(
        "{BASE}[hosts]\ntcp_rmem = \"4kb 128kb 6mib\"\ntcp_wmem = \"4096 16384 16mib\"\nrcvbuf = \"2mb\"\nsndbuf = \"off\"\ninit_cwnd = 20\ninit_rwnd = 40\nrto_min = \"50ms\"\nslow_start_after_idle = false\nnotsent_lowat = \"128kb\"\npacing = true\n"
    );
    let s = one(&text);
    let t = &s.hosts.tcp;
    assert_eq!(t.tcp_rmem, [4000, 128_000, 6 << 20]);
    assert_eq!(t.tcp_wmem[2], 16 << 20);
    assert_eq!((t.rcvbuf, t.sndbuf), (Some(2_000_000), None));
    assert_eq!((t.init_rwnd, t.rto_min), (Some(40), 50_000_000));
    assert!(!t.slow_start_after_idle && s.hosts.pacing);
    assert_eq!(t.notsent_lowat, Some(128_000));
    // hosts.init_cwnd is every group's unless the group says otherwise.
    assert_eq!(s.flows[0].init_cwnd, 20);
    let s2 = one(&text.replace("[[flows]]\n", "[[flows]]\ninit_cwnd = 4\n"));
    assert_eq!(s2.flows[0].init_cwnd, 4);
    assert_eq!(one(&s.to_toml_string()), s, "round trip");
    // Sweepable and overridable.
    let mut f = load(BASE);
    f.apply_override("hosts.tcp_wmem=[\"4096 16384 1mb\",\"4096 16384 4mib\"]")
        .unwrap();
    f.apply_override("hosts.pacing=true").unwrap();
    let pts = f.expand().unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[0].scenario.hosts.tcp.tcp_wmem[2], 1_000_000);
    assert!(pts[1].scenario.hosts.pacing);
    // Impossible settings: one line naming the key and the fix.
    for (line, key, needle) in [
        (
            "tcp_rmem = \"4096 1mb 64kb\"",
            "hosts.tcp_rmem",
            "out of order",
        ),
        ("tcp_wmem = \"4096 16384\"", "hosts.tcp_wmem", "three sizes"),
        ("init_cwnd = 0", "hosts.init_cwnd", "between 1 and"),
        ("init_rwnd = 0", "hosts.init_rwnd", "between 1 and"),
        ("rto_min = \"11s\"", "hosts.rto_min", "1ms to 10s"),
        ("rcvbuf = 0", "hosts.rcvbuf", "positive"),
        (
            "notsent_lowat = \"-1kb\"",
            "hosts.notsent_lowat",
            "negative",
        ),
    ] {
        let e = ScenarioFile::from_str(&format!("{BASE}[hosts]\n{line}\n"), "t.toml").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(key) && msg.contains(needle), "{line}: {msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
}

#[test]
fn hosts_table() {
    let s = one(BASE);
    assert_eq!(s.hosts, HostsSpec::default());
    assert_eq!(
        s.hosts.wake,
        Some(WakeSpec {
            idle_ns: 500_000,
            delay_ns: 100_000,
            shared_cpu: true
        }),
        "hosts sleep when idle by default, as the kernel lab's"
    );
    let text = format!(
        "{BASE}[hosts]\nlatency = \"40us\"\njitter = \"40us\"\nwake = \"200us\"\nwake_idle = \"1ms\"\nshared_cpu = false\nhz = 1000\n"
    );
    let s = one(&text);
    assert_eq!(
        (s.hosts.latency_ns, s.hosts.jitter_ns, s.hosts.hz),
        (40_000, 40_000, 1000)
    );
    assert_eq!(
        s.hosts.wake,
        Some(WakeSpec {
            idle_ns: 1_000_000,
            delay_ns: 200_000,
            shared_cpu: false
        })
    );
    // Round trip through the explicit form.
    assert_eq!(one(&s.to_toml_string()), s);
    let s = one(&format!("{BASE}[hosts]\nwake = \"off\"\n"));
    assert_eq!(s.hosts.wake, None);
    assert_eq!(s.resolved()["hosts.wake"], json!(0.0));
    assert_eq!(one(&s.to_toml_string()), s);
    // Sweepable and overridable like any key.
    let mut f = load(BASE);
    f.apply_override("hosts.wake=[0us,100us]").unwrap();
    f.apply_override("hosts.hz=1000").unwrap();
    assert_eq!(f.sweep_keys(), ["hosts.wake"]);
    let pts = f.expand().unwrap();
    assert_eq!(pts[0].scenario.hosts.wake, None);
    assert_eq!(
        pts[1].scenario.hosts.wake.map(|w| w.delay_ns),
        Some(100_000)
    );
    assert_eq!(pts[1].scenario.hosts.hz, 1000);
    // Bad values and a key given under both names.
    let e = ScenarioFile::from_str(&format!("{BASE}[hosts]\nhz = 200\n"), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("hosts.hz") && e.contains("CONFIG_HZ"), "{e}");
    let e = ScenarioFile::from_str(&format!("{BASE}[hosts]\nlatncy = \"1us\"\n"), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean latency"), "{e}");
    let both = with_link("host_latency = \"40us\"") + "[hosts]\nlatency = \"40us\"\n";
    let e = ScenarioFile::from_str(&both, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("given twice"), "{e}");
    let e = ScenarioFile::from_str(&with_top("hosts = 3"), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected a table"), "{e}");
}

#[test]
fn controller_parameters() {
    let with = |extra: &str| BASE.replace("cc = \"cubic\"", &format!("cc = \"cubic\"\n{extra}"));
    let s = one(&with("cc_params = { hystart = false }"));
    assert_eq!(
        s.flows[0].cc_params,
        vec![("hystart".to_string(), ParamValue::Bool(false))]
    );
    let c = s.flows[0].controller().unwrap();
    assert!(!c.bool("hystart") && c.bool("fast_convergence"));
    assert_eq!(s.resolved()["flows.cc_params.hystart"], json!(false));
    assert_eq!(
        s.resolved()["flows.cc_params.hystart_low_window"],
        json!(16),
        "defaults are resolved too"
    );
    assert_eq!(one(&s.to_toml_string()), s);
    // Unknown parameter, wrong type, out of range: one-line errors naming the key.
    for (extra, key, words) in [
        (
            "cc_params = { hystrat = false }",
            "flows.0.cc_params.hystrat",
            "did you mean hystart",
        ),
        (
            "cc_params = { hystart = 1 }",
            "flows.0.cc_params.hystart",
            "true or false",
        ),
        (
            "cc_params = { hystart_detect = 9 }",
            "flows.0.cc_params.hystart_detect",
            "between 0 and 3",
        ),
        ("cc_params = 3", "flows.0.cc_params", "expected a table"),
    ] {
        let e = ScenarioFile::from_str(&with(extra), "t.toml").unwrap_err();
        let m = e.to_string();
        assert_eq!(e.key.as_deref(), Some(key), "{m}");
        assert!(m.contains(words) && !m.contains('\n'), "{m}");
    }
    let reno = BASE.replace(
        "cc = \"cubic\"",
        "cc = \"reno\"\ncc_params = { hystart = false }",
    );
    let e = ScenarioFile::from_str(&reno, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("reno takes no parameters"), "{e}");
    let bbr = BASE.replace(
        "cc = \"cubic\"",
        "cc = \"bbr\"\ncc_params = { hystart = false }",
    );
    let e = ScenarioFile::from_str(&bbr, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not a parameter of bbr (parameters: lt_bw)"),
        "{e}"
    );
    // A sweep of cc and of a parameter only CUBIC has: BBR runs once, without it.
    let mut f = load(BASE);
    f.apply_override("flows.cc=[cubic,bbr]").unwrap();
    f.apply_override("flows.cc_params.hystart=[true,false]")
        .unwrap();
    assert_eq!(f.sweep_keys(), ["flows.cc", "flows.cc_params.hystart"]);
    let pts = f.expand().unwrap();
    let labels: Vec<String> = pts.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "flows.cc=cubic,flows.cc_params.hystart=true",
            "flows.cc=cubic,flows.cc_params.hystart=false",
            "flows.cc=bbr"
        ]
    );
    assert_eq!(pts.iter().map(|p| p.index).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(pts[2].scenario.flows[0].cc_params.is_empty());
    // Overrides of parameters no controller of the file has are refused.
    let mut f = load(&bbr.replace("\ncc_params = { hystart = false }", ""));
    let e = f
        .apply_override("flows.cc_params.hystart=false")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no flow group runs a controller with the parameter hystart"),
        "{e}"
    );
    let e = f
        .apply_override("flows.cc_params.nope=1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no controller's parameter"), "{e}");
}

#[test]
fn another_backend_s_controllers() {
    // A kernel that offers vegas: the name is accepted, and the error lists the kernel's.
    let cat = CcCatalog::names(
        "this kernel",
        &["reno".into(), "cubic".into(), "vegas".into()],
    );
    let text = BASE.replace("cc = \"cubic\"", "cc = \"vegas\"");
    let f = ScenarioFile::from_str_for(&text, "t.toml", cat.clone()).unwrap();
    assert_eq!(f.expand().unwrap()[0].scenario.flows[0].cc, "vegas");
    let e = ScenarioFile::from_str(&text, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the simulator has: reno (or newreno), cubic, bbr (or bbr1, bbrv1)"),
        "{e}"
    );
    let e =
        ScenarioFile::from_str_for(&BASE.replace("\"cubic\"", "\"bbr\""), "t.toml", cat.clone())
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("this kernel has: reno (or newreno), cubic, vegas"),
        "{e}"
    );
    // Parameters are the simulator's: a kernel's cubic takes none.
    let params = BASE.replace(
        "cc = \"cubic\"",
        "cc = \"cubic\"\ncc_params = { hystart = false }",
    );
    let e = ScenarioFile::from_str_for(&params, "t.toml", cat)
        .unwrap_err()
        .to_string();
    assert!(e.contains("takes no parameters on this kernel"), "{e}");
}

/// docs/scenarios.md's table of controllers follows the registry: every controller, alias and
/// parameter (with its default) appears there.
#[test]
fn docs_list_every_registered_controller_and_parameter() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    let table = doc
        .split("### Controllers")
        .nth(1)
        .and_then(|s| s.split("\n### ").next())
        .expect("a Controllers section");
    for c in cclab_core::cc::CONTROLLERS {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| `{}`", c.name)))
            .unwrap_or_else(|| panic!("docs/scenarios.md lists no {}", c.name));
        for a in c.aliases {
            assert!(
                row.contains(&format!("`{a}`")),
                "alias {a} of {} missing: {row}",
                c.name
            );
        }
        for p in c.params {
            assert!(
                row.contains(&format!("`{}` ({}", p.name, p.default)),
                "parameter {} of {} (default {}) missing: {row}",
                p.name,
                c.name,
                p.default
            );
        }
        if c.params.is_empty() {
            assert!(row.trim_end().ends_with("| none |"), "{row}");
        }
    }
}

/// `link.loss_burst`: a mean run length from 1 to 1000 packets, and one the loss rate allows.
#[test]
fn loss_burst_is_checked() {
    let err = |text: &str| match ScenarioFile::from_str(text, "t.toml") {
        Err(e) => e.to_string(),
        Ok(f) => f.expand().unwrap_err().to_string(),
    };
    let ok = load(&with_link("loss = \"1%\"\nloss_burst = 4"));
    let s = &ok.expand().unwrap()[0].scenario;
    assert_eq!((s.link.path.loss, s.link.path.loss_burst), (0.01, 4.0));
    assert_eq!(s.link.desc().loss_burst, 4.0);
    let e = err(&with_link("loss = \"60%\"\nloss_burst = 1.2"));
    assert!(
        e.contains("link.loss_burst") && e.contains("use loss_burst >= 1.50"),
        "{e}"
    );
    let e = err(&with_link("loss_burst = 0.5"));
    assert!(e.contains("from 1 (independent loss) to 1000"), "{e}");
}

/// docs/scenarios.md's table of `[link.aqm]` parameters follows the declarations
/// (`cclab_path::AQMS`): a column per discipline, a row per setting, each discipline's
/// default in its column and nothing where it does not take the setting.
#[test]
fn docs_list_every_declared_aqm_setting_with_its_default() {
    use cclab_path::SettingValue;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    let table: Vec<Vec<String>> = doc
        .split("The `[link.aqm]` parameters")
        .nth(1)
        .expect("the [link.aqm] table")
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
    let aqms: Vec<&cclab_path::Aqm> = cclab_path::AQMS
        .iter()
        .filter(|a| !a.settings.is_empty())
        .collect();
    let header: Vec<&str> = aqms.iter().map(|a| a.name).collect();
    assert_eq!(
        table[0][2..2 + aqms.len()],
        header[..],
        "columns: {:?}",
        table[0]
    );
    let shown = |v: SettingValue| match v {
        SettingValue::Time(ns) => format!("{} ms", ns / 1_000_000),
        SettingValue::Int(i) => i.to_string(),
        SettingValue::Bool(b) => b.to_string(),
    };
    let mut rows = 0;
    for row in &table[2..] {
        let key = row[1].trim_matches('`');
        let mut declared = false;
        for (i, a) in aqms.iter().enumerate() {
            let want = a
                .settings
                .iter()
                .find(|s| s.name == key)
                .map(|s| shown(s.default))
                .unwrap_or_default();
            declared |= !want.is_empty();
            assert_eq!(
                row[2 + i],
                want,
                "docs/scenarios.md: {key} under {}",
                a.name
            );
        }
        assert!(
            declared,
            "docs/scenarios.md lists {key}, which no discipline declares"
        );
        rows += 1;
    }
    let keys: std::collections::BTreeSet<&str> = aqms
        .iter()
        .flat_map(|a| a.settings.iter().map(|s| s.name))
        .collect();
    assert_eq!(rows, keys.len(), "a row per declared setting: {keys:?}");
}
