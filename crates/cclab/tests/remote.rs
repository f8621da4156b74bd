//! `cclab serve`, `cclab perf` and `cclab get` as programs: output formats, results
//! directories, report and compare on host results, one-line errors, Ctrl-C; and serve and
//! perf as two processes in two lab namespaces across an emulated path (root; else SKIP).

mod common;
use common::{cclab, tmpdir};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One test at a time: loopback runs take every CPU, and the lab test needs them.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `cclab serve` on loopback, once it accepts connections.
fn serve(port: u16, extra: &[&str]) -> Child {
    let child = cclab()
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_port(&format!("127.0.0.1:{port}"));
    child
}

fn wait_port(addr: &str) {
    let t = Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "nothing listens on {addr}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGINT to `child`; its exit status and stderr, within `within`.
fn interrupt(mut child: Child, within: Duration) -> (Option<i32>, String) {
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > within {
            let _ = child.kill();
            panic!("still running {within:?} after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    (status.code(), err)
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A failed command's stderr: one line, `cclab: error: ...`.
fn one_line_error(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines.len() == 1 && lines[0].starts_with("cclab: error: "),
        "{err}"
    );
    err
}

#[test]
fn serve_and_perf_give_the_results_schema_report_and_compare() {
    let _serial = serial();
    let port = free_port();
    let srv = serve(port, &[]);
    let target = format!("127.0.0.1:{port}");
    // --json: the document on stdout, no per-second lines.
    let out = cclab()
        .args([
            "perf",
            &target,
            "--cc",
            "cubic,reno",
            "--duration",
            "1s",
            "--json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(v["backend"], "host");
    assert_eq!(v["scenario"], "perf");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1]["params"]["flows.cc"], "reno");
    assert_eq!(runs[1]["flows"][0]["cc"], "reno");
    assert!(runs[0]["flows"][0]["goodput_bps"].as_f64().unwrap() > 1e8);
    assert!(runs[0]["flows"][0]["rtt_ms"]["p50"].as_f64().unwrap() > 0.0);
    assert!(runs[0]["settings"]["host.peer_ccs"].is_array());
    assert!(runs[0]["settings"]["host.peer_kernel"].is_string());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("Mbit/s"));
    // --out twice (with a sized upload on two streams), then report and compare.
    let d = tmpdir("remote-out");
    let (a, b) = (d.join("a"), d.join("b"));
    for dir in [&a, &b] {
        let out = cclab()
            .args(["perf", &target, "--duration", "2s", "--out"])
            .arg(dir)
            .output()
            .unwrap();
        let text = ok(&out);
        assert!(text.contains("goodput") && text.contains("cubic"), "{text}");
        assert!(
            !text.contains(": link "),
            "no emulated link on a real path: {text}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("[   0-   1 s] cubic"), "{err}");
        for f in [
            "results.json",
            "flows.csv",
            "series/run-1.csv",
            "report.html",
            "meta.json",
        ] {
            assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
        }
    }
    let csv = std::fs::read_to_string(a.join("series/run-1.csv")).unwrap();
    assert!(csv.lines().count() > 15, "100 ms bins over 2 s: {csv}");
    let out = cclab().arg("report").arg(&a).output().unwrap();
    assert!(ok(&out).contains("report written"));
    let out = cclab().arg("compare").arg(&a).arg(&b).output().unwrap();
    assert!(ok(&out).contains("goodput"));
    let out = cclab()
        .args([
            "perf",
            &target,
            "-R",
            "-P",
            "2",
            "--size",
            "20mb",
            "--duration",
            "5s",
            "--json",
            "--name",
            "up",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let flows = v["runs"][0]["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 2);
    for f in flows {
        assert_eq!(f["bytes_delivered"], 20_000_000);
        assert!(f["fct_s"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(v["runs"][0]["settings"]["host.direction"], "upload");
    // Ctrl-C ends the server cleanly.
    let (code, err) = interrupt(srv, Duration::from_secs(5));
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("stopped by SIGINT"), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_is_a_one_line_error() {
    let _serial = serial();
    let port = free_port();
    let t = format!("127.0.0.1:{port}");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["perf", &t], "cannot connect"),
        (vec!["perf", "a:b:c"], "HOST or HOST:PORT"),
        (vec!["perf", &t, "--cc", ","], "names no controller"),
        (vec!["perf", &t, "--duration", "0s"], "--duration"),
        (vec!["perf", &t, "--duration", "fast"], "--duration"),
        (vec!["perf", &t, "--size", "0"], "--size"),
        (
            vec!["perf", &t, "--key-file", "/nonexistent/key"],
            "cannot read key file",
        ),
        (vec!["serve", "--listen", "nowhere"], "--listen"),
        (vec!["serve", "--max-bytes", "lots"], "--max-bytes"),
        (
            vec!["get", "https://example.org/"],
            "https is not supported",
        ),
        (
            vec!["get", "http://127.0.0.1:1/", "--timeout", "2s"],
            "cannot connect",
        ),
    ];
    for (args, want) in cases {
        let out = cclab().args(&args).output().unwrap();
        let err = one_line_error(&out);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn get_downloads_from_a_plain_web_server() {
    let _serial = serial();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/bytes/20000000", l.local_addr().unwrap());
    let h = cclab_remote::httpd::serve(l, 2, Duration::from_secs(20));
    let out = cclab().args(["get", &url, "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(v["backend"], "host");
    assert_eq!(v["runs"][0]["flows"][0]["bytes_delivered"], 20_000_000);
    let d = tmpdir("remote-get");
    let out = cclab()
        .args(["get", &url, "--out"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(ok(&out).contains("goodput"));
    assert!(d.join("report.html").is_file() && d.join("series/run-1.csv").is_file());
    assert_eq!(h.join().unwrap(), 2);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn ctrl_c_stops_perf_and_the_server_serves_on() {
    let _serial = serial();
    let port = free_port();
    let srv = serve(port, &[]);
    let target = format!("127.0.0.1:{port}");
    let perf = cclab()
        .args(["perf", &target, "--duration", "30s", "--cc", "cubic"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let (code, err) = interrupt(perf, Duration::from_secs(3));
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("cclab: error: interrupted by SIGINT"), "{err}");
    // The server noticed, and serves the next client.
    let out = cclab()
        .args(["perf", &target, "--duration", "1s", "--json"])
        .output()
        .unwrap();
    ok(&out);
    let (code, err) = interrupt(srv, Duration::from_secs(5));
    assert_eq!(code, Some(0));
    assert!(
        err.contains("run 1 cubic download") && err.contains("stopped early"),
        "{err}"
    );
}

// ---- two processes across the lab -------------------------------------------------------

fn lab_for_test() -> cclab_kernel::lab::Lab {
    cclab::perf_lab::make_lab(&cclab::perf_lab::default_scenario()).unwrap()
}

/// `cclab ARGS` inside network namespace `ns`, on the endpoints' CPUs.
fn cclab_in(ns: &str, args: &[&str]) -> Command {
    let mut c = Command::new("nsenter");
    c.arg(format!("--net=/run/netns/{ns}"))
        .arg(env!("CARGO_BIN_EXE_cclab"))
        .args(args);
    c
}

#[test]
fn serve_and_perf_as_two_processes_across_the_lab() {
    let test = "serve_and_perf_as_two_processes_across_the_lab";
    if let Some(why) = cclab_kernel::lab_unavailable(&["cubic"]) {
        let _ = writeln!(std::io::stderr(), "SKIP {test}: {why}");
        return;
    }
    if Command::new("nsenter").arg("--version").output().is_err() {
        let _ = writeln!(std::io::stderr(), "SKIP {test}: no nsenter (util-linux)");
        return;
    }
    let _serial = serial();
    let d = tmpdir("remote-lab");
    let key = d.join("key");
    std::fs::write(&key, "a-lab-test-key-of-some-length\n").unwrap();
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let key = key.to_str().unwrap();
    let lab = lab_for_test();
    let (snd, rcv) = (lab.sender_ns().to_string(), lab.receiver_ns().to_string());
    let srv = cclab_in(
        &snd,
        &["serve", "--listen", "198.18.0.2:5301", "--key-file", key],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Listening yet? (asked from the receiver's side, through the path)
    let t = Instant::now();
    let out = loop {
        let out = cclab_in(
            &rcv,
            &[
                "perf",
                "198.18.0.2",
                "--cc",
                "cubic",
                "--duration",
                "5s",
                "--key-file",
                key,
                "--json",
            ],
        )
        .output()
        .unwrap();
        if out.status.success() || t.elapsed() > Duration::from_secs(10) {
            break out;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    // (perf's Bye crosses the path before the server stops.)
    std::thread::sleep(Duration::from_millis(300));
    let (code, log) = interrupt(srv, Duration::from_secs(5));
    drop(lab);
    let v: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let f = &v["runs"][0]["flows"][0];
    let goodput = f["goodput_bps"].as_f64().unwrap();
    let min_rtt = f["rtt_ms"]["min"].as_f64().unwrap();
    eprintln!(
        "two processes: {:.2} Mbit/s, min RTT {min_rtt:.2} ms",
        goodput / 1e6
    );
    assert!(
        goodput > 0.9 * 50e6 * 1448.0 / 1500.0 && goodput < 50e6,
        "{goodput}"
    );
    assert!((19.5..23.0).contains(&min_rtt), "{min_rtt}");
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("198.18.1.10") && log.contains("session closed"),
        "{log}"
    );
    // Nothing left: the processes were waited for, the namespaces are gone.
    assert!(
        cclab_kernel::namespaces_of(std::process::id()).is_empty(),
        "{:?}",
        cclab_kernel::namespaces_of(std::process::id())
    );
    assert!(!Path::new(&format!("/run/netns/{snd}")).exists());
    std::fs::remove_dir_all(&d).unwrap();
}
