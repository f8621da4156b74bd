//! Simulator cost as deterministic counts, on every `cclab bench` workload: engine events
//! per data packet through the bottleneck, and sender wake-ups that did nothing. Wall time
//! is checked by `cclab bench`; these counts are what it rests on, and they do not depend on
//! the machine.
//!
//! The bound: per data packet the engine needs one bottleneck departure, one arrival at the
//! receiver (fewer with GRO, which takes a burst at once), half an ACK arrival at the sender
//! (delayed ACKs cover two segments) and a share of the sender's pacing releases and
//! receiver timers (one per TSO burst or less): about 2.5 to 3. The bench workloads measured
//! 2.1 (1 Gbit/s and faster, GRO on) to 2.6 (100 Mbit/s, each segment delivered alone). A
//! sender that asks to be woken when it will not send (the wake-up storm of issue #12 re-armed
//! its pacing timer every nanosecond while TSO deferral held its data: 3 M events for 0.03 M
//! packets per simulated second) breaks the bound at once, and so does a second event per
//! packet anywhere on the path.

use cclab::bench;
use cclab_sim::Simulation;

const MAX_EVENTS_PER_PACKET: f64 = 3.5;

/// A BBRv3 case may cost at most this many times BBRv1's events per packet on the same
/// workload (its model does more per ACK, but must not add events: no extra wake-ups).
const MAX_BBR3_OVER_BBR: f64 = 1.5;

#[test]
fn bench_workloads_stay_within_their_event_budget() {
    let mut per_case = Vec::new();
    for case in bench::cases() {
        let mut sim = Simulation::new(case.cfg.clone());
        sim.run_to_end();
        let (events, packets, idle) = (
            sim.events(),
            sim.packets_forwarded(),
            sim.idle_sender_wakeups(),
        );
        let per_packet = events as f64 / packets.max(1) as f64;
        eprintln!("{:<32} {events} events, {packets} packets, {per_packet:.2} per packet, {idle} idle sender wake-ups", case.name);
        assert!(
            packets > 100_000,
            "{}: only {packets} packets crossed the bottleneck",
            case.name
        );
        assert!(
            per_packet <= MAX_EVENTS_PER_PACKET,
            "{}: {per_packet:.2} engine events per data packet (bound {MAX_EVENTS_PER_PACKET})",
            case.name
        );
        assert_eq!(
            idle, 0,
            "{}: senders were woken {idle} times with nothing to do",
            case.name
        );
        per_case.push((case.name, per_packet));
    }
    // Each "bbr3 ..." case against the "bbr ..." case of the same workload.
    let mut compared = 0;
    for (name, v3) in &per_case {
        let Some(workload) = name.strip_prefix("bbr3 ") else {
            continue;
        };
        let v1 = per_case
            .iter()
            .find(|(n, _)| n.strip_prefix("bbr ") == Some(workload))
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("no bbr case for {name}"));
        eprintln!(
            "{name}: {v3:.2} events per packet, bbr {v1:.2} ({:.2}x)",
            v3 / v1
        );
        assert!(
            *v3 <= MAX_BBR3_OVER_BBR * v1,
            "{name}: {v3:.2} events per packet, {:.2}x bbr's {v1:.2}",
            v3 / v1
        );
        compared += 1;
    }
    assert!(compared > 0, "no bbr3 bench case");
}
