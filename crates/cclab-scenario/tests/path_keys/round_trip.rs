//! `to_toml_string` writes every path key so that it loads back to an equal scenario, and
//! leaves a plain link plain.

use cclab_path::{AqmDesc, LossUnit};
use cclab_scenario::*;

use crate::common::{
    one, one_of, pie_set_by_table, with_link, TempDir, BASE, PIE_AND_POLICER_TABLES,
};
use crate::{assert_round_trip, with_tables, SCHEDULE, TRACE, TRACE_BPS};

#[test]
fn every_new_key_round_trips() {
    let dir = TempDir::new("rt");
    dir.write("traces/x.trace", TRACE);
    let text = format!(
        r#"name = "everything"
duration = "30s"
[link]
trace = "traces/x.trace"
rtt = "40ms"
buffer = "3bdp"
loss = "0.5%"
loss_unit = "gso"
jitter = "1500us"
reorder = true
ack_aggregation = "4ms"
{PIE_AND_POLICER_TABLES}[link.shaper]
rate = "20mbit"
[[flows]]
cc = "bbr"
"#
    );
    let path = dir.write("every.toml", &text);
    let s = one_of(&ScenarioFile::from_file(&path).unwrap_or_else(|e| panic!("{e}")));
    let l = &s.link;
    assert_eq!(l.path.rate_bps, TRACE_BPS as f64);
    assert_eq!(l.path.loss_unit, LossUnit::Gso);
    assert_eq!(
        (l.path.jitter_ns, l.path.reorder, l.path.ack_aggregation_ns),
        (1_500_000, true, 4_000_000)
    );
    assert_eq!(l.path.aqm, AqmDesc::from(pie_set_by_table()));
    assert_eq!(l.path.policer.as_ref().unwrap().burst_bytes, 100_000);
    assert_eq!(l.path.shaper.as_ref().unwrap().burst_bytes, 65_536);
    let written = assert_round_trip(&s);
    assert!(written.contains("trace = "), "{written}");
    assert!(!written.contains("\nrate = \"12mbit\""), "{written}");
    // The written text also loads as a file saved somewhere else (next to results).
    let elsewhere = TempDir::new("rt-elsewhere");
    let saved = elsewhere.write("results/run/scenario.toml", &written);
    assert_eq!(
        one_of(&ScenarioFile::from_file(&saved).unwrap_or_else(|e| panic!("{e}"))),
        s
    );

    // A schedule with FQ-CoDel and a policer given as a bare rate.
    let text = with_link(
        "aqm = { kind = \"fq_codel\", flows = 32, quantum = 3028, drop_batch = 4, target = \"1ms\", interval = \"10ms\", ecn = false }\npolicer = \"1gbit\"\nshaper = { rate = \"50mbit\", burst = 1500 }",
    )
    .replace("rate = \"100mbit\"", SCHEDULE);
    let s = one(&text);
    let written = assert_round_trip(&s);
    assert!(written.contains("at = \"20s\""), "{written}");
    // CoDel with its defaults written out.
    assert_round_trip(&one(&with_link("aqm = \"codel\"")));
    // A huge burst is still a size when written.
    let s = one(&with_tables(
        "[link.policer]\nrate = \"10mbit\"\nburst = \"18446744073709551615b\"",
    ));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, u64::MAX);
    assert_round_trip(&s);
}

#[test]
fn to_toml_string_keeps_a_plain_link_plain() {
    // None of the new keys is written when none is set, so old readers still read it.
    let text = one(BASE).to_toml_string();
    for key in [
        "aqm",
        "policer",
        "shaper",
        "trace",
        "loss_unit",
        "jitter = ",
        "reorder",
        "ack_aggregation",
    ] {
        let link = text
            .split("[link]")
            .nth(1)
            .unwrap()
            .split("\n[")
            .next()
            .unwrap();
        assert!(!link.contains(key), "{key} in:\n{text}");
    }
}
