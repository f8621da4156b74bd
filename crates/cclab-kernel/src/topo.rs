//! Namespaces, links, addresses and routes of one run, created with iproute2 (`ip`) and
//! removed when the [`Topology`] guard drops; plus [`clean_stale`].

use crate::addr::{self, fmt};
use crate::sys;
use crate::KernelError;
use std::collections::HashSet;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// Every namespace, link and process cclab creates starts with this.
pub const PREFIX: &str = "cclab-";
/// Name of the TUN device of the element (inside the router namespace).
pub const TUN: &str = "ctun";
/// Routing table that steers forwarded packets into the element.
pub const TABLE: u32 = 100;

static COUNTER: AtomicU32 = AtomicU32::new(0);
/// Namespaces of runs in progress in this process (`clean_stale` leaves them).
static LIVE: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn live_add(n: &str) {
    LIVE.lock()
        .unwrap()
        .get_or_insert_with(HashSet::new)
        .insert(n.to_string());
}
fn live_remove(n: &str) {
    if let Some(s) = LIVE.lock().unwrap().as_mut() {
        s.remove(n);
    }
}
fn is_live(n: &str) -> bool {
    LIVE.lock().unwrap().as_ref().is_some_and(|s| s.contains(n))
}

/// Run `ip` with `args`; a failure becomes a one-line error with ip's message.
pub fn ip(args: &[&str]) -> Result<String, KernelError> {
    run_cmd("ip", args)
}

pub fn run_cmd(prog: &str, args: &[&str]) -> Result<String, KernelError> {
    let out = Command::new(prog)
        .args(args)
        .output()
        .map_err(|e| KernelError::Setup(format!("cannot run `{prog}` ({e}); install iproute2")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(KernelError::Setup(format!(
            "`{prog} {}` failed: {}",
            args.join(" "),
            err.trim().replace('\n', "; ")
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The three namespaces of one run. Dropping it deletes them (and with them every link
/// and route inside); threads using them must have stopped first.
pub struct Topology {
    pub snd: String,
    pub rtr: String,
    pub rcv: String,
    created: Vec<String>,
    pub keep: bool,
}

/// Link parameters the topology needs.
pub struct TopoConfig {
    pub mtu: u32,
    /// init_cwnd of each flow group.
    pub group_init_cwnd: Vec<u32>,
    /// Flow groups that ask for ECN: their route carries `features ecn`, so the sender
    /// requests it in the handshake (the receiver's `tcp_ecn` = 2 accepts) without touching
    /// any sysctl. Missing = no.
    pub group_ecn: Vec<bool>,
    /// The end hosts' TCP settings, applied in the sender and receiver namespaces.
    pub host: cclab_core::host::HostTcp,
    /// The sending host's interface rate, bit/s (`hosts.nic_rate`): a `tbf` qdisc on the
    /// sender's veth sends at that rate and holds each buffer (charged to its socket, as a
    /// network card holds it until its transmit completion) until it goes. `None` = the
    /// veth's own way: a buffer is freed as soon as the router takes it.
    pub nic_rate_bps: Option<f64>,
}

/// The sysctls that carry `host` in an end host's namespace: (scenario key, sysctl, value).
pub fn host_sysctls(host: &cclab_core::host::HostTcp) -> Vec<(&'static str, &'static str, String)> {
    let triple = |t: [u64; 3]| format!("{} {} {}", t[0], t[1], t[2]);
    vec![
        ("hosts.tcp_rmem", "net.ipv4.tcp_rmem", triple(host.tcp_rmem)),
        ("hosts.tcp_wmem", "net.ipv4.tcp_wmem", triple(host.tcp_wmem)),
        (
            "hosts.slow_start_after_idle",
            "net.ipv4.tcp_slow_start_after_idle",
            u8::from(host.slow_start_after_idle).to_string(),
        ),
        (
            "hosts.notsent_lowat",
            "net.ipv4.tcp_notsent_lowat",
            host.notsent_lowat.unwrap_or(u32::MAX as u64).to_string(),
        ),
    ]
}

impl Topology {
    /// Fresh, unique names: `cclab-<pid>-<n>-{snd,rtr,rcv}`.
    pub fn names() -> (String, String, String) {
        let base = format!(
            "{PREFIX}{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        (
            format!("{base}-snd"),
            format!("{base}-rtr"),
            format!("{base}-rcv"),
        )
    }

    pub fn create(cfg: &TopoConfig) -> Result<Topology, KernelError> {
        let (snd, rtr, rcv) = Self::names();
        let mut t = Topology {
            snd,
            rtr,
            rcv,
            created: Vec::new(),
            keep: false,
        };
        for n in [t.snd.clone(), t.rtr.clone(), t.rcv.clone()] {
            live_add(&n);
            ip(&["netns", "add", &n])?;
            t.created.push(n);
        }
        t.configure(cfg)?;
        Ok(t)
    }

    fn configure(&self, cfg: &TopoConfig) -> Result<(), KernelError> {
        let (s, r, c) = (self.snd.as_str(), self.rtr.as_str(), self.rcv.as_str());
        let mtu = cfg.mtu.to_string();
        // Per-namespace sysctls (never the host's).
        for ns in [s, r, c] {
            let is_rtr = ns == r;
            let host = host_sysctls(&cfg.host);
            sys::in_netns(ns, move || {
                sys::write_sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
                sys::write_sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
                if is_rtr {
                    sys::write_sysctl("net.ipv4.ip_forward", "1")?;
                    sys::write_sysctl("net.ipv4.conf.all.rp_filter", "0")?;
                    sys::write_sysctl("net.ipv4.conf.default.rp_filter", "0")?;
                    sys::write_sysctl("net.ipv4.conf.all.send_redirects", "0")?;
                    sys::write_sysctl("net.ipv4.conf.default.send_redirects", "0")?;
                } else {
                    // No route metrics cached between the flows of a run.
                    sys::write_sysctl("net.ipv4.tcp_no_metrics_save", "1")?;
                    // The scenario's hosts (each end gets all; each acts where it belongs).
                    for (key, sysctl, value) in &host {
                        sys::write_sysctl(sysctl, value).map_err(|e| {
                            std::io::Error::new(
                                e.kind(),
                                format!("could not apply {key} ({sysctl} = {value}): {e}"),
                            )
                        })?;
                    }
                }
                Ok(())
            })
            .map_err(|e| KernelError::Setup(format!("setting sysctls in {ns}: {e}")))?;
        }
        ip(&[
            "-n", s, "link", "add", "s0", "mtu", &mtu, "type", "veth", "peer", "name", "r0", "mtu",
            &mtu, "netns", r,
        ])?;
        ip(&[
            "-n", c, "link", "add", "c0", "mtu", &mtu, "type", "veth", "peer", "name", "r1", "mtu",
            &mtu, "netns", r,
        ])?;
        ip(&[
            "-n",
            s,
            "addr",
            "add",
            &format!("{}/24", fmt(addr::SENDER)),
            "dev",
            "s0",
        ])?;
        ip(&[
            "-n",
            r,
            "addr",
            "add",
            &format!("{}/24", fmt(addr::ROUTER_SND)),
            "dev",
            "r0",
        ])?;
        ip(&[
            "-n",
            r,
            "addr",
            "add",
            &format!("{}/24", fmt(addr::ROUTER_RCV)),
            "dev",
            "r1",
        ])?;
        // The groups' receiver addresses, and the latency probes' echo (the path's own RTT).
        let receivers = (0..cfg.group_init_cwnd.len().max(1))
            .map(addr::receiver)
            .chain([addr::PROBE_RECEIVER]);
        for a in receivers {
            ip(&[
                "-n",
                c,
                "addr",
                "add",
                &format!("{}/24", fmt(a)),
                "dev",
                "c0",
            ])?;
        }
        for (ns, dev) in [(s, "s0"), (r, "r0"), (r, "r1"), (c, "c0")] {
            ip(&["-n", ns, "link", "set", dev, "up"])?;
        }
        for ns in [s, r, c] {
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        if let Some(rate) = cfg.nic_rate_bps {
            // One buffer of the largest GSO size may go at once (its frames then take their
            // time at the rate before the next one may), as a card sends one after another.
            let rate = format!("{}bit", rate.round() as u64);
            run_cmd(
                "tc",
                &[
                    "-n", s, "qdisc", "replace", "dev", "s0", "root", "tbf", "rate", &rate,
                    "burst", "70000", "limit", "16000000",
                ],
            )
            .map_err(|e| {
                KernelError::Setup(format!(
                    "could not emulate hosts.nic_rate with a tbf qdisc on the sender's interface ({e}); is the kernel's sch_tbf module available?"
                ))
            })?;
        }
        let gw_s = fmt(addr::ROUTER_SND);
        ip(&["-n", s, "route", "add", "default", "via", &gw_s])?;
        // The sender's routes carry `initcwnd` and `rto_min` (a route's rto_min is locked,
        // so TCP uses it), and `features ecn` for the groups that ask for ECN.
        let rto_min = format!("{}us", cfg.host.rto_min / 1000);
        for (g, iw) in cfg.group_init_cwnd.iter().enumerate() {
            let dst = format!("{}/32", fmt(addr::receiver(g)));
            let iw = iw.to_string();
            let mut args = vec!["-n", s, "route", "add", &dst, "via", &gw_s, "initcwnd", &iw];
            if cfg.host.rto_min != cclab_core::rtt::RTO_MIN {
                args.extend(["rto_min", &rto_min]);
            }
            if cfg.group_ecn.get(g).copied().unwrap_or(false) {
                args.extend(["features", "ecn"]);
            }
            ip(&args).map_err(|e| {
                KernelError::Setup(format!(
                    "could not apply hosts.init_cwnd / hosts.rto_min / flows.ecn as route attributes: {e}"
                ))
            })?;
        }
        // Everything the router forwards is looked up in TABLE, whose only route (added
        // with the TUN device) leads into the element.
        let table = TABLE.to_string();
        ip(&[
            "-n", r, "rule", "add", "iif", "r0", "lookup", &table, "pref", "100",
        ])?;
        ip(&[
            "-n", r, "rule", "add", "iif", "r1", "lookup", &table, "pref", "101",
        ])?;
        // The receiver's route carries `initrwnd` when the scenario sets one.
        let gw_c = fmt(addr::ROUTER_RCV);
        let irw = cfg.host.init_rwnd.map(|n| n.to_string());
        let mut args = vec!["-n", c, "route", "add", "default", "via", &gw_c];
        if let Some(n) = &irw {
            args.extend(["initrwnd", n]);
        }
        ip(&args).map_err(|e| {
            KernelError::Setup(format!(
                "could not apply hosts.init_rwnd as a route attribute: {e}"
            ))
        })?;
        Ok(())
    }

    /// Steer everything the router forwards through the element's TUN device (call once
    /// the element has created it).
    pub fn route_through_tun(&self, mtu: u32) -> Result<(), KernelError> {
        let r = self.rtr.as_str();
        ip(&[
            "-n",
            r,
            "link",
            "set",
            TUN,
            "mtu",
            &mtu.to_string(),
            "txqueuelen",
            "10000",
            "up",
        ])?;
        sys::in_netns(r, || {
            sys::write_sysctl(&format!("net.ipv4.conf.{TUN}.rp_filter"), "0")
        })
        .map_err(|e| KernelError::Setup(format!("setting rp_filter in {r}: {e}")))?;
        let table = TABLE.to_string();
        ip(&[
            "-n", r, "route", "replace", "default", "dev", TUN, "table", &table,
        ])?;
        Ok(())
    }

    /// Steer the processing of what the element writes into the TUN device (routing, the
    /// receiver's and sender's TCP stacks behind their veths) to the endpoints' CPUs with
    /// RPS, so that it does not run on the element's CPU. Without it every write ran the
    /// receiving stack inline on the element's CPU and, when that work overflowed into
    /// ksoftirqd, the element lost its CPU for milliseconds (hundreds of times a run).
    /// Best effort: returns whether it took effect. Only the lab's own device is changed.
    pub fn steer_tun_processing(&self, cpus: &[usize]) -> bool {
        let mask: u64 = cpus.iter().filter(|&&c| c < 64).fold(0, |m, &c| m | 1 << c);
        if mask == 0 {
            return false;
        }
        let rel = format!("class/net/{TUN}/queues/rx-0/rps_cpus");
        sys::in_netns(&self.rtr, move || {
            sys::write_own_sysfs(&rel, &format!("{mask:x}"))
        })
        .is_ok()
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for n in self.created.iter().rev() {
            if !self.keep {
                delete_namespace(n);
            }
            live_remove(n);
        }
    }
}

/// `ip netns del`, retried for up to a second: the kernel refuses to unlink a namespace
/// file while a copy of its mount lives in another mount namespace (a process in the middle
/// of `ip netns exec`, anywhere on the host). A namespace that still cannot be removed is
/// reported on stderr with the command that removes it later.
fn delete_namespace(n: &str) {
    let mut last = String::new();
    for i in 0..10 {
        match ip(&["netns", "del", n]) {
            Ok(_) => return,
            Err(e) => last = e.to_string(),
        }
        if !std::path::Path::new("/run/netns").join(n).exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10 << i.min(4)));
    }
    eprintln!(
        "warning: could not delete network namespace {n} ({last}); `cclab lab clean` removes it"
    );
}

/// What [`clean_stale`] removed.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct CleanReport {
    pub namespaces_removed: Vec<String>,
    pub links_removed: Vec<String>,
    pub processes_killed: Vec<i32>,
    /// cclab namespaces left alone because the process that made them is still running.
    pub skipped_live: Vec<String>,
    /// BPF controllers a crashed run left registered, now unregistered (`cclab_bpf::clean_stale`).
    pub bpf_unregistered: Vec<String>,
}

impl std::fmt::Display for CleanReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.namespaces_removed.is_empty()
            && self.links_removed.is_empty()
            && self.processes_killed.is_empty()
            && self.bpf_unregistered.is_empty()
        {
            write!(
                f,
                "nothing stale: no cclab namespace, link, process or BPF controller left"
            )?;
        } else {
            write!(
                f,
                "removed {} namespace(s), {} link(s), killed {} process(es), unregistered {} BPF controller(s)",
                self.namespaces_removed.len(),
                self.links_removed.len(),
                self.processes_killed.len(),
                self.bpf_unregistered.len()
            )?;
            for n in &self.namespaces_removed {
                write!(f, "\n  namespace {n}")?;
            }
            for n in &self.links_removed {
                write!(f, "\n  link {n}")?;
            }
            for p in &self.processes_killed {
                write!(f, "\n  process {p}")?;
            }
            for b in &self.bpf_unregistered {
                write!(f, "\n  BPF controller {b} unregistered")?;
            }
        }
        for n in &self.skipped_live {
            write!(f, "\n  kept {n} (its run is still going)")?;
        }
        Ok(())
    }
}

/// The cclab namespaces that exist now.
pub fn list_namespaces() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(PREFIX))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The cclab namespaces that exist now and were made by process `pid` (tests check their
/// own leftovers with it; another process's are not theirs).
pub fn namespaces_of(pid: u32) -> Vec<String> {
    let mut v = list_namespaces();
    v.retain(|n| owner_pid(n) == Some(pid as i32));
    v
}

/// Host-namespace links whose name starts with `cclab`.
pub fn list_host_links() -> Vec<String> {
    std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with("cclab"))
                .collect()
        })
        .unwrap_or_default()
}

fn pid_alive(pid: i32) -> bool {
    pid > 0 && std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Where a run's owner process is in its life, as `/proc` tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// Running: its lab is in use.
    Running,
    /// Killed and still tearing down (SIGKILL pending): its lab is about to be abandoned.
    Exiting,
    /// No such process, or only its exit status is left (a zombie its parent has not reaped).
    Gone,
}

fn owner_state(pid: i32) -> Owner {
    if !pid_alive(pid) {
        return Owner::Gone;
    }
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return Owner::Gone;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    // Zombie or dead: its threads are gone, only the exit status waits for the parent.
    if field("State:").is_some_and(|s| s.starts_with('Z') || s.starts_with('X')) {
        return Owner::Gone;
    }
    // SIGKILL (signal 9, bit 8 of the masks) pending for the process or one of its threads.
    let sigkill = |v: Option<&str>| {
        v.and_then(|h| u64::from_str_radix(h, 16).ok())
            .is_some_and(|m| m & (1 << (libc::SIGKILL - 1)) != 0)
    };
    if sigkill(field("ShdPnd:")) || sigkill(field("SigPnd:")) {
        return Owner::Exiting;
    }
    Owner::Running
}

/// How long [`clean_stale`] waits for an owner that is exiting to be gone.
const EXIT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether the process that made a lab is still running it: an owner that was killed and is
/// still tearing down (as right after a SIGKILL) is waited for, up to [`EXIT_WAIT`], and then
/// counts as gone.
fn owner_running(pid: i32) -> bool {
    let deadline = std::time::Instant::now() + EXIT_WAIT;
    loop {
        match owner_state(pid) {
            Owner::Running => return true,
            Owner::Gone => return false,
            Owner::Exiting if std::time::Instant::now() >= deadline => return false,
            Owner::Exiting => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
}

/// Owner pid encoded in a namespace name `cclab-<pid>-<n>-<role>`.
fn owner_pid(ns: &str) -> Option<i32> {
    ns.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

pub fn clean_stale() -> Result<CleanReport, KernelError> {
    crate::check_privileges()?;
    let me = std::process::id() as i32;
    let mut rep = CleanReport::default();
    for ns in list_namespaces() {
        let owner = owner_pid(&ns);
        let owner_running = owner.is_some_and(|p| p != me && owner_running(p));
        if is_live(&ns) || owner_running {
            rep.skipped_live.push(ns);
            continue;
        }
        if let Ok(pids) = ip(&["netns", "pids", &ns]) {
            for p in pids
                .split_whitespace()
                .filter_map(|p| p.parse::<i32>().ok())
            {
                if p != me && unsafe { libc::kill(p, libc::SIGKILL) } == 0 {
                    rep.processes_killed.push(p);
                }
            }
        }
        ip(&["netns", "del", &ns])?;
        rep.namespaces_removed.push(ns);
    }
    for l in list_host_links() {
        ip(&["link", "del", &l])?;
        rep.links_removed.push(l);
    }
    rep.bpf_unregistered = cclab_bpf::clean_stale().map_err(KernelError::Setup)?;
    Ok(rep)
}
