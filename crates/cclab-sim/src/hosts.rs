//! The end hosts' time: how long they take to handle packets, and how an idle host's CPU
//! wakes up. Both act between the path and the TCP state machines: a packet that left the
//! path reaches its endpoint when the host gets to it.

use cclab_core::Nanos;

/// Every packet takes the end hosts some time to handle.
///
/// Between the wire and the TCP state machine lie the driver, the softirq that runs the
/// stack (woken by an interrupt, or on another CPU by an IPI), the socket lock, and on the
/// way out the qdisc and driver again. A receiver answers a segment, and a sender answers an
/// ACK, tens of microseconds after it arrived, and now and then hundreds. The model puts
/// both hosts' time on the ACK path, where the kernel's RTT samples see it too: each ACK
/// reaches the sender's TCP `base_ns` plus an exponentially distributed extra of mean
/// `mean_ns` after the path's delay, and never before the ACK sent ahead of it (a host
/// handles its packets in order, so one slow packet holds up the next, and the ACKs behind
/// it arrive as a train). On paths of a few milliseconds and more this only adds its mean to
/// the RTT; below a millisecond it is 10-20% of the RTT, and its spread decides how bursts
/// meet at a small buffer (docs/fidelity.md, item 15).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostLatency {
    /// The least time the two hosts take together, ns.
    pub base_ns: Nanos,
    /// Mean of the exponentially distributed rest, ns.
    pub mean_ns: Nanos,
}

impl HostLatency {
    /// The kernel lab's hosts (`[hosts] latency = "40us"`, `jitter = "40us"` in the
    /// calibration scenarios): 40 us + Exp(40 us), as the link element timed both ends of
    /// the lab (the measurements, and why not a lighter tail: docs/fidelity.md, item 15).
    pub const LAB: HostLatency = HostLatency {
        base_ns: 40_000,
        mean_ns: 40_000,
    };

    /// The hosts' time for one ACK, drawn from `rng`.
    pub fn sample(&self, rng: &mut cclab_path::Rng) -> Nanos {
        let u = 1.0 - rng.next_f64(); // in (0, 1]
        self.base_ns + (-u.ln() * self.mean_ns as f64) as Nanos
    }
}

/// An idle host is slow to answer its first packet.
///
/// A CPU with nothing to do goes to sleep (a C-state on bare metal; `HLT` and a trip through
/// the hypervisor's scheduler in a virtual machine), and the interrupt of the next packet
/// that arrives finds it asleep: that packet is handled `wake_ns` late, together with any
/// that arrived meanwhile. In slow start, every round begins after such a pause: its first
/// ACKs reach the sender as a batch and release their segments back to back, so each round
/// starts with a burst of 4-6 segments where an instant host sends pairs (see
/// docs/fidelity.md). A host that was busy less than `idle_ns` ago is still awake (polling
/// idle loops, the hypervisor's halt polling) and answers at once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostWake {
    /// Idle time after which the CPU sleeps, ns.
    pub idle_ns: Nanos,
    /// Extra time to handle a packet that finds it asleep, ns.
    pub wake_ns: Nanos,
    /// Senders and receivers share one CPU (the kernel lab: receive steering puts both
    /// endpoints' TCP work on one CPU), so either's work keeps it awake.
    pub shared_cpu: bool,
}

impl HostWake {
    /// The kernel lab's hosts (a 2-vCPU KVM guest whose endpoints share one CPU): the sender
    /// answers the first ACK after a slow-start round's pause about 100 us later than the
    /// others; the idle time is bounded, not measured (docs/fidelity.md, item 13). The
    /// default of a scenario's `[hosts]`.
    pub const LAB: HostWake = HostWake {
        idle_ns: cclab_scenario::DEFAULT_WAKE_IDLE_NS,
        wake_ns: cclab_scenario::DEFAULT_WAKE_NS,
        shared_cpu: true,
    };
}

/// Every sender runs on one host CPU and every receiver on another, or both share one
/// ([`HostWake::shared_cpu`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Host {
    Sender = 0,
    Receiver = 1,
}

/// A host CPU's sleep state.
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    /// Last time it did anything.
    last_active: Nanos,
    /// While waking up: when it can handle packets again.
    waking_until: Option<Nanos>,
}

/// The hosts' CPUs under a [`HostWake`] model (none: they never sleep).
#[derive(Clone, Debug)]
pub(crate) struct HostCpus {
    wake: Option<HostWake>,
    cpus: [Cpu; 2],
}

impl HostCpus {
    pub fn new(wake: Option<HostWake>) -> Self {
        HostCpus {
            wake,
            cpus: [Cpu::default(); 2],
        }
    }

    fn cpu(&mut self, w: HostWake, host: Host) -> &mut Cpu {
        &mut self.cpus[if w.shared_cpu { 0 } else { host as usize }]
    }

    /// A packet reached `host` at `now`: `None` if it can handle it now (it is then busy
    /// until now), or the time it will have woken up. Timers (delayed ACK, pacing, RTO)
    /// keep a host awake but are not delayed themselves.
    pub fn asleep(&mut self, host: Host, now: Nanos) -> Option<Nanos> {
        let w = self.wake?;
        let c = self.cpu(w, host);
        if let Some(t) = c.waking_until {
            if now < t {
                return Some(t);
            }
            c.waking_until = None;
        } else if now.saturating_sub(c.last_active) > w.idle_ns && w.wake_ns > 0 {
            c.waking_until = Some(now + w.wake_ns);
            return c.waking_until;
        }
        c.last_active = now;
        None
    }

    /// `host` did something at `now` (a timer fired): its CPU is awake.
    pub fn busy(&mut self, host: Host, now: Nanos) {
        if let Some(w) = self.wake {
            self.cpu(w, host).last_active = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_cpu_answers_late_and_takes_what_came_meanwhile() {
        let mut h = HostCpus::new(Some(HostWake::LAB));
        // Idle since 0: at 1 ms it sleeps, wakes 100 us later.
        assert_eq!(h.asleep(Host::Receiver, 1_000_000), Some(1_100_000));
        // Shared CPU: the sender's packet meanwhile waits too.
        assert_eq!(h.asleep(Host::Sender, 1_050_000), Some(1_100_000));
        assert_eq!(h.asleep(Host::Sender, 1_100_000), None);
        // Busy within the idle time: at once.
        assert_eq!(h.asleep(Host::Receiver, 1_400_000), None);
        // A timer keeps it awake.
        h.busy(Host::Sender, 1_800_000);
        assert_eq!(h.asleep(Host::Receiver, 2_200_000), None);
        assert!(HostCpus::new(None)
            .asleep(Host::Sender, 10_000_000_000)
            .is_none());
    }
}

/// The sending host's network interface, when the scenario gives its rate
/// (`hosts.nic_rate`): it sends what TCP hands it in order, at its rate, and frees each
/// buffer when it is sent, which is when TCP small queues count it gone
/// (`cclab_core::sender`'s `tsq.rs`). The packets themselves go on to the path at once:
/// the interface's rate must exceed the path's (the scenario checks it), so its spacing
/// would be undone at the bottleneck's queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Nic {
    /// The interface's rate, bits per second of Ethernet frames.
    pub rate_bps: f64,
    /// When the interface has sent everything handed to it so far.
    free_at: Nanos,
}

/// An Ethernet header, bytes: the frame the interface sends (and the lab's qdisc counts)
/// is the IP packet and this.
const ETH_HEADER: u64 = 14;

impl Nic {
    pub fn new(rate_bps: f64) -> Self {
        Nic {
            rate_bps,
            free_at: 0,
        }
    }

    /// Hand the interface `packets` IP packets of `ip_bytes` together at `now`; returns
    /// when it will have sent them.
    pub fn transmit(&mut self, now: Nanos, packets: u64, ip_bytes: u64) -> Nanos {
        let bits = ((ip_bytes + packets * ETH_HEADER) * 8) as f64;
        let ns = (bits * 1e9 / self.rate_bps).ceil() as Nanos;
        self.free_at = self.free_at.max(now) + ns;
        self.free_at
    }
}
