//! The HTML report: one self-contained page (inline CSS, inline SVG plots, a few lines of
//! inline JS for the export buttons and a self-check), no network access needed.
//!
//! Per results document (scenario): a headline chart (goodput per run and controller, the
//! published figure as a marker), a summary table, plots against each swept numeric parameter
//! (one line per controller, min–max band over seeds), and per run the flows table and time
//! series plots (goodput, cwnd + inflight, smoothed RTT, bottleneck queue). A measurement of a
//! real host has no link figures (unknown on a real path) and shows its fitted path and
//! prediction instead ([`crate::host`]).
//!
//! Here: the options and the page's assembly, document by document; `palette` controller
//! colours; `lookup` lookups over documents shared by the sections; `page` the page
//! shell with its CSS and JS; `tables` the summary and per-seed tables; `sweep` the
//! headline and sweep charts; `dualq` the L4S view of a dual-queue bottleneck; `run` one
//! run's section and charts.

mod dualq;
mod lookup;
mod overlay;
mod page;
mod palette;
mod point;
mod run;
mod sweep;
mod tables;
#[cfg(test)]
mod tests;
mod tradeoff;

pub use lookup::key_name;
pub(crate) use lookup::{
    bar_tip, ccs_of, goodput_of, index_of, is_cc_key, median_min_max, params_label, point_label,
    points, reference_for, reference_text, run_names, run_tag, seeds_note, slug,
};
pub(crate) use page::{shell, Page};
pub(crate) use palette::mix;
pub use palette::Palette;
pub(crate) use run::{run_charts, ts_figures, RunRef};
pub(crate) use sweep::matrix_charts;
pub(crate) use tables::unfinished_warning;

use page::origin_note;
use run::run_section;
use sweep::headline;
use tables::{seeds_table, summary_table};

use crate::load::Source;
use crate::plot::{self, esc};
use std::fmt::Write;

/// Report options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Page title (default: "cclab report: <scenarios>").
    pub title: Option<String>,
    /// Upper bound on the number of points drawn, summed over every time-series line of the
    /// page; each line gets an equal share (between 150 and 1000 points), min/max-decimated.
    pub point_budget: usize,
    /// A document of up to this many runs shows every run's section expanded; one of more
    /// runs (a sweep) expands its first [`OPEN_OF_MANY`] and collapses the rest.
    pub open_runs: usize,
    /// Collapsed run sections carry only their charts' data, drawn when opened (no static
    /// SVG: a sweep's page stays light). Off for the chart files (`--svg`/`--png`), which
    /// need every chart drawn.
    pub lazy: bool,
    /// Draw every document in the same charts (an overlay), whatever its scenario's name;
    /// by default only documents of the same scenario share charts.
    pub overlay: bool,
    /// One label per document, in order (default: its backend and directory).
    pub labels: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            title: None,
            point_budget: 250_000,
            open_runs: 12,
            lazy: true,
            overlay: false,
            labels: Vec::new(),
        }
    }
}

/// Runs expanded in a document of more than [`Options::open_runs`] runs.
pub const OPEN_OF_MANY: usize = 3;

impl Options {
    /// Whether run `ri` of `n` starts expanded.
    pub(crate) fn open(&self, ri: usize, n: usize) -> bool {
        if n <= self.open_runs {
            true
        } else {
            ri < OPEN_OF_MANY.min(self.open_runs)
        }
    }
}

/// Which documents share a chart: with `overlay`, all of them; else those with the same
/// scenario name. Groups in order of first appearance.
pub fn overlay_groups(sources: &[Source], overlay: bool) -> Vec<Vec<usize>> {
    if overlay && !sources.is_empty() {
        return vec![(0..sources.len()).collect()];
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|g| sources[g[0]].doc.scenario == s.doc.scenario)
        {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups
}

/// A document's label: its backend and where it was read from.
pub fn default_label(s: &Source, i: usize) -> String {
    match &s.origin {
        Some(o) => format!("{} · {}", s.doc.backend, o.display()),
        None => format!("{} · document {}", s.doc.backend, i + 1),
    }
}

/// The labels of the documents: `labels` when there is one per document, else the defaults.
pub fn labels_for(sources: &[Source], labels: &[String]) -> Vec<String> {
    if labels.len() == sources.len() {
        labels.to_vec()
    } else {
        sources
            .iter()
            .enumerate()
            .map(|(i, s)| default_label(s, i))
            .collect()
    }
}

/// Render the report page for one or more results documents.
pub fn render(sources: &[Source], opts: &Options) -> String {
    let pal = Palette::new(sources.iter().flat_map(|s| {
        s.doc
            .runs
            .iter()
            .flat_map(|r| r.flows.iter().map(|f| f.cc.as_str()))
    }));
    // Points per time-series line.
    let nlines: usize = sources
        .iter()
        .flat_map(|s| &s.doc.runs)
        .filter(|r| r.series.is_some())
        .map(|r| r.flows.len() * 4 + 1)
        .sum();
    let per_line = (opts.point_budget / nlines.max(1)).clamp(150, 1000);
    let mut page = Page::new();
    let names: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for s in sources {
            if !v.contains(&s.doc.scenario) {
                v.push(s.doc.scenario.clone());
            }
        }
        v
    };
    let title = opts
        .title
        .clone()
        .unwrap_or_else(|| format!("cclab report: {}", names.join(", ")));
    let groups = overlay_groups(sources, opts.overlay);
    let labels = labels_for(sources, &opts.labels);
    if sources.len() > 1 {
        page.body.push_str("<nav><strong>Contents</strong><ol>");
        for (gi, g) in groups.iter().enumerate() {
            if let [i] = g[..] {
                let s = &sources[i];
                let _ = write!(
                    page.body,
                    "<li><a href=\"#doc{i}\">{}</a> <span class=\"badge\">{}</span>{}</li>",
                    esc(&s.doc.scenario),
                    esc(&s.doc.backend),
                    origin_note(s)
                );
            } else {
                let _ = write!(
                    page.body,
                    "<li><a href=\"#overlay{gi}\">{}</a> <span class=\"badge\">overlay of {}</span> <span class=\"muted\">{}</span></li>",
                    esc(&sources[g[0]].doc.scenario),
                    g.len(),
                    esc(&g.iter().map(|&i| labels[i].as_str()).collect::<Vec<_>>().join(" vs "))
                );
            }
        }
        page.body.push_str("</ol></nav>");
    }
    for (gi, g) in groups.iter().enumerate() {
        if let [i] = g[..] {
            doc_section(&mut page, i, &sources[i], &pal, per_line, opts);
        } else {
            let members: Vec<(&Source, &str)> = g
                .iter()
                .map(|&i| (&sources[i], labels[i].as_str()))
                .collect();
            overlay::section(&mut page, gi, &members, &pal, per_line, opts);
        }
    }
    let version = sources
        .first()
        .map(|s| s.doc.cclab.clone())
        .unwrap_or_default();
    let meta = format!(
        "{n} results document{pl} · {runs} runs · cclab {v} · every plot can be downloaded as SVG or PNG (buttons under it){ia}",
        v = esc(&version),
        n = sources.len(),
        pl = if sources.len() == 1 { "" } else { "s" },
        runs = sources.iter().map(|s| s.doc.runs.len()).sum::<usize>(),
        ia = if page.interactive > 0 {
            "; time series: drag to zoom, Ctrl+wheel to zoom, Shift+drag to pan, double-click to reset, hover for values, click a legend entry to hide its line"
        } else {
            ""
        }
    );
    shell(&title, &meta, &version, &page, "cclab report DIR")
}

fn doc_section(
    page: &mut Page,
    di: usize,
    s: &Source,
    pal: &Palette,
    per_line: usize,
    opts: &Options,
) {
    let doc = &s.doc;
    let _ = write!(
        page.body,
        "<section class=\"doc\" id=\"doc{di}\"><h2>{} <span class=\"badge\">{} backend</span></h2>",
        esc(&doc.scenario),
        esc(&doc.backend)
    );
    if let Some(d) = &s.description {
        let _ = write!(page.body, "<p class=\"desc\">{}</p>", esc(d));
    }
    // The path as run (from the resolved values, overrides marked), whatever the description says.
    if let Some(path) = crate::describe::path_line(doc) {
        let _ = write!(page.body, "<p class=\"path\">{}", esc(&path));
        if let Some(o) = crate::describe::overrides_line(doc) {
            let _ = write!(page.body, "<br><span class=\"muted\">{}</span>", esc(&o));
        }
        page.body.push_str("</p>");
    }
    let mut facts = Vec::new();
    if let Some(f) = &s.file {
        facts.push(format!("scenario <code>{}</code>", esc(f)));
    }
    if let Some(h) = doc
        .source
        .as_ref()
        .map(|s| &s.sha256)
        .filter(|h| h.len() >= 12)
    {
        facts.push(format!(
            "<span title=\"SHA-256 of the scenario file: {}\">sha256 {}</span>",
            esc(h),
            esc(&h[..12])
        ));
    }
    if let Some(o) = &s.origin {
        facts.push(format!(
            "results <code>{}</code>",
            esc(&o.display().to_string())
        ));
    }
    let seeds: Vec<u64> = {
        let mut v: Vec<u64> = doc.runs.iter().map(|r| r.seed).collect();
        v.sort();
        v.dedup();
        v
    };
    facts.push(format!("{} runs", doc.runs.len()));
    facts.push(format!(
        "seed{} {}",
        if seeds.len() == 1 { "" } else { "s" },
        seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if let Some(src) = doc.runs.iter().find_map(|r| {
        r.reference
            .as_ref()?
            .get("source")?
            .as_str()
            .map(String::from)
    }) {
        facts.push(format!("published figures: {}", esc(&src)));
    }
    let _ = write!(page.body, "<p class=\"facts\">{}</p>", facts.join(" · "));
    if doc.runs.is_empty() {
        page.body.push_str("<p>No runs.</p></section>");
        return;
    }
    unfinished_warning(&mut page.body, doc);
    // At a glance: the headline chart and the metric-vs-parameter charts, then the table.
    let name = slug(&doc.scenario);
    let (svg, wide) = headline(doc, pal, &page.id());
    page.body.push_str("<div class=\"grid\">");
    page.figure(&format!("{name}-goodput"), svg, wide);
    for (what, c) in matrix_charts(&[(doc, None, "")], pal) {
        let id = page.id();
        let svg = plot::line_chart(&c, &id);
        page.figure(&format!("{name}-{what}"), svg, false);
    }
    if let Some(c) = tradeoff::chart(doc, pal) {
        let id = page.id();
        let svg = plot::line_chart(&c, &id);
        page.figure(&format!("{name}-goodput-vs-delay"), svg, false);
    }
    page.body.push_str("</div>");
    seeds_table(&mut page.body, doc);
    summary_table(&mut page.body, doc, pal);
    dualq::section(page, doc, &name);
    crate::host::fit_section(&mut page.body, doc);
    point::section(page, doc, pal, per_line, &name, opts);
    // Runs.
    page.body.push_str("<h3>Runs over time</h3>");
    let _ = write!(
        page.body,
        "<p class=\"muted note\">{}</p>",
        esc(run::GOODPUT_NOTE)
    );
    for (ri, run) in doc.runs.iter().enumerate() {
        run_section(
            page,
            di,
            ri,
            doc,
            run,
            pal,
            per_line,
            opts.open(ri, doc.runs.len()),
            opts.lazy,
            &name,
        );
    }
    page.body.push_str("</section>");
}
