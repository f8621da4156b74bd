//! Latency probes (`[[flows]]` of `kind = "probe"`): what a ping beside the flows sees.

use cclab_sim::{run, run_scenario, SimConfig, SimProbe};

fn probe(interval_ms: u64) -> SimProbe {
    SimProbe {
        group: 1,
        start_ns: 0,
        interval_ns: interval_ms * 1_000_000,
        size_bytes: 64,
    }
}

#[test]
fn on_an_idle_path_a_probe_sees_the_base_rtt_plus_its_serialisation() {
    // 50 Mbit/s, 40 ms; the one TCP flow starts only at the very end.
    let mut cfg = SimConfig::single("cubic", 50e6, 40_000_000, 1.0, 0.0, 2_000_000_000);
    cfg.flows[0].start_ns = 1_999_000_000;
    cfg.probes = vec![probe(100)];
    let r = run(&cfg);
    let p = &r.probes[0];
    // (The 21st goes at the run's very end: no echo can come back; in flight, not lost.)
    assert_eq!((p.sent, p.lost, p.unanswered_at_end), (21, 0, 1), "{p:?}");
    // 92 bytes on the wire at 50 Mbit/s: 14.72 us at the bottleneck.
    let ser_ms = 92.0 * 8.0 / 50e6 * 1e3;
    for v in [p.rtt_ms.p50, p.rtt_ms.max] {
        assert!(
            v >= 40.0 + ser_ms - 1e-6 && v <= 40.0 + 2.0 * ser_ms + 1e-6,
            "{p:?}"
        );
    }
}

fn scenario(aqm: &str, loss: &str) -> cclab_scenario::Scenario {
    let text = format!(
        "name = \"p\"\nduration = \"6s\"\n[link]\nrate = \"20mbit\"\nrtt = \"40ms\"\n\
         buffer = \"4bdp\"\naqm = \"{aqm}\"\nloss = \"{loss}\"\n[[flows]]\ncc = \"cubic\"\n\
         [[flows]]\nkind = \"probe\"\ninterval = \"20ms\"\n"
    );
    let f = cclab_scenario::Scenario::from_str(&text, "test").unwrap_or_else(|e| panic!("{e}"));
    f.expand()
        .unwrap_or_else(|e| panic!("{e}"))
        .swap_remove(0)
        .scenario
}

#[test]
fn a_bufferbloated_queue_shows_in_the_probe_and_fq_codel_keeps_it_near_base() {
    let r = run_scenario(&scenario("droptail", "0%")).unwrap();
    let p = &r.probes[0].rtt_ms;
    // The buffer holds 4 BDP = 160 ms at 20 Mbit/s: CUBIC fills it, the probe waits in it.
    assert!(p.p99 > 40.0 + 80.0 && p.p99 <= 40.0 + 160.0 + 2.0, "{p:?}");
    let r = run_scenario(&scenario("fq_codel", "0%")).unwrap();
    let p = &r.probes[0].rtt_ms;
    // Its own flow queue under fq_codel: the probe skips CUBIC's standing queue.
    assert!(p.p99 < 40.0 + 5.0, "{p:?}");
}

#[test]
fn random_data_loss_loses_probes_at_its_rate_on_the_forward_way() {
    let r = run_scenario(&scenario("droptail", "10%")).unwrap();
    let p = &r.probes[0];
    let share = p.lost as f64 / p.sent as f64;
    // `link.loss` drops data packets only (ACK loss is `ack_loss`): one draw per probe.
    assert!((share - 0.1).abs() < 0.04, "{share} of {p:?}");
}

#[test]
fn a_probe_refuses_tcp_keys_and_a_payload_out_of_range() {
    let base = "name = \"p\"\nduration = \"1s\"\n[link]\nrate = \"20mbit\"\nrtt = \"40ms\"\n\
                [[flows]]\ncc = \"cubic\"\n[[flows]]\nkind = \"probe\"\n";
    let e = cclab_scenario::Scenario::from_str(&format!("{base}cc = \"bbr\"\n"), "t")
        .err()
        .unwrap();
    assert!(e.to_string().contains("remove cc"), "{e}");
    let f = cclab_scenario::Scenario::from_str(&format!("{base}size = 4000\n"), "t").unwrap();
    let e = f.expand().err().unwrap();
    assert!(e.to_string().contains("use 16 to 1400 bytes"), "{e}");
}
