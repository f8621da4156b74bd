//! Simulator cost as deterministic counts, on every `cclab bench` workload: engine events
//! per data packet through the bottleneck, and sender wake-ups that did nothing. Wall time
//! is checked by `cclab bench`; these counts are what it rests on, and they do not depend on
//! the machine.
//!
//! The bound: per data packet the engine needs one arrival at the receiver (fewer with GRO,
//! which takes a burst at once), half an ACK arrival at the sender (delayed ACKs cover two
//! segments) and a share of the sender's pacing releases and receiver timers (one per TSO
//! burst or less). The paths wake the engine only when a packet leaves them
//! (`Chain::next_output`): a departure from the bottleneck into the propagation delay is no
//! event of its own. The bench workloads measured 1.06 (1 Gbit/s and faster, GRO on) to 1.9
//! (1000 flows under FQ-CoDel); before the paths woke only for their outputs, 2.1 to 2.9. A
//! sender that asks to be woken when it will not send (the wake-up storm of issue #12
//! re-armed its pacing timer every nanosecond while TSO deferral held its data: 3 M events
//! for 0.03 M packets per simulated second) breaks the bound at once, and so does a second
//! event per packet anywhere on the path.

mod common;
use cclab::bench;
use cclab_sim::Simulation;

const MAX_EVENTS_PER_PACKET: f64 = 2.5;

/// A BBRv3 or DCTCP case may cost at most this many times BBRv1's events per packet on the
/// same workload (their models do more per ACK, but must not add events: no extra wake-ups).
const MAX_OVER_BBR: f64 = 1.5;

#[test]
fn bench_workloads_stay_within_their_event_budget() {
    let mut per_case = Vec::new();
    for case in bench::cases() {
        let (sim, _) = bench::run_case(&case);
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
    // Each "bbr3 ..." and "dctcp ..." case against BBRv1 on the same workload (the case's
    // configuration with its controllers swapped for bbr).
    let mut compared = Vec::new();
    for case in bench::cases() {
        let Some(cc) = ["bbr3", "dctcp"]
            .into_iter()
            .find(|cc| case.name.starts_with(&format!("{cc} ")))
        else {
            continue;
        };
        let per_packet = |cfg: &cclab_sim::SimConfig| {
            let mut sim = Simulation::new(cfg.clone());
            sim.run_to_end();
            sim.events() as f64 / sim.packets_forwarded().max(1) as f64
        };
        let mine = per_case
            .iter()
            .find(|(n, _)| *n == case.name)
            .map(|(_, v)| *v)
            .expect("measured above");
        let mut v1 = case.cfg.clone();
        for f in &mut v1.flows {
            f.cc = cclab_core::cc::by_name("bbr").unwrap();
        }
        let bbr = per_packet(&v1);
        eprintln!(
            "{}: {mine:.2} events per packet, bbr on its workload {bbr:.2} ({:.2}x)",
            case.name,
            mine / bbr
        );
        assert!(
            mine <= MAX_OVER_BBR * bbr,
            "{}: {mine:.2} events per packet, {:.2}x bbr's {bbr:.2}",
            case.name,
            mine / bbr
        );
        compared.push(cc);
    }
    assert!(
        compared.contains(&"bbr3") && compared.contains(&"dctcp"),
        "bench cases for bbr3 and dctcp: {compared:?}"
    );
}

/// Instructions, counted by valgrind (`cclab bench --instructions`): the same count on any
/// machine however busy, where wall time on a shared one varied by 1.7x within minutes. Three
/// workloads, lossless, lossy and stepped (~35 s under valgrind): each within its budget per packet,
/// a quarter above what it measured when the budget was set; and the stepped case (the
/// simulator's side of a Gymnasium step, issue #34) per step as well. Before the range set and the
/// paths' wake-ups were reworked (2026-11-27), BBR on 1 Gbit/s x 100 ms x 1% took 1.9x the
/// instructions it takes now (the `quick` example, 3 s: 746 M against 396 M).
#[test]
fn bench_workloads_stay_within_their_instruction_budget() {
    if bench::valgrind().is_none() {
        println!(
            "SKIP: bench_workloads_stay_within_their_instruction_budget: valgrind is not on PATH"
        );
        return;
    }
    for case in [
        "bbr 100mbit 100ms 60s",
        "bbr 1gbit 100ms 1% 10s",
        "external 100mbit 20ms 10ms steps 20s",
    ] {
        let v: serde_json::Value = common::json_stdout(common::cclab().args([
            "bench",
            "--instructions",
            "--case",
            case,
            "--json",
        ]));
        let m = &v.as_array().expect("an array")[0];
        assert_eq!(m["name"], case);
        let (per, budget) = (
            m["instructions_per_packet"].as_f64().unwrap(),
            m["budget_per_packet"].as_f64().unwrap(),
        );
        eprintln!(
            "{case}: {} instructions, {per:.0} per packet (budget {budget:.0})",
            m["instructions"]
        );
        assert!(m["packets"].as_u64().unwrap() > 100_000, "{m}");
        assert!(per > 500.0, "implausibly few instructions: {m}");
        assert!(
            per <= budget,
            "{case}: {per:.0} instructions per packet, budget {budget:.0}"
        );
        // The stepped case (the simulator's side of a Gymnasium step): per decision too.
        if let Some(steps) = m.get("steps") {
            let (per, budget) = (
                m["instructions_per_step"].as_f64().unwrap(),
                m["budget_per_step"].as_f64().unwrap(),
            );
            eprintln!("{case}: {steps} steps, {per:.0} instructions per step (budget {budget:.0})");
            assert!(steps.as_u64().unwrap() >= 1900, "{m}");
            assert!(
                per <= budget,
                "{case}: {per:.0} instructions per step, budget {budget:.0}"
            );
        }
    }
    // A plain case has no step figures.
    let v: serde_json::Value = common::json_stdout(common::cclab().args([
        "bench",
        "--case",
        "bbr 100mbit 100ms 60s",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--json",
    ]));
    assert!(v[0].get("steps").is_none(), "{v}");
}
