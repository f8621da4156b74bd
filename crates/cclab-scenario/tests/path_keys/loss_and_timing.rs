//! `link.loss_unit`, `link.jitter`, `link.reorder` and `link.ack_aggregation`.

use cclab_path::LossUnit;
use serde_json::json;

use crate::common::{assert_error, load, one, points, with_link, BASE};
use crate::{labels, EXTRA_LINE};

#[test]
fn loss_unit() {
    assert_eq!(one(BASE).link.path.loss_unit, LossUnit::Segment);
    assert_eq!(one(BASE).resolved()["link.loss_unit"], json!("segment"));
    for (text, want) in [
        ("segment", LossUnit::Segment),
        ("gso", LossUnit::Gso),
        ("GSO", LossUnit::Gso),
        (" Segment ", LossUnit::Segment),
    ] {
        let s = one(&with_link(&format!("loss_unit = \"{text}\"")));
        assert_eq!(s.link.path.loss_unit, want, "{text}");
    }
    assert_eq!(
        one(&with_link("loss_unit = \"gso\"")).resolved()["link.loss_unit"],
        json!("gso")
    );
    let f = load(&with_link(
        "loss = \"1%\"\nloss_unit = [\"segment\", \"gso\"]",
    ));
    assert_eq!(
        labels(&points(&f)),
        ["link.loss_unit=segment", "link.loss_unit=gso"]
    );
    for (extra, needles) in [
        (
            "loss_unit = \"packet\"",
            &["unknown loss unit \"packet\"", "segment:", "gso:"][..],
        ),
        ("loss_unit = 1", &["\"segment\" or \"gso\""][..]),
        ("loss_unit = true", &["\"segment\" or \"gso\""][..]),
        ("loss_unit = []", &["empty list"][..]),
    ] {
        assert_error(&with_link(extra), EXTRA_LINE, "link.loss_unit", needles);
    }
}

#[test]
fn jitter_reorder_ack_aggregation() {
    let s = one(BASE);
    assert_eq!(
        (
            s.link.path.jitter_ns,
            s.link.path.reorder,
            s.link.path.ack_aggregation_ns
        ),
        (0, false, 0)
    );
    let r = s.resolved();
    assert_eq!(
        (
            &r["link.jitter"],
            &r["link.reorder"],
            &r["link.ack_aggregation"]
        ),
        (&json!(0.0), &json!(false), &json!(0.0))
    );
    let s = one(&with_link(
        "jitter = \"2ms\"\nreorder = true\nack_aggregation = \"500us\"",
    ));
    assert_eq!(
        (
            s.link.path.jitter_ns,
            s.link.path.reorder,
            s.link.path.ack_aggregation_ns
        ),
        (2_000_000, true, 500_000)
    );
    let r = s.resolved();
    assert_eq!(r["link.jitter"], json!(0.002));
    assert_eq!(r["link.reorder"], json!(true));
    assert_eq!(r["link.ack_aggregation"], json!(0.0005));
    // Zero is "off", written bare or with a unit.
    let s = one(&with_link("jitter = 0\nack_aggregation = \"0s\""));
    assert_eq!(
        (s.link.path.jitter_ns, s.link.path.ack_aggregation_ns),
        (0, 0)
    );
    for key in ["jitter", "ack_aggregation"] {
        for (v, needle) in [
            ("\"-1ms\"", "must not be negative"),
            ("\"soon\"", "not a time"),
            ("\"5min\"", "unknown time unit"),
            ("5", "needs a unit"),
            ("-5", "needs a unit"),
            ("1.5", "needs a unit"),
            ("true", "expected a time string"),
            ("\"1e30s\"", "too large"),
        ] {
            assert_error(
                &with_link(&format!("{key} = {v}")),
                EXTRA_LINE,
                &format!("link.{key}"),
                &[needle],
            );
        }
    }
    assert_error(
        &with_link("reorder = \"yes\""),
        EXTRA_LINE,
        "link.reorder",
        &["expected true or false"],
    );
    assert_error(
        &with_link("reorder = 1"),
        EXTRA_LINE,
        "link.reorder",
        &["expected true or false"],
    );
    let f = load(&with_link(
        "jitter = [\"0s\", \"1ms\"]\nreorder = [false, true]",
    ));
    assert_eq!(
        labels(&points(&f)),
        [
            "link.jitter=0.0,link.reorder=false",
            "link.jitter=0.0,link.reorder=true",
            "link.jitter=0.001,link.reorder=false",
            "link.jitter=0.001,link.reorder=true"
        ]
    );
}
