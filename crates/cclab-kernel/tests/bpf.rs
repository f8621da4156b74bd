//! BPF controllers on the kernel backend (root, clang-built objects and libbpf; without them
//! each test prints `SKIP <test>: <reason>` and returns). One lab at a time.

use cclab_kernel::*;
use cclab_scenario::{Buffer, FlowSpec, LinkSpec, Scenario};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

/// The lab lock, or None after saying why not: [`testing::lab_lock`], and none of `ccs`
/// registered already (a BPF test loads them itself).
fn lab(test: &str, ccs: &[&str]) -> Option<MutexGuard<'static, ()>> {
    let taken = ccs
        .iter()
        .find(|cc| cclab_sys::available_ccs().iter().any(|a| a == *cc));
    if let Some(cc) = taken {
        testing::skip(
            test,
            &format!("{cc} is registered already (the kernel's own or another run's)"),
        );
        return None;
    }
    testing::lab_lock(test, ccs)
}

/// The run up to three times while the machine disturbed it (as `cclab run --backend kernel`
/// retries): the first quiet result, else the least disturbed.
fn quiet(test: &str, sc: &Scenario) -> KernelRun {
    let mut runs = Vec::new();
    let attempt = || {
        let r =
            run_scenario_detailed(sc, &KernelOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let res = r.result.clone();
        runs.push(r);
        Ok::<_, std::convert::Infallible>(res)
    };
    let note = |_: u32, _: &cclab_results::RunResult, why: &str| {
        let _ = writeln!(std::io::stderr(), "NOTE {test}: a disturbed run ({why})");
    };
    let chosen =
        cclab_results::first_quiet(2, attempt, note).unwrap_or_else(|never| match never {});
    let n = chosen.lab.as_ref().map_or(0, |l| l.retries as usize);
    runs.swap_remove(n)
}

fn registered(cc: &str) -> bool {
    cclab_sys::available_ccs().iter().any(|a| a == cc)
}

/// 100 Mbit/s x 10 ms, 2 BDP of buffer, CE marks above 1 ms of queue, one ECN flow of `cc`;
/// socket buffers forced to 4 MiB as in the calibration matrix (with Linux's defaults the
/// kernel's ECN flows are send-buffer bound on this path: see docs/kernel.md).
fn marked_path(cc: &str, secs: f64) -> Scenario {
    let mut hosts = cclab_scenario::HostsSpec::default();
    hosts.tcp.sndbuf = Some(4 << 20);
    hosts.tcp.rcvbuf = Some(4 << 20);
    Scenario {
        name: "bpf".into(),
        description: None,
        duration_ns: Some((secs * 1e9) as u64),
        seed: 1,
        link: LinkSpec {
            path: cclab_path::LinkDesc {
                rate_bps: 100e6,
                rtt_ns: 10_000_000,
                ecn_threshold_ns: Some(1_000_000),
                ..Default::default()
            },
            buffer: Buffer::Bdp(2.0),
            mss: 1448,
        },
        hosts,
        flows: vec![FlowSpec {
            cc_params: vec![],
            cc: cc.into(),
            count: 1,
            start_ns: 0,
            size_bytes: None,
            rtt_extra_ns: 0,
            init_cwnd: 10,
            ecn: true,
            accecn: false,
        }],
        probes: Vec::new(),
        reference: None,
    }
}

#[test]
fn dctcp_holds_the_queue_at_the_marking_threshold() {
    let Some(_g) = lab("dctcp_holds_the_queue_at_the_marking_threshold", &["dctcp"]) else {
        return;
    };
    let run = quiet(
        "dctcp_holds_the_queue_at_the_marking_threshold",
        &marked_path("dctcp", 4.0),
    );
    let r = &run.result;
    assert_eq!(run.cc_used, vec!["dctcp".to_string()]);
    let bpf = run
        .bpf
        .as_ref()
        .expect("the run records its BPF controller");
    assert_eq!(bpf[0]["object"], "builtin:dctcp", "{bpf}");
    assert_eq!(bpf[0]["held_by"], "link", "{bpf}");
    assert!(
        r.link.marks > 100,
        "DCTCP is marked, not dropped: {:?}",
        r.link.marks
    );
    // The queue sits near the 1 ms threshold, not at the 2 BDP (20 ms) a loss-based
    // sender fills: the sender cuts by the fraction of marks, and the receiver echoes
    // each CE change at once (its listener runs dctcp too).
    let p50 = r.link.queue_delay_ms.p50;
    assert!(p50 < 2.5, "queue delay p50 {p50} ms");
    assert!(
        r.link.utilization > 0.5,
        "utilization {}",
        r.link.utilization
    );
    assert!(
        !registered("dctcp"),
        "dctcp stayed registered after the run"
    );
}

#[test]
fn a_users_object_runs_by_path_under_its_own_name() {
    let Some(_g) = lab("a_users_object_runs_by_path_under_its_own_name", &["vegas"]) else {
        return;
    };
    // A user's object: the repository's Vegas, as clang built it, in a file of its own.
    let dir = std::env::temp_dir().join(format!("cclab-bpf-user-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("my_cc.bpf.o");
    std::fs::write(&obj, cclab_bpf::builtin("vegas").unwrap().object()).unwrap();
    let mut sc = marked_path(&format!("bpf:{}", obj.display()), 3.0);
    sc.flows[0].ecn = false;
    sc.link.buffer = Buffer::Bdp(8.0);
    let run = quiet("a_users_object_runs_by_path_under_its_own_name", &sc);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.cc_used, vec!["vegas".to_string()]);
    assert_eq!(run.result.flows[0].cc, "vegas");
    let bpf = run.bpf.as_ref().unwrap();
    assert_eq!(bpf[0]["object"], obj.display().to_string(), "{bpf}");
    assert!(
        run.result.flows[0].goodput_bps > 20e6,
        "{}",
        run.result.flows[0].goodput_bps
    );
    // Delay-based. Vegas leaves slow start when its RTT rises, before the 8 BDP buffer
    // overflows (a loss-based sender's slow start fills any buffer): no drops. Its slow
    // start overshoots the path (its window doubles each round while it measures a round
    // late), and then it takes one packet per round off the window while more than 4 of its
    // packets are queued: the window and the queue fall through the run. (How far the
    // overshoot goes varies between runs, so the test does not bound the queue itself.)
    let link = &run.result.link;
    assert_eq!(
        link.drops_buffer, 0,
        "queue delay {:?}",
        link.queue_delay_ms
    );
    let s = run.result.series.as_ref().expect("the run's series");
    let at = |t: f64| s.t_s.iter().position(|&x| x >= t).unwrap();
    let (early, last) = (at(0.5), s.t_s.len() - 1);
    let cwnd = &s.flows[0].cwnd_pkts;
    assert!(
        cwnd[last] + 20.0 < cwnd[early],
        "cwnd {} at {} s, {} at {} s",
        cwnd[early],
        s.t_s[early],
        cwnd[last],
        s.t_s[last]
    );
    assert!(
        s.link_queue_bytes[last] < s.link_queue_bytes[early],
        "queue {} B at {} s, {} B at the end",
        s.link_queue_bytes[early],
        s.t_s[early],
        s.link_queue_bytes[last]
    );
    assert!(!registered("vegas"));
}

#[test]
fn an_object_the_verifier_refuses_fails_the_run_in_one_line() {
    let Some(_g) = lab(
        "an_object_the_verifier_refuses_fails_the_run_in_one_line",
        &[],
    ) else {
        return;
    };
    let Some(_) = cclab_bpf::builtin("dctcp") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("cclab-bpf-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let obj = dir.join("garbage.bpf.o");
    std::fs::write(&obj, b"\x7fELF not really").unwrap();
    let err = run_scenario(
        &marked_path(&format!("bpf:{}", obj.display()), 1.0),
        &KernelOptions::default(),
    )
    .expect_err("a broken object stops the run");
    std::fs::remove_dir_all(&dir).unwrap();
    let msg = err.to_string();
    assert!(
        !msg.contains('\n') && msg.contains("garbage.bpf.o"),
        "{msg}"
    );
    assert!(
        namespaces_of(std::process::id()).is_empty(),
        "the run built a lab for nothing"
    );
}

#[test]
fn sigkill_leaves_no_controller_registered() {
    let Some(_g) = lab("sigkill_leaves_no_controller_registered", &["dctcp"]) else {
        return;
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_cclab-kernel-probe"))
        .args([
            "run", "--secs", "30", "--rate", "50e6", "--rtt-ms", "20", "--cc", "dctcp",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !registered("dctcp") && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(registered("dctcp"), "the run never registered dctcp");
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap();
    child.wait().unwrap();
    // The link that held it closed with the process.
    assert!(!registered("dctcp"), "dctcp outlived its SIGKILLed run");
    let rep = clean_stale().unwrap();
    assert!(rep.bpf_unregistered.is_empty(), "{rep}");
    assert!(rep.namespaces_removed.len() >= 3, "{rep}");
}

#[test]
fn bbr3_holds_most_of_the_link_at_one_percent_loss() {
    let Some(_g) = lab("bbr3_holds_most_of_the_link_at_one_percent_loss", &["bbr3"]) else {
        return;
    };
    // 100 Mbit/s x 50 ms, 1 BDP, 1% random loss, 5 s: below v3's 2% loss threshold BBRv3
    // keeps its bandwidth probing (the simulator's model: 80 Mbit/s; BBRv1's loss-blind
    // model would hold it too, CUBIC gets a few Mbit/s).
    let mut sc = marked_path("bbr3", 5.0);
    sc.link.path.rtt_ns = 50_000_000;
    sc.link.path.ecn_threshold_ns = None;
    sc.link.path.loss = 0.01;
    sc.link.buffer = Buffer::Bdp(1.0);
    sc.flows[0].ecn = false;
    let run = quiet("bbr3_holds_most_of_the_link_at_one_percent_loss", &sc);
    assert_eq!(run.cc_used, vec!["bbr3".to_string()]);
    let f = &run.result.flows[0];
    assert!(f.goodput_bps > 55e6, "goodput {}", f.goodput_bps);
    assert!(f.retransmits > 0);
    assert!(!registered("bbr3"));
}

/// TCP Prague (bpf/prague.bpf.c) through the element's DualPI2: the flow negotiates
/// Accurate ECN (6.18 does for a controller with TCP_CONG_NEEDS_ACCECN, whatever
/// net.ipv4.tcp_ecn says), its data reaches the path as ECT(1) (the element's stand-in for
/// the ECT(1) 6.18 cannot send) and lands in the L queue, while a DCTCP flow beside it stays
/// ECT(0) in the C queue; the CE marks the sender counts from AccECN's ACE field are the
/// marks the element made. Counts only: rates need a quiet machine (docs/kernel.md).
#[test]
fn prague_runs_accecn_and_lands_in_dualpi2s_l_queue() {
    let test = "prague_runs_accecn_and_lands_in_dualpi2s_l_queue";
    let Some(_g) = lab(test, &["prague", "dctcp"]) else {
        return;
    };
    let text = r#"
name = "l4s"
duration = "4s"
[link]
rate = "50mbit"
rtt = "20ms"
buffer = "4bdp"
aqm = "dualpi2"
[hosts]
sndbuf = "4mib"
rcvbuf = "4mib"
[[flows]]
cc = "prague"
ecn = true
[[flows]]
cc = "dctcp"
ecn = true
"#;
    let file = cclab_scenario::ScenarioFile::from_str_for(text, "l4s.toml", controllers::catalog())
        .unwrap_or_else(|e| panic!("{e}"));
    let sc = file.expand().unwrap().remove(0).scenario;
    let run = quiet(test, &sc);
    let r = &run.result;
    assert_eq!(run.cc_used, vec!["prague".to_string(), "dctcp".to_string()]);
    let (prague, dctcp) = (&r.flows[0], &r.flows[1]);
    let pin = prague
        .ecn_in
        .expect("Prague's packets are counted by ECN field");
    assert!(
        pin.ect1 > 100 && pin.ect0 == 0 && pin.not_ect == 0,
        "{pin:?}"
    );
    let din = dctcp
        .ecn_in
        .expect("DCTCP's packets are counted by ECN field");
    assert!(din.ect0 > 100 && din.ect1 == 0, "{din:?}");
    let acc = prague.accecn.expect("Prague negotiated AccECN");
    assert!(
        acc.delivered_ect1_bytes > 0 && acc.delivered_ect0_bytes == 0,
        "{acc:?}"
    );
    assert!(prague.ce_marks > 0, "the L queue marked Prague");
    // Marks on segments still in flight when the run stops are not acknowledged yet: at most
    // Prague's window then (its largest in the last half second, at least 20 segments). And
    // the ACE field counts CE segments modulo 8: an ACK covering many marked segments can
    // hide a wrap from the sender, so up to 5% of the marks may go uncounted (CI once saw
    // 577 counted of 610 marked).
    let s = r.series.as_ref().expect("the run's series");
    let window_at_end = s
        .t_s
        .iter()
        .zip(&s.flows[0].cwnd_pkts)
        .filter(|(t, _)| **t >= r.duration_s - 0.5)
        .map(|(_, c)| c.ceil() as u64)
        .max()
        .unwrap_or(0)
        .max(20);
    assert!(
        acc.delivered_ce_segments <= prague.ce_marks
            && acc.delivered_ce_segments + window_at_end + prague.ce_marks / 20
                >= prague.ce_marks,
        "AccECN counted {} CE segments, the element marked {}, Prague's window at the end {window_at_end}",
        acc.delivered_ce_segments,
        prague.ce_marks
    );
    assert!(dctcp.accecn.is_none(), "DCTCP negotiates classic ECN");
    // DualPI2 saw both: Prague's ECT(1) in L, DCTCP's ECT(0) in C (the queue counts
    // packets, GSO super-packets as one, where `ecn_in` counts segments).
    let q = &r.link.elements["data.queue"];
    assert!(q["l_packets"] > 0 && q["c_packets"] > 0, "{q:?}");
    assert!(!registered("prague") && !registered("dctcp"));
}
