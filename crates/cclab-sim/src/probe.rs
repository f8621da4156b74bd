//! The latency probe's two ends (`[[flows]]` groups of `kind = "probe"`): a UDP echo, as
//! irtt or flent's ping. The sender side sends a datagram every interval; the receiver side
//! echoes each one at once; the RTT is the echo's arrival minus the probe's send time. The
//! engine carries the datagrams through the same path elements as the TCP packets.

use cclab_core::Nanos;
use cclab_results::ProbeRecord;

/// One probe group (see [`crate::SimProbe`]) while the run goes.
pub(crate) struct ProbeFlow {
    pub spec: crate::SimProbe,
    /// Each probe sent: its send time, and its RTT once its echo came back.
    sent: Vec<(Nanos, Option<Nanos>)>,
}

impl ProbeFlow {
    pub fn new(spec: crate::SimProbe) -> Self {
        ProbeFlow {
            spec,
            sent: Vec::new(),
        }
    }

    /// When the first probe goes.
    pub fn first_send(&self) -> Nanos {
        self.spec.start_ns
    }

    /// A probe goes now: its number, and when the next one goes.
    pub fn send(&mut self, now: Nanos) -> (u64, Nanos) {
        self.sent.push((now, None));
        (self.sent.len() as u64 - 1, now + self.spec.interval_ns)
    }

    /// The echo of probe `seq` came back at `now`.
    pub fn echoed(&mut self, seq: u64, now: Nanos) {
        if let Some(p) = self.sent.get_mut(seq as usize) {
            p.1 = Some(now.saturating_sub(p.0));
        }
    }

    /// What it measured, in a run that ended at `end_ns`.
    pub fn record(&self, end_ns: Nanos) -> ProbeRecord {
        ProbeRecord {
            end_ns,
            group: self.spec.group,
            interval_ns: self.spec.interval_ns,
            size_bytes: self.spec.size_bytes,
            start_ns: self.spec.start_ns,
            probes: self.sent.clone(),
        }
    }
}
