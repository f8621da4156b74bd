//! One combination of the sender settings `advise` varies, and what it takes to apply it on
//! a Linux server: the commands where a stock kernel can run it, a caveat where it cannot.

use serde::Serialize;

/// One combination of sender settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Candidate {
    pub cc: String,
    pub init_cwnd: u32,
    pub pacing: bool,
    /// `tcp_wmem` triple.
    pub tcp_wmem: [u64; 3],
    /// Route `rto_min`, ms.
    pub rto_min_ms: u64,
}

/// What a stock Linux kernel needs to run a controller.
struct KernelNeeds {
    cc: &'static str,
    /// The module to load first (`None`: built into every kernel).
    module: Option<&'static str>,
    /// Why a stock kernel cannot run it, and what can (`None`: mainline has it).
    missing: Option<&'static str>,
    /// What else it needs, on the path or on the client.
    also: Option<&'static str>,
}

const KERNEL: &[KernelNeeds] = &[
    KernelNeeds {
        cc: "reno",
        module: None,
        missing: None,
        also: None,
    },
    KernelNeeds {
        cc: "cubic",
        module: None,
        missing: None,
        also: None,
    },
    KernelNeeds {
        cc: "bbr",
        module: Some("tcp_bbr"),
        missing: None,
        also: None,
    },
    KernelNeeds {
        cc: "bbr3",
        module: None,
        missing: Some(
            "a stock kernel has no bbr3: it needs Google's BBRv3 kernel (github.com/google/bbr, \
             branch v3, where v3 registers as \"bbr\") or cclab's BPF bbr3 (bpf/bbr3.bpf.c, \
             loaded as a struct_ops controller: see docs/kernel.md)",
        ),
        also: None,
    },
    KernelNeeds {
        cc: "dctcp",
        module: Some("tcp_dctcp"),
        missing: None,
        also: Some(
            "DCTCP needs ECN end to end: CE marking at the bottleneck, and on the client \
             (receiver side) `sysctl -w net.ipv4.tcp_ecn=1`; it is meant for data centres, not \
             the Internet",
        ),
    },
    KernelNeeds {
        cc: "prague",
        module: None,
        missing: Some(
            "mainline Linux has no prague: it needs the L4S team's kernel \
             (github.com/L4STeam/linux), an L4S (DualPI2) bottleneck, and AccECN on the client",
        ),
        also: None,
    },
];

fn needs(cc: &str) -> Option<&'static KernelNeeds> {
    KERNEL.iter().find(|k| k.cc == cc)
}

impl Candidate {
    pub(super) fn overrides(&self) -> Vec<String> {
        let w = self.tcp_wmem;
        vec![
            format!("flows.cc={}", self.cc),
            format!("flows.init_cwnd={}", self.init_cwnd),
            format!("hosts.pacing={}", self.pacing),
            format!("hosts.tcp_wmem={} {} {}", w[0], w[1], w[2]),
            format!("hosts.rto_min={}ms", self.rto_min_ms),
        ]
    }

    pub fn label(&self) -> String {
        format!(
            "{:<6} iw {:<3} {:<8} wmem {:<8} rto_min {:>3}ms",
            self.cc,
            self.init_cwnd,
            if self.pacing { "paced" } else { "unpaced" },
            cclab_report::units::size(self.tcp_wmem[2] as f64),
            self.rto_min_ms
        )
    }

    /// How many settings differ from `base` (ties rank the simpler change first).
    pub(super) fn changes(&self, base: &Candidate) -> usize {
        [
            self.cc != base.cc,
            self.init_cwnd != base.init_cwnd,
            self.pacing != base.pacing,
            self.tcp_wmem != base.tcp_wmem,
            self.rto_min_ms != base.rto_min_ms,
        ]
        .iter()
        .filter(|&&x| x)
        .count()
    }

    /// The commands that apply this candidate on a Linux server (as root), for what differs
    /// from `base`. A controller a stock kernel lacks gets no command: see
    /// [`Candidate::caveats`].
    pub fn commands(&self, base: &Candidate) -> Vec<String> {
        let mut c = Vec::new();
        if self.cc != base.cc {
            match needs(&self.cc) {
                Some(k) if k.missing.is_some() => {}
                Some(KernelNeeds {
                    module: Some(m), ..
                }) => c.push(format!(
                    "modprobe {m} && sysctl -w net.ipv4.tcp_congestion_control={}",
                    self.cc
                )),
                _ => c.push(format!(
                    "sysctl -w net.ipv4.tcp_congestion_control={}",
                    self.cc
                )),
            }
        }
        if self.tcp_wmem != base.tcp_wmem {
            let w = self.tcp_wmem;
            c.push(format!(
                "sysctl -w net.ipv4.tcp_wmem=\"{} {} {}\"",
                w[0], w[1], w[2]
            ));
        }
        let mut route = Vec::new();
        if self.init_cwnd != base.init_cwnd {
            route.push(format!("initcwnd {}", self.init_cwnd));
        }
        if self.rto_min_ms != base.rto_min_ms {
            route.push(format!("rto_min {}ms", self.rto_min_ms));
        }
        if !route.is_empty() {
            c.push(format!(
                "ip route change $(ip -4 route show default | head -n1) {}",
                route.join(" ")
            ));
        }
        if self.pacing && !base.pacing && !self.cc.starts_with("bbr") {
            c.push("tc qdisc replace dev DEV root fq    # DEV: the interface toward the clients; fq paces every flow".into());
        }
        c
    }

    /// What the commands cannot do: a controller a stock kernel lacks (and what runs it),
    /// or what it needs beyond the server (on the path, or on the client's side).
    pub fn caveats(&self, base: &Candidate) -> Vec<String> {
        if self.cc == base.cc {
            return Vec::new();
        }
        needs(&self.cc)
            .map(|k| {
                k.missing
                    .iter()
                    .chain(&k.also)
                    .map(|s| s.to_string())
                    .collect()
            })
            .unwrap_or_else(|| {
                vec![format!(
                    "{}: cclab does not know what a kernel needs to run it",
                    self.cc
                )]
            })
    }

    /// Whether a stock mainline kernel can run this candidate's controller.
    pub fn stock_kernel(&self) -> bool {
        needs(&self.cc).is_some_and(|k| k.missing.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Candidate {
        Candidate {
            cc: "cubic".into(),
            init_cwnd: 10,
            pacing: false,
            tcp_wmem: [4096, 16384, 4194304],
            rto_min_ms: 200,
        }
    }

    #[test]
    fn commands_name_only_what_changes() {
        let base = base();
        assert!(base.commands(&base).is_empty());
        assert!(base.caveats(&base).is_empty());
        let c = Candidate {
            cc: "bbr".into(),
            init_cwnd: 20,
            rto_min_ms: 50,
            ..base.clone()
        };
        let cmds = c.commands(&base);
        assert_eq!(cmds.len(), 2, "{cmds:?}");
        assert_eq!(
            cmds[0],
            "modprobe tcp_bbr && sysctl -w net.ipv4.tcp_congestion_control=bbr"
        );
        assert!(cmds[1].contains("initcwnd 20 rto_min 50ms"));
        assert!(c.caveats(&base).is_empty());
    }

    /// bbr3 and prague get no sysctl a stock kernel would refuse, but a caveat saying what
    /// runs them; DCTCP's ECN on the client is named as the client's.
    #[test]
    fn commands_only_for_what_a_stock_kernel_runs() {
        let base = base();
        let v3 = Candidate {
            cc: "bbr3".into(),
            init_cwnd: 40,
            ..base.clone()
        };
        let cmds = v3.commands(&base);
        assert!(
            cmds.iter().all(|c| !c.contains("tcp_congestion_control")),
            "{cmds:?}"
        );
        assert!(cmds.iter().any(|c| c.contains("initcwnd 40")), "{cmds:?}");
        let cav = v3.caveats(&base).join(" ");
        assert!(cav.contains("Google's BBRv3 kernel"), "{cav}");
        assert!(cav.contains("bpf/bbr3.bpf.c"), "{cav}");
        assert!(!v3.stock_kernel());
        let prague = Candidate {
            cc: "prague".into(),
            ..base.clone()
        };
        assert!(prague.commands(&base).is_empty());
        assert!(prague.caveats(&base)[0].contains("L4S"));
        let dctcp = Candidate {
            cc: "dctcp".into(),
            ..base.clone()
        };
        assert!(dctcp.stock_kernel());
        assert!(dctcp.commands(&base)[0].starts_with("modprobe tcp_dctcp"));
        assert!(dctcp.caveats(&base)[0].contains("on the client"));
    }

    #[test]
    fn every_simulator_controller_has_kernel_needs() {
        let external = cclab_core::cc::external::CONTROLLER.name;
        for c in cclab_core::cc::CONTROLLERS
            .iter()
            .filter(|c| c.name != external)
        {
            assert!(needs(c.name).is_some(), "{} has no KERNEL entry", c.name);
        }
    }
}
