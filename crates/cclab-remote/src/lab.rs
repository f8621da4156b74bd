//! `cclab serve` and `cclab perf` in the kernel lab's two namespaces, joined through cclab's
//! link element over a known path: `cclab lab fit-check` (the fit held against the path it
//! ran on) and the lab tests. Needs root (callers check `cclab_kernel::lab_unavailable`).

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
    let mut link = LinkSpec::default();
    // Whole bits per second, as a scenario's rate.
    link.path.rate_bps = (rate_bps as u64) as f64;
    link.path.rtt_ns = (rtt_ms * 1e6) as u64;
    link.path.loss = loss;
    link
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
                mode: cclab_kernel::auto_mode(link.path.rate_bps),
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
pub fn try_serve_in(ns: &str, ip: [u8; 4], key: Option<Key>) -> Result<ServerHandle, RemoteError> {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        sys::place(false);
        sys::enter_netns(&ns).map_err(|e| RemoteError::Io(format!("enter {ns}: {e}")))?;
        Server::bind(ServeOptions {
            listen: SocketAddr::from((ip, crate::DEFAULT_PORT)),
            key,
            limits: Limits::default(),
            log_stderr: false,
        })
        .map(Server::spawn)
    })
    .join()
    .map_err(|_| RemoteError::Io("the server thread panicked".into()))?
}

/// [`try_serve_in`] for tests (panics on failure).
pub fn serve_in(ns: &str, ip: [u8; 4], key: Option<Key>) -> ServerHandle {
    try_serve_in(ns, ip, key).expect("serve in the lab")
}

/// `perf` run from inside namespace `ns`.
pub fn perf_in(ns: &str, o: PerfOptions) -> Result<ResultsDoc, RemoteError> {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        sys::place(false);
        sys::enter_netns(&ns).map_err(|e| RemoteError::Io(format!("enter {ns}: {e}")))?;
        crate::perf(&o)
    })
    .join()
    .map_err(|_| RemoteError::Io("the perf thread panicked".into()))?
}

/// `HOST:PORT` of a server on `ip`.
pub fn target(ip: [u8; 4]) -> String {
    format!("{}:{}", addr::fmt(ip), crate::DEFAULT_PORT)
}
