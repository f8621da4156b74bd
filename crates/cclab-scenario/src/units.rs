//! Parsers and formatters for the unit-bearing values of a scenario.
//!
//! Every parser takes the text of one value (for example `"100mbit"`) and returns the value in
//! base units (bits per second, nanoseconds, bytes, probability) or a one-line message that
//! says what is wrong and what is allowed. The messages do not name the key or the file; the
//! caller adds those.

/// A decimal number as written: `digits` x 10^`exp`, kept exact until converted.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Decimal {
    pub negative: bool,
    /// Digits without the decimal point (at least one).
    pub digits: String,
    pub exp: i32,
}

impl Decimal {
    /// The value times 10^`shift`, correctly rounded to f64 (so `"0.1"` shifted by -2 is
    /// exactly the f64 nearest 0.001).
    pub fn to_f64(&self, shift: i32) -> f64 {
        let exp = self.exp.saturating_add(shift).clamp(-100_000, 100_000);
        let s = format!(
            "{}{}e{}",
            if self.negative { "-" } else { "" },
            self.digits,
            exp
        );
        s.parse::<f64>().unwrap_or(f64::NAN)
    }

    pub fn is_zero(&self) -> bool {
        self.digits.bytes().all(|b| b == b'0')
    }

    /// The value times 10^`shift` x `factor`, exactly, when it is a whole number that fits
    /// in u64 (so sizes above 2^53 bytes keep every digit); `None` otherwise.
    pub fn to_u64_exact(&self, shift: i32, factor: u64) -> Option<u64> {
        if self.negative && !self.is_zero() {
            return None;
        }
        let digits = self.digits.trim_start_matches('0');
        if digits.len() > 38 {
            return None;
        }
        let mut v: u128 = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
        let e = self.exp.checked_add(shift)?;
        if e >= 0 {
            for _ in 0..e.min(40) {
                v = v.checked_mul(10)?;
            }
            if e > 40 && v != 0 {
                return None;
            }
        } else {
            for _ in 0..(-e).min(40) {
                if !v.is_multiple_of(10) {
                    return None;
                }
                v /= 10;
            }
        }
        u64::try_from(v.checked_mul(factor as u128)?).ok()
    }
}

/// Splits `"1.5gbit"` into the number `1.5` and the unit text `"gbit"` (trimmed).
/// Accepts an optional sign, digits with at most one `.`, and an optional exponent
/// (`1e3`, `2.5E-2`). Returns `None` if the text does not start with a number.
pub(crate) fn split_number(text: &str) -> Option<(Decimal, &str)> {
    let t = text.trim();
    let b = t.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        negative = b[i] == b'-';
        i += 1;
    }
    let mut digits = String::new();
    let mut frac_digits: i32 = 0;
    let mut seen_dot = false;
    let mut any = false;
    while i < b.len() {
        match b[i] {
            c @ b'0'..=b'9' => {
                digits.push(c as char);
                if seen_dot {
                    frac_digits = frac_digits.saturating_add(1);
                }
                any = true;
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        i += 1;
    }
    if !any {
        return None;
    }
    let mut exp: i32 = 0;
    // Exponent: 'e' or 'E' followed by an optional sign and at least one digit.
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        let mut eneg = false;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            eneg = b[j] == b'-';
            j += 1;
        }
        let start = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > start {
            let e: i32 = t[start..j].parse().unwrap_or(i32::MAX / 2).min(100_000);
            exp = if eneg { -e } else { e };
            i = j;
        }
    }
    let exp = exp.saturating_sub(frac_digits);
    Some((
        Decimal {
            negative,
            digits,
            exp,
        },
        t[i..].trim(),
    ))
}

fn num_or_err<'a>(text: &'a str, what: &str, examples: &str) -> Result<(Decimal, &'a str), String> {
    match split_number(text) {
        Some(x) => Ok(x),
        None if text.trim().is_empty() => Err(format!("empty {what} (use e.g. {examples})")),
        None => Err(format!(
            "not a {what}: expected a number and a unit (use e.g. {examples})"
        )),
    }
}

/// Rounds a non-negative finite f64 to u64, or reports it as too large.
fn to_u64(x: f64, what: &str) -> Result<u64, String> {
    if !x.is_finite() || x >= 1.8e19 {
        return Err(format!("{what} is too large"));
    }
    Ok(x.round().max(0.0) as u64)
}

pub(crate) const RATE_EXAMPLES: &str = "100mbit, 10gbit, 1.5gbit, 500kbit, 12.5MB/s";

/// Parses a rate into bits per second.
///
/// Bit units (case-insensitive): `bit`, `kbit`, `mbit`, `gbit`, `tbit`, also written `bps`,
/// `kbps`, `mbps`, `gbps`, `tbps` or with `/s` (`mbit/s`). Byte units need a capital `B`
/// and `/s`: `B/s`, `kB/s`, `MB/s`, `GB/s`, `TB/s` (decimal) and `KiB/s`, `MiB/s`, `GiB/s`
/// (binary). Ambiguous spellings (`MBps`, `mb/s`) and bare numbers are rejected.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let (num, unit) = num_or_err(text, "rate", RATE_EXAMPLES)?;
    if unit.is_empty() {
        return Err(format!(
            "a rate needs a unit (write e.g. \"{t}mbit\" for bits/s or \"{t}MB/s\" for bytes/s)",
            t = text.trim()
        ));
    }
    let lower = unit.to_ascii_lowercase();
    let n = text.trim();
    let n = n[..n.len() - unit.len()].trim();
    // (decimal power of ten, binary power of 1024, bytes?)
    let (pow10, pow1024, bytes): (i32, i32, bool) = if let Some(p) = lower
        .strip_suffix("bit/s")
        .or_else(|| lower.strip_suffix("bits/s"))
        .or_else(|| lower.strip_suffix("bits"))
        .or_else(|| lower.strip_suffix("bit"))
    {
        (
            prefix_pow10(p).ok_or_else(|| bad_rate_unit(unit))?,
            0,
            false,
        )
    } else if let Some(p) = lower.strip_suffix("bps") {
        // A capital B in "Bps" means bytes in some conventions (MBps), so refuse rather
        // than guess.
        if let Some(prefix) = unit.strip_suffix("Bps") {
            return Err(format!(
                "ambiguous rate unit \"{unit}\" (write \"{n}{p}bit\" for bits/s or \"{n}{prefix}B/s\" for bytes/s)"
            ));
        }
        (
            prefix_pow10(p).ok_or_else(|| bad_rate_unit(unit))?,
            0,
            false,
        )
    } else if let Some(p) = unit.strip_suffix("B/s") {
        let pl = p.to_ascii_lowercase();
        match pl.as_str() {
            "ki" | "mi" | "gi" | "ti" => (
                0,
                match pl.as_str() {
                    "ki" => 1,
                    "mi" => 2,
                    "gi" => 3,
                    _ => 4,
                },
                true,
            ),
            _ => (
                prefix_pow10(&pl).ok_or_else(|| bad_rate_unit(unit))?,
                0,
                true,
            ),
        }
    } else if lower.ends_with("b/s") {
        return Err(format!(
            "ambiguous rate unit \"{unit}\" (write \"{n}{p}bit\" for bits/s or \"{n}{p}B/s\" with a capital B for bytes/s)",
            p = &unit[..unit.len() - 3]
        ));
    } else {
        return Err(bad_rate_unit(unit));
    };
    if num.negative && !num.is_zero() {
        return Err("a rate must be positive".into());
    }
    let mut v = num.to_f64(pow10);
    v *= 1024f64.powi(pow1024);
    if bytes {
        v *= 8.0;
    }
    let bps = to_u64(v, "rate")?;
    if bps == 0 {
        return Err("a rate must be positive (at least 1bit)".into());
    }
    Ok(bps)
}

fn prefix_pow10(p: &str) -> Option<i32> {
    match p {
        "" => Some(0),
        "k" => Some(3),
        "m" => Some(6),
        "g" => Some(9),
        "t" => Some(12),
        _ => None,
    }
}

fn bad_rate_unit(unit: &str) -> String {
    format!("unknown rate unit \"{unit}\" (use e.g. {RATE_EXAMPLES})")
}

pub(crate) const TIME_EXAMPLES: &str = "10s, 100ms, 500us, 250ns";

/// Parses a time into nanoseconds. Units: `ns`, `us` (or `µs`), `ms`, `s` (case-insensitive).
/// A bare `0` is accepted; other bare numbers are rejected.
pub fn parse_time(text: &str) -> Result<u64, String> {
    let (num, unit) = num_or_err(text, "time", TIME_EXAMPLES)?;
    let lower = unit.to_lowercase();
    let pow10 = match lower.as_str() {
        "ns" => 0,
        "us" | "µs" | "μs" => 3,
        "ms" => 6,
        "s" => 9,
        "" if num.is_zero() => 0,
        "" => {
            return Err(format!(
                "a time needs a unit (write e.g. \"{t}s\" or \"{t}ms\"; units: ns, us, ms, s)",
                t = text.trim()
            ))
        }
        _ => {
            return Err(format!(
                "unknown time unit \"{unit}\" (use ns, us, ms or s, e.g. {TIME_EXAMPLES})"
            ))
        }
    };
    if num.negative && !num.is_zero() {
        return Err("a time must not be negative".into());
    }
    to_u64(num.to_f64(pow10), "time")
}

pub(crate) const SIZE_EXAMPLES: &str = "25mb, 256kb, 1gb, 64kib, 1500b";

/// Parses a size into bytes. Units (case-insensitive): `b` (bytes), `kb`, `mb`, `gb`, `tb`
/// (powers of 1000) and `kib`, `mib`, `gib`, `tib` (powers of 1024). A bare number is bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (num, unit) = num_or_err(text, "size", SIZE_EXAMPLES)?;
    let (pow10, pow1024) = size_unit(unit).ok_or_else(|| {
        format!("unknown size unit \"{unit}\" (use b, kb, mb, gb = 1000^n bytes or kib, mib, gib = 1024^n bytes, e.g. {SIZE_EXAMPLES})")
    })?;
    if num.negative && !num.is_zero() {
        return Err("a size must not be negative".into());
    }
    if let Some(exact) = num.to_u64_exact(pow10, 1024u64.pow(pow1024 as u32)) {
        return Ok(exact);
    }
    to_u64(num.to_f64(pow10) * 1024f64.powi(pow1024), "size")
}

fn size_unit(unit: &str) -> Option<(i32, i32)> {
    Some(match unit.to_ascii_lowercase().as_str() {
        "" | "b" | "byte" | "bytes" => (0, 0),
        "kb" => (3, 0),
        "mb" => (6, 0),
        "gb" => (9, 0),
        "tb" => (12, 0),
        "kib" => (0, 1),
        "mib" => (0, 2),
        "gib" => (0, 3),
        "tib" => (0, 4),
        _ => return None,
    })
}

/// Parses a loss probability: a fraction (`0.01`) or a percentage (`"1%"`).
/// The result is in [0, 1).
pub fn parse_loss_str(text: &str) -> Result<f64, String> {
    let (num, unit) = num_or_err(text, "loss probability", "\"1%\", \"0.5%\" or 0.01")?;
    let p = match unit {
        "%" => num.to_f64(-2),
        "" => return check_bare_loss(num.to_f64(0), text.trim()),
        _ => {
            return Err(format!(
            "unknown loss unit \"{unit}\" (write a percentage like \"1%\" or a fraction like 0.01)"
        ))
        }
    };
    check_loss(p)
}

/// A loss given as a bare number: a probability below 0.05 (`0.01` is 1%). A larger bare
/// number is refused, since netem's `loss 0.5` means 0.5% and people write it so: the message
/// names both readings (`0.5` as 50%, or "0.5%").
pub(crate) fn check_bare_loss(x: f64, text: &str) -> Result<f64, String> {
    if x.is_finite() && (0.05..1.0).contains(&x) {
        let pct = fmt_pct(x * 100.0);
        return Err(format!(
            "a bare {text} is ambiguous: as a probability it is {pct}% of packets, while netem's \"loss {text}\" means {text}%; write \"{pct}%\" if that is meant, or \"{text}%\""
        ));
    }
    if x.is_finite() && (1.0..=100.0).contains(&x) {
        return Err(format!(
            "a bare {text} is not a probability (it would be {}% of packets); write \"{text}%\" (netem's reading) or a fraction below 1 such as 0.01 for 1%",
            fmt_pct(x * 100.0)
        ));
    }
    check_loss(x)
}

/// A loss probability as scenario text that reads back to the same value: a bare fraction
/// below 0.05, else a percentage string (`0.5` -> `"50%"`), the decimal point of its shortest
/// representation moved two places.
pub fn loss_toml(p: f64) -> toml::Value {
    let s = format!("{p}");
    match s.strip_prefix("0.") {
        Some(frac) if p >= 0.05 => {
            let frac = format!("{frac:0<2}");
            let (int, rest) = frac.split_at(2);
            let int = int.trim_start_matches('0');
            let int = if int.is_empty() { "0" } else { int };
            if rest.is_empty() {
                toml::Value::String(format!("{int}%"))
            } else {
                toml::Value::String(format!("{int}.{rest}%"))
            }
        }
        _ => toml::Value::Float(p),
    }
}

/// A percentage as it would be written: `50`, `2.5`, `0.1`.
fn fmt_pct(p: f64) -> String {
    let s = format!("{p:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(crate) fn check_loss(p: f64) -> Result<f64, String> {
    if p.is_nan() {
        return Err("loss must be a number in [0, 1) (e.g. \"1%\" or 0.01)".into());
    }
    if p < 0.0 {
        return Err(
            "loss must not be negative (allowed: 0 <= loss < 1, e.g. \"1%\" or 0.01)".into(),
        );
    }
    if p >= 1.0 {
        return Err("loss must be below 100% (allowed: 0 <= loss < 1, e.g. \"1%\" or 0.01)".into());
    }
    Ok(if p == 0.0 { 0.0 } else { p })
}

/// Queue capacity of the bottleneck.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Buffer {
    /// A fixed number of bytes.
    Bytes(u64),
    /// A number of full-sized packets of [`crate::LinkSpec::packet_bytes`] bytes each.
    Packets(u64),
    /// A multiple of the bandwidth-delay product `rate x link.rtt`.
    Bdp(f64),
}

impl Buffer {
    /// Parses `"1bdp"`, `"0.5bdp"`, `"100p"`, `"100pkt"`, `"100pkts"`, `"100packets"` or a
    /// size (`"256kb"`, `"64kib"`, `"1500b"`). Bare numbers are rejected as ambiguous.
    pub fn parse(text: &str) -> Result<Buffer, String> {
        const EX: &str = "\"1bdp\", \"0.5bdp\", \"100pkt\", \"256kb\"";
        let (num, unit) = num_or_err(text, "buffer size", EX)?;
        if num.negative && !num.is_zero() {
            return Err("a buffer must not be negative".into());
        }
        let lower = unit.to_ascii_lowercase();
        match lower.as_str() {
            "" => Err(format!(
                "a buffer needs a unit (write e.g. \"{t}pkt\" for packets, \"{t}kb\" for bytes or \"1bdp\")",
                t = text.trim()
            )),
            "bdp" | "xbdp" => {
                let x = num.to_f64(0);
                if !x.is_finite() {
                    return Err("buffer is too large".into());
                }
                if x <= 0.0 {
                    return Err(format!("a buffer must be positive (use e.g. {EX})"));
                }
                Ok(Buffer::Bdp(x))
            }
            "p" | "pkt" | "pkts" | "packet" | "packets" => {
                let x = num.to_f64(0);
                if x.fract() != 0.0 {
                    return Err("a packet count must be a whole number (e.g. \"100pkt\")".into());
                }
                let n = to_u64(x, "buffer")?;
                if n == 0 {
                    return Err(format!("a buffer must be positive (use e.g. {EX})"));
                }
                Ok(Buffer::Packets(n))
            }
            _ => match size_unit(unit) {
                Some((p10, p1024)) => {
                    let n = to_u64(num.to_f64(p10) * 1024f64.powi(p1024), "buffer")?;
                    if n == 0 {
                        return Err(format!("a buffer must be positive (use e.g. {EX})"));
                    }
                    Ok(Buffer::Bytes(n))
                }
                None => Err(format!(
                    "unknown buffer unit \"{unit}\" (use bdp, p/pkt for packets, or a size unit b, kb, mb, kib, mib; e.g. {EX})"
                )),
            },
        }
    }
}

impl std::fmt::Display for Buffer {
    /// Canonical form that [`Buffer::parse`] reads back: `0.5bdp`, `100pkt`, `256kb`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Buffer::Bdp(x) => write!(f, "{x}bdp"),
            Buffer::Packets(n) => write!(f, "{n}pkt"),
            Buffer::Bytes(n) => f.write_str(&fmt_size(*n)),
        }
    }
}

/// Exact, short text for a rate: `100mbit`, `1500mbit`, `1234bit`.
pub fn fmt_rate(bps: u64) -> String {
    for (div, unit) in [
        (1_000_000_000_000u64, "tbit"),
        (1_000_000_000, "gbit"),
        (1_000_000, "mbit"),
        (1_000, "kbit"),
    ] {
        if bps >= div && bps.checked_rem(div) == Some(0) {
            return format!("{}{unit}", bps / div);
        }
    }
    format!("{bps}bit")
}

/// Exact, short text for a time: `10s`, `100ms`, `1500us`, `7ns`.
pub fn fmt_time(ns: u64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    for (div, unit) in [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns.checked_rem(div) == Some(0) {
            return format!("{}{unit}", ns / div);
        }
    }
    format!("{ns}ns")
}

/// Exact, short text for a size in decimal units: `25mb`, `1500b`, `1048576b`.
pub fn fmt_size(bytes: u64) -> String {
    for (div, unit) in [
        (1_000_000_000_000u64, "tb"),
        (1_000_000_000, "gb"),
        (1_000_000, "mb"),
        (1_000, "kb"),
    ] {
        if bytes >= div && bytes.checked_rem(div) == Some(0) {
            return format!("{}{unit}", bytes / div);
        }
    }
    format!("{bytes}b")
}
