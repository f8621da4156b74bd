//! `cclab doctor`: what this machine's kernel offers the lab, and which cclab features follow.
//! Probes that need to create something (qdiscs, veth) run inside a throw-away
//! `cclab-<pid>-<n>-doctor` namespace; the host is only read.

use crate::{sys, topo};
use serde::Serialize;
use std::fmt;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct Feature {
    pub name: String,
    pub available: bool,
    pub note: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct DoctorReport {
    pub kernel: String,
    pub root: bool,
    pub cap_net_admin: bool,
    pub cap_sys_admin: bool,
    /// `tcp_available_congestion_control`.
    pub cc_available: Vec<String>,
    /// `tcp_allowed_congestion_control` (what unprivileged sockets may pick).
    pub cc_allowed: Vec<String>,
    /// The host's default (read, never changed).
    pub cc_default: String,
    /// None = could not probe (needs root).
    pub netem: Option<bool>,
    pub fq: Option<bool>,
    /// The tbf qdisc, which emulates the sending host's interface (`hosts.nic_rate`).
    pub tbf: Option<bool>,
    pub veth: Option<bool>,
    pub tun: bool,
    pub iproute2: bool,
    /// BTF at /sys/kernel/btf/vmlinux: BPF struct_ops congestion control can load.
    pub bpf_struct_ops: bool,
    pub features: Vec<Feature>,
}

fn read(p: &str) -> String {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn words(p: &str) -> Vec<String> {
    read(p).split_whitespace().map(String::from).collect()
}

fn has_cmd(c: &str) -> bool {
    std::process::Command::new(c)
        .arg("-V")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Try qdiscs and veth inside a temporary namespace.
fn probe(
    netem: &mut Option<bool>,
    fq: &mut Option<bool>,
    tbf: &mut Option<bool>,
    veth: &mut Option<bool>,
) {
    let (a, _, _) = topo::Topology::names();
    let ns = a.replace("-snd", "-doctor");
    if topo::ip(&["netns", "add", &ns]).is_err() {
        return;
    }
    let _ = topo::ip(&["-n", &ns, "link", "set", "lo", "up"]);
    let q = |kind: &[&str]| {
        let mut args = vec!["-n", ns.as_str(), "qdisc", "replace", "dev", "lo", "root"];
        args.extend_from_slice(kind);
        topo::run_cmd("tc", &args).is_ok()
    };
    *netem = Some(q(&["netem", "delay", "1ms"]));
    *fq = Some(q(&["fq"]));
    *tbf = Some(q(&[
        "tbf", "rate", "1gbit", "burst", "70000", "limit", "16000000",
    ]));
    *veth = Some(
        topo::ip(&[
            "-n", &ns, "link", "add", "d0", "type", "veth", "peer", "name", "d1",
        ])
        .is_ok(),
    );
    let _ = topo::ip(&["netns", "del", &ns]);
}

pub fn doctor() -> DoctorReport {
    let root = sys::is_root();
    let cap_net_admin = sys::has_cap(sys::CAP_NET_ADMIN);
    let cap_sys_admin = sys::has_cap(sys::CAP_SYS_ADMIN);
    let iproute2 = has_cmd("ip") && has_cmd("tc");
    let tun = Path::new("/dev/net/tun").exists();
    let (mut netem, mut fq, mut tbf, mut veth) = (None, None, None, None);
    if (root || (cap_net_admin && cap_sys_admin)) && iproute2 {
        probe(&mut netem, &mut fq, &mut tbf, &mut veth);
    }
    let cc_available = words("/proc/sys/net/ipv4/tcp_available_congestion_control");
    let mut features = Vec::new();
    let lab = (root || (cap_net_admin && cap_sys_admin)) && iproute2 && tun && veth != Some(false);
    features.push(Feature {
        name: "--backend kernel".into(),
        available: lab,
        note: if lab {
            "namespaces + veth + TUN link element: rate, buffer, RTT, loss, ACK loss per segment"
                .into()
        } else if !(root || cap_net_admin) {
            "needs root (CAP_NET_ADMIN + CAP_SYS_ADMIN)".into()
        } else if !iproute2 {
            "needs iproute2 (`ip`, `tc`)".into()
        } else if !tun {
            "needs /dev/net/tun (CONFIG_TUN)".into()
        } else {
            "needs veth (CONFIG_VETH)".into()
        },
    });
    for cc in ["reno", "cubic", "bbr"] {
        let ok = cc_available.iter().any(|c| c == cc);
        features.push(Feature {
            name: format!("kernel {cc}"),
            available: ok,
            note: if ok {
                "selected per socket with TCP_CONGESTION".into()
            } else {
                format!("try `modprobe tcp_{cc}`")
            },
        });
    }
    features.push(Feature {
        name: "netem / fq".into(),
        available: netem == Some(true) || fq == Some(true),
        note: "not needed: the user-space element emulates the path, BBR uses the kernel's internal pacing".into(),
    });
    features.push(Feature {
        name: "hosts.nic_rate".into(),
        available: lab && tbf == Some(true),
        note: if tbf == Some(false) {
            "needs the tbf qdisc (CONFIG_NET_SCH_TBF, `modprobe sch_tbf`)".into()
        } else {
            "a tbf qdisc on the sender's veth emulates the sending interface".into()
        },
    });
    let bpf = Path::new("/sys/kernel/btf/vmlinux").exists();
    let bpf_why = cclab_bpf::not_built()
        .map(str::to_string)
        .or_else(cclab_bpf::unavailable);
    features.push(Feature {
        name: "BPF congestion control (struct_ops)".into(),
        available: bpf_why.is_none(),
        note: bpf_why.clone().unwrap_or_else(|| {
            "users' objects run with cc = \"bpf:PATH\"; registered for a run, host-wide while it lasts".into()
        }),
    });
    for b in cclab_bpf::builtins() {
        let kernel_has = cc_available.iter().any(|c| c == b.name);
        features.push(Feature {
            name: format!("{} (bpf)", b.name),
            available: kernel_has || bpf_why.is_none(),
            note: if kernel_has {
                format!("the kernel has its own {}: cclab uses that", b.name)
            } else {
                format!("{}; {}", b.summary, b.source)
            },
        });
    }
    DoctorReport {
        kernel: read("/proc/sys/kernel/osrelease"),
        root,
        cap_net_admin,
        cap_sys_admin,
        cc_allowed: words("/proc/sys/net/ipv4/tcp_allowed_congestion_control"),
        cc_default: read("/proc/sys/net/ipv4/tcp_congestion_control"),
        cc_available,
        netem,
        fq,
        tbf,
        veth,
        tun,
        iproute2,
        bpf_struct_ops: bpf,
        features,
    }
}

impl fmt::Display for DoctorReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yn = |b: bool| if b { "yes" } else { "no" };
        let opt = |b: Option<bool>| match b {
            Some(true) => "yes",
            Some(false) => "no",
            None => "unknown (probing needs root)",
        };
        writeln!(f, "kernel            {}", self.kernel)?;
        writeln!(
            f,
            "root              {} (CAP_NET_ADMIN {}, CAP_SYS_ADMIN {})",
            yn(self.root),
            yn(self.cap_net_admin),
            yn(self.cap_sys_admin)
        )?;
        writeln!(
            f,
            "congestion ctl    available: {}; allowed unprivileged: {}; host default: {}",
            self.cc_available.join(" "),
            self.cc_allowed.join(" "),
            self.cc_default
        )?;
        writeln!(f, "netem             {}", opt(self.netem))?;
        writeln!(f, "fq                {}", opt(self.fq))?;
        writeln!(f, "tbf               {}", opt(self.tbf))?;
        writeln!(f, "veth              {}", opt(self.veth))?;
        writeln!(f, "TUN               {}", yn(self.tun))?;
        writeln!(f, "iproute2          {}", yn(self.iproute2))?;
        writeln!(
            f,
            "BPF struct_ops    {} (BTF at /sys/kernel/btf/vmlinux)",
            yn(self.bpf_struct_ops)
        )?;
        writeln!(f, "features:")?;
        for ft in &self.features {
            writeln!(
                f,
                "  [{}] {:<36} {}",
                if ft.available { "x" } else { " " },
                ft.name,
                ft.note
            )?;
        }
        Ok(())
    }
}
