//! One module per command: its arguments (clap) beside its handler. `main.rs` parses the
//! command line and dispatches here; what the commands share (writing results directories,
//! real-host errors, controller lists) is below.

pub(crate) mod advise;
pub(crate) mod bench;
pub(crate) mod calibrate;
pub(crate) mod compare;
pub(crate) mod controllers;
pub(crate) mod doctor;
pub(crate) mod lab;
pub(crate) mod remote;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod trace;

use cclab::reports;
use cclab::runner::{self, Error};
use cclab_report::{export, html, load};
use clap::Args;
use std::path::Path;

#[derive(Args)]
pub(crate) struct JsonArg {
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

pub(crate) fn prepare_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(format!(
            "cannot create output directory {}: {e}",
            dir.display()
        ))
    })
}

pub(crate) fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text)
        .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))
}

/// DIR/results.json, DIR/flows.csv, DIR/series/run-<k>.csv, DIR/meta.json; with several
/// files, one sub-directory per scenario name. Then DIR/report.html over all of them, built
/// from those files (so `cclab report DIR` rebuilds the same page).
pub(crate) fn write_out(
    dir: &Path,
    plans: &[runner::Plan],
    docs: &[cclab_results::ResultsDoc],
) -> Result<(), Error> {
    let metas: Vec<(&str, &str, Option<&str>)> = plans
        .iter()
        .map(|p| (p.name.as_str(), p.path.as_str(), p.description.as_deref()))
        .collect();
    write_docs(dir, &metas, docs)
}

/// [`write_out`] for documents described by (name, source, description).
pub(crate) fn write_docs(
    dir: &Path,
    metas: &[(&str, &str, Option<&str>)],
    docs: &[cclab_results::ResultsDoc],
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
        write_file(&base.join("results.json"), &export::json(d))?;
        write_file(
            &base.join("meta.json"),
            &load::meta_json(name, path, *description, d),
        )?;
        write_file(&base.join("flows.csv"), &export::flows_csv(d))?;
        let sdir = base.join("series");
        prepare_dir(&sdir)?;
        for (i, r) in d.runs.iter().enumerate() {
            if let Some(s) = &r.series {
                write_file(&sdir.join(format!("run-{}.csv", i + 1)), &s.to_csv())?;
            }
        }
    }
    reports::write_report(&bases, &dir.join("report.html"), &html::Options::default())?;
    Ok(())
}

pub(crate) fn remote_err(e: cclab_remote::RemoteError) -> Error {
    Error {
        msg: e.to_string(),
        exit: e.exit_code(),
    }
}

pub(crate) fn cc_list(s: Option<&str>) -> Vec<String> {
    s.unwrap_or("")
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}
