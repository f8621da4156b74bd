//! `report.html` for `cclab run --out` and `cclab report`, and `cclab compare`.
//!
//! The report is always built from what is on disk (results.json + series/run-N.csv +
//! meta.json), so `cclab report DIR` rebuilds exactly the page `cclab run --out DIR` wrote.

use crate::runner::Error;
use cclab_report::{chartfile, compare, html, load};
use std::path::{Path, PathBuf};

/// Load every results document under each path (directories, sub-directories, results.json).
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<load::Source>, Error> {
    let mut out = Vec::new();
    for p in paths {
        out.extend(load::load(p).map_err(Error::new)?);
    }
    Ok(out)
}

/// Build the report of `inputs` into `out` (an HTML file); returns its size in bytes.
pub fn write_report(inputs: &[PathBuf], out: &Path, opts: &html::Options) -> Result<usize, Error> {
    write_report_page(inputs, out, opts).map(|page| page.len())
}

/// [`write_report`], returning the page written.
pub fn write_report_page(
    inputs: &[PathBuf],
    out: &Path,
    opts: &html::Options,
) -> Result<String, Error> {
    let sources = load_all(inputs)?;
    if !opts.labels.is_empty() && opts.labels.len() != sources.len() {
        return Err(Error::new(format!(
            "--label given {} times for {} results documents ({}): give one per document, in order",
            opts.labels.len(),
            sources.len(),
            sources
                .iter()
                .enumerate()
                .map(|(i, s)| html::default_label(s, i))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let page = html::render(&sources, opts);
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::new(format!("cannot create {}: {e}", parent.display())))?;
    }
    std::fs::write(out, &page)
        .map_err(|e| Error::new(format!("cannot write {}: {e}", out.display())))?;
    Ok(page)
}

/// The report of `inputs` with every chart drawn (no lazy sections), for the chart files:
/// the same charts, names and order as the page written with `opts`.
pub fn full_page(inputs: &[PathBuf], opts: &html::Options) -> Result<String, Error> {
    let opts = html::Options {
        lazy: false,
        ..opts.clone()
    };
    Ok(html::render(&load_all(inputs)?, &opts))
}

/// Write every chart of `page` into `dir` as SVG (`svg`) and/or PNG (`png_scale`).
pub fn write_charts(
    page: &str,
    dir: &Path,
    svg: bool,
    png_scale: Option<f32>,
) -> Result<chartfile::Written, Error> {
    chartfile::write(&chartfile::charts(page), dir, svg, png_scale).map_err(Error::new)
}

/// Compare the results under `a` and `b`.
pub fn compare_paths(
    a: &Path,
    b: &Path,
    from_s: Option<f64>,
) -> Result<compare::Comparison, Error> {
    let da: Vec<_> = load::load(a)
        .map_err(Error::new)?
        .into_iter()
        .map(|s| s.doc)
        .collect();
    let db: Vec<_> = load::load(b)
        .map_err(Error::new)?
        .into_iter()
        .map(|s| s.doc)
        .collect();
    let mut c = compare::compare(&da, &db, &a.display().to_string(), &b.display().to_string());
    if let Some(t) = from_s {
        c.add_steady(&da, &db, t);
    }
    Ok(c)
}
