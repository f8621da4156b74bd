//! Kernel-backend tests. They need root (CI runs them as root); without it, or without a
//! kernel feature they need, each prints `SKIP <test>: <reason>` to stderr (not captured)
//! and returns. Runs are serialised (one lab at a time: measurements need the CPUs).

use cclab_kernel::testing::{lab_lock, ours_left, skip};
use cclab_kernel::*;
use cclab_scenario::{Buffer, FlowSpec, LinkSpec, Scenario};
use cclab_sys::available_ccs;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `run` up to three times while the machine disturbed it (its hypervisor took CPU time or
/// the element stalled: the lab then serves fewer packets than its path allows), as
/// `cclab run --backend kernel` retries: the first quiet result, else the least disturbed.
fn quiet(
    test: &str,
    mut run: impl FnMut() -> cclab_results::RunResult,
) -> cclab_results::RunResult {
    let attempt = || Ok::<_, std::convert::Infallible>(run());
    let note = |_: u32, _: &cclab_results::RunResult, why: &str| {
        let _ = writeln!(std::io::stderr(), "NOTE {test}: a disturbed run ({why})");
    };
    cclab_results::first_quiet(2, attempt, note).unwrap_or_else(|never| match never {})
}

/// [`quiet`] for a run with the element's details.
fn quiet_detailed(test: &str, mut run: impl FnMut() -> KernelRun) -> KernelRun {
    let mut runs = Vec::new();
    let chosen = quiet(test, || {
        let r = run();
        let res = r.result.clone();
        runs.push(r);
        res
    });
    // The attempt chosen (its number is in its conditions; a run without any is the first).
    let n = chosen.lab.as_ref().map_or(0, |l| l.retries as usize);
    runs.swap_remove(n)
}

fn scenario(rate: f64, rtt_ms: f64, bdp: f64, loss: f64, cc: &str, secs: f64) -> Scenario {
    Scenario {
        name: "test".into(),
        description: None,
        duration_ns: Some((secs * 1e9) as u64),
        seed: 1,
        link: LinkSpec {
            path: cclab_path::LinkDesc {
                rate_bps: (rate as u64) as f64,
                rtt_ns: (rtt_ms * 1e6) as u64,
                loss,
                ack_loss: 0.0,
                ecn_threshold_ns: None,
                loss_burst: 1.0,
                ..Default::default()
            },
            buffer: Buffer::Bdp(bdp),
            mss: 1448,
        },
        hosts: Default::default(),
        flows: vec![FlowSpec {
            cc_params: vec![],
            cc: cc.into(),
            count: 1,
            start_ns: 0,
            size_bytes: None,
            rtt_extra_ns: 0,
            init_cwnd: 10,
            ecn: false,
            accecn: false,
        }],
        probes: Vec::new(),
        reference: None,
    }
}

#[test]
fn idle_rtt_is_the_set_rtt() {
    let Some(_g) = lab_lock("idle_rtt_is_the_set_rtt", &[]) else {
        return;
    };
    for rtt_ms in [10.0, 100.0] {
        // A burst of hypervisor steal delays a sample or two by a millisecond (seen in CI:
        // 2 of 15 at +1.0 ms), and a busy spell of the host can shift a whole attempt by
        // ~2 ms for several seconds (seen once in CI, all three attempts within 10 s); a
        // systematic delay shows in every attempt, a spell in the ones inside it.
        let mut attempts = Vec::new();
        for attempt in 0..5 {
            if attempt > 0 {
                std::thread::sleep(std::time::Duration::from_secs(4));
            }
            let mut v =
                idle_rtt((rtt_ms * 1e6) as u64, 15, KernelOptions::default().timing).unwrap();
            v.sort();
            let ms: Vec<f64> = v.iter().map(|x| *x as f64 / 1e6).collect();
            let med = ms[ms.len() / 2];
            let p90 = ms[ms.len() * 9 / 10];
            eprintln!("set {rtt_ms} ms: samples {ms:?}");
            // Pinned endpoints are woken across CPUs: +0.2-0.6 ms at the tail (docs/kernel.md).
            let ok = (med - rtt_ms).abs() <= 0.5 && (p90 - rtt_ms).abs() <= 0.75;
            attempts.push((med, p90));
            if ok {
                break;
            }
        }
        let (med, p90) = *attempts.last().unwrap();
        assert!(
            (med - rtt_ms).abs() <= 0.5,
            "median {med} ms for {rtt_ms} ms (attempts: {attempts:?})"
        );
        assert!(
            (p90 - rtt_ms).abs() <= 0.75,
            "p90 {p90} ms for {rtt_ms} ms (attempts: {attempts:?})"
        );
    }
    assert!(ours_left().is_empty(), "left {:?}", ours_left());
}

#[test]
fn cubic_fills_10_and_100_mbit() {
    let Some(_g) = lab_lock("cubic_fills_10_and_100_mbit", &["cubic"]) else {
        return;
    };
    for rate in [10e6, 100e6] {
        // A busy hypervisor delays packets and the element (seen in CI: min RTT 22.04 ms
        // with 450 ms of steal in a 4 s run): run again, as `cclab run` does.
        let r = quiet_detailed("cubic_fills_10_and_100_mbit", || {
            run_scenario_detailed(
                &scenario(rate, 20.0, 1.0, 0.0, "cubic", 4.0),
                &KernelOptions::default(),
            )
            .unwrap()
        });
        let f = &r.result.flows[0];
        eprintln!(
            "{rate}: goodput {} util {}",
            f.goodput_bps, r.result.link.utilization
        );
        assert_eq!(r.cc_used, ["cubic"]);
        let lab = r
            .result
            .lab
            .as_ref()
            .expect("kernel runs report their lab conditions");
        assert!(lab.cpus >= 1 && lab.element_stalls == r.element.stalls);
        eprintln!("{rate}: steal {:?} ms", lab.steal_ms);
        // With two CPUs or more the receiving stack runs off the element's CPU (printed: the
        // element's stalls, 0-1 per run here; unsteered runs had hundreds at 100 Mbit/s).
        if cclab_sys::placement().is_some() {
            assert!(
                r.steered,
                "RPS steering of the TUN device did not take effect"
            );
            eprintln!("{rate}: element stalls {}", r.element.stalls);
        }
        assert!(
            f.goodput_bps >= 0.9 * rate,
            "goodput {} of {rate}",
            f.goodput_bps
        );
        assert!(r.result.link.utilization >= 0.9);
        assert!(r.result.link.utilization <= 1.0);
        assert_eq!(
            r.element.max_packet, 1500,
            "super-packets reached the element"
        );
        assert!(
            f.rtt_ms.min >= 19.9 && f.rtt_ms.min < 22.0,
            "min rtt {}",
            f.rtt_ms.min
        );
        let s = r.result.series.as_ref().unwrap();
        assert!(s.t_s.len() >= 40 && s.flows[0].cwnd_pkts.iter().any(|&c| c > 10.0));
    }
    assert!(ours_left().is_empty());
}

/// The third rate of the check: 1 Gbit/s, 20 ms (the element runs in GSO mode here).
#[test]
fn cubic_fills_1_gbit() {
    let Some(_g) = lab_lock("cubic_fills_1_gbit", &["cubic"]) else {
        return;
    };
    let rate = 1e9;
    let r = quiet_detailed("cubic_fills_1_gbit", || {
        run_scenario_detailed(
            &scenario(rate, 20.0, 1.0, 0.0, "cubic", 5.0),
            &KernelOptions::default(),
        )
        .unwrap()
    });
    let f = &r.result.flows[0];
    eprintln!(
        "{rate}: goodput {} util {}",
        f.goodput_bps, r.result.link.utilization
    );
    assert_eq!(r.cc_used, ["cubic"]);
    assert!(
        f.goodput_bps >= 0.9 * rate,
        "goodput {} of {rate}",
        f.goodput_bps
    );
    assert!(r.result.link.utilization >= 0.9 && r.result.link.utilization <= 1.0);
    assert!(ours_left().is_empty());
}

#[test]
fn one_percent_loss_is_per_segment() {
    let Some(_g) = lab_lock("one_percent_loss_is_per_segment", &["bbr"]) else {
        return;
    };
    let r = run_scenario_detailed(
        &scenario(100e6, 10.0, 1.0, 0.01, "bbr", 8.0),
        &KernelOptions::default(),
    )
    .unwrap();
    let e = &r.element;
    let ratio = e.drops_random as f64 / e.data_pkts_in as f64;
    eprintln!(
        "data {} dropped {} = {ratio}",
        e.data_pkts_in, e.drops_random
    );
    assert!(
        e.data_pkts_in >= 50_000,
        "only {} data segments",
        e.data_pkts_in
    );
    assert!((ratio - 0.01).abs() <= 0.002, "loss ratio {ratio}");
    assert_eq!(e.max_packet, 1500);
    assert_eq!(r.result.link.drops_random, e.drops_random);
    // The sender saw the losses as retransmissions, about one each.
    let f = &r.result.flows[0];
    assert!(
        f.retrans_ratio >= 0.008,
        "retrans ratio {}",
        f.retrans_ratio
    );
}

/// GSO mode: super-packets cross the element whole, loss stays per 1448-byte segment
/// (super-packets that lose a segment are split), and the per-ACK RTT samples the element
/// takes sit at the path's RTT.
#[test]
fn gso_mode_keeps_loss_per_segment() {
    let Some(_g) = lab_lock("gso_mode_keeps_loss_per_segment", &["bbr"]) else {
        return;
    };
    let opts = KernelOptions {
        mode: Some(ElementMode::Gso),
        ..Default::default()
    };
    let r = run_scenario_detailed(&scenario(500e6, 10.0, 1.0, 0.01, "bbr", 5.0), &opts).unwrap();
    let e = &r.element;
    let ratio = e.drops_random as f64 / e.data_pkts_in as f64;
    eprintln!(
        "gso: data {} dropped {} = {ratio}, splits {}, max packet {}, goodput {}",
        e.data_pkts_in, e.drops_random, e.gso_splits, e.max_packet, r.result.flows[0].goodput_bps
    );
    assert!(e.max_packet > 3000, "no super-packets reached the element");
    assert!(e.gso_splits > 0);
    assert!(
        e.data_pkts_in >= 100_000,
        "only {} data segments",
        e.data_pkts_in
    );
    assert!((ratio - 0.01).abs() <= 0.002, "loss ratio {ratio}");
    let f = &r.result.flows[0];
    assert!(
        f.goodput_bps >= 0.8 * 500e6,
        "bbr goodput {}",
        f.goodput_bps
    );
    assert!(
        f.retrans_ratio >= 0.008,
        "retrans ratio {}",
        f.retrans_ratio
    );
    assert!(
        (f.rtt_ms.min - 10.0).abs() < 0.5,
        "min rtt {}",
        f.rtt_ms.min
    );
    assert!(
        f.rtt_ms.p50 >= 10.0 && f.rtt_ms.p99 <= 10.0 * 3.0,
        "rtt {:?}",
        f.rtt_ms
    );
}

/// A buffer smaller than one GSO packet (12 segments, 18 KB at 500 Mbit/s): the element must
/// still hold at most the buffer, as a per-segment drop-tail queue would. (It once let an idle
/// link take a whole 64 KB super-packet: queueing delay p99 1.2 ms where 18 KB is 0.29 ms.)
#[test]
fn gso_mode_holds_the_buffer_per_segment() {
    let Some(_g) = lab_lock("gso_mode_holds_the_buffer_per_segment", &["cubic"]) else {
        return;
    };
    let opts = KernelOptions {
        mode: Some(ElementMode::Gso),
        ..Default::default()
    };
    let mut sc = scenario(500e6, 0.5, 0.0, 0.0, "cubic", 3.0);
    sc.link.buffer = Buffer::Bytes(18_000);
    let r = run_scenario_detailed(&sc, &opts).unwrap();
    let l = &r.result.link;
    eprintln!(
        "tiny buffer: drops {} queue delay {:?} max packet {}",
        l.drops_buffer, l.queue_delay_ms, r.element.max_packet
    );
    assert!(
        r.element.max_packet > 3000,
        "no super-packets reached the element"
    );
    let full_ms = 18_000.0 * 8.0 / 500e6 * 1e3;
    assert!(
        l.queue_delay_ms.p99 <= full_ms * 1.1,
        "queue delay p99 {} ms > a full buffer's {full_ms} ms",
        l.queue_delay_ms.p99
    );
    assert!(l.drops_buffer > 100, "{} drops", l.drops_buffer);
}

/// 40 s. `cargo test -p cclab-kernel --release --test kernel cubic_collapses` to run alone.
#[test]
fn cubic_collapses_bbr_holds_at_one_percent_loss() {
    let Some(_g) = lab_lock(
        "cubic_collapses_bbr_holds_at_one_percent_loss",
        &["cubic", "bbr"],
    ) else {
        return;
    };
    let mut got = Vec::new();
    for cc in ["cubic", "bbr"] {
        let r = quiet("cubic_collapses_bbr_holds_at_one_percent_loss", || {
            run_scenario(
                &scenario(100e6, 50.0, 1.0, 0.01, cc, 20.0),
                &KernelOptions::default(),
            )
            .unwrap()
        });
        got.push(r.flows[0].goodput_bps);
    }
    eprintln!("cubic {} bbr {}", got[0], got[1]);
    assert!(got[0] <= 10e6, "cubic {}", got[0]);
    assert!(got[1] >= 75e6, "bbr {}", got[1]);
}

#[test]
fn sized_flows_with_starts_and_extra_rtt() {
    let Some(_g) = lab_lock("sized_flows_with_starts_and_extra_rtt", &["reno", "cubic"]) else {
        return;
    };
    let mut sc = scenario(20e6, 20.0, 1.0, 0.0, "cubic", 0.0);
    sc.duration_ns = None;
    sc.flows = vec![
        FlowSpec {
            cc_params: vec![],
            cc: "reno".into(),
            count: 1,
            start_ns: 0,
            size_bytes: Some(1_000_000),
            rtt_extra_ns: 0,
            init_cwnd: 10,
            ecn: false,
            accecn: false,
        },
        FlowSpec {
            cc_params: vec![],
            cc: "cubic".into(),
            count: 2,
            start_ns: 300_000_000,
            size_bytes: Some(500_000),
            rtt_extra_ns: 30_000_000,
            init_cwnd: 4,
            ecn: false,
            accecn: false,
        },
    ];
    let r = run_scenario_detailed(&sc, &KernelOptions::default()).unwrap();
    assert_eq!(r.cc_used, ["reno", "cubic", "cubic"]);
    let res = &r.result;
    assert_eq!(res.flows.len(), 3);
    for f in &res.flows {
        assert!(f.fct_s.is_some(), "flow {} did not complete", f.id);
        assert_eq!(Some(f.bytes_delivered), f.size_bytes);
    }
    assert!(
        res.flows[1].rtt_ms.min >= 49.9 && res.flows[1].rtt_ms.min < 53.0,
        "{:?}",
        res.flows[1].rtt_ms
    );
    assert!(res.flows[0].rtt_ms.min < 22.0);
    assert_eq!(res.flows[1].start_s, 0.3);
    // The run ends when the last flow completes.
    let last = res
        .flows
        .iter()
        .map(|f| f.start_s + f.fct_s.unwrap())
        .fold(0.0, f64::max);
    assert!(
        (res.duration_s - last).abs() < 0.01,
        "{} vs {last}",
        res.duration_s
    );
}

fn probe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cclab-kernel-probe"))
}

fn wait_for_namespaces(pid: u32) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(10) {
        if list_namespaces()
            .iter()
            .filter(|n| n.starts_with(&format!("cclab-{pid}-")))
            .count()
            == 3
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A 30 s probe run in a child process, once it has built its lab.
fn long_probe_run() -> (std::process::Child, u32) {
    let child = probe()
        .args(["run", "--secs", "30", "--rate", "50e6", "--rtt-ms", "20"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(wait_for_namespaces(pid), "the run never built its lab");
    (child, pid)
}

#[test]
fn sigkill_then_clean_stale_leaves_nothing() {
    let Some(_g) = lab_lock("sigkill_then_clean_stale_leaves_nothing", &["cubic"]) else {
        return;
    };
    let (mut child, pid) = long_probe_run();
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !list_namespaces().is_empty(),
        "namespaces of a killed run are expected until clean_stale"
    );
    let rep = clean_stale().unwrap();
    eprintln!("{rep}");
    assert!(rep.namespaces_removed.len() >= 3);
    assert!(list_namespaces().is_empty(), "left {:?}", list_namespaces());
    let links: Vec<String> = std::fs::read_dir("/sys/class/net")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("cclab"))
        .collect();
    assert!(links.is_empty(), "{links:?}");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists());
    // A second clean finds nothing.
    assert!(clean_stale().unwrap().namespaces_removed.is_empty());
}

#[test]
fn clean_right_after_sigkill_removes_the_lab() {
    // `cclab lab clean` run at once after a SIGKILL, while the killed process is still
    // exiting (and before anyone reaps it), must not keep its lab as "still going".
    let Some(_g) = lab_lock("clean_right_after_sigkill_removes_the_lab", &["cubic"]) else {
        return;
    };
    let (mut child, pid) = long_probe_run();
    std::thread::sleep(Duration::from_millis(1000));
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    let rep = clean_stale().unwrap();
    eprintln!("{rep}");
    child.wait().unwrap();
    let mine = |v: &[String]| {
        v.iter()
            .filter(|n| n.starts_with(&format!("cclab-{pid}-")))
            .count()
    };
    assert_eq!(mine(&rep.namespaces_removed), 3, "{rep}");
    assert_eq!(mine(&rep.skipped_live), 0, "{rep}");
    assert!(list_namespaces().is_empty(), "left {:?}", list_namespaces());
}

#[test]
fn sigint_stops_and_cleans_up() {
    let Some(_g) = lab_lock("sigint_stops_and_cleans_up", &["cubic"]) else {
        return;
    };
    let child = probe()
        .args(["run", "--secs", "30", "--rate", "20e6", "--rtt-ms", "20"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    assert!(wait_for_namespaces(pid));
    std::thread::sleep(Duration::from_millis(1000));
    let t = Instant::now();
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?} to stop",
        t.elapsed()
    );
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(
        !list_namespaces()
            .iter()
            .any(|n| n.starts_with(&format!("cclab-{pid}-"))),
        "left {:?}",
        list_namespaces()
    );
}

#[test]
fn unknown_cc_is_a_one_line_error() {
    // Checked before anything is built, but after the privilege check.
    if check_privileges().is_err() {
        skip(
            "unknown_cc_is_a_one_line_error",
            "not root (the cc check comes after the privilege check)",
        );
        return;
    }
    let e = run_scenario(
        &scenario(10e6, 10.0, 1.0, 0.0, "westwood", 1.0),
        &KernelOptions::default(),
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, KernelError::CcUnavailable { .. }));
    assert!(!msg.contains('\n'));
    assert!(
        msg.contains("\"westwood\"") && msg.contains("it has:"),
        "{msg}"
    );
    for cc in available_ccs() {
        assert!(msg.contains(&cc), "{msg}");
    }
}

#[test]
fn not_root_is_a_one_line_error() {
    const WANT: &str = "the kernel backend needs root (CAP_NET_ADMIN); --backend sim needs nothing";
    assert_eq!(KernelError::NotPrivileged.to_string(), WANT);
    if check_privileges().is_err() {
        let e = run_scenario(
            &scenario(10e6, 10.0, 1.0, 0.0, "cubic", 1.0),
            &KernelOptions::default(),
        )
        .unwrap_err();
        assert_eq!(e, KernelError::NotPrivileged);
        return;
    }
    // As root: run the probe as `nobody`.
    use std::os::unix::process::CommandExt;
    let out = probe()
        .args(["run", "--secs", "1"])
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim(), format!("error: {WANT}"));
}

#[test]
fn doctor_reports() {
    let d = doctor();
    let j = serde_json::to_value(&d).unwrap();
    assert!(j["cc_available"].is_array());
    let text = d.to_string();
    assert!(text.contains("netem") && text.contains("BPF"));
    if !d.root {
        skip(
            "doctor_reports (probes)",
            "not root: qdisc/veth probes not run",
        );
        return;
    }
    // The probes use a temporary namespace: not while another test counts namespaces.
    let _g = cclab_kernel::testing::lock();
    let d = doctor();
    assert!(d.veth.is_some() && d.netem.is_some());
    assert!(list_namespaces().iter().all(|n| !n.ends_with("-doctor")));
}

/// The kernel backend writes its packet trace in the simulator's format: segment numbers
/// counted from the flow's first byte, retransmissions marked, times from time zero; the
/// counters of every path element reach the results; a trace that cannot be written stops
/// the run before it starts, with nothing left behind.
#[test]
fn trace_and_element_counters() {
    let Some(_g) = lab_lock("trace_and_element_counters", &["cubic"]) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("cclab-ktrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("run.trace");
    let sc = scenario(20e6, 20.0, 1.0, 0.01, "cubic", 2.0);
    let opts = KernelOptions {
        trace: Some(path.clone()),
        ..Default::default()
    };
    let r = run_scenario(&sc, &opts).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("# cclab packet trace 1: backend kernel, scenario test, seed 1")
    );
    let (mut data, mut retrans, mut acks, mut first_seq) = (0, 0, 0, None);
    for l in lines {
        let w: Vec<&str> = l.split(' ').collect();
        assert!(w[1..6].iter().all(|x| x.parse::<u64>().is_ok()), "{l}");
        match w[0] {
            "D" => {
                data += 1;
                first_seq.get_or_insert(w[3].parse::<u64>().unwrap());
                if w.get(6) == Some(&"R") {
                    retrans += 1;
                }
            }
            "A" => acks += 1,
            _ => panic!("{l}"),
        }
    }
    assert!(
        first_seq.is_some_and(|s| s < 20),
        "the flow's segments count from its first byte: {first_seq:?}"
    );
    assert!(
        data > 1000 && acks > 500,
        "{data} data lines, {acks} ACK lines"
    );
    assert!(retrans > 0, "1% loss: some retransmissions are marked");
    let e = &r.link.elements;
    assert_eq!(e["data.loss"]["dropped"], r.link.drops_random);
    assert_eq!(e["data.queue"]["forwarded"], r.link.forwarded_pkts);
    assert!(e.contains_key("ack.delay") && !e.contains_key("ack.loss"));
    // A trace that cannot be written: an error before the run, no namespace left.
    let bad = KernelOptions {
        trace: Some("/proc/cclab-no/such.trace".into()),
        ..Default::default()
    };
    let err = run_scenario(&sc, &bad).unwrap_err().to_string();
    assert!(
        err.contains("cannot write the trace") && !err.contains('\n'),
        "{err}"
    );
    assert!(ours_left().is_empty(), "left {:?}", ours_left());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `[hosts]` settings reach the kernel through the lab's namespaces: a 512 KB `tcp_wmem`
/// max caps CUBIC's window on 100 Mbit/s x 50 ms (BDP 625 KB), a 512 KB `tcp_rmem` max caps
/// the receive window at its payload share; Linux's defaults fill the path. Nothing is
/// left behind.
#[test]
fn host_buffers_apply_in_the_namespaces() {
    let Some(_g) = lab_lock("host_buffers_apply_in_the_namespaces", &["cubic"]) else {
        return;
    };
    let run = |f: &dyn Fn(&mut cclab_core::host::HostTcp)| {
        let mut sc = scenario(100e6, 50.0, 1.0, 0.0, "cubic", 8.0);
        f(&mut sc.hosts.tcp);
        quiet("host_buffers_apply_in_the_namespaces", || {
            run_scenario(&sc, &KernelOptions::default()).unwrap()
        })
        .flows[0]
            .goodput_bps
    };
    let defaults = run(&|_| {});
    let wmem = run(&|h| h.tcp_wmem = [4096, 16384, 512 << 10]);
    let rmem = run(&|h| h.tcp_rmem = [4096, 131072, 512 << 10]);
    eprintln!("defaults {defaults} wmem {wmem} rmem {rmem}");
    assert!(defaults > 85e6, "defaults {defaults}");
    // At most one send buffer in flight per RTT (512 KiB / 50 ms = 84 Mbit/s).
    assert!(wmem < 80e6 && wmem > 40e6, "tcp_wmem 512 KiB: {wmem}");
    // The window is the buffer's payload share (5/8 of 512 KiB: 52 Mbit/s).
    assert!(rmem < 60e6 && rmem > 35e6, "tcp_rmem 512 KiB: {rmem}");
    assert!(ours_left().is_empty(), "left behind: {:?}", ours_left());
}

/// `hosts.nic_rate`: a tbf qdisc at the interface's rate on the sender's veth holds each
/// buffer charged to its socket, so TCP small queues act as behind a card. On 200 Mbit/s x
/// 100 ms with Linux's default hosts CUBIC's writer fills cwnd past the 4 MiB send buffer
/// behind the bare veth and overflows the 1 BDP queue in slow start (862 retransmits in 5 s
/// here, the simulator 844); behind 1 Gbit/s the send buffer binds first and nothing is lost
/// (both backends: 166 Mbit/s, 0 retransmits).
#[test]
fn a_slow_interface_holds_cubic_to_its_send_buffer() {
    let test = "a_slow_interface_holds_cubic_to_its_send_buffer";
    let Some(_g) = lab_lock(test, &["cubic"]) else {
        return;
    };
    let run = |nic: Option<f64>| {
        let mut sc = scenario(200e6, 100.0, 1.0, 0.0, "cubic", 5.0);
        sc.hosts.nic_rate_bps = nic;
        let r = quiet(test, || {
            run_scenario(&sc, &KernelOptions::default()).unwrap()
        });
        (r.flows[0].retransmits, r.flows[0].goodput_bps)
    };
    let (veth, veth_bps) = run(None);
    let (card, card_bps) = run(Some(1e9));
    eprintln!("veth {veth} retransmits {veth_bps} bit/s; 1 Gbit/s card {card} {card_bps}");
    assert!(veth > 100, "behind the veth the queue overflows: {veth}");
    assert_eq!(card, 0, "behind 1 Gbit/s the send buffer binds first");
    assert!(card_bps > 120e6, "{card_bps}");
    assert!(ours_left().is_empty(), "left behind: {:?}", ours_left());
}

/// A host setting Linux's TCP does not have is refused before anything is made, in one
/// line that names it and says what would run instead.
#[test]
fn probe_start_is_refused_in_one_line() {
    // The lab lock: other tests' namespaces must not count as this test's leftovers.
    let _g = cclab_kernel::testing::lock();
    let mut sc = scenario(10e6, 20.0, 1.0, 0.0, "cubic", 1.0);
    sc.hosts.tcp.probe_start = true;
    let e = run_scenario(&sc, &KernelOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("hosts.probe_start") && e.contains("simulator"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(ours_left().is_empty());
}

/// Issue #15: every path element runs in the TUN element, from the simulator's code, and its
/// counters reach the results: CoDel drops or marks from a standing CUBIC queue and keeps it
/// short; a 5 Mbit/s policer in front of 50 Mbit/s passes about its rate; a rate step from a
/// schedule shows in the capacity series and caps the flow; jitter with reordering and ACK
/// aggregation delay what they should. A few seconds each.
#[test]
fn path_elements_run_in_the_tun_element() {
    let Some(_g) = lab_lock("path_elements_run_in_the_tun_element", &["cubic"]) else {
        return;
    };
    let opts = KernelOptions::default();
    // CoDel at 50 Mbit/s x 20 ms with a 4 BDP limit: the queue stays near the target.
    let mut sc = scenario(50e6, 20.0, 4.0, 0.0, "cubic", 4.0);
    sc.link.path.aqm = cclab_path::CodelParams::default().into();
    let r = run_scenario(&sc, &opts).unwrap();
    let q = &r.link.elements["data.queue"];
    eprintln!("codel: {q:?}, queue {:?}", r.link.queue_delay_ms);
    assert!(q["dropped_aqm"] + q["marked"] > 0, "{q:?}");
    assert_eq!(r.link.drops_aqm, q["dropped_aqm"]);
    assert!(
        r.link.queue_delay_ms.p50 < 10.0,
        "{:?}",
        r.link.queue_delay_ms
    );
    assert!(r.link.utilization > 0.7, "{}", r.link.utilization);
    let s = r.series.as_ref().unwrap();
    assert!(s.queue_delay_ms.contains_key("data.queue"));
    assert!(r.link.queues.contains_key("data.queue"));

    // A policer: what passes is about its rate; the rest is dropped and counted.
    let mut sc = scenario(50e6, 20.0, 1.0, 0.0, "cubic", 4.0);
    sc.link.path.policer = Some(cclab_path::TokenBucket {
        rate_bps: 5e6,
        burst_bytes: 64 * 1024,
    });
    let r = run_scenario(&sc, &opts).unwrap();
    let g = r.flows[0].goodput_bps;
    eprintln!("policer: {g:.0} bit/s, {} dropped", r.link.drops_policer);
    assert!(r.link.drops_policer > 0);
    assert!(g < 5.5e6 && g > 3e6, "{g}");

    // A schedule: 40 Mbit/s, then 10 Mbit/s from 2 s; the series carries the capacity.
    let mut sc = scenario(40e6, 20.0, 1.0, 0.0, "cubic", 4.0);
    sc.link.path.rate_varies =
        Some(cclab_path::RateDesc::schedule(vec![(0, 40e6), (2_000_000_000, 10e6)]).unwrap());
    let r = run_scenario(&sc, &opts).unwrap();
    let s = r.series.as_ref().unwrap();
    let n = s.link_rate_bps.len();
    eprintln!("schedule: capacity {:?}", &s.link_rate_bps);
    assert!(n >= 30, "{n}");
    assert!((s.link_rate_bps[5] - 40e6).abs() < 1e6 && (s.link_rate_bps[n - 2] - 10e6).abs() < 1e6);
    let late = s.mean_goodput_between(3.0, 4.0)[0];
    assert!(late < 10e6 && late > 7e6, "after the step: {late}");
    assert!(
        (r.link.rate_bps - 25e6).abs() < 2e6,
        "mean capacity {}",
        r.link.rate_bps
    );

    // Jitter (5 ms, reordering) and ACK aggregation (4 ms) add delay; nothing is lost.
    let mut sc = scenario(20e6, 20.0, 1.0, 0.0, "cubic", 3.0);
    sc.link.path.jitter_ns = 5_000_000;
    sc.link.path.reorder = true;
    sc.link.path.ack_aggregation_ns = 4_000_000;
    let r = run_scenario(&sc, &opts).unwrap();
    let rtt = &r.flows[0].rtt_ms;
    eprintln!(
        "jitter + aggregation: rtt {rtt:?}, {:.0} bit/s",
        r.flows[0].goodput_bps
    );
    assert!(rtt.min >= 19.5 && rtt.p99 > 24.0, "{rtt:?}");
    assert!(r.link.elements.contains_key("ack.aggregation"));
    assert!(r.flows[0].goodput_bps > 10e6);
    assert!(ours_left().is_empty(), "left {:?}", ours_left());
}
