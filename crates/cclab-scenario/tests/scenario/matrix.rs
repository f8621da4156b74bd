//! Matrix expansion: the order of points, their params, units and groups, its limit, and the
//! resolved values of every point.

use cclab_scenario::*;
use serde_json::json;

use crate::common::*;
use crate::{with_top, MATRIX};

#[test]
fn matrix_order_last_key_fastest() {
    let f = load(MATRIX);
    assert_eq!(
        f.sweep_keys(),
        ["seed", "link.rate", "link.loss", "flows.cc"]
    );
    assert_eq!(f.matrix_len(), 16);
    let pts = f.expand().unwrap();
    assert_eq!(pts.len(), 16);
    let labels: Vec<String> = pts.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels[0],
        "seed=1,link.rate=10000000,link.loss=0.0,flows.cc=cubic"
    );
    assert_eq!(
        labels[1],
        "seed=1,link.rate=10000000,link.loss=0.0,flows.cc=bbr"
    );
    assert_eq!(
        labels[2],
        "seed=1,link.rate=10000000,link.loss=0.01,flows.cc=cubic"
    );
    assert_eq!(
        labels[4],
        "seed=1,link.rate=100000000,link.loss=0.0,flows.cc=cubic"
    );
    assert_eq!(
        labels[15],
        "seed=2,link.rate=100000000,link.loss=0.01,flows.cc=bbr"
    );
    for (i, p) in pts.iter().enumerate() {
        assert_eq!(p.index, i);
    }
    let p = &pts[13]; // 13 = 0b1101: seed=2, rate=100mbit, loss=0, cc=bbr
    assert_eq!(
        serde_json::Value::Object(p.params.clone()),
        json!({"seed": 2, "link.rate": 100_000_000, "link.loss": 0.0, "flows.cc": "bbr"})
    );
    assert_eq!(
        p.params.keys().collect::<Vec<_>>(),
        ["seed", "link.rate", "link.loss", "flows.cc"]
    );
    assert_eq!(p.scenario.seed, 2);
    assert_eq!(p.scenario.link.path.rate_bps, 100_000_000.0);
    assert_eq!(p.scenario.link.path.loss, 0.0);
    assert_eq!(p.scenario.flows[0].cc, "bbr");
    // Every point is distinct.
    let mut uniq = labels.clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), 16);
}

#[test]
fn matrix_file_order_decides() {
    // Same keys, other order in the file: loss now varies slowest within [link].
    let text = MATRIX.replace(
        "rate = [\"10mbit\", \"100mbit\"]\nrtt = \"10ms\"\nloss = [0, \"1%\"]\n",
        "loss = [0, \"1%\"]\nrtt = \"10ms\"\nrate = [\"10mbit\", \"100mbit\"]\n",
    );
    assert_eq!(
        load(&text).sweep_keys(),
        ["seed", "link.loss", "link.rate", "flows.cc"]
    );
}

#[test]
fn matrix_params_units_and_groups() {
    let text = r#"name = "g"
duration = ["1s", "500ms"]
[link]
rate = "1gbit"
rtt = ["10ms", "100ms"]
buffer = ["0.5bdp", "100pkt", "64kb"]
[[flows]]
cc = "cubic"
size = ["10kb", "1mib"]
[[flows]]
cc = "bbr"
start = ["0s", "250ms"]
"#;
    let f = load(text);
    assert_eq!(
        f.sweep_keys(),
        [
            "duration",
            "link.rtt",
            "link.buffer",
            "flows.0.size",
            "flows.1.start"
        ]
    );
    let pts = f.expand().unwrap();
    assert_eq!(pts.len(), 2 * 2 * 3 * 2 * 2);
    let last = pts.last().unwrap();
    assert_eq!(
        serde_json::Value::Object(last.params.clone()),
        json!({"duration": 0.5, "link.rtt": 0.1, "link.buffer": "64kb", "flows.0.size": 1048576, "flows.1.start": 0.25})
    );
    assert_eq!(last.scenario.link.buffer, Buffer::Bytes(64_000));
    assert_eq!(last.scenario.flows[1].start_ns, 250_000_000);
    assert_eq!(pts[0].params["link.buffer"], json!("0.5bdp"));
}

#[test]
fn no_lists_means_one_point_with_empty_params() {
    let pts = load(BASE).expand().unwrap();
    assert_eq!(pts.len(), 1);
    assert!(pts[0].params.is_empty());
    assert_eq!(pts[0].label(), "");
    assert!(load(BASE).sweep_keys().is_empty());
}

#[test]
fn matrix_too_large_is_an_error() {
    let list = format!(
        "[{}]",
        (1..=100)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let text = with_top(&format!("seed = {list}")).replace(
        "cc = \"cubic\"",
        &format!("cc = \"cubic\"\ncount = {list}\ninit_cwnd = {list}"),
    );
    let f = load(&text);
    assert_eq!(f.matrix_len(), 1_000_000);
    let e = f.expand().unwrap_err();
    assert!(e.to_string().contains("at most 100000"), "{e}");
}

#[test]
fn resolved_map_has_every_key() {
    let p = &load(MATRIX).expand().unwrap()[3];
    let r = p.resolved();
    let keys: Vec<&str> = r.keys().map(|k| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "name",
            "duration",
            "seed",
            "link.rate",
            "link.rtt",
            "link.buffer",
            "link.buffer_bytes",
            "link.bdp_bytes",
            "link.packet_bytes",
            "link.loss",
            "link.loss_burst",
            "link.ack_loss",
            "link.mss",
            "link.ecn_threshold",
            "link.loss_unit",
            "link.aqm",
            "link.policer",
            "link.shaper",
            "link.jitter",
            "link.reorder",
            "link.ack_aggregation",
            "hosts.latency",
            "hosts.jitter",
            "hosts.wake",
            "hosts.wake_idle",
            "hosts.shared_cpu",
            "hosts.hz",
            "hosts.tcp_rmem",
            "hosts.tcp_wmem",
            "hosts.rcvbuf",
            "hosts.sndbuf",
            "hosts.init_cwnd",
            "hosts.init_rwnd",
            "hosts.rto_min",
            "hosts.slow_start_after_idle",
            "hosts.notsent_lowat",
            "hosts.pacing",
            "hosts.nic_rate",
            "hosts.probe_start",
            "hosts.profile",
            "flows.cc",
            "flows.count",
            "flows.start",
            "flows.size",
            "flows.rtt_extra",
            "flows.init_cwnd",
            "flows.ecn",
            "flows.cc_params.lt_bw"
        ]
    );
    assert_eq!(r["duration"], json!(5.0));
    assert_eq!(r["link.rate"], json!(10_000_000));
    assert_eq!(r["link.rtt"], json!(0.01));
    assert_eq!(r["link.buffer"], json!("1bdp"));
    assert_eq!(r["link.buffer_bytes"], json!(12_500));
    assert_eq!(r["flows.size"], json!(null));
    // Every swept param appears in the resolved map with the same value.
    for (k, v) in &p.params {
        assert_eq!(&r[k], v, "{k}");
    }
}

#[test]
fn resolved_map_has_each_probe_groups_keys_by_its_file_index() {
    let f = ScenarioFile::from_str(
        "name = \"p\"\nduration = \"5s\"\n[link]\nrate = \"10mbit\"\nrtt = \"10ms\"\n\
         [[flows]]\nkind = \"probe\"\ninterval = \"20ms\"\nsize = 100\n\
         [[flows]]\ncc = \"cubic\"\n\
         [[flows]]\ncc = \"bbr\"\n\
         [[flows]]\nkind = \"probe\"\nstart = \"1s\"\n",
        "p",
    )
    .unwrap();
    let r = f.expand().unwrap()[0].resolved();
    // TCP groups keep their own numbering; probes are named by their place in the file.
    assert_eq!(r["flows.0.cc"], json!("cubic"));
    assert_eq!(r["flows.1.cc"], json!("bbr"));
    assert_eq!(r["probes.0.interval"], json!(0.02));
    assert_eq!(r["probes.0.size"], json!(100));
    assert_eq!(r["probes.0.start"], json!(0.0));
    assert_eq!(r["probes.3.interval"], json!(0.1));
    assert_eq!(r["probes.3.size"], json!(64));
    assert_eq!(r["probes.3.start"], json!(1.0));
    assert_eq!(r.keys().filter(|k| k.starts_with("probes.")).count(), 6);
    // Without probes, no probe key.
    let plain = load(MATRIX).expand().unwrap()[0].resolved();
    assert!(!plain.keys().any(|k| k.starts_with("probes.")));
}
