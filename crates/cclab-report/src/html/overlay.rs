//! Overlays: several results documents of one scenario (the simulator and the kernel, today
//! and yesterday) in the same charts, one section for all of them.
//!
//! - Runs line up by (matrix point, seed), then runs still alone by matrix point in order
//!   (how a sim and a kernel run with different seeds pair, as in `cclab compare`).
//! - Headline bars: grouped by matrix point, one bar per controller and document, the
//!   controller's colour shaded per document.
//! - Metric against a swept parameter: one line per document, the same colour, its own dash.
//! - Summary table: each document's value side by side, with the difference in % against the
//!   first document.
//! - Runs over time: the lined-up runs' time series in the same charts (dash per document).

use super::{
    bar_tip, ccs_of, goodput_of, index_of, is_cc_key, key_name, matrix_charts, median_min_max, mix,
    params_label, point_label, points, reference_for, reference_text, run_charts, run_names,
    run_tag, seeds_note, slug, ts_figures, Page, Palette, RunRef,
};
use crate::load::Source;
use crate::plot::{self, esc, Axis, Bar, BarChart, Unit};
use crate::units;
use cclab_results::{FlowResult, ResultsDoc, RunResult};
use std::fmt::Write;

/// Dash of each document's lines, in order ("" solid).
pub const DOC_DASH: [&str; 5] = ["", "7 4", "2 3", "10 3 2 3", "1 2"];
/// Shade of each document's bars (lighter > 0, darker < 0).
const DOC_SHADE: [f64; 5] = [0.0, 0.5, -0.35, 0.72, -0.55];
/// Short names of the documents in the summary table's columns.
const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn dash(di: usize) -> &'static str {
    DOC_DASH[di % DOC_DASH.len()]
}

fn letter(di: usize) -> String {
    (LETTERS[di % LETTERS.len()] as char).to_string()
}

/// Line up the runs of several documents: each row holds, per document, the index of its
/// run (None when it has none). Rows follow the first document's runs; runs of the others
/// join the row with the same params and seed, else the first row with the same params
/// still free, else a row of their own.
pub fn align(docs: &[&ResultsDoc]) -> Vec<Vec<Option<usize>>> {
    let n = docs.len();
    let mut rows: Vec<Vec<Option<usize>>> = Vec::new();
    let params_of = |row: &Vec<Option<usize>>| -> &RunResult {
        let (d, r) = row
            .iter()
            .enumerate()
            .find_map(|(d, r)| r.map(|r| (d, r)))
            .expect("a row has a run");
        &docs[d].runs[r]
    };
    for (d, doc) in docs.iter().enumerate() {
        let mut left: Vec<usize> = Vec::new();
        for (j, run) in doc.runs.iter().enumerate() {
            let at = rows.iter().position(|row| {
                row[d].is_none() && {
                    let p = params_of(row);
                    p.params == run.params && p.seed == run.seed
                }
            });
            match at {
                Some(i) => rows[i][d] = Some(j),
                None => left.push(j),
            }
        }
        for j in left {
            let run = &doc.runs[j];
            match rows
                .iter()
                .position(|row| row[d].is_none() && params_of(row).params == run.params)
            {
                Some(i) => rows[i][d] = Some(j),
                None => {
                    let mut row = vec![None; n];
                    row[d] = Some(j);
                    rows.push(row);
                }
            }
        }
    }
    rows
}

/// The overlay section of `members` (document, label), which share a scenario.
pub(crate) fn section(
    page: &mut Page,
    gi: usize,
    members: &[(&Source, &str)],
    pal: &Palette,
    per_line: usize,
    opts: &super::Options,
) {
    let docs: Vec<&ResultsDoc> = members.iter().map(|m| &m.0.doc).collect();
    let scenario = &docs[0].scenario;
    let _ = write!(
        page.body,
        "<section class=\"doc overlay\" id=\"overlay{gi}\"><h2>{} <span class=\"badge\">overlay of {} results documents</span></h2>",
        esc(scenario),
        docs.len()
    );
    if let Some(d) = members.iter().find_map(|m| m.0.description.as_ref()) {
        let _ = write!(page.body, "<p class=\"desc\">{}</p>", esc(d));
    }
    page.body.push_str("<ul class=\"docs\">");
    for (di, (s, label)) in members.iter().enumerate() {
        let mut seeds: Vec<u64> = s.doc.runs.iter().map(|r| r.seed).collect();
        seeds.sort();
        seeds.dedup();
        let _ = write!(
            page.body,
            "<li><svg width=\"30\" height=\"10\" aria-hidden=\"true\"><line x1=\"1\" y1=\"5\" x2=\"29\" y2=\"5\" stroke=\"#495057\" stroke-width=\"2\"{}/></svg> <strong>{}</strong> {} <span class=\"badge\">{} backend</span> <span class=\"muted\">{} runs · seed{} {}{}{}</span></li>",
            if dash(di).is_empty() {
                String::new()
            } else {
                format!(" stroke-dasharray=\"{}\"", dash(di))
            },
            letter(di),
            esc(label),
            esc(&s.doc.backend),
            s.doc.runs.len(),
            if seeds.len() == 1 { "" } else { "s" },
            seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
            s.file
                .as_ref()
                .map(|f| format!(" · scenario {}", esc(f)))
                .unwrap_or_default(),
            if s.doc.scenario != *scenario {
                format!(" · scenario name {}", esc(&s.doc.scenario))
            } else {
                String::new()
            }
        );
    }
    page.body.push_str("</ul>");
    for d in &docs {
        super::unfinished_warning(&mut page.body, d);
    }
    if docs.iter().all(|d| d.runs.is_empty()) {
        page.body.push_str("<p>No runs.</p></section>");
        return;
    }
    let name = slug(scenario);
    let labels: Vec<&str> = members.iter().map(|m| m.1).collect();
    page.body.push_str("<div class=\"grid\">");
    let id = page.id();
    let (svg, wide) = headline(&docs, &labels, pal, &id);
    page.figure(&format!("{name}-goodput"), svg, wide);
    let with_runs: Vec<(&ResultsDoc, Option<&str>, &'static str)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.runs.is_empty())
        .map(|(di, d)| (*d, Some(labels[di]), dash(di)))
        .collect();
    for (what, c) in matrix_charts(&with_runs, pal) {
        let id = page.id();
        let svg = plot::line_chart(&c, &id);
        page.figure(&format!("{name}-{what}"), svg, false);
    }
    page.body.push_str("</div>");
    let rows = align(&docs);
    table(&mut page.body, &docs, &rows, pal);
    page.body.push_str("<h3>Runs over time</h3>");
    let _ = write!(
        page.body,
        "<p class=\"muted note\">{}</p>",
        esc(super::run::GOODPUT_NOTE)
    );
    for (k, row) in rows.iter().enumerate() {
        run_row(
            page,
            k,
            &docs,
            &labels,
            row,
            pal,
            per_line,
            opts.open(k, rows.len()),
            opts.lazy,
            &name,
        );
    }
    page.body.push_str("</section>");
}

/// Goodput per matrix point: one bar per controller and document.
fn headline(docs: &[&ResultsDoc], labels: &[&str], pal: &Palette, id: &str) -> (String, bool) {
    let mut groups: Vec<String> = Vec::new();
    let mut cc_order: Vec<String> = Vec::new();
    // (group, cc index, doc, bar)
    let mut bars: Vec<(usize, usize, usize, Bar)> = Vec::new();
    let mut counts: Vec<usize> = Vec::new();
    let multi_flow = docs
        .iter()
        .any(|d| d.runs.iter().any(|r| r.flows.len() > 1));
    for (di, doc) in docs.iter().enumerate() {
        for (params, runs) in points(doc) {
            let first = &doc.runs[runs[0]];
            let g = index_of(&mut groups, point_label(doc, &params));
            for cc in ccs_of(first) {
                let ci = index_of(&mut cc_order, cc.clone());
                let vals: Vec<f64> = runs
                    .iter()
                    .map(|&i| goodput_of(&doc.runs[i], &cc))
                    .collect();
                let (med, lo, hi) = median_min_max(&vals);
                let refv = if di == 0 {
                    reference_for(first, &cc)
                } else {
                    None
                };
                let tip = bar_tip(
                    &format!("{} · {cc} · {}", groups[g].replace('\n', " · "), labels[di]),
                    &vals,
                    refv.map(|r| (r, reference_text(first, r))),
                );
                counts.push(vals.len());
                bars.push((
                    g,
                    ci,
                    di,
                    Bar {
                        group: g,
                        color: mix(&pal.color(&cc), DOC_SHADE[di % DOC_SHADE.len()]),
                        series: format!("{cc} · {}", labels[di]),
                        value: med,
                        spread: (vals.len() > 1).then_some((lo, hi)),
                        reference: refv,
                        label: units::rate(med),
                        tip,
                    },
                ));
            }
        }
    }
    bars.sort_by_key(|b| (b.0, b.1, b.2));
    let bars: Vec<Bar> = bars.into_iter().map(|b| b.3).collect();
    let has_ref = bars.iter().any(|b| b.reference.is_some());
    let title = format!(
        "{}: goodput per run{}, {} documents{}{}",
        docs[0].scenario,
        if multi_flow {
            " (sum over each controller's flows)"
        } else {
            ""
        },
        docs.len(),
        if has_ref { " vs published" } else { "" },
        seeds_note(counts.into_iter())
    );
    let wide = bars.len() > 10;
    let c = BarChart {
        title,
        y: Axis::new("goodput", Unit::Rate),
        groups,
        x_label: String::new(),
        width: if wide {
            (140.0 + 80.0 * bars.len() as f64).min(1300.0)
        } else {
            640.0
        },
        height: if wide { 380.0 } else { 320.0 },
        bars,
    };
    (plot::bar_chart(&c, id), wide)
}

/// (B - A) / |A| as text, with a class: within 10% "ok", else "off".
fn diff(a: f64, b: f64) -> (String, &'static str) {
    if a == 0.0 {
        if b == 0.0 {
            ("0%".into(), "ok")
        } else {
            ("n/a (A=0)".into(), "muted")
        }
    } else {
        let d = (b - a) / a.abs();
        (
            format!("{:+.1}%", d * 100.0),
            if d.abs() <= 0.1 + 1e-9 { "ok" } else { "off" },
        )
    }
}

type FlowMetric = (
    &'static str,
    fn(&FlowResult) -> Option<f64>,
    fn(f64) -> String,
);

/// One row per lined-up run and flow; per metric, each document's value and the difference
/// of each against the first (A).
fn table(out: &mut String, docs: &[&ResultsDoc], rows: &[Vec<Option<usize>>], pal: &Palette) {
    let n = docs.len();
    let run_of = |row: &Vec<Option<usize>>, d: usize| row[d].map(|r| &docs[d].runs[r]);
    let first_run = |row: &Vec<Option<usize>>| {
        row.iter()
            .enumerate()
            .find_map(|(d, r)| r.map(|r| &docs[d].runs[r]))
            .expect("a row has a run")
    };
    let keys: Vec<String> = rows
        .first()
        .map(|r| {
            first_run(r)
                .params
                .keys()
                .filter(|k| !is_cc_key(k))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let has_fct = docs.iter().any(|d| {
        d.runs
            .iter()
            .any(|r| r.flows.iter().any(|f| f.fct_s.is_some()))
    });
    let mut metrics: Vec<FlowMetric> = vec![
        ("goodput", |f| Some(f.goodput_bps), units::rate),
        ("retransmits", |f| Some(f.retrans_ratio), units::pct),
        ("RTT p50", |f| Some(f.rtt_ms.p50), units::ms),
        ("RTT p99", |f| Some(f.rtt_ms.p99), units::ms),
    ];
    if has_fct {
        metrics.push(("FCT", |f| f.fct_s, units::secs));
    }
    let cols = 2 * n - 1;
    out.push_str("<div class=\"tablewrap\"><table class=\"summary overlay\"><thead><tr>");
    let _ = write!(out, "<th rowspan=\"2\">#</th>");
    for k in &keys {
        let _ = write!(out, "<th rowspan=\"2\">{}</th>", esc(&key_name(k)));
    }
    out.push_str("<th rowspan=\"2\">seed</th><th rowspan=\"2\">flow</th><th rowspan=\"2\">cc</th>");
    for (m, _, _) in &metrics {
        let _ = write!(out, "<th class=\"grp\" colspan=\"{cols}\">{m}</th>");
    }
    // Jain's index per run, when runs have several flows.
    let has_jain = docs
        .iter()
        .any(|d| d.runs.iter().any(|r| r.flows.len() > 1));
    if has_jain {
        let _ = write!(out, "<th class=\"grp\" colspan=\"{cols}\">Jain</th>");
    }
    let _ = write!(
        out,
        "<th class=\"grp\" colspan=\"{cols}\">link used</th></tr><tr>"
    );
    for _ in 0..=metrics.len() + has_jain as usize {
        for d in 0..n {
            let _ = write!(out, "<th class=\"n\">{}</th>", letter(d));
        }
        for d in 1..n {
            let _ = write!(
                out,
                "<th class=\"n\" title=\"({b} − A) / |A|\">Δ {b}</th>",
                b = letter(d)
            );
        }
    }
    out.push_str("</tr></thead><tbody>");
    for (k, row) in rows.iter().enumerate() {
        let base = first_run(row);
        // Flows by id, in the order of the first document that has them.
        let mut ids: Vec<u32> = Vec::new();
        for d in 0..n {
            if let Some(r) = run_of(row, d) {
                for f in &r.flows {
                    if !ids.contains(&f.id) {
                        ids.push(f.id);
                    }
                }
            }
        }
        let nf = ids.len().max(1);
        let seeds: Vec<String> = (0..n)
            .map(|d| run_of(row, d).map_or("–".into(), |r| r.seed.to_string()))
            .collect();
        let seed = if seeds.iter().all(|s| *s == seeds[0]) {
            seeds[0].clone()
        } else {
            seeds.join(" / ")
        };
        for (j, id) in ids.iter().enumerate() {
            out.push_str(if j == 0 {
                "<tr class=\"runstart\">"
            } else {
                "<tr>"
            });
            if j == 0 {
                let _ = write!(out, "<td rowspan=\"{nf}\">{}</td>", k + 1);
                for key in &keys {
                    let _ = write!(
                        out,
                        "<td rowspan=\"{nf}\">{}</td>",
                        esc(&units::param_in(&base.params, key))
                    );
                }
                let _ = write!(out, "<td rowspan=\"{nf}\">{}</td>", esc(&seed));
            }
            let flows: Vec<Option<&FlowResult>> = (0..n)
                .map(|d| run_of(row, d).and_then(|r| r.flows.iter().find(|f| f.id == *id)))
                .collect();
            let mut ccs: Vec<&str> = flows.iter().flatten().map(|f| f.cc.as_str()).collect();
            ccs.dedup();
            let _ = write!(
                out,
                "<td>{id}</td><td><span class=\"dot\" style=\"background:{}\"></span>{}</td>",
                pal.color(ccs.first().copied().unwrap_or("")),
                esc(&ccs.join(" / "))
            );
            for (_, get, fmt) in &metrics {
                let vals: Vec<Option<f64>> = flows.iter().map(|f| f.and_then(get)).collect();
                cells(out, &vals, *fmt, "");
            }
            if j == 0 && has_jain {
                let vals: Vec<Option<f64>> =
                    (0..n).map(|d| run_of(row, d).map(|r| r.jain)).collect();
                cells(
                    out,
                    &vals,
                    |v| format!("{v:.3}"),
                    &format!(" rowspan=\"{nf}\""),
                );
            }
            if j == 0 {
                // A real path's utilisation is unknown ("–"), not zero.
                let vals: Vec<Option<f64>> = (0..n)
                    .map(|d| {
                        run_of(row, d)
                            .filter(|_| crate::host::link_known(docs[d]))
                            .map(|r| r.link.utilization)
                    })
                    .collect();
                cells(out, &vals, units::pct, &format!(" rowspan=\"{nf}\""));
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div>");
}

/// Each document's value, then each difference against the first.
fn cells(out: &mut String, vals: &[Option<f64>], fmt: fn(f64) -> String, attr: &str) {
    for v in vals {
        match v {
            Some(v) => {
                let _ = write!(out, "<td class=\"n\"{attr}>{}</td>", esc(&fmt(*v)));
            }
            None => {
                let _ = write!(out, "<td class=\"n muted\"{attr}>–</td>");
            }
        }
    }
    for v in &vals[1..] {
        match (vals[0], v) {
            (Some(a), Some(b)) => {
                let (t, cls) = diff(a, *b);
                let _ = write!(out, "<td class=\"n d {cls}\"{attr}>{t}</td>");
            }
            _ => {
                let _ = write!(out, "<td class=\"n muted\"{attr}>–</td>");
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run_row(
    page: &mut Page,
    k: usize,
    docs: &[&ResultsDoc],
    labels: &[&str],
    row: &[Option<usize>],
    pal: &Palette,
    per_line: usize,
    open: bool,
    lazy: bool,
    name: &str,
) {
    let present: Vec<(usize, &RunResult)> = row
        .iter()
        .enumerate()
        .filter_map(|(d, r)| r.map(|r| (d, &docs[d].runs[r])))
        .collect();
    let base = present[0].1;
    let mut head = format!("#{}", k + 1);
    let label = params_label(base, &|_| false);
    if !label.is_empty() {
        head.push_str(&format!(" · {label}"));
    }
    let seeds: Vec<u64> = present.iter().map(|(_, r)| r.seed).collect();
    if seeds.iter().all(|s| *s == seeds[0]) {
        head.push_str(&format!(" · seed {}", seeds[0]));
    } else {
        head.push_str(&format!(
            " · seeds {} (matched by params; seeds differ)",
            present
                .iter()
                .map(|(d, r)| format!("{} {}", letter(*d), r.seed))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let gp: Vec<String> = present
        .iter()
        .map(|(d, r)| {
            format!(
                "{}: {}",
                letter(*d),
                ccs_of(r)
                    .iter()
                    .map(|cc| format!("{cc} {}", units::rate(goodput_of(r, cc))))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
        .collect();
    let missing: Vec<String> = (0..docs.len())
        .filter(|d| row[*d].is_none())
        .map(|d| format!("not in {}", letter(d)))
        .collect();
    let _ = write!(
        page.body,
        "<details class=\"run\"{}><summary><strong>{}</strong> <span class=\"muted\">— {}{}</span></summary>",
        if open { " open" } else { "" },
        esc(&head),
        esc(&gp.join("; ")),
        if missing.is_empty() {
            String::new()
        } else {
            format!(" · {}", esc(&missing.join(", ")))
        }
    );
    let refs: Vec<RunRef> = present
        .iter()
        .filter(|(_, r)| r.series.is_some())
        .map(|(d, r)| RunRef {
            run: r,
            label: Some(labels[*d]),
            dash: dash(*d),
            link_known: crate::host::link_known(docs[*d]),
        })
        .collect();
    if refs.is_empty() {
        page.body.push_str("<p class=\"muted\">No time series for this run (results.json without series/run-N.csv).</p></details>");
        return;
    }
    if refs.len() < present.len() {
        page.body
            .push_str("<p class=\"muted\">Some documents have no time series for this run.</p>");
    }
    let (title, sync) = run_names(name, k + 1, &run_tag(docs[present[0].0], base));
    let charts = run_charts(&refs, pal, &title);
    ts_figures(page, charts, per_line, &sync, &sync, lazy && !open);
    page.body.push_str("</details>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};

    fn run(loss: f64, seed: u64) -> RunBuilder {
        RunBuilder::new().seed(seed).param("link.loss", loss)
    }

    #[test]
    fn runs_line_up_by_params_and_seed_then_by_params() {
        let mk = |runs: Vec<RunBuilder>| {
            DocBuilder::new()
                .cclab("0")
                .scenario("s")
                .runs(runs)
                .build()
        };
        let a = mk(vec![run(0.0, 1), run(0.0, 2), run(0.01, 1)]);
        // Same point, seeds swapped; one with another seed; one point A lacks.
        let b = mk(vec![run(0.0, 2), run(0.01, 7), run(0.0, 1), run(0.1, 1)]);
        let rows = align(&[&a, &b]);
        assert_eq!(
            rows,
            vec![
                vec![Some(0), Some(2)],
                vec![Some(1), Some(0)],
                vec![Some(2), Some(1)],
                vec![None, Some(3)],
            ]
        );
    }

    #[test]
    fn differences_against_the_first() {
        assert_eq!(diff(100.0, 105.0), ("+5.0%".to_string(), "ok"));
        assert_eq!(diff(100.0, 80.0).1, "off");
        assert_eq!(diff(0.0, 1.0).0, "n/a (A=0)");
    }
}
