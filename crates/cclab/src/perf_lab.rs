//! `cclab serve` and `cclab perf` in the kernel lab's two namespaces, joined through cclab's
//! link element over a known path: `cclab lab fit-check` (the fit held against the path it
//! ran on) and the real-host tests in the lab. Needs root (callers check
//! `cclab_kernel::lab_unavailable`).

use cclab_kernel::{addr, lab, KernelOptions};
use cclab_remote::{Key, Limits, PerfOptions, RemoteError, ServeOptions, Server, ServerHandle};
use cclab_results::ResultsDoc;
use cclab_scenario::Scenario;
use cclab_sys as sys;
use std::net::SocketAddr;

/// A path of the lab tests as a scenario: drop-tail of 1 BDP, `rate_bps`, `rtt_ms`, random
/// loss `loss` (a fraction), Linux's default hosts, seed 1.
pub fn scenario(rate_bps: f64, rtt_ms: f64, loss: f64) -> Scenario {
    let text = format!(
        "name = \"lab\"\nduration = \"10s\"\nseed = 1\n[link]\nrate = \"{}bit\"\n\
         rtt = \"{}us\"\nbuffer = \"1bdp\"\nloss = {loss}\n[[flows]]\ncc = \"cubic\"\n",
        rate_bps.round() as u64,
        (rtt_ms * 1e3).round() as u64,
    );
    let file = Scenario::from_str(&text, "the lab's path").expect("a valid lab scenario");
    file.expand().expect("one point").swap_remove(0).scenario
}

/// 50 Mbit/s, 20 ms, 1 BDP drop-tail, no loss: the path of the first lab tests.
pub fn default_scenario() -> Scenario {
    scenario(50e6, 20.0, 0.0)
}

/// The kernel lab over `sc`'s path and hosts, as a kernel-backend run of `sc` would build it
/// ([`cclab_kernel::lab_config`]), for traffic other than cclab's own flows (sender
/// namespace: [`addr::SENDER`]; receiver: `addr::receiver(0)`).
pub fn make_lab(sc: &Scenario) -> Result<lab::Lab, String> {
    let config = cclab_kernel::lab_config(sc, &KernelOptions::default(), Vec::new());
    lab::Lab::create(config, None).map_err(|e| e.to_string())
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
            listen: SocketAddr::from((ip, cclab_remote::DEFAULT_PORT)),
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
        cclab_remote::perf(&o)
    })
    .join()
    .map_err(|_| RemoteError::Io("the perf thread panicked".into()))?
}

/// `HOST:PORT` of a server on `ip`.
pub fn target(ip: [u8; 4]) -> String {
    format!("{}:{}", addr::fmt(ip), cclab_remote::DEFAULT_PORT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_path_is_the_one_asked_for() {
        let sc = scenario(50e6, 20.0, 0.01);
        assert_eq!(sc.link.path.rate_bps, 50e6);
        assert_eq!(sc.link.path.rtt_ns, 20_000_000);
        assert_eq!(sc.link.path.loss, 0.01);
        assert_eq!(sc.seed, 1);
        assert_eq!(sc.flows.len(), 1);
        let config = cclab_kernel::lab_config(&sc, &KernelOptions::default(), Vec::new());
        assert_eq!(config.mtu, 1500);
        assert_eq!(config.group_init_cwnd, vec![10]);
        assert_eq!(config.element.group_extra_ns, vec![0]);
    }
}
