//! The matrix: the swept keys (axes), the expansion of a file into its concrete scenarios
//! ([`MatrixPoint`]) and the names and labels of their swept values.

use serde_json::{Map, Value};

use super::build::TraceCache;
use super::schema::*;
use super::value::{parse_val, sweeps};
use super::{ScenarioFile, FILE_START};
use crate::error::{ErrorKind, ScenarioError};
use crate::model::*;
use crate::raw::{self, Node, RawV, Table};

/// One concrete scenario of a matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixPoint {
    /// 0-based position in the expansion order.
    pub index: usize,
    /// The swept keys of this point and their values, in axis order (see
    /// [`ScenarioFile::sweep_keys`]); empty when nothing is swept. Values are in SI units:
    /// bit/s, seconds, bytes, probability; strings for `cc` and `buffer`.
    pub params: Map<String, Value>,
    pub scenario: Scenario,
}

impl MatrixPoint {
    /// `key=value` pairs of `params` joined by `,` (`"link.loss=0.01,flows.cc=bbr"`), or `""`.
    pub fn label(&self) -> String {
        label_of(&self.params)
    }

    /// Every resolved key of the scenario; see [`Scenario::resolved`].
    pub fn resolved(&self) -> Map<String, Value> {
        self.scenario.resolved()
    }
}

/// One swept key: where it is and how many values it has.
struct Axis {
    section: Section,
    key: &'static str,
    kind: Kind,
    len: usize,
}

impl ScenarioFile {
    /// The params keys of the matrix, in expansion order (the last varies fastest).
    pub fn sweep_keys(&self) -> Vec<String> {
        let single = self.flow_groups() == 1;
        self.axes()
            .iter()
            .map(|a| param_name(a.section, a.key, single))
            .collect()
    }

    /// Number of matrix points (the product of the list lengths; 1 if nothing is swept).
    /// Saturates at `usize::MAX`.
    pub fn matrix_len(&self) -> usize {
        self.axes()
            .iter()
            .fold(1usize, |acc, a| acc.saturating_mul(a.len))
    }

    fn axes(&self) -> Vec<Axis> {
        let cat = &self.catalog;
        let mut axes = Vec::new();
        let visit = |axes: &mut Vec<Axis>, section: Section, t: &Table| {
            for e in &t.entries {
                if let Some((k, kind)) = section_keys(section, cat)
                    .into_iter()
                    .find(|(k, _)| *k == e.key)
                {
                    if let (true, RawV::Array(a)) = (sweeps(kind, &e.node.v), &e.node.v) {
                        axes.push(Axis {
                            section,
                            key: k,
                            kind,
                            len: a.len(),
                        });
                    }
                }
            }
        };
        for e in &self.root.entries {
            match e.key.as_str() {
                "link" => {
                    if let RawV::Table(t) = &e.node.v {
                        visit(&mut axes, Section::Link, t);
                        for sub in Sub::all() {
                            if let Some(st) = self.section(Section::LinkSub(sub)) {
                                visit(&mut axes, Section::LinkSub(sub), st);
                            }
                        }
                    }
                }
                "hosts" => {
                    if let RawV::Table(t) = &e.node.v {
                        visit(&mut axes, Section::Hosts, t)
                    }
                }
                "flows" => {
                    if let RawV::Array(a) = &e.node.v {
                        for (i, g) in a.iter().enumerate() {
                            if let RawV::Table(t) = &g.v {
                                visit(&mut axes, Section::Flow(i), t);
                                if let Some(pt) = self.section(Section::CcParams(i)) {
                                    visit(&mut axes, Section::CcParams(i), pt);
                                }
                            }
                        }
                    }
                }
                _ => {
                    if let Some((k, kind)) = TOP_SCALARS.iter().find(|(k, _)| *k == e.key) {
                        if let RawV::Array(a) = &e.node.v {
                            axes.push(Axis {
                                section: Section::Top,
                                key: k,
                                kind: *kind,
                                len: a.len(),
                            });
                        }
                    }
                }
            }
        }
        axes
    }

    /// Expands the file into its matrix: the cartesian product of every list-valued key, in
    /// file order of the keys with the last key varying fastest. Each point is validated.
    pub fn expand(&self) -> Result<Vec<MatrixPoint>, ScenarioError> {
        let ctx = self.ctx();
        let axes = self.axes();
        let total = self.matrix_len();
        if total > MAX_MATRIX_POINTS {
            let (k, loc) = axes
                .last()
                .and_then(|a| {
                    self.section(a.section)
                        .and_then(|t| t.get(a.key))
                        .map(|e| (qualified(a.section, a.key), e.key_loc.clone()))
                })
                .unwrap_or(("matrix".into(), FILE_START));
            return Err(ctx.err(ErrorKind::Inconsistent, &loc, Some(k), None, format!("the lists expand to {total} matrix points; at most {MAX_MATRIX_POINTS} are allowed")));
        }
        let single = self.flow_groups() == 1;
        let reference = self
            .root
            .get("reference")
            .map(|e| std::sync::Arc::new(raw::to_json(&e.node.v)));
        let mut points = Vec::with_capacity(total);
        let traces = TraceCache::default();
        let mut choice = vec![0usize; axes.len()];
        for index in 0..total {
            // Mixed-radix digits of `index`, last axis fastest.
            let mut rem = index;
            for (i, a) in axes.iter().enumerate().rev() {
                choice[i] = rem % a.len;
                rem /= a.len;
            }
            let pick = |section: Section, key: &str| -> Option<&Node> {
                let node = &self.section(section)?.get(key)?.node;
                match &node.v {
                    RawV::Array(a) => {
                        match axes
                            .iter()
                            .position(|x| x.section == section && x.key == key)
                        {
                            Some(ai) => a.get(choice[ai]),
                            // One value that is a list (a rate schedule).
                            None => Some(node),
                        }
                    }
                    _ => Some(node),
                }
            };
            // A `cc_params` key sweeps only the runs of controllers that have it: for the
            // others only its first value is a run of its own, and it is not in their params.
            let applies = |a: &Axis| match a.section {
                Section::CcParams(g) => self
                    .point_controller(g, &pick)
                    .is_none_or(|c| c.param(a.key).is_some()),
                // An AQM parameter sweeps only the runs of disciplines that take it.
                Section::LinkSub(Sub::Aqm) if a.key != "kind" => {
                    match pick(Section::LinkSub(Sub::Aqm), "kind").map(|n| &n.v) {
                        Some(RawV::Str(k)) => aqm_params(k).contains(&a.key),
                        _ => true,
                    }
                }
                _ => true,
            };
            if axes
                .iter()
                .zip(&choice)
                .any(|(a, &c)| c != 0 && !applies(a))
            {
                continue;
            }
            let mut params = Map::new();
            for (i, a) in axes.iter().enumerate() {
                if !applies(a) {
                    continue;
                }
                if let Some(n) = pick(a.section, a.key) {
                    let v = parse_val(a.kind, &n.v, &self.catalog).map_err(|(k, m)| {
                        ctx.err(
                            k,
                            &n.loc,
                            Some(format!("{}[{}]", qualified(a.section, a.key), choice[i])),
                            Some(&n.v),
                            m,
                        )
                    })?;
                    params.insert(param_name(a.section, a.key, single), v.to_json());
                }
            }
            let scenario = self
                .build(&ctx, &pick, reference.clone(), &traces)
                .map_err(|mut e| {
                    if !params.is_empty() && e.kind == ErrorKind::Inconsistent {
                        let label = label_of(&params);
                        e.message = format!(
                            "{} (in matrix point {} of {total}: {label})",
                            e.message,
                            index + 1
                        );
                    }
                    e
                })?;
            points.push(MatrixPoint {
                index: points.len(),
                params,
                scenario,
            });
        }
        Ok(points)
    }

    /// The registry controller flow group `g` runs at the matrix point `pick` describes, if
    /// the simulator has it.
    fn point_controller<'a>(
        &'a self,
        g: usize,
        pick: &dyn Fn(Section, &str) -> Option<&'a Node>,
    ) -> Option<&'static cclab_core::cc::Controller> {
        match &pick(Section::Flow(g), "cc")?.v {
            RawV::Str(s) => self.catalog.find(s)?.controller,
            _ => None,
        }
    }
}

fn param_name(section: Section, key: &str, single_group: bool) -> String {
    match section {
        Section::Flow(_) if single_group => format!("flows.{key}"),
        Section::CcParams(_) if single_group => format!("flows.{CC_PARAMS}.{key}"),
        s => qualified(s, key),
    }
}

fn label_of(params: &Map<String, Value>) -> String {
    params
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}
