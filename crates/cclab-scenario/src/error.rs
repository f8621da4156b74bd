//! The one error type of this crate.

use std::fmt;

/// What went wrong, for callers that want to branch on it; the text is in the [`Display`]
/// output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read.
    Io,
    /// The text is not valid TOML.
    Syntax,
    /// A key that the format does not have.
    UnknownKey,
    /// A required key is absent.
    MissingKey,
    /// A value of the wrong TOML type (e.g. a table where a string is expected).
    WrongType,
    /// A value of the right type that is not allowed (bad unit, out of range, unknown cc...).
    BadValue,
    /// A `--set` override that is malformed or names an unknown key.
    BadOverride,
    /// A combination of values that is not allowed (e.g. a bulk flow without a duration).
    Inconsistent,
}

/// An error about a scenario file. It displays as one line (and one more line per further
/// error of the same file, [`ScenarioError::more`]):
///
/// ```text
/// seeds/x.toml:7:8: link.rate = "100mbps/s": unknown rate unit "mbps/s" (use e.g. 100mbit, ...)
/// seeds/x.toml: --set link.loss=2: link.loss = 2: loss must be below 100% (...)
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub kind: ErrorKind,
    /// The file name (or the origin name given to `from_str`).
    pub origin: String,
    /// 1-based line of the offending key or value, when it came from the file.
    pub line: Option<u32>,
    /// 1-based column (in characters) on that line.
    pub column: Option<u32>,
    /// The `--set` text the value came from, when it came from an override.
    pub set: Option<String>,
    /// Dotted key, e.g. `link.rate`, `flows.0.cc`, `link.loss[1]` for a list element.
    pub key: Option<String>,
    /// The offending value as written (TOML syntax), when there is one.
    pub value: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
    /// Further independent errors of the same file, in file order (up to
    /// [`MAX_REPORTED`] in all are shown, one per line under this one): a file with three
    /// mistakes says so in one go. Empty for most errors.
    pub more: Vec<ScenarioError>,
}

/// Errors of one file shown at most; the rest are counted.
pub const MAX_REPORTED: usize = 5;

impl ScenarioError {
    pub(crate) fn new(kind: ErrorKind, origin: &str, message: impl Into<String>) -> Self {
        ScenarioError {
            kind,
            origin: origin.to_string(),
            line: None,
            column: None,
            set: None,
            key: None,
            value: None,
            message: message.into(),
            more: Vec::new(),
        }
    }
}

/// Makes a message safe for a one-line display.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut last_space = false;
    for c in s.chars() {
        let c = if c.is_control() { ' ' } else { c };
        if c == ' ' {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    out.trim().to_string()
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&one_line(&self.origin))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        f.write_str(": ")?;
        if let Some(set) = &self.set {
            write!(f, "--set {}: ", one_line(set))?;
        }
        match (&self.key, &self.value) {
            (Some(k), Some(v)) => write!(f, "{} = {}: ", one_line(k), one_line(v))?,
            (Some(k), None) => write!(f, "{}: ", one_line(k))?,
            _ => {}
        }
        f.write_str(&one_line(&self.message))?;
        let shown = self.more.len().min(MAX_REPORTED - 1);
        for e in &self.more[..shown] {
            write!(f, "\n{e}")?;
        }
        if self.more.len() > shown {
            write!(
                f,
                "\n{}: and {} more error{} (fix these and run again)",
                one_line(&self.origin),
                self.more.len() - shown,
                if self.more.len() - shown == 1 {
                    ""
                } else {
                    "s"
                }
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}
