//! Test support: `cclab serve` and `cclab perf` in the kernel lab's two namespaces, joined
//! through cclab's link element over a known path. Used by this crate's lab tests and the
//! `cclab` crate's fit tests; needs root (callers check `cclab_kernel::lab_unavailable`).

use crate::{Key, Limits, PerfOptions, RemoteError, ServeOptions, Server, ServerHandle};
use cclab_kernel::{addr, element, lab, sys, KernelOptions};
use cclab_results::ResultsDoc;
use cclab_scenario::LinkSpec;
use std::net::SocketAddr;

/// 50 Mbit/s, 20 ms, 1 BDP drop-tail, no loss: the path of the first lab tests.
pub fn default_link() -> LinkSpec {
    link(50e6, 20.0, 0.0)
}

/// A drop-tail path of 1 BDP: `rate_bps`, `rtt_ms`, random loss `loss` (a fraction).
pub fn link(rate_bps: f64, rtt_ms: f64, loss: f64) -> LinkSpec {
    LinkSpec {
        rate_bps: rate_bps as u64,
        rtt_ns: (rtt_ms * 1e6) as u64,
        loss,
        ..Default::default()
    }
}

/// The lab over `link` (sender namespace: [`addr::SENDER`]; receiver: `addr::receiver(0)`).
pub fn make_lab(link: &LinkSpec) -> Result<lab::Lab, String> {
    let o = KernelOptions::default();
    lab::Lab::create(
        lab::LabConfig {
            element: element::ElementConfig {
                link: link.desc(),
                seed: 1,
                group_extra_ns: vec![0],
                flow_group: vec![],
                timing: o.timing,
                realtime: false,
                mode: cclab_kernel::auto_mode(link.rate_bps as f64),
                pin: true,
                mss: 1448,
                bin_ns: 100_000_000,
            },
            mtu: 1500,
            group_init_cwnd: vec![10],
            group_ecn: vec![false],
            host: Default::default(),
            keep_namespaces: false,
        },
        None,
    )
    .map_err(|e| e.to_string())
}

/// The key the lab tests share.
pub fn key() -> Key {
    Key::from_bytes(b"lab-test-key-0123456789").expect("a 23-byte key")
}

/// A server listening on `ip` inside namespace `ns`.
pub fn serve_in(ns: &str, ip: [u8; 4], key: Option<Key>) -> ServerHandle {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        sys::place(false);
        sys::enter_netns(&ns).expect("enter netns");
        Server::bind(ServeOptions {
            listen: SocketAddr::from((ip, crate::DEFAULT_PORT)),
            key,
            limits: Limits::default(),
            log_stderr: false,
        })
        .expect("bind")
        .spawn()
    })
    .join()
    .expect("server thread")
}

/// `perf` run from inside namespace `ns`.
pub fn perf_in(ns: &str, o: PerfOptions) -> Result<ResultsDoc, RemoteError> {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        sys::place(false);
        sys::enter_netns(&ns).expect("enter netns");
        crate::perf(&o)
    })
    .join()
    .expect("perf thread")
}

/// `HOST:PORT` of a server on `ip`.
pub fn target(ip: [u8; 4]) -> String {
    format!("{}:{}", addr::fmt(ip), crate::DEFAULT_PORT)
}
