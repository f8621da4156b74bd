//! The controller registry: what each congestion controller is called, which parameters it
//! takes (with defaults and units), and how to build one.
//!
//! Each controller's own file declares one [`Controller`] (`pub const CONTROLLER`), and
//! [`super::CONTROLLERS`] lists them, one line each. Everything that needs to know which
//! controllers exist reads that list: scenario validation, the simulator, `cclab --help` and
//! `cclab controllers`, the report's legend and colours, and the docs' table (checked by a
//! test). Adding a controller is its file plus one line there.
//!
//! Parameters mirror what Linux exposes for the controller (module parameters such as
//! CUBIC's `hystart`), with Linux's defaults, so a scenario's `cc_params` means what the same
//! setting means on a host.

use super::CongestionControl;
use std::fmt;

/// The value of one controller parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    Bool(bool),
    Int(i64),
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Int(i) => write!(f, "{i}"),
        }
    }
}

/// What values a parameter takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    Bool,
    /// A whole number in `min..=max`.
    Int {
        min: i64,
        max: i64,
    },
}

/// One parameter of a controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamKind,
    pub default: ParamValue,
    /// Unit of an integer value (`"packets"`, `"us"`), or `""`.
    pub unit: &'static str,
    /// What it does, and the Linux setting it stands for.
    pub help: &'static str,
}

impl Param {
    /// Checks `v` against the parameter's kind and range; the error is one line.
    pub fn check(&self, v: ParamValue) -> Result<ParamValue, String> {
        match (self.kind, v) {
            (ParamKind::Bool, ParamValue::Bool(_)) => Ok(v),
            (ParamKind::Int { min, max }, ParamValue::Int(i)) if (min..=max).contains(&i) => Ok(v),
            (ParamKind::Int { min, max }, ParamValue::Int(_)) => Err(format!(
                "{} must be between {min} and {max}{}",
                self.name,
                if self.unit.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", self.unit)
                }
            )),
            (ParamKind::Bool, _) => Err(format!("{} is true or false", self.name)),
            (ParamKind::Int { .. }, _) => Err(format!("{} is a whole number", self.name)),
        }
    }
}

/// A registered congestion controller.
pub struct Controller {
    /// Canonical name, as in Linux's `tcp_congestion_control` (`"cubic"`).
    pub name: &'static str,
    /// Other names accepted for it (`"newreno"`).
    pub aliases: &'static [&'static str],
    /// Name for people (`"CUBIC"`, `"BBRv1"`): the report's legend.
    pub title: &'static str,
    /// One line on what it is and which source it follows.
    pub summary: &'static str,
    pub params: &'static [Param],
    /// Builds one, with every parameter resolved; `seed` feeds any randomness it uses.
    pub build: fn(&Params, u64) -> Box<dyn CongestionControl>,
}

impl fmt::Debug for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Controller {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Controller {
    /// Whether `name` (any case) is this controller's name or one of its aliases.
    pub fn answers_to(&self, name: &str) -> bool {
        let n = name.trim().to_ascii_lowercase();
        self.name == n || self.aliases.contains(&n.as_str())
    }

    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Every parameter resolved: the given values (checked) and the defaults for the rest.
    /// An unknown name or a bad value is a one-line error.
    pub fn resolve<'a>(
        &'static self,
        given: impl IntoIterator<Item = (&'a str, ParamValue)>,
    ) -> Result<Params, String> {
        let mut params = self.defaults();
        for (name, v) in given {
            let Some(p) = self.param(name) else {
                return Err(format!(
                    "{} has no parameter \"{name}\" ({})",
                    self.name,
                    self.param_list()
                ));
            };
            let v = p.check(v)?;
            if let Some(slot) = params.values.iter_mut().find(|(n, _)| *n == p.name) {
                slot.1 = v;
            }
        }
        Ok(params)
    }

    /// "its parameters: a, b" or "it takes no parameters".
    pub fn param_list(&self) -> String {
        if self.params.is_empty() {
            "it takes no parameters".into()
        } else {
            format!(
                "its parameters: {}",
                self.params
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }

    /// A controller with its default parameters.
    pub fn defaults(&'static self) -> Params {
        Params {
            controller: self,
            values: self.params.iter().map(|p| (p.name, p.default)).collect(),
        }
    }
}

/// A controller and a value for each of its parameters: everything needed to build it.
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    controller: &'static Controller,
    values: Vec<(&'static str, ParamValue)>,
}

impl Params {
    pub fn controller(&self) -> &'static Controller {
        self.controller
    }
    pub fn name(&self) -> &'static str {
        self.controller.name
    }
    /// Every parameter and its value, in the controller's order.
    pub fn values(&self) -> &[(&'static str, ParamValue)] {
        &self.values
    }
    /// The parameters whose value is not the default.
    pub fn changed(&self) -> impl Iterator<Item = (&'static str, ParamValue)> + '_ {
        self.values
            .iter()
            .zip(self.controller.params)
            .filter(|((_, v), p)| *v != p.default)
            .map(|(nv, _)| *nv)
    }
    fn get(&self, name: &str) -> ParamValue {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("{} declares no parameter {name}", self.controller.name))
    }
    /// A boolean parameter (the controller's own file asks for what it declared).
    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            ParamValue::Bool(b) => b,
            ParamValue::Int(i) => i != 0,
        }
    }
    /// An integer parameter.
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            ParamValue::Int(i) => i,
            ParamValue::Bool(b) => b as i64,
        }
    }
    /// Build the controller.
    pub fn build(&self, seed: u64) -> Box<dyn CongestionControl> {
        (self.controller.build)(self, seed)
    }
}

/// The registered controller called `name` (any case, aliases included).
pub fn find(name: &str) -> Option<&'static Controller> {
    super::CONTROLLERS
        .iter()
        .copied()
        .find(|c| c.answers_to(name))
}

/// The registered controller called `name` with its default parameters; `None` if unknown.
pub fn by_name(name: &str) -> Option<Params> {
    find(name).map(Controller::defaults)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CONTROLLERS;

    #[test]
    fn names_and_aliases_are_unique_and_lower_case() {
        let mut seen = Vec::new();
        for c in CONTROLLERS {
            for n in std::iter::once(&c.name).chain(c.aliases.iter()) {
                assert_eq!(*n, n.to_ascii_lowercase());
                assert!(!seen.contains(n), "{n} registered twice");
                seen.push(n);
            }
        }
        assert_eq!(find("NewReno").map(|c| c.name), Some("reno"));
        assert_eq!(find("BBRv1").map(|c| c.name), Some("bbr"));
        assert!(find("vegas").is_none());
    }

    #[test]
    fn every_controller_builds_under_its_own_name_with_valid_defaults() {
        for c in CONTROLLERS {
            for p in c.params {
                assert_eq!(p.check(p.default), Ok(p.default), "{}.{}", c.name, p.name);
            }
            assert_eq!(c.defaults().build(1).name(), c.name);
        }
    }

    #[test]
    fn parameters_are_checked_and_resolved_over_the_defaults() {
        let cubic = find("cubic").unwrap();
        let p = cubic
            .resolve([("hystart", ParamValue::Bool(false))])
            .unwrap();
        assert!(!p.bool("hystart"));
        assert!(p.bool("fast_convergence"));
        assert_eq!(
            p.changed().collect::<Vec<_>>(),
            vec![("hystart", ParamValue::Bool(false))]
        );
        let e = cubic
            .resolve([("hystrat", ParamValue::Bool(false))])
            .unwrap_err();
        assert!(
            e.contains("no parameter \"hystrat\"") && e.contains("hystart"),
            "{e}"
        );
        let e = cubic
            .resolve([("hystart_low_window", ParamValue::Int(-3))])
            .unwrap_err();
        assert!(e.contains("between"), "{e}");
        let e = find("reno")
            .unwrap()
            .resolve([("hystart", ParamValue::Bool(true))])
            .unwrap_err();
        assert!(e.contains("takes no parameters"), "{e}");
        let e = find("bbr")
            .unwrap()
            .resolve([("hystart", ParamValue::Bool(true))])
            .unwrap_err();
        assert!(e.contains("no parameter \"hystart\""), "{e}");
    }
}
