//! Results directories: what `cclab run --out DIR` (and the Python package's
//! `Results.write`) puts on disk, read back by `cclab report` and `cclab compare`.
//!
//! DIR/results.json, DIR/meta.json, DIR/flows.csv, DIR/series/run-<k>.csv and the Parquet
//! tables DIR/{flows,runs,series}.parquet ([`cclab_report::parquet`]); with several
//! documents, one sub-directory per scenario name. Then DIR/report.html over all of them,
//! built from those files (so `cclab report DIR` rebuilds the same page).

use crate::reports;
use crate::runner::{self, Error};
use cclab_report::{describe, export, html, load, parquet};
use cclab_results::ResultsDoc;
use std::path::Path;

/// Create `dir` (and its parents) if missing.
pub fn prepare_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(format!(
            "cannot create output directory {}: {e}",
            dir.display()
        ))
    })
}

/// Write `bytes` to `path`, with an error naming the file.
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), Error> {
    std::fs::write(path, bytes)
        .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))
}

/// The results directory of `cclab run --out DIR`: one document per plan (module doc).
pub fn write_out(dir: &Path, plans: &[runner::Plan], docs: &[ResultsDoc]) -> Result<(), Error> {
    let metas: Vec<(&str, &str, Option<&str>)> = plans
        .iter()
        .map(|p| (p.name.as_str(), p.path.as_str(), p.description.as_deref()))
        .collect();
    write_docs(dir, &metas, docs)
}

/// [`write_out`] for documents described by (name, source, description).
pub fn write_docs(
    dir: &Path,
    metas: &[(&str, &str, Option<&str>)],
    docs: &[ResultsDoc],
) -> Result<(), Error> {
    let mut bases = Vec::new();
    for ((name, path, description), d) in metas.iter().zip(docs) {
        let base = if docs.len() == 1 {
            dir.to_path_buf()
        } else {
            dir.join(name)
        };
        prepare_dir(&base)?;
        bases.push(base.clone());
        write_file(&base.join("results.json"), export::json(d))?;
        write_file(
            &base.join("meta.json"),
            load::meta_json(name, path, *description, d),
        )?;
        write_file(&base.join("flows.csv"), export::flows_csv(d))?;
        for (file, bytes) in parquet::files(d)
            .map_err(|e| Error::new(format!("cannot encode the Parquet tables of {name}: {e}")))?
        {
            write_file(&base.join(file), bytes)?;
        }
        let sdir = base.join("series");
        prepare_dir(&sdir)?;
        for (i, r) in d.runs.iter().enumerate() {
            if let Some(s) = &r.series {
                write_file(&sdir.join(format!("run-{}.csv", i + 1)), s.to_csv())?;
            }
        }
    }
    reports::write_report(&bases, &dir.join("report.html"), &html::Options::default())?;
    Ok(())
}

/// The heading of a document's terminal table: the scenario, its file, the backend and the
/// number of runs, then its description, path and overrides (one line each, when known).
pub fn title(name: &str, path: &str, description: Option<&str>, d: &ResultsDoc) -> String {
    let runs = d.runs.len();
    let mut title = format!(
        "{name}  ({path}, {} backend, {runs} run{})",
        d.backend,
        if runs == 1 { "" } else { "s" }
    );
    if let Some(desc) = description {
        title.push_str(&format!("\n  {}", desc.trim()));
    }
    if let Some(path) = describe::path_line(d) {
        title.push_str(&format!("\n  {path}"));
    }
    if let Some(o) = describe::overrides_line(d) {
        title.push_str(&format!("\n  {o}"));
    }
    title
}
