//! The seed scenarios on the kernel backend (real Linux TCP through the user-space link
//! element): each field report's relation, as `seeds.rs` asserts it for the simulator.
//!
//! The scenarios are `scenarios/seeds-kernel/*.toml`: the seeds scaled to what the element
//! carries on a 2-core machine (same BDP in packets, same loss, same buffer in BDP; see each
//! file and docs/kernel.md). Needs root: without it (or without cubic/bbr, /dev/net/tun or
//! `ip`) every test prints `SKIP: ...` and passes.
//!
//! CI part (~2.5 min): `cargo test --release -p cclab --test kernel_seeds`.
//! The full rtt-sweep (30 s x 6 runs, ~3.5 min):
//! `cargo test --release -p cclab --test kernel_seeds -- --ignored`.

mod common;
use cclab::runner::{execute, plan, RunOptions};
use cclab_results::ResultsDoc;
use common::{find, goodput, rtt_sweep_goodput};
use serde_json::json;
use std::sync::Mutex;

/// Kernel runs measure real time: never two at once.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs scenarios/seeds-kernel/<name>.toml on the kernel backend; None = skipped.
fn run(name: &str) -> Option<ResultsDoc> {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cclab_kernel::lab_unavailable(&["cubic", "bbr"]) {
        println!("SKIP: {name}: {why}");
        return None;
    }
    let path = format!(
        "{}/../../scenarios/seeds-kernel/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    // A run the machine disturbed (hypervisor steal, element stalls) measured the machine,
    // not the path: run it again after a pause, as `cclab calibrate` does.
    let opts = RunOptions {
        backend: "kernel".into(),
        jobs: 1,
        retry_disturbed: 2,
        ..Default::default()
    };
    let p = plan(&path, &opts).unwrap_or_else(|e| panic!("{e}"));
    let d = execute(&[p], &opts)
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0);
    let left = cclab_kernel::namespaces_of(std::process::id());
    assert!(
        left.is_empty(),
        "{name}: runs left namespaces behind: {left:?}"
    );
    for r in &d.runs {
        let f = &r.flows[0];
        println!(
            "{name} {} goodput {:.1} Mbit/s retx {} rtt min/p50/p99 {:.2}/{:.2}/{:.2} ms fct {:?} util {:.3}",
            serde_json::Value::Object(r.params.clone()),
            f.goodput_bps / 1e6,
            f.retransmits,
            f.rtt_ms.min,
            f.rtt_ms.p50,
            f.rtt_ms.p99,
            f.fct_s,
            r.link.utilization
        );
    }
    Some(d)
}

/// Without loss both fill the link; at 1% CUBIC falls to a fraction, BBR stays near the link.
#[test]
fn lossy_lan() {
    let Some(d) = run("lossy-lan") else { return };
    let g = |loss: f64, cc: &str| {
        goodput(find(
            &d,
            &[("link.loss", json!(loss)), ("flows.cc", json!(cc))],
        ))
    };
    let link = 1e9 * 1448.0 / 1500.0;
    // Lossless CUBIC fills 76-86% of this scaled link on the kernel (TSO bursts of ~45
    // segments tail-drop about 100 segments a second from the 167-packet buffer), and less
    // in some runs (a CI run fell below 70%: at 1 Gbit/s the 2-core lab is near its limits),
    // the simulator's about 100%: see docs/fidelity.md. The relation under test is the 1%
    // contrast (CUBIC at about 5% of the link), so the lossless floor is half the link.
    assert!(
        g(0.0, "cubic") >= 0.5 * link,
        "cubic at 0: {}",
        g(0.0, "cubic")
    );
    assert!(g(0.0, "bbr") >= 0.85 * link, "bbr at 0: {}", g(0.0, "bbr"));
    assert!(
        g(0.01, "cubic") <= link / 4.0,
        "cubic at 1%: {}",
        g(0.01, "cubic")
    );
    assert!(
        g(0.01, "bbr") >= 0.85 * g(0.0, "bbr"),
        "bbr at 1%: {}",
        g(0.01, "bbr")
    );
}

/// Shallow buffer: BBR more throughput than CUBIC, many times the retransmissions.
#[test]
fn lan_vm() {
    let Some(d) = run("lan-vm") else { return };
    let cubic = find(&d, &[("flows.cc", json!("cubic"))]);
    let bbr = find(&d, &[("flows.cc", json!("bbr"))]);
    let ratio = goodput(bbr) / goodput(cubic);
    assert!(
        (1.02..=2.0).contains(&ratio),
        "bbr/cubic goodput {ratio:.2}"
    );
    let rx = bbr.flows[0].retransmits as f64 / cubic.flows[0].retransmits.max(1) as f64;
    assert!(rx >= 5.0, "bbr/cubic retransmits {rx:.1}");
    assert!(
        bbr.reference.as_ref().unwrap()["goodput_bps"]
            .as_f64()
            .unwrap()
            > 2e9
    );
}

/// Lightly lossy path: BBR gains a lot, the idle (minimum) RTT does not move.
#[test]
fn vps_http() {
    let Some(d) = run("vps-http") else { return };
    let cubic = find(&d, &[("flows.cc", json!("cubic"))]);
    let bbr = find(&d, &[("flows.cc", json!("bbr"))]);
    let gain = goodput(bbr) / goodput(cubic);
    assert!(gain >= 1.3, "bbr gain {gain:.2}");
    let d_min = (bbr.flows[0].rtt_ms.min - cubic.flows[0].rtt_ms.min).abs();
    assert!(d_min <= 1.0, "idle rtt moved by {d_min} ms");
}

fn rtt_sweep_relations(d: &ResultsDoc, rtts: &[f64], ratio: std::ops::RangeInclusive<f64>) {
    let g = |rtt: f64, cc: &str| rtt_sweep_goodput(d, rtt, cc);
    assert!(
        g(0.006, "bbr") >= 0.7 * 600e6,
        "bbr at 6 ms: {}",
        g(0.006, "bbr")
    );
    for &r in rtts {
        let x = g(r, "bbr") / g(r, "cubic");
        assert!(ratio.contains(&x), "bbr/cubic at {r}: {x:.2}");
        if r > 0.05 {
            // Window-limited by the hosts' 4 MiB send buffer (published 2.24-2.27 MB).
            let w = g(r, "bbr") / 8.0 * r;
            assert!((1.8e6..=3.6e6).contains(&w), "bbr window at {r}: {w:.0} B");
        }
    }
    for w in rtts.windows(2) {
        for cc in ["cubic", "bbr"] {
            assert!(
                g(w[0], cc) > g(w[1], cc),
                "{cc} should fall with RTT ({} -> {})",
                w[0],
                w[1]
            );
        }
    }
}

/// Long paths with light loss and Linux's host buffers (6 and 99 ms, 10 s): BBR near the
/// path rate at 6 ms, window-limited at 99 ms, at least 2x CUBIC at both; both fall with RTT.
#[test]
fn rtt_sweep_short() {
    let Some(d) = run("rtt-sweep-short") else {
        return;
    };
    rtt_sweep_relations(&d, &[0.006, 0.099], 2.0..=5.0);
}

/// The seed's full sweep (6 / 99 / 231 ms, 30 s each): the published shape, BBR 2.5-5x
/// CUBIC at every RTT, and CUBIC at 6 ms at least 3x its rate at 231 ms.
#[test]
#[ignore = "~7 min: cargo test --release -p cclab --test kernel_seeds -- --ignored"]
fn rtt_sweep() {
    let Some(d) = run("rtt-sweep") else { return };
    rtt_sweep_relations(&d, &[0.006, 0.099, 0.231], 2.5..=5.0);
    let g = |rtt: f64| rtt_sweep_goodput(&d, rtt, "cubic");
    assert!(g(0.006) >= 3.0 * g(0.231), "cubic should fall with RTT");
}

/// Small transfers: startup dominates, BBR within ~10% of CUBIC; large: BBR leads by >= 20%.
#[test]
fn small_files() {
    let Some(d) = run("small-files") else { return };
    let g = |size: u64, cc: &str| {
        let r = find(&d, &[("flows.size", json!(size)), ("flows.cc", json!(cc))]);
        assert!(r.flows[0].fct_s.is_some(), "{cc} {size} did not complete");
        goodput(r)
    };
    let small = g(640_000, "bbr") / g(640_000, "cubic");
    assert!((0.9..=1.1).contains(&small), "640 KB bbr/cubic {small:.2}");
    let large = g(25_000_000, "bbr") / g(25_000_000, "cubic");
    assert!(large >= 1.2, "25 MB bbr/cubic {large:.2}");
}

/// Ctrl-C stops a whole matrix, not only the run in progress: `cclab run` exits with 130
/// within seconds and leaves nothing behind (it used to go on with the next runs).
#[test]
fn sigint_stops_a_matrix() {
    let _g = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(why) = cclab_kernel::lab_unavailable(&["cubic"]) {
        println!("SKIP: sigint_stops_a_matrix: {why}");
        return;
    }
    let d = common::tmpdir("sigint-matrix");
    let f = d.join("m.toml");
    std::fs::write(
        &f,
        "name = \"m\"\nduration = \"10s\"\n[link]\nrate = \"10mbit\"\nrtt = \"20ms\"\nloss = [0, \"0.1%\", \"1%\"]\n[[flows]]\ncc = \"cubic\"\n",
    )
    .unwrap();
    let mut child = common::cclab()
        .args(["run", "--backend", "kernel", "-q"])
        .arg(&f)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t.elapsed().as_secs() < 15,
            "still running 15 s after SIGINT"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(130));
    assert!(t.elapsed().as_secs() < 8, "took {:?} to stop", t.elapsed());
    assert!(cclab_kernel::namespaces_of(child.id()).is_empty());
}
