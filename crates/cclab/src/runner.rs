//! Scenario files in, results documents out.

use crate::reference;
use cclab_results::{Backend, ResultsDoc, RunContext, RunResult, Source, VERSION};
use cclab_scenario::{MatrixPoint, ScenarioFile};
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A one-line, user-facing error, and the exit status it should end the program with.
#[derive(Debug, Clone)]
pub struct Error {
    pub msg: String,
    /// Process exit status: 1, or 130 after SIGINT / 143 after SIGTERM.
    pub exit: u8,
}

impl Error {
    pub fn new(msg: impl Into<String>) -> Self {
        Error {
            msg: msg.into(),
            exit: 1,
        }
    }
}

impl From<cclab_scenario::ScenarioError> for Error {
    fn from(e: cclab_scenario::ScenarioError) -> Self {
        Error::new(e.to_string())
    }
}

impl From<cclab_results::BackendError> for Error {
    fn from(e: cclab_results::BackendError) -> Self {
        let exit = e.signal.map_or(1, |sig| 128 + sig as u8);
        Error {
            msg: e.message,
            exit,
        }
    }
}

impl From<cclab_kernel::KernelError> for Error {
    fn from(e: cclab_kernel::KernelError) -> Self {
        cclab_results::BackendError::from(e).into()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}
impl std::error::Error for Error {}

#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Name of the backend that runs the scenarios (see [`crate::backends`]).
    pub backend: String,
    /// `--set key=value` overrides, applied in order.
    pub overrides: Vec<String>,
    /// `--seed`: replaces the scenario's seed.
    pub seed: Option<u64>,
    /// `--repeat N`: every matrix point with N consecutive seeds.
    pub repeat: u32,
    /// Worker threads (0 = as many as the backend can use).
    pub jobs: usize,
    /// Show progress on stderr for long matrices.
    pub progress: bool,
    /// Kernel runs the machine disturbed ([`cclab_results::LabConditions::disturbed`]) are
    /// run again, after a pause of [`RETRY_PAUSE`], up to this many times; the first quiet
    /// attempt is kept, or else the least disturbed one.
    pub retry_disturbed: u32,
    /// Write a packet trace of every run into this directory (`--trace DIR`):
    /// `<scenario>-run-<k>.trace`, k counting the runs of the results document from 1.
    pub trace_dir: Option<PathBuf>,
    /// Set from elsewhere (the Python package's Ctrl-C) to stop a matrix: no new run starts,
    /// and [`execute`] returns an "interrupted" error (exit status 130).
    pub cancel: Option<Arc<AtomicBool>>,
    /// SIGINT/SIGTERM stop the matrix as `cancel` does: the runs in progress finish, no new
    /// one starts. For a caller that holds a [`cclab_sys::SignalGuard`] and has something to
    /// clean up (`cclab run --out` removes its partial directory).
    pub stop_on_signal: bool,
    /// Take `cc = "py:module:Class"` (Python controllers, simulator only): the Python
    /// package sets it and runs such plans with [`run_one_driven`].
    pub py_controllers: bool,
}

/// How long to wait before re-running a disturbed kernel run: the hypervisor's busy spells
/// on the lab machine come and go over tens of seconds.
pub const RETRY_PAUSE: Duration = Duration::from_secs(30);

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            backend: "sim".into(),
            overrides: Vec::new(),
            seed: None,
            repeat: 1,
            jobs: 0,
            progress: false,
            retry_disturbed: 0,
            trace_dir: None,
            cancel: None,
            stop_on_signal: false,
            py_controllers: false,
        }
    }
}

/// A loaded scenario file, expanded into runs.
pub struct Plan {
    pub path: String,
    pub name: String,
    pub description: Option<String>,
    pub points: Vec<MatrixPoint>,
    /// The file's SHA-256 and the overrides as given, recorded in the results.
    pub source: Source,
    /// The `--set` overrides that set the file's `[reference]` aside: they change the setup
    /// its published figures were measured on ([`crate::reference::setup_overrides`]), so
    /// the runs carry no reference and nothing is scored. Empty otherwise.
    pub reference_set_aside: Vec<String>,
}

impl Plan {
    /// The first matrix point of each distinct `[link]`, in matrix order: the paths the plan
    /// describes (`cclab lab up`, `cclab lab fit-check`).
    pub fn distinct_links(&self) -> Vec<&MatrixPoint> {
        let mut out: Vec<&MatrixPoint> = Vec::new();
        for pt in &self.points {
            if !out.iter().any(|o| o.scenario.link == pt.scenario.link) {
                out.push(pt);
            }
        }
        out
    }
}

/// [`plan`] for a command that uses only a scenario's path and hosts (the kernel lab's
/// `lab up` and `fit-check`): its flows run nothing there, so they are checked against the
/// simulator's controllers and a bbr3 among them is no error.
pub fn plan_path(path: &str, overrides: &[String]) -> Result<Plan, Error> {
    plan(
        path,
        &RunOptions {
            backend: "sim".into(),
            overrides: overrides.to_vec(),
            ..Default::default()
        },
    )
}

/// SHA-256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Load, override and expand one scenario file, checked against the controllers of the
/// backend that will run it.
pub fn plan(path: &str, opts: &RunOptions) -> Result<Plan, Error> {
    let backend = crate::backends::by_name(&opts.backend).map_err(Error::new)?;
    let file =
        ScenarioFile::from_file_with_overrides(path, backend.controllers(), &opts.overrides)?;
    // The bytes the scenario was read from (a file that cannot be read again now was read
    // a moment ago: its hash stays empty rather than failing the run).
    let sha256 = std::fs::read(path)
        .map(|b| sha256_hex(&b))
        .unwrap_or_default();
    plan_file(file, path, sha256, opts)
}

/// [`plan`] for scenario text that is not (or not only) a file: `origin` names it in errors
/// and results (a file name, or e.g. `<dict>`), and relative paths in it (trace files) are
/// taken from `dir`, as a file's are from the file's directory.
pub fn plan_text(
    text: &str,
    origin: &str,
    dir: Option<&std::path::Path>,
    opts: &RunOptions,
) -> Result<Plan, Error> {
    let backend = crate::backends::by_name(&opts.backend).map_err(Error::new)?;
    let mut cat = backend.controllers();
    cat.py_objects = opts.py_controllers && backend.name() == "sim";
    let file = ScenarioFile::from_str_with_overrides(text, origin, cat, &opts.overrides)?
        .with_dir(dir.map(|d| d.to_path_buf()));
    plan_file(file, origin, sha256_hex(text.as_bytes()), opts)
}

/// The seed and the matrix of a scenario loaded with its overrides.
fn plan_file(
    mut file: ScenarioFile,
    path: &str,
    sha256: String,
    opts: &RunOptions,
) -> Result<Plan, Error> {
    if let Some(seed) = opts.seed {
        file.apply_override(&format!("seed={seed}"))?;
    }
    let mut points = file.expand()?;
    let mut reference_set_aside = Vec::new();
    if points.iter().any(|p| p.scenario.reference.is_some()) {
        reference_set_aside = crate::reference::setup_overrides(&opts.overrides);
        if !reference_set_aside.is_empty() {
            for p in &mut points {
                p.scenario.reference = None;
            }
        }
    }
    // `--seed` is not among them: every run records its own seed.
    let overrides = opts.overrides.clone();
    let first = points
        .first()
        .ok_or_else(|| Error::new(format!("{path}: the scenario expands to no runs")))?;
    Ok(Plan {
        path: path.to_string(),
        name: first.scenario.name.clone(),
        description: first.scenario.description.clone(),
        points,
        source: Source {
            file: path.to_string(),
            sha256,
            overrides,
        },
        reference_set_aside,
    })
}

/// One unit of work: a matrix point with one seed.
struct Job<'a> {
    point: &'a MatrixPoint,
    seed: u64,
    /// Where this run's packet trace goes, if traces are on.
    trace: Option<PathBuf>,
}

fn run_job(backend: &dyn Backend, job: &Job) -> Result<RunResult, Error> {
    if let Some(f) = job
        .point
        .scenario
        .flows
        .iter()
        .find(|f| f.cc.starts_with(cclab_scenario::PY_PREFIX))
    {
        return Err(Error::new(format!(
            "{}: cc = \"{}\" is a Python controller: run the scenario with cclab.run(...) or Scenario.run() in Python (not in a distributed sweep)",
            job.point.scenario.name, f.cc
        )));
    }
    let mut sc = job.point.scenario.clone();
    sc.seed = job.seed;
    let ctx = RunContext {
        trace: job.trace.clone(),
    };
    let r = backend.run(&sc, &ctx)?;
    Ok(complete_run(job, &sc, r))
}

/// What every run records besides its backend's measurements: the matrix point's
/// parameters, the resolved scenario, the reference.
fn complete_run(job: &Job, sc: &cclab_scenario::Scenario, mut r: RunResult) -> RunResult {
    r.params = job.point.params.clone();
    r.resolved = sc.resolved();
    if let Some(refv) = &sc.reference {
        r.reference = reference::for_run(refv, &job.point.resolved());
    }
    r
}

/// Whether a plan has flows a Python controller drives (`cc = "py:module:Class"`).
pub fn has_py_flows(plan: &Plan) -> bool {
    plan.points.iter().any(|p| {
        p.scenario
            .flows
            .iter()
            .any(|f| f.cc.starts_with(cclab_scenario::PY_PREFIX))
    })
}

/// What decides the `external` flows of a driven run (see [`run_one_driven`]); each call
/// names the flow's controller as its group gave it (`external` or `py:module:Class`).
pub trait FlowDriver {
    /// The action at the end of one of `flow`'s monitor intervals.
    fn on_interval(
        &mut self,
        flow: usize,
        cc: &str,
        st: &cclab_sim::IntervalStats,
    ) -> Result<cclab_core::cc::external::Action, String>;
    /// Whether `flow`'s ACKs go to [`Self::on_ack`] one by one (slow; no by default).
    fn watch_acks(&mut self, _flow: usize, _cc: &str) -> Result<bool, String> {
        Ok(false)
    }
    /// One ACK of a watched flow: an action or `None` (keep).
    fn on_ack(
        &mut self,
        _flow: usize,
        _cc: &str,
        _ack: &cclab_sim::AckStats,
    ) -> Result<Option<cclab_core::cc::external::Action>, String> {
        Ok(None)
    }
}

/// A [`FlowDriver`] as the simulator's [`cclab_sim::Driver`], with the flows' names.
struct Named<'a> {
    names: &'a [&'a str],
    inner: &'a mut dyn FlowDriver,
}

impl cclab_sim::Driver for Named<'_> {
    type Error = String;
    fn on_interval(
        &mut self,
        flow: usize,
        st: &cclab_sim::IntervalStats,
    ) -> Result<cclab_core::cc::external::Action, String> {
        self.inner.on_interval(flow, self.names[flow], st)
    }
    fn watch_acks(&mut self, flow: usize) -> Result<bool, String> {
        self.inner.watch_acks(flow, self.names[flow])
    }
    fn on_ack(
        &mut self,
        flow: usize,
        ack: &cclab_sim::AckStats,
    ) -> Result<Option<cclab_core::cc::external::Action>, String> {
        self.inner.on_ack(flow, self.names[flow], ack)
    }
}

/// Run `k` of a plan (see [`job_count`]) on the simulator, its `external` flows decided by
/// `driver` at the end of each monitor interval (and at each ACK of the flows it watches):
/// the Python package's `py:module:Class` controllers. A Python controller's flows are
/// recorded under its `py:` name (the controller that ran them is `external`). A driver's
/// error stops the run.
pub fn run_one_driven(
    plan: &Plan,
    k: usize,
    opts: &RunOptions,
    driver: &mut dyn FlowDriver,
) -> Result<RunResult, Error> {
    check_run_index(plan, k, opts)?;
    let job = job(plan, k, opts);
    let mut sc = job.point.scenario.clone();
    sc.seed = job.seed;
    let cfg = cclab_sim::config_from_scenario(&sc).map_err(|e| Error::new(e.to_string()))?;
    let names: Vec<&str> = cfg
        .flows
        .iter()
        .map(|f| sc.flows[f.group as usize].cc.as_str())
        .collect();
    let mut r = cclab_sim::drive(
        &cfg,
        &mut Named {
            names: &names,
            inner: driver,
        },
    )
    .map_err(|e| Error::new(format!("{}: {e}", sc.name)))?;
    // A Python controller's flows are recorded under its `py:` name.
    let py_name = |i: usize| {
        names[i]
            .starts_with(cclab_scenario::PY_PREFIX)
            .then(|| names[i])
    };
    for (i, f) in r.flows.iter_mut().enumerate() {
        if let Some(n) = py_name(i) {
            f.cc = n.to_string();
        }
    }
    for (i, f) in r
        .series
        .iter_mut()
        .flat_map(|s| s.flows.iter_mut())
        .enumerate()
    {
        if let Some(n) = py_name(i) {
            f.cc = n.to_string();
        }
    }
    Ok(complete_run(&job, &sc, r))
}

/// An error unless the plan has a run `k` (from 0).
fn check_run_index(plan: &Plan, k: usize, opts: &RunOptions) -> Result<(), Error> {
    let n = job_count(plan, opts.repeat);
    if k >= n {
        return Err(Error::new(format!(
            "{}: run {} does not exist: the scenario has {n} runs",
            plan.path,
            k + 1
        )));
    }
    Ok(())
}

/// The number of runs of a plan: every matrix point with `repeat` consecutive seeds. Run
/// `k` (from 0) is point `k / repeat` with its seed plus `k % repeat`, the order of the
/// results document.
pub fn job_count(plan: &Plan, repeat: u32) -> usize {
    plan.points.len() * repeat.max(1) as usize
}

/// Run `k` of a plan (see [`job_count`]).
fn job<'a>(plan: &'a Plan, k: usize, opts: &RunOptions) -> Job<'a> {
    let repeat = opts.repeat.max(1) as usize;
    let point = &plan.points[k / repeat];
    Job {
        point,
        seed: point.scenario.seed.wrapping_add((k % repeat) as u64),
        trace: opts
            .trace_dir
            .as_ref()
            .map(|d| d.join(format!("{}-run-{}.trace", plan.name, k + 1))),
    }
}

/// Run `k` of a plan alone (see [`job_count`]): one task of a sweep spread over machines,
/// the same run [`execute`] makes at that place.
pub fn run_one(plan: &Plan, k: usize, opts: &RunOptions) -> Result<RunResult, Error> {
    let backend = crate::backends::by_name(&opts.backend).map_err(Error::new)?;
    check_run_index(plan, k, opts)?;
    if let Some(why) = backend.unavailable() {
        return Err(Error::new(why));
    }
    run_until_quiet(opts, backend.as_ref(), &job(plan, k, opts))
}

/// A plan's results document from its runs, in run order.
pub fn document(plan: &Plan, backend: &str, runs: Vec<RunResult>) -> ResultsDoc {
    ResultsDoc {
        cclab: VERSION.to_string(),
        scenario: plan.name.clone(),
        backend: backend.to_string(),
        runs,
        source: Some(plan.source.clone()),
        ..Default::default()
    }
}

/// Run every point of every plan; returns one document per plan, runs in matrix order
/// (each point's seeds consecutive).
pub fn execute(plans: &[Plan], opts: &RunOptions) -> Result<Vec<ResultsDoc>, Error> {
    execute_into(plans, opts, None, true)
}

/// Where [`execute_into`] hands each run, in run order, as soon as every run before it has
/// come: the index of its plan and the run (time series included).
pub type RunSink<'a> = &'a mut (dyn FnMut(usize, &RunResult) -> Result<(), Error> + Send);

/// [`execute`], handing every run to `sink` in run order as it completes (a results
/// directory written as the runs come, [`cclab_report::stream`]). With a sink and without
/// `keep_series`, the returned documents hold the runs without their time series: those
/// went to the sink, and a sweep of many runs is not held in memory (the series are most
/// of a run's size). A sink's error
/// stops the matrix (no new run starts) and is returned; after a failed run the sink gets
/// nothing more.
pub fn execute_into(
    plans: &[Plan],
    opts: &RunOptions,
    sink: Option<RunSink<'_>>,
    keep_series: bool,
) -> Result<Vec<ResultsDoc>, Error> {
    let backend = crate::backends::by_name(&opts.backend).map_err(Error::new)?;
    if let Some(dir) = &opts.trace_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::new(format!(
                "cannot create the trace directory {}: {e}",
                dir.display()
            ))
        })?;
    }
    let mut jobs = Vec::new();
    let mut owner = Vec::new();
    for (pi, p) in plans.iter().enumerate() {
        for k in 0..job_count(p, opts.repeat) {
            jobs.push(job(p, k, opts));
            owner.push(pi);
        }
    }
    let n = jobs.len();
    // Fail fast, before any run, on what the machine lacks and on a point the backend
    // cannot run as written.
    if let Some(why) = backend.unavailable() {
        return Err(Error::new(why));
    }
    if let Some(why) = plans
        .iter()
        .flat_map(|p| &p.points)
        .find_map(|pt| backend.refuses(&pt.scenario))
    {
        return Err(Error::new(why));
    }
    // A backend that measures real time runs one run at a time, whatever --jobs says.
    let most = backend.parallel_runs().max(1);
    let workers = match opts.jobs {
        0 => most,
        j if most == 1 => j.min(1),
        j => j,
    }
    .clamp(1, n.max(1));
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    // Wall time of the finished runs, µs, and their share of the matrix's work
    // ([`run_cost`], in thousandths): the progress line's estimate scales the work left by
    // the time the work done took, and divides it by the workers (not the rate of the first
    // wave's finishes, nor a count of runs whose sizes differ 100-fold).
    let busy_us = std::sync::atomic::AtomicU64::new(0);
    let real_time = backend.parallel_runs() == 1;
    let costs: Vec<f64> = jobs
        .iter()
        .map(|j| run_cost(&j.point.scenario, real_time))
        .collect();
    let work = Work {
        total: costs.iter().sum(),
        done_milli: std::sync::atomic::AtomicU64::new(0),
    };
    let finished = AtomicBool::new(false);
    // A run stopped by SIGINT/SIGTERM stops the whole matrix: no new run starts.
    let stop = AtomicBool::new(false);
    let told = AtomicBool::new(false);
    let cancelled = || {
        if opts.stop_on_signal {
            if let Some(sig) = cclab_sys::interrupted() {
                if !told.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "{}: stopping once the runs in progress end",
                        cclab_sys::signal_name(sig)
                    );
                }
                return true;
            }
        }
        opts.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    };
    let state = Mutex::new(Delivery {
        results: (0..n).map(|_| None).collect(),
        next: 0,
        sink,
        failed: None,
        keep_series,
    });
    let start = Instant::now();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| loop {
                    if stop.load(Ordering::Relaxed) || cancelled() {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let t0 = Instant::now();
                    let r = run_until_quiet(opts, backend.as_ref(), &jobs[i]);
                    busy_us.fetch_add(t0.elapsed().as_micros() as u64, Ordering::Relaxed);
                    work.done_milli
                        .fetch_add((costs[i] * 1000.0) as u64, Ordering::Relaxed);
                    if matches!(&r, Err(e) if e.exit > 128) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    let mut st = state.lock().unwrap();
                    st.results[i] = Some(r);
                    if !st.deliver(&owner) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    drop(st);
                    done.fetch_add(1, Ordering::Relaxed);
                })
            })
            .collect();
        let shown = opts
            .progress
            .then(|| s.spawn(|| progress(&done, &busy_us, &work, workers, &finished, n, start)));
        // Wait for the workers (each stops at a signal or a cancel), then wake the progress
        // thread to clear its line and end: the run's wall time is its work.
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
        finished.store(true, Ordering::Relaxed);
        if let Some(p) = shown {
            p.thread().unpark();
        }
    });
    let Delivery {
        results, failed, ..
    } = state.into_inner().unwrap();
    if let Some(e) = failed {
        return Err(e);
    }
    if stop.load(Ordering::Relaxed) {
        // The scope has joined every worker: report the signal, not a half matrix.
        let e = results
            .into_iter()
            .flatten()
            .find_map(|r| r.err().filter(|e| e.exit > 128))
            .expect("a run stopped by a signal");
        return Err(e);
    }
    if results.iter().any(Option::is_none) {
        return Err(Error {
            msg: format!(
                "interrupted after {} of {n} runs: no results",
                results.iter().flatten().count()
            ),
            exit: 130,
        });
    }
    let mut runs: Vec<Vec<RunResult>> = plans.iter().map(|_| Vec::new()).collect();
    for (i, r) in results.into_iter().enumerate() {
        let r = r.expect("every job ran")?;
        runs[owner[i]].push(r);
    }
    Ok(plans
        .iter()
        .zip(runs)
        .map(|(p, runs)| document(p, backend.name(), runs))
        .collect())
}

/// The runs of [`execute_into`] as they complete, and what has gone to its sink.
struct Delivery<'s> {
    results: Vec<Option<Result<RunResult, Error>>>,
    /// The first run not yet handed to the sink.
    next: usize,
    sink: Option<RunSink<'s>>,
    /// The sink's error, which stops the matrix.
    failed: Option<Error>,
    /// Runs handed to the sink keep their series.
    keep_series: bool,
}

impl Delivery<'_> {
    /// Hand the sink every completed run from `next` on, in order, up to the first missing
    /// or failed one; each run handed over keeps its flows but drops its series (unless
    /// told to keep them). False when the sink failed.
    fn deliver(&mut self, owner: &[usize]) -> bool {
        let Some(sink) = self.sink.as_mut() else {
            return true;
        };
        if self.failed.is_some() {
            return false;
        }
        while let Some(Some(Ok(r))) = self.results.get_mut(self.next) {
            if let Err(e) = sink(owner[self.next], r) {
                self.failed = Some(e);
                return false;
            }
            if !self.keep_series {
                r.drop_series();
            }
            self.next += 1;
        }
        true
    }
}

/// Run a job; a kernel run whose machine was busy elsewhere (hypervisor steal, element
/// stalls) gets a warning line on stderr, since its figures describe the machine as much as
/// the path, and is run again after a pause while `opts.retry_disturbed` allows.
fn run_until_quiet(
    opts: &RunOptions,
    backend: &dyn Backend,
    job: &Job,
) -> Result<RunResult, Error> {
    let label = job.point.label();
    let what = format!(
        "{}{}",
        job.point.scenario.name,
        if label.is_empty() {
            label
        } else {
            format!(" {label}")
        }
    );
    retry_while_disturbed(opts.retry_disturbed, RETRY_PAUSE, &what, || {
        run_job(backend, job)
    })
}

/// [`cclab_results::first_quiet`] of up to `1 + retries` attempts, warning about each
/// disturbed one and waiting `pause` before the next.
fn retry_while_disturbed(
    retries: u32,
    pause: Duration,
    what: &str,
    attempt: impl FnMut() -> Result<RunResult, Error>,
) -> Result<RunResult, Error> {
    cclab_results::first_quiet(retries, attempt, |n, res, why| {
        let left = retries - n;
        let next = if left > 0 {
            format!("running it again in {} s", pause.as_secs())
        } else if n > 0 {
            format!("keeping the least disturbed of {} attempts", n + 1)
        } else {
            "re-run it on a quiet machine".to_string()
        };
        eprintln!("warning: {what} seed {}: {why}; this run measured the machine as much as the path ({next})", res.seed);
        if left > 0 {
            std::thread::sleep(pause);
        }
    })
}

/// Seconds left for `left` runs of `per_run` seconds each on `workers` workers. Not the
/// elapsed time over the runs done: with 6 workers the first finish comes when 6 runs are
/// almost done, and that estimate said ~95 s for a 16 s matrix.
fn eta_s(per_run: f64, left: usize, workers: usize) -> f64 {
    let par = workers.clamp(1, left.max(1));
    per_run * left as f64 / par as f64
}

/// The matrix's work ([`run_cost`] summed) and how much of it the finished runs were.
struct Work {
    total: f64,
    done_milli: std::sync::atomic::AtomicU64,
}

/// A run's share of a matrix's work, for the progress line's estimate: the simulator's time
/// goes with the packets it moves (about rate x duration / packet size, plus a fixed part),
/// a real-time backend's with the duration (plus its setup). A sized run without a
/// duration counts its bytes at the link's rate.
fn run_cost(sc: &cclab_scenario::Scenario, real_time: bool) -> f64 {
    let rate = sc.link.path.rate_bps.max(1.0);
    let secs = match sc.duration_ns {
        Some(d) => d as f64 / 1e9,
        None => {
            let bytes: f64 = sc
                .flows
                .iter()
                .map(|f| f.size_bytes.unwrap_or(0) as f64 * f.count as f64)
                .sum();
            (bytes * 8.0 / rate).min(sc.run_limit_ns() as f64 / 1e9)
        }
    };
    if real_time {
        secs + 1.0
    } else {
        secs * rate / (8.0 * sc.link.mss.max(1) as f64) + 5_000.0
    }
}

/// Progress on stderr once a matrix has run for 2 s: a live line on a terminal, else a line
/// every 10 s.
fn progress(
    done: &AtomicUsize,
    busy_us: &std::sync::atomic::AtomicU64,
    work: &Work,
    workers: usize,
    finished: &AtomicBool,
    n: usize,
    start: Instant,
) {
    let tty = std::io::stderr().is_terminal();
    let mut last_line = Instant::now();
    let mut shown = false;
    while !finished.load(Ordering::Relaxed) {
        // Woken early when the runs are done.
        std::thread::park_timeout(Duration::from_millis(200));
        if finished.load(Ordering::Relaxed) {
            break;
        }
        let el = start.elapsed();
        if el < Duration::from_secs(2) {
            continue;
        }
        let d = done.load(Ordering::Relaxed);
        let done_work = work.done_milli.load(Ordering::Relaxed) as f64 / 1000.0;
        let eta = if d > 0 && done_work > 0.0 {
            // Seconds per unit of work so far, times the work left, spread over the workers
            // (as if the runs left were `left` runs of their mean size).
            let per_unit = busy_us.load(Ordering::Relaxed) as f64 / 1e6 / done_work;
            let left = n - d;
            let mean_left = (work.total - done_work).max(0.0) / left.max(1) as f64;
            eta_s(per_unit * mean_left, left, workers)
        } else {
            f64::NAN
        };
        let msg = format!(
            "cclab: {d}/{n} runs done, {:.0} s elapsed{}",
            el.as_secs_f64(),
            if eta.is_finite() {
                format!(", ~{eta:.0} s left")
            } else {
                String::new()
            }
        );
        if tty {
            eprint!("\r\x1b[K{msg}");
            let _ = std::io::stderr().flush();
            shown = true;
        } else if last_line.elapsed() >= Duration::from_secs(10) || !shown {
            eprintln!("{msg}");
            last_line = Instant::now();
            shown = true;
        }
    }
    if tty && shown {
        eprint!("\r\x1b[K");
    }
}

#[cfg(test)]
mod retry_tests {
    use super::*;
    use cclab_results::testing::RunBuilder;

    fn run_with(steal_ms: f64, stalls: u64, goodput: f64) -> RunResult {
        RunBuilder::new()
            .duration(10.0)
            .lab(steal_ms, 2, stalls)
            .flow("", goodput)
            .build()
    }

    #[test]
    fn disturbed_runs_are_retried_until_quiet() {
        // 20 s of CPU in 10 s x 2 CPUs: 3 s of steal is 15%, disturbed; 0.1 s is quiet.
        let mut attempts = vec![
            run_with(3000.0, 0, 1.0),
            run_with(100.0, 0, 2.0),
            run_with(0.0, 0, 3.0),
        ]
        .into_iter();
        let r =
            retry_while_disturbed(2, Duration::ZERO, "t", || Ok(attempts.next().unwrap())).unwrap();
        assert_eq!(
            r.flows[0].goodput_bps, 2.0,
            "the first quiet attempt counts"
        );
        assert_eq!(r.lab.unwrap().retries, 1);
        assert_eq!(attempts.len(), 1, "no attempt after a quiet one");
    }

    #[test]
    fn least_disturbed_attempt_is_kept_when_none_is_quiet() {
        let mut attempts = vec![
            run_with(3000.0, 0, 1.0),
            run_with(1200.0, 0, 2.0),
            run_with(0.0, 100, 3.0),
        ]
        .into_iter();
        let r =
            retry_while_disturbed(2, Duration::ZERO, "t", || Ok(attempts.next().unwrap())).unwrap();
        assert_eq!(
            r.flows[0].goodput_bps, 2.0,
            "6% steal is less disturbed than 15% or 10 stalls/s"
        );
        // No retries: the one attempt counts whatever happened.
        let r =
            retry_while_disturbed(0, Duration::ZERO, "t", || Ok(run_with(3000.0, 0, 7.0))).unwrap();
        assert_eq!(r.flows[0].goodput_bps, 7.0);
    }
}

#[cfg(test)]
mod eta_tests {
    use super::eta_s;

    #[test]
    fn eta_divides_the_runs_left_by_the_workers() {
        // 36 runs of 2.67 s on 6 workers take 16 s; after the first finish, 35 are left:
        // about 15.6 s, not 35 x 2.67 = 93 s.
        let e = eta_s(2.67, 35, 6);
        assert!((e - 35.0 * 2.67 / 6.0).abs() < 1e-9, "{e}");
        // The last runs go one per worker.
        assert_eq!(eta_s(2.0, 2, 6), 2.0);
        assert_eq!(eta_s(2.0, 0, 6), 0.0);
    }

    /// The simulator's work goes with the packets (rate x duration), a real-time backend's
    /// with the duration: a matrix whose first finishes are its 10 Gbit/s runs does not
    /// expect every run to be that slow.
    #[test]
    fn a_runs_work_follows_its_packets_on_the_simulator_and_its_duration_in_real_time() {
        let sc = |rate: &str, dur: &str| {
            let text = format!("name = \"w\"\nduration = \"{dur}\"\n[link]\nrate = \"{rate}\"\nrtt = \"20ms\"\n[[flows]]\ncc = \"cubic\"\n");
            cclab_scenario::ScenarioFile::from_str(&text, "w.toml")
                .unwrap()
                .expand()
                .unwrap()[0]
                .scenario
                .clone()
        };
        let (slow, fast) = (sc("100mbit", "10s"), sc("10gbit", "10s"));
        let ratio = super::run_cost(&fast, false) / super::run_cost(&slow, false);
        assert!((90.0..=101.0).contains(&ratio), "{ratio}");
        assert_eq!(super::run_cost(&fast, true), super::run_cost(&slow, true));
        let long = sc("100mbit", "30s");
        assert_eq!(super::run_cost(&long, true), 31.0);
    }
}
