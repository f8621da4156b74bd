//! `link.aqm`: absent, a name, a `[link.aqm]` table; Linux's defaults, every discipline's
//! parameters, and the errors.

use cclab_path::{AqmDesc, CodelParams, FqCodelParams, PieParams};
use cclab_scenario::*;
use serde_json::json;

use crate::common::{assert_error, one, with_link, BASE};
use crate::{with_tables, EXTRA_LINE};

#[test]
fn aqm_absent_is_droptail() {
    let s = one(BASE);
    assert_eq!(s.link.path.aqm, AqmDesc::default());
    let r = s.resolved();
    assert_eq!(r["link.aqm"], json!("droptail"));
    assert!(!r.contains_key("link.aqm.target"));
    // Drop-tail is written as nothing at all.
    assert!(!s.to_toml_string().contains("aqm"));
}

#[test]
fn aqm_names_take_linux_defaults() {
    let codel = one(&with_link("aqm = \"codel\"")).link;
    assert_eq!(
        codel.path.aqm,
        AqmDesc::from(CodelParams {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
        })
    );
    let fq = one(&with_link("aqm = \"fq_codel\"")).link;
    assert_eq!(
        fq.path.aqm,
        AqmDesc::from(FqCodelParams {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
            flows: 1024,
            quantum: 1514,
            drop_batch: 64,
        })
    );
    let pie = one(&with_link("aqm = \"pie\"")).link;
    assert_eq!(
        pie.path.aqm,
        AqmDesc::from(PieParams {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha: 2,
            beta: 20,
            max_burst_ns: 150_000_000,
            ecn: true,
            bytemode: false,
            dq_rate_estimator: false,
        })
    );
    assert_eq!(
        one(&with_link("aqm = \"droptail\"")).link.path.aqm,
        AqmDesc::default()
    );
    // The table form with only `kind` is the same.
    for (name, link) in [("codel", &codel), ("fq_codel", &fq), ("pie", &pie)] {
        let table = one(&with_tables(&format!("[link.aqm]\nkind = \"{name}\"")));
        assert_eq!(table.link.path.aqm, link.path.aqm, "{name}");
        let inline = one(&with_link(&format!("aqm = {{ kind = \"{name}\" }}")));
        assert_eq!(inline.link.path.aqm, link.path.aqm, "{name}");
        assert_eq!(link.path.aqm.name(), name);
    }
    // The buffer is the same whatever the discipline (the queue's limit).
    assert_eq!(codel.buffer_bytes(), 250_000);
}

#[test]
fn aqm_name_spellings() {
    for (text, want) in [
        ("FQ_CODEL", "fq_codel"),
        ("fq-codel", "fq_codel"),
        ("fqcodel", "fq_codel"),
        (" CoDel ", "codel"),
        ("PIE", "pie"),
        ("fifo", "droptail"),
        ("bfifo", "droptail"),
        ("drop-tail", "droptail"),
        ("none", "droptail"),
    ] {
        let s = one(&with_link(&format!("aqm = \"{text}\"")));
        assert_eq!(s.link.path.aqm.name(), want, "{text}");
        let s = one(&with_tables(&format!("[link.aqm]\nkind = \"{text}\"")));
        assert_eq!(s.link.path.aqm.name(), want, "{text}");
    }
}

#[test]
fn aqm_table_sets_each_parameter() {
    let s = one(&with_tables(
        "[link.aqm]\nkind = \"codel\"\ntarget = \"2ms\"\ninterval = \"50ms\"\necn = false",
    ));
    assert_eq!(
        s.link.path.aqm,
        AqmDesc::from(CodelParams {
            target_ns: 2_000_000,
            interval_ns: 50_000_000,
            ecn: false,
        })
    );
    let r = s.resolved();
    assert_eq!(r["link.aqm"], json!("codel"));
    assert_eq!(r["link.aqm.target"], json!(0.002));
    assert_eq!(r["link.aqm.interval"], json!(0.05));
    assert_eq!(r["link.aqm.ecn"], json!(false));

    let s = one(&with_tables(
        "[link.aqm]\nkind = \"fq_codel\"\ntarget = \"1ms\"\ninterval = \"20ms\"\necn = false\n\
         flows = 16\nquantum = 300\ndrop_batch = 8",
    ));
    let want = AqmDesc::from(FqCodelParams {
        target_ns: 1_000_000,
        interval_ns: 20_000_000,
        ecn: false,
        flows: 16,
        quantum: 300,
        drop_batch: 8,
    });
    assert_eq!(s.link.path.aqm, want);
    let r = s.resolved();
    assert_eq!(
        (
            &r["link.aqm.flows"],
            &r["link.aqm.quantum"],
            &r["link.aqm.drop_batch"]
        ),
        (&json!(16), &json!(300), &json!(8))
    );

    let s = one(&with_link(
        "aqm = { kind = \"pie\", target = \"20ms\", tupdate = \"30ms\", alpha = 4, beta = 0, \
         max_burst = \"0s\", ecn = false, bytemode = true, dq_rate_estimator = true }",
    ));
    let want = AqmDesc::from(PieParams {
        target_ns: 20_000_000,
        tupdate_ns: 30_000_000,
        alpha: 4,
        beta: 0,
        max_burst_ns: 0,
        ecn: false,
        bytemode: true,
        dq_rate_estimator: true,
    });
    assert_eq!(s.link.path.aqm, want);
    let r = s.resolved();
    assert_eq!(r["link.aqm.tupdate"], json!(0.03));
    assert_eq!(r["link.aqm.max_burst"], json!(0.0));
    assert_eq!(r["link.aqm.alpha"], json!(4));
    assert_eq!(r["link.aqm.bytemode"], json!(true));
    assert_eq!(r["link.aqm.dq_rate_estimator"], json!(true));
    // Only the discipline's own parameters are resolved.
    assert!(!r.contains_key("link.aqm.interval"));
    assert!(!r.contains_key("link.aqm.flows"));
    // Parameters of a kind not given keep the kind's defaults.
    let s = one(&with_tables("[link.aqm]\nkind = \"pie\"\ntarget = \"5ms\""));
    let Some(p) = s.link.path.aqm.params::<PieParams>() else {
        panic!()
    };
    assert_eq!(
        (p.target_ns, p.tupdate_ns, p.alpha),
        (5_000_000, 15_000_000, 2)
    );
}

#[test]
fn aqm_every_discipline_lists_its_parameters() {
    // Every setting a discipline declares (cclab_path::AQMS is the truth) is accepted for it,
    // and every other discipline's is refused; a value of the declared kind for each.
    let keys: Vec<&cclab_path::Setting> = {
        let mut v: Vec<&cclab_path::Setting> = Vec::new();
        for s in cclab_path::AQMS.iter().flat_map(|a| a.settings) {
            if !v.iter().any(|x| x.name == s.name) {
                v.push(s);
            }
        }
        v
    };
    assert!(keys.len() >= 12, "{} settings", keys.len());
    for aqm in cclab_path::AQMS {
        for s in &keys {
            // A value in the discipline's own range where it takes the key (two disciplines'
            // settings of one name may differ in range: PIE's and DualPI2's `alpha`).
            let s = aqm.settings.iter().find(|x| x.name == s.name).unwrap_or(s);
            let v = match s.kind {
                cclab_path::SettingKind::Time { .. } => "\"3ms\"".to_string(),
                cclab_path::SettingKind::Int { min, .. } => min.to_string(),
                cclab_path::SettingKind::Bool => "true".to_string(),
                cclab_path::SettingKind::Rate => "\"10mbit\"".to_string(),
                cclab_path::SettingKind::Size => "\"64kb\"".to_string(),
            };
            let (kind, k) = (aqm.name, s.name);
            let text = with_tables(&format!("[link.aqm]\nkind = \"{kind}\"\n{k} = {v}"));
            let r = match ScenarioFile::from_str(&text, "t.toml") {
                Ok(f) => f.expand().map(|_| ()),
                Err(e) => Err(e),
            };
            let takes = aqm.settings.iter().any(|x| x.name == k);
            assert_eq!(r.is_ok(), takes, "{kind}.{k}: {r:?}");
        }
    }
    // The lists as docs/scenarios.md gives them.
    let names = |kind: &str| -> Vec<&str> {
        let a = cclab_path::Aqm::by_name(kind).expect("registered");
        a.settings.iter().map(|s| s.name).collect()
    };
    assert_eq!(names("codel"), ["target", "interval", "ecn"]);
    assert_eq!(names("droptail"), Vec::<&str>::new());
}

#[test]
fn aqm_errors_name_the_key_and_the_fix() {
    let line = EXTRA_LINE;
    // An unknown name lists the names.
    let e = assert_error(
        &with_link("aqm = \"red\""),
        line,
        "link.aqm = \"red\"",
        &[
            "unknown queue discipline \"red\"",
            "droptail, codel, fq_codel, pie",
        ],
    );
    assert_eq!(e.kind, ErrorKind::BadValue);
    assert_error(
        &with_tables("[link.aqm]\nkind = \"sfq\""),
        9,
        "link.aqm.kind",
        &["unknown queue discipline \"sfq\"", "fq_codel, pie"],
    );
    assert_error(
        &with_link("aqm = [\"codel\", \"cake\"]"),
        line,
        "link.aqm[1]",
        &["unknown queue discipline \"cake\"", "droptail, codel"],
    );
    // A parameter the discipline does not take says which take it.
    let e = assert_error(
        &with_tables("[link.aqm]\nkind = \"codel\"\nflows = 16"),
        10,
        "link.aqm.flows",
        &[
            "codel has no parameter flows",
            "codel takes: target, interval, ecn",
            "fq_codel takes it",
        ],
    );
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    assert_error(
        &with_tables("[link.aqm]\nkind = \"fq_codel\"\ntupdate = \"5ms\""),
        10,
        "link.aqm.tupdate",
        &[
            "fq_codel has no parameter tupdate",
            "pie and dualpi2 take it",
        ],
    );
    assert_error(
        &with_tables("[link.aqm]\nkind = \"pie\"\ninterval = \"5ms\""),
        10,
        "link.aqm.interval",
        &["pie has no parameter interval", "codel"],
    );
    assert_error(
        &with_tables("[link.aqm]\nkind = \"droptail\"\ntarget = \"5ms\""),
        10,
        "link.aqm.target",
        &["droptail has no parameter target", "droptail takes: none"],
    );
    // The table needs its kind.
    let e = assert_error(
        &with_tables("[link.aqm]\ntarget = \"5ms\""),
        8,
        "link.aqm.kind",
        &["missing required key", "kind = \"codel\""],
    );
    assert_eq!(e.kind, ErrorKind::MissingKey);
    // Unknown keys of the table get a suggestion among its keys.
    assert_error(
        &with_tables("[link.aqm]\nkind = \"codel\"\ntargte = \"5ms\""),
        10,
        "link.aqm.targte",
        &["did you mean target?", "allowed here: kind, target"],
    );
    // Wrong types and values out of range.
    for (extra, key, needle) in [
        (
            "aqm = 5",
            "link.aqm",
            "a queue discipline (droptail, codel, fq_codel, pie, dualpi2) or a [link.aqm] table",
        ),
        ("aqm = true", "link.aqm", "or a [link.aqm] table"),
        (
            "aqm = { kind = 1 }",
            "link.aqm.kind",
            "expected a queue discipline",
        ),
        (
            "aqm = { kind = \"codel\", target = \"0ms\" }",
            "link.aqm.target",
            "must be positive",
        ),
        (
            "aqm = { kind = \"codel\", target = 5 }",
            "link.aqm.target",
            "needs a unit",
        ),
        (
            "aqm = { kind = \"codel\", target = \"-5ms\" }",
            "link.aqm.target",
            "negative",
        ),
        (
            "aqm = { kind = \"codel\", interval = \"soon\" }",
            "link.aqm.interval",
            "not a time",
        ),
        (
            "aqm = { kind = \"codel\", ecn = \"yes\" }",
            "link.aqm.ecn",
            "true or false",
        ),
        (
            "aqm = { kind = \"fq_codel\", flows = 0 }",
            "link.aqm.flows",
            "between 1 and 65536",
        ),
        (
            "aqm = { kind = \"fq_codel\", flows = 1.5 }",
            "link.aqm.flows",
            "whole number",
        ),
        (
            "aqm = { kind = \"fq_codel\", quantum = 100 }",
            "link.aqm.quantum",
            "between 256 and",
        ),
        (
            "aqm = { kind = \"fq_codel\", drop_batch = 2000 }",
            "link.aqm.drop_batch",
            "between 1 and 1024",
        ),
        (
            "aqm = { kind = \"pie\", alpha = 33 }",
            "link.aqm.alpha",
            "between 0 and 32",
        ),
        (
            // (PIE's and DualPI2's `beta` share the key: a negative one is refused there,
            // with the range either may take; 33 above is PIE's own range.)
            "aqm = { kind = \"pie\", beta = -1 }",
            "link.aqm.beta",
            "between 0 and",
        ),
        (
            "aqm = { kind = \"pie\", tupdate = \"0s\" }",
            "link.aqm.tupdate",
            "positive",
        ),
        (
            "aqm = { kind = \"pie\", max_burst = \"-1ms\" }",
            "link.aqm.max_burst",
            "negative",
        ),
        ("aqm = []", "link.aqm", "empty list"),
        ("aqm = [[\"codel\"]]", "link.aqm[0]", "cannot be nested"),
        (
            "aqm = [{ kind = \"codel\" }]",
            "link.aqm[0]",
            "cannot be tables",
        ),
    ] {
        assert_error(&with_link(extra), line, key, &[needle]);
    }
}
