//! Errors: one line, with the file, the line, the key, the problem and what is allowed.

use cclab_scenario::*;

use crate::common::*;
use crate::{edit, with_top};

#[test]
fn error_toml_syntax() {
    let e = assert_error(&edit(2, "duration = 10s"), 2, "duration", &["invalid TOML"]);
    assert_eq!(e.kind, ErrorKind::Syntax);
    assert!(e.to_string().contains("duration = \"10s\""), "hint: {e}");
    assert_error(&edit(3, "[link"), 3, "t.toml:3", &["invalid TOML"]);
    assert_error(&edit(0, "cc = \"bbr\""), 8, "cc", &["duplicate key"]);
}

#[test]
fn error_unknown_key_with_suggestion() {
    let e = assert_error(
        &edit(4, "rat = \"100mbit\""),
        4,
        "link.rat",
        &["did you mean rate?"],
    );
    assert_eq!(e.kind, ErrorKind::UnknownKey);
    assert_error(
        &edit(7, "cc = \"cubic\"\nsiez = \"1mb\""),
        8,
        "flows.0.siez",
        &["did you mean size?"],
    );
    assert_error(
        &edit(2, "duraton = \"10s\""),
        2,
        "duraton",
        &["did you mean duration?"],
    );
    assert_error(
        &with_top("loss = \"1%\""),
        3,
        "loss",
        &["did you mean loss under [link]?"],
    );
    assert_error(
        &with_link("bandwidth = \"1gbit\""),
        6,
        "link.bandwidth",
        &["did you mean rate?"],
    );
    assert_error(
        &with_link("zzzzzz = 1"),
        6,
        "link.zzzzzz",
        &["allowed here: rate, rtt, buffer, loss, loss_burst, ack_loss, mss"],
    );
    assert_error(&edit(6, "[[flow]]"), 6, "flow", &["did you mean flows?"]);
}

#[test]
fn error_bad_unit() {
    let e = assert_error(
        &edit(4, "rate = \"100mbps/s\""),
        4,
        "link.rate = \"100mbps/s\"",
        &["unknown rate unit \"mbps/s\" (use e.g. 100mbit"],
    );
    assert_eq!(e.kind, ErrorKind::BadValue);
    assert_eq!(e.column, Some(8));
    assert_error(
        &edit(5, "rtt = \"20mins\""),
        5,
        "link.rtt",
        &["unknown time unit"],
    );
    assert_error(
        &edit(4, "rate = 100"),
        4,
        "link.rate = 100",
        &["\"100mbit\""],
    );
    assert_error(
        &edit(2, "duration = 10"),
        2,
        "duration = 10",
        &["needs a unit"],
    );
    assert_error(
        &with_link("buffer = 100"),
        6,
        "link.buffer",
        &["\"100pkt\""],
    );
    assert_error(
        &edit(7, "cc = \"cubic\"\nsize = \"25mbit\""),
        8,
        "flows.0.size",
        &["unknown size unit"],
    );
}

#[test]
fn error_wrong_type() {
    let e = assert_error(
        &edit(5, "rtt = true"),
        5,
        "link.rtt = true",
        &["found a boolean"],
    );
    assert_eq!(e.kind, ErrorKind::WrongType);
    assert_error(
        &with_link("mss = \"1448\""),
        6,
        "link.mss",
        &["expected a whole number"],
    );
    assert_error(&edit(1, "name = 5"), 1, "name = 5", &["expected a string"]);
    assert_error(
        "name = \"t\"\nduration = \"1s\"\nlink = 5\n[[flows]]\ncc = \"bbr\"\n",
        3,
        "link = 5",
        &["expected a table"],
    );
    assert_error(
        &edit(3, "link = 5"),
        4,
        "rate",
        &["did you mean rate under [link]?"],
    );
    assert_error(&edit(6, "[flows]"), 6, "flows", &["[[flows]]"]);
    assert_error(
        &with_top("reference = 3"),
        3,
        "reference",
        &["expected a table"],
    );
    assert_error(
        &edit(1, "name = [\"a\", \"b\"]"),
        1,
        "name",
        &["cannot be a list"],
    );
    assert_error(
        &with_link("loss = [[0, 1]]"),
        6,
        "link.loss[0]",
        &["nested"],
    );
}

#[test]
fn error_nonpositive_rate() {
    assert_error(&edit(4, "rate = \"-5mbit\""), 4, "link.rate", &["positive"]);
    assert_error(&edit(4, "rate = \"0mbit\""), 4, "link.rate", &["positive"]);
    assert_error(&edit(4, "rate = 0"), 4, "link.rate", &["positive"]);
    assert_error(&edit(4, "rate = -3"), 4, "link.rate", &["positive"]);
}

#[test]
fn error_zero_rtt() {
    assert_error(
        &edit(5, "rtt = \"0ms\""),
        5,
        "link.rtt",
        &["rtt must be positive"],
    );
    assert_error(
        &edit(5, "rtt = 0"),
        5,
        "link.rtt",
        &["rtt must be positive"],
    );
}

#[test]
fn error_loss_out_of_range() {
    assert_error(
        &with_link("loss = \"100%\""),
        6,
        "link.loss",
        &["below 100%"],
    );
    assert_error(
        &with_link("loss = 1"),
        6,
        "link.loss = 1",
        &["write \"1%\""],
    );
    assert_error(
        &with_link("loss = 1.5"),
        6,
        "link.loss",
        &["write \"1.5%\""],
    );
    assert_error(&with_link("loss = 150"), 6, "link.loss", &["below 100%"]);
    assert_error(&with_link("loss = -0.1"), 6, "link.loss", &["negative"]);
    assert_error(
        &with_link("ack_loss = \"-1%\""),
        6,
        "link.ack_loss",
        &["negative"],
    );
    assert_error(&with_link("loss = nan"), 6, "link.loss", &["[0, 1)"]);
    assert_error(
        &with_link("loss = [0, \"1%\", \"120%\"]"),
        6,
        "link.loss[2] = \"120%\"",
        &["below 100%"],
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
            &["as a probability it is 50% of packets, while netem's \"loss 0.5\" means 0.5%; write \"50%\" if that is meant, or \"0.5%\""],
        );
        assert_eq!(e.kind, ErrorKind::BadValue);
        assert_error(
            &with_link(&format!("{key} = 0.05")),
            6,
            key,
            &["write \"5%\""],
        );
        assert_error(
            &with_link(&format!("{key} = \"0.2\"")),
            6,
            key,
            &["write \"20%\""],
        );
    }
    // In a sweep and from --set too.
    assert_error(
        &with_link("loss = [0, 0.01, 0.1]"),
        6,
        "link.loss[2] = 0.1",
        &["\"10%\""],
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
    let e = assert_error(no_flows, 1, "flows", &["at least one [[flows]]"]);
    assert_eq!(e.kind, ErrorKind::MissingKey);
    assert_error(
        &format!("flows = []\n{no_flows}"),
        1,
        "flows = []",
        &["at least one [[flows]]"],
    );
    assert_error(
        &edit(7, "count = 2"),
        6,
        "flows.0.cc",
        &["missing required key"],
    );
}

#[test]
fn error_missing_required_keys() {
    assert_error(&edit(1, ""), 1, "name", &["missing required key"]);
    assert_error(&edit(4, ""), 3, "link.rate", &["missing required key"]);
    assert_error(&edit(5, ""), 3, "link.rtt", &["missing required key"]);
    let no_link = "name = \"t\"\nduration = \"1s\"\n[[flows]]\ncc = \"bbr\"\n";
    assert_error(no_link, 1, "link", &["missing required table [link]"]);
}

#[test]
fn error_count_and_init_cwnd_zero() {
    assert_error(
        &edit(0, "count = 0"),
        8,
        "flows.0.count = 0",
        &["between 1 and"],
    );
    assert_error(
        &edit(0, "init_cwnd = 0"),
        8,
        "flows.0.init_cwnd = 0",
        &["between 1 and"],
    );
    assert_error(
        &edit(0, "count = -1"),
        8,
        "flows.0.count",
        &["between 1 and"],
    );
    assert_error(
        &edit(0, "count = 1.5"),
        8,
        "flows.0.count",
        &["expected a whole number"],
    );
}

#[test]
fn error_mss_out_of_range() {
    assert_error(
        &with_link("mss = 100"),
        6,
        "link.mss = 100",
        &["between 536 and 9000"],
    );
    assert_error(
        &with_link("mss = 65536"),
        6,
        "link.mss",
        &["between 536 and 9000"],
    );
}

#[test]
fn error_bulk_flow_without_duration() {
    let e = assert_error(&edit(2, ""), 6, "flows.0", &["needs a duration"]);
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    // Sized group 0 is fine; bulk group 1 is named.
    let text = "name = \"t\"\n[link]\nrate = \"1gbit\"\nrtt = \"1ms\"\n[[flows]]\ncc = \"bbr\"\nsize = \"1mb\"\n[[flows]]\ncc = \"bbr\"\n";
    assert_error(text, 8, "flows.1", &["needs a duration"]);
}

#[test]
fn error_unknown_cc() {
    let e = assert_error(
        &edit(7, "cc = \"vegas\""),
        7,
        "flows.0.cc = \"vegas\"",
        &["unknown congestion control"],
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
        &["the simulator has: reno"],
    );
}

#[test]
fn error_empty_list() {
    assert_error(
        &with_link("loss = []"),
        6,
        "link.loss = []",
        &["empty list"],
    );
    assert_error(&edit(7, "cc = []"), 7, "flows.0.cc", &["empty list"]);
}

#[test]
fn error_cross_key_rules() {
    // A flow that starts after the run ends; names the matrix point when there is a matrix.
    assert_error(
        &edit(0, "start = \"10s\""),
        8,
        "flows.0.start",
        &["start must be earlier"],
    );
    let e = assert_error(
        &edit(0, "start = [\"1s\", \"20s\"]"),
        8,
        "flows.0.start",
        &["matrix point 2 of 2: flows.start=20"],
    );
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    // A byte buffer smaller than one packet.
    assert_error(
        &with_link("buffer = \"1kb\""),
        6,
        "link.buffer",
        &["cannot hold one packet of 1500 bytes"],
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

/// A file with several independent mistakes names them all in one go, in file order, each
/// on its own line with its file:line:col, key, cause and fix.
#[test]
fn several_errors_at_once() {
    let text = "name = \"e\"\nduration = \"5s\"\n[link]\nrate = \"10mbitt\"\nrtt = \"20ms\"\nlos = \"1%\"\n[[flows]]\ncc = \"cubic\"\ncc_params = { hystrat = false }\n";
    let (e, s) = error_of(text);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 3, "{s}");
    assert!(
        lines[0].starts_with("t.toml:4:8: link.rate") && lines[0].contains("mbitt"),
        "{s}"
    );
    assert!(
        lines[1].starts_with("t.toml:6:1: link.los") && lines[1].contains("did you mean loss"),
        "{s}"
    );
    assert!(
        lines[2].starts_with("t.toml:9:") && lines[2].contains("did you mean hystart?"),
        "{s}"
    );
    // The first is the error; the others ride along.
    assert_eq!(e.line, Some(4));
    assert_eq!(e.more.len(), 2);
    assert_eq!(e.more[1].kind, ErrorKind::UnknownKey);
    // A file with one mistake still gets one line.
    let (one, s) = error_of(
        &text
            .replace("los =", "loss =")
            .replace("hystrat", "hystart"),
    );
    assert!(one.more.is_empty() && s.lines().count() == 1, "{s}");
}

/// Many mistakes: the first handful shown, the rest counted.
#[test]
fn many_errors_are_capped() {
    let mut text = String::from(
        "name = \"e\"\nduration = \"5s\"\n[link]\nrate = \"10mbit\"\nrtt = \"20ms\"\n",
    );
    for i in 0..9 {
        text.push_str(&format!("bogus{i} = 1\n"));
    }
    text.push_str("[[flows]]\ncc = \"cubic\"\n");
    let (e, s) = error_of(&text);
    assert_eq!(e.more.len(), 8);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), MAX_REPORTED + 1, "{s}");
    assert!(
        lines[MAX_REPORTED].ends_with("and 4 more errors (fix these and run again)"),
        "{s}"
    );
}

/// "did you mean" for controller parameters: a typo, another spelling, a shortened name.
#[test]
fn cc_params_did_you_mean() {
    for (typo, meant) in [
        ("hystrat", "hystart"),
        ("fast-convergence", "fast_convergence"),
        ("Fast_Convergance", "fast_convergence"),
        ("hystart_ack_delta", "hystart_ack_delta_us"),
    ] {
        let text = format!("name = \"e\"\nduration = \"5s\"\n[link]\nrate = \"10mbit\"\nrtt = \"20ms\"\n[[flows]]\ncc = \"cubic\"\ncc_params = {{ {typo} = 1 }}\n");
        let (e, s) = error_of(&text);
        assert_eq!(e.kind, ErrorKind::UnknownKey, "{s}");
        assert!(s.contains(&format!("did you mean {meant}?")), "{typo}: {s}");
    }
}

/// "did you mean" for a controller's name: a typo or a swapped pair gives the canonical name,
/// BBRv2 points to v3, and a name close to nothing gets no guess.
#[test]
fn cc_name_did_you_mean() {
    for (typo, hint) in [
        ("cubci", Some("did you mean \"cubic\"?")),
        ("dctpc", Some("did you mean \"dctcp\"?")),
        (
            "BBRv2",
            Some("BBRv2 is not here (Google's v3 superseded it): did you mean \"bbr3\"?"),
        ),
        ("vegas", None),
        ("foo", None),
    ] {
        let text = format!("name = \"e\"\nduration = \"5s\"\n[link]\nrate = \"10mbit\"\nrtt = \"20ms\"\n[[flows]]\ncc = \"{typo}\"\n");
        let (e, s) = error_of(&text);
        assert_eq!(e.kind, ErrorKind::BadValue, "{s}");
        match hint {
            Some(h) => assert!(s.contains(h), "{typo}: {s}"),
            None => assert!(!s.contains("did you mean"), "{typo}: {s}"),
        }
    }
}
