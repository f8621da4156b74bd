//! The congestion controls a kernel run's flows get: the kernel's own, or BPF controllers
//! registered for the run (`cclab_bpf`).
//!
//! A flow's `cc` names one of:
//! - a controller the kernel has now (`tcp_available_congestion_control`): used as it is;
//! - a controller built from `bpf/` that the kernel lacks (`dctcp`, `bbr3`, `vegas` on a
//!   stock kernel): registered for the run, never over a name the kernel has;
//! - `bpf:PATH`, a user's struct_ops object: registered for the run under the name the
//!   object gives, which the flow's results carry.
//!
//! Registrations last as long as the returned [`Controllers`]: the run holds it past the
//! lab's teardown, and dropping it (success, error, SIGINT, panic) unregisters them.

use crate::KernelError;
use cclab_bpf::{Registration, Source};
use cclab_scenario::{CcCatalog, CcEntry, BPF_PREFIX};
use serde_json::{json, Value};

/// The run's BPF registrations and each scenario name's socket name.
#[derive(Default)]
pub struct Controllers {
    regs: Vec<(String, Registration)>,
}

impl Controllers {
    /// The name to give `TCP_CONGESTION` for a flow whose scenario says `cc`.
    pub fn socket_name<'a>(&'a self, cc: &'a str) -> &'a str {
        self.regs
            .iter()
            .find(|(asked, _)| asked == cc)
            .map_or(cc, |(_, r)| r.name())
    }

    /// What was registered, for the results (`kernel.bpf`).
    pub fn describe(&self) -> Value {
        Value::Array(
            self.regs
                .iter()
                .map(|(asked, r)| {
                    json!({
                        "cc": r.name(),
                        "asked": asked,
                        "object": r.source(),
                        "sha256": r.sha256(),
                        "held_by": match r.hold() { cclab_bpf::Hold::Link => "link", cclab_bpf::Hold::Map => "map" },
                    })
                })
                .collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.regs.is_empty()
    }
}

/// Registers what the flows' controllers `ccs` need beyond the kernel's own.
pub fn prepare(ccs: &[&str]) -> Result<Controllers, KernelError> {
    let mut out = Controllers::default();
    for &cc in ccs {
        if out.regs.iter().any(|(a, _)| a == cc) || crate::available_ccs().iter().any(|a| a == cc) {
            continue;
        }
        let source = match (cc.strip_prefix(BPF_PREFIX), cclab_bpf::builtin(cc)) {
            (Some(path), _) => Source::File(path.into()),
            (None, Some(b)) => Source::Builtin(b),
            (None, None) => {
                return Err(KernelError::CcUnavailable {
                    cc: cc.to_string(),
                    available: crate::available_ccs(),
                })
            }
        };
        if let Some(why) = cclab_bpf::unavailable() {
            return Err(KernelError::Unsupported(format!(
                "\"{cc}\" is a BPF controller, and {why}; --backend sim runs it without"
            )));
        }
        let reg = Registration::register(&source).map_err(|e| KernelError::Bpf(e.to_string()))?;
        out.regs.push((cc.to_string(), reg));
    }
    Ok(out)
}

/// Whether the receiving end of a flow of `cc` runs `cc` too, as both hosts
/// of a deployment do where the receiver half matters: a controller that wants each CE
/// change echoed at once (DCTCP's `dctcp_ece_ack_update()`) or needs Accurate ECN (Prague:
/// 6.18 accepts AccECN only for a listener whose controller needs it); the simulator's
/// model says which, and the flow negotiates ECN (`ecn = true`, or a controller that needs
/// it, as the simulator decides: DCTCP and Prague negotiate whatever `ecn` says); and a
/// user's BPF object, whose receiver half cclab cannot know. Otherwise the receiver keeps
/// the namespace's default, whose only part in the flow is the RFC 3168 echo every Linux
/// controller shares.
///
/// A Prague sender whose receiver kept the default would get a classic-ECN SYN-ACK, and
/// 6.18 then turns ECN off for it (`TCP_CONG_NO_FALLBACK_RFC3168`) while its data stays
/// ECN-capable: a flow the L queue marks and that never hears of it.
pub fn receiver_cc(cc: &str, ecn: bool) -> bool {
    cc.starts_with(BPF_PREFIX)
        || cclab_core::cc::find(cc).is_some_and(|c| {
            let cc = (c.build)(&c.defaults(), 0);
            (ecn || cc.needs_ecn()) && (cc.wants_ce_events() || cc.needs_accecn())
        })
}

/// Whether `cc` negotiates Accurate ECN on its own (`TCP_CONG_NEEDS_ACCECN`), as the
/// simulator's model of it says.
pub fn negotiates_accecn(cc: &str) -> bool {
    cclab_core::cc::find(cc).is_some_and(|c| (c.build)(&c.defaults(), 0).needs_accecn())
}

/// Whether flows of `cc` send ECT(1) (L4S), as the simulator's model of it says: the lab's
/// element then stands in ECT(1) for the ECT(0) Linux 6.18 puts on their data
/// (`element::ElementConfig::group_ect1`).
pub fn sends_ect1(cc: &str) -> bool {
    cclab_core::cc::find(cc).is_some_and(|c| (c.build)(&c.defaults(), 0).ect1())
}

/// Why controller `cc` cannot run in the lab here, or `None` (tests print it as SKIP).
pub fn unavailable(cc: &str) -> Option<String> {
    if crate::available_ccs().iter().any(|a| a == cc) {
        return None;
    }
    if cclab_bpf::builtin(cc).is_none() {
        return Some(match cclab_bpf::not_built() {
            Some(why) => format!("kernel has no {cc} and no BPF controllers were built: {why}"),
            None => format!(
                "kernel has no {cc} (has: {})",
                crate::available_ccs().join(" ")
            ),
        });
    }
    cclab_bpf::unavailable().map(|why| format!("{cc} is a BPF controller and {why}"))
}

/// The kernel backend's controllers: the kernel's own, then the BPF ones it lacks (listed
/// as `dctcp (bpf)`), and users' objects by `bpf:PATH`.
pub fn catalog() -> CcCatalog {
    let avail = crate::available_ccs();
    let mut cat = CcCatalog::names("this kernel", &avail);
    for b in cclab_bpf::builtins() {
        if !avail.iter().any(|a| a == b.name) {
            let mut e = CcCatalog::names("", &[b.name.to_string()])
                .entries
                .remove(0);
            e.via = Some("bpf".into());
            cat.entries.push(e);
        }
    }
    cat.bpf_objects = true;
    cat
}

/// The entry of the BPF controller `e`, if it is one.
pub fn bpf_summary(e: &CcEntry) -> Option<&'static str> {
    e.via
        .as_deref()
        .filter(|v| *v == "bpf")
        .and_then(|_| cclab_bpf::builtin(&e.name))
        .map(|b| b.summary)
}

#[cfg(test)]
mod tests {
    use super::receiver_cc;

    #[test]
    fn the_receiver_runs_the_controller_where_its_receiver_half_matters() {
        // Prague and DCTCP negotiate ECN whatever `ecn` says (as in the simulator), and
        // their receivers must run them: AccECN for Prague, the precise echo for DCTCP.
        for ecn in [false, true] {
            assert!(receiver_cc("prague", ecn), "prague, ecn = {ecn}");
            assert!(receiver_cc("dctcp", ecn), "dctcp, ecn = {ecn}");
            assert!(!receiver_cc("cubic", ecn), "cubic, ecn = {ecn}");
        }
        assert!(receiver_cc("bpf:/x/y.bpf.o", false));
    }
}
