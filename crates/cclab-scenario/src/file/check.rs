//! Checks of a loaded file: its structure, every key (unknown keys get suggestions) and every
//! value, each list element on its own; AQM and controller parameters against what takes them.

use super::schema::*;
use super::suggest::{levenshtein, suggestion};
use super::value::{is_schedule, parse_val, sweeps, Val};
use super::{Ctx, ScenarioFile, FILE_START};
use crate::error::{ErrorKind, ScenarioError};
use crate::model::*;
use crate::raw::{Entry, Loc, Node, RawV, Table};

impl ScenarioFile {
    /// Checks structure and every value (each list element on its own). Cross-key rules that
    /// depend on one matrix point are checked by `expand`.
    pub(super) fn check(&self) -> Result<(), ScenarioError> {
        let mut errs = Errors::default();
        self.check_into(&mut errs);
        errs.into_result()
    }

    /// [`ScenarioFile::check`]'s checks, every independent error into `errs` (a table that
    /// is missing or of the wrong type is not looked into).
    fn check_into(&self, errs: &mut Errors) {
        let ctx = self.ctx();
        for e in &self.root.entries {
            if let Some((_, kind)) = TOP_SCALARS.iter().find(|(k, _)| *k == e.key) {
                errs.take(check_value(&ctx, Section::Top, &e.key, *kind, &e.node));
            } else if !TOP_TABLES.contains(&e.key.as_str()) {
                errs.push(ctx.err(
                    ErrorKind::UnknownKey,
                    &e.key_loc,
                    Some(e.key.clone()),
                    None,
                    suggestion(&e.key, ""),
                ));
            }
        }
        // A missing required table or key beside an unknown top-level key is most likely
        // that key misspelled (`flow` for `flows`): its error says so already.
        let misspelled = errs.len() > 0;
        if self.root.get("name").is_none() && !misspelled {
            errs.push(ctx.err(
                ErrorKind::MissingKey,
                &FILE_START,
                Some("name".into()),
                None,
                "missing required key (add e.g. name = \"lossy-lan\" at the top)",
            ));
        }
        // [link]
        let lt = match self.root.get("link") {
            None if misspelled => None,
            None => {
                errs.push(ctx.err(
                    ErrorKind::MissingKey,
                    &FILE_START,
                    Some("link".into()),
                    None,
                    "missing required table [link] (with at least rate and rtt)",
                ));
                None
            }
            Some(link) => match top_table(&ctx, link) {
                Ok(lt) => {
                    check_table(&ctx, Section::Link, lt, &link.node.loc, errs);
                    Some(lt)
                }
                Err(e) => {
                    errs.push(e);
                    None
                }
            },
        };
        // [hosts]
        if let Some(h) = self.root.get("hosts") {
            match top_table(&ctx, h) {
                Ok(ht) => {
                    check_table(&ctx, Section::Hosts, ht, &h.node.loc, errs);
                    for (new, old) in [("latency", "host_latency"), ("jitter", "host_jitter")] {
                        if let (Some(e), Some(_)) = (ht.get(new), lt.and_then(|lt| lt.get(old))) {
                            errs.push(ctx.err(ErrorKind::Inconsistent, &e.key_loc, Some(format!("hosts.{new}")), None, format!("given twice: hosts.{new} and its old name link.{old}; keep hosts.{new}")));
                        }
                    }
                }
                Err(e) => errs.push(e),
            }
        }
        // [reference]
        if let Some(r) = self.root.get("reference") {
            errs.take(top_table(&ctx, r).map(|_| ()));
        }
        // [[flows]]
        let Some(flows) = self.root.get("flows") else {
            if misspelled {
                return;
            }
            errs.push(ctx.err(
                ErrorKind::MissingKey,
                &FILE_START,
                Some("flows".into()),
                None,
                "missing flows: add at least one [[flows]] group with a cc (e.g. cc = \"cubic\")",
            ));
            return;
        };
        let groups = match &flows.node.v {
            RawV::Array(a) => a,
            other => {
                errs.push(ctx.err(
                    ErrorKind::WrongType,
                    &flows.node.loc,
                    Some("flows".into()),
                    None,
                    format!(
                    "expected a list of tables (write [[flows]] with double brackets), found {}",
                    other.type_name()
                ),
                ));
                return;
            }
        };
        if groups.is_empty() {
            errs.push(ctx.err(
                ErrorKind::MissingKey,
                &flows.node.loc,
                Some("flows".into()),
                Some(&flows.node.v),
                "empty: add at least one [[flows]] group with a cc (e.g. cc = \"cubic\")",
            ));
            return;
        }
        for (i, g) in groups.iter().enumerate() {
            let RawV::Table(t) = &g.v else {
                errs.push(ctx.err(
                    ErrorKind::WrongType,
                    &g.loc,
                    Some(format!("flows.{i}")),
                    Some(&g.v),
                    format!(
                        "expected a table ([[flows]] group), found {}",
                        g.v.type_name()
                    ),
                ));
                continue;
            };
            check_table(&ctx, Section::Flow(i), t, &g.loc, errs);
        }
        // Probes measure beside TCP flows: at least one group must be one.
        let is_probe = |g: &Node| matches!(&g.v, RawV::Table(t) if super::is_probe_table(t));
        if groups.iter().all(is_probe) {
            errs.push(ctx.err(ErrorKind::Inconsistent, &flows.node.loc, Some("flows".into()), None, "every [[flows]] group is a probe: add a TCP flow group (e.g. cc = \"cubic\") for the probes to measure beside"));
        }
        // A bulk flow, like a probe, runs for the whole run, so the run needs a length.
        if self.root.get("duration").is_none() {
            for (i, g) in groups.iter().enumerate() {
                if is_probe(g) {
                    errs.push(ctx.err(ErrorKind::Inconsistent, &g.loc, Some(format!("flows.{i}")), None, "a probe runs until the run ends, so the scenario needs a duration (add e.g. duration = \"10s\" at the top)"));
                    break;
                }
                if let RawV::Table(t) = &g.v {
                    if t.get("size").is_none() {
                        errs.push(ctx.err(ErrorKind::Inconsistent, &g.loc, Some(format!("flows.{i}")), None, "this flow group has no size, so it is bulk and the scenario needs a duration (add e.g. duration = \"10s\" at the top, or give the flows a size)"));
                        break;
                    }
                }
            }
        }
    }
}

/// The errors found in a file, in the order checked (top-level keys, then [link], [hosts],
/// [[flows]]); reported together (the first as the
/// error, the others under it: [`ScenarioError::more`]).
#[derive(Default)]
pub(super) struct Errors(Vec<ScenarioError>);

impl Errors {
    fn push(&mut self, e: ScenarioError) {
        self.0.push(e);
    }
    fn take(&mut self, r: Result<(), ScenarioError>) {
        if let Err(e) = r {
            self.0.push(e);
        }
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    /// Ok when none; else the first error carrying the others (in file order).
    fn into_result(self) -> Result<(), ScenarioError> {
        let mut v = self.0;
        if v.is_empty() {
            return Ok(());
        }
        // In the order checked: the first is the one a file with that mistake alone gave.
        let mut first = v.remove(0);
        first.more = v;
        Err(first)
    }
}

/// The table of top-level entry `e` (`[link]`, `[hosts]`, `[reference]`), or the error that it
/// is something else.
fn top_table<'e>(ctx: &Ctx<'_>, e: &'e Entry) -> Result<&'e Table, ScenarioError> {
    match &e.node.v {
        RawV::Table(t) => Ok(t),
        v => Err(ctx.err(
            ErrorKind::WrongType,
            &e.node.loc,
            Some(e.key.clone()),
            Some(v),
            format!("expected a table ([{}]), found {}", e.key, v.type_name()),
        )),
    }
}

/// Checks the keys of `[link]`, `[hosts]` or one `[[flows]]` group and their values.
fn check_table(ctx: &Ctx<'_>, section: Section, t: &Table, table_loc: &Loc, errs: &mut Errors) {
    let before = errs.len();
    let prefix = match section {
        Section::Link => "link.",
        Section::Hosts => "hosts.",
        Section::LinkSub(Sub::Aqm) => "link.aqm.",
        Section::LinkSub(_) => "link.bucket.",
        _ => "flows.",
    };
    let probe = matches!(section, Section::Flow(_)) && super::is_probe_table(t);
    for e in &t.entries {
        if let Some(m) = probe_key_error(section, probe, &e.key, ctx.cat) {
            let q = Some(qualified(section, &e.key));
            errs.push(ctx.err(ErrorKind::Inconsistent, &e.key_loc, q, None, m));
            continue;
        }
        if let (Section::Flow(i), CC_PARAMS) = (section, e.key.as_str()) {
            check_cc_params(ctx, i, t, e, errs);
            continue;
        }
        if let (Section::Link, Some(sub), RawV::Table(st)) = (section, Sub::of(&e.key), &e.node.v) {
            check_table(ctx, Section::LinkSub(sub), st, &e.node.loc, errs);
            continue;
        }
        match key_kind(section, &e.key, ctx.cat) {
            Some(kind) => errs.take(check_value(ctx, section, &e.key, kind, &e.node)),
            None => {
                errs.push(ctx.err(
                    ErrorKind::UnknownKey,
                    &e.key_loc,
                    Some(qualified(section, &e.key)),
                    None,
                    suggestion(&e.key, prefix),
                ));
            }
        }
    }
    let required: &[(&str, &str)] = match section {
        // A trace gives the rate.
        Section::Link if t.get("trace").is_some() => &[("rtt", "rtt = \"20ms\"")],
        Section::Link => &[("rate", "rate = \"100mbit\""), ("rtt", "rtt = \"20ms\"")],
        Section::Flow(_) if probe => &[],
        Section::Flow(_) => &[("cc", "cc = \"cubic\"")],
        Section::LinkSub(Sub::Aqm) => &[("kind", "kind = \"codel\"")],
        Section::LinkSub(_) => &[("rate", "rate = \"10mbit\"")],
        _ => &[],
    };
    // A required key missing beside an unknown key is most likely that key misspelled:
    // the unknown key's error says so, the missing key's would only repeat it.
    let misspelled = errs.0[before..]
        .iter()
        .any(|e| e.kind == ErrorKind::UnknownKey);
    for (k, example) in required {
        if t.get(k).is_none() && !misspelled {
            let head = match section {
                Section::Link => "[link]".to_string(),
                Section::LinkSub(sub) => format!("[link.{}]", sub.key()),
                _ => "this [[flows]] group".to_string(),
            };
            errs.push(ctx.err(
                ErrorKind::MissingKey,
                table_loc,
                Some(qualified(section, k)),
                None,
                format!("missing required key (add e.g. {example} to {head})"),
            ));
        }
    }
    // Its parameters against its discipline, once the table itself is sound.
    if section == Section::LinkSub(Sub::Aqm) && errs.len() == before {
        errs.take(check_aqm_params(ctx, t));
    }
}

/// Why `key` does not belong in a `[[flows]]` group of this kind: a probe takes only
/// [`PROBE_KEYS`], and `interval` is a probe's alone.
fn probe_key_error(section: Section, probe: bool, key: &str, cat: &CcCatalog) -> Option<String> {
    let Section::Flow(_) = section else {
        return None;
    };
    let known = key == CC_PARAMS || key_kind(section, key, cat).is_some();
    if probe && known && !PROBE_KEYS.contains(&key) {
        Some(format!("a probe (kind = \"probe\") is a UDP echo and takes only {}; remove {key} from this group", PROBE_KEYS.join(", ")))
    } else if !probe && key == "interval" {
        Some("interval is a probe's: add kind = \"probe\" to this group, or remove interval".into())
    } else {
        None
    }
}

/// Checks that each parameter of a `[link.aqm]` table is one its discipline takes, or, when the
/// table sweeps `kind`, one that at least one of its disciplines takes (each run takes its own).
/// It depends on the file alone, so it is checked once, not at every matrix point.
fn check_aqm_params(ctx: &Ctx<'_>, t: &Table) -> Result<(), ScenarioError> {
    let sa = Section::LinkSub(Sub::Aqm);
    let name = |n: &Node| match parse_val(Kind::AqmName, &n.v, ctx.cat) {
        Ok(Val::Str(s)) => Some(s),
        _ => None,
    };
    let (kinds, swept): (Vec<String>, bool) = match t.get("kind").map(|e| &e.node) {
        Some(Node {
            v: RawV::Array(a), ..
        }) => {
            let mut v: Vec<String> = Vec::new();
            for k in a.iter().filter_map(name) {
                if !v.contains(&k) {
                    v.push(k);
                }
            }
            (v, true)
        }
        Some(n) => (name(n).into_iter().collect(), false),
        None => return Ok(()),
    };
    for e in &t.entries {
        let k = e.key.as_str();
        if k == "kind" || kinds.iter().any(|n| aqm_params(n).contains(&k)) {
            continue;
        }
        let others: Vec<&str> = AQM_NAMES
            .iter()
            .copied()
            .filter(|n| aqm_params(n).contains(&k))
            .collect();
        let who = match others.as_slice() {
            [one] => format!("{one} takes it"),
            [init @ .., last] => format!("{} and {last} take it", init.join(", ")),
            [] => "no discipline takes it".to_string(),
        };
        let msg = match (swept, kinds.first()) {
            (false, Some(name)) => {
                let takes = aqm_params(name);
                format!(
                    "{name} has no parameter {k} ({name} takes: {}; {who})",
                    if takes.is_empty() {
                        "none".to_string()
                    } else {
                        takes.join(", ")
                    },
                )
            }
            _ => format!(
                "none of the swept kinds ({}) has a parameter {k} ({who})",
                kinds.join(", "),
            ),
        };
        return Err(ctx.err(
            ErrorKind::Inconsistent,
            &e.key_loc,
            Some(qualified(sa, k)),
            None,
            msg,
        ));
    }
    Ok(())
}

/// The controllers flow group table `group` may run: its `cc` value, or each of its list.
pub(super) fn group_ccs<'c>(cat: &'c CcCatalog, group: &Table) -> Vec<&'c CcEntry> {
    let names: Vec<&str> = match group.get("cc").map(|e| &e.node.v) {
        Some(RawV::Str(s)) => vec![s.as_str()],
        Some(RawV::Array(a)) => a
            .iter()
            .filter_map(|n| match &n.v {
                RawV::Str(s) => Some(s.as_str()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut out: Vec<&CcEntry> = Vec::new();
    for e in names.into_iter().filter_map(|n| cat.find(n)) {
        if !out.iter().any(|x| x.name == e.name) {
            out.push(e);
        }
    }
    out
}

/// Checks `cc_params` of flow group `i`: a table whose every key is a parameter of at least
/// one of the group's controllers (a group that sweeps `cc` may set the parameters of any of
/// them; each run applies those of its own controller).
fn check_cc_params(ctx: &Ctx<'_>, i: usize, group: &Table, e: &Entry, errs: &mut Errors) {
    let RawV::Table(pt) = &e.node.v else {
        return errs.push(ctx.err(
            ErrorKind::WrongType,
            &e.node.loc,
            Some(qualified(Section::Flow(i), CC_PARAMS)),
            Some(&e.node.v),
            format!(
                "expected a table of controller parameters (e.g. cc_params = {{ hystart = false }}), found {}",
                e.node.v.type_name()
            ),
        ));
    };
    let ccs = group_ccs(ctx.cat, group);
    for pe in &pt.entries {
        let spec = ccs
            .iter()
            .find_map(|c| c.controller.and_then(|k| k.param(&pe.key)));
        let Some(spec) = spec else {
            let names = ccs
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let candidates: Vec<&str> = ccs
                .iter()
                .filter_map(|c| c.controller)
                .flat_map(|k| k.params.iter().map(|p| p.name))
                .collect();
            let msg = if candidates.is_empty() {
                let simulated = ccs
                    .iter()
                    .any(|c| cclab_core::cc::find(&c.name).is_some_and(|k| !k.params.is_empty()));
                if simulated {
                    format!(
                        "{names} takes no parameters on {} (controller parameters are the simulator's; a kernel's module parameters belong to the host)",
                        ctx.cat.owner
                    )
                } else {
                    format!("{names} takes no parameters")
                }
            } else {
                let near = closest_param(&pe.key, &candidates)
                    .map(|c| format!("did you mean {c}? "))
                    .unwrap_or_default();
                format!(
                    "not a parameter of {names} ({near}parameters: {})",
                    candidates.join(", ")
                )
            };
            errs.push(ctx.err(
                ErrorKind::UnknownKey,
                &pe.key_loc,
                Some(qualified(Section::CcParams(i), &pe.key)),
                None,
                msg,
            ));
            continue;
        };
        errs.take(check_value(
            ctx,
            Section::CcParams(i),
            &pe.key,
            Kind::Param(spec),
            &pe.node,
        ));
    }
}

/// The controller parameter `key` was probably meant to be: the same name in another case
/// or with `-` for `_`, else the closest by edit distance (up to 3 edits, or a third of the
/// name for long names), else one that contains it or is contained in it
/// (`hystart_ack_delta` for `hystart_ack_delta_us`).
pub(super) fn closest_param<'c>(key: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let k = key.to_ascii_lowercase().replace('-', "_");
    if k.is_empty() {
        return None;
    }
    let (d, best) = candidates.iter().map(|c| (levenshtein(&k, c), *c)).min()?;
    if d <= 3.max(k.chars().count() / 3) {
        return Some(best);
    }
    candidates
        .iter()
        .copied()
        .filter(|c| k.len() >= 4 && (c.contains(k.as_str()) || k.contains(c)))
        .min_by_key(|c| c.len().abs_diff(k.len()))
}

/// Checks one value, or each element of a list.
fn check_value(
    ctx: &Ctx<'_>,
    section: Section,
    key: &str,
    kind: Kind,
    node: &Node,
) -> Result<(), ScenarioError> {
    let q = qualified(section, key);
    match &node.v {
        RawV::Array(a) if sweeps(kind, &node.v) => {
            if !kind.sweepable() {
                return Err(ctx.err(
                    ErrorKind::WrongType,
                    &node.loc,
                    Some(q),
                    Some(&node.v),
                    format!("{key} cannot be a list (only one value is allowed)"),
                ));
            }
            if a.is_empty() {
                return Err(ctx.err(
                    ErrorKind::BadValue,
                    &node.loc,
                    Some(q),
                    Some(&node.v),
                    "empty list: give at least one value (a list sweeps the key over its values)",
                ));
            }
            for (i, el) in a.iter().enumerate() {
                let schedule = kind == Kind::Rate && is_schedule(&el.v);
                if matches!(el.v, RawV::Array(_) | RawV::Table(_)) && !schedule {
                    return Err(ctx.err(
                        ErrorKind::WrongType,
                        &el.loc,
                        Some(format!("{q}[{i}]")),
                        Some(&el.v),
                        "lists cannot be nested and list elements cannot be tables",
                    ));
                }
                parse_val(kind, &el.v, ctx.cat).map_err(|(k, m)| {
                    ctx.err(k, &el.loc, Some(format!("{q}[{i}]")), Some(&el.v), m)
                })?;
            }
            Ok(())
        }
        v => parse_val(kind, v, ctx.cat)
            .map(|_| ())
            .map_err(|(k, m)| ctx.err(k, &node.loc, Some(q), Some(v), m)),
    }
}
