//! The `[hosts]` keys (latency, TCP settings, the table), controller parameters, another
//! backend's controllers, and `link.loss_burst`.

use cclab_scenario::*;
use serde_json::json;

use crate::common::*;
use crate::with_top;

#[test]
fn host_latency_keys() {
    let s = one(BASE);
    assert_eq!(
        (s.hosts.latency_ns, s.hosts.jitter_ns),
        (0, 0),
        "instant hosts by default"
    );
    // The old names under [link] still work.
    let s = one(&with_link(
        "host_latency = \"40us\"\nhost_jitter = \"0.05ms\"",
    ));
    assert_eq!((s.hosts.latency_ns, s.hosts.jitter_ns), (40_000, 50_000));
    let r = s.resolved();
    assert_eq!(r["hosts.latency"], json!(4e-5));
    assert_eq!(r["hosts.jitter"], json!(5e-5));
    assert_error(
        &with_link("host_jitter = \"-1us\""),
        6,
        "link.host_jitter",
        &["negative"],
    );
}

#[test]
fn hosts_tcp_settings() {
    // Linux's defaults when absent.
    let s = one(BASE);
    assert_eq!(s.hosts.tcp, cclab_core::host::HostTcp::default());
    assert_eq!(
        s.resolved()["hosts.tcp_rmem"],
        json!("4096 131072 33554432")
    );
    assert_eq!(s.resolved()["hosts.rto_min"], json!(0.2));
    let text = format!(
        "{BASE}[hosts]\ntcp_rmem = \"4kb 128kb 6mib\"\ntcp_wmem = \"4096 16384 16mib\"\nrcvbuf = \"2mb\"\nsndbuf = \"off\"\ninit_cwnd = 20\ninit_rwnd = 40\nrto_min = \"50ms\"\nslow_start_after_idle = false\nnotsent_lowat = \"128kb\"\npacing = true\n"
    );
    let s = one(&text);
    let t = &s.hosts.tcp;
    assert_eq!(t.tcp_rmem, [4000, 128_000, 6 << 20]);
    assert_eq!(t.tcp_wmem[2], 16 << 20);
    assert_eq!((t.rcvbuf, t.sndbuf), (Some(2_000_000), None));
    assert_eq!((t.init_rwnd, t.rto_min), (Some(40), 50_000_000));
    assert!(!t.slow_start_after_idle && s.hosts.pacing);
    assert_eq!(t.notsent_lowat, Some(128_000));
    // hosts.init_cwnd is every group's unless the group says otherwise.
    assert_eq!(s.flows[0].init_cwnd, 20);
    let s2 = one(&text.replace("[[flows]]\n", "[[flows]]\ninit_cwnd = 4\n"));
    assert_eq!(s2.flows[0].init_cwnd, 4);
    assert_eq!(one(&s.to_toml_string()), s, "round trip");
    // Sweepable and overridable.
    let mut f = load(BASE);
    f.apply_override("hosts.tcp_wmem=[\"4096 16384 1mb\",\"4096 16384 4mib\"]")
        .unwrap();
    f.apply_override("hosts.pacing=true").unwrap();
    let pts = f.expand().unwrap();
    assert_eq!(pts.len(), 2);
    assert_eq!(pts[0].scenario.hosts.tcp.tcp_wmem[2], 1_000_000);
    assert!(pts[1].scenario.hosts.pacing);
    // Impossible settings: one line naming the key and the fix.
    for (line, key, needle) in [
        (
            "tcp_rmem = \"4096 1mb 64kb\"",
            "hosts.tcp_rmem",
            "out of order",
        ),
        ("tcp_wmem = \"4096 16384\"", "hosts.tcp_wmem", "three sizes"),
        ("init_cwnd = 0", "hosts.init_cwnd", "between 1 and"),
        ("init_rwnd = 0", "hosts.init_rwnd", "between 1 and"),
        ("rto_min = \"11s\"", "hosts.rto_min", "1ms to 10s"),
        ("rcvbuf = 0", "hosts.rcvbuf", "positive"),
        (
            "notsent_lowat = \"-1kb\"",
            "hosts.notsent_lowat",
            "negative",
        ),
    ] {
        let e = ScenarioFile::from_str(&format!("{BASE}[hosts]\n{line}\n"), "t.toml").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(key) && msg.contains(needle), "{line}: {msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
    }
}

#[test]
fn hosts_table() {
    let s = one(BASE);
    assert_eq!(s.hosts, HostsSpec::default());
    assert_eq!(
        s.hosts.wake,
        Some(WakeSpec {
            idle_ns: 500_000,
            delay_ns: 100_000,
            shared_cpu: true
        }),
        "hosts sleep when idle by default, as the kernel lab's"
    );
    let text = format!(
        "{BASE}[hosts]\nlatency = \"40us\"\njitter = \"40us\"\nwake = \"200us\"\nwake_idle = \"1ms\"\nshared_cpu = false\nhz = 1000\n"
    );
    let s = one(&text);
    assert_eq!(
        (s.hosts.latency_ns, s.hosts.jitter_ns, s.hosts.hz),
        (40_000, 40_000, 1000)
    );
    assert_eq!(
        s.hosts.wake,
        Some(WakeSpec {
            idle_ns: 1_000_000,
            delay_ns: 200_000,
            shared_cpu: false
        })
    );
    // Round trip through the explicit form.
    assert_eq!(one(&s.to_toml_string()), s);
    let s = one(&format!("{BASE}[hosts]\nwake = \"off\"\n"));
    assert_eq!(s.hosts.wake, None);
    assert_eq!(s.resolved()["hosts.wake"], json!(0.0));
    assert_eq!(one(&s.to_toml_string()), s);
    // Sweepable and overridable like any key.
    let mut f = load(BASE);
    f.apply_override("hosts.wake=[0us,100us]").unwrap();
    f.apply_override("hosts.hz=1000").unwrap();
    assert_eq!(f.sweep_keys(), ["hosts.wake"]);
    let pts = f.expand().unwrap();
    assert_eq!(pts[0].scenario.hosts.wake, None);
    assert_eq!(
        pts[1].scenario.hosts.wake.map(|w| w.delay_ns),
        Some(100_000)
    );
    assert_eq!(pts[1].scenario.hosts.hz, 1000);
    // Bad values and a key given under both names.
    let e = ScenarioFile::from_str(&format!("{BASE}[hosts]\nhz = 200\n"), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("hosts.hz") && e.contains("CONFIG_HZ"), "{e}");
    let e = ScenarioFile::from_str(&format!("{BASE}[hosts]\nlatncy = \"1us\"\n"), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean latency"), "{e}");
    let both = with_link("host_latency = \"40us\"") + "[hosts]\nlatency = \"40us\"\n";
    let e = ScenarioFile::from_str(&both, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("given twice"), "{e}");
    let e = ScenarioFile::from_str(&with_top("hosts = 3"), "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("expected a table"), "{e}");
}

/// `hosts.nic_rate`: off by default, a rate faster than the link, recorded and round-tripped;
/// a rate at or below the link's is refused with what to change.
#[test]
fn nic_rate() {
    let s = one(BASE);
    assert_eq!(s.hosts.nic_rate_bps, None);
    assert_eq!(s.resolved()["hosts.nic_rate"], json!(null));
    let s = one(&format!("{BASE}[hosts]\nnic_rate = \"1gbit\"\n"));
    assert_eq!(s.hosts.nic_rate_bps, Some(1e9));
    assert_eq!(s.resolved()["hosts.nic_rate"], json!(1e9));
    assert_eq!(one(&s.to_toml_string()), s);
    let s = one(&format!("{BASE}[hosts]\nnic_rate = \"off\"\n"));
    assert_eq!(s.hosts.nic_rate_bps, None);
    let mut f = load(BASE);
    f.apply_override("hosts.nic_rate=[off,10gbit]").unwrap();
    let pts = f.expand().unwrap();
    assert_eq!(pts[1].scenario.hosts.nic_rate_bps, Some(1e10));
    for (v, want) in [
        ("\"1kbit\"", "must be faster than link.rate"),
        ("1000", "needs a unit"),
        ("true", "expected"),
    ] {
        let e = match ScenarioFile::from_str(&format!("{BASE}[hosts]\nnic_rate = {v}\n"), "t.toml")
        {
            Ok(f) => f.expand().unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("hosts.nic_rate") && e.contains(want), "{v}: {e}");
    }
}

#[test]
fn controller_parameters() {
    let with = |extra: &str| BASE.replace("cc = \"cubic\"", &format!("cc = \"cubic\"\n{extra}"));
    let s = one(&with("cc_params = { hystart = false }"));
    assert_eq!(
        s.flows[0].cc_params,
        vec![("hystart".to_string(), ParamValue::Bool(false))]
    );
    let c = s.flows[0].controller().unwrap();
    assert!(!c.bool("hystart") && c.bool("fast_convergence"));
    assert_eq!(s.resolved()["flows.cc_params.hystart"], json!(false));
    assert_eq!(
        s.resolved()["flows.cc_params.hystart_low_window"],
        json!(16),
        "defaults are resolved too"
    );
    assert_eq!(one(&s.to_toml_string()), s);
    // Unknown parameter, wrong type, out of range: one-line errors naming the key.
    for (extra, key, words) in [
        (
            "cc_params = { hystrat = false }",
            "flows.0.cc_params.hystrat",
            "did you mean hystart",
        ),
        (
            "cc_params = { hystart = 1 }",
            "flows.0.cc_params.hystart",
            "true or false",
        ),
        (
            "cc_params = { hystart_detect = 9 }",
            "flows.0.cc_params.hystart_detect",
            "between 0 and 3",
        ),
        ("cc_params = 3", "flows.0.cc_params", "expected a table"),
    ] {
        let e = ScenarioFile::from_str(&with(extra), "t.toml").unwrap_err();
        let m = e.to_string();
        assert_eq!(e.key.as_deref(), Some(key), "{m}");
        assert!(m.contains(words) && !m.contains('\n'), "{m}");
    }
    let reno = BASE.replace(
        "cc = \"cubic\"",
        "cc = \"reno\"\ncc_params = { hystart = false }",
    );
    let e = ScenarioFile::from_str(&reno, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("reno takes no parameters"), "{e}");
    let bbr = BASE.replace(
        "cc = \"cubic\"",
        "cc = \"bbr\"\ncc_params = { hystart = false }",
    );
    let e = ScenarioFile::from_str(&bbr, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("not a parameter of bbr (parameters: lt_bw)"),
        "{e}"
    );
    // A sweep of cc and of a parameter only CUBIC has: BBR runs once, without it.
    let mut f = load(BASE);
    f.apply_override("flows.cc=[cubic,bbr]").unwrap();
    f.apply_override("flows.cc_params.hystart=[true,false]")
        .unwrap();
    assert_eq!(f.sweep_keys(), ["flows.cc", "flows.cc_params.hystart"]);
    let pts = f.expand().unwrap();
    let labels: Vec<String> = pts.iter().map(|p| p.label()).collect();
    assert_eq!(
        labels,
        [
            "flows.cc=cubic,flows.cc_params.hystart=true",
            "flows.cc=cubic,flows.cc_params.hystart=false",
            "flows.cc=bbr"
        ]
    );
    assert_eq!(pts.iter().map(|p| p.index).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(pts[2].scenario.flows[0].cc_params.is_empty());
    // Overrides of parameters no controller of the file has are refused.
    let mut f = load(&bbr.replace("\ncc_params = { hystart = false }", ""));
    let e = f
        .apply_override("flows.cc_params.hystart=false")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no flow group runs a controller with the parameter hystart"),
        "{e}"
    );
    let e = f
        .apply_override("flows.cc_params.nope=1")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no controller's parameter"), "{e}");
}

#[test]
fn another_backend_s_controllers() {
    // A kernel that offers vegas: the name is accepted, and the error lists the kernel's.
    let cat = CcCatalog::names(
        "this kernel",
        &["reno".into(), "cubic".into(), "vegas".into()],
    );
    let text = BASE.replace("cc = \"cubic\"", "cc = \"vegas\"");
    let f = ScenarioFile::from_str_for(&text, "t.toml", cat.clone()).unwrap();
    assert_eq!(f.expand().unwrap()[0].scenario.flows[0].cc, "vegas");
    let e = ScenarioFile::from_str(&text, "t.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the simulator has: reno (or newreno), cubic, bbr (or bbr1, bbrv1)"),
        "{e}"
    );
    let e =
        ScenarioFile::from_str_for(&BASE.replace("\"cubic\"", "\"bbr\""), "t.toml", cat.clone())
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("this kernel has: reno (or newreno), cubic, vegas"),
        "{e}"
    );
    // Parameters are the simulator's: a kernel's cubic takes none.
    let params = BASE.replace(
        "cc = \"cubic\"",
        "cc = \"cubic\"\ncc_params = { hystart = false }",
    );
    let e = ScenarioFile::from_str_for(&params, "t.toml", cat)
        .unwrap_err()
        .to_string();
    assert!(e.contains("takes no parameters on this kernel"), "{e}");
}

/// `link.loss_burst`: a mean run length from 1 to 1000 packets, and one the loss rate allows.
#[test]
fn loss_burst_is_checked() {
    let err = |text: &str| match ScenarioFile::from_str(text, "t.toml") {
        Err(e) => e.to_string(),
        Ok(f) => f.expand().unwrap_err().to_string(),
    };
    let ok = load(&with_link("loss = \"1%\"\nloss_burst = 4"));
    let s = &ok.expand().unwrap()[0].scenario;
    assert_eq!((s.link.path.loss, s.link.path.loss_burst), (0.01, 4.0));
    let e = err(&with_link("loss = \"60%\"\nloss_burst = 1.2"));
    assert!(
        e.contains("link.loss_burst") && e.contains("use loss_burst >= 1.50"),
        "{e}"
    );
    let e = err(&with_link("loss_burst = 0.5"));
    assert!(e.contains("from 1 (independent loss) to 1000"), "{e}");
}
