//! `link.rate` as a schedule: one value, a list of them (a sweep), and the errors.

use cclab_path::RateDesc;
use cclab_scenario::*;
use serde_json::json;

use crate::common::{assert_error, load, one, one_of, points, with_link, BASE};
use crate::{assert_round_trip, SCHEDULE};

#[test]
fn rate_schedule_is_one_value() {
    let text = with_link("").replace("rate = \"100mbit\"", SCHEDULE);
    let f = load(&text);
    assert!(f.sweep_keys().is_empty(), "{:?}", f.sweep_keys());
    assert_eq!(f.matrix_len(), 1);
    let s = one_of(&f);
    let steps = vec![(0, 100e6), (20_000_000_000, 20e6), (25_000_000_000, 200e6)];
    assert_eq!(s.link.path.rate_varies, Some(RateDesc::Schedule(steps)));
    // The nominal rate (buffers in bdp) is the highest.
    assert_eq!(s.link.path.rate_bps, 200_000_000.0);
    assert_eq!(s.link.bdp_bytes(), 500_000);
    assert_eq!(s.link.buffer_bytes(), 500_000);
    let r = s.resolved();
    assert_eq!(r["link.rate"], json!(200_000_000));
    assert_eq!(
        r["link.rate_schedule"],
        json!([
            {"at": 0.0, "rate": 100_000_000},
            {"at": 20.0, "rate": 20_000_000},
            {"at": 25.0, "rate": 200_000_000}
        ])
    );
    // One step is a schedule too; an integer 0 is a time; steps may be written as tables.
    let s =
        one(&with_link("").replace("rate = \"100mbit\"", "rate = [{at = 0, rate = \"5mbit\"}]"));
    assert_eq!(
        s.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 5e6)]))
    );
    let text = BASE.replace("rate = \"100mbit\"\n", "")
        + "[[link.rate]]\nat = \"0s\"\nrate = \"1mbit\"\n[[link.rate]]\nat = \"1s\"\nrate = \"2mbit\"\n";
    let s = one(&text);
    assert_eq!(
        s.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 1e6), (1_000_000_000, 2e6)]))
    );
}

#[test]
fn a_list_of_schedules_is_a_sweep() {
    let text = with_link("").replace(
        "rate = \"100mbit\"",
        "rate = [[{at = \"0s\", rate = \"10mbit\"}, {at = \"1s\", rate = \"5mbit\"}], \"50mbit\", [{at = \"0s\", rate = \"1mbit\"}]]",
    );
    let f = load(&text);
    assert_eq!(f.sweep_keys(), ["link.rate"]);
    let pts = points(&f);
    assert_eq!(pts.len(), 3);
    assert_eq!(
        pts[0].params["link.rate"],
        json!([{"at": 0.0, "rate": 10_000_000}, {"at": 1.0, "rate": 5_000_000}])
    );
    assert_eq!(pts[1].params["link.rate"], json!(50_000_000));
    assert_eq!(pts[0].scenario.link.path.rate_bps, 10_000_000.0);
    assert_eq!(pts[1].scenario.link.path.rate_varies, None);
    assert_eq!(
        pts[2].scenario.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 1e6)]))
    );
    for p in &pts {
        assert_round_trip(&p.scenario);
    }
}

#[test]
fn schedule_errors_name_the_step_and_the_fix() {
    let bad = |sched: &str| with_link("").replace("rate = \"100mbit\"", &format!("rate = {sched}"));
    let cases = [
        (
            "[{at = \"1s\", rate = \"10mbit\"}]",
            &["the first step must be at \"0s\"", "e.g. rate = [{at = \"0s\""][..],
        ),
        (
            "[{at = \"0s\", rate = \"10mbit\"}, {at = \"0s\", rate = \"20mbit\"}]",
            &["step 1 is not later than step 0", "time order"][..],
        ),
        (
            "[{at = \"0s\", rate = \"10mbit\"}, {at = \"5s\", rate = \"20mbit\"}, {at = \"2s\", rate = \"1mbit\"}]",
            &["step 2 is not later than step 1"][..],
        ),
        (
            "[{at = \"0s\"}]",
            &["step 0 needs at and rate", "e.g. rate = [{at"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {rate = \"10mbit\"}]",
            &["step 1 needs at and rate"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\", loss = \"1%\"}]",
            &["step 0: unknown key loss", "a step has at and rate"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {at = \"-1s\", rate = \"1mbit\"}]",
            &["step 1", "negative"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {at = \"later\", rate = \"1mbit\"}]",
            &["step 1", "not a time"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {at = 5, rate = \"1mbit\"}]",
            &["step 1", "needs a unit"][..],
        ),
        (
            "[{at = \"0s\", rate = \"0mbit\"}]",
            &["step 0", "positive"][..],
        ),
        (
            "[{at = \"0s\", rate = 100}]",
            &["step 0", "a rate is a string like \"100mbit\""][..],
        ),
        (
            "[{at = \"0s\", rate = \"fast\"}]",
            &["step 0", "not a rate"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, \"2mbit\"]",
            &["cannot be tables"][..],
        ),
        ("[]", &["empty list"][..]),
    ];
    for (sched, needles) in cases {
        let e = assert_error(&bad(sched), 4, "link.rate", needles);
        assert!(
            matches!(e.kind, ErrorKind::BadValue | ErrorKind::WrongType),
            "{e}"
        );
    }
    // A bad schedule in a sweep names its element.
    assert_error(
        &bad("[\"1mbit\", [{at = \"1s\", rate = \"10mbit\"}]]"),
        4,
        "link.rate[1]",
        &["the first step must be at \"0s\""],
    );
}
