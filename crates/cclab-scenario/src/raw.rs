//! An owned copy of the parsed TOML document that remembers where every key and value came
//! from (file line/column, or a `--set` override). Overrides edit this tree; expansion reads it.

use std::rc::Rc;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Where a key or value came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Loc {
    /// 1-based line and column in the file.
    File { line: u32, col: u32 },
    /// The text of a `--set` override.
    Set(Rc<str>),
}

#[derive(Clone, Debug)]
pub(crate) enum RawV {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Node>),
    Table(Table),
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub v: RawV,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub key: String,
    pub key_loc: Loc,
    pub node: Node,
}

/// A table in file order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    pub entries: Vec<Entry>,
}

impl Table {
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.key == key)
    }
    /// Replaces the value of `key` (keeping its position), or appends it.
    pub fn set(&mut self, key: &str, node: Node) {
        match self.get_mut(key) {
            Some(e) => {
                e.key_loc = node.loc.clone();
                e.node = node;
            }
            None => self.entries.push(Entry {
                key: key.to_string(),
                key_loc: node.loc.clone(),
                node,
            }),
        }
    }
}

impl RawV {
    pub fn type_name(&self) -> &'static str {
        match self {
            RawV::Str(_) => "a string",
            RawV::Int(_) => "an integer",
            RawV::Float(_) => "a float",
            RawV::Bool(_) => "a boolean",
            RawV::Datetime(_) => "a date-time",
            RawV::Array(_) => "a list",
            RawV::Table(_) => "a table",
        }
    }
}

/// Maps byte offsets to 1-based line/column (columns counted in characters).
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    /// Whether each line is ASCII (its columns are byte offsets: no counting).
    ascii: Vec<bool>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let ascii = starts
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                text.as_bytes()[s..starts.get(i + 1).copied().unwrap_or(text.len())].is_ascii()
            })
            .collect();
        LineIndex {
            text,
            starts,
            ascii,
        }
    }

    pub fn loc(&self, offset: usize) -> Loc {
        let offset = offset.min(self.text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line];
        let col = if self.ascii[line] {
            offset - start
        } else {
            self.text
                .get(start..offset)
                .map(|s| s.chars().count())
                .unwrap_or(offset - start)
        };
        Loc::File {
            line: (line + 1) as u32,
            col: (col + 1) as u32,
        }
    }
}

/// Converts a parsed value; fails only on integers that do not fit in i64.
pub(crate) fn convert(
    v: &Spanned<DeValue<'_>>,
    idx: &dyn Fn(usize) -> Loc,
) -> Result<Node, (Loc, String)> {
    let loc = idx(v.span().start);
    let rv = match v.get_ref() {
        DeValue::String(s) => RawV::Str(s.to_string()),
        DeValue::Integer(i) => {
            let digits = i.as_str().replace('_', "");
            match i64::from_str_radix(&digits, i.radix()) {
                Ok(n) => RawV::Int(n),
                Err(_) => return Err((loc, format!("integer {i} does not fit in 64 bits"))),
            }
        }
        DeValue::Float(x) => {
            let t = x.as_str().replace('_', "");
            RawV::Float(t.parse::<f64>().unwrap_or(f64::NAN))
        }
        DeValue::Boolean(b) => RawV::Bool(*b),
        DeValue::Datetime(d) => RawV::Datetime(d.to_string()),
        DeValue::Array(a) => {
            let mut out = Vec::with_capacity(a.len());
            for x in a.iter() {
                out.push(convert(x, idx)?);
            }
            RawV::Array(out)
        }
        DeValue::Table(t) => RawV::Table(convert_table(t, idx)?),
    };
    Ok(Node { v: rv, loc })
}

pub(crate) fn convert_table(
    t: &DeTable<'_>,
    idx: &dyn Fn(usize) -> Loc,
) -> Result<Table, (Loc, String)> {
    let mut entries = Vec::with_capacity(t.len());
    for (k, v) in t.iter() {
        entries.push(Entry {
            key: k.get_ref().to_string(),
            key_loc: idx(k.span().start),
            node: convert(v, idx)?,
        });
    }
    // Keep file order even if the map does not (it does with `preserve_order`).
    entries.sort_by_key(|e| loc_order(&e.key_loc));
    Ok(Table { entries })
}

fn loc_order(l: &Loc) -> (u32, u32) {
    match l {
        Loc::File { line, col } => (*line, *col),
        Loc::Set(_) => (u32::MAX, u32::MAX),
    }
}

/// TOML-like text of a value for error messages, cut to a sane length.
pub(crate) fn render(v: &RawV) -> String {
    let mut s = String::new();
    render_into(v, &mut s);
    if s.chars().count() > 80 {
        let cut: String = s.chars().take(77).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn render_into(v: &RawV, out: &mut String) {
    if out.len() > 200 {
        return;
    }
    match v {
        RawV::Str(s) => out.push_str(&toml::Value::String(s.clone()).to_string()),
        RawV::Int(i) => out.push_str(&i.to_string()),
        RawV::Float(f) => out.push_str(&toml::Value::Float(*f).to_string()),
        RawV::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        RawV::Datetime(d) => out.push_str(d),
        RawV::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_into(&x.v, out);
            }
            out.push(']');
        }
        RawV::Table(t) => {
            out.push('{');
            for (i, e) in t.entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&e.key);
                out.push_str(" = ");
                render_into(&e.node.v, out);
            }
            out.push('}');
        }
    }
}

/// Free-form conversion for `[reference]`: date-times become strings, non-finite floats null.
pub(crate) fn to_json(v: &RawV) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        RawV::Str(s) => J::String(s.clone()),
        RawV::Int(i) => J::from(*i),
        RawV::Float(f) => serde_json::Number::from_f64(*f)
            .map(J::Number)
            .unwrap_or(J::Null),
        RawV::Bool(b) => J::Bool(*b),
        RawV::Datetime(d) => J::String(d.clone()),
        RawV::Array(a) => J::Array(a.iter().map(|n| to_json(&n.v)).collect()),
        RawV::Table(t) => J::Object(
            t.entries
                .iter()
                .map(|e| (e.key.clone(), to_json(&e.node.v)))
                .collect(),
        ),
    }
}
