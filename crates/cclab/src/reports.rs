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

/// Compare, within the results under `path`, the runs where the swept parameter `by` has one
/// value (A) with those where it has another (B): `link.aqm` when the set swept exactly two
/// values, `link.aqm=droptail,fq_codel` to name two of several. The parameter is taken out of
/// both sides' params, so their points pair by the others (controller, seeds, ...) and its
/// two values show as the setup difference.
pub fn compare_by(
    path: &Path,
    by: &str,
    from_s: Option<f64>,
) -> Result<compare::Comparison, Error> {
    let docs = docs_of(path)?;
    let (key, named) = match by.split_once('=') {
        Some((k, v)) => (
            k.trim(),
            Some(
                v.split(',')
                    .map(|x| x.trim().to_string())
                    .collect::<Vec<_>>(),
            ),
        ),
        None => (by.trim(), None),
    };
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    // The key's values in matrix order.
    let mut values: Vec<String> = Vec::new();
    for r in docs.iter().flat_map(|d| &d.runs) {
        if let Some(v) = r.params.get(key).map(text) {
            if !values.contains(&v) {
                values.push(v);
            }
        }
    }
    let where_ = path.display();
    if values.is_empty() {
        let mut swept: Vec<&str> = docs
            .iter()
            .flat_map(|d| &d.runs)
            .flat_map(|r| r.params.keys().map(String::as_str))
            .collect();
        swept.sort_unstable();
        swept.dedup();
        return Err(Error::new(format!(
            "{where_}: no run has swept parameter {key} (swept here: {})",
            if swept.is_empty() {
                "none: give a second results set, cclab compare A B".to_string()
            } else {
                swept.join(", ")
            }
        )));
    }
    // A named value matches as written or as the same number (`0` for 0.0).
    let same = |x: &str, y: &str| {
        x == y || matches!((x.parse::<f64>(), y.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
    };
    let (va, vb) = match named.as_deref() {
        Some([a, b]) => {
            let mut found = Vec::new();
            for v in [a, b] {
                match values.iter().find(|x| same(x, v)) {
                    Some(x) => found.push(x.clone()),
                    None => {
                        return Err(Error::new(format!(
                            "{where_}: {key} is never {v} (its values: {})",
                            values.join(", ")
                        )))
                    }
                }
            }
            (found[0].clone(), found[1].clone())
        }
        Some(_) => {
            return Err(Error::new(format!(
                "--by {by}: name two values, e.g. --by {key}={}",
                values.iter().take(2).cloned().collect::<Vec<_>>().join(",")
            )))
        }
        None if values.len() == 2 => (values[0].clone(), values[1].clone()),
        None => {
            return Err(Error::new(format!(
                "{where_}: {key} takes {} value{} here ({}); compare needs two: name them, e.g. --by {key}={}",
                values.len(),
                if values.len() == 1 { "" } else { "s" },
                values.join(", "),
                values.iter().take(2).cloned().collect::<Vec<_>>().join(",")
            )))
        }
    };
    let side = |val: &str| -> Vec<cclab_results::ResultsDoc> {
        docs.iter()
            .map(|d| {
                let mut d = d.clone();
                d.runs
                    .retain(|r| r.params.get(key).map(text).as_deref() == Some(val));
                for r in &mut d.runs {
                    r.params.remove(key);
                }
                d
            })
            .filter(|d| !d.runs.is_empty())
            .collect()
    };
    let (da, db) = (side(&va), side(&vb));
    Ok(compare_docs(
        &da,
        &db,
        &format!("{key}={va}"),
        &format!("{key}={vb}"),
        from_s,
    ))
}

/// Compare the results under `a` and `b`.
pub fn compare_paths(
    a: &Path,
    b: &Path,
    from_s: Option<f64>,
) -> Result<compare::Comparison, Error> {
    let (da, db) = (docs_of(a)?, docs_of(b)?);
    Ok(compare_docs(
        &da,
        &db,
        &a.display().to_string(),
        &b.display().to_string(),
        from_s,
    ))
}

/// The results documents under `path`.
fn docs_of(path: &Path) -> Result<Vec<cclab_results::ResultsDoc>, Error> {
    Ok(load::load(path)
        .map_err(Error::new)?
        .into_iter()
        .map(|s| s.doc)
        .collect())
}

/// The comparison of two sides, with the steady-state rows from `from_s` on if asked.
fn compare_docs(
    da: &[cclab_results::ResultsDoc],
    db: &[cclab_results::ResultsDoc],
    label_a: &str,
    label_b: &str,
    from_s: Option<f64>,
) -> compare::Comparison {
    let mut c = compare::compare(da, db, label_a, label_b);
    if let Some(t) = from_s {
        c.add_steady(da, db, t);
    }
    c
}
