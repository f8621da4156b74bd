//! The report's tables: the unfinished-flows warning, the per-seed table and the summary
//! table (per run and controller, with published references).

use super::lookup::{
    ccs_of, is_cc_key, key_name, median_min_max, reference_for, reference_text, share_of,
    total_goodput, unfinished, unfinished_note,
};
use super::palette::{cc_title, mix, Palette};
use crate::plot::esc;
use crate::table::{flow_agg, run_agg};
use crate::units;
use cclab_results::metrics::{
    DROPS_AQM, DROPS_BUFFER, DROPS_POLICER, DROPS_RANDOM, FCT, GOODPUT, JAIN, LINK_UTILIZATION,
    QUEUE_P99, RETRANSMITS, RETRANS_RATIO, RTT_P50, RTT_P99, THROUGHPUT,
};
use cclab_results::ResultsDoc;
use std::fmt::Write;

/// A warning over a document's charts when sized flows did not finish: their goodput is
/// over the part they sent, and they have no FCT.
pub(crate) fn unfinished_warning(out: &mut String, doc: &ResultsDoc) {
    let open: Vec<String> = doc
        .runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            unfinished(r).map(move |f| format!("#{} flow {} ({})", i + 1, f.id, f.cc))
        })
        .collect();
    if open.is_empty() {
        return;
    }
    let shown: Vec<&str> = open.iter().take(8).map(String::as_str).collect();
    let _ = write!(
        out,
        "<p class=\"warn unfinished\">⚠ {} sized flow{} unfinished (did not complete in the run; no FCT, goodput over what was sent): {}{}</p>",
        open.len(),
        if open.len() == 1 { "" } else { "s" },
        esc(&shown.join(", ")),
        if open.len() > shown.len() { ", ..." } else { "" }
    );
}

/// With `--repeat`: one row per matrix point and flow, median [min-max] over the seeds.
pub(crate) fn seeds_table(out: &mut String, doc: &ResultsDoc) {
    let groups = crate::table::groups(doc);
    if !groups.iter().any(|g| g.len() > 1) {
        return;
    }
    let keys: Vec<String> = doc
        .runs
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    out.push_str("<h3>Median over seeds [min-max]</h3><div class=\"tablewrap\"><table class=\"summary seeds\"><thead><tr><th>#</th>");
    for k in &keys {
        let _ = write!(out, "<th>{}</th>", esc(&key_name(k)));
    }
    let has_ref = doc.runs.iter().any(|r| {
        r.reference
            .as_ref()
            .is_some_and(|v| v.get("goodput_bps").is_some())
    });
    let has_jain = doc.runs.iter().any(|r| r.flows.len() > 1);
    let multi_cc = doc.runs.iter().any(|r| ccs_of(r).len() > 1);
    let _ = write!(
        out,
        "<th class=\"n\">seeds</th><th>flow</th><th>cc</th><th class=\"n\">{}</th>",
        GOODPUT.heading
    );
    if has_ref {
        out.push_str("<th class=\"n\">published</th><th class=\"n\">cclab / published</th>");
    }
    if multi_cc {
        out.push_str("<th class=\"n\" title=\"the flow's controller's share of the run's goodput\">cc share</th>");
    }
    // The retransmit ratio under the retransmits' heading.
    for m in [&RETRANSMITS, &RTT_P50, &RTT_P99, &FCT] {
        let _ = write!(out, "<th class=\"n\">{}</th>", m.heading);
    }
    if has_jain {
        let _ = write!(out, "<th class=\"n\">{}</th>", JAIN.heading);
    }
    out.push_str("</tr></thead><tbody>");
    for (i, g) in groups.iter().enumerate() {
        let run = g[0];
        for (j, f) in run.flows.iter().enumerate() {
            let col = |pick: &dyn Fn(&cclab_results::FlowResult) -> f64| -> Vec<f64> {
                g.iter().map(|r| pick(&r.flows[j])).collect()
            };
            out.push_str(if j == 0 {
                "<tr class=\"runstart\">"
            } else {
                "<tr>"
            });
            let _ = write!(
                out,
                "<td>{}</td>",
                if j == 0 {
                    (i + 1).to_string()
                } else {
                    String::new()
                }
            );
            for k in &keys {
                let v = if j == 0 {
                    units::param_in(&run.params, k)
                } else {
                    String::new()
                };
                let _ = write!(out, "<td>{}</td>", esc(&v));
            }
            let finished = g.iter().any(|r| FCT.of_flow(&r.flows[j]).is_some());
            let open = g
                .iter()
                .filter(|r| r.flows[j].size_bytes.is_some() && r.flows[j].fct_s.is_none())
                .count();
            let _ = write!(
                out,
                "<td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>",
                g.len(),
                f.id,
                esc(&f.cc),
                esc(&flow_agg(g, j, &GOODPUT)),
            );
            if has_ref {
                // The published figure against the median (a controller's only flow).
                let r = reference_for(run, &f.cc)
                    .filter(|_| run.flows.iter().filter(|g| g.cc == f.cc).count() == 1);
                match r {
                    Some(r) => {
                        let (med, _, _) = median_min_max(&col(&|f| f.goodput_bps));
                        let _ = write!(
                            out,
                            "<td class=\"n\">{}</td>{}",
                            esc(&reference_text(run, r)),
                            ratio_cell(med / r)
                        );
                    }
                    None => {
                        out.push_str("<td class=\"n muted\">–</td><td class=\"n muted\">–</td>")
                    }
                }
            }
            if multi_cc {
                let shares: Vec<f64> = g.iter().filter_map(|r| share_of(r, &f.cc)).collect();
                let _ = write!(
                    out,
                    "<td class=\"n\">{}</td>",
                    if shares.is_empty() {
                        "–".to_string()
                    } else {
                        esc(&crate::table::agg(shares, units::pct))
                    }
                );
            }
            let fct = match (finished, open) {
                (false, 0) => "–".to_string(),
                (false, _) => "unfinished".to_string(),
                (true, 0) => esc(&flow_agg(g, j, &FCT)),
                (true, k) => format!(
                    "{} <span class=\"off\">{k} unfinished</span>",
                    esc(&flow_agg(g, j, &FCT))
                ),
            };
            let _ = write!(
                out,
                "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n{}\"{}>{fct}</td>",
                esc(&flow_agg(g, j, &RETRANS_RATIO)),
                esc(&flow_agg(g, j, &RTT_P50)),
                esc(&flow_agg(g, j, &RTT_P99)),
                if open > 0 { " unfinished" } else { "" },
                if open > 0 {
                    format!(" title=\"unfinished in {open} of {} seeds (sized flows that did not complete in the run; not in the FCT)\"", g.len())
                } else {
                    String::new()
                },
            );
            if has_jain {
                if j == 0 {
                    let _ = write!(out, "<td class=\"n\">{}</td>", esc(&run_agg(g, &JAIN)));
                } else {
                    out.push_str("<td></td>");
                }
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div><h3>Every run</h3>");
}

pub(crate) fn summary_table(out: &mut String, doc: &ResultsDoc, pal: &Palette) {
    // Controllers show in the flow rows' cc column.
    let keys: Vec<String> = doc
        .runs
        .first()
        .map(|r| r.params.keys().filter(|k| !is_cc_key(k)).cloned().collect())
        .unwrap_or_default();
    let has_ref = doc.runs.iter().any(|r| {
        r.reference
            .as_ref()
            .is_some_and(|v| v.get("goodput_bps").is_some())
    });
    let has_fct = doc.runs.iter().any(|r| {
        r.flows
            .iter()
            .any(|f| f.size_bytes.is_some() || f.fct_s.is_some())
    });
    let multi_seed = doc.runs.iter().any(|r| r.seed != doc.runs[0].seed);
    out.push_str("<div class=\"tablewrap\"><table class=\"summary\"><thead><tr><th>#</th>");
    for k in &keys {
        let _ = write!(out, "<th>{}</th>", esc(&key_name(k)));
    }
    if multi_seed {
        out.push_str("<th>seed</th>");
    }
    let _ = write!(
        out,
        "<th>flow</th><th>cc</th><th class=\"n\">{}</th>",
        GOODPUT.heading
    );
    if has_ref {
        out.push_str("<th class=\"n\">published</th><th class=\"n\">cclab / published</th>");
    }
    // Retransmits with their ratio in one cell.
    for m in [&THROUGHPUT, &RETRANSMITS, &RTT_P50, &RTT_P99] {
        let _ = write!(out, "<th class=\"n\">{}</th>", m.heading);
    }
    if has_fct {
        let _ = write!(out, "<th class=\"n\">{}</th>", FCT.heading);
    }
    // The link's columns: not for a real path (unknown there, not zero). Drops by cause: the
    // AQM's and a policer's columns only when some run has them.
    let link_known = crate::host::link_known(doc);
    let has_aqm = doc.runs.iter().any(|r| r.link.drops_aqm > 0);
    let has_pol = doc.runs.iter().any(|r| r.link.drops_policer > 0);
    let (drop_head, drop_title) = match (has_aqm, has_pol) {
        (false, false) => ("drops buf/rand", "packets dropped by the full buffer / by the random-loss model"),
        (true, false) => ("drops buf/rand/aqm", "packets dropped by the full buffer / by the random-loss model / by the AQM"),
        (false, true) => ("drops buf/rand/pol", "packets dropped by the full buffer / by the random-loss model / by the policer"),
        (true, true) => ("drops buf/rand/aqm/pol", "packets dropped by the full buffer / by the random-loss model / by the AQM / by the policer"),
    };
    // Fairness: Jain's index per run with several flows; each controller's share of the
    // run's goodput when runs mix controllers.
    let has_jain = doc.runs.iter().any(|r| r.flows.len() > 1);
    let share_ccs: Vec<String> = if doc.runs.iter().any(|r| ccs_of(r).len() > 1) {
        let mut v: Vec<String> = Vec::new();
        for r in &doc.runs {
            for cc in ccs_of(r) {
                if !v.contains(&cc) {
                    v.push(cc);
                }
            }
        }
        v
    } else {
        Vec::new()
    };
    if has_jain {
        let _ = write!(out, "<th class=\"n\" title=\"Jain's fairness index over the flows' goodputs: 1 = equal shares, 1/n = one flow has everything\">{}</th>", JAIN.heading);
    }
    for cc in &share_ccs {
        let _ = write!(
            out,
            "<th class=\"n share\" title=\"{cc}'s flows' goodput over all flows' goodput\">{} share</th>",
            esc(cc)
        );
    }
    if link_known {
        let _ = write!(
            out,
            "<th class=\"n\">{}</th><th class=\"n\">{}</th><th class=\"n\" title=\"{drop_title}\">{drop_head}</th>",
            LINK_UTILIZATION.heading,
            QUEUE_P99.heading
        );
    }
    out.push_str("</tr></thead><tbody>");
    for (ri, run) in doc.runs.iter().enumerate() {
        let n = run.flows.len().max(1);
        for (j, f) in run.flows.iter().enumerate() {
            let first = j == 0;
            out.push_str(if first {
                "<tr class=\"runstart\">"
            } else {
                "<tr>"
            });
            if first {
                let _ = write!(out, "<td rowspan=\"{n}\">{}</td>", ri + 1);
                for k in &keys {
                    let v = units::param_in(&run.params, k);
                    let _ = write!(out, "<td rowspan=\"{n}\">{}</td>", esc(&v));
                }
                if multi_seed {
                    let _ = write!(out, "<td rowspan=\"{n}\">{}</td>", run.seed);
                }
            }
            let frac = if run.link.rate_bps > 0.0 {
                (f.goodput_bps / run.link.rate_bps).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let col = pal.color(&f.cc);
            let mut tip = Vec::new();
            if link_known {
                tip.push(format!("{:.1}% of the link rate", frac * 100.0));
            }
            if n > 1 {
                tip.push(format!(
                    "{} of the run's goodput",
                    units::pct(f.goodput_bps / total_goodput(run).max(1e-9))
                ));
            }
            let _ = write!(
                out,
                "<td>{}</td><td title=\"{}\"><span class=\"dot\" style=\"background:{col}\"></span>{}</td><td class=\"n gp\" style=\"--f:{:.1}%;--c:{}\" title=\"{}\">{}</td>",
                f.id,
                esc(&cc_title(&f.cc)),
                esc(&f.cc),
                frac * 100.0,
                mix(&col, 0.78),
                esc(&tip.join("; ")),
                units::flow_metric(&GOODPUT, f)
            );
            if has_ref {
                let r = reference_for(run, &f.cc)
                    .filter(|_| run.flows.iter().filter(|g| g.cc == f.cc).count() == 1);
                match r {
                    Some(r) => {
                        let ratio = f.goodput_bps / r;
                        let own = reference_text(run, r);
                        let cell = match own.split_once(" (") {
                            Some((bits, rest)) => format!(
                                "{} <span class=\"muted\">{}</span>",
                                esc(bits),
                                esc(rest.trim_end_matches(')'))
                            ),
                            None => esc(&own),
                        };
                        let _ = write!(out, "<td class=\"n\">{cell}</td>{}", ratio_cell(ratio));
                    }
                    None => {
                        out.push_str("<td class=\"n muted\">–</td><td class=\"n muted\">–</td>")
                    }
                }
            }
            let _ = write!(
                out,
                "<td class=\"n\">{}</td><td class=\"n\">{} <span class=\"muted\">({})</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
                units::flow_metric(&THROUGHPUT, f),
                units::flow_metric(&RETRANSMITS, f),
                units::flow_metric(&RETRANS_RATIO, f),
                units::flow_metric(&RTT_P50, f),
                units::flow_metric(&RTT_P99, f)
            );
            if has_fct {
                match (f.fct_s, f.size_bytes) {
                    (Some(t), _) => {
                        let _ = write!(out, "<td class=\"n\">{}</td>", units::of(FCT.kind, t));
                    }
                    (None, Some(_)) => {
                        let _ = write!(
                            out,
                            "<td class=\"n off unfinished\" title=\"{}\">unfinished</td>",
                            esc(&unfinished_note(run, f))
                        );
                    }
                    (None, None) => out.push_str("<td class=\"n muted\">–</td>"),
                }
            }
            if first && has_jain {
                let _ = write!(
                    out,
                    "<td class=\"n jain\" rowspan=\"{n}\">{}</td>",
                    units::run_metric(&JAIN, run)
                );
            }
            if first {
                for cc in &share_ccs {
                    match share_of(run, cc).filter(|_| run.flows.iter().any(|f| f.cc == *cc)) {
                        Some(sh) => {
                            let _ = write!(
                                out,
                                "<td class=\"n share\" rowspan=\"{n}\">{}</td>",
                                units::pct(sh)
                            );
                        }
                        None => {
                            let _ = write!(out, "<td class=\"n muted\" rowspan=\"{n}\">–</td>");
                        }
                    }
                }
            }
            if first && link_known {
                let mut causes = vec![&DROPS_BUFFER, &DROPS_RANDOM];
                if has_aqm {
                    causes.push(&DROPS_AQM);
                }
                if has_pol {
                    causes.push(&DROPS_POLICER);
                }
                let drops: Vec<String> = causes.iter().map(|m| units::run_metric(m, run)).collect();
                let _ = write!(
                    out,
                    "<td class=\"n\" rowspan=\"{n}\">{}</td><td class=\"n\" rowspan=\"{n}\">{}</td><td class=\"n\" rowspan=\"{n}\">{}</td>",
                    units::run_metric(&LINK_UTILIZATION, run),
                    units::run_metric(&QUEUE_P99, run),
                    drops.join(" / ")
                );
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div>");
}

/// cclab / published as a table cell: green within x1.5 either way (the terminal's
/// [`crate::units::within`]), red beyond.
fn ratio_cell(ratio: f64) -> String {
    let cls = if crate::units::within(ratio) {
        "ok"
    } else {
        "off"
    };
    format!("<td class=\"n ratio {cls}\" title=\"cclab / published\">×{ratio:.2}</td>")
}
