//! `link.policer` and `link.shaper`: absent, a rate, a table with a burst; and the errors.

use cclab_path::TokenBucket;
use cclab_scenario::*;
use serde_json::json;

use crate::common::{assert_error, error_of, one, with_link, BASE};
use crate::{with_tables, EXTRA_LINE};

#[test]
fn buckets_absent_by_default() {
    let s = one(BASE);
    assert_eq!(
        (s.link.path.policer.clone(), s.link.path.shaper.clone()),
        (None, None)
    );
    let r = s.resolved();
    assert_eq!(r["link.policer"], json!(null));
    assert_eq!(r["link.shaper"], json!(null));
}

#[test]
fn bucket_rate_with_default_burst() {
    // 10 ms at 10 Mbit/s is 12.5 kB, under the 64 KiB floor.
    let s = one(&with_link("policer = \"10mbit\"\nshaper = \"20mbit\""));
    let want_p = TokenBucket {
        rate_bps: 10e6,
        burst_bytes: 65_536,
    };
    let want_s = TokenBucket {
        rate_bps: 20e6,
        burst_bytes: 65_536,
    };
    assert_eq!(s.link.path.policer, Some(want_p));
    assert_eq!(s.link.path.shaper, Some(want_s));
    // 10 ms at 1 Gbit/s is 1.25 MB, over the floor.
    let s = one(&with_link("policer = \"1gbit\""));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, 1_250_000);
    // The floor and 10 ms meet at 52.4288 Mbit/s.
    let s = one(&with_link("shaper = \"60mbit\""));
    assert_eq!(s.link.path.shaper.as_ref().unwrap().burst_bytes, 75_000);
    let r = s.resolved();
    assert_eq!(r["link.shaper.rate"], json!(60_000_000));
    assert_eq!(r["link.shaper.burst"], json!(75_000));
    assert_eq!(r["link.policer"], json!(null));
    // A table without burst takes the same default.
    let s = one(&with_tables("[link.policer]\nrate = \"1gbit\""));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, 1_250_000);
}

#[test]
fn bucket_table_sets_burst() {
    let s = one(&with_tables(
        "[link.policer]\nrate = \"10mbit\"\nburst = \"128kb\"\n[link.shaper]\nrate = \"5MB/s\"\nburst = 3000",
    ));
    assert_eq!(
        s.link.path.policer,
        Some(TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 128_000
        })
    );
    assert_eq!(
        s.link.path.shaper,
        Some(TokenBucket {
            rate_bps: 40e6,
            burst_bytes: 3000
        })
    );
    let r = s.resolved();
    assert_eq!(r["link.policer.burst"], json!(128_000));
    assert_eq!(r["link.shaper.rate"], json!(40_000_000));
    // Inline tables, a burst of exactly one packet, and a small policer given bytes.
    let s = one(&with_link(
        "policer = { rate = \"64kbit\", burst = \"1500b\" }",
    ));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, 1500);
}

#[test]
fn bucket_errors_name_the_key_and_the_fix() {
    // A burst smaller than a packet says the least that works.
    let e = assert_error(
        &with_tables("[link.policer]\nrate = \"10mbit\"\nburst = \"1kb\""),
        8,
        "link.policer.burst",
        &[
            "a burst of 1000 bytes cannot pass one packet of 1500 bytes",
            "use at least \"1500b\"",
        ],
    );
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    // The packet is mss + 52 bytes.
    let text = with_link("mss = 9000\nshaper = { rate = \"1gbit\", burst = \"9kb\" }");
    assert_error(
        &text,
        line_of(&text, "shaper"),
        "link.shaper.burst",
        &["cannot pass one packet of 9052 bytes", "9052b"],
    );
    // A default burst always holds a jumbo packet.
    one(&with_link("mss = 9000\npolicer = \"1kbit\""));
    for (extra, key, needle) in [
        ("policer = \"fast\"", "link.policer", "not a rate"),
        (
            "policer = 10",
            "link.policer",
            "expected a rate like \"10mbit\"",
        ),
        ("policer = \"0mbit\"", "link.policer", "positive"),
        (
            "policer = true",
            "link.policer",
            "a rate like \"10mbit\", or a table with rate and burst",
        ),
        (
            "shaper = { burst = \"64kb\" }",
            "link.shaper.rate",
            "missing required key",
        ),
        (
            "shaper = { rate = \"10mbit\", burst = \"-1kb\" }",
            "link.shaper.burst",
            "negative",
        ),
        (
            "shaper = { rate = \"10mbit\", burst = -1 }",
            "link.shaper.burst",
            "negative",
        ),
        (
            "shaper = { rate = \"10mbit\", burst = \"64kbit\" }",
            "link.shaper.burst",
            "unknown size unit",
        ),
        (
            "shaper = { rate = \"10mbit\", brust = \"64kb\" }",
            "link.shaper.brust",
            "did you mean burst?",
        ),
        ("shaper = { rate = 10 }", "link.shaper.rate", "needs a unit"),
        ("shaper = []", "link.shaper", "empty list"),
    ] {
        assert_error(&with_link(extra), EXTRA_LINE, key, &[needle]);
    }
    // A zero burst is a burst, not a flow size.
    let (_, s) = error_of(&with_link("policer = { rate = \"10mbit\", burst = 0 }"));
    assert!(s.contains("link.policer.burst"), "{s}");
    assert!(!s.contains("bulk flow"), "{s}");
    // A bucket's rate is one rate: a schedule there is an error that says so.
    let (_, s) = error_of(&with_link(
        "policer = { rate = [{at = \"0s\", rate = \"1mbit\"}] }",
    ));
    assert!(s.contains("link.policer.rate"), "{s}");
    assert!(!s.contains("missing required key"), "{s}");
    assert!(s.contains("schedule"), "{s}");
}

/// 1-based line of the first line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> u32 {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() as u32 + 1
}
