//! Queue disciplines as scenarios name them (`link.aqm`): what each one's file declares
//! ([`AqmParams`], implemented by its parameters), its entry in the registry ([`Aqm`], listed
//! in [`AQMS`](crate::AQMS)) and the discipline a scenario resolved to ([`AqmDesc`]).
//!
//! A new discipline is its file under `elements/` (its queue, and its parameters
//! implementing [`AqmParams`]) plus `mod NAME;` and one line in `AQMS`
//! (`elements/mod.rs`). Nothing else names it: the scenario's keys, the results' resolved
//! values and the factory's bottleneck all go through these types.

use crate::element::{Element, Packet};
use crate::elements::{Link, Rate};
use crate::queue::Queue;
use crate::settings::{Given, Setting, SettingValue};
use crate::Nanos;
use std::fmt;

/// What a queue discipline's file declares, implemented by its parameters struct.
pub trait AqmParams: Sized + 'static {
    /// Its name in scenarios (`"fq_codel"`), as Linux's `tc qdisc` names it.
    const NAME: &'static str;
    /// Its name in prose (`"FQ-CoDel"`).
    const TITLE: &'static str;
    /// What `[link.aqm]` may set for it (name, kind and range, Linux's default, unit, help),
    /// in the order results list them.
    const SETTINGS: &'static [Setting];

    /// The parameters with the settings `g` gives (defaults for the rest).
    fn from_settings(g: &Given) -> Self;

    /// The value of each of [`Self::SETTINGS`], in order.
    fn values(&self) -> Vec<SettingValue>;
    /// Whether it marks ECN-capable packets CE (instead of dropping them) with these
    /// parameters, which is what controllers that need ECN (DCTCP, Prague) need of a path.
    fn marks_ecn(&self) -> bool {
        false
    }

    /// Its queue, holding at most `limit_bytes` waiting (`link.buffer`). `seed` is the run's:
    /// a random choice draws from its own stream of it ([`crate::streams`]).
    fn queue<P: Packet + Send + 'static>(&self, limit_bytes: u64, seed: u64) -> Box<dyn Queue<P>>;

    /// The bottleneck: a link sending at `rate` what its queue hands it, marking CE past
    /// `ce_threshold` (`link.ecn_threshold`).
    fn bottleneck<P: Packet + Send + 'static>(
        &self,
        rate: Rate,
        limit_bytes: u64,
        ce_threshold: Option<Nanos>,
        seed: u64,
    ) -> Box<dyn Element<P>> {
        let queue = self.queue::<P>(limit_bytes, seed);
        Box::new(Link::new(rate, queue).with_ce_threshold(ce_threshold))
    }
}

/// A queue discipline's entry in [`AQMS`](crate::AQMS): what scenarios, results and the
/// report read of it, taken from its [`AqmParams`].
pub struct Aqm {
    /// Its name in scenarios (`"fq_codel"`), as Linux's `tc qdisc` names it.
    pub name: &'static str,
    /// Its name in prose (`"FQ-CoDel"`).
    pub title: &'static str,
    /// What `[link.aqm]` may set for it, in the order results list them.
    pub settings: &'static [Setting],
    /// The values of its settings with those given (its parameters' `values`).
    resolve: fn(&Given) -> Vec<SettingValue>,
    /// Whether it marks ECN with the settings given (its parameters' `marks_ecn`).
    marks: fn(&Given) -> bool,
}

impl Aqm {
    /// The entry of the discipline whose parameters are `T`.
    pub const fn of<T: AqmParams>() -> Aqm {
        Aqm {
            name: T::NAME,
            title: T::TITLE,
            settings: T::SETTINGS,
            resolve: resolve::<T>,
            marks: marks::<T>,
        }
    }

    /// The discipline called `name`.
    pub fn by_name(name: &str) -> Option<&'static Aqm> {
        crate::AQMS.iter().find(|a| a.name == name)
    }

    /// It with the settings given (their defaults for the rest).
    pub fn describe(&'static self, g: &Given) -> AqmDesc {
        AqmDesc {
            kind: self,
            values: (self.resolve)(g),
        }
    }
}

fn resolve<T: AqmParams>(g: &Given) -> Vec<SettingValue> {
    T::from_settings(g).values()
}

fn marks<T: AqmParams>(g: &Given) -> bool {
    T::from_settings(g).marks_ecn()
}

/// The bottleneck's queue discipline (`link.aqm`): its entry in [`AQMS`](crate::AQMS) and the
/// value of each of its settings. The default is drop-tail.
#[derive(Clone)]
pub struct AqmDesc {
    kind: &'static Aqm,
    values: Vec<SettingValue>,
}

impl AqmDesc {
    /// The name a scenario gives it (`link.aqm`).
    pub fn name(&self) -> &'static str {
        self.kind.name
    }

    /// The value of each of its discipline's settings ([`Aqm::settings`]), in order.
    pub fn values(&self) -> Vec<SettingValue> {
        self.values.clone()
    }

    /// Its discipline's entry in [`AQMS`](crate::AQMS).
    pub fn kind(&self) -> &'static Aqm {
        self.kind
    }

    /// Its parameters, if its discipline is the one whose parameters are `T`.
    pub fn params<T: AqmParams>(&self) -> Option<T> {
        if self.kind.name != T::NAME {
            return None;
        }
        Some(self.with_given(T::from_settings))
    }

    /// Whether it marks ECN-capable packets CE ([`AqmParams::marks_ecn`]).
    pub fn marks_ecn(&self) -> bool {
        self.with_given(self.kind.marks)
    }

    /// `f` of its settings' values as given.
    fn with_given<R>(&self, f: impl FnOnce(&Given) -> R) -> R {
        let settings = self.kind.settings;
        let get = |k: &str| {
            let i = settings.iter().position(|s| s.name == k)?;
            self.values.get(i).copied()
        };
        f(&Given::new(settings, &get))
    }
}

impl<T: AqmParams> From<T> for AqmDesc {
    /// The discipline whose parameters are `p`.
    fn from(p: T) -> Self {
        AqmDesc {
            kind: const { &Aqm::of::<T>() },
            values: p.values(),
        }
    }
}

impl Default for AqmDesc {
    /// Drop-tail, the first entry of [`AQMS`](crate::AQMS).
    fn default() -> Self {
        let droptail = &crate::AQMS[0];
        droptail.describe(&Given::defaults(droptail.settings))
    }
}

impl PartialEq for AqmDesc {
    fn eq(&self, other: &Self) -> bool {
        self.kind.name == other.kind.name && self.values == other.values
    }
}

impl fmt::Debug for AqmDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AqmDesc")
            .field("name", &self.kind.name)
            .field("values", &self.values)
            .finish()
    }
}

/// Writes the registry: `AQMS`, the entry of each discipline listed (by its parameters'
/// type), and `bottleneck`, which builds a description's bottleneck with its discipline's
/// [`AqmParams::bottleneck`]. (A list of types rather than of values: a queue is
/// built for each backend's packet type, so its constructor is generic.)
macro_rules! aqm_registry {
    ($(#[$doc:meta])* $vis:vis const AQMS = [$($params:ty),+ $(,)?];) => {
        $(#[$doc])*
        $vis const AQMS: &[$crate::Aqm] = &[$($crate::Aqm::of::<$params>()),+];

        /// The bottleneck of `aqm`: a link sending at `rate` what its queue hands it.
        pub(crate) fn bottleneck<P: $crate::Packet + Send + 'static>(
            aqm: &$crate::AqmDesc,
            rate: $crate::Rate,
            limit_bytes: u64,
            ce_threshold: Option<$crate::Nanos>,
            seed: u64,
        ) -> Box<dyn $crate::Element<P>> {
            $(
                if let Some(p) = aqm.params::<$params>() {
                    use $crate::AqmParams;
                    return p.bottleneck(rate, limit_bytes, ce_threshold, seed);
                }
            )+
            unreachable!("{} is not in the list", aqm.name())
        }
    };
}
pub(crate) use aqm_registry;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::{CodelParams, Fifo, FifoParams};
    use crate::testing::P;
    use crate::AQMS;

    #[test]
    fn every_discipline_declares_its_settings_and_describes_itself() {
        let names: Vec<&str> = AQMS.iter().map(|a| a.name).collect();
        assert_eq!(names, ["droptail", "codel", "fq_codel", "pie", "dualpi2"]);
        for a in AQMS {
            // Defaults: the description built from nothing given is the default one, and
            // its values are the declared defaults, one per setting, in order.
            let d = a.describe(&Given::defaults(a.settings));
            assert_eq!(d.name(), a.name);
            assert_eq!(d.kind().name, a.name);
            let defaults: Vec<SettingValue> = a
                .settings
                .iter()
                .filter_map(|s| s.fixed_default())
                .collect();
            assert_eq!(d.values(), defaults, "{}", a.name);
            // Each setting reaches its own field: give every one a value unlike its default.
            let other = |s: &Setting| match s.fixed_default() {
                Some(SettingValue::Time(x)) => SettingValue::Time(x + 1),
                Some(SettingValue::Int(x)) => SettingValue::Int(if x > 1 { x - 1 } else { x + 1 }),
                Some(SettingValue::Bool(b)) => SettingValue::Bool(!b),
                None => panic!("{}.{} has no default of its own", a.name, s.name),
            };
            let get = |k: &str| a.settings.iter().find(|s| s.name == k).map(other);
            let d = a.describe(&Given::new(a.settings, &get));
            let want: Vec<SettingValue> = a.settings.iter().map(other).collect();
            assert_eq!(d.values(), want, "{}", a.name);
        }
        assert_eq!(AqmDesc::default().kind().name, "droptail");
        assert_eq!(AqmDesc::default(), AqmDesc::from(FifoParams));
    }

    #[test]
    fn a_description_gives_back_its_parameters() {
        let p = CodelParams {
            ecn: false,
            ..CodelParams::default()
        };
        let d = AqmDesc::from(p.clone());
        assert_eq!(d.params::<CodelParams>(), Some(p));
        assert_eq!(d.params::<FifoParams>(), None);
        assert_ne!(d, AqmDesc::from(CodelParams::default()));
        assert_eq!(
            d,
            Aqm::by_name("codel")
                .unwrap()
                .describe(&Given::new(CodelParams::SETTINGS, &|k| (k == "ecn")
                    .then_some(SettingValue::Bool(false)),))
        );
    }

    /// A discipline declared in one place (here: drop-tail that holds `headroom` bytes beyond
    /// the link's buffer), as a file under `elements/` declares one.
    #[derive(Debug, PartialEq)]
    struct Tail {
        headroom: u64,
    }

    impl AqmParams for Tail {
        const NAME: &'static str = "tail";
        const TITLE: &'static str = "Tail";
        const SETTINGS: &'static [Setting] = &[Setting::int(
            "headroom",
            0,
            (0, 1 << 20),
            "bytes",
            "bytes held beyond the buffer",
        )];
        fn from_settings(g: &Given) -> Self {
            Tail {
                headroom: g.int("headroom"),
            }
        }
        fn values(&self) -> Vec<SettingValue> {
            vec![SettingValue::Int(self.headroom)]
        }
        fn queue<P: Packet + Send + 'static>(&self, limit: u64, _: u64) -> Box<dyn Queue<P>> {
            Box::new(Fifo::new(limit + self.headroom))
        }
    }

    /// A registry with it: the one line that registers it.
    mod registry {
        use super::Tail;
        use crate::elements::{CodelParams, FifoParams};
        crate::aqm::aqm_registry! {
            pub const AQMS = [FifoParams, CodelParams, Tail];
        }
    }

    #[test]
    fn a_discipline_declared_in_its_file_is_described_and_built_through_the_registry() {
        let a = &registry::AQMS[2];
        assert_eq!(
            (a.name, a.title, a.settings),
            ("tail", "Tail", Tail::SETTINGS)
        );
        let given = |k: &str| (k == "headroom").then_some(SettingValue::Int(1500));
        let d = a.describe(&Given::new(a.settings, &given));
        assert_eq!(
            (d.name(), d.values()),
            ("tail", vec![SettingValue::Int(1500)])
        );
        assert_eq!(d.params::<Tail>(), Some(Tail { headroom: 1500 }));
        assert_eq!(d, AqmDesc::from(Tail { headroom: 1500 }));
        // Three packets at once on a link whose buffer holds one: one goes on the wire and
        // the headroom takes the third; drop-tail drops it.
        let dropped = |d: &AqmDesc| {
            let mut link = registry::bottleneck::<P>(d, Rate::fixed(12e6), 1500, None, 1);
            for _ in 0..3 {
                link.enqueue(0, P::new(1500), &mut Vec::new());
            }
            link.counters()
                .into_iter()
                .find(|c| c.0 == "dropped")
                .map(|c| c.1)
        };
        assert_eq!(dropped(&d), Some(0));
        assert_eq!(dropped(&AqmDesc::default()), Some(1));
    }
}
