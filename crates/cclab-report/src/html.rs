//! The HTML report: one self-contained page (inline CSS, inline SVG plots, a few lines of
//! inline JS for the export buttons and a self-check), no network access needed.
//!
//! Per results document (scenario): a headline chart (goodput per run and controller, the
//! published figure as a marker), a summary table, plots against each swept numeric parameter
//! (one line per controller, min–max band over seeds), and per run the flows table and time
//! series plots (goodput, cwnd + inflight, smoothed RTT, bottleneck queue). A measurement of a
//! real host has no link figures (unknown on a real path) and shows its fitted path and
//! prediction instead ([`crate::host`]).

use crate::load::Source;
use crate::plot::{self, esc, Axis, Bar, BarChart, Line, LineChart, Marker, RightAxis, Unit};
use crate::ts::{self, TsChart, TsLine};
use crate::units;
use cclab_results::{median, FlowResult, ResultsDoc, RunResult};
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
    page.body.push_str("</div>");
    seeds_table(&mut page.body, doc);
    summary_table(&mut page.body, doc, pal);
    crate::host::fit_section(&mut page.body, doc);
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
            let (med, lo, hi) = median_min_max(&vals);
            let refv = reference_for(first, &cc);
            let tip = bar_tip(
                &format!("{} · {cc}", groups[g].replace('\n', " · ")),
                &vals,
                refv.map(|r| (r, reference_text(first, r))),
            );
            bars.push(Bar {
                group: g,
                color: pal.color(&cc),
                series: cc.clone(),
                value: med,
                spread: (vals.len() > 1).then_some((lo, hi)),
                reference: refv,
                label: units::rate(med),
                tip,
            });
        }
    }
    let has_ref = bars.iter().any(|b| b.reference.is_some());
    let title = format!(
        "{}: goodput per run{}{}{}",
        doc.scenario,
        if multi_flow {
            " (sum over each controller's flows)"
        } else {
            ""
        },
        if has_ref { " vs published" } else { "" },
        seeds_note(pts.iter().map(|p| p.1.len()))
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
    let has_ref = doc.runs.iter().any(|r| {
        r.reference
            .as_ref()
            .is_some_and(|v| v.get("goodput_bps").is_some())
    });
    let has_jain = doc.runs.iter().any(|r| r.flows.len() > 1);
    let multi_cc = doc.runs.iter().any(|r| ccs_of(r).len() > 1);
    out.push_str("<th class=\"n\">seeds</th><th>flow</th><th>cc</th><th class=\"n\">goodput</th>");
    if has_ref {
        out.push_str("<th class=\"n\">published</th><th class=\"n\">cclab / published</th>");
    }
    if multi_cc {
        out.push_str("<th class=\"n\" title=\"the flow's controller's share of the run's goodput\">cc share</th>");
    }
    out.push_str("<th class=\"n\">retransmits</th><th class=\"n\">RTT p50</th><th class=\"n\">RTT p99</th><th class=\"n\">FCT</th>");
    if has_jain {
        out.push_str("<th class=\"n\">Jain</th>");
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
            let fcts: Vec<f64> = g.iter().filter_map(|r| r.flows[j].fct_s).collect();
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
                esc(&crate::table::agg(col(&|f| f.goodput_bps), units::rate)),
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
            let fct = match (fcts.is_empty(), open) {
                (true, 0) => "–".to_string(),
                (true, _) => "unfinished".to_string(),
                (false, 0) => esc(&crate::table::agg(fcts, units::secs)),
                (false, k) => format!(
                    "{} <span class=\"off\">{k} unfinished</span>",
                    esc(&crate::table::agg(fcts, units::secs))
                ),
            };
            let _ = write!(
                out,
                "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n{}\"{}>{fct}</td>",
                esc(&crate::table::agg(col(&|f| f.retrans_ratio), units::pct)),
                esc(&crate::table::agg(col(&|f| f.rtt_ms.p50), units::ms)),
                esc(&crate::table::agg(col(&|f| f.rtt_ms.p99), units::ms)),
                if open > 0 { " unfinished" } else { "" },
                if open > 0 {
                    format!(" title=\"unfinished in {open} of {} seeds (sized flows that did not complete in the run; not in the FCT)\"", g.len())
                } else {
                    String::new()
                },
            );
            if has_jain {
                if j == 0 {
                    let _ = write!(
                        out,
                        "<td class=\"n\">{}</td>",
                        esc(&crate::table::agg(
                            g.iter().map(|r| r.jain).collect(),
                            |v| format!("{v:.3}")
                        ))
                    );
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
    out.push_str("<th>flow</th><th>cc</th><th class=\"n\">goodput</th>");
    if has_ref {
        out.push_str("<th class=\"n\">published</th><th class=\"n\">cclab / published</th>");
    }
    out.push_str("<th class=\"n\">throughput</th><th class=\"n\">retransmits</th><th class=\"n\">RTT p50</th><th class=\"n\">RTT p99</th>");
    if has_fct {
        out.push_str("<th class=\"n\">FCT</th>");
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
        out.push_str("<th class=\"n\" title=\"Jain's fairness index over the flows' goodputs: 1 = equal shares, 1/n = one flow has everything\">Jain</th>");
    }
    for cc in &share_ccs {
        let _ = write!(
            out,
            "<th class=\"n share\" title=\"{cc}'s flows' goodput over all flows' goodput\">{} share</th>",
            esc(cc)
        );
    }
    if link_known {
        let _ = write!(out, "<th class=\"n\">link used</th><th class=\"n\">queue p99</th><th class=\"n\" title=\"{drop_title}\">{drop_head}</th>");
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
                units::rate(f.goodput_bps)
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
                units::rate(f.throughput_bps),
                f.retransmits,
                units::pct(f.retrans_ratio),
                units::ms(f.rtt_ms.p50),
                units::ms(f.rtt_ms.p99)
            );
            if has_fct {
                match (f.fct_s, f.size_bytes) {
                    (Some(t), _) => {
                        let _ = write!(out, "<td class=\"n\">{}</td>", units::secs(t));
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
                    "<td class=\"n jain\" rowspan=\"{n}\">{:.3}</td>",
                    run.jain
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

/// cclab / published as a table cell: green within x1.5 either way (the terminal's
/// [`crate::table::within`]), red beyond.
fn ratio_cell(ratio: f64) -> String {
    let cls = if crate::table::within(ratio) {
        "ok"
    } else {
        "off"
    };
    format!("<td class=\"n ratio {cls}\" title=\"cclab / published\">×{ratio:.2}</td>")
}

/// How to draw a swept numeric parameter on an axis. The axis ends at the data.
fn param_axis(key: &str, vals: &[f64]) -> Axis {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let name = key_name(key);
    let span = log_span(vals);
    let a = match leaf {
        "loss" | "ack_loss" => Axis::new(&name, Unit::Loss).log(),
        "rate" => Axis::new(&name, Unit::Rate).log_if(span > 20.0),
        "rtt" | "rtt_extra" | "duration" | "start" => {
            Axis::new(&name, Unit::Secs).log_if(span > 50.0)
        }
        _ if is_size_leaf(leaf) => Axis::new(&name, Unit::Bytes).log_if(span > 20.0),
        _ => Axis::new(&name, Unit::Plain).log_if(span > 50.0),
    };
    Axis {
        from_zero: false,
        ..a
    }
}

/// Largest over smallest positive value (1 when there are none).
fn log_span(vals: &[f64]) -> f64 {
    let pos: Vec<f64> = vals.iter().copied().filter(|v| *v > 0.0).collect();
    if pos.is_empty() {
        return 1.0;
    }
    pos.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        / pos.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Keys whose values are sizes in bytes (or a buffer: bytes, packets or BDPs).
fn is_size_leaf(leaf: &str) -> bool {
    matches!(
        leaf,
        "size" | "buffer" | "burst" | "rcvbuf" | "sndbuf" | "notsent_lowat" | "quantum"
    )
}

/// A size as text (`"64kb"`, `"2mib"`, `"3000b"`) in bytes; None for anything else.
fn parse_bytes(t: &str) -> Option<f64> {
    let t = t.trim().to_ascii_lowercase();
    let at = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = t.split_at(at);
    let mult = match unit.trim() {
        "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    num.parse::<f64>().ok().map(|n| n * mult)
}

/// The number in a buffer's text with the given unit suffix (`"0.5bdp"` -> 0.5).
fn buffer_multiple(t: &str, units: &[&str]) -> Option<f64> {
    let t = t.trim().to_ascii_lowercase();
    units
        .iter()
        .find_map(|u| t.strip_suffix(u))
        .and_then(|n| n.trim().parse().ok())
}

/// A swept key drawn on a numeric axis: each run's x value (in `runs`' order) and the axis.
/// Numbers as they are; a swept size given as text (`link.buffer = ["0.5bdp", "1bdp",
/// "4bdp"]`, `"100pkt"`, `"64kb"`) as a number too: in BDPs when every value is in BDPs, in
/// packets when every value is in packets, else in bytes. A buffer's value comes from the
/// run's resolved `link.buffer_bytes` (over `link.bdp_bytes` or `link.packet_bytes`), so
/// values given in different units line up; without them, from the text when the units
/// agree. None when the key is not numeric in every run.
pub(crate) fn numeric_x(key: &str, runs: &[&RunResult]) -> Option<(Vec<f64>, Axis)> {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let nums: Option<Vec<f64>> = runs
        .iter()
        .map(|r| r.params.get(key).and_then(Value::as_f64))
        .collect();
    if let Some(v) = nums {
        let axis = param_axis(key, &v);
        return Some((v, axis));
    }
    if !is_size_leaf(leaf) {
        return None;
    }
    let texts: Vec<&str> = runs
        .iter()
        .map(|r| r.params.get(key).and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let resolved = |r: &RunResult, k: &str| -> Option<f64> {
        let prefix = key.rsplit_once('.').map_or("", |p| p.0);
        r.resolved
            .get(&format!("{prefix}.{k}"))
            .and_then(Value::as_f64)
    };
    let is_buffer = leaf == "buffer";
    let name = key_name(key);
    let all = |units: &[&str]| texts.iter().all(|t| buffer_multiple(t, units).is_some());
    let per = |unit_key: &str, units: &[&str]| -> Vec<f64> {
        runs.iter()
            .zip(&texts)
            .map(|(r, t)| {
                match (resolved(r, "buffer_bytes"), resolved(r, unit_key)) {
                    (Some(b), Some(u)) if is_buffer && u > 0.0 => Some(b / u),
                    _ => buffer_multiple(t, units),
                }
                .unwrap_or(f64::NAN)
            })
            .collect()
    };
    const BDP: &[&str] = &["xbdp", "bdp"];
    const PKT: &[&str] = &["packets", "packet", "pkts", "pkt", "p"];
    let (v, axis) = if is_buffer && all(BDP) {
        let v = per("bdp_bytes", BDP);
        let a = Axis::new(&format!("{name} (× BDP)"), Unit::Plain);
        (v, a)
    } else if is_buffer && all(PKT) {
        let v = per("packet_bytes", PKT);
        (v, Axis::new(&name, Unit::Pkts))
    } else {
        let v: Vec<f64> = runs
            .iter()
            .zip(&texts)
            .map(|(r, t)| {
                is_buffer
                    .then(|| resolved(r, "buffer_bytes"))
                    .flatten()
                    .or_else(|| parse_bytes(t))
                    .unwrap_or(f64::NAN)
            })
            .collect();
        (v, Axis::new(&name, Unit::Bytes))
    };
    if v.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let span = log_span(&v);
    let axis = Axis {
        from_zero: false,
        ..axis.log_if(span > 20.0)
    };
    Some((v, axis))
}

/// Median, min and max of a non-empty set of values.
pub(crate) fn median_min_max(v: &[f64]) -> (f64, f64, f64) {
    let (lo, hi, _) = min_max_mean(v);
    (median(&mut v.to_vec()), lo, hi)
}

/// What `--repeat` folded into a value: "median of N seeds" (the terminal table's words).
pub(crate) fn median_of(n: usize) -> String {
    format!("median of {n} seeds")
}

/// ", median of N seeds" for a chart's title when points fold several seeds (", median
/// over seeds" when their numbers differ); empty otherwise.
pub(crate) fn seeds_note(counts: impl Iterator<Item = usize>) -> String {
    let mut c: Vec<usize> = counts.filter(|n| *n > 1).collect();
    c.sort();
    c.dedup();
    match c[..] {
        [] => String::new(),
        [n] => format!(", {}", median_of(n)),
        _ => ", median over seeds".into(),
    }
}

/// A bar's tooltip: `what: value`, or `what: median of N seeds value [min – max]`, and the
/// published figure with cclab / published.
pub(crate) fn bar_tip(what: &str, vals: &[f64], published: Option<(f64, String)>) -> String {
    let (med, lo, hi) = median_min_max(vals);
    let mut tip = if vals.len() > 1 {
        format!(
            "{what}: {} {} [{} – {}]",
            median_of(vals.len()),
            units::rate(med),
            units::rate(lo),
            units::rate(hi)
        )
    } else {
        format!("{what}: {}", units::rate(med))
    };
    if let Some((r, text)) = published {
        tip.push_str(&format!(
            " · published {text} · cclab / published ×{:.2}",
            med / r
        ));
    }
    tip
}

/// A run's goodput over all its flows.
pub(crate) fn total_goodput(run: &RunResult) -> f64 {
    run.flows.iter().map(|f| f.goodput_bps).sum()
}

/// A controller's share of the run's goodput (its flows' goodput over all flows'); None
/// when nothing got through.
pub(crate) fn share_of(run: &RunResult, cc: &str) -> Option<f64> {
    let t = total_goodput(run);
    (t > 0.0).then(|| goodput_of(run, cc) / t)
}

/// Sized flows that did not complete in the run.
pub(crate) fn unfinished(run: &RunResult) -> impl Iterator<Item = &FlowResult> {
    run.flows
        .iter()
        .filter(|f| f.size_bytes.is_some() && f.fct_s.is_none())
}

/// "unfinished: 2.30 MB of 50.0 MB delivered in the 2.00 s run" for a sized flow without FCT.
pub(crate) fn unfinished_note(run: &RunResult, f: &FlowResult) -> String {
    let size = f.size_bytes.unwrap_or(0) as f64;
    format!(
        "unfinished: {} of {} delivered ({}) in the {} run",
        units::size(f.bytes_delivered as f64),
        units::size(size),
        units::pct(if size > 0.0 {
            f.bytes_delivered as f64 / size
        } else {
            0.0
        }),
        units::secs(run.duration_s)
    )
}

/// One x value of a line: (x, values over seeds, published figure).
pub(crate) type XPoint = (f64, Vec<f64>, Option<f64>);

/// One chart per (swept numeric parameter, metric): goodput always; FCT when flows are
/// sized; each controller's share of the goodput when runs mix controllers, else Jain's
/// index when runs have several flows. A swept size (a buffer in BDPs, packets or bytes) is
/// a numeric axis too ([`numeric_x`]). Lines show the median over seeds with a min-max band.
/// Several documents (an overlay: `(doc, label, dash)`) draw their lines in one chart, a
/// line's colour shared by the documents and its dash telling them apart.
pub(crate) fn matrix_charts(
    docs: &[(&ResultsDoc, Option<&str>, &'static str)],
    pal: &Palette,
) -> Vec<(String, LineChart)> {
    let doc0 = docs[0].0;
    let keys: Vec<String> = doc0.runs[0].params.keys().cloned().collect();
    let mut out = Vec::new();
    let all: Vec<&RunResult> = docs.iter().flat_map(|d| d.0.runs.iter()).collect();
    let has_fct = all
        .iter()
        .any(|r| r.flows.iter().any(|f| f.fct_s.is_some()));
    let multi_cc = all.iter().any(|r| ccs_of(r).len() > 1);
    let multi_flow = all.iter().any(|r| r.flows.len() > 1);
    for x in &keys {
        if is_cc_key(x) {
            continue;
        }
        let Some((xs, xaxis)) = numeric_x(x, &all) else {
            continue; // not numeric in every run
        };
        let mut distinct = xs.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        // Each run's x value, and the text of the value as given (for tooltips).
        let x_of: BTreeMap<*const RunResult, f64> = all
            .iter()
            .zip(&xs)
            .map(|(r, v)| (*r as *const RunResult, *v))
            .collect();
        let mut x_text: BTreeMap<u64, String> = BTreeMap::new();
        for (r, v) in all.iter().zip(&xs) {
            x_text
                .entry(v.to_bits())
                .or_insert_with(|| units::param_in(&r.params, x));
        }
        let mut metrics: Vec<(&str, &str, Unit)> = vec![("goodput", "goodput", Unit::Rate)];
        if has_fct {
            metrics.push(("fct", "flow completion time", Unit::Secs));
        }
        if multi_cc {
            metrics.push(("share", "share of the goodput", Unit::Share));
        } else if multi_flow {
            metrics.push(("jain", "Jain's fairness index", Unit::Plain));
        }
        for (what, ylabel, yunit) in metrics {
            // Lines: (cc, other params) x document -> x -> values over seeds (+ reference).
            type LineData = (String, String, BTreeMap<u64, XPoint>);
            let mut lines: BTreeMap<(usize, usize), LineData> = BTreeMap::new();
            let mut order: Vec<(String, String)> = Vec::new();
            let mut skipped = 0usize;
            for (di, (doc, _, _)) in docs.iter().enumerate() {
                for r in &doc.runs {
                    let xv = x_of[&(r as *const RunResult)];
                    let other = params_label(r, &|k: &str| k == x || is_cc_key(k));
                    let series: Vec<String> = if what == "jain" {
                        vec![String::new()]
                    } else {
                        ccs_of(r)
                    };
                    for cc in series {
                        let y = match what {
                            "fct" => {
                                skipped += unfinished(r).filter(|f| f.cc == cc).count();
                                fct_of(r, &cc)
                            }
                            "share" => share_of(r, &cc),
                            "jain" => Some(r.jain),
                            _ => Some(goodput_of(r, &cc)),
                        };
                        let Some(y) = y else { continue };
                        let name = match (cc.is_empty(), other.is_empty()) {
                            (true, true) => "Jain's index".to_string(),
                            (true, false) => other.clone(),
                            (false, true) => cc.clone(),
                            (false, false) => format!("{cc} · {other}"),
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
            let mut yaxis = Axis::new(ylabel, yunit);
            match what {
                "fct" => {
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
                "share" | "jain" => yaxis = yaxis.range(0.0, 1.0),
                _ => {}
            }
            let title = format!("{}: {} vs {}", doc0.scenario, ylabel, key_name(x));
            let mut c = LineChart::new(&title, xaxis.clone(), yaxis);
            let mut any_ref = false;
            let mut seeds: Vec<usize> = Vec::new();
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
                let xt = |xv: f64| {
                    format!(
                        "{} {}",
                        key_name(x),
                        x_text.get(&xv.to_bits()).cloned().unwrap_or_default()
                    )
                };
                for (xv, ys, r) in &pts {
                    let (med, lo, hi) = median_min_max(ys);
                    l.points.push((*xv, med));
                    let mut tip = format!("{name}, {}: {}", xt(*xv), fmt_metric(what, med));
                    if ys.len() > 1 {
                        if !seeds.contains(&ys.len()) {
                            seeds.push(ys.len());
                        }
                        l.band.push((*xv, lo, hi));
                        tip = format!(
                            "{name}, {}: {} {} [{} – {}]",
                            xt(*xv),
                            median_of(ys.len()),
                            fmt_metric(what, med),
                            fmt_metric(what, lo),
                            fmt_metric(what, hi)
                        );
                    }
                    if let Some(r) = r {
                        tip.push_str(&format!(
                            " · published {} (cclab / published ×{:.2})",
                            units::rate(*r),
                            med / r
                        ));
                    }
                    l.tips.push(tip);
                    if let Some(r) = r {
                        refs.push((*xv, *r, med));
                    }
                }
                c.lines.push(l);
                if !refs.is_empty() {
                    any_ref = true;
                    let pts = refs.iter().map(|(xv, r, _)| (*xv, *r)).collect();
                    let mut rl = Line::new(&format!("{base} published"), &color, pts);
                    rl.line = false;
                    rl.marker = Marker::Diamond;
                    rl.legend = false;
                    rl.tips = refs
                        .iter()
                        .map(|(xv, r, med)| {
                            format!(
                                "{base}, {}: published {}; cclab / published ×{:.2}",
                                xt(*xv),
                                units::rate(*r),
                                med / r
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
            if !seeds.is_empty() {
                let n = if seeds.len() == 1 {
                    median_of(seeds[0])
                } else {
                    "median over seeds".into()
                };
                c.notes.push((
                    format!("line: {n}; band: min–max"),
                    "#adb5bd".into(),
                    Marker::None,
                    "",
                ));
            }
            if skipped > 0 && what == "fct" {
                c.notes.push((
                    format!(
                        "{skipped} unfinished flow{} not drawn",
                        if skipped == 1 { "" } else { "s" }
                    ),
                    "#cf222e".into(),
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
    match what {
        "fct" => units::secs(v),
        "share" => units::pct(v),
        "jain" => format!("{v:.3}"),
        _ => units::rate(v),
    }
}

/// One run's part in a run section: the run, its document's label (overlays) and dash.
pub(crate) struct RunRef<'a> {
    pub run: &'a RunResult,
    pub label: Option<&'a str>,
    pub dash: &'static str,
    /// Whether the run's link fields are known (an emulated link), else its queue and link
    /// rate are not drawn ([`crate::host::link_known`]).
    pub link_known: bool,
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
    // The link's charts, of the runs whose link is known: a real path's queue and rate are
    // unknown, not zero.
    let with: Vec<(&RunRef, &cclab_results::TimeSeries)> =
        with.into_iter().filter(|(r, _)| r.link_known).collect();
    let Some((first, ts0)) = with.first().copied() else {
        return charts;
    };
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
            let total: Vec<f64> = (0..ts.t_s.len()).map(|i| ts.total_goodput_bps(i)).collect();
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
    let ccs = ccs_of(run);
    let gp: Vec<String> = ccs
        .iter()
        .map(|cc| {
            let mut t = format!("{cc} {}", units::rate(goodput_of(run, cc)));
            if let Some(sh) = share_of(run, cc).filter(|_| ccs.len() > 1) {
                t.push_str(&format!(" ({} of the goodput)", units::pct(sh)));
            }
            t
        })
        .collect();
    let fair = if run.flows.len() > 1 {
        format!("; Jain {:.3}", run.jain)
    } else {
        String::new()
    };
    let open_flows: Vec<String> = unfinished(run)
        .map(|f| format!("flow {} ({}) {}", f.id, f.cc, unfinished_note(run, f)))
        .collect();
    let link_known = crate::host::link_known(doc);
    let link = if link_known {
        format!(
            "; link {} used, queue p99 {}",
            units::pct(run.link.utilization),
            units::ms(run.link.queue_delay_ms.p99)
        )
    } else {
        String::new()
    };
    let _ = write!(
        page.body,
        "<details class=\"run\"{}><summary><strong>{}</strong> <span class=\"muted\">— {}{}{}</span>{}</summary>",
        if open { " open" } else { "" },
        esc(&head),
        esc(&gp.join(", ")),
        fair,
        link,
        if open_flows.is_empty() {
            String::new()
        } else {
            format!(" <span class=\"warn\">⚠ {}</span>", esc(&open_flows.join("; ")))
        }
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
            link_known,
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
.path{max-width:1100px;margin:6px 0;font-size:13.5px}
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
td.ok{color:#1a7f37}td.off,span.off{color:#cf222e;font-weight:600}
.warn{color:#9a6700;font-weight:600}p.warn{background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;padding:6px 10px;max-width:1100px}
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
/// present, errors seen, the work done by the load (interactive charts built, the values they
/// hold, elements in the page) and the load time.
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
  var figs=document.querySelectorAll('figure.plot'),empty=[],marks=0,live=0,points=0;
  for(var i=0;i<figs.length;i++){
    var f=figs[i],ok=false,n=0,hidden=!!f.closest('details:not([open])');
    if(f.__u){
      var u=f.__u,cv=u.ctx&&u.ctx.canvas;live++;points+=u.data[0].length*(u.data.length-1);
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
    interactive:document.querySelectorAll('figure.plot.ts').length,live:live,points:points,
    nodes:document.getElementsByTagName('*').length,
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

    /// A run of a buffer sweep: `buffer` as given, the resolved bytes, and one flow per
    /// (cc, goodput).
    fn buf_run(buffer: &str, bytes: f64, seed: u64, flows: &[(&str, f64)]) -> RunResult {
        let mut r = RunResult {
            seed,
            duration_s: 10.0,
            ..Default::default()
        };
        r.params.insert("link.buffer".into(), json!(buffer));
        r.resolved.insert("link.buffer".into(), json!(buffer));
        r.resolved.insert("link.buffer_bytes".into(), json!(bytes));
        r.resolved.insert("link.bdp_bytes".into(), json!(250_000));
        r.resolved.insert("link.packet_bytes".into(), json!(1500));
        r.link.rate_bps = 50e6;
        for (i, (cc, gp)) in flows.iter().enumerate() {
            r.flows.push(FlowResult {
                id: i as u32,
                cc: cc.to_string(),
                goodput_bps: *gp,
                ..Default::default()
            });
        }
        let g: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
        r.jain = cclab_results::jain(&g);
        r
    }

    fn doc(runs: Vec<RunResult>) -> ResultsDoc {
        ResultsDoc {
            cclab: "0".into(),
            scenario: "buf".into(),
            backend: "sim".into(),
            runs,
            ..Default::default()
        }
    }

    use serde_json::json;

    #[test]
    fn swept_sizes_get_a_numeric_axis() {
        let pair = [("cubic", 10e6), ("bbr", 30e6)];
        // All in BDPs: the multiple of the BDP, from the resolved bytes.
        let runs = [
            buf_run("0.5bdp", 125_000.0, 1, &pair),
            buf_run("1bdp", 250_000.0, 1, &pair),
            buf_run("4bdp", 1_000_000.0, 1, &pair),
        ];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let (v, a) = numeric_x("link.buffer", &refs).unwrap();
        assert_eq!(v, vec![0.5, 1.0, 4.0]);
        assert_eq!(a.label, "buffer (× BDP)");
        assert!(!a.from_zero);
        // All in packets: packets.
        let runs = [
            buf_run("100pkt", 150_000.0, 1, &pair),
            buf_run("400pkt", 600_000.0, 1, &pair),
        ];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let (v, a) = numeric_x("link.buffer", &refs).unwrap();
        assert_eq!((v, a.unit), (vec![100.0, 400.0], Unit::Pkts));
        // Mixed units line up in bytes.
        let runs = [
            buf_run("100pkt", 150_000.0, 1, &pair),
            buf_run("1bdp", 250_000.0, 1, &pair),
            buf_run("64kb", 64_000.0, 1, &pair),
        ];
        let refs: Vec<&RunResult> = runs.iter().collect();
        let (v, a) = numeric_x("link.buffer", &refs).unwrap();
        assert_eq!(
            (v, a.unit),
            (vec![150_000.0, 250_000.0, 64_000.0], Unit::Bytes)
        );
        // Without resolved values, mixed units cannot line up; one unit still can.
        let mut bare = runs.clone();
        for r in &mut bare {
            r.resolved.clear();
        }
        let refs: Vec<&RunResult> = bare.iter().collect();
        assert!(numeric_x("link.buffer", &refs).is_none());
        let refs: Vec<&RunResult> = bare[..1].iter().chain(&bare[..0]).collect();
        assert_eq!(numeric_x("link.buffer", &refs).unwrap().0, vec![100.0]);
        assert_eq!(parse_bytes("64kib"), Some(65536.0));
        // Text that is not a size is not numeric.
        let mut r = buf_run("1bdp", 1.0, 1, &pair);
        r.params.insert("link.aqm".into(), json!("codel"));
        assert!(numeric_x("link.aqm", &[&r]).is_none());
    }

    #[test]
    fn buffer_sweep_charts_goodput_and_share_per_controller() {
        let runs = vec![
            buf_run("0.5bdp", 125_000.0, 1, &[("cubic", 10e6), ("bbr", 30e6)]),
            buf_run("0.5bdp", 125_000.0, 2, &[("cubic", 14e6), ("bbr", 26e6)]),
            buf_run("0.5bdp", 125_000.0, 3, &[("cubic", 12e6), ("bbr", 28e6)]),
            buf_run("4bdp", 1_000_000.0, 1, &[("cubic", 36e6), ("bbr", 12e6)]),
        ];
        let d = doc(runs);
        let pal = Palette::new(["cubic", "bbr"]);
        let charts = matrix_charts(&[(&d, None, "")], &pal);
        let names: Vec<&str> = charts.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["goodput-vs-buffer", "share-vs-buffer"]);
        let share = &charts[1].1;
        let line = |n: &str| share.lines.iter().find(|l| l.name == n).unwrap();
        // Medians over the three seeds at 0.5 BDP: cubic 12/40, bbr 28/40.
        assert_eq!(line("cubic").points[0], (0.5, 0.3));
        assert!((line("bbr").points[0].1 - 0.7).abs() < 1e-12);
        assert_eq!(line("cubic").points[1], (4.0, 0.75));
        assert_eq!(line("cubic").band[0], (0.5, 0.25, 0.35));
        assert_eq!(share.y.range, Some((0.0, 1.0)));
        assert!(
            line("cubic").tips[0].contains("median of 3 seeds 30.0%"),
            "{:?}",
            line("cubic").tips
        );
        assert!(share
            .notes
            .iter()
            .any(|n| n.0.contains("line: median of 3 seeds")));
        // Goodput: the median, not the mean (12 Mbit/s; the mean would be the same here,
        // so check the skewed point of bbr: 28).
        let gp = &charts[0].1;
        let bbr = gp.lines.iter().find(|l| l.name == "bbr").unwrap();
        assert_eq!(bbr.points[0], (0.5, 28e6));
        let svg = plot::line_chart(&charts[1].1, "t");
        assert!(svg.contains("buffer (× BDP)") && svg.contains("share of the goodput (%)"));
    }

    #[test]
    fn one_controller_many_flows_charts_jain() {
        let runs = vec![
            buf_run("1bdp", 250_000.0, 1, &[("cubic", 10e6), ("cubic", 30e6)]),
            buf_run("2bdp", 500_000.0, 1, &[("cubic", 20e6), ("cubic", 20e6)]),
        ];
        let d = doc(runs);
        let charts = matrix_charts(&[(&d, None, "")], &Palette::new(["cubic"]));
        let j = charts
            .iter()
            .find(|c| c.0 == "jain-vs-buffer")
            .expect("jain chart");
        assert_eq!(j.1.lines[0].points, vec![(1.0, 0.8), (2.0, 1.0)]);
    }

    #[test]
    fn summary_shows_jain_shares_and_unfinished_flows() {
        let mut r = buf_run("1bdp", 250_000.0, 1, &[("cubic", 10e6), ("bbr", 30e6)]);
        r.flows[0].size_bytes = Some(50_000_000);
        r.flows[0].bytes_delivered = 12_500_000;
        r.flows[1].size_bytes = Some(100_000);
        r.flows[1].fct_s = Some(0.5);
        let d = doc(vec![r]);
        let mut out = String::new();
        summary_table(&mut out, &d, &Palette::new(["cubic", "bbr"]));
        assert!(
            out.contains(">Jain</th>") && out.contains(">0.800</td>"),
            "{out}"
        );
        assert!(out.contains(">cubic share</th>") && out.contains(">bbr share</th>"));
        assert!(
            out.contains(">25.0%</td>") && out.contains(">75.0%</td>"),
            "{out}"
        );
        assert!(out.contains(">unfinished</td>"), "{out}");
        assert!(out.contains("12.5 MB of 50.0 MB delivered (25.0%) in the 10.00 s run"));
        let mut w = String::new();
        unfinished_warning(&mut w, &d);
        assert!(
            w.contains("1 sized flow unfinished") && w.contains("#1 flow 0 (cubic)"),
            "{w}"
        );
        // Nothing unfinished, no warning.
        let mut ok = d.clone();
        ok.runs[0].flows[0].fct_s = Some(3.0);
        let mut w = String::new();
        unfinished_warning(&mut w, &ok);
        assert!(w.is_empty());
    }

    /// A measurement of a real host: two runs with time series, the link fields all zero.
    fn host_doc() -> ResultsDoc {
        let runs = (1..=2)
            .map(|seed| {
                let mut r = buf_run("1bdp", 0.0, seed, &[("cubic", 40e6)]);
                r.params.clear();
                r.resolved.clear();
                r.link = Default::default();
                r.params.insert("flows.cc".into(), json!("cubic"));
                r.series = Some(cclab_results::TimeSeries {
                    interval_s: 0.1,
                    t_s: vec![0.1, 0.2],
                    link_queue_bytes: vec![0.0, 0.0],
                    flows: vec![cclab_results::FlowSeries {
                        cc: "cubic".into(),
                        goodput_bps: vec![40e6, 40e6],
                        cwnd_pkts: vec![10.0, 20.0],
                        inflight_pkts: vec![10.0, 20.0],
                        srtt_ms: vec![20.0, 21.0],
                        ..Default::default()
                    }],
                    ..Default::default()
                });
                r
            })
            .collect();
        ResultsDoc {
            backend: "host".into(),
            scenario: "perf".into(),
            ..doc(runs)
        }
    }

    #[test]
    fn real_paths_show_no_link_figures() {
        let d = host_doc();
        let page = render(&[Source::new(d.clone())], &Options::default());
        assert!(page.contains("host backend") && page.contains("goodput per flow"));
        for link in [
            "link used",
            "queue p99",
            "drops buf",
            "bottleneck queue",
            "of the link rate",
        ] {
            assert!(!page.contains(link), "{link} in a real path's report");
        }
        assert!(page.contains("path: real path to"), "no path line");
        // The same runs on the simulator show their link.
        let sim = ResultsDoc {
            backend: "sim".into(),
            ..d
        };
        let page = render(&[Source::new(sim)], &Options::default());
        for link in ["link used", "queue p99", "bottleneck queue"] {
            assert!(
                page.contains(link),
                "{link} missing from a simulated report"
            );
        }
    }

    #[test]
    fn repeated_runs_name_the_median_and_the_published_ratio() {
        let mut runs = vec![
            buf_run("1bdp", 250_000.0, 1, &[("cubic", 10e6)]),
            buf_run("1bdp", 250_000.0, 2, &[("cubic", 20e6)]),
            buf_run("1bdp", 250_000.0, 3, &[("cubic", 90e6)]),
        ];
        for r in &mut runs {
            r.reference = Some(json!({"goodput_bps": 16e6, "flows.cc": "cubic", "unit": "Mbit/s"}));
        }
        let d = doc(runs);
        let (svg, _) = headline(&d, &Palette::new(["cubic"]), "h");
        assert!(
            svg.contains("goodput per run vs published, median of 3 seeds"),
            "{svg}"
        );
        assert!(
            svg.contains("median of 3 seeds 20.0 Mbit/s [10.0 Mbit/s – 90.0 Mbit/s]"),
            "{svg}"
        );
        assert!(svg.contains("cclab / published ×1.25"), "{svg}");
        let mut out = String::new();
        seeds_table(&mut out, &d);
        assert!(
            out.contains(">cclab / published</th>") && out.contains("×1.25</td>"),
            "{out}"
        );
    }
}
