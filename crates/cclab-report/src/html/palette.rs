//! Controller colours: a fixed colour per registered controller, shades for several
//! documents or flows of one controller, and display names.

/// Colours per controller, the same in every plot of the page.
pub struct Palette {
    ccs: Vec<(String, String)>,
}

/// Colours of the registered controllers, in registry order (`cclab_core::cc::CONTROLLERS`:
/// reno green, cubic blue, bbr orange, then the next ones); other names (a kernel's own
/// controllers) take the extra colours in order of appearance.
const REGISTERED: &[&str] = &[
    "#2b8a3e", "#1c64d8", "#e8590c", "#9c36b5", "#0c8599", "#c2255c", "#343a40",
];
pub(super) const EXTRA: &[&str] = &["#5c940d", "#f08c00", "#862e9c", "#1098ad", "#495057"];

/// A registered controller's colour: by its place in the registry (aliases included).
fn registered_color(cc: &str) -> Option<&'static str> {
    let i = cclab_core::cc::CONTROLLERS
        .iter()
        .position(|c| c.answers_to(cc))?;
    REGISTERED.get(i).copied()
}

/// What to call a controller for a reader: the registry's title and summary, if it has one.
pub(crate) fn cc_title(cc: &str) -> String {
    cclab_core::cc::find(cc).map_or_else(
        || format!("{cc} (the kernel's)"),
        |c| format!("{}: {}", c.title, c.summary),
    )
}
pub(crate) const NEUTRAL: &str = "#495057";
/// Lines of all flows together (a run's total goodput): black, never a controller's colour.
pub(crate) const TOTAL: &str = "#111111";

impl Palette {
    pub fn new<'a>(ccs: impl IntoIterator<Item = &'a str>) -> Palette {
        let mut p = Palette { ccs: Vec::new() };
        let mut extra = 0;
        for cc in ccs {
            if p.ccs.iter().any(|(c, _)| c == cc) {
                continue;
            }
            let col = registered_color(cc).map(str::to_string).unwrap_or_else(|| {
                extra += 1;
                EXTRA[(extra - 1) % EXTRA.len()].to_string()
            });
            p.ccs.push((cc.to_string(), col));
        }
        p
    }
    pub fn color(&self, cc: &str) -> String {
        self.ccs
            .iter()
            .find(|(c, _)| c == cc)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| NEUTRAL.into())
    }
    /// The `k`-th shade of a controller's colour (flows of one controller in one run).
    pub fn shade(&self, cc: &str, k: usize) -> String {
        const F: &[f64] = &[
            0.0, 0.4, -0.3, 0.62, -0.45, 0.22, -0.15, 0.52, -0.38, 0.72, 0.1, -0.22,
        ];
        mix(&self.color(cc), F[k % F.len()])
    }
}

/// Lighten (f > 0, towards white) or darken (f < 0) a `#rrggbb` colour.
pub(crate) fn mix(hex: &str, f: f64) -> String {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    let ch = |s: u32| -> u8 {
        let c = ((v >> s) & 0xff) as f64;
        let r = if f >= 0.0 {
            c + (255.0 - c) * f
        } else {
            c * (1.0 + f)
        };
        r.round().clamp(0.0, 255.0) as u8
    };
    format!("#{:02x}{:02x}{:02x}", ch(16), ch(8), ch(0))
}
