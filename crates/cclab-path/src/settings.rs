//! What a scenario may set on a path element, declared by the element itself.
//!
//! Each queue discipline's file declares its settings (name, kind and range, Linux's
//! default, unit, what it does) beside its parameters struct, as a controller declares its
//! `Param`s; [`AQMS`](crate::AQMS) lists the disciplines. The scenario's keys, their checks,
//! the resolved values in results, the scenario text written back and the docs' table
//! (checked by a test) are all read from these declarations.

use crate::Nanos;

/// What values a setting takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingKind {
    /// A duration, ns: `zero` allows 0 (e.g. a burst allowance), otherwise it must be
    /// positive.
    Time { zero: bool },
    /// A whole number in `min..=max` (the declaration's `unit` says of what).
    Int { min: u64, max: u64 },
    /// `true` or `false`.
    Bool,
}

/// A setting's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingValue {
    /// A duration, ns.
    Time(Nanos),
    Int(u64),
    Bool(bool),
}

impl SettingValue {
    /// The value as a number of its unit (ns, the integer, 0/1).
    fn raw(self) -> u64 {
        match self {
            SettingValue::Time(x) | SettingValue::Int(x) => x,
            SettingValue::Bool(b) => b as u64,
        }
    }
}

/// One setting of a path element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The key under the element's table (`[link.aqm]`'s `target`).
    pub name: &'static str,
    pub kind: SettingKind,
    /// Linux's default (what a scenario that does not set it gets).
    pub default: SettingValue,
    /// Unit of an integer value (`"bytes"`, `"1/16"`), or `""`.
    pub unit: &'static str,
    /// What it does.
    pub help: &'static str,
}

impl Setting {
    /// A duration that must be positive, default `ns`.
    pub const fn time(name: &'static str, ns: Nanos, help: &'static str) -> Setting {
        Setting {
            name,
            kind: SettingKind::Time { zero: false },
            default: SettingValue::Time(ns),
            unit: "",
            help,
        }
    }

    /// A duration that may be zero, default `ns`.
    pub const fn time_or_zero(name: &'static str, ns: Nanos, help: &'static str) -> Setting {
        Setting {
            kind: SettingKind::Time { zero: true },
            ..Setting::time(name, ns, help)
        }
    }

    /// A whole number of `unit` in `min..=max`, default `default`.
    pub const fn int(
        name: &'static str,
        default: u64,
        (min, max): (u64, u64),
        unit: &'static str,
        help: &'static str,
    ) -> Setting {
        Setting {
            name,
            kind: SettingKind::Int { min, max },
            default: SettingValue::Int(default),
            unit,
            help,
        }
    }

    /// A flag, default `default`.
    pub const fn flag(name: &'static str, default: bool, help: &'static str) -> Setting {
        Setting {
            name,
            kind: SettingKind::Bool,
            default: SettingValue::Bool(default),
            unit: "",
            help,
        }
    }
}

/// Where an element's constructor reads its settings: the value a scenario gave each one,
/// or its declared default.
pub struct Given<'a> {
    settings: &'static [Setting],
    get: &'a dyn Fn(&str) -> Option<SettingValue>,
}

impl<'a> Given<'a> {
    /// `get` answers with the value a scenario gave a setting, or `None`.
    pub fn new(
        settings: &'static [Setting],
        get: &'a dyn Fn(&str) -> Option<SettingValue>,
    ) -> Self {
        Given { settings, get }
    }

    /// Nothing given: every setting at its default.
    pub fn defaults(settings: &'static [Setting]) -> Given<'static> {
        Given {
            settings,
            get: &|_| None,
        }
    }

    /// Setting `name` as a number of its unit (ns, the integer, 0/1).
    fn raw(&self, name: &str) -> u64 {
        let declared = self
            .settings
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no setting {name} declared"));
        (self.get)(name).unwrap_or(declared.default).raw()
    }

    /// A duration setting, ns.
    pub fn time(&self, name: &str) -> Nanos {
        self.raw(name)
    }

    /// An integer setting.
    pub fn int(&self, name: &str) -> u64 {
        self.raw(name)
    }

    /// An integer setting that fits 32 bits by its declared range.
    pub fn int32(&self, name: &str) -> u32 {
        self.raw(name) as u32
    }

    /// A flag.
    pub fn flag(&self, name: &str) -> bool {
        self.raw(name) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: &[Setting] = &[
        Setting::time("target", 5_000_000, "t"),
        Setting::int("flows", 1024, (1, 65536), "", "f"),
        Setting::flag("ecn", true, "e"),
    ];

    #[test]
    fn given_values_win_and_defaults_fill_the_rest() {
        let d = Given::defaults(S);
        assert_eq!(
            (d.time("target"), d.int32("flows"), d.flag("ecn")),
            (5_000_000, 1024, true)
        );
        let get = |k: &str| match k {
            "flows" => Some(SettingValue::Int(16)),
            "ecn" => Some(SettingValue::Bool(false)),
            _ => None,
        };
        let g = Given::new(S, &get);
        assert_eq!(
            (g.time("target"), g.int("flows"), g.flag("ecn")),
            (5_000_000, 16, false)
        );
    }

    #[test]
    #[should_panic(expected = "no setting quantum declared")]
    fn reading_an_undeclared_setting_is_a_bug() {
        Given::defaults(S).int("quantum");
    }
}
