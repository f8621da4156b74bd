//! The lab apart from the traffic that crosses it: three network namespaces (sender,
//! router, receiver) joined by veth pairs, and cclab's user-space element on a TUN device in
//! the router running the scenario's path. Whatever runs the endpoints (cclab's own flows in
//! [`crate::traffic`], or another traffic source) enters the sender and receiver
//! namespaces and talks through it.
//!
//! A [`Lab`] removes everything it made when it is dropped: on success, on error, on panic,
//! and (with [`crate::sys::SignalGuard`] installed) on SIGINT/SIGTERM.

use crate::element::{self, ElementConfig, ElementShared, ElementStats};
use crate::{sys, topo, KernelError};
use cclab_results::trace::TraceWriter;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// What a lab is built with.
#[derive(Clone, Debug)]
pub struct LabConfig {
    /// The path the element emulates (and how it runs).
    pub element: ElementConfig,
    /// MTU of every link: `mss + 52`.
    pub mtu: u32,
    /// `initcwnd` of the routes to each flow group's receiver address.
    pub group_init_cwnd: Vec<u32>,
    /// Flow groups that ask for ECN (`features ecn` on their route); missing = no.
    pub group_ecn: Vec<bool>,
    /// The end hosts' TCP settings (sysctls and route attributes in their namespaces).
    pub host: cclab_core::host::HostTcp,
    /// The sending host's interface rate (`hosts.nic_rate`), emulated on the sender's veth.
    pub nic_rate_bps: Option<f64>,
    /// Leave the namespaces in place when the lab is dropped (debugging; `cclab lab clean`
    /// removes them).
    pub keep_namespaces: bool,
}

/// A running lab. See the module docs.
pub struct Lab {
    topo: topo::Topology,
    shared: Arc<ElementShared>,
    element: Option<std::thread::JoinHandle<std::io::Result<ElementStats>>>,
    steered: bool,
}

impl Lab {
    /// Builds the namespaces, starts the element and routes the router's forwarded packets
    /// through it. Needs root; everything made so far is removed if a step fails.
    /// The element writes `trace` (opened by the caller, so a file that cannot be written
    /// stops the run before anything is made).
    pub fn create(cfg: LabConfig, trace: Option<TraceWriter>) -> Result<Lab, KernelError> {
        crate::check_privileges()?;
        let mut topo = topo::Topology::create(&topo::TopoConfig {
            mtu: cfg.mtu,
            group_init_cwnd: cfg.group_init_cwnd.clone(),
            group_ecn: cfg.group_ecn.clone(),
            host: cfg.host.clone(),
            nic_rate_bps: cfg.nic_rate_bps,
        })?;
        topo.keep = cfg.keep_namespaces;
        let shared = Arc::new(ElementShared::new());
        let pin = cfg.element.pin;
        let (handle, ready) = element::spawn(topo.rtr.clone(), cfg.element, shared.clone(), trace);
        let mut lab = Lab {
            topo,
            shared,
            element: Some(handle),
            steered: false,
        };
        ready.map_err(|e| {
            KernelError::Setup(format!(
                "cannot create the TUN device ({e}); is /dev/net/tun there?"
            ))
        })?;
        lab.topo.route_through_tun(cfg.mtu)?;
        lab.steered = pin
            && sys::placement()
                .is_some_and(|(_, endpoints)| lab.topo.steer_tun_processing(&endpoints));
        Ok(lab)
    }

    /// The sender's namespace (address [`crate::addr::SENDER`]).
    pub fn sender_ns(&self) -> &str {
        &self.topo.snd
    }

    /// The receivers' namespace (one address per flow group, [`crate::addr::receiver`]).
    pub fn receiver_ns(&self) -> &str {
        &self.topo.rcv
    }

    /// What the element shares with the run: its counting window and the queue's backlog.
    pub fn element(&self) -> &Arc<ElementShared> {
        &self.shared
    }

    /// Whether the processing of what the element writes was steered off its CPU.
    pub fn steered(&self) -> bool {
        self.steered
    }

    /// Stops the element and returns what it saw in the counting window. The namespaces
    /// stay until the lab is dropped.
    pub fn stop(&mut self) -> Result<ElementStats, KernelError> {
        self.shared.stop.store(true, Ordering::SeqCst);
        match self.element.take() {
            Some(h) => match h.join() {
                Ok(Ok(s)) => Ok(s),
                Ok(Err(e)) => Err(KernelError::Io(format!("link element: {e}"))),
                Err(_) => Err(KernelError::Io("the link element panicked".into())),
            },
            None => Ok(ElementStats::default()),
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        // The element first (it lives in the router namespace), then the namespaces go with
        // the topology.
        let _ = self.stop();
    }
}
