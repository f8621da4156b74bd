//! `--set` overrides: of a scalar, as a list (a sweep), per flow group, and their errors.

use cclab_scenario::*;

use crate::common::*;

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

#[test]
fn an_override_replaces_a_value_the_file_has_wrong() {
    let text = BASE.replace("cc = \"cubic\"", "cc = \"cubci\"");
    assert_ne!(text, BASE, "the test edits BASE's controller");
    let sim = CcCatalog::simulator;
    // The file alone is refused; with the override that replaces the bad value it runs.
    assert!(ScenarioFile::from_str_with_overrides(&text, "t.toml", sim(), &[]).is_err());
    let f = ScenarioFile::from_str_with_overrides(&text, "t.toml", sim(), &["flows.cc=bbr".into()])
        .unwrap();
    assert_eq!(f.expand().unwrap()[0].scenario.flows[0].cc, "bbr");
    // A bad file value and a bad override are both named, each where it came from.
    let e =
        ScenarioFile::from_str_with_overrides(&text, "t.toml", sim(), &["link.rate=fast".into()])
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("cubci") && e.contains("--set link.rate=fast"),
        "{e}"
    );
}
