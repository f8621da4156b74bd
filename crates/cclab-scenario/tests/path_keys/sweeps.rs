//! Sweeps of the path keys: AQM names and kinds (parameters go to the kinds that take them),
//! buckets, and all of them together.

use cclab_path::{AqmDesc, FqCodelParams, LossUnit, PieParams};
use cclab_scenario::*;

use crate::common::{assert_error, error_of, load, one_line, points, with_link};
use crate::{assert_round_trip, labels, with_tables};

#[test]
fn aqm_name_sweep() {
    let f = load(&with_link(
        "aqm = [\"droptail\", \"codel\", \"FQ-CoDel\", \"pie\"]",
    ));
    assert_eq!(f.sweep_keys(), ["link.aqm"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts),
        [
            "link.aqm=droptail",
            "link.aqm=codel",
            "link.aqm=fq_codel",
            "link.aqm=pie"
        ]
    );
    assert_eq!(
        pts[2].scenario.link.path.aqm,
        AqmDesc::from(FqCodelParams::default())
    );
    for p in &pts {
        // The params value is the resolved one.
        assert_eq!(p.resolved()["link.aqm"], p.params["link.aqm"]);
        assert_round_trip(&p.scenario);
    }
}

#[test]
fn aqm_kind_sweep_applies_parameters_to_the_kinds_that_take_them() {
    let f = load(&with_tables(
        "[link.aqm]\nkind = [\"codel\", \"fq_codel\", \"pie\"]\ntarget = [\"5ms\", \"10ms\"]\n\
         interval = [\"50ms\", \"100ms\"]\nflows = [64, 1024]\ntupdate = \"30ms\"",
    ));
    assert_eq!(
        f.sweep_keys(),
        [
            "link.aqm.kind",
            "link.aqm.target",
            "link.aqm.interval",
            "link.aqm.flows"
        ]
    );
    let pts = points(&f);
    let ls = labels(&pts);
    // codel: target x interval; fq_codel: target x interval x flows; pie: target.
    assert_eq!(pts.len(), 4 + 8 + 2, "{ls:#?}");
    assert_eq!(
        ls[0],
        "link.aqm.kind=codel,link.aqm.target=0.005,link.aqm.interval=0.05"
    );
    assert_eq!(
        ls[4],
        "link.aqm.kind=fq_codel,link.aqm.target=0.005,link.aqm.interval=0.05,link.aqm.flows=64"
    );
    assert_eq!(ls[12], "link.aqm.kind=pie,link.aqm.target=0.005");
    assert_eq!(ls[13], "link.aqm.kind=pie,link.aqm.target=0.01");
    let Some(p) = pts[13].scenario.link.path.aqm.params::<PieParams>() else {
        panic!("{:?}", pts[13].scenario.link.path.aqm)
    };
    assert_eq!((p.target_ns, p.tupdate_ns), (10_000_000, 30_000_000));
    let Some(q) = pts[11].scenario.link.path.aqm.params::<FqCodelParams>() else {
        panic!()
    };
    assert_eq!(
        (q.target_ns, q.interval_ns, q.flows),
        (10_000_000, 100_000_000, 1024)
    );
    for p in &pts {
        // Every swept parameter is one the point's kind takes, with the resolved value.
        let r = p.resolved();
        for (k, v) in &p.params {
            let rk = if k == "link.aqm.kind" { "link.aqm" } else { k };
            assert_eq!(&r[rk], v, "{k} in {}", p.label());
        }
        assert_round_trip(&p.scenario);
    }
    // Points are numbered in order, without gaps.
    assert!(pts.iter().enumerate().all(|(i, p)| p.index == i));
}

#[test]
fn aqm_kind_sweep_rejects_a_parameter_no_kind_takes() {
    assert_error(
        &with_tables("[link.aqm]\nkind = [\"codel\", \"fq_codel\"]\ntupdate = \"5ms\""),
        10,
        "link.aqm.tupdate",
        &[
            "none of the swept kinds (codel, fq_codel) has a parameter tupdate",
            "pie and dualpi2 take it",
        ],
    );
    // Through an override too, which is refused and leaves the file as it was.
    let mut f = load(&with_link("aqm = [\"codel\", \"fq_codel\"]"));
    let e = f.apply_override("link.aqm.alpha=3").unwrap_err();
    let (_, s) = one_line(e);
    assert!(
        s.starts_with("t.toml: --set link.aqm.alpha=3: link.aqm.alpha"),
        "{s}"
    );
    assert!(s.contains("pie and dualpi2 take it"), "{s}");
    assert_eq!(points(&f).len(), 2);
    // A parameter of one of the swept kinds is fine, also through an override.
    f.apply_override("link.aqm.flows=[16, 32]").unwrap();
    assert_eq!(points(&f).len(), 3);
}

#[test]
fn bucket_sweeps() {
    let f = load(&with_link("policer = [\"10mbit\", \"1gbit\"]"));
    assert_eq!(f.sweep_keys(), ["link.policer"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts),
        ["link.policer=10000000", "link.policer=1000000000"]
    );
    assert_eq!(
        pts[1]
            .scenario
            .link
            .path
            .policer
            .as_ref()
            .unwrap()
            .burst_bytes,
        1_250_000
    );
    let f = load(&with_tables(
        "[link.shaper]\nrate = [\"10mbit\", \"20mbit\"]\nburst = [\"2kb\", \"1mb\"]",
    ));
    assert_eq!(f.sweep_keys(), ["link.shaper.rate", "link.shaper.burst"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts)[1],
        "link.shaper.rate=10000000,link.shaper.burst=1000000"
    );
    for p in &pts {
        let r = p.resolved();
        for (k, v) in &p.params {
            assert_eq!(&r[k], v, "{k}");
        }
        assert_round_trip(&p.scenario);
    }
    // A burst too small at one point says which point.
    let (e, s) = error_of(&with_tables(
        "[link.policer]\nrate = \"10mbit\"\nburst = [\"64kb\", \"1kb\"]",
    ));
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    assert!(s.contains("matrix point 2 of 2"), "{s}");
    assert!(s.contains("link.policer.burst=1000"), "{s}");
}

#[test]
fn sweeps_of_every_new_key_multiply() {
    let f = load(&with_link(
        "loss = \"1%\"\nloss_unit = [\"segment\", \"gso\"]\njitter = [\"0s\", \"1ms\"]\n\
         reorder = [false, true]\nack_aggregation = [\"0s\", \"2ms\"]\naqm = [\"codel\", \"pie\"]\n\
         policer = [\"10mbit\", \"20mbit\"]\nshaper = [\"30mbit\", \"40mbit\"]",
    ));
    assert_eq!(f.matrix_len(), 128);
    let pts = points(&f);
    assert_eq!(pts.len(), 128);
    let last = &pts[127].scenario.link;
    assert_eq!(last.path.loss_unit, LossUnit::Gso);
    assert_eq!(
        (
            last.path.jitter_ns,
            last.path.reorder,
            last.path.ack_aggregation_ns
        ),
        (1_000_000, true, 2_000_000)
    );
    assert_eq!(last.path.aqm.name(), "pie");
    assert_eq!(last.path.shaper.as_ref().unwrap().rate_bps, 40e6);
}
