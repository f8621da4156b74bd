//! `ScenarioFile`: a parsed scenario file (values may be lists), overrides and matrix
//! expansion into concrete [`Scenario`]s.
//!
//! This module is the loader: reading and parsing the file, its accessors and error context.
//! The rest is split by concern:
//! - [`schema`]: the keys each table takes and their kinds;
//! - [`value`]: reading one value of a kind into base units;
//! - [`suggest`]: "did you mean ...?" for unknown keys;
//! - [`check`]: checking the file's structure and every value;
//! - [`matrix`]: the swept keys and the expansion into matrix points;
//! - [`build`]: building one concrete [`Scenario`] from a matrix point's values;
//! - [`overrides`]: `--set key=value`.

mod build;
mod check;
mod matrix;
mod overrides;
mod schema;
mod suggest;
mod value;

use std::path::Path;

use toml::de::DeTable;

use crate::error::{ErrorKind, ScenarioError};
use crate::model::*;
use crate::raw::{self, LineIndex, Loc, RawV, Table};

pub use matrix::MatrixPoint;
pub use schema::AQM_ALIASES;
use schema::{Section, CC_PARAMS};

/// A parsed and checked scenario file. Values may still be lists; [`ScenarioFile::expand`]
/// turns it into concrete scenarios.
#[derive(Clone, Debug)]
pub struct ScenarioFile {
    origin: String,
    root: Table,
    /// The controllers `flows.cc` may name, and their parameters.
    catalog: CcCatalog,
    /// The folder of the scenario file: paths in it (`link.trace`) are relative to it.
    dir: Option<std::path::PathBuf>,
}

/// What an error needs to name its place: the file and the controllers it was checked against.
struct Ctx<'a> {
    origin: &'a str,
    cat: &'a CcCatalog,
}

impl Ctx<'_> {
    fn err(
        &self,
        kind: ErrorKind,
        loc: &Loc,
        key: Option<String>,
        value: Option<&RawV>,
        msg: impl Into<String>,
    ) -> ScenarioError {
        let mut e = ScenarioError::new(kind, self.origin, msg);
        match loc {
            Loc::File { line, col } => {
                e.line = Some(*line);
                e.column = Some(*col);
            }
            Loc::Set(s) => e.set = Some(s.to_string()),
        }
        e.key = key;
        e.value = value.map(raw::render);
        e
    }
}

const FILE_START: Loc = Loc::File { line: 1, col: 1 };

impl ScenarioFile {
    /// Reads and checks a scenario file for the simulator's controllers. Errors name the
    /// path as given.
    pub fn from_file(path: impl AsRef<Path>) -> Result<ScenarioFile, ScenarioError> {
        Self::from_file_for(path, CcCatalog::simulator())
    }

    /// Reads and checks a scenario file for a backend that offers the controllers of
    /// `catalog` (`flows.cc` must name one of them; `cc_params` must be theirs).
    pub fn from_file_for(
        path: impl AsRef<Path>,
        catalog: CcCatalog,
    ) -> Result<ScenarioFile, ScenarioError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = Self::read_text(path)?;
        let mut file = Self::from_str_for(&text, &origin, catalog)?;
        file.dir = path.parent().map(|p| p.to_path_buf());
        Ok(file)
    }

    /// A scenario file's text, or the error [`ScenarioFile::from_file`] gives when it cannot
    /// be read.
    pub fn read_text(path: impl AsRef<Path>) -> Result<String, ScenarioError> {
        let path = path.as_ref();
        std::fs::read_to_string(path).map_err(|e| {
            ScenarioError::new(
                ErrorKind::Io,
                &path.display().to_string(),
                format!("cannot read scenario file: {e}"),
            )
        })
    }

    /// Parses and checks scenario text for the simulator's controllers. `origin` names it in
    /// errors (usually the file name).
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<ScenarioFile, ScenarioError> {
        Self::from_str_for(text, origin, CcCatalog::simulator())
    }

    /// Parses and checks scenario text for the controllers of `catalog`.
    pub fn from_str_for(
        text: &str,
        origin: &str,
        catalog: CcCatalog,
    ) -> Result<ScenarioFile, ScenarioError> {
        Self::from_str_with_overrides(text, origin, catalog, &[])
    }

    /// Reads and checks a scenario file as [`ScenarioFile::from_file_for`] does with the
    /// `--set` overrides applied first, so an override replaces a value the file has wrong
    /// (`--set flows.cc=cubic` over a file's `cc = "cubci"`): the file is checked once, as
    /// overridden, and each error names where its value came from (the file's line or the
    /// `--set`).
    pub fn from_file_with_overrides(
        path: impl AsRef<Path>,
        catalog: CcCatalog,
        overrides: &[String],
    ) -> Result<ScenarioFile, ScenarioError> {
        let path = path.as_ref();
        let origin = path.display().to_string();
        let text = Self::read_text(path)?;
        let mut file = Self::from_str_with_overrides(&text, &origin, catalog, overrides)?;
        file.dir = path.parent().map(|p| p.to_path_buf());
        Ok(file)
    }

    /// [`ScenarioFile::from_file_with_overrides`] for scenario text.
    pub fn from_str_with_overrides(
        text: &str,
        origin: &str,
        catalog: CcCatalog,
        overrides: &[String],
    ) -> Result<ScenarioFile, ScenarioError> {
        let ctx = Ctx {
            origin,
            cat: &catalog,
        };
        let index = LineIndex::new(text);
        let at = |off: usize| index.loc(off);
        let doc = DeTable::parse(text).map_err(|e| syntax_error(&ctx, text, &index, &e))?;
        let root = raw::convert_table(doc.get_ref(), &at)
            .map_err(|(loc, m)| ctx.err(ErrorKind::BadValue, &loc, None, None, m))?;
        let mut file = ScenarioFile {
            origin: origin.to_string(),
            root,
            catalog: catalog.clone(),
            dir: None,
        };
        for o in overrides {
            file.edit_override(o)?;
        }
        file.check()?;
        Ok(file)
    }

    /// The same scenario with relative paths in it (trace files) taken from `dir`, as a
    /// file's are from its own directory (None: the working directory).
    pub fn with_dir(mut self, dir: Option<std::path::PathBuf>) -> ScenarioFile {
        self.dir = dir;
        self
    }

    /// The controllers this file was checked against.
    pub fn catalog(&self) -> &CcCatalog {
        &self.catalog
    }

    /// The file name (or origin name) used in errors.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// The scenario's `name`.
    pub fn name(&self) -> &str {
        match self.root.get("name").map(|e| &e.node.v) {
            Some(RawV::Str(s)) => s,
            _ => "",
        }
    }

    /// Number of `[[flows]]` groups.
    pub fn flow_groups(&self) -> usize {
        match self.root.get("flows").map(|e| &e.node.v) {
            Some(RawV::Array(a)) => a.len(),
            _ => 0,
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            origin: &self.origin,
            cat: &self.catalog,
        }
    }

    fn link(&self) -> Option<&Table> {
        sub_table(&self.root, "link")
    }

    fn flow(&self, i: usize) -> Option<&Table> {
        match self.root.get("flows").map(|e| &e.node.v) {
            Some(RawV::Array(a)) => match a.get(i).map(|n| &n.v) {
                Some(RawV::Table(t)) => Some(t),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether `[[flows]]` group `i` is a latency probe (`kind = "probe"`).
    fn is_probe(&self, i: usize) -> bool {
        self.flow(i).is_some_and(is_probe_table)
    }

    fn section(&self, s: Section) -> Option<&Table> {
        match s {
            Section::Top => Some(&self.root),
            Section::Link => self.link(),
            Section::Hosts => sub_table(&self.root, "hosts"),
            Section::Flow(i) => self.flow(i),
            Section::CcParams(i) => sub_table(self.flow(i)?, CC_PARAMS),
            Section::LinkSub(sub) => sub_table(self.link()?, sub.key()),
        }
    }

    fn section_loc(&self, s: Section) -> Loc {
        match s {
            Section::Top => FILE_START,
            Section::Link => self
                .root
                .get("link")
                .map(|e| e.node.loc.clone())
                .unwrap_or(FILE_START),
            Section::LinkSub(sub) => self
                .link()
                .and_then(|t| t.get(sub.key()))
                .map(|e| e.node.loc.clone())
                .unwrap_or_else(|| self.section_loc(Section::Link)),
            Section::Hosts => self
                .root
                .get("hosts")
                .map(|e| e.node.loc.clone())
                .unwrap_or(FILE_START),
            Section::Flow(i) | Section::CcParams(i) => {
                match self.root.get("flows").map(|e| &e.node.v) {
                    Some(RawV::Array(a)) => a.get(i).map(|n| n.loc.clone()).unwrap_or(FILE_START),
                    _ => FILE_START,
                }
            }
        }
    }
}

/// Whether a `[[flows]]` table is a latency probe's (`kind = "probe"`).
fn is_probe_table(t: &Table) -> bool {
    matches!(t.get("kind").map(|e| &e.node.v), Some(RawV::Str(s)) if s.trim() == crate::model::PROBE_KIND)
}

/// The table `key` of `t`, if it is one.
fn sub_table<'t>(t: &'t Table, key: &str) -> Option<&'t Table> {
    match t.get(key).map(|e| &e.node.v) {
        Some(RawV::Table(t)) => Some(t),
        _ => None,
    }
}

/// A TOML syntax error, with the key guessed from the offending line when it has `key = ...`.
fn syntax_error(
    ctx: &Ctx<'_>,
    text: &str,
    index: &LineIndex<'_>,
    e: &toml::de::Error,
) -> ScenarioError {
    let offset = e.span().map(|s| s.start).unwrap_or(0);
    let loc = index.loc(offset);
    let mut key = None;
    let mut msg = format!("invalid TOML: {}", e.message());
    if let Loc::File { line, .. } = loc {
        let line_text = text.lines().nth(line as usize - 1).unwrap_or("");
        if let Some((lhs, rhs)) = line_text.split_once('=') {
            let lhs = lhs.trim();
            let keyish = !lhs.is_empty()
                && lhs.len() <= 64
                && lhs
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.\"' ".contains(c));
            if keyish {
                key = Some(lhs.to_string());
                let rhs = rhs.split('#').next().unwrap_or("").trim();
                if e.message().contains("must be quoted")
                    && !rhs.is_empty()
                    && !rhs.contains(['"', '[', '{'])
                {
                    msg.push_str(&format!(" (write {lhs} = \"{rhs}\")"));
                }
            }
        }
    }
    ctx.err(ErrorKind::Syntax, &loc, key, None, msg)
}
