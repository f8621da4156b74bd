//! `cclab perf --predict` and `cclab fit --predict`: the simulator on the path fitted to a
//! measurement ([`cclab_remote::fit`]), for each measured controller and for ones the server
//! did not run (bbr3 by default), through the runner (a scenario in a temporary file).

use crate::runner::{self, Error, RunOptions};
use cclab_remote::fit::{PathFit, Prediction};
use cclab_results::ResultsDoc;
use std::path::Path;

/// What to predict.
#[derive(Clone, Debug)]
pub struct PredictOptions {
    /// Controllers beyond the measured ones (`--predict-cc`); bbr3 is always added.
    pub extra: Vec<String>,
    /// Simulator seeds per controller: 20, since a loss-limited CUBIC's goodput over a short
    /// run turns on where its first loss falls (on 50 Mbit/s x 150 ms x 0.1%, 20 s, five
    /// seeds spread 2.2-10.2 Mbit/s), and the simulator is cheap.
    pub seeds: u32,
    /// Worker threads (0: all cores).
    pub jobs: usize,
}

impl Default for PredictOptions {
    fn default() -> Self {
        PredictOptions {
            extra: Vec::new(),
            seeds: 20,
            jobs: 0,
        }
    }
}

/// The measured controllers, then bbr3, then `extra`, each once.
pub fn controllers(fit: &PathFit, extra: &[String]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    let all = fit
        .measured
        .iter()
        .map(|m| m.cc.clone())
        .chain(std::iter::once("bbr3".to_string()))
        .chain(extra.iter().cloned());
    for c in all {
        if !c.is_empty() && !v.contains(&c) {
            v.push(c);
        }
    }
    v
}

/// A results document from a results directory or a results.json (read as the report reads
/// it); one document only.
pub fn load(path: &Path) -> Result<ResultsDoc, Error> {
    let hint = "give a directory written by `cclab perf --out DIR`, or its results.json";
    let mut docs =
        cclab_report::load::load(path).map_err(|e| Error::new(format!("{e} ({hint})")))?;
    match docs.len() {
        1 => Ok(docs.remove(0).doc),
        n => Err(Error::new(format!(
            "{} holds {n} results documents: {hint}",
            path.display()
        ))),
    }
}

/// Simulate `ccs` on the fitted path (the measured runs' length and streams, `o.seeds`
/// seeds each), and again with the loss at each end of its interval; one prediction per
/// controller, measured goodput beside it where there is one.
pub fn predict(
    fit: &PathFit,
    ccs: &[String],
    o: &PredictOptions,
) -> Result<Vec<Prediction>, Error> {
    let sim = crate::backends::by_name("sim").map_err(Error::new)?;
    let known = sim.controllers();
    let (ok, unknown): (Vec<String>, Vec<String>) =
        ccs.iter().cloned().partition(|c| known.find(c).is_some());
    if !unknown.is_empty() {
        eprintln!(
            "cclab: note: the simulator has no {} (not predicted; `cclab controllers` lists its controllers)",
            unknown.join(", ")
        );
    }
    if ok.is_empty() {
        return Err(Error::new(
            "no controller to predict that the simulator has (e.g. --predict-cc cubic,bbr)",
        ));
    }
    let name = "fitted-path";
    let toml = fit.scenario_toml(name, "the measurement", &ok);
    // The scenario's directory is removed however the run ends.
    let dir = crate::tools::TempDir::new("predict")
        .map_err(|e| Error::new(format!("cannot make a directory for the scenario: {e}")))?;
    let file = dir.path().join(format!("{name}.toml"));
    std::fs::write(&file, toml).map_err(|e| {
        Error::new(format!(
            "cannot write a scenario into {}: {e}",
            file.display()
        ))
    })?;
    // The fitted loss, then its interval's two ends (same seeds): how far the fit's
    // uncertainty moves the prediction. Rate and base RTT are known to a few percent; a
    // loss read from tens of losses moves a loss-limited controller by far more.
    let loss = &fit.loss;
    let losses = [Some(loss.value), Some(loss.low), loss.high];
    let ro = RunOptions {
        backend: "sim".into(),
        repeat: o.seeds.max(1),
        jobs: o.jobs,
        ..Default::default()
    };
    let mut plans = Vec::new();
    for l in losses.iter().flatten() {
        let ro = RunOptions {
            overrides: vec![format!("link.loss={:.6}%", l * 100.0)],
            ..ro.clone()
        };
        plans.push(runner::plan(&file.to_string_lossy(), &ro)?);
    }
    let docs = runner::execute(&plans, &ro)?;
    // Per controller, the mean goodput (all streams) over one document's seeds.
    let goodputs = |doc: &ResultsDoc, cc: &str| -> Vec<f64> {
        doc.runs
            .iter()
            .filter(|r| r.params.get("flows.cc").and_then(|v| v.as_str()) == Some(cc))
            .map(|r| r.flows.iter().map(|f| f.goodput_bps).sum::<f64>())
            .collect()
    };
    let mean = |g: &[f64]| (!g.is_empty()).then(|| g.iter().sum::<f64>() / g.len() as f64);
    let mut out = Vec::new();
    for cc in &ok {
        let g = goodputs(&docs[0], cc);
        let Some(m) = mean(&g) else {
            continue;
        };
        let measured = fit
            .measured
            .iter()
            .find(|x| &x.cc == cc)
            .map(|x| x.goodput_bps);
        out.push(Prediction {
            cc: cc.clone(),
            goodput_bps: m,
            min_bps: g.iter().copied().fold(f64::INFINITY, f64::min),
            max_bps: g.iter().copied().fold(0.0, f64::max),
            seeds: g.len() as u32,
            measured_bps: measured,
            ratio: measured.filter(|&x| x > 0.0).map(|x| m / x),
            at_loss_low_bps: docs.get(1).and_then(|d| mean(&goodputs(d, cc))),
            at_loss_high_bps: docs.get(2).and_then(|d| mean(&goodputs(d, cc))),
        });
    }
    Ok(out)
}

/// Predict for `doc`'s fit and record the predictions in it; the updated fit.
pub fn predict_doc(
    doc: &mut ResultsDoc,
    name: &str,
    extra: &[String],
    o: &PredictOptions,
) -> Result<PathFit, Error> {
    let mut fit = PathFit::from_doc(doc, name).map_err(Error::new)?;
    let ccs = controllers(&fit, extra);
    fit.predictions = predict(&fit, &ccs, o)?;
    doc.fit = Some(fit.to_value());
    Ok(fit)
}
