//! The HTML report: one self-contained page (inline CSS, inline SVG plots, a few lines of
//! inline JS for the export buttons and a self-check), no network access needed.
//!
//! Per results document (scenario): a headline chart (goodput per run and controller, the
//! published figure as a marker), a summary table, plots against each swept numeric parameter
//! (one line per controller, min–max band over seeds), and per run the flows table and time
//! series plots (goodput, cwnd + inflight, smoothed RTT, bottleneck queue).

use crate::load::Source;
use crate::plot::{self, esc, Axis, Bar, BarChart, Line, LineChart, Marker, RightAxis, Unit};
use crate::ts::{self, TsChart, TsLine};
use crate::units;
use cclab_results::{ResultsDoc, RunResult};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Report options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Page title (default: "cclab report: <scenarios>").
    pub title: Option<String>,
    /// Upper bound on the number of points drawn, summed over every time-series line of the
    /// page; each line gets an equal share (between 150 and 1000 points), min/max-decimated.
    pub point_budget: usize,
    /// Runs whose section starts expanded (the rest are collapsed `<details>`).
    pub open_runs: usize,
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
            overlay: false,
            labels: Vec::new(),
        }
    }
}

/// Colours per controller, the same in every plot of the page.
pub struct Palette {
    ccs: Vec<(String, String)>,
}

/// Colours of the registered controllers, in registry order (`cclab_core::cc::CONTROLLERS`:
/// reno green, cubic blue, bbr orange, then the next ones); other names (a kernel's own
/// controllers) take the extra colours in order of appearance.
const REGISTERED: &[&str] = &[
    "#2b8a3e", "#1c64d8", "#e8590c", "#9c36b5", "#0c8599", "#c2255c",
];
const EXTRA: &[&str] = &["#5c940d", "#f08c00", "#862e9c", "#1098ad", "#495057"];

/// A registered controller's colour: by its place in the registry (aliases included).
fn registered_color(cc: &str) -> Option<&'static str> {
    let i = cclab_core::cc::CONTROLLERS
        .iter()
        .position(|c| c.answers_to(cc))?;
    REGISTERED.get(i).copied()
}

/// What to call a controller for a reader: the registry's title and summary, if it has one.
pub(crate) fn cc_title(cc: &str) -> String {
    cclab_core::cc::find(cc).map_or_else(
        || format!("{cc} (the kernel's)"),
        |c| format!("{}: {}", c.title, c.summary),
    )
}
pub(crate) const NEUTRAL: &str = "#495057";

impl Palette {
    pub fn new<'a>(ccs: impl IntoIterator<Item = &'a str>) -> Palette {
        let mut p = Palette { ccs: Vec::new() };
        let mut extra = 0;
        for cc in ccs {
            if p.ccs.iter().any(|(c, _)| c == cc) {
                continue;
            }
            let col = registered_color(cc).map(str::to_string).unwrap_or_else(|| {
                extra += 1;
                EXTRA[(extra - 1) % EXTRA.len()].to_string()
            });
            p.ccs.push((cc.to_string(), col));
        }
        p
    }
    pub fn color(&self, cc: &str) -> String {
        self.ccs
            .iter()
            .find(|(c, _)| c == cc)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| NEUTRAL.into())
    }
    /// The `k`-th shade of a controller's colour (flows of one controller in one run).
    pub fn shade(&self, cc: &str, k: usize) -> String {
        const F: &[f64] = &[
            0.0, 0.4, -0.3, 0.62, -0.45, 0.22, -0.15, 0.52, -0.38, 0.72, 0.1, -0.22,
        ];
        mix(&self.color(cc), F[k % F.len()])
    }
}

/// Lighten (f > 0, towards white) or darken (f < 0) a `#rrggbb` colour.
pub(crate) fn mix(hex: &str, f: f64) -> String {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    let ch = |s: u32| -> u8 {
        let c = ((v >> s) & 0xff) as f64;
        let r = if f >= 0.0 {
            c + (255.0 - c) * f
        } else {
            c * (1.0 + f)
        };
        r.round().clamp(0.0, 255.0) as u8
    };
    format!("#{:02x}{:02x}{:02x}", ch(16), ch(8), ch(0))
}

pub(crate) fn is_cc_key(k: &str) -> bool {
    k.rsplit('.').next() == Some("cc")
}

/// A param key as a reader would say it: `loss`, `rtt`, `cc`, `size`, `flows.1.start`.
pub fn key_name(k: &str) -> String {
    if let Some(r) = k.strip_prefix("link.") {
        return r.to_string();
    }
    if let Some(r) = k.strip_prefix("flows.") {
        if !r.contains('.') {
            return r.to_string();
        }
    }
    k.to_string()
}

pub(crate) fn params_label(run: &RunResult, skip: &dyn Fn(&str) -> bool) -> String {
    run.params
        .iter()
        .filter(|(k, _)| !skip(k))
        .map(|(k, v)| format!("{} {}", key_name(k), units::param(k, v)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Controllers of a run, in flow order.
pub(crate) fn ccs_of(run: &RunResult) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for f in &run.flows {
        if !v.contains(&f.cc) {
            v.push(f.cc.clone());
        }
    }
    v
}

/// Sum of the goodputs of a run's flows running `cc`.
pub(crate) fn goodput_of(run: &RunResult, cc: &str) -> f64 {
    run.flows
        .iter()
        .filter(|f| f.cc == cc)
        .map(|f| f.goodput_bps)
        .sum()
}

/// Mean FCT of a run's completed flows running `cc`.
pub(crate) fn fct_of(run: &RunResult, cc: &str) -> Option<f64> {
    let v: Vec<f64> = run
        .flows
        .iter()
        .filter(|f| f.cc == cc)
        .filter_map(|f| f.fct_s)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The published goodput that applies to `cc` in this run.
pub(crate) fn reference_for(run: &RunResult, cc: &str) -> Option<f64> {
    let r = run.reference.as_ref()?;
    let bps = r.get("goodput_bps")?.as_f64()?;
    match r.get("flows.cc").and_then(Value::as_str) {
        Some(c) if !c.eq_ignore_ascii_case(cc) => None,
        Some(_) => Some(bps),
        None => (ccs_of(run).len() == 1).then_some(bps),
    }
}

pub(crate) fn reference_text(run: &RunResult, bps: f64) -> String {
    let unit = run
        .reference
        .as_ref()
        .and_then(|r| r.get("unit"))
        .and_then(Value::as_str)
        .unwrap_or("Mbit/s");
    let own = units::rate_in(bps, unit);
    if own.ends_with("bit/s") {
        own
    } else {
        format!("{} ({own})", units::rate(bps))
    }
}

pub(crate) fn min_max_mean(v: &[f64]) -> (f64, f64, f64) {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi, v.iter().sum::<f64>() / v.len().max(1) as f64)
}

pub(crate) fn slug(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.ends_with('-') {
            o.push('-');
        }
    }
    o.trim_matches('-').to_string()
}

/// Groups runs that differ only in seed: (params, run indices), in first-seen order.
pub(crate) fn points(doc: &ResultsDoc) -> Vec<(serde_json::Map<String, Value>, Vec<usize>)> {
    let mut out: Vec<(serde_json::Map<String, Value>, Vec<usize>)> = Vec::new();
    for (i, r) in doc.runs.iter().enumerate() {
        match out.iter_mut().find(|(p, _)| *p == r.params) {
            Some((_, v)) => v.push(i),
            None => out.push((r.params.clone(), vec![i])),
        }
    }
    out
}

pub(crate) struct Page {
    pub body: String,
    pub nplot: usize,
    /// Figures with an interactive chart (the page then carries uPlot).
    pub interactive: usize,
}

const BUTTONS: &str = "<figcaption><button type=\"button\" data-export=\"svg\" title=\"Download this plot as SVG\">SVG</button><button type=\"button\" data-export=\"png\" title=\"Download this plot as PNG\">PNG</button></figcaption>";

impl Page {
    pub fn new() -> Page {
        Page {
            body: String::new(),
            nplot: 0,
            interactive: 0,
        }
    }
    pub fn figure(&mut self, name: &str, svg: String, wide: bool) {
        self.nplot += 1;
        let _ = write!(
            self.body,
            "<figure class=\"plot{}\" data-name=\"{}\">{svg}{BUTTONS}</figure>",
            if wide { " wide" } else { "" },
            esc(name)
        );
    }
    /// A figure whose static SVG the page's script replaces by an interactive chart of
    /// `data` (see [`crate::ts`]); the SVG stays for export and as the fallback.
    pub fn figure_data(&mut self, name: &str, svg: String, data: &str) {
        self.nplot += 1;
        self.interactive += 1;
        let _ = write!(
            self.body,
            "<figure class=\"plot ts\" data-name=\"{}\">{svg}<script type=\"application/json\" class=\"tsdata\">{data}</script>{BUTTONS}</figure>",
            esc(name)
        );
    }
    pub fn id(&self) -> String {
        format!("p{}", self.nplot)
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
            crate::overlay::section(&mut page, gi, &members, &pal, per_line, opts);
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

/// The page around a body: head (CSS, the error collector), header, footer, the self-check
/// and export script, and uPlot when the body has interactive charts.
pub(crate) fn shell(title: &str, meta: &str, version: &str, page: &Page, rebuild: &str) -> String {
    let mut html = String::with_capacity(page.body.len() + 8000 + UPLOT_JS.len());
    let (ucss, ujs) = if page.interactive > 0 {
        (UPLOT_CSS, UPLOT_JS)
    } else {
        ("", "")
    };
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><meta name=\"generator\" content=\"cclab {v}\"><title>{t}</title><style>{CSS}{ucss}</style><script>{EARLY_JS}</script></head><body><header><h1>{t}</h1><p class=\"meta\">{meta}</p></header><main>{body}</main><footer>Generated by cclab {v}. Self-contained: no network access needed. Rebuild with <code>{rebuild}</code>.{lib}</footer><pre id=\"selfcheck\" hidden></pre>{open}{ujs}{close}<script>{JS}</script></body></html>\n",
        v = esc(version),
        t = esc(title),
        body = page.body,
        lib = if page.interactive > 0 {
            " Interactive charts: uPlot 1.6.32 (MIT licence, © Leon Sorokin), included in this page."
        } else {
            ""
        },
        open = if ujs.is_empty() { "" } else { "<script>" },
        close = if ujs.is_empty() { "" } else { "</script>" },
    );
    html
}

/// uPlot (<https://github.com/leeoniya/uPlot>, MIT), vendored: see `assets/uplot/README.md`.
const UPLOT_JS: &str = include_str!("../assets/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/uplot/uPlot.min.css");

pub(crate) fn origin_note(s: &Source) -> String {
    s.origin
        .as_ref()
        .map(|o| {
            format!(
                " <span class=\"muted\">{}</span>",
                esc(&o.display().to_string())
            )
        })
        .unwrap_or_default()
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
    let mut facts = Vec::new();
    if let Some(f) = &s.file {
        facts.push(format!("scenario <code>{}</code>", esc(f)));
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
    page.body.push_str("</div>");
    seeds_table(&mut page.body, doc);
    summary_table(&mut page.body, doc, pal);
    // Runs.
    page.body.push_str("<h3>Runs over time</h3>");
    for (ri, run) in doc.runs.iter().enumerate() {
        run_section(
            page,
            di,
            ri,
            doc,
            run,
            pal,
            per_line,
            ri < opts.open_runs,
            &name,
        );
    }
    page.body.push_str("</section>");
}

/// The label of a matrix point's bar group: its swept values other than the controller, one
/// per line, or the scenario's name when nothing else is swept.
pub(crate) fn point_label(doc: &ResultsDoc, params: &serde_json::Map<String, Value>) -> String {
    let label = params
        .iter()
        .filter(|(k, _)| !is_cc_key(k))
        .map(|(k, v)| format!("{} {}", key_name(k), units::param(k, v)))
        .collect::<Vec<_>>()
        .join("\n");
    if label.is_empty() {
        doc.scenario.clone()
    } else {
        label
    }
}

/// Position of `x` in `v`, appended first when absent.
pub(crate) fn index_of(v: &mut Vec<String>, x: String) -> usize {
    match v.iter().position(|k| *k == x) {
        Some(i) => i,
        None => {
            v.push(x);
            v.len() - 1
        }
    }
}

/// Goodput per run and controller as bars, the published figure as a marker; (svg, wide).
fn headline(doc: &ResultsDoc, pal: &Palette, id: &str) -> (String, bool) {
    let pts = points(doc);
    let mut groups: Vec<String> = Vec::new();
    let mut bars = Vec::new();
    let multi_flow = doc.runs.iter().any(|r| r.flows.len() > 1);
    for (params, runs) in &pts {
        let first = &doc.runs[runs[0]];
        let g = index_of(&mut groups, point_label(doc, params));
        for cc in ccs_of(first) {
            let vals: Vec<f64> = runs
                .iter()
                .map(|&i| goodput_of(&doc.runs[i], &cc))
                .collect();
            let (lo, hi, mean) = min_max_mean(&vals);
            let refv = reference_for(first, &cc);
            let mut tip = format!(
                "{} · {cc}: {}",
                groups[g].replace('\n', " · "),
                units::rate(mean)
            );
            if vals.len() > 1 {
                tip.push_str(&format!(
                    " (mean of {} seeds, {} – {})",
                    vals.len(),
                    units::rate(lo),
                    units::rate(hi)
                ));
            }
            if let Some(r) = refv {
                tip.push_str(&format!(" · published {}", reference_text(first, r)));
            }
            bars.push(Bar {
                group: g,
                color: pal.color(&cc),
                series: cc.clone(),
                value: mean,
                spread: (vals.len() > 1).then_some((lo, hi)),
                reference: refv,
                label: units::rate(mean),
                tip,
            });
        }
    }
    let has_ref = bars.iter().any(|b| b.reference.is_some());
    let title = format!(
        "{}: goodput per run{}{}",
        doc.scenario,
        if multi_flow {
            " (sum over each controller's flows)"
        } else {
            ""
        },
        if has_ref { " vs published" } else { "" }
    );
    let c = BarChart {
        title,
        y: Axis::new("goodput", Unit::Rate),
        groups,
        x_label: String::new(),
        bars,
        width: 0.0,
        height: 0.0,
    };
    // Up to 10 bars fit beside the other charts; more get the full width.
    let wide = c.bars.len() > 10;
    let c = BarChart {
        width: if wide {
            (140.0 + 90.0 * c.bars.len() as f64).min(1300.0)
        } else {
            640.0
        },
        height: if wide { 360.0 } else { 300.0 },
        ..c
    };
    (plot::bar_chart(&c, id), wide)
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
    out.push_str("<th class=\"n\">seeds</th><th>flow</th><th>cc</th><th class=\"n\">goodput</th><th class=\"n\">retransmits</th><th class=\"n\">RTT p50</th><th class=\"n\">RTT p99</th><th class=\"n\">FCT</th></tr></thead><tbody>");
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
            let fcts: Vec<f64> = g.iter().filter_map(|r| r.flows[j].fct_s).collect();
            let _ = write!(
                out,
                "<td class=\"n\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                g.len(),
                f.id,
                esc(&f.cc),
                esc(&crate::table::agg(col(&|f| f.goodput_bps), units::rate)),
                esc(&crate::table::agg(col(&|f| f.retrans_ratio), units::pct)),
                esc(&crate::table::agg(col(&|f| f.rtt_ms.p50), units::ms)),
                esc(&crate::table::agg(col(&|f| f.rtt_ms.p99), units::ms)),
                if fcts.is_empty() { "–".to_string() } else { esc(&crate::table::agg(fcts, units::secs)) }
            );
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
    out.push_str("<th>flow</th><th>cc</th><th class=\"n\">goodput</th>");
    if has_ref {
        out.push_str("<th class=\"n\">published</th><th class=\"n\">cclab / published</th>");
    }
    out.push_str("<th class=\"n\">throughput</th><th class=\"n\">retransmits</th><th class=\"n\">RTT p50</th><th class=\"n\">RTT p99</th>");
    if has_fct {
        out.push_str("<th class=\"n\">FCT</th>");
    }
    // Drops by cause: the AQM's and a policer's columns only when some run has them.
    let has_aqm = doc.runs.iter().any(|r| r.link.drops_aqm > 0);
    let has_pol = doc.runs.iter().any(|r| r.link.drops_policer > 0);
    let (drop_head, drop_title) = match (has_aqm, has_pol) {
        (false, false) => ("drops buf/rand", "packets dropped by the full buffer / by the random-loss model"),
        (true, false) => ("drops buf/rand/aqm", "packets dropped by the full buffer / by the random-loss model / by the AQM"),
        (false, true) => ("drops buf/rand/pol", "packets dropped by the full buffer / by the random-loss model / by the policer"),
        (true, true) => ("drops buf/rand/aqm/pol", "packets dropped by the full buffer / by the random-loss model / by the AQM / by the policer"),
    };
    let _ = write!(out, "<th class=\"n\">link used</th><th class=\"n\">queue p99</th><th class=\"n\" title=\"{drop_title}\">{drop_head}</th></tr></thead><tbody>");
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
            let _ = write!(
                out,
                "<td>{}</td><td title=\"{}\"><span class=\"dot\" style=\"background:{col}\"></span>{}</td><td class=\"n gp\" style=\"--f:{:.1}%;--c:{}\" title=\"{:.1}% of the link rate\">{}</td>",
                f.id,
                esc(&cc_title(&f.cc)),
                esc(&f.cc),
                frac * 100.0,
                mix(&col, 0.78),
                frac * 100.0,
                units::rate(f.goodput_bps)
            );
            if has_ref {
                let r = reference_for(run, &f.cc)
                    .filter(|_| run.flows.iter().filter(|g| g.cc == f.cc).count() == 1);
                match r {
                    Some(r) => {
                        let ratio = f.goodput_bps / r;
                        let cls = if (0.67..=1.5).contains(&ratio) {
                            "ok"
                        } else {
                            "off"
                        };
                        let own = reference_text(run, r);
                        let cell = match own.split_once(" (") {
                            Some((bits, rest)) => format!(
                                "{} <span class=\"muted\">{}</span>",
                                esc(bits),
                                esc(rest.trim_end_matches(')'))
                            ),
                            None => esc(&own),
                        };
                        let _ = write!(
                            out,
                            "<td class=\"n\">{cell}</td><td class=\"n {cls}\">×{:.2}</td>",
                            ratio
                        );
                    }
                    None => {
                        out.push_str("<td class=\"n muted\">–</td><td class=\"n muted\">–</td>")
                    }
                }
            }
            let _ = write!(
                out,
                "<td class=\"n\">{}</td><td class=\"n\">{} <span class=\"muted\">({})</span></td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
                units::rate(f.throughput_bps),
                f.retransmits,
                units::pct(f.retrans_ratio),
                units::ms(f.rtt_ms.p50),
                units::ms(f.rtt_ms.p99)
            );
            if has_fct {
                let _ = write!(
                    out,
                    "<td class=\"n\">{}</td>",
                    f.fct_s.map(units::secs).unwrap_or_else(|| "–".into())
                );
            }
            if first {
                let l = &run.link;
                let mut drops = format!("{} / {}", l.drops_buffer, l.drops_random);
                if has_aqm {
                    drops.push_str(&format!(" / {}", l.drops_aqm));
                }
                if has_pol {
                    drops.push_str(&format!(" / {}", l.drops_policer));
                }
                let _ = write!(
                    out,
                    "<td class=\"n\" rowspan=\"{n}\">{}</td><td class=\"n\" rowspan=\"{n}\">{}</td><td class=\"n\" rowspan=\"{n}\">{drops}</td>",
                    units::pct(l.utilization),
                    units::ms(l.queue_delay_ms.p99),
                );
            }
            out.push_str("</tr>");
        }
    }
    out.push_str("</tbody></table></div>");
}

/// How to draw a swept numeric parameter on an axis.
fn param_axis(key: &str, vals: &[f64]) -> Axis {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let name = key_name(key);
    let pos: Vec<f64> = vals.iter().copied().filter(|v| *v > 0.0).collect();
    let span = if pos.is_empty() {
        1.0
    } else {
        pos.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            / pos.iter().copied().fold(f64::INFINITY, f64::min)
    };
    match leaf {
        "loss" | "ack_loss" => Axis::new(&name, Unit::Loss).log(),
        "size" => Axis::new(&name, Unit::Bytes).log(),
        "rate" => {
            let a = Axis::new(&name, Unit::Rate);
            if span > 20.0 {
                a.log()
            } else {
                a
            }
        }
        "rtt" | "rtt_extra" | "duration" | "start" => {
            let a = Axis::new(&name, Unit::Secs);
            if span > 50.0 {
                a.log()
            } else {
                a
            }
        }
        "buffer" => Axis::new(&name, Unit::Plain),
        _ => {
            let a = Axis::new(&name, Unit::Plain);
            if span > 50.0 {
                a.log()
            } else {
                a
            }
        }
    }
}

/// One x value of a line: (x, values over seeds, published figure).
pub(crate) type XPoint = (f64, Vec<f64>, Option<f64>);

/// One chart per (swept numeric parameter, metric): goodput always, FCT when flows are sized.
/// Several documents (an overlay: `(doc, label, dash)`) draw their lines in one chart, a
/// line's colour shared by the documents and its dash telling them apart.
pub(crate) fn matrix_charts(
    docs: &[(&ResultsDoc, Option<&str>, &'static str)],
    pal: &Palette,
) -> Vec<(String, LineChart)> {
    let doc0 = docs[0].0;
    let keys: Vec<String> = doc0.runs[0].params.keys().cloned().collect();
    let mut out = Vec::new();
    let all_runs = || docs.iter().flat_map(|d| d.0.runs.iter());
    let has_fct = all_runs().any(|r| r.flows.iter().any(|f| f.fct_s.is_some()));
    for x in &keys {
        let xs: Vec<f64> = all_runs()
            .filter_map(|r| r.params.get(x).and_then(Value::as_f64))
            .collect();
        if xs.len() != all_runs().count() {
            continue; // not numeric in every run
        }
        let mut distinct = xs.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        let mut metrics: Vec<(&str, &str, Unit)> = vec![("goodput", "goodput", Unit::Rate)];
        if has_fct {
            metrics.push(("fct", "flow completion time", Unit::Secs));
        }
        for (what, ylabel, yunit) in metrics {
            // Lines: (cc, other params) x document -> x -> values over seeds (+ reference).
            type LineData = (String, String, BTreeMap<u64, XPoint>);
            let mut lines: BTreeMap<(usize, usize), LineData> = BTreeMap::new();
            let mut order: Vec<(String, String)> = Vec::new();
            for (di, (doc, _, _)) in docs.iter().enumerate() {
                for r in &doc.runs {
                    let xv = r.params[x].as_f64().unwrap_or(0.0);
                    let other = params_label(r, &|k: &str| k == x || is_cc_key(k));
                    for cc in ccs_of(r) {
                        let y = if what == "fct" {
                            fct_of(r, &cc)
                        } else {
                            Some(goodput_of(r, &cc))
                        };
                        let Some(y) = y else { continue };
                        let name = if other.is_empty() {
                            cc.clone()
                        } else {
                            format!("{cc} · {other}")
                        };
                        let oi = match order.iter().position(|o| o.0 == name) {
                            Some(i) => i,
                            None => {
                                order.push((name.clone(), cc.clone()));
                                order.len() - 1
                            }
                        };
                        let e = lines
                            .entry((oi, di))
                            .or_insert_with(|| (name.clone(), cc.clone(), BTreeMap::new()));
                        let slot = e.2.entry(xv.to_bits()).or_insert((xv, Vec::new(), None));
                        slot.1.push(y);
                        if what == "goodput" && di == 0 && slot.2.is_none() {
                            slot.2 = reference_for(r, &cc);
                        }
                    }
                }
            }
            if lines.is_empty() {
                continue;
            }
            // A line's colour: its controller's, shaded by its place among that controller's.
            let shade_of: Vec<String> = {
                let mut per_cc: BTreeMap<&str, usize> = BTreeMap::new();
                order
                    .iter()
                    .map(|(_, cc)| {
                        let k = per_cc.entry(cc.as_str()).or_insert(0);
                        *k += 1;
                        pal.shade(cc, *k - 1)
                    })
                    .collect()
            };
            let xaxis = param_axis(x, &distinct);
            let mut yaxis = Axis::new(ylabel, yunit);
            if what == "fct" {
                let ys: Vec<f64> = lines
                    .values()
                    .flat_map(|l| l.2.values().flat_map(|s| s.1.iter().copied()))
                    .filter(|v| *v > 0.0)
                    .collect();
                let (lo, hi, _) = min_max_mean(&ys);
                if hi / lo > 20.0 {
                    yaxis = yaxis.log();
                }
            }
            let title = format!("{}: {} vs {}", doc0.scenario, ylabel, key_name(x));
            let mut c = LineChart::new(&title, xaxis, yaxis);
            let mut any_ref = false;
            let mut any_spread = false;
            for ((oi, di), (base, _, pts)) in &lines {
                let color = shade_of[*oi].clone();
                let (_, label, dash) = docs[*di];
                let name = match label {
                    Some(l) => format!("{base} · {l}"),
                    None => base.clone(),
                };
                let mut pts: Vec<&XPoint> = pts.values().collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mut l = Line::new(&name, &color, Vec::new());
                l.marker = Marker::Dot;
                l.width = 2.0;
                l.dash = dash;
                let mut refs = Vec::new();
                for (xv, ys, r) in &pts {
                    let (lo, hi, mean) = min_max_mean(ys);
                    l.points.push((*xv, mean));
                    let mut tip = format!(
                        "{name}, {} {}: {}",
                        key_name(x),
                        units::param(x, &Value::from(*xv)),
                        fmt_metric(what, mean)
                    );
                    if ys.len() > 1 {
                        any_spread = true;
                        l.band.push((*xv, lo, hi));
                        tip.push_str(&format!(
                            " (mean of {}; {} – {})",
                            ys.len(),
                            fmt_metric(what, lo),
                            fmt_metric(what, hi)
                        ));
                    }
                    l.tips.push(tip);
                    if let Some(r) = r {
                        refs.push((*xv, *r));
                    }
                }
                c.lines.push(l);
                if !refs.is_empty() {
                    any_ref = true;
                    let mut rl = Line::new(&format!("{base} published"), &color, refs);
                    rl.line = false;
                    rl.marker = Marker::Diamond;
                    rl.legend = false;
                    rl.tips = rl
                        .points
                        .iter()
                        .map(|(xv, r)| {
                            format!(
                                "{base}, {} {}: published {}",
                                key_name(x),
                                units::param(x, &Value::from(*xv)),
                                units::rate(*r)
                            )
                        })
                        .collect();
                    c.lines.push(rl);
                }
            }
            if any_ref {
                c.notes.push((
                    "published figure".into(),
                    NEUTRAL.into(),
                    Marker::Diamond,
                    "",
                ));
            }
            if any_spread {
                c.notes.push((
                    "band: min–max over seeds".into(),
                    "#adb5bd".into(),
                    Marker::None,
                    "",
                ));
            }
            out.push((format!("{what}-vs-{}", slug(&key_name(x))), c));
        }
    }
    out
}

pub(crate) fn fmt_metric(what: &str, v: f64) -> String {
    if what == "fct" {
        units::secs(v)
    } else {
        units::rate(v)
    }
}

/// One run's part in a run section: the run, its document's label (overlays) and dash.
pub(crate) struct RunRef<'a> {
    pub run: &'a RunResult,
    pub label: Option<&'a str>,
    pub dash: &'static str,
}

/// The time-series charts of a run, or of the same run in several documents (overlaid: each
/// document's lines in its own dash, the flows' colours shared).
pub(crate) fn run_charts<'a>(
    runs: &[RunRef<'a>],
    pal: &Palette,
    t: &str,
) -> Vec<(&'static str, TsChart<'a>)> {
    let overlay = runs.len() > 1;
    let with: Vec<(&RunRef, &cclab_results::TimeSeries)> = runs
        .iter()
        .filter_map(|r| r.run.series.as_ref().map(|ts| (r, ts)))
        .collect();
    let Some((first, ts0)) = with.first().copied() else {
        return Vec::new();
    };
    let dur = runs
        .iter()
        .map(|r| {
            if r.run.duration_s > 0.0 {
                r.run.duration_s
            } else {
                r.run
                    .series
                    .as_ref()
                    .and_then(|s| s.t_s.last().copied())
                    .unwrap_or(1.0)
            }
        })
        .fold(0.0, f64::max);
    let many = ts0.flows.len() > 8;
    let colors = |ts: &cclab_results::TimeSeries| -> Vec<String> {
        let mut shade_k: BTreeMap<&str, usize> = BTreeMap::new();
        ts.flows
            .iter()
            .map(|f| {
                let k = shade_k.entry(f.cc.as_str()).or_insert(0);
                *k += 1;
                pal.shade(&f.cc, *k - 1)
            })
            .collect()
    };
    let flow_name = |f: &cclab_results::FlowSeries| format!("flow {} · {}", f.id, f.cc);
    let suffix = |r: &RunRef| r.label.map(|l| format!(" · {l}")).unwrap_or_default();
    let notes = || -> Vec<(String, String, Marker, &'static str)> {
        let mut v = Vec::new();
        if many {
            for cc in ccs_of(first.run) {
                let n = ts0.flows.iter().filter(|f| f.cc == cc).count();
                v.push((
                    format!("{cc} ({n} flow{})", if n == 1 { "" } else { "s" }),
                    pal.color(&cc),
                    Marker::None,
                    "",
                ));
            }
        }
        if overlay {
            for (r, _) in &with {
                v.push((
                    r.label.unwrap_or("").to_string(),
                    NEUTRAL.to_string(),
                    Marker::None,
                    r.dash,
                ));
            }
        }
        v
    };
    let per_flow = |title: &str,
                    yl: &str,
                    unit: Unit,
                    get: &dyn Fn(&cclab_results::FlowSeries) -> &Vec<f64>|
     -> TsChart<'a> {
        let mut c = TsChart::new(title, Axis::new(yl, unit), dur);
        for (di, (r, ts)) in with.iter().enumerate() {
            for (f, col) in ts.flows.iter().zip(colors(ts)) {
                let mut l = TsLine::new(
                    &format!("{}{}", flow_name(f), suffix(r)),
                    &col,
                    &ts.t_s,
                    get(f).clone(),
                );
                l.dash = r.dash;
                l.legend = !many && di == 0;
                if overlay {
                    // The static legend names flows once (their colour), documents by dash.
                    l.legend_name = Some(flow_name(f));
                }
                if ts.flows.len() > 3 {
                    l.width = 1.2;
                }
                c.lines.push(l);
            }
        }
        c.notes = notes();
        c
    };
    let mut charts: Vec<(&'static str, TsChart)> = Vec::new();
    charts.push((
        "goodput",
        per_flow(
            &format!("{t}goodput per flow"),
            "goodput",
            Unit::Rate,
            &|f| &f.goodput_bps,
        ),
    ));
    if overlay {
        charts.push((
            "cwnd",
            per_flow(
                &format!("{t}congestion window"),
                "cwnd (packets)",
                Unit::Plain,
                &|f| &f.cwnd_pkts,
            ),
        ));
    } else {
        // cwnd solid, inflight dashed.
        let mut cw = per_flow(
            &format!("{t}congestion window (solid) and packets in flight (dashed)"),
            "packets",
            Unit::Plain,
            &|f| &f.cwnd_pkts,
        );
        for (f, col) in ts0.flows.iter().zip(colors(ts0)) {
            let mut l = TsLine::new(
                &format!("{} inflight", flow_name(f)),
                &col,
                &ts0.t_s,
                f.inflight_pkts.clone(),
            );
            l.dash = plot::DASH;
            l.width = 1.2;
            l.legend = false;
            cw.lines.push(l);
        }
        cw.notes
            .push(("cwnd".into(), NEUTRAL.into(), Marker::None, ""));
        cw.notes
            .push(("inflight".into(), NEUTRAL.into(), Marker::None, plot::DASH));
        charts.push(("cwnd", cw));
    }
    charts.push((
        "rtt",
        per_flow(&format!("{t}smoothed RTT (srtt)"), "srtt", Unit::Ms, &|f| {
            &f.srtt_ms
        }),
    ));
    // Queue: each queue's measured delay when the results have it (per element); else the
    // bottleneck's backlog converted to delay at the link rate, bytes on the right axis.
    let rate0 = first.run.link.rate_bps;
    let mut q = if !ts0.queue_delay_ms.is_empty() {
        TsChart::new(
            &format!("{t}queueing delay per queue (mean of the packets leaving each bin)"),
            Axis::new("queue delay", Unit::Ms),
            dur,
        )
    } else if rate0 > 0.0 {
        let mut c = TsChart::new(
            &format!(
                "{t}bottleneck queue (backlog ÷ link rate {})",
                units::rate(rate0)
            ),
            Axis::new("queue delay", Unit::Ms),
            dur,
        );
        if !overlay {
            c.y2 = Some(RightAxis {
                label: "backlog".into(),
                unit: Unit::Bytes,
                factor: rate0 / 8.0 / 1e3,
            });
        }
        c
    } else {
        TsChart::new(
            &format!("{t}bottleneck queue"),
            Axis::new("backlog", Unit::Bytes),
            dur,
        )
    };
    let by_delay = !ts0.queue_delay_ms.is_empty() || rate0 > 0.0;
    for (r, ts) in &with {
        let rate = r.run.link.rate_bps;
        let mut lines: Vec<(String, Vec<f64>)> = Vec::new();
        if !ts.queue_delay_ms.is_empty() && by_delay {
            for (name, v) in &ts.queue_delay_ms {
                let label = name.strip_prefix("data.").unwrap_or(name);
                let label = if label == "queue" {
                    "bottleneck"
                } else {
                    label
                };
                lines.push((label.to_string(), v.clone()));
                if overlay {
                    break; // the bottleneck's
                }
            }
        } else if by_delay && rate > 0.0 {
            lines.push((
                "queue".into(),
                ts.link_queue_bytes
                    .iter()
                    .map(|b| b * 8.0 / rate * 1e3)
                    .collect(),
            ));
        } else if !by_delay {
            lines.push(("queue".into(), ts.link_queue_bytes.clone()));
        }
        let nq = lines.len();
        for (k, (name, v)) in lines.into_iter().enumerate() {
            let mut l = TsLine::new(
                &format!("{name}{}", suffix(r)),
                if k == 0 { NEUTRAL } else { "#bc4c00" },
                &ts.t_s,
                v,
            );
            l.dash = r.dash;
            l.legend = nq > 1 || overlay;
            if k == 0 {
                l.width = 1.4;
            }
            q.lines.push(l);
        }
    }
    if !q.lines.is_empty() {
        charts.push(("queue", q));
    }
    // A varying rate (a schedule, a trace): the link's capacity and what crossed it.
    if !ts0.link_rate_bps.is_empty() {
        let mut c = TsChart::new(
            &format!("{t}link rate (capacity per bin) and total goodput"),
            Axis::new("rate", Unit::Rate),
            dur,
        );
        for (r, ts) in &with {
            if ts.link_rate_bps.is_empty() {
                continue;
            }
            let mut cap = TsLine::new(
                &format!("capacity{}", suffix(r)),
                NEUTRAL,
                &ts.t_s,
                ts.link_rate_bps.clone(),
            );
            cap.width = 1.6;
            cap.dash = r.dash;
            c.lines.push(cap);
            let total: Vec<f64> = (0..ts.t_s.len())
                .map(|i| {
                    ts.flows
                        .iter()
                        .map(|f| f.goodput_bps.get(i).copied().unwrap_or(0.0))
                        .sum()
                })
                .collect();
            let mut gl = TsLine::new(
                &format!("goodput (all flows){}", suffix(r)),
                "#0969da",
                &ts.t_s,
                total,
            );
            gl.dash = if overlay { r.dash } else { plot::DASH };
            c.lines.push(gl);
        }
        charts.push(("rate", c));
    }
    charts
}

/// Add a run's time-series charts to the page, each as a static SVG with the data of its
/// interactive chart; `sync` ties the run's charts together (cursor and zoom).
pub(crate) fn ts_figures(
    page: &mut Page,
    charts: Vec<(&'static str, TsChart)>,
    per_line: usize,
    name: &str,
    sync: &str,
) {
    page.body.push_str("<div class=\"grid\">");
    for (what, c) in charts {
        let id = page.id();
        let (svg, data) = ts::render(&c, per_line, &id, sync);
        page.figure_data(&format!("{name}-{what}"), svg, &data);
    }
    page.body.push_str("</div>");
}

#[allow(clippy::too_many_arguments)]
fn run_section(
    page: &mut Page,
    _di: usize,
    ri: usize,
    doc: &ResultsDoc,
    run: &RunResult,
    pal: &Palette,
    per_line: usize,
    open: bool,
    name: &str,
) {
    let label = params_label(run, &|_| false);
    let multi_seed = doc.runs.iter().any(|r| r.seed != run.seed);
    let mut head = format!("#{}", ri + 1);
    if !label.is_empty() {
        head.push_str(&format!(" · {label}"));
    }
    if multi_seed {
        head.push_str(&format!(" · seed {}", run.seed));
    }
    let gp: Vec<String> = ccs_of(run)
        .iter()
        .map(|cc| format!("{cc} {}", units::rate(goodput_of(run, cc))))
        .collect();
    let _ = write!(
        page.body,
        "<details class=\"run\"{}><summary><strong>{}</strong> <span class=\"muted\">— {}; link {} used, queue p99 {}</span></summary>",
        if open { " open" } else { "" },
        esc(&head),
        esc(&gp.join(", ")),
        units::pct(run.link.utilization),
        units::ms(run.link.queue_delay_ms.p99)
    );
    if run.series.is_none() {
        page.body.push_str("<p class=\"muted\">No time series for this run (results.json without series/run-N.csv).</p></details>");
        return;
    }
    let charts = run_charts(
        &[RunRef {
            run,
            label: None,
            dash: "",
        }],
        pal,
        &format!("#{} ", ri + 1),
    );
    let sync = format!("{name}-run{}", ri + 1);
    ts_figures(page, charts, per_line, &sync, &sync);
    page.body.push_str("</details>");
}

const CSS: &str = r#"
:root{--ink:#1f2328;--muted:#57606a;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif;color:var(--ink);background:#fff}
header,main,footer{max-width:1360px;margin:0 auto;padding:0 20px}
header{padding-top:18px}
h1{font-size:22px;margin:0 0 2px}
h2{font-size:19px;margin:28px 0 4px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:22px 0 8px}
.meta,.facts,.muted{color:var(--muted)}
.meta,.facts{margin:2px 0 10px;font-size:13px}
.desc{max-width:920px;margin:6px 0}
.badge{display:inline-block;font-size:11px;font-weight:600;padding:1px 7px;border-radius:10px;background:var(--bg);border:1px solid var(--line);vertical-align:middle;color:var(--muted)}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--bg);padding:1px 4px;border-radius:4px}
nav{margin:10px 0;font-size:13px}nav ol{margin:4px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:14px;margin:10px 0}
figure.plot{margin:0;border:1px solid var(--line);border-radius:6px;padding:6px;background:#fff;position:relative}
figure.plot.wide{grid-column:1/-1;max-width:1320px}
figure.plot svg{width:100%;height:auto;display:block}
figure.plot.wide svg{max-height:420px}
figcaption{position:absolute;top:6px;right:8px;display:flex;gap:4px}
figcaption button{font:11px system-ui,sans-serif;color:var(--muted);background:#fff;border:1px solid var(--line);border-radius:4px;padding:1px 6px;cursor:pointer}
figcaption button:hover{color:var(--ink);border-color:#8c959f}
.tablewrap{overflow-x:auto;margin:10px 0}
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:4px 7px;border-bottom:1px solid #eaeef2;text-align:left;white-space:nowrap}
th{background:var(--bg);font-weight:600;border-bottom:1px solid var(--line)}
tr.runstart td{border-top:1px solid var(--line)}
td.n,th.n{text-align:right}
td[rowspan]{vertical-align:top}
td.gp{background:linear-gradient(90deg,var(--c) var(--f),transparent var(--f));font-weight:600}
td.ok{color:#1a7f37}td.off{color:#cf222e;font-weight:600}
.dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:6px;vertical-align:0}
details.run{border-top:1px solid #eaeef2;padding:6px 0}
details.run summary{cursor:pointer}
footer{color:var(--muted);font-size:12px;margin:30px auto 20px;border-top:1px solid var(--line);padding-top:10px}
ul.docs{list-style:none;padding:0;margin:8px 0}ul.docs li{margin:2px 0}ul.docs svg{vertical-align:middle}
th.grp{text-align:center;border-left:1px solid var(--line)}td.d{color:var(--muted)}td.d.off{color:#cf222e}
figure.plot.live .u-title{font-size:13px;font-weight:600;text-align:left;padding:2px 90px 2px 6px}
figure.plot.live .u-legend{font-size:11px;text-align:left}figure.plot.live .u-legend .u-series>*{padding:1px 3px}
figure.plot.live .u-select{background:rgba(9,105,218,.12)}
@media print{figcaption{display:none}}
"#;

/// Collects errors before anything else runs (read by the self-check).
const EARLY_JS: &str = r#"window.__cclabErrors=[];window.addEventListener('load',function(){window.__cclabLoad=Math.round(performance.now())});window.addEventListener('error',function(e){window.__cclabErrors.push(String(e.message||e))});(function(){var ce=console.error;console.error=function(){window.__cclabErrors.push(Array.prototype.join.call(arguments,' '));return ce.apply(console,arguments)}})();"#;

/// Export buttons (SVG as is; PNG through a canvas at 2x) and a self-check that records,
/// in `#selfcheck` and `html[data-selfcheck]`, the plots without drawn content, the tables
/// present, errors seen, and the load time.
const JS: &str = r#"
(function(){
'use strict';
function svgText(svg){var c=svg.cloneNode(true);c.setAttribute('xmlns','http://www.w3.org/2000/svg');return '<?xml version="1.0" encoding="UTF-8"?>\n'+new XMLSerializer().serializeToString(c);}
function save(name,blob){var a=document.createElement('a');a.href=URL.createObjectURL(blob);a.download=name;document.body.appendChild(a);a.click();a.remove();setTimeout(function(){URL.revokeObjectURL(a.href)},2000);}
/* A plot as PNG (2x, white background); cb(blob or null). */
function toPng(svg,cb){
  var vb=svg.viewBox.baseVal,s=2,img=new Image();
  img.onload=function(){var c=document.createElement('canvas');c.width=vb.width*s;c.height=vb.height*s;var x=c.getContext('2d');x.fillStyle='#fff';x.fillRect(0,0,c.width,c.height);x.drawImage(img,0,0,c.width,c.height);c.toBlob(cb,'image/png');};
  img.onerror=function(){cb(null)};
  img.src='data:image/svg+xml;charset=utf-8,'+encodeURIComponent(svgText(svg));
}
window.cclabPlot={svgText:svgText,toPng:toPng};
document.addEventListener('click',function(e){
  var b=e.target.closest&&e.target.closest('button[data-export]');if(!b)return;
  var fig=b.closest('figure'),svg=fig.querySelector('svg'),name=fig.getAttribute('data-name')||'plot';
  if(b.getAttribute('data-export')==='svg'){save(name+'.svg',new Blob([svgText(svg)],{type:'image/svg+xml'}));return;}
  toPng(svg,function(p){if(p)save(name+'.png',p);else console.error('PNG export failed for '+name)});
});
/* Interactive time series: uPlot over the static SVG (kept for export and without script).
   Drag: zoom to a range; Ctrl/Cmd+wheel: zoom at the cursor; Shift+drag: pan; double-click:
   reset; legend: click to hide or show a line; hover: values at the cursor. The charts of a
   run share their cursor and time range. */
var groups={},syncing=false;
function syncX(u){if(syncing||!u.__ready)return;var g=groups[u.__key]||[],mn=u.scales.x.min,mx=u.scales.x.max;syncing=true;
  g.forEach(function(o){if(o!==u&&(o.scales.x.min!==mn||o.scales.x.max!==mx))o.setScale('x',{min:mn,max:mx})});syncing=false;}
function clampX(u,lo,hi){var x=u.data[0],a=x[0],b=x[x.length-1];if(hi-lo>=b-a)return[a,b];if(lo<a){hi+=a-lo;lo=a}if(hi>b){lo-=hi-b;hi=b}return[lo,hi];}
function zoomPan(){return{hooks:{ready:function(u){
  var o=u.over;
  o.addEventListener('wheel',function(e){if(!(e.ctrlKey||e.metaKey))return;e.preventDefault();
    var r=o.getBoundingClientRect(),s=u.scales.x,c=u.posToVal(e.clientX-r.left,'x'),k=e.deltaY<0?0.75:1/0.75,
    z=clampX(u,c-(c-s.min)*k,c+(s.max-c)*k);u.setScale('x',{min:z[0],max:z[1]});},{passive:false});
  u.root.addEventListener('mousedown',function(e){if(!(e.shiftKey||e.button===1)||!o.contains(e.target))return;
    e.preventDefault();e.stopPropagation();var x0=e.clientX,s0=u.scales.x.min,s1=u.scales.x.max,w=o.clientWidth||1;
    function mv(ev){var dx=(ev.clientX-x0)/w*(s1-s0),z=clampX(u,s0-dx,s1-dx);u.setScale('x',{min:z[0],max:z[1]});}
    function up(){document.removeEventListener('mousemove',mv,true);document.removeEventListener('mouseup',up,true);}
    document.addEventListener('mousemove',mv,true);document.addEventListener('mouseup',up,true);},true);
}}};}
function nf(v){if(v==null)return '–';var a=Math.abs(v);return a>=1000?v.toFixed(0):a>=100?v.toFixed(1):a>=1?v.toFixed(2):a===0?'0':v.toPrecision(3);}
function size(fig){var w=Math.max(280,(fig.clientWidth||652)-12);return{width:w,height:Math.max(170,Math.round(w*0.4))};}
function chart(fig){
  if(fig.__u)return fig.__u;
  var el=fig.querySelector('script.tsdata');if(!el||!window.uPlot)return null;
  var d=JSON.parse(el.textContent),svg=fig.querySelector('svg'),z=size(fig);
  var series=[{label:'time',value:function(u,v){return v==null?'–':v.toFixed(2)+' s'}}];
  d.s.forEach(function(s){series.push({label:s.l,stroke:s.c,width:s.w,dash:s.d.length?s.d:undefined,spanGaps:true,points:{show:false},
    value:function(u,v){return v==null?'–':nf(v)+(d.u?' '+d.u:'')}})});
  var axes=[{label:'time (s)'},{label:d.y,size:62}];
  if(d.y2)axes.push({side:1,scale:'y',label:d.y2.l,size:62,grid:{show:false},values:function(u,t){return t.map(function(v){return nf(v*d.y2.f)})}});
  var opts={title:d.t,width:z.width,height:z.height,series:series,axes:axes,
    scales:{x:{time:false},y:{range:function(u,lo,hi){return[Math.min(0,lo),hi>0?hi*1.05:1]}}},
    cursor:{sync:{key:d.k},drag:{x:true,y:false}},legend:{live:true},
    hooks:{setScale:[function(u,k){if(k==='x')syncX(u)}]},plugins:[zoomPan()]};
  var box=document.createElement('div');box.className='uwrap';fig.insertBefore(box,svg);
  var u=new uPlot(opts,[d.x].concat(d.s.map(function(s){return s.v})),box);
  svg.style.display='none';fig.__u=u;u.__key=d.k;fig.classList.add('live');
  var g=groups[d.k]=groups[d.k]||[];
  if(g.length){syncing=true;u.setScale('x',{min:g[0].scales.x.min,max:g[0].scales.x.max});syncing=false;}
  g.push(u);u.__ready=true;
  return u;
}
window.cclabPlot.chart=chart;
var tsFigs=document.querySelectorAll('figure.plot.ts');
if(window.uPlot&&tsFigs.length){
  /* Charts in open run sections at the load event (the static charts show until then); a
     closed section's when it opens. */
  window.addEventListener('load',function(){tsFigs.forEach(function(f){if(!f.closest('details:not([open])'))chart(f)})});
  document.addEventListener('toggle',function(e){var d=e.target;if(d.open&&d.querySelectorAll)d.querySelectorAll('figure.plot.ts').forEach(chart)},true);
  var rt;window.addEventListener('resize',function(){clearTimeout(rt);rt=setTimeout(function(){
    document.querySelectorAll('figure.plot.live').forEach(function(f){f.__u.setSize(size(f))})},150)});
}
function check(phase){
  var figs=document.querySelectorAll('figure.plot'),empty=[],marks=0,live=0;
  for(var i=0;i<figs.length;i++){
    var f=figs[i],ok=false,n=0,hidden=!!f.closest('details:not([open])');
    if(f.__u){
      var u=f.__u,cv=u.ctx&&u.ctx.canvas;live++;
      for(var k=1;k<u.data.length;k++){if(u.data[k].some(function(v){return v!=null}))n++;}
      ok=n>0&&!!cv&&cv.width>0&&(hidden||u.root.getBoundingClientRect().width>0);
    }else{
      var g=f.querySelector('svg g.data');n=g?g.querySelectorAll('path,rect,circle').length:0;
      if(g&&n>0){
        if(hidden){ok=true;}
        else{var bb=g.getBoundingClientRect();ok=bb.width>0||bb.height>0;}
      }
    }
    marks+=n;if(!ok)empty.push(f.getAttribute('data-name'));
  }
  var r={phase:phase,plots:figs.length,empty:empty,marks:marks,
    interactive:document.querySelectorAll('figure.plot.ts').length,live:live,
    tables:document.querySelectorAll('table.summary').length,
    rows:document.querySelectorAll('table.summary tbody tr').length,
    errors:window.__cclabErrors.slice(),ms:window.__cclabLoad||Math.round(performance.now()),ready_ms:Math.round(performance.now())};
  var j=JSON.stringify(r);document.getElementById('selfcheck').textContent=j;
  document.documentElement.setAttribute('data-selfcheck',r.errors.length||r.empty.length?'fail':'ok');
  return r;
}
window.cclabPlot.check=check;
check('script');
window.addEventListener('load',function(){check('load')});
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shades_differ_and_stay_valid() {
        let p = Palette::new(["cubic", "bbr", "vegas"]);
        assert_eq!(p.color("cubic"), "#1c64d8");
        assert_eq!(p.color("vegas"), EXTRA[0]);
        let s: Vec<String> = (0..4).map(|k| p.shade("bbr", k)).collect();
        assert_eq!(s[0], p.color("bbr"));
        assert!(s.iter().all(|c| c.len() == 7 && c.starts_with('#')));
        assert_ne!(s[1], s[2]);
    }

    #[test]
    fn key_names_read_naturally() {
        assert_eq!(key_name("link.loss"), "loss");
        assert_eq!(key_name("flows.cc"), "cc");
        assert_eq!(key_name("flows.1.cc"), "flows.1.cc");
    }
}
