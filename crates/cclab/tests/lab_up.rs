//! `cclab lab up`: a scenario's path held open for other traffic, then removed. Needs root
//! for the lab; without it the test prints `SKIP <test>: <reason>` and checks the one-line
//! error instead.

mod common;

use cclab_kernel::{lab_unavailable, namespaces_of};
use cclab_sys as sys;
use common::{cclab, tmpdir};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// 50 Mbit/s x 20 ms, two flow groups: the second's receiver address adds 30 ms. Its flows
/// run nothing here, so a controller the kernel lacks (bbr3) is no error.
const TWO_GROUPS: &str = r#"
name = "lab-up-test"
duration = "5s"
[link]
rate = "50mbit"
rtt = "20ms"
buffer = "1bdp"
[[flows]]
cc = "cubic"
[[flows]]
cc = "bbr3"
rtt_extra = "30ms"
"#;

/// Connect from the sender namespace to `addr` (a listener in the receiver namespace), send
/// `bytes`; the connect time (one round trip) and the transfer's seconds.
fn transfer(snd: &str, rcv: &str, addr: SocketAddr, bytes: usize) -> (Duration, f64) {
    let rcv = rcv.to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    let server = std::thread::spawn(move || {
        sys::enter_netns(&rcv).unwrap();
        let l = TcpListener::bind(addr).unwrap();
        tx.send(()).unwrap();
        let (mut s, _) = l.accept().unwrap();
        let mut buf = vec![0u8; 1 << 16];
        let mut n = 0;
        while n < bytes {
            match s.read(&mut buf).unwrap() {
                0 => break,
                k => n += k,
            }
        }
        n
    });
    rx.recv().unwrap();
    let snd = snd.to_string();
    let client = std::thread::spawn(move || {
        sys::enter_netns(&snd).unwrap();
        let t = Instant::now();
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
        let rtt = t.elapsed();
        let t = Instant::now();
        s.write_all(&vec![7u8; bytes]).unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        (rtt, t)
    });
    let (rtt, t) = client.join().unwrap();
    assert_eq!(server.join().unwrap(), bytes);
    (rtt, t.elapsed().as_secs_f64())
}

#[test]
fn lab_up_holds_a_path_for_other_traffic_then_removes_it() {
    let test = "lab_up_holds_a_path_for_other_traffic_then_removes_it";
    let dir = tmpdir("lab-up");
    let scen = dir.join("two.toml");
    std::fs::write(&scen, TWO_GROUPS).unwrap();
    if let Some(why) = lab_unavailable(&[]) {
        eprintln!("SKIP {test}: {why}");
        let o = cclab().args(["lab", "up"]).arg(&scen).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success() && err.contains("needs the kernel lab"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        return;
    }
    let mut child = cclab()
        .args(["lab", "up"])
        .arg(&scen)
        .args(["--for", "60s", "--json", "--set", "hosts.pacing=true"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let info: Value = serde_json::from_str(&line).expect("the first line is JSON");
    let (snd, rcv) = (
        info["sender_ns"].as_str().unwrap().to_string(),
        info["receiver_ns"].as_str().unwrap().to_string(),
    );
    assert_eq!(info["sender_addr"], "198.18.0.2");
    let addrs: Vec<&str> = info["receivers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["addr"].as_str().unwrap())
        .collect();
    assert_eq!(addrs, ["198.18.1.10", "198.18.1.11"]);
    assert_eq!(info["receivers"][1]["extra_rtt_ms"], 30.0);
    // A per-socket host setting is named: the traffic's own program must set it.
    let per_socket = info["per_socket"].as_array().unwrap();
    assert_eq!(per_socket.len(), 1, "{info}");
    assert!(per_socket[0].as_str().unwrap().contains("hosts.pacing"));
    assert!(
        info["path"].as_str().unwrap().contains("50.0 Mbit/s"),
        "{info}"
    );
    assert_eq!(
        namespaces_of(child.id()).len(),
        3,
        "{:?}",
        namespaces_of(child.id())
    );

    // Traffic of its own crosses the path: a round trip of 20 ms (50 through the second
    // group's address), 2 MB at no more than the link's 50 Mbit/s.
    let (rtt0, _) = transfer(&snd, &rcv, "198.18.1.10:7001".parse().unwrap(), 1000);
    let (rtt1, _) = transfer(&snd, &rcv, "198.18.1.11:7002".parse().unwrap(), 1000);
    let (_, secs) = transfer(&snd, &rcv, "198.18.1.10:7003".parse().unwrap(), 2_000_000);
    eprintln!(
        "connect {:.1} ms / {:.1} ms; 2 MB in {secs:.2} s",
        rtt0.as_secs_f64() * 1e3,
        rtt1.as_secs_f64() * 1e3
    );
    assert!((0.0195..0.030).contains(&rtt0.as_secs_f64()), "{rtt0:?}");
    assert!((0.0495..0.060).contains(&rtt1.as_secs_f64()), "{rtt1:?}");
    assert!(secs > 2e6 * 8.0 / 50e6, "{secs}");

    // Ctrl-C: it takes the lab down, says what crossed it, exits 0.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "lab up did not stop");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    let summary: Value = serde_json::from_str(rest.trim()).expect("the last line is JSON");
    assert_eq!(summary["ended_by"], "SIGINT");
    let pkts = summary["data_pkts_in"].as_u64().unwrap();
    assert!(pkts > 1300, "{summary}");
    assert!(summary["forwarded_bytes"].as_u64().unwrap() > 2_000_000);
    assert!(namespaces_of(child.id()).is_empty());
    for ns in [&snd, &rcv] {
        assert!(!std::path::Path::new(&format!("/run/netns/{ns}")).exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn lab_up_refuses_what_it_cannot_hold_in_one_line() {
    let dir = tmpdir("lab-up-refuses");
    let scen = dir.join("two.toml");
    std::fs::write(&scen, TWO_GROUPS).unwrap();
    for (args, want) in [
        (&["--set", "link.loss=[0,1%]"][..], "--set link.loss="),
        (&["--for", "0s"][..], "more than 0"),
        (&["--for", "25h"][..], "at most 24 h"),
        (&["--for", "soon"][..], "--for"),
        (&["--for", "xmin"][..], "not a time"),
        (
            &["--set", "hosts.probe_start=true"][..],
            "hosts.probe_start",
        ),
    ] {
        let o = cclab()
            .args(["lab", "up"])
            .arg(&scen)
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
