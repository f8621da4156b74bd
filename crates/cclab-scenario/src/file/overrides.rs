//! `--set key=value` overrides: which tables a key names, reading the value, and editing the
//! file (checked again afterwards; on error the file is left unchanged).

use std::rc::Rc;

use toml::de::DeValue;

use super::check::group_ccs;
use super::schema::*;
use super::suggest::suggestion;
use super::{Ctx, ScenarioFile};
use crate::error::{ErrorKind, ScenarioError};
use crate::raw::{self, Loc, Node, RawV, Table};

impl ScenarioFile {
    /// The table of `section` to edit, created empty (at the end of its parent) when the
    /// file lacks it; `None` if the file's structure has no place for it.
    pub(super) fn table_mut(&mut self, section: Section, loc: &Loc) -> Option<&mut Table> {
        fn sub<'t>(t: &'t mut Table, key: &str, loc: &Loc) -> Option<&'t mut Table> {
            if t.get(key).is_none() {
                t.set(
                    key,
                    Node {
                        v: RawV::Table(Table::default()),
                        loc: loc.clone(),
                    },
                );
            }
            match &mut t.get_mut(key)?.node.v {
                RawV::Table(t) => Some(t),
                _ => None,
            }
        }
        match section {
            Section::Top => Some(&mut self.root),
            Section::Link => sub(&mut self.root, "link", loc),
            Section::LinkSub(s) => {
                let link = sub(&mut self.root, "link", loc)?;
                // A bare value (`aqm = "codel"`, `policer = "10mbit"`) becomes the table's
                // main key, so one of its parameters can be set beside it.
                if let Some(e) = link.get_mut(s.key()) {
                    if !matches!(e.node.v, RawV::Table(_)) {
                        let bare = e.node.clone();
                        let mut t = Table::default();
                        t.set(s.main_key(), bare);
                        e.node = Node {
                            v: RawV::Table(t),
                            loc: e.node.loc.clone(),
                        };
                    }
                }
                sub(link, s.key(), loc)
            }
            Section::Hosts => sub(&mut self.root, "hosts", loc),
            Section::Flow(i) | Section::CcParams(i) => {
                let RawV::Array(a) = &mut self.root.get_mut("flows")?.node.v else {
                    return None;
                };
                let RawV::Table(g) = &mut a.get_mut(i)?.v else {
                    return None;
                };
                if section == Section::Flow(i) {
                    Some(g)
                } else {
                    sub(g, CC_PARAMS, loc)
                }
            }
        }
    }

    /// Applies a `--set key=value` override. `value` is read as a TOML value (`2`, `0.01`,
    /// `"1%"`, `[0, "1%"]`); if it is not valid TOML it is taken as a bare string (`bbr`,
    /// `1%`, `100mbit`). Keys: `name`, `duration`, `seed`, `description`, `link.<key>`,
    /// `hosts.<key>`, `flows.<key>` (every flow group), `flows.<i>.<key>` (group i, 0-based),
    /// `flows.cc_params.<name>` (every group whose controller has the parameter) and
    /// `flows.<i>.cc_params.<name>`. A key the file lacks is added at the end of its table.
    /// `link.rate` and `link.trace` replace each other. On error the file is left unchanged.
    pub fn apply_override(&mut self, spec: &str) -> Result<(), ScenarioError> {
        let before = self.root.clone();
        let r = self.edit_override(spec).and_then(|()| self.check());
        if r.is_err() {
            self.root = before;
        }
        r
    }

    /// [`ScenarioFile::apply_override`]'s edit without the check of the whole file after it
    /// (the caller checks once after all of them). On error the file may be part-edited: the
    /// caller restores or discards it.
    pub(super) fn edit_override(&mut self, spec: &str) -> Result<(), ScenarioError> {
        let loc = Loc::Set(Rc::from(spec));
        let origin = self.origin.clone();
        let catalog = self.catalog.clone();
        let ctx = Ctx {
            origin: &origin,
            cat: &catalog,
        };
        let bad = |key: Option<String>, msg: String| {
            ctx.err(ErrorKind::BadOverride, &loc, key, None, msg)
        };
        let Some((key, value)) = spec.split_once('=') else {
            return Err(bad(
                None,
                "expected key=value (e.g. link.loss=1% or 'flows.cc=[\"cubic\",\"bbr\"]')".into(),
            ));
        };
        let (key, value) = (key.trim(), value.trim());
        if value.is_empty() {
            return Err(bad(
                Some(key.into()),
                "empty value (e.g. link.loss=1%)".into(),
            ));
        }
        let parsed = parse_override_value(value, &loc).map_err(|m| bad(Some(key.into()), m))?;
        let parts: Vec<&str> = key.split('.').collect();
        let known = |section: Section, k: &str| key_kind(section, k, &catalog).is_some();
        let unknown = |prefix: &str, k: &str| {
            ctx.err(ErrorKind::UnknownKey, &loc, Some(key.to_string()), None, format!("{}; override keys: name, duration, seed, description, link.<key>, link.aqm.<key>, link.policer.<key>, link.shaper.<key>, hosts.<key>, flows.<key>, flows.<i>.<key>, flows.cc_params.<name>", suggestion(k, prefix)))
        };
        let unknown_param = |k: &str| {
            let all: Vec<&str> = catalog.all_params().iter().map(|p| p.name).collect();
            ctx.err(
                ErrorKind::UnknownKey,
                &loc,
                Some(key.to_string()),
                None,
                if all.is_empty() {
                    format!("no controller of {} takes parameters", catalog.owner)
                } else {
                    format!(
                        "\"{k}\" is no controller's parameter (parameters: {})",
                        all.join(", ")
                    )
                },
            )
        };
        let groups = self.flow_groups();
        let no_group = |i: usize| {
            bad(Some(key.into()), format!("there is no flow group {i}: the file has {groups} [[flows]] group(s), numbered from 0"))
        };
        let group = |i: &str| i.parse::<usize>().ok();
        // The tables to set the key in.
        let (targets, k): (Vec<Section>, &str) = match parts.as_slice() {
            [k] if known(Section::Top, k) => (vec![Section::Top], k),
            ["link", k] if known(Section::Link, k) => (vec![Section::Link], k),
            ["link", sub, k] if Sub::of(sub).is_some() => {
                let sub = Sub::of(sub).unwrap_or(Sub::Aqm);
                if !known(Section::LinkSub(sub), k) {
                    let prefix = if sub == Sub::Aqm {
                        "link.aqm."
                    } else {
                        "link.bucket."
                    };
                    return Err(unknown(prefix, k));
                }
                (vec![Section::LinkSub(sub)], k)
            }
            ["hosts", k] if known(Section::Hosts, k) => (vec![Section::Hosts], k),
            // A key a probe does not take is set in the TCP groups only.
            ["flows", k] if known(Section::Flow(0), k) => (
                (0..groups)
                    .filter(|&i| !self.is_probe(i) || PROBE_KEYS.contains(k))
                    .map(Section::Flow)
                    .collect(),
                k,
            ),
            ["flows", CC_PARAMS, k] if known(Section::CcParams(0), k) => {
                // Every group one of whose controllers has the parameter.
                let with: Vec<Section> = (0..groups)
                    .filter(|&g| {
                        self.flow(g).is_some_and(|t| {
                            group_ccs(&catalog, t)
                                .iter()
                                .any(|c| c.controller.is_some_and(|c| c.param(k).is_some()))
                        })
                    })
                    .map(Section::CcParams)
                    .collect();
                if with.is_empty() {
                    return Err(bad(
                        Some(key.into()),
                        format!("no flow group runs a controller with the parameter {k}"),
                    ));
                }
                (with, k)
            }
            ["flows", CC_PARAMS, k] => return Err(unknown_param(k)),
            ["flows", i, k] if group(i).is_some() => {
                let i = group(i).unwrap_or(usize::MAX);
                if !known(Section::Flow(i), k) {
                    return Err(unknown("flows.", k));
                }
                if i >= groups {
                    return Err(no_group(i));
                }
                (vec![Section::Flow(i)], k)
            }
            ["flows", i, CC_PARAMS, k] if group(i).is_some() => {
                let i = group(i).unwrap_or(usize::MAX);
                if !known(Section::CcParams(i), k) {
                    return Err(unknown_param(k));
                }
                if i >= groups {
                    return Err(no_group(i));
                }
                (vec![Section::CcParams(i)], k)
            }
            ["link", k] => return Err(unknown("link.", k)),
            ["hosts", k] => return Err(unknown("hosts.", k)),
            ["flows", k] => return Err(unknown("flows.", k)),
            _ => return Err(unknown("", parts.last().copied().unwrap_or(key))),
        };
        // The rate and the trace each give the bottleneck's rate: setting one replaces the other.
        let replaces = match (targets.as_slice(), k) {
            ([Section::Link], "rate") => Some("trace"),
            ([Section::Link], "trace") => Some("rate"),
            _ => None,
        };
        if let Some(other) = replaces {
            if let Some(RawV::Table(t)) = self.root.get_mut("link").map(|e| &mut e.node.v) {
                t.entries.retain(|e| e.key != other);
            }
        }
        for section in targets {
            match self.table_mut(section, &loc) {
                Some(t) => t.set(k, parsed.clone()),
                None => {
                    return Err(bad(
                        Some(key.into()),
                        "the file has no table to hold it".into(),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Reads the value of a `--set`: TOML if it parses; otherwise a bare string, or a list of bare
/// words and TOML values (`[cubic, bbr]`, `[0, 1%]`).
fn parse_override_value(value: &str, loc: &Loc) -> Result<Node, String> {
    let one = |text: &str| -> Result<Node, String> {
        match DeValue::parse(text) {
            Ok(v) => raw::convert(&v, &|_| loc.clone()).map_err(|(_, m)| m),
            Err(e) if text.starts_with(['[', '{', '"', '\'']) => Err(format!(
                "value is not valid TOML: {} (e.g. [0, \"1%\"] or [cubic, bbr])",
                e.message()
            )),
            Err(_) => Ok(Node {
                v: RawV::Str(text.to_string()),
                loc: loc.clone(),
            }),
        }
    };
    if DeValue::parse(value).is_err() {
        if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            if !inner.contains(['[', ']', '{', '}']) {
                let inner = inner.trim().trim_end_matches(',');
                let mut items = Vec::new();
                if !inner.trim().is_empty() {
                    for part in inner.split(',') {
                        let part = part.trim();
                        if part.is_empty() {
                            return Err("empty element in list".into());
                        }
                        items.push(one(part)?);
                    }
                }
                return Ok(Node {
                    v: RawV::Array(items),
                    loc: loc.clone(),
                });
            }
        }
    }
    one(value)
}
