//! # cclab._native: the library the CLI calls, for Python
//!
//! The Python package (`python/cclab`) is a thin layer over this module; this module is a
//! thin layer over the `cclab` library crate, the one `cclab run` calls: scenarios are
//! planned by [`cclab::runner::plan_text`], run by [`cclab::runner::execute`] (or one run at
//! a time by [`cclab::runner::run_one`] for a distributed sweep), and written by
//! [`cclab::output`]. So a run from Python has the CLI's results, byte for byte, and its
//! errors carry the CLI's one-line messages ([`CclabError`]).
//!
//! A scenario crosses the boundary as its text, origin, directory, overrides, seed and
//! backend ([`Spec`]); results as a [`Results`] object whose tables come as Parquet bytes
//! (the same bytes as the results directory's `.parquet` files), which polars reads
//! without copying values through Python objects.

use cclab::runner::{self, Error, Plan, RunOptions};
use cclab_report::{columns, export, parquet, table};
use cclab_results::{ResultsDoc, RunResult};
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

mod drive;

pyo3::create_exception!(
    _native,
    CclabError,
    PyException,
    "A cclab error: bad scenario input, a backend the machine lacks, a file that cannot be \
     written. The message is the CLI's one-line message."
);

fn py_err(e: Error) -> PyErr {
    if e.exit == 130 {
        PyKeyboardInterrupt::new_err(e.msg)
    } else {
        CclabError::new_err(e.msg)
    }
}

/// What a scenario is, as the Python layer holds it: the tuple `Scenario._spec` makes,
/// (text, origin, dir, overrides, seed, repeat, backend).
#[derive(FromPyObject)]
struct Spec(
    String,
    String,
    Option<PathBuf>,
    Vec<String>,
    Option<u64>,
    u32,
    String,
);

impl Spec {
    /// The backend's name.
    fn backend(&self) -> &str {
        &self.6
    }

    /// The run options it sets (the rest at their defaults).
    fn opts(&self) -> PyResult<RunOptions> {
        if self.5 == 0 {
            return Err(CclabError::new_err("repeat must be at least 1"));
        }
        Ok(RunOptions {
            backend: self.backend().to_string(),
            overrides: self.3.clone(),
            seed: self.4,
            repeat: self.5,
            // `py:module:Class` flows are taken: `run` drives them (drive.rs).
            py_controllers: true,
            ..Default::default()
        })
    }

    /// Whether the scenario has `py:module:Class` flows (then [`drive::run_py`] runs it).
    fn has_py_flows(&self) -> PyResult<bool> {
        let opts = self.opts()?;
        if self.backend() != "sim" || !self.0.contains(cclab_scenario::PY_PREFIX) {
            return Ok(false);
        }
        let plan = runner::plan_text(&self.0, &self.1, self.2.as_deref(), &opts).map_err(py_err)?;
        Ok(runner::has_py_flows(&plan))
    }

    fn plan(&self) -> PyResult<Plan> {
        runner::plan_text(&self.0, &self.1, self.2.as_deref(), &self.opts()?).map_err(py_err)
    }
}

/// The scenario's plan as JSON: its name, description, origin, and each matrix point's
/// label, swept params and resolved values.
#[pyfunction]
fn plan_info(spec: Spec) -> PyResult<String> {
    let plan = spec.plan()?;
    let points: Vec<serde_json::Value> = plan
        .points
        .iter()
        .map(|p| {
            serde_json::json!({
                "label": p.label(),
                "seed": p.scenario.seed,
                "params": p.params,
                "resolved": p.resolved(),
            })
        })
        .collect();
    let backend = cclab::backends::by_name(spec.backend()).map_err(CclabError::new_err)?;
    let v = serde_json::json!({
        "backend": backend.name(),
        "parallel_runs": backend.parallel_runs(),
        "name": plan.name,
        "description": plan.description,
        "origin": plan.path,
        "points": points,
    });
    Ok(v.to_string())
}

/// Runs `f` on another thread with the GIL released, checking for Ctrl-C every 50 ms: on
/// one, `cancel` is set and the signal's exception is returned once `f` has stopped.
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    cancel: Arc<AtomicBool>,
    f: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    // Behind a lock only to cross into the GIL-free closure (a receiver is not Sync).
    let rx = std::sync::Mutex::new(rx);
    let mut interrupted = None;
    loop {
        match py.detach(|| rx.lock().unwrap().recv_timeout(Duration::from_millis(50))) {
            Ok(v) => {
                let _ = worker.join();
                return match interrupted {
                    Some(e) => Err(e),
                    None => Ok(v),
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if interrupted.is_none() {
                    if let Err(e) = py.check_signals() {
                        cancel.store(true, Ordering::Relaxed);
                        interrupted = Some(e);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = worker.join();
                return Err(CclabError::new_err("a run failed unexpectedly (a bug)"));
            }
        }
    }
}

/// Run every point of the scenario with `repeat` seeds each on the backend, `jobs` runs in
/// parallel (0: one per core), as `cclab run` does. Releases the GIL; Ctrl-C stops it.
#[pyfunction]
#[pyo3(signature = (spec, jobs, progress, trace_dir))]
fn run(
    py: Python<'_>,
    spec: Spec,
    jobs: usize,
    progress: bool,
    trace_dir: Option<PathBuf>,
) -> PyResult<Results> {
    if spec.has_py_flows()? {
        return drive::run_py(py, &spec);
    }
    let plan = spec.plan()?;
    let cancel = Arc::new(AtomicBool::new(false));
    let opts = RunOptions {
        jobs,
        progress,
        trace_dir,
        cancel: Some(cancel.clone()),
        ..spec.opts()?
    };
    let (plan, docs) = interruptible(py, cancel, move || {
        let docs = runner::execute(std::slice::from_ref(&plan), &opts);
        (plan, docs)
    })?;
    let doc = docs.map_err(py_err)?.remove(0);
    Ok(Results::of_plan(&plan, doc))
}

/// Runs `indices` of the scenario (run k is point k / repeat with seed + k % repeat), one
/// after the other: a task of a sweep spread over workers. Returns (k, ok, run JSON or the
/// error's message) for each, so one failed run does not lose the others. Releases the GIL.
#[pyfunction]
fn run_jobs(
    py: Python<'_>,
    spec: Spec,
    indices: Vec<usize>,
) -> PyResult<Vec<(usize, bool, String)>> {
    let plan = spec.plan()?;
    let cancel = Arc::new(AtomicBool::new(false));
    let stop = cancel.clone();
    let opts = spec.opts()?;
    interruptible(py, cancel, move || {
        let mut out = Vec::with_capacity(indices.len());
        for k in indices {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            out.push(match runner::run_one(&plan, k, &opts) {
                Ok(r) => (
                    k,
                    true,
                    serde_json::to_string(&r).expect("a run serialises"),
                ),
                Err(e) => (k, false, e.msg),
            });
        }
        out
    })
}

/// The results document of the scenario from its runs' JSON (from [`run_jobs`]), in run
/// order: the document a local run of the same scenario gives.
#[pyfunction]
fn assemble(spec: Spec, runs: Vec<String>) -> PyResult<Results> {
    let plan = spec.plan()?;
    let runs = runs
        .iter()
        .map(|j| serde_json::from_str::<RunResult>(j))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CclabError::new_err(format!("a run's results do not parse: {e}")))?;
    let backend = cclab::backends::by_name(spec.backend()).map_err(CclabError::new_err)?;
    let doc = runner::document(&plan, backend.name(), runs);
    Ok(Results::of_plan(&plan, doc))
}

/// A scenario file's text, with the CLI's error when it cannot be read.
#[pyfunction]
fn read_scenario(path: PathBuf) -> PyResult<String> {
    cclab_scenario::ScenarioFile::read_text(&path).map_err(|e| CclabError::new_err(e.to_string()))
}

/// Start writing the scenario's results directory into `dir` as its runs come
/// ([`cclab_report::stream`]): a sweep's results on disk, never all in memory.
#[pyfunction]
fn stream(spec: Spec, dir: PathBuf) -> PyResult<Stream> {
    let plan = spec.plan()?;
    let backend = cclab::backends::by_name(spec.backend()).map_err(CclabError::new_err)?;
    let shell = runner::document(&plan, backend.name(), Vec::new());
    let w = cclab_report::stream::DirWriter::create(
        &dir,
        &plan.name,
        &plan.path,
        plan.description.as_deref(),
        &shell,
    )
    .map_err(CclabError::new_err)?;
    Ok(Stream {
        w: std::sync::Mutex::new(Some(w)),
        dir,
    })
}

/// A results directory being written run by run ([`stream`]).
#[pyclass(module = "cclab._native", frozen)]
struct Stream {
    w: std::sync::Mutex<Option<cclab_report::stream::DirWriter>>,
    dir: PathBuf,
}

#[pymethods]
impl Stream {
    /// The next run (its JSON from `run_jobs`), in run order.
    fn push(&self, run: &str) -> PyResult<()> {
        let r: RunResult = serde_json::from_str(run)
            .map_err(|e| CclabError::new_err(format!("a run's results do not parse: {e}")))?;
        let mut w = self.w.lock().unwrap();
        let w = w
            .as_mut()
            .ok_or_else(|| CclabError::new_err("the results directory is already finished"))?;
        w.push(&r).map_err(CclabError::new_err)
    }

    /// Finish the files; with `report`, write report.html from them as `cclab report` does.
    fn finish(&self, py: Python<'_>, report: bool) -> PyResult<()> {
        let w = self
            .w
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| CclabError::new_err("the results directory is already finished"))?;
        py.detach(|| {
            w.finish().map_err(Error::new)?;
            if report {
                cclab::reports::write_report(
                    std::slice::from_ref(&self.dir),
                    &self.dir.join("report.html"),
                    &cclab_report::html::Options::default(),
                )?;
            }
            Ok(())
        })
        .map_err(py_err)
    }
}

/// The controllers of a backend as `cclab controllers --json` prints them.
#[pyfunction]
#[pyo3(signature = (backend = "sim"))]
fn controllers(backend: &str) -> PyResult<String> {
    let b = cclab::backends::by_name(backend).map_err(CclabError::new_err)?;
    Ok(cclab::backends::controllers_json(b.as_ref()).to_string())
}

/// Every results document under `path` (a results directory, a directory of them, or a
/// results.json), as `cclab report` and `cclab compare` read them.
#[pyfunction]
fn read(path: PathBuf) -> PyResult<Vec<Results>> {
    let sources = cclab::reports::load_all(std::slice::from_ref(&path)).map_err(py_err)?;
    Ok(sources
        .into_iter()
        .map(|s| Results {
            name: s.doc.scenario.clone(),
            path: s
                .file
                .clone()
                .or_else(|| s.doc.source.as_ref().map(|x| x.file.clone()))
                .unwrap_or_else(|| path.display().to_string()),
            description: s.description,
            doc: s.doc,
        })
        .collect())
}

/// A JSON value (from a Python dict or value) as TOML: a whole scenario (`value_only`
/// false: a table, written as a scenario file in the dict's key order, which is the
/// matrix's order) or one `--set` value (an inline value).
#[pyfunction]
fn to_toml(json: &str, value_only: bool) -> PyResult<String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| CclabError::new_err(e.to_string()))?;
    if value_only {
        return Ok(inline(&v, "the value")?.to_string());
    }
    let serde_json::Value::Object(m) = &v else {
        return Err(CclabError::new_err(
            "a scenario is a dict of keys (name, duration, link, hosts, flows, ...)",
        ));
    };
    let mut out = String::new();
    emit_table(&mut out, "", m)?;
    Ok(out)
}

/// A TOML key, quoted unless bare.
fn toml_key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_string()
    } else {
        toml::Value::String(k.to_string()).to_string()
    }
}

fn is_table_array(v: &serde_json::Value) -> bool {
    matches!(v, serde_json::Value::Array(a) if !a.is_empty() && a.iter().all(|x| x.is_object()))
}

/// A table's body at `path` (empty: the root): its plain keys first, then its tables
/// (`[path.key]`) and arrays of tables (`[[path.key]]`), keeping the dict's order within each.
fn emit_table(
    out: &mut String,
    path: &str,
    m: &serde_json::Map<String, serde_json::Value>,
) -> PyResult<()> {
    let full = |k: &str| {
        if path.is_empty() {
            toml_key(k)
        } else {
            format!("{path}.{}", toml_key(k))
        }
    };
    for (k, v) in m {
        if !v.is_object() && !is_table_array(v) {
            out.push_str(&format!("{} = {}\n", toml_key(k), inline(v, &full(k))?));
        }
    }
    for (k, v) in m {
        if let serde_json::Value::Object(sub) = v {
            out.push_str(&format!("\n[{}]\n", full(k)));
            emit_table(out, &full(k), sub)?;
        } else if is_table_array(v) {
            for item in v.as_array().into_iter().flatten() {
                out.push_str(&format!("\n[[{}]]\n", full(k)));
                if let serde_json::Value::Object(sub) = item {
                    emit_table(out, &full(k), sub)?;
                }
            }
        }
    }
    Ok(())
}

/// An inline TOML value; `at` names it in errors.
fn inline(v: &serde_json::Value, at: &str) -> PyResult<toml::Value> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => {
            return Err(CclabError::new_err(format!(
                "{at}: None has no TOML value: leave the key out for its default"
            )))
        }
        J::Bool(b) => toml::Value::Boolean(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => toml::Value::Integer(i),
            None => toml::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => toml::Value::String(s.clone()),
        J::Array(a) => toml::Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, x)| inline(x, &format!("{at}[{i}]")))
                .collect::<PyResult<_>>()?,
        ),
        J::Object(m) => toml::Value::Table(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), inline(x, &format!("{at}.{k}"))?)))
                .collect::<PyResult<_>>()?,
        ),
    })
}

/// The cclab version these results are written by.
#[pyfunction]
fn version() -> &'static str {
    cclab_results::VERSION
}

/// One scenario's results document.
#[pyclass(module = "cclab._native", frozen)]
struct Results {
    doc: ResultsDoc,
    name: String,
    path: String,
    description: Option<String>,
}

impl Results {
    fn of_plan(plan: &Plan, doc: ResultsDoc) -> Results {
        Results {
            name: plan.name.clone(),
            path: plan.path.clone(),
            description: plan.description.clone(),
            doc,
        }
    }
}

#[pymethods]
impl Results {
    /// The scenario's name.
    #[getter]
    fn scenario(&self) -> &str {
        &self.name
    }

    /// Where the scenario came from (its file, or how it was given).
    #[getter]
    fn origin(&self) -> &str {
        &self.path
    }

    /// The scenario's description.
    #[getter]
    fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The backend that ran it.
    #[getter]
    fn backend(&self) -> &str {
        &self.doc.backend
    }

    fn __len__(&self) -> usize {
        self.doc.runs.len()
    }

    /// results.json's text: the document without time series, as `cclab run --json`
    /// prints it for one scenario.
    fn json(&self) -> String {
        export::json(&self.doc)
    }

    /// Run `i`'s record (from 0) as JSON, time series included.
    fn run_json(&self, i: usize) -> PyResult<String> {
        let r = self.doc.runs.get(i).ok_or_else(|| {
            pyo3::exceptions::PyIndexError::new_err(format!(
                "run {i} out of range: {} runs",
                self.doc.runs.len()
            ))
        })?;
        Ok(serde_json::to_string(r).expect("a run serialises"))
    }

    /// Table `name` (flows, runs or series) as the bytes of its Parquet file.
    fn parquet<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
        let t = columns::table(&self.doc, name).ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err(format!(
                "no table \"{name}\": the tables are {}",
                columns::TABLES.join(", ")
            ))
        })?;
        let bytes = parquet::encode(&t).map_err(CclabError::new_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// flows.csv's text.
    fn flows_csv(&self) -> String {
        export::flows_csv(&self.doc)
    }

    /// The terminal table `cclab run` prints (markdown: GitHub-flavoured Markdown).
    #[pyo3(signature = (markdown = false))]
    fn table(&self, markdown: bool) -> String {
        let title = cclab::output::title(
            &self.name,
            &self.path,
            self.description.as_deref(),
            &self.doc,
        );
        if markdown {
            table::render_markdown(&self.doc, &title)
        } else {
            table::render(&self.doc, &title)
        }
    }

    /// Write a results directory as `cclab run --out DIR` does (JSON, CSV, Parquet,
    /// report.html), for `cclab report` and `cclab compare` to read.
    fn write(&self, py: Python<'_>, dir: PathBuf) -> PyResult<()> {
        let metas = [(
            self.name.as_str(),
            self.path.as_str(),
            self.description.as_deref(),
        )];
        py.detach(|| cclab::output::write_docs(&dir, &metas, std::slice::from_ref(&self.doc)))
            .map_err(py_err)
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CclabError", m.py().get_type::<CclabError>())?;
    m.add("STREAM_REPORT_MOST", cclab::output::STREAM_REPORT_MOST)?;
    m.add_class::<Results>()?;
    m.add_class::<Stream>()?;
    m.add_class::<drive::Stepper>()?;
    m.add_function(wrap_pyfunction!(stream, m)?)?;
    m.add_function(wrap_pyfunction!(plan_info, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_jobs, m)?)?;
    m.add_function(wrap_pyfunction!(assemble, m)?)?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(to_toml, m)?)?;
    m.add_function(wrap_pyfunction!(read_scenario, m)?)?;
    Ok(())
}
