//! A realistic file loads, writes back with `to_toml_string` and loads again to the same
//! scenarios.

use cclab_scenario::*;
use serde_json::json;

use crate::common::*;
use crate::{edit, REALISTIC};

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
                accecn: false,
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
                accecn: false,
            },
        ],
        probes: Vec::new(),
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

/// `flows.ecn = "accecn"`: Accurate ECN feedback (ECN too), resolved and written back as
/// "accecn"; `true` stays classic ECN; any other word is a one-line error naming the three.
#[test]
fn ecn_takes_accecn_beside_true_and_false() {
    let text = "name = \"a\"\nduration = \"1s\"\n[link]\nrate = \"10mbit\"\nrtt = \"20ms\"\n\
                [[flows]]\ncc = \"cubic\"\necn = \"accecn\"\n[[flows]]\ncc = \"cubic\"\necn = true\n";
    let s = one(text);
    assert!(s.flows[0].ecn && s.flows[0].accecn);
    assert!(s.flows[1].ecn && !s.flows[1].accecn);
    let r = s.resolved();
    assert_eq!(r["flows.0.ecn"], json!("accecn"));
    assert_eq!(r["flows.1.ecn"], json!(true));
    assert_eq!(one(&s.to_toml_string()), s);
    let (_, msg) = error_of(&text.replace("\"accecn\"", "\"accurate\""));
    assert!(
        msg.contains("flows.0.ecn") && msg.contains("\"accecn\"") && msg.contains("true"),
        "{msg}"
    );
}
