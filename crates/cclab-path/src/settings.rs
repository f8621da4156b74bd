//! What a scenario may set on a path element, declared by the element itself.
//!
//! Each queue discipline's file declares its settings (name, kind and range, Linux's
//! default, unit, what it does) beside its parameters struct, as a controller declares its
//! `Param`s; [`AQMS`](crate::AQMS) lists the disciplines. The token buckets before the
//! bottleneck declare theirs the same way ([`BUCKETS`](crate::BUCKETS): the policer and the
//! shaper). The scenario's keys, their checks, the resolved values in results, the scenario
//! text written back and the docs' tables (checked by tests) are all read from these
//! declarations.

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
    /// A rate, whole bits per second of IP packets (positive); its value is an
    /// [`SettingValue::Int`].
    Rate,
    /// A size, bytes (positive); its value is an [`SettingValue::Int`].
    Size,
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

/// What a scenario that does not give a setting gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingDefault {
    /// This value (Linux's, for a queue discipline).
    Value(SettingValue),
    /// Nothing: a scenario must give it.
    Required,
    /// A value worked out from the element's other settings.
    Derived(Derived),
}

/// A default worked out from other settings (a token bucket's burst from its rate).
#[derive(Clone, Copy, Debug)]
pub struct Derived {
    /// How, in words (`"10 ms at the rate, at least 64 KiB"`): what the docs say.
    pub doc: &'static str,
    /// The value, from the settings given (read through the same [`Given`]).
    pub value: fn(&Given) -> SettingValue,
}

impl PartialEq for Derived {
    /// Two derived defaults are the same if they say the same (a function is not compared).
    fn eq(&self, other: &Self) -> bool {
        self.doc == other.doc
    }
}

impl Eq for Derived {}

/// One setting of a path element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Setting {
    /// The key under the element's table (`[link.aqm]`'s `target`).
    pub name: &'static str,
    pub kind: SettingKind,
    /// What a scenario that does not set it gets.
    pub default: SettingDefault,
    /// Unit of an integer value (`"bytes"`, `"1/16"`, `"bit/s"`), or `""`.
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
            default: SettingDefault::Value(SettingValue::Time(ns)),
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
            default: SettingDefault::Value(SettingValue::Int(default)),
            unit,
            help,
        }
    }

    /// A flag, default `default`.
    pub const fn flag(name: &'static str, default: bool, help: &'static str) -> Setting {
        Setting {
            name,
            kind: SettingKind::Bool,
            default: SettingDefault::Value(SettingValue::Bool(default)),
            unit: "",
            help,
        }
    }

    /// A rate (bits/s) that a scenario must give.
    pub const fn rate(name: &'static str, help: &'static str) -> Setting {
        Setting {
            name,
            kind: SettingKind::Rate,
            default: SettingDefault::Required,
            unit: "bit/s",
            help,
        }
    }

    /// A size (bytes) whose default is worked out from the other settings.
    pub const fn size_derived(name: &'static str, default: Derived, help: &'static str) -> Setting {
        Setting {
            name,
            kind: SettingKind::Size,
            default: SettingDefault::Derived(default),
            unit: "bytes",
            help,
        }
    }

    /// Its default when that is a value of its own (not required, not derived).
    pub fn fixed_default(&self) -> Option<SettingValue> {
        match self.default {
            SettingDefault::Value(v) => Some(v),
            _ => None,
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
        let value = (self.get)(name).unwrap_or_else(|| match declared.default {
            SettingDefault::Value(v) => v,
            SettingDefault::Derived(d) => (d.value)(self),
            SettingDefault::Required => panic!("setting {name} has no default and was not given"),
        });
        value.raw()
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

    /// A required rate and a size derived from it: twice the rate in bytes, at least 10.
    const B: &[Setting] = &[
        Setting::rate("rate", "r"),
        Setting::size_derived(
            "burst",
            Derived {
                doc: "twice the rate, at least 10",
                value: |g| SettingValue::Int((2 * g.int("rate")).max(10)),
            },
            "b",
        ),
    ];

    #[test]
    fn a_derived_default_follows_the_settings_it_is_worked_out_from() {
        let rate = |r: u64| move |k: &str| (k == "rate").then_some(SettingValue::Int(r));
        assert_eq!(Given::new(B, &rate(3)).int("burst"), 10);
        assert_eq!(Given::new(B, &rate(30)).int("burst"), 60);
        let both = |k: &str| Some(SettingValue::Int(if k == "rate" { 30 } else { 7 }));
        assert_eq!(Given::new(B, &both).int("burst"), 7, "a given value wins");
        assert_eq!(B[1].fixed_default(), None);
        assert_eq!(S[1].fixed_default(), Some(SettingValue::Int(1024)));
        assert_eq!((B[0].kind, B[0].unit), (SettingKind::Rate, "bit/s"));
        assert_eq!((B[1].kind, B[1].unit), (SettingKind::Size, "bytes"));
    }

    #[test]
    #[should_panic(expected = "setting rate has no default and was not given")]
    fn reading_a_required_setting_not_given_is_a_bug() {
        Given::defaults(B).int("burst");
    }

    #[test]
    #[should_panic(expected = "no setting quantum declared")]
    fn reading_an_undeclared_setting_is_a_bug() {
        Given::defaults(S).int("quantum");
    }
}
