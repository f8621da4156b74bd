//! The terminal table.

use crate::units;
use cclab_results::metrics::{
    Kind, MetricDef, DROPS_AQM, DROPS_BUFFER, DROPS_POLICER, DROPS_RANDOM, FCT, GOODPUT, JAIN,
    LINK_MARKS, LINK_UTILIZATION, QUEUE_P50, QUEUE_P99, RETRANS_RATIO, RTT_P50, RTT_P99,
};
use cclab_results::{median, FlowResult, ResultsDoc, RunResult};

/// Column-aligned text table.
struct Grid {
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Grid {
    fn render(&self, out: &mut String, indent: &str) {
        layout(out, &self.rows, &self.right, indent);
    }
}

/// Rows of cells as lines of text, columns two spaces apart and padded to their widest cell
/// (right-aligned where `right` says so), trailing spaces trimmed.
pub(crate) fn layout(out: &mut String, rows: &[Vec<String>], right: &[bool], indent: &str) {
    let n = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let mut w = vec![0; n];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    for r in rows {
        let mut line = String::from(indent);
        for (i, c) in r.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if right.get(i).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            } else {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            }
            line.push_str("  ");
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
}

/// Runs with the same params (the seeds of one matrix point under `--repeat`), in order.
pub(crate) fn groups(doc: &ResultsDoc) -> Vec<Vec<&RunResult>> {
    let mut out: Vec<Vec<&RunResult>> = Vec::new();
    for r in &doc.runs {
        match out.last_mut() {
            Some(g) if g[0].params == r.params && g[0].flows.len() == r.flows.len() => g.push(r),
            _ => out.push(vec![r]),
        }
    }
    out
}

/// One value, or `median [min-max]` over seeds.
pub(crate) fn agg(mut v: Vec<f64>, fmt: impl Fn(f64) -> String) -> String {
    if v.len() == 1 {
        return fmt(v[0]);
    }
    let m = median(&mut v);
    let (ms, lo, hi) = (fmt(m), fmt(v[0]), fmt(v[v.len() - 1]));
    // "153 Mbit/s [150-172]": the range without its unit when all three share it.
    let split = |x: &str| -> (String, String) {
        if let Some(n) = x.strip_suffix('%') {
            return (n.to_string(), "%".into());
        }
        match x.rsplit_once(' ') {
            Some((n, u)) => (n.to_string(), u.to_string()),
            None => (x.to_string(), String::new()),
        }
    };
    let ((_, um), (nl, ul), (nh, uh)) = (split(&ms), split(&lo), split(&hi));
    if um == ul && um == uh {
        format!("{ms} [{nl}-{nh}]")
    } else {
        format!("{ms} [{lo}-{hi}]")
    }
}

pub use crate::units::{ratio_text, within, WITHIN};

/// The statistic of a cell over several seeds, in the words report.html uses too.
fn statistic(sizes: &[usize]) -> Option<String> {
    let lo = sizes.iter().copied().filter(|&n| n > 1).min()?;
    let hi = sizes.iter().copied().max().unwrap_or(lo);
    let n = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    };
    Some(format!("median of {n} seeds [min-max]"))
}

/// A flow's metric over the seeds of a group (flow `j` of each run): one value, or
/// `median [min-max]`.
pub(crate) fn flow_agg(g: &[&RunResult], j: usize, m: &MetricDef) -> String {
    agg(
        g.iter().filter_map(|r| m.of_flow(&r.flows[j])).collect(),
        |v| units::of(m.kind, v),
    )
}

/// A run's (or its link's) metric over the seeds of a group: one value, or `median
/// [min-max]`; a count just once when the seeds agree.
/// A line per latency probe of the runs `g` of row group `i`: what a ping beside the flows
/// saw ("#1: probe flows.1 (64 B every 20.0 ms): RTT p50 41.2 ms p99 160 ms, lost 3/1500"),
/// percentiles over the seeds as the other figures, lost and sent summed over them.
fn probe_lines(i: usize, g: &[&RunResult]) -> Vec<String> {
    let Some(first) = g.first() else {
        return Vec::new();
    };
    first
        .probes
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let all: Vec<&cclab_results::ProbeResult> =
                g.iter().filter_map(|r| r.probes.get(k)).collect();
            let pick = |f: fn(&cclab_results::ProbeResult) -> f64| {
                agg(all.iter().map(|p| f(p)).collect(), units::ms)
            };
            format!(
                "#{}: probe flows.{} ({} B every {}): RTT p50 {} p99 {}, lost {}/{}",
                i + 1,
                p.group,
                p.size_bytes,
                units::ms(p.interval_s * 1e3),
                pick(|p| p.rtt_ms.p50),
                pick(|p| p.rtt_ms.p99),
                all.iter().map(|p| p.lost).sum::<u64>(),
                // Of the probes that could be answered: not those in flight at the end.
                all.iter()
                    .map(|p| p.sent - p.unanswered_at_end)
                    .sum::<u64>()
            )
        })
        .collect()
}

pub(crate) fn run_agg(g: &[&RunResult], m: &MetricDef) -> String {
    let v: Vec<f64> = g.iter().filter_map(|r| m.of_run(r)).collect();
    if m.kind == Kind::Count && v.iter().all(|x| *x == v[0]) {
        return units::of(m.kind, v[0]);
    }
    agg(v, |x| units::of(m.kind, x))
}

/// What the table shows besides the whole-run figures.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Steady-state columns: figures over the series bins from this time on, seconds
    /// ([`crate::steady`]).
    pub from_s: Option<f64>,
}

/// A time in seconds as a column heading writes it: "10s", "2.5s".
fn secs_label(s: f64) -> String {
    format!("{}s", (s * 1000.0).round() / 1000.0)
}

/// The table, the lines under it and the link lines of one document, before layout.
struct Built {
    title: String,
    grid: Grid,
    /// Lines under the table: the statistic, the published summary, misses, warnings.
    notes: Vec<String>,
    link_lines: Vec<String>,
}

/// Render one results document. `title` is printed above (scenario name, file, description).
/// Runs of one matrix point with several seeds (`--repeat`) are folded into one row per flow
/// showing the median and the [min-max] range (named under the table). Published figures
/// get their ratio cclab / published and a summary; unfinished sized flows are flagged.
/// Measurements of real hosts (backend "host") have no link lines: a real path's link is
/// unknown (Jain's index of several streams keeps a line).
pub fn render(doc: &ResultsDoc, title: &str) -> String {
    render_with(doc, title, &Options::default())
}

/// [`render`] with options (steady-state columns).
pub fn render_with(doc: &ResultsDoc, title: &str, opts: &Options) -> String {
    let b = build(doc, title, opts);
    let mut out = String::new();
    out.push_str(&b.title);
    out.push('\n');
    b.grid.render(&mut out, "  ");
    for l in &b.notes {
        out.push_str("  ");
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
    for l in &b.link_lines {
        out.push_str("  ");
        out.push_str(l);
        out.push('\n');
    }
    out
}

/// Escape a table cell for GitHub-flavoured Markdown: pipes (and backslashes) would end or
/// change the cell; a line break would end the row.
fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// Escape text for Markdown: `*` and `_` would start emphasis.
fn md_inline(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('*', "\\*")
        .replace('_', "\\_")
}

/// Escape a line of text for Markdown: inline marks, and a leading `#`, `-`, `+`, `>` or
/// `1.` that would make it a heading, list or quote (the title's "* set on the command
/// line" is a footnote mark, not a list).
fn md_line(s: &str) -> String {
    let mut out = md_inline(s);
    if out.starts_with(['#', '-', '+', '>']) {
        out.insert(0, '\\');
    } else if let Some((n, _)) = out.split_once(". ") {
        if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) {
            out.insert(n.len(), '\\');
        }
    }
    out
}

/// The same content as [`render`] as GitHub-flavoured Markdown (for tickets): the title's
/// first line as a heading, the rest as text, the table, then the notes and link lines as a
/// list.
pub fn render_markdown(doc: &ResultsDoc, title: &str) -> String {
    render_markdown_with(doc, title, &Options::default())
}

/// [`render_markdown`] with options (steady-state columns).
pub fn render_markdown_with(doc: &ResultsDoc, title: &str, opts: &Options) -> String {
    let b = build(doc, title, opts);
    let mut out = String::new();
    let mut lines = b.title.lines();
    let head = md_inline(lines.next().unwrap_or("").trim());
    out.push_str(&format!("### {head}\n\n"));
    let rest: Vec<&str> = lines.map(str::trim).filter(|l| !l.is_empty()).collect();
    for l in &rest {
        // One paragraph per line (a hard break would need trailing spaces).
        out.push_str(&md_line(l));
        out.push_str("\n\n");
    }
    let ncols = b.grid.rows.iter().map(|r| r.len()).max().unwrap_or(0);
    for (i, row) in b.grid.rows.iter().enumerate() {
        out.push('|');
        for c in 0..ncols {
            out.push(' ');
            out.push_str(&md_cell(row.get(c).map(String::as_str).unwrap_or("")));
            out.push_str(" |");
        }
        out.push('\n');
        if i == 0 {
            out.push('|');
            for c in 0..ncols {
                out.push_str(if b.grid.right.get(c).copied().unwrap_or(false) {
                    " ---: |"
                } else {
                    " :--- |"
                });
            }
            out.push('\n');
        }
    }
    let items: Vec<&String> = b.notes.iter().chain(&b.link_lines).collect();
    if !items.is_empty() {
        out.push('\n');
        for l in items {
            out.push_str("- ");
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// The published goodput of a run and the index of the flow it applies to: the first flow
/// of the row's controller when the row selects one (`flows.cc`), else the first flow.
fn published(run: &RunResult) -> Option<(f64, usize)> {
    let r = run.reference.as_ref()?;
    let bps = r.get("goodput_bps")?.as_f64().filter(|b| *b > 0.0)?;
    let j = match r.get("flows.cc").and_then(|c| c.as_str()) {
        Some(cc) => run
            .flows
            .iter()
            .position(|f| f.cc.eq_ignore_ascii_case(cc))
            .unwrap_or(0),
        None => 0,
    };
    Some((bps, j))
}

/// Whether a run's flows use several controllers.
fn several_ccs(r: &RunResult) -> bool {
    r.flows.iter().any(|f| f.cc != r.flows[0].cc)
}

/// Flow `j`'s controller's share of its run's goodput over the seeds of a group, on the
/// row of the controller's first flow; None on the other rows.
fn share_cell(g: &[&RunResult], j: usize) -> Option<String> {
    let cc = &g[0].flows[j].cc;
    if g[0].flows.iter().position(|f| &f.cc == cc) != Some(j) {
        return None;
    }
    let v: Vec<f64> = g
        .iter()
        .map(|r| {
            let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
            let own: f64 = r
                .flows
                .iter()
                .filter(|f| &f.cc == cc)
                .map(|f| f.goodput_bps)
                .sum();
            if total > 0.0 {
                own / total
            } else {
                0.0
            }
        })
        .collect();
    Some(agg(v, units::pct))
}

fn build(doc: &ResultsDoc, title: &str, opts: &Options) -> Built {
    let param_keys: Vec<String> = doc
        .runs
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    let has_ref = doc.runs.iter().any(|r| published(r).is_some());
    let has_fct = doc
        .runs
        .iter()
        .any(|r| r.flows.iter().any(|f| f.size_bytes.is_some()));
    let groups = groups(doc);
    let multi_seed = groups.iter().any(|g| g.len() > 1);
    // Measurements of real hosts have no emulated link: no link lines.
    let link_known = crate::host::link_known(doc);
    let share = groups.iter().any(|g| several_ccs(g[0]));
    // Steady-state figures of every run, by group (None: no series or no bin after `from`).
    let steady: Option<(f64, Vec<Vec<Option<crate::steady::Steady>>>)> = opts.from_s.map(|from| {
        let v = groups
            .iter()
            .map(|g| g.iter().map(|r| crate::steady::of_run(r, from)).collect())
            .collect();
        (from, v)
    });
    let mut header = vec!["#".to_string()];
    header.extend(param_keys.iter().cloned());
    if multi_seed {
        header.push("seeds".into());
    }
    header.extend(["flow", "cc", GOODPUT.name].map(String::from));
    if share {
        header.push("cc share".into());
    }
    if has_ref {
        header.push("published".into());
        header.push("ratio".into());
    }
    // Retransmits with their ratio (of one seed), or the ratio over seeds.
    header.extend(["retrans", RTT_P50.name, RTT_P99.name].map(String::from));
    if link_known {
        header.push(QUEUE_P99.heading.into());
    }
    if has_fct {
        header.push(FCT.name.into());
    }
    if let Some((from, _)) = &steady {
        let at = secs_label(*from);
        header.extend([
            format!("goodput ≥{at}"),
            format!("srtt p50 ≥{at}"),
            format!("srtt p99 ≥{at}"),
        ]);
        if link_known {
            header.push(format!("queue p99 ≥{at}"));
        }
    }
    let mut right = vec![true];
    right.extend(param_keys.iter().map(|_| false));
    if multi_seed {
        right.push(true);
    }
    right.extend([true, false, true]);
    if share {
        right.push(true);
    }
    if has_ref {
        right.extend([true, true]);
    }
    right.extend([true, true, true]);
    if has_fct {
        right.push(true);
    }
    right.resize(header.len(), true);
    let mut grid = Grid {
        rows: vec![header],
        right,
    };
    let mut link_lines = Vec::new();
    // (run number, cc, ratio, known reason) of every published figure.
    let mut ratios: Vec<(usize, String, f64, Option<String>)> = Vec::new();
    // Unfinished sized flows: (run number, count over seeds), and every unfinished instance.
    let mut unfinished_runs: Vec<usize> = Vec::new();
    let mut unfinished: Vec<(&RunResult, &FlowResult)> = Vec::new();
    let mut sized = 0usize;
    for (i, g) in groups.iter().enumerate() {
        let run = g[0];
        let reference = published(run);
        for (j, f) in run.flows.iter().enumerate() {
            let first = j == 0;
            let col = |pick: &dyn Fn(&FlowResult) -> f64| -> Vec<f64> {
                g.iter().map(|r| pick(&r.flows[j])).collect()
            };
            let mut row = vec![if first {
                (i + 1).to_string()
            } else {
                String::new()
            }];
            for k in &param_keys {
                row.push(if first {
                    units::param_in(&run.params, k)
                } else {
                    String::new()
                });
            }
            if multi_seed {
                row.push(if first {
                    g.len().to_string()
                } else {
                    String::new()
                });
            }
            row.push(f.id.to_string());
            row.push(f.cc.clone());
            row.push(flow_agg(g, j, &GOODPUT));
            if share {
                row.push(if several_ccs(run) {
                    share_cell(g, j).unwrap_or_default()
                } else {
                    String::new()
                });
            }
            if has_ref {
                match reference.filter(|(_, rj)| *rj == j) {
                    Some((bps, _)) => {
                        let r = run.reference.as_ref().expect("published() saw it");
                        let unit = r.get("unit").and_then(|u| u.as_str()).unwrap_or("Mbit/s");
                        let own = units::rate_in(bps, unit);
                        row.push(if own.ends_with("bit/s") {
                            own
                        } else {
                            format!("{} ({own})", units::rate(bps))
                        });
                        let ratio = median(&mut col(&|f| f.goodput_bps)) / bps;
                        row.push(if within(ratio) {
                            ratio_text(ratio)
                        } else {
                            format!("{} !", ratio_text(ratio))
                        });
                        let miss = r
                            .get("miss")
                            .and_then(|m| m.as_str())
                            .map(|m| m.trim().to_string());
                        ratios.push((i + 1, f.cc.clone(), ratio, miss));
                    }
                    None => {
                        row.push(String::new());
                        row.push(String::new());
                    }
                }
            }
            if g.len() == 1 {
                row.push(format!(
                    "{} ({})",
                    f.retransmits,
                    units::pct(f.retrans_ratio)
                ));
            } else {
                row.push(flow_agg(g, j, &RETRANS_RATIO));
            }
            row.push(flow_agg(g, j, &RTT_P50));
            row.push(flow_agg(g, j, &RTT_P99));
            if link_known {
                row.push(if first {
                    run_agg(g, &QUEUE_P99)
                } else {
                    String::new()
                });
            }
            if has_fct {
                let fcts: Vec<f64> = g.iter().filter_map(|r| FCT.of_flow(&r.flows[j])).collect();
                let open: Vec<(&RunResult, &FlowResult)> = g
                    .iter()
                    .map(|r| (*r, &r.flows[j]))
                    .filter(|(_, f)| f.size_bytes.is_some() && f.fct_s.is_none())
                    .collect();
                if f.size_bytes.is_some() {
                    sized += g.len();
                }
                row.push(if open.is_empty() {
                    if fcts.is_empty() {
                        "-".into()
                    } else {
                        flow_agg(g, j, &FCT)
                    }
                } else if fcts.is_empty() {
                    "unfinished".into()
                } else {
                    format!(
                        "{} ({} of {} unfinished)",
                        flow_agg(g, j, &FCT),
                        open.len(),
                        g.len()
                    )
                });
                if !open.is_empty() && unfinished_runs.last() != Some(&(i + 1)) {
                    unfinished_runs.push(i + 1);
                }
                unfinished.extend(open);
            }
            if let Some((_, st)) = &steady {
                let runs = &st[i];
                let per_seed = |k: usize| -> Vec<f64> {
                    runs.iter()
                        .filter_map(|s| {
                            let (g, p50, p99) = s.as_ref()?.flows.get(j).copied().flatten()?;
                            Some([g, p50, p99][k]).filter(|x| x.is_finite())
                        })
                        .collect()
                };
                for (k, fmt) in [
                    (0, units::rate as fn(f64) -> String),
                    (1, units::ms),
                    (2, units::ms),
                ] {
                    let v = per_seed(k);
                    row.push(if v.is_empty() {
                        "-".into()
                    } else {
                        agg(v, fmt)
                    });
                }
                if link_known {
                    let v: Vec<f64> = runs
                        .iter()
                        .filter_map(|s| s.as_ref()?.queue_p99_ms)
                        .collect();
                    row.push(if !first {
                        String::new()
                    } else if v.is_empty() {
                        "-".into()
                    } else {
                        agg(v, units::ms)
                    });
                }
            }
            grid.rows.push(row);
        }
        if !link_known {
            // A real path: no link line (its fields are unknown), Jain's index over the
            // streams when there are several.
            if run.flows.len() > 1 {
                link_lines.push(format!("#{}: jain {}", i + 1, run_agg(g, &JAIN)));
            }
            continue;
        }
        let drops_a = run_agg(g, &DROPS_AQM);
        let drops_p = run_agg(g, &DROPS_POLICER);
        // Drops by cause: the AQM's and a policer's only where the path has one.
        let has = |key: &str| {
            g.iter()
                .any(|r| r.link.elements.contains_key(key) || r.link.queues.contains_key(key))
        };
        let aqm = g
            .first()
            .and_then(|r| r.resolved.get("link.aqm"))
            .and_then(|v| v.as_str())
            .filter(|a| *a != "droptail");
        let mut other = String::new();
        if let Some(a) = aqm {
            other.push_str(&format!(" / {drops_a} {a}"));
        }
        if has("data.policer") {
            other.push_str(&format!(" / {drops_p} policer"));
        }
        let shaper: Vec<f64> = g
            .iter()
            .filter_map(|r| r.link.queues.get("data.shaper").map(|q| q.p50))
            .collect();
        if !shaper.is_empty() {
            other.push_str(&format!(", shaper delay p50 {}", agg(shaper, units::ms)));
        }
        // A dual queue (DualPI2): each queue's delay.
        let sub = |k: &str| -> Vec<f64> {
            g.iter()
                .filter_map(|r| r.link.queues.get(k).map(|q| q.p99))
                .collect()
        };
        let (l, c) = (sub("data.queue.l"), sub("data.queue.c"));
        if !l.is_empty() && !c.is_empty() {
            other.push_str(&format!(
                ", L / C queue delay p99 {} / {}",
                agg(l, units::ms),
                agg(c, units::ms)
            ));
        }
        link_lines.push(format!(
            "#{}: link {} used, drops {} buffer / {} random{}{}, queue delay p50 {} p99 {}{}",
            i + 1,
            run_agg(g, &LINK_UTILIZATION),
            run_agg(g, &DROPS_BUFFER),
            run_agg(g, &DROPS_RANDOM),
            other,
            if g.iter().any(|r| r.link.marks > 0) {
                format!(", {} CE marks", run_agg(g, &LINK_MARKS))
            } else {
                String::new()
            },
            run_agg(g, &QUEUE_P50),
            run_agg(g, &QUEUE_P99),
            // Jain's index says something only of several flows.
            if run.flows.len() > 1 {
                format!(", jain {}", run_agg(g, &JAIN))
            } else {
                String::new()
            }
        ));
        link_lines.extend(probe_lines(i, g));
    }
    let mut notes = Vec::new();
    let sizes: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    if let Some(stat) = statistic(&sizes) {
        notes.push(format!(
            "figures over seeds: {stat}, in the table{}",
            if link_lines.is_empty() {
                ""
            } else {
                " and the link lines"
            }
        ));
    }
    if share {
        notes.push(
            "cc share: the controller's share of the run's goodput (all its flows), on its first flow's row"
                .into(),
        );
    }
    if let Some((from, st)) = &steady {
        let at = secs_label(*from);
        let bins: Vec<usize> = st.iter().flatten().flatten().map(|s| s.bins).collect();
        if bins.is_empty() {
            notes.push(format!(
                "≥{at}: no time-series bin from {at} on in these results (the series end earlier or were not recorded)"
            ));
        } else {
            let interval = groups
                .iter()
                .flatten()
                .find_map(|r| r.series.as_ref().map(|s| s.interval_s))
                .unwrap_or(0.1);
            notes.push(format!(
                "≥{at}: over the {} ms series bins from {at} on ({} of them): goodput their mean, srtt the smoothed RTT at each bin's end, queue p99 of each bin's mean delay; the whole-run RTT percentiles are of every RTT sample (one per ACK), queue p99 of every packet",
                (interval * 1000.0).round(),
                bins.iter().max().copied().unwrap_or(0)
            ));
        }
    }
    if !ratios.is_empty() {
        let ok = ratios.iter().filter(|r| within(r.2)).count();
        notes.push(format!(
            "published figures: {ok} of {} within x1.5 (ratio = cclab / published{}; ! outside)",
            ratios.len(),
            if multi_seed { ", of the median" } else { "" }
        ));
        // The misses, those that share a reason on one line.
        let mut misses: Vec<(Vec<String>, Option<&str>)> = Vec::new();
        for (n, cc, r, miss) in ratios.iter().filter(|r| !within(r.2)) {
            let miss = miss.as_deref().filter(|m| !m.is_empty());
            let which = format!("#{n} {cc} {}", ratio_text(*r));
            match misses.iter_mut().find(|(_, m)| *m == miss) {
                Some((list, _)) => list.push(which),
                None => misses.push((vec![which], miss)),
            }
        }
        for (list, miss) in misses {
            notes.push(format!(
                "{}: {}",
                list.join(", "),
                match miss {
                    Some(m) => format!("known reason: {m}"),
                    None => "no known reason recorded (a `miss` in the scenario's [reference] row says why)".into(),
                }
            ));
        }
    }
    if !unfinished.is_empty() {
        notes.push(unfinished_warning(&unfinished, sized, &unfinished_runs));
    }
    Built {
        title: title.to_string(),
        grid,
        notes,
        link_lines,
    }
}

/// How many sized flows did not finish, where, and what would let them.
fn unfinished_warning(open: &[(&RunResult, &FlowResult)], sized: usize, runs: &[usize]) -> String {
    let list: Vec<String> = runs.iter().map(|n| format!("#{n}")).collect();
    let ended = open
        .iter()
        .map(|(r, _)| r.duration_s)
        .fold(0.0f64, f64::max);
    let has_duration = open.iter().any(|(r, _)| {
        r.resolved
            .get("duration")
            .is_some_and(|d| d.as_f64().is_some())
    });
    // At the rate each flow had, when it would have completed.
    let need = open
        .iter()
        .filter_map(|(r, f)| {
            let size = f.size_bytes? as f64;
            let active = r.duration_s - f.start_s;
            (f.bytes_delivered > 0 && active > 0.0)
                .then_some(f.start_s + size / (f.bytes_delivered as f64 / active))
        })
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    let estimate = need
        .map(|s| {
            let s = (s * 1.2).ceil();
            format!(" (at the rate they had, about duration = \"{s:.0}s\")")
        })
        .unwrap_or_default();
    let fix = if has_duration {
        format!("a longer `duration`{estimate} or a smaller `size` lets them finish")
    } else {
        format!(
            "the run stopped at its limit; a `duration` longer than that{estimate} or a smaller `size` lets them finish"
        )
    };
    format!(
        "warning: {} of {sized} sized flow{} unfinished (run{} {}) when the run ended at {}: fct is unknown and goodput counts only what arrived; {fix}",
        open.len(),
        if sized == 1 { "" } else { "s" },
        if runs.len() == 1 { "" } else { "s" },
        list.join(", "),
        units::secs(ended),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};

    fn run(seed: u64, loss: f64, goodput: f64) -> RunBuilder {
        RunBuilder::new()
            .param("link.loss", loss)
            .seed(seed)
            .duration(1.0)
            .flow("bbr", goodput)
            .rtt_ms(1.0, 2.0, 3.0, 4.0)
    }

    #[test]
    fn repeats_fold_into_median_and_range() {
        let d = doc(vec![
            run(1, 0.0, 10e6),
            run(2, 0.0, 30e6),
            run(3, 0.0, 20e6),
            run(1, 0.01, 5e6),
            run(2, 0.01, 7e6),
            run(3, 0.01, 6e6),
        ]);
        let t = render(&d, "title");
        assert!(t.contains("seeds"), "{t}");
        // The statistic is named once, under the table, for the table and the link lines.
        assert_eq!(t.matches("median of 3 seeds [min-max]").count(), 1, "{t}");
        assert!(!t.contains("mean"), "{t}");
        assert!(t.contains("20.0 Mbit/s [10.0-30.0]"), "{t}");
        assert!(t.contains("6.00 Mbit/s [5.00-7.00]"), "{t}");
        assert_eq!(t.lines().filter(|l| l.contains("bbr")).count(), 2, "{t}");
        // A single seed prints plain values.
        let t = render(&doc(vec![run(1, 0.0, 10e6)]), "t");
        assert!(!t.contains('[') && !t.contains("median"), "{t}");
    }

    #[test]
    fn queue_p99_share_and_jain_only_where_they_say_something() {
        // One flow: a queue p99 column, no share, no Jain.
        let t = render(&doc(vec![run(1, 0.0, 10e6)]), "t");
        let head = t.lines().nth(1).unwrap();
        assert!(head.contains("queue p99") && !head.contains("share"), "{t}");
        assert!(!t.contains("jain"), "{t}");
        // Three CUBIC flows against one BBR: the controllers' shares of 40 Mbit/s.
        let r = RunBuilder::new()
            .flows(&[
                ("cubic", 4e6),
                ("cubic", 4e6),
                ("cubic", 4e6),
                ("bbr", 28e6),
            ])
            .rtt_ms(1.0, 2.0, 3.0, 4.0);
        let t = render(&doc(vec![r.clone()]), "t");
        assert!(t.lines().nth(1).unwrap().contains("cc share"), "{t}");
        let rows: Vec<&str> = t.lines().skip(2).take(4).collect();
        assert!(rows[0].contains("30.0%"), "{t}");
        assert!(
            !rows[1].contains("30.0%"),
            "the share once per controller: {t}"
        );
        assert!(rows[3].contains("70.0%"), "{t}");
        assert!(t.contains("jain"), "{t}");
        // One controller in several flows: Jain, no share.
        let same = RunBuilder::new().flows(&[("cubic", 4e6), ("cubic", 6e6)]);
        let t = render(&doc(vec![same]), "t");
        assert!(!t.contains("share") && t.contains("jain"), "{t}");
    }

    #[test]
    fn from_adds_steady_columns_over_the_late_bins() {
        use cclab_results::{FlowSeries, TimeSeries};
        // 10 bins of 1 s: 2 Mbit/s for 5 s, then 12 Mbit/s.
        let g: Vec<f64> = (0..10).map(|i| if i < 5 { 2e6 } else { 12e6 }).collect();
        let mut s = TimeSeries {
            interval_s: 1.0,
            t_s: (1..=10).map(f64::from).collect(),
            flows: vec![FlowSeries {
                id: 0,
                cc: "bbr".into(),
                goodput_bps: g,
                srtt_ms: vec![50.0; 10],
                ..Default::default()
            }],
            ..Default::default()
        };
        s.queue_delay_ms.insert("data.queue".into(), vec![3.0; 10]);
        let d = doc(vec![run(1, 0.0, 7e6).series(s)]);
        let opts = Options { from_s: Some(5.0) };
        let t = render_with(&d, "t", &opts);
        let head = t.lines().nth(1).unwrap();
        assert!(
            head.contains("goodput ≥5s") && head.contains("queue p99 ≥5s"),
            "{t}"
        );
        let row = t.lines().nth(2).unwrap();
        assert!(
            row.contains("7.00 Mbit/s") && row.contains("12.0 Mbit/s"),
            "{t}"
        );
        assert!(
            t.contains("(5 of them)") && t.contains("one per ACK"),
            "{t}"
        );
        // Without series: a dash and a note saying why.
        let t = render_with(&doc(vec![run(1, 0.0, 7e6)]), "t", &opts);
        assert!(t.contains("no time-series bin from 5s on"), "{t}");
        // Without --from: no such columns.
        assert!(!render(&d, "t").contains('≥'));
    }

    fn doc(runs: Vec<RunBuilder>) -> ResultsDoc {
        DocBuilder::new()
            .cclab("t")
            .scenario("s")
            .runs(runs)
            .build()
    }

    fn with_ref(r: RunBuilder, published_bps: f64, miss: Option<&str>) -> RunBuilder {
        let mut v = serde_json::json!({"goodput_bps": published_bps, "unit": "Mbit/s"});
        if let Some(m) = miss {
            v["miss"] = serde_json::json!(m);
        }
        r.reference(v)
    }

    #[test]
    fn published_figures_get_ratio_summary_and_known_reason() {
        let d = doc(vec![
            with_ref(
                run(1, 0.0, 12e6),
                10e6,
                Some("reason that must stay hidden"),
            ),
            with_ref(run(1, 0.01, 10e6), 5e6, Some("the path is a guess")),
            with_ref(run(1, 0.02, 2e6), 10e6, None),
            run(1, 0.03, 1e6),
            with_ref(run(1, 0.04, 30e6), 10e6, Some("the path is a guess")),
        ]);
        let t = render(&d, "title");
        assert!(t.contains("ratio"), "{t}");
        assert!(t.contains("x1.20"), "{t}");
        assert!(t.contains("x2.00 !"), "{t}");
        assert!(t.contains("x0.20 !"), "{t}");
        assert!(t.contains("1 of 4 within x1.5"), "{t}");
        // Misses that share a reason share its line.
        assert!(
            t.contains("#2 bbr x2.00, #5 bbr x3.00: known reason: the path is a guess"),
            "{t}"
        );
        assert!(t.contains("#3 bbr x0.20: no known reason recorded"), "{t}");
        // A row within x1.5 does not print its reason.
        assert!(!t.contains("must stay hidden"), "{t}");
        // Several seeds: the ratio is the median's.
        let d = doc(vec![
            with_ref(run(1, 0.0, 10e6), 10e6, None),
            with_ref(run(2, 0.0, 30e6), 10e6, None),
            with_ref(run(3, 0.0, 11e6), 10e6, None),
        ]);
        let t = render(&d, "title");
        assert!(
            t.contains("x1.10") && t.contains("1 of 1 within x1.5"),
            "{t}"
        );
    }

    #[test]
    fn ratio_text_shows_the_side_of_the_bound() {
        assert_eq!(ratio_text(1.0712), "x1.07");
        assert_eq!(ratio_text(1.5003), "x1.500");
        assert!(!within(1.5003) && within(1.4999) && within(1.0 / 1.5));
        assert_eq!(ratio_text(0.6664), "x0.666");
        assert!(!within(0.6664));
        assert_eq!(ratio_text(27.3), "x27.3");
    }

    fn sized(r: RunBuilder, size: u64, fct: Option<f64>, delivered: u64) -> RunBuilder {
        r.duration(2.0)
            .resolved("duration", 2.0)
            .sized(size, fct, delivered)
    }

    #[test]
    fn unfinished_sized_flows_are_flagged_with_a_fix() {
        let d = doc(vec![
            sized(run(1, 0.0, 8e6), 1_000_000, Some(1.0), 1_000_000),
            sized(run(1, 0.01, 4e6), 10_000_000, None, 1_000_000),
        ]);
        let t = render(&d, "title");
        let row = t
            .lines()
            .find(|l| l.trim_start().starts_with("2 "))
            .unwrap();
        assert!(row.trim_end().ends_with("unfinished"), "{t}");
        assert!(!t.contains(" - "), "{t}");
        let w = t.lines().find(|l| l.contains("warning:")).expect(&t);
        assert!(w.contains("1 of 2 sized flows unfinished (run #2)"), "{w}");
        assert!(w.contains("a longer `duration`"), "{w}");
        // 10 MB at 1 MB per 2 s takes 20 s; the hint leaves a margin.
        assert!(w.contains("duration = \"24s\""), "{w}");
        // Some seeds finished, one did not.
        let d = doc(vec![
            sized(run(1, 0.0, 8e6), 1_000_000, Some(1.0), 1_000_000),
            sized(run(2, 0.0, 8e6), 1_000_000, None, 500_000),
            sized(run(3, 0.0, 8e6), 1_000_000, Some(1.2), 1_000_000),
        ]);
        let t = render(&d, "title");
        assert!(t.contains("(1 of 3 unfinished)"), "{t}");
        assert!(t.contains("1 of 3 sized flows unfinished (run #1)"), "{t}");
        // Bulk flows are never unfinished.
        let t = render(&doc(vec![run(1, 0.0, 8e6)]), "title");
        assert!(!t.contains("unfinished") && !t.contains("warning"), "{t}");
    }

    #[test]
    fn a_dual_queue_s_link_line_shows_each_queue_s_delay() {
        let dual = |seed: u64, l99: f64, c99: f64| {
            let mut r = run(seed, 0.0, 10e6).link_rate(100e6).build();
            for (k, p99) in [("data.queue.l", l99), ("data.queue.c", c99)] {
                r.link.queues.insert(
                    k.into(),
                    cclab_results::QueuePercentiles {
                        p50: p99 / 2.0,
                        p95: p99,
                        p99,
                    },
                );
            }
            r
        };
        let d = DocBuilder::new()
            .cclab("t")
            .scenario("s")
            .runs(vec![dual(1, 1.2, 16.0), dual(2, 1.4, 17.0)])
            .build();
        let t = render(&d, "t");
        assert!(
            t.contains("L / C queue delay p99 1.30 ms [1.20-1.40] / 16.5 ms [16.0-17.0]"),
            "{t}"
        );
        // A single queue has no such part.
        let t = render(&doc(vec![run(1, 0.0, 10e6).link_rate(100e6)]), "t");
        assert!(!t.contains("L / C"), "{t}");
    }

    #[test]
    fn real_paths_have_no_link_lines() {
        let mut d = doc(vec![run(1, 0.0, 8e6), run(1, 0.01, 4e6)]);
        d.backend = "host".into();
        // A run of two streams keeps its Jain's index.
        let mut second = d.runs[1].flows[0].clone();
        second.id = 1;
        d.runs[1].flows.push(second);
        d.runs[1].jain = 0.9;
        let t = render(&d, "title");
        assert!(!t.contains(": link ") && !t.contains("used"), "{t}");
        assert!(
            t.contains("#2: jain 0.900") && !t.contains("#1: jain"),
            "{t}"
        );
        assert!(render_markdown(&d, "title").contains("- #2: jain 0.900"));
        // The same runs on the simulator have their link lines.
        d.backend = "sim".into();
        let t = render(&d, "title");
        assert!(
            t.contains("#1: link 0% used") && t.contains("#2: link "),
            "{t}"
        );
    }

    /// Unescaped `|` in a Markdown table row (cell boundaries).
    fn boundaries(line: &str) -> usize {
        let b = line.as_bytes();
        (0..b.len())
            .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
            .count()
    }

    #[test]
    fn markdown_is_the_same_table_with_pipes_escaped() {
        let a = run(1, 0.0, 12e6).param("hosts.profile", "a|b");
        let b = run(1, 0.01, 6e6).param("hosts.profile", "c");
        let d = doc(vec![with_ref(a, 10e6, None), with_ref(b, 2e6, Some("x|y"))]);
        let title = "name  (f.toml, sim backend, 2 runs)\n  a description*\n  * set on the command line: --set x=1";
        let md = render_markdown(&d, title);
        let text = render(&d, title);
        let mut lines = md.lines();
        assert_eq!(
            lines.next(),
            Some("### name  (f.toml, sim backend, 2 runs)")
        );
        assert!(md.contains("\na description\\*\n"), "{md}");
        assert_eq!(md_line("1. x_y"), "1\\. x\\_y");
        assert_eq!(md_line("- a"), "\\- a");
        // A footnote mark, not a list item.
        assert!(
            md.contains("\n\\* set on the command line: --set x=1\n"),
            "{md}"
        );
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        // Header, alignment row, two runs; every row has the header's cells.
        assert_eq!(rows.len(), 4, "{md}");
        let n = boundaries(rows[0]);
        assert!(
            rows.iter().all(|r| boundaries(r) == n && r.ends_with('|')),
            "{md}"
        );
        assert!(rows[1].contains("---:") && rows[1].contains(":---"), "{md}");
        assert!(md.contains("a\\|b"), "{md}");
        // The same content: every cell of the terminal table is in the Markdown.
        for cell in ["x1.20", "x3.00 !", "12.0 Mbit/s", "1 of 2 within x1.5"] {
            assert!(text.contains(cell) && md.contains(cell), "{cell}: {md}");
        }
        assert!(md.contains("- #2 bbr x3.00: known reason: x|y"), "{md}");
        assert!(md.contains("- #1: link "), "{md}");
    }
}
