//! `cclab lab up`: a scenario's path held open in the kernel lab for any traffic. The lab's
//! sender and receiver namespaces are joined through cclab's link element running the
//! scenario's `[link]` (its hosts' settings applied in both namespaces, a receiver address per
//! flow group), until Ctrl-C or a time bound; then everything is removed. Whatever runs in the
//! two namespaces (iperf3, wget against a web server, `cclab serve` and `cclab perf`) crosses
//! the path `cclab run --backend kernel` would run, on a kernel without netem.

use crate::runner::{self, Error};
use cclab_kernel::{addr, lab, lab_unavailable, KernelOptions};
use cclab_results::{ResultsDoc, RunResult};
use cclab_sys as sys;
use serde::Serialize;
use std::time::{Duration, Instant};

/// Longest a lab may be held (`--for`).
pub const MAX_HOLD: Duration = Duration::from_secs(24 * 3600);

/// `--for`: cclab's times (`90s`, `500ms`) or whole minutes and hours (`30min`, `2h`).
pub fn parse_hold(text: &str) -> Result<Duration, Error> {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix("min") {
        (n, 60)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600)
    } else {
        return cclab_scenario::units::parse_time(t)
            .map(Duration::from_nanos)
            .map_err(|m| Error::new(format!("--for: {m} (or minutes and hours: 30min, 2h)")));
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .map(Duration::from_secs)
        .ok_or_else(|| {
            Error::new(format!(
                "--for: \"{t}\" is not a time (e.g. 30min, 2h, 90s)"
            ))
        })
}

/// One flow group's receiver address.
#[derive(Clone, Debug, Serialize)]
pub struct ReceiverAddr {
    pub group: usize,
    pub addr: String,
    /// The group's RTT beyond the link's (`flows.rtt_extra`), ms.
    pub extra_rtt_ms: f64,
}

/// What is up, for a person or a script: the namespaces to enter and their addresses.
#[derive(Clone, Debug, Serialize)]
pub struct LabInfo {
    pub scenario: String,
    /// The path in one line (as `cclab run` prints it).
    pub path: String,
    pub sender_ns: String,
    pub sender_addr: String,
    pub receiver_ns: String,
    pub receivers: Vec<ReceiverAddr>,
    /// How long it stays up at most, s.
    pub hold_s: f64,
    /// The CPU the element has to itself, and the others, where traffic belongs (none on a
    /// single CPU).
    pub element_cpus: Vec<usize>,
    pub traffic_cpus: Vec<usize>,
    /// The scenario's host settings Linux takes per socket: the traffic's own program must
    /// set them (`cclab_kernel::per_socket_settings`).
    pub per_socket: Vec<String>,
}

/// What crossed the path while it was up.
#[derive(Clone, Debug, Serialize)]
pub struct LabSummary {
    pub held_s: f64,
    /// Data packets that entered the path, and those delivered.
    pub data_pkts_in: u64,
    pub forwarded_pkts: u64,
    pub forwarded_bytes: u64,
    pub drops_buffer: u64,
    pub drops_random: u64,
    pub drops_ack: u64,
    pub queue_delay_p50_ms: Option<f64>,
    pub queue_delay_p99_ms: Option<f64>,
    /// Times the element released packets late (a busy machine).
    pub element_stalls: u64,
    /// `SIGINT` or `SIGTERM` when a signal ended it, else none (the time bound did).
    pub ended_by: Option<String>,
}

/// Hold the path of `path` (a scenario file, `overrides` applied) open for at most `hold`;
/// `ready` is called once the lab is up.
pub fn up(
    path: &str,
    overrides: &[String],
    hold: Duration,
    ready: impl FnOnce(&LabInfo),
) -> Result<LabSummary, Error> {
    if hold.is_zero() || hold > MAX_HOLD {
        return Err(Error::new(format!(
            "--for must be more than 0 and at most {} h",
            MAX_HOLD.as_secs() / 3600
        )));
    }
    let plan = runner::plan_path(path, overrides)?;
    let links = plan.distinct_links();
    if links.len() > 1 {
        let swept: Vec<String> = plan.points[0]
            .params
            .keys()
            .filter(|k| k.starts_with("link."))
            .cloned()
            .collect();
        return Err(Error::new(format!(
            "{path} describes {} paths (a matrix over {}): pick one with --set, e.g. --set {}=VALUE",
            links.len(),
            swept.join(", "),
            swept.first().map_or("link.loss", String::as_str)
        )));
    }
    let sc = &plan.points[0].scenario;
    if let Some(why) = cclab_kernel::scenario_unsupported(sc) {
        return Err(Error::new(why));
    }
    if let Some(why) = lab_unavailable(&[]) {
        return Err(Error::new(format!(
            "cclab lab up needs the kernel lab: {why} (`cclab doctor` shows what is missing)"
        )));
    }
    if sc.flows.len() > addr::MAX_GROUPS {
        return Err(Error::new(format!(
            "{path}: {} flow groups; the lab has a receiver address for at most {}",
            sc.flows.len(),
            addr::MAX_GROUPS
        )));
    }
    let doc = ResultsDoc {
        runs: vec![RunResult {
            resolved: sc.resolved(),
            ..Default::default()
        }],
        source: Some(plan.source.clone()),
        ..Default::default()
    };
    let path_line = cclab_report::describe::path_line(&doc)
        .unwrap_or_default()
        .trim_start_matches("path: ")
        .to_string();

    let _signals = sys::SignalGuard::install();
    let mut the_lab = lab::Lab::create(
        cclab_kernel::lab_config(sc, &KernelOptions::default(), Vec::new()),
        None,
    )?;
    let start = Instant::now();
    the_lab
        .element()
        .count_from
        .store(sys::now_ns(), std::sync::atomic::Ordering::SeqCst);
    let (element_cpus, traffic_cpus) = sys::placement().unwrap_or_default();
    let info = LabInfo {
        scenario: plan.name.clone(),
        path: path_line,
        sender_ns: the_lab.sender_ns().to_string(),
        sender_addr: addr::fmt(addr::SENDER),
        receiver_ns: the_lab.receiver_ns().to_string(),
        receivers: sc
            .flows
            .iter()
            .enumerate()
            .map(|(g, f)| ReceiverAddr {
                group: g,
                addr: addr::fmt(addr::receiver(g)),
                extra_rtt_ms: f.rtt_extra_ns as f64 / 1e6,
            })
            .collect(),
        hold_s: hold.as_secs_f64(),
        element_cpus,
        traffic_cpus,
        per_socket: cclab_kernel::per_socket_settings(sc),
    };
    ready(&info);
    let ended_by = loop {
        if let Some(sig) = sys::interrupted() {
            break Some(sys::signal_name(sig).to_string());
        }
        let left = hold.saturating_sub(start.elapsed());
        if left.is_zero() {
            break None;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    };
    let held_s = start.elapsed().as_secs_f64();
    let stats = the_lab.stop()?;
    drop(the_lab);
    let ms = |q: f64| stats.queue_delay.quantile(q).map(|ns| ns as f64 / 1e6);
    Ok(LabSummary {
        held_s,
        data_pkts_in: stats.data_pkts_in,
        forwarded_pkts: stats.forwarded_pkts,
        forwarded_bytes: stats.forwarded_bytes,
        drops_buffer: stats.drops_buffer,
        drops_random: stats.drops_random,
        drops_ack: stats.drops_ack,
        queue_delay_p50_ms: ms(0.5),
        queue_delay_p99_ms: ms(0.99),
        element_stalls: stats.stalls,
        ended_by,
    })
}

/// The lines a person reads once the lab is up: what to enter and where to connect.
pub fn render_info(i: &LabInfo) -> String {
    let mut s = format!(
        "cclab lab up: {} is up for at most {} (Ctrl-C ends it and removes the lab)\n  path: {}\n",
        i.scenario,
        human_duration(i.hold_s),
        i.path
    );
    s += &format!(
        "  sender    namespace {:<18} address {}\n",
        i.sender_ns, i.sender_addr
    );
    for r in &i.receivers {
        s += &format!(
            "  receiver  namespace {:<18} address {}{}\n",
            i.receiver_ns,
            r.addr,
            if r.extra_rtt_ms > 0.0 {
                format!(" (flow group {}: RTT + {} ms)", r.group, r.extra_rtt_ms)
            } else if i.receivers.len() > 1 {
                format!(" (flow group {})", r.group)
            } else {
                String::new()
            }
        );
    }
    if !i.element_cpus.is_empty() {
        let list = |v: &[usize]| {
            v.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        s += &format!(
            "  the element has CPU {} to itself: run traffic on the others (taskset -c {} ...), as cclab's own runs do\n",
            list(&i.element_cpus),
            list(&i.traffic_cpus)
        );
    }
    for n in &i.per_socket {
        s += &format!("  not applied to your traffic: {n}\n");
    }
    let rcv = &i.receivers[0].addr;
    let (sn, rn, sa) = (&i.sender_ns, &i.receiver_ns, &i.sender_addr);
    s += &format!(
        "  e.g.  ip netns exec {sn} cclab serve --listen {sa}:5301 --key-file KEY\n        ip netns exec {rn} cclab perf {sa} --key-file KEY --cc cubic,bbr    (a download: the sender namespace sends)\n        ip netns exec {rn} iperf3 -s -B {rcv}   and   ip netns exec {sn} iperf3 -c {rcv} -C bbr\n"
    );
    s
}

/// The closing line: what crossed the path.
pub fn render_summary(s: &LabSummary) -> String {
    let q = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.2} ms"));
    let mut t = format!(
        "cclab lab up: down after {} ({}); {} data packets in, {} delivered ({:.1} MB), drops {} buffer / {} random / {} ACK, queue delay p50 {} p99 {}",
        human_duration(s.held_s),
        s.ended_by.as_deref().unwrap_or("its time was up"),
        s.data_pkts_in,
        s.forwarded_pkts,
        s.forwarded_bytes as f64 / 1e6,
        s.drops_buffer,
        s.drops_random,
        s.drops_ack,
        q(s.queue_delay_p50_ms),
        q(s.queue_delay_p99_ms),
    );
    if s.element_stalls > 0 {
        t += &format!(
            "; the element stalled {} times (a busy machine: packets bunched)",
            s.element_stalls
        );
    }
    t.push('\n');
    t
}

fn human_duration(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 60.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_reads_cclab_times_and_minutes_and_hours() {
        let s = |t: &str| parse_hold(t).map(|d| d.as_secs_f64()).ok();
        assert_eq!(s("90s"), Some(90.0));
        assert_eq!(s("500ms"), Some(0.5));
        assert_eq!(s("30min"), Some(1800.0));
        assert_eq!(s("2h"), Some(7200.0));
        assert_eq!(s(" 5 min"), Some(300.0));
        for bad in ["soon", "30m", "1.5h", "-1min", "90"] {
            assert!(s(bad).is_none(), "{bad}");
        }
    }
}
