//! Results directories: what `cclab run --out DIR` (and the Python package's
//! `Results.write`) puts on disk, read back by `cclab report` and `cclab compare`.
//!
//! DIR/results.json, DIR/meta.json, DIR/flows.csv, DIR/series/run-<k>.csv and the Parquet
//! tables DIR/{flows,runs,series}.parquet ([`cclab_report::parquet`]); with several
//! documents, one sub-directory per scenario name. Then DIR/report.html over all of them,
//! built from those files (so `cclab report DIR` rebuilds the same page).

use crate::reports;
use crate::runner::{self, Error};
use cclab_report::{describe, export, html, load, parquet, stream};
use cclab_results::{ResultsDoc, RunResult};
use std::path::{Path, PathBuf};

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

/// A results directory of documents held in memory, described by (name, source,
/// description): one document per sub-directory when there are several (module doc).
/// `cclab run --out` writes the same files as its runs come ([`StreamOut`]).
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
            if let Some(csv) = cclab_results::probe::probes_csv(&r.probes) {
                write_file(&sdir.join(format!("run-{}-probes.csv", i + 1)), csv)?;
            }
        }
    }
    reports::write_report(&bases, &dir.join("report.html"), &html::Options::default())?;
    Ok(())
}

/// The most runs whose report.html a streamed results directory gets (the page holds every
/// run; past this `cclab report DIR --runs ...` or the Python package's tables serve better).
pub const STREAM_REPORT_MOST: usize = 5000;

/// The results directory of `cclab run --out DIR` written as the runs come
/// ([`cclab_report::stream`]): the same files as [`write_docs`] (Parquet in row groups), but
/// no run is held in memory once written, so a sweep's memory does not grow with its runs.
pub struct StreamOut {
    dir: PathBuf,
    /// `dir` was made here (removed again by [`StreamOut::abort`] if left empty).
    made_dir: bool,
    bases: Vec<PathBuf>,
    writers: Vec<stream::DirWriter>,
    runs: usize,
}

impl StreamOut {
    /// Start the directory for `plans` (one sub-directory per plan when there are several,
    /// as [`write_docs`] does), with `backend` recorded in the documents.
    pub fn create(dir: &Path, plans: &[runner::Plan], backend: &str) -> Result<StreamOut, Error> {
        let made_dir = !dir.exists();
        prepare_dir(dir)?;
        let mut out = StreamOut {
            dir: dir.to_path_buf(),
            made_dir,
            bases: Vec::new(),
            writers: Vec::new(),
            runs: 0,
        };
        for p in plans {
            let base = if plans.len() == 1 {
                dir.to_path_buf()
            } else {
                dir.join(&p.name)
            };
            let shell = runner::document(p, backend, Vec::new());
            match stream::DirWriter::create(
                &base,
                &p.name,
                &p.path,
                p.description.as_deref(),
                &shell,
            ) {
                Ok(w) => {
                    out.writers.push(w);
                    out.bases.push(base);
                }
                Err(e) => {
                    out.abort();
                    return Err(Error::new(e));
                }
            }
        }
        Ok(out)
    }

    /// Write the next run of plan `plan` (runs come in run order).
    pub fn push(&mut self, plan: usize, r: &RunResult) -> Result<(), Error> {
        self.runs += 1;
        self.writers[plan].push(r).map_err(Error::new)
    }

    /// Close every document's files, then write report.html from them (up to
    /// [`STREAM_REPORT_MOST`] runs; false when the sweep was too large for one page).
    pub fn finish(self) -> Result<bool, Error> {
        for w in self.writers {
            w.finish().map_err(Error::new)?;
        }
        if self.runs > STREAM_REPORT_MOST {
            return Ok(false);
        }
        reports::write_report(
            &self.bases,
            &self.dir.join("report.html"),
            &html::Options::default(),
        )?;
        Ok(true)
    }

    /// Remove everything written so far (a run failed, or the matrix was interrupted).
    pub fn abort(self) {
        for w in self.writers {
            w.abort();
        }
        if self.made_dir {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
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
