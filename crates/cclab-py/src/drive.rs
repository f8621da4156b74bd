//! Flows decided from Python: the `py:module:Class` controllers of an ordinary run, and the
//! stepping object the Gymnasium environment (`cclab.gym`) is built on.
//!
//! Both are thin: the loop that advances the simulation, closes monitor intervals, shows ACKs and
//! applies decisions is the simulator's (`cclab_sim::drive`, `Simulation`'s stepping
//! methods), reached through the library the CLI calls (`cclab::runner::run_one_driven`).
//! Here statistics become Python values and Python's answers become an `Action`.

use crate::{py_err, CclabError, Results, Spec};
use cclab::runner;
use cclab_core::cc::external::Action;
use cclab_sim::{AckStats, IntervalStats, Simulation};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;

/// A decision from Python numbers: cwnd in packets, pacing rate in bit/s, next interval in
/// s; each `None` (or not finite, or not positive) leaves that part as it was.
fn action(cwnd: Option<f64>, rate_bps: Option<f64>, interval_s: Option<f64>) -> Action {
    let ok = |v: Option<f64>| v.filter(|x| x.is_finite() && *x > 0.0);
    Action {
        cwnd: ok(cwnd).map(|c| c.round().clamp(1.0, 1e9) as u32),
        pacing_rate: ok(rate_bps).map(|r| (r / 8.0).clamp(1.0, 1e15) as u64),
        next_interval_ns: ok(interval_s).map(|s| (s * 1e9).clamp(1e5, 1e12) as u64),
    }
}

/// What hook `hook` (`on_interval`, `on_ack`) returned: `None` (keep the decision) or a
/// dict with any of `cwnd` (packets), `rate_bps` (pacing rate, bit/s) and `interval_s` (the
/// next interval, s).
fn action_of(hook: &str, v: &Bound<'_, PyAny>) -> Result<Action, String> {
    if v.is_none() {
        return Ok(Action::default());
    }
    let d = v.cast::<PyDict>().map_err(|_| {
        format!("{hook} returns None or a dict with cwnd (packets), rate_bps (bit/s) and/or interval_s (s)")
    })?;
    let get = |k: &str| -> Result<Option<f64>, String> {
        match d.get_item(k).map_err(|e| e.to_string())? {
            Some(x) if !x.is_none() => x
                .extract::<f64>()
                .map(Some)
                .map_err(|_| format!("{hook}'s {k} must be a number")),
            _ => Ok(None),
        }
    };
    Ok(action(get("cwnd")?, get("rate_bps")?, get("interval_s")?))
}

/// The statistics as a dict of floats (names: `IntervalStats::FIELDS`).
fn stats_dict<'py>(py: Python<'py>, st: &IntervalStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in IntervalStats::FIELDS.iter().zip(st.to_vec()) {
        d.set_item(*k, v)?;
    }
    Ok(d)
}

/// One ACK as a dict (`on_ack`'s argument): `rtt_s` is `None` when the ACK gave no sample,
/// `ece` a bool, the rest floats (names and units: `cclab_sim::AckStats`).
fn ack_dict<'py>(py: Python<'py>, a: &AckStats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("t_s", a.t_s)?;
    d.set_item("delivered_pkts", a.delivered_pkts)?;
    d.set_item("bytes_acked", a.bytes_acked)?;
    d.set_item("lost_pkts", a.lost_pkts)?;
    d.set_item("rtt_s", a.rtt_s)?;
    d.set_item("ece", a.ece)?;
    d.set_item("delivered_total", a.delivered_total)?;
    d.set_item("inflight_pkts", a.inflight_pkts)?;
    d.set_item("cwnd_pkts", a.cwnd_pkts)?;
    d.set_item("min_rtt_s", a.min_rtt_s)?;
    Ok(d)
}

/// An instance of `py:module:Class`.
fn instantiate<'py>(py: Python<'py>, cc: &str) -> PyResult<Bound<'py, PyAny>> {
    let (m, c) = cclab_scenario::py_class(cc)
        .ok_or_else(|| CclabError::new_err(format!("\"{cc}\" is not py:module:Class")))?;
    let cls = py.import(m)?.getattr(c)?;
    cls.call0()
}

/// The Python controllers of one run: an instance per `py:` flow, made when the run starts
/// (each flow of a `py:` group gets its own); the first Python exception is kept to be
/// raised as itself.
struct PyDriver<'py> {
    py: Python<'py>,
    objs: HashMap<usize, Bound<'py, PyAny>>,
    failure: Option<PyErr>,
}

impl<'py> PyDriver<'py> {
    /// Flow `f`'s instance of `cc`.
    fn obj(&mut self, f: usize, cc: &str) -> PyResult<Bound<'py, PyAny>> {
        if let Some(o) = self.objs.get(&f) {
            return Ok(o.clone());
        }
        let o = instantiate(self.py, cc)?;
        self.objs.insert(f, o.clone());
        Ok(o)
    }

    /// `r` as the run's error: a Python exception is kept (raised as itself at the end).
    fn keep<T>(&mut self, cc: &str, r: PyResult<T>) -> Result<T, String> {
        r.map_err(|e| {
            let msg = format!("{cc}: {e}");
            self.failure.get_or_insert(e);
            msg
        })
    }
}

impl runner::FlowDriver for PyDriver<'_> {
    fn on_interval(&mut self, f: usize, cc: &str, st: &IntervalStats) -> Result<Action, String> {
        if !cc.starts_with(cclab_scenario::PY_PREFIX) {
            return Ok(Action::default()); // a plain `external` flow holds its window
        }
        let py = self.py;
        let r = self.obj(f, cc).and_then(|obj| {
            py.check_signals()?;
            obj.call_method1("on_interval", (stats_dict(py, st)?,))
        });
        let v = self.keep(cc, r)?;
        action_of("on_interval", &v).map_err(|e| format!("{cc}: {e}"))
    }

    /// A `py:` flow whose class defines `on_ack` is watched.
    fn watch_acks(&mut self, f: usize, cc: &str) -> Result<bool, String> {
        if !cc.starts_with(cclab_scenario::PY_PREFIX) {
            return Ok(false);
        }
        let r = self.obj(f, cc).and_then(|o| o.hasattr("on_ack"));
        self.keep(cc, r)
    }

    fn on_ack(&mut self, f: usize, cc: &str, a: &AckStats) -> Result<Option<Action>, String> {
        let py = self.py;
        let r = self
            .obj(f, cc)
            .and_then(|obj| obj.call_method1("on_ack", (ack_dict(py, a)?,)));
        let v = self.keep(cc, r)?;
        if v.is_none() {
            return Ok(None);
        }
        action_of("on_ack", &v)
            .map(Some)
            .map_err(|e| format!("{cc}: {e}"))
    }
}

/// Runs every run of a plan with Python controllers, one after the other with the GIL held.
/// The results document is the one `run` makes.
pub(crate) fn run_py(py: Python<'_>, spec: &Spec) -> PyResult<Results> {
    let opts = spec.opts()?;
    let plan = runner::plan_text(&spec.0, &spec.1, spec.2.as_deref(), &opts).map_err(py_err)?;
    let mut runs = Vec::new();
    for k in 0..runner::job_count(&plan, opts.repeat) {
        let mut d = PyDriver {
            py,
            objs: HashMap::new(),
            failure: None,
        };
        match runner::run_one_driven(&plan, k, &opts, &mut d) {
            Ok(r) => runs.push(r),
            // A Python exception (Ctrl-C too) comes back as itself.
            Err(e) => return Err(d.failure.take().unwrap_or_else(|| py_err(e))),
        }
    }
    let doc = runner::document(&plan, "sim", runs);
    Ok(Results::of_plan(&plan, doc))
}

/// A simulation held between decisions of one external flow (the agent's): the Gymnasium
/// environment's engine. Other external flows of the scenario hold their windows.
#[pyclass(module = "cclab._native", unsendable)]
pub(crate) struct Stepper {
    sim: Option<Simulation>,
    flow: usize,
}

#[pymethods]
impl Stepper {
    /// The scenario's first matrix point (its seed as `spec` sets it); the agent is its
    /// first flow whose controller is `external`.
    #[new]
    fn new(spec: Spec) -> PyResult<Self> {
        let plan = spec.plan()?;
        let sc = &plan.points[0].scenario;
        let cfg =
            cclab_sim::config_from_scenario(sc).map_err(|e| CclabError::new_err(e.to_string()))?;
        let flow = cfg
            .flows
            .iter()
            .position(|f| f.cc.name() == cclab_core::cc::external::CONTROLLER.name)
            .ok_or_else(|| {
                CclabError::new_err(format!(
                    "{}: no flow runs cc = \"external\": the environment drives one",
                    sc.name
                ))
            })?;
        Ok(Stepper {
            sim: Some(Simulation::new(cfg)),
            flow,
        })
    }

    /// The names of the statistics, in the order `step` returns them.
    #[staticmethod]
    fn fields() -> Vec<&'static str> {
        IntervalStats::FIELDS.to_vec()
    }

    /// Apply a decision (each part `None` = keep it: cwnd in packets, pacing rate in bit/s,
    /// next interval in s), run to the end of the agent's next monitor interval and return
    /// its statistics; `None` once the run is over.
    #[pyo3(signature = (cwnd=None, rate_bps=None, interval_s=None))]
    fn step(
        &mut self,
        py: Python<'_>,
        cwnd: Option<f64>,
        rate_bps: Option<f64>,
        interval_s: Option<f64>,
    ) -> PyResult<Option<Vec<f64>>> {
        let flow = self.flow;
        let Some(sim) = self.sim.as_mut() else {
            return Ok(None);
        };
        let a = action(cwnd, rate_bps, interval_s);
        let out = py.detach(|| {
            if a != Action::default() {
                sim.set_action(flow, &a)?;
            }
            while let Some((f, t)) = sim.next_decision() {
                if !sim.advance_to(t) {
                    break;
                }
                let st = sim.take_interval(f);
                if f == flow {
                    return Ok(st.map(|s| s.to_vec()));
                }
            }
            Ok::<_, String>(None)
        });
        let out = out.map_err(CclabError::new_err)?;
        if out.is_none() {
            self.sim = None;
        }
        Ok(out)
    }

    /// Simulated time now, s.
    #[getter]
    fn now_s(&self) -> f64 {
        self.sim.as_ref().map_or(f64::NAN, |s| s.now() as f64 / 1e9)
    }

    /// The run's end, s.
    #[getter]
    fn end_s(&self) -> f64 {
        self.sim.as_ref().map_or(f64::NAN, |s| s.end() as f64 / 1e9)
    }
}
