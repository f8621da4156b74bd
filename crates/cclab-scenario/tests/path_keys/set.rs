//! `--set` reaches every form of the path keys: AQMs, buckets, the scalar keys and schedules.

use cclab_path::{AqmDesc, CodelParams, FqCodelParams, LossUnit, PieParams, RateDesc, TokenBucket};

use crate::common::{load, one_of, points, with_link, BASE};
use crate::{labels, set_error, with_sets, with_tables, SCHEDULE};

#[test]
fn set_aqm_every_form() {
    // A name where there was none.
    let s = one_of(&with_sets(BASE, &["link.aqm=fq_codel"]));
    assert_eq!(s.link.path.aqm, AqmDesc::from(FqCodelParams::default()));
    // A bare name becomes the table's kind, so a parameter can be set beside it.
    let f = with_sets(&with_link("aqm = \"codel\""), &["link.aqm.target=10ms"]);
    let Some(p) = one_of(&f).link.path.aqm.params::<CodelParams>() else {
        panic!()
    };
    assert_eq!((p.target_ns, p.interval_ns), (10_000_000, 100_000_000));
    // In either order.
    let f = with_sets(
        BASE,
        &["link.aqm=pie", "link.aqm.alpha=5", "link.aqm.kind=pie"],
    );
    let Some(p) = one_of(&f).link.path.aqm.params::<PieParams>() else {
        panic!()
    };
    assert_eq!(p.alpha, 5);
    // Into a file's table; a list sweeps; the kind can change.
    let table = with_tables("[link.aqm]\nkind = \"fq_codel\"\nflows = 16");
    let f = with_sets(&table, &["link.aqm.quantum=[300, 1514]"]);
    assert_eq!(f.sweep_keys(), ["link.aqm.quantum"]);
    assert_eq!(
        labels(&points(&f)),
        ["link.aqm.quantum=300", "link.aqm.quantum=1514"]
    );
    let f = with_sets(
        &with_link("aqm = \"codel\""),
        &["link.aqm=[codel, fq_codel]"],
    );
    assert_eq!(labels(&points(&f)), ["link.aqm=codel", "link.aqm=fq_codel"]);
    let f = with_sets(
        &with_link("aqm = [\"codel\", \"pie\"]"),
        &["link.aqm.target=[1ms, 2ms]"],
    );
    assert_eq!(f.sweep_keys(), ["link.aqm.kind", "link.aqm.target"]);
    assert_eq!(points(&f).len(), 4);
    // A whole inline table replaces the file's.
    let f = with_sets(&table, &["link.aqm={kind=\"codel\", ecn=false}"]);
    assert_eq!(
        one_of(&f).link.path.aqm,
        AqmDesc::from(CodelParams {
            ecn: false,
            ..Default::default()
        })
    );
    // And back to drop-tail.
    assert_eq!(
        one_of(&with_sets(&table, &["link.aqm=droptail"]))
            .link
            .path
            .aqm,
        AqmDesc::default()
    );
}

#[test]
fn set_aqm_errors() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            BASE,
            &["link.aqm=red"],
            &["unknown queue discipline \"red\"", "fq_codel"],
        ),
        (
            BASE,
            &["link.aqm.target=10ms"],
            &["link.aqm.kind", "missing required key", "kind = \"codel\""],
        ),
        (BASE, &["link.aqm.tagret=10ms"], &["did you mean target?"]),
        (BASE, &["link.aqm.kind=[]"], &["empty list"]),
        (
            "",
            &["link.aqm=pie", "link.aqm.interval=5ms"],
            &[
                "link.aqm.interval",
                "pie has no parameter interval",
                "codel",
            ],
        ),
        (
            "",
            &["link.aqm=codel", "link.aqm.flows=0"],
            &["between 1 and 65536"],
        ),
        (
            "",
            &["link.aqm=codel", "link.aqm.target=5"],
            &["needs a unit"],
        ),
    ];
    for (file, sets, needles) in cases {
        let file = if file.is_empty() { BASE } else { file };
        let (_, s) = set_error(file, sets);
        assert!(s.starts_with("t.toml"), "{s}");
        for n in *needles {
            assert!(s.contains(n), "{sets:?}: {n:?} missing in: {s}");
        }
    }
    // A rejected override leaves the file as it was.
    let mut f = load(&with_link("aqm = \"codel\""));
    let before = one_of(&f);
    f.apply_override("link.aqm.target=-1ms").unwrap_err();
    f.apply_override("link.aqm.kind=wfq").unwrap_err();
    assert_eq!(one_of(&f), before);
}

#[test]
fn set_bucket_every_form() {
    let s = one_of(&with_sets(BASE, &["link.policer=10mbit"]));
    assert_eq!(
        s.link.path.policer,
        Some(TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 65_536
        })
    );
    // A bare rate becomes the table's rate.
    let f = with_sets(
        &with_link("policer = \"10mbit\""),
        &["link.policer.burst=128kb"],
    );
    assert_eq!(
        one_of(&f).link.path.policer,
        Some(TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 128_000
        })
    );
    // A table made by its keys, rate first.
    let f = with_sets(BASE, &["link.shaper.rate=20mbit", "link.shaper.burst=3000"]);
    assert_eq!(
        one_of(&f).link.path.shaper,
        Some(TokenBucket {
            rate_bps: 20e6,
            burst_bytes: 3000
        })
    );
    let f = with_sets(
        BASE,
        &[
            "link.shaper=20mbit",
            "link.shaper.burst=3000",
            "link.shaper.rate=[20mbit, 40mbit]",
        ],
    );
    assert_eq!(f.sweep_keys(), ["link.shaper.rate"]);
    let pts = points(&f);
    assert_eq!(
        pts[1].scenario.link.path.shaper.as_ref().unwrap().rate_bps,
        40e6
    );
    assert_eq!(
        pts[1]
            .scenario
            .link
            .path
            .shaper
            .as_ref()
            .unwrap()
            .burst_bytes,
        3000
    );
    let f = with_sets(BASE, &["link.policer={rate=\"5mbit\", burst=\"10kb\"}"]);
    assert_eq!(one_of(&f).link.path.policer.unwrap().burst_bytes, 10_000);
    // Errors.
    let (_, s) = set_error(BASE, &["link.policer.burst=128kb"]);
    assert!(
        s.contains("link.policer.rate") && s.contains("missing required key"),
        "{s}"
    );
    let (_, s) = set_error(
        &with_link("policer = \"10mbit\""),
        &["link.policer.burst=1kb"],
    );
    assert!(s.contains("cannot pass one packet of 1500 bytes"), "{s}");
    let (_, s) = set_error(BASE, &["link.shaper=fast"]);
    assert!(
        s.contains("--set link.shaper=fast") && s.contains("not a rate"),
        "{s}"
    );
    let (_, s) = set_error(BASE, &["link.policer.brust=1kb"]);
    assert!(s.contains("did you mean burst?"), "{s}");
}

#[test]
fn set_new_scalar_keys() {
    let f = with_sets(
        BASE,
        &[
            "link.loss_unit=gso",
            "link.jitter=1ms",
            "link.reorder=true",
            "link.ack_aggregation=[1ms, 4ms]",
        ],
    );
    assert_eq!(f.sweep_keys(), ["link.ack_aggregation"]);
    let pts = points(&f);
    let l = &pts[1].scenario.link;
    assert_eq!(
        (
            l.path.loss_unit,
            l.path.jitter_ns,
            l.path.reorder,
            l.path.ack_aggregation_ns
        ),
        (LossUnit::Gso, 1_000_000, true, 4_000_000)
    );
    for (spec, needle) in [
        ("link.loss_unit=packet", "unknown loss unit"),
        ("link.jitter=-1ms", "negative"),
        ("link.jitter=1", "needs a unit"),
        ("link.ack_aggregation=soon", "not a time"),
        ("link.reorder=yes", "true or false"),
        ("link.trace=", "empty value"),
    ] {
        let (_, s) = set_error(BASE, &[spec]);
        assert!(s.starts_with(&format!("t.toml: --set {spec}")), "{s}");
        assert!(s.contains(needle), "{spec}: {s}");
    }
}

#[test]
fn set_rate_schedule() {
    let f = with_sets(
        BASE,
        &["link.rate=[{at=\"0s\",rate=\"100mbit\"},{at=\"5s\",rate=\"20mbit\"}]"],
    );
    assert!(f.sweep_keys().is_empty());
    let s = one_of(&f);
    assert_eq!(
        s.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 100e6), (5_000_000_000, 20e6)]))
    );
    assert_eq!(s.link.path.rate_bps, 100_000_000.0);
    // A list of schedules sweeps.
    let f = with_sets(
        BASE,
        &["link.rate=[[{at=\"0s\",rate=\"1mbit\"}], [{at=\"0s\",rate=\"2mbit\"},{at=\"1s\",rate=\"3mbit\"}]]"],
    );
    assert_eq!(f.sweep_keys(), ["link.rate"]);
    assert_eq!(points(&f).len(), 2);
    // And back to a fixed rate.
    let f = with_sets(
        &with_link("").replace("rate = \"100mbit\"", SCHEDULE),
        &["link.rate=10mbit"],
    );
    assert_eq!(one_of(&f).link.path.rate_varies, None);
    for (spec, needle) in [
        (
            "link.rate=[{at=\"1s\",rate=\"1mbit\"}]",
            "the first step must be at \"0s\"",
        ),
        ("link.rate=[{at=\"0s\"}]", "needs at and rate"),
        (
            "link.rate=[{at=\"0s\",rate=\"1mbit\",x=1}]",
            "unknown key x",
        ),
        (
            "link.rate=[{at=\"0s\",rate=\"1mbit\"},{at=\"0s\",rate=\"2mbit\"}]",
            "not later than",
        ),
        ("link.rate=[{at=\"0s\",rate=\"1mbit\"", "not valid TOML"),
    ] {
        let (_, s) = set_error(BASE, &[spec]);
        assert!(s.starts_with("t.toml: --set link.rate="), "{s}");
        assert!(s.contains(needle), "{spec}: {s}");
    }
}
