//! serve and perf across the kernel lab: two namespaces joined through cclab's link element
//! over a known path (50 Mbit/s, 20 ms, 1 BDP drop-tail). They need root; without it each
//! prints `SKIP <test>: <reason>` and returns. One lab at a time (the lab lock).

use cclab::perf_lab::{self as rlab, key, perf_in, serve_in, target};
use cclab_kernel::testing::{lab_lock, ours_left};
use cclab_kernel::{addr, lab};
use cclab_remote::PerfOptions;
use cclab_sys as sys;
use std::time::Duration;

const RATE: f64 = 50e6;
const RTT_MS: f64 = 20.0;
/// Payload share of the link's bytes (1448-byte segments in 1500-byte packets).
const PAYLOAD: f64 = 1448.0 / 1500.0;

fn make_lab() -> lab::Lab {
    rlab::make_lab(&rlab::default_scenario()).expect("lab")
}

#[test]
fn perf_download_measures_the_path() {
    let Some(_g) = lab_lock("perf_download_measures_the_path", &["cubic", "bbr"]) else {
        return;
    };
    let lab = make_lab();
    // The server sends (a download): it sits on the path's sending side.
    let srv = serve_in(lab.sender_ns(), addr::SENDER, Some(key()));
    let doc = perf_in(
        lab.receiver_ns(),
        PerfOptions {
            target: target(addr::SENDER),
            ccs: vec!["cubic".into(), "bbr".into()],
            duration: Duration::from_secs(8),
            key: Some(key()),
            ..Default::default()
        },
    )
    .unwrap();
    let log = srv.log();
    srv.stop().unwrap();
    drop(lab);
    assert_eq!(doc.backend, "host");
    assert_eq!(doc.runs.len(), 2);
    for (r, cc) in doc.runs.iter().zip(["cubic", "bbr"]) {
        let f = &r.flows[0];
        eprintln!(
            "{cc}: goodput {:.2} Mbit/s, rtt min {:.2} p50 {:.2} p99 {:.2} ms, retrans {}, {:.1} s",
            f.goodput_bps / 1e6,
            f.rtt_ms.min,
            f.rtt_ms.p50,
            f.rtt_ms.p99,
            f.retransmits,
            r.duration_s
        );
        assert_eq!(
            f.cc, cc,
            "the server's socket used the controller asked for"
        );
        assert_eq!(r.params["flows.cc"], cc);
        // CUBIC and BBR both fill a 1-BDP drop-tail link of 50 Mbit/s at 20 ms.
        assert!(
            f.goodput_bps > 0.9 * RATE * PAYLOAD && f.goodput_bps < RATE * PAYLOAD * 1.01,
            "{cc}: goodput {} of a {} link",
            f.goodput_bps,
            RATE
        );
        assert!(
            (RTT_MS - 0.5..RTT_MS + 3.0).contains(&f.rtt_ms.min),
            "{cc}: min RTT {} ms on a {RTT_MS} ms path",
            f.rtt_ms.min
        );
        // The queue adds at most one BDP (20 ms) to the RTT.
        assert!(
            f.rtt_ms.p50 >= f.rtt_ms.min && f.rtt_ms.p99 < 2.0 * RTT_MS + 8.0,
            "{cc}: {:?}",
            f.rtt_ms
        );
        assert!((7.9..10.0).contains(&r.duration_s), "{}", r.duration_s);
        let s = r.series.as_ref().unwrap();
        assert!((79..=100).contains(&s.t_s.len()), "{} bins", s.t_s.len());
        let mid = s.mean_goodput_between(2.0, 7.0)[0];
        assert!(mid > 0.85 * RATE * PAYLOAD, "{cc}: binned goodput {mid}");
        assert!(s.flows[0].cwnd_pkts.iter().any(|&c| c > 10.0));
        assert_eq!(r.settings["host.direction"], "download");
        assert_eq!(r.settings["host.peer_kernel"], sys_release());
        assert!(r.settings["host.peer_ccs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == "bbr"));
    }
    let (c, b) = (
        doc.runs[0].flows[0].rtt_ms.p50,
        doc.runs[1].flows[0].rtt_ms.p50,
    );
    eprintln!("rtt p50: cubic {c:.1} ms, bbr {b:.1} ms");
    assert!(
        log.iter().any(|l| l.contains("run 2 bbr download")),
        "{log:?}"
    );
    assert!(ours_left().is_empty(), "left {:?}", ours_left());
}

fn sys_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn perf_upload_measures_the_path() {
    let Some(_g) = lab_lock("perf_upload_measures_the_path", &["cubic"]) else {
        return;
    };
    let lab = make_lab();
    // The client sends (--reverse): it sits on the sending side, the server on the other.
    let rcv = addr::receiver(0);
    let srv = serve_in(lab.receiver_ns(), rcv, Some(key()));
    let doc = perf_in(
        lab.sender_ns(),
        PerfOptions {
            target: target(rcv),
            ccs: vec!["cubic".into()],
            duration: Duration::from_secs(6),
            reverse: true,
            parallel: 2,
            key: Some(key()),
            ..Default::default()
        },
    )
    .unwrap();
    srv.stop().unwrap();
    drop(lab);
    let r = &doc.runs[0];
    let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    eprintln!(
        "upload x2: {:.2} Mbit/s ({:.2} + {:.2}), min RTT {:.2} ms, jain {:.3}",
        total / 1e6,
        r.flows[0].goodput_bps / 1e6,
        r.flows[1].goodput_bps / 1e6,
        r.flows[0].rtt_ms.min,
        r.jain
    );
    assert_eq!(r.flows.len(), 2);
    assert!(
        total > 0.9 * RATE * PAYLOAD && total < 1.01 * RATE * PAYLOAD,
        "{total}"
    );
    for f in &r.flows {
        assert_eq!(f.cc, "cubic");
        assert!(
            (RTT_MS - 0.5..RTT_MS + 3.0).contains(&f.rtt_ms.min),
            "{:?}",
            f.rtt_ms
        );
    }
    assert_eq!(r.settings["host.direction"], "upload");
    assert!(ours_left().is_empty(), "left {:?}", ours_left());
}

#[test]
fn keyless_server_refuses_other_hosts() {
    let Some(_g) = lab_lock("keyless_server_refuses_other_hosts", &["cubic"]) else {
        return;
    };
    let lab = make_lab();
    let srv = serve_in(lab.sender_ns(), addr::SENDER, None);
    let e = perf_in(
        lab.receiver_ns(),
        PerfOptions {
            target: target(addr::SENDER),
            duration: Duration::from_secs(1),
            ..Default::default()
        },
    )
    .unwrap_err();
    // A key on the client does not help: the server has none to check it against.
    let e2 = perf_in(
        lab.receiver_ns(),
        PerfOptions {
            target: target(addr::SENDER),
            duration: Duration::from_secs(1),
            key: Some(key()),
            ..Default::default()
        },
    )
    .unwrap_err();
    let log = srv.log();
    srv.stop().unwrap();
    drop(lab);
    let msg = e.to_string();
    assert!(
        msg.contains("loopback peers only") && !msg.contains('\n'),
        "{msg}"
    );
    assert!(e2.to_string().contains("loopback peers only"), "{e2}");
    assert!(
        log.iter()
            .any(|l| l.starts_with("refused 198.18.1.10") && l.contains("no key")),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.contains("session opened")), "{log:?}");
    assert!(ours_left().is_empty(), "left {:?}", ours_left());
}

#[test]
fn get_measures_the_path() {
    let Some(_g) = lab_lock("get_measures_the_path", &[]) else {
        return;
    };
    let lab = make_lab();
    // The web server on the sending side (the kernel's default controller), get on the other.
    let snd = lab.sender_ns().to_string();
    let http = std::thread::spawn(move || {
        sys::place(false);
        sys::enter_netns(&snd).unwrap();
        let l = std::net::TcpListener::bind((addr::fmt(addr::SENDER), 8080)).unwrap();
        cclab_remote::httpd::serve(l, 1, Duration::from_secs(30))
    })
    .join()
    .unwrap();
    let rcv = lab.receiver_ns().to_string();
    let doc = std::thread::spawn(move || {
        sys::place(false);
        sys::enter_netns(&rcv).unwrap();
        cclab_remote::get(&cclab_remote::GetOptions {
            url: format!("http://{}:8080/bytes/40000000", addr::fmt(addr::SENDER)),
            ..Default::default()
        })
    })
    .join()
    .unwrap()
    .unwrap();
    assert_eq!(http.join().unwrap(), 1);
    drop(lab);
    let f = &doc.runs[0].flows[0];
    eprintln!(
        "get 40 MB: {:.2} Mbit/s, fct {:.2} s, receiver rtt min {:.2} p50 {:.2} p99 {:.2} ms",
        f.goodput_bps / 1e6,
        f.fct_s.unwrap_or(0.0),
        f.rtt_ms.min,
        f.rtt_ms.p50,
        f.rtt_ms.p99
    );
    assert_eq!(f.bytes_delivered, 40_000_000);
    // 40 MB at 50 Mbit/s: slow start costs a few RTTs of the ~6.6 s.
    assert!(
        f.goodput_bps > 0.85 * RATE * PAYLOAD && f.goodput_bps < RATE * PAYLOAD * 1.01,
        "{}",
        f.goodput_bps
    );
    assert!(
        (RTT_MS - 0.5..RTT_MS + 3.0).contains(&f.rtt_ms.min),
        "{:?}",
        f.rtt_ms
    );
    // The receiver's RTT estimate sees the queue the sender builds (up to 1 BDP).
    assert!(
        f.rtt_ms.p50 >= RTT_MS - 0.5 && f.rtt_ms.p99 < 2.0 * RTT_MS + 10.0,
        "{:?}",
        f.rtt_ms
    );
    assert!(ours_left().is_empty(), "left {:?}", ours_left());
}
