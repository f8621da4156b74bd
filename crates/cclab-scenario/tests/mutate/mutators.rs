//! Mutators: the deterministic PRNG, byte-level edits, value replacements, long lists, and
//! every mutant of one file.

use cclab_scenario::{ScenarioFile, MAX_MATRIX_POINTS};

use crate::case::Case;
use crate::findings::Fuzz;
use crate::hostile::{
    hostile_values, BAD_SETS, HOSTILE_KEYS, PATH_SET_KEYS, PATH_SET_VALUES, REAL_PATH_SET_KEYS,
    REAL_SET_KEYS, SET_KEYS, SET_VALUES, TOKENS,
};
use crate::{BYTE_MUTANTS, LONG_LISTS, ORIGIN, SET_SEQUENCES, TRUNCATIONS};

/// SplitMix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}
/// 1 to 4 random byte-level edits; the result is made valid UTF-8 lossily.
pub fn mutate_bytes(text: &str, rng: &mut Rng) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(b.len() + 1);
        match rng.below(10) {
            0 if at < b.len() => b[at] ^= 1 << rng.below(8),
            1 if at < b.len() => b[at] = rng.next() as u8,
            2 if at < b.len() => b[at] = rng.pick(TOKENS).as_bytes()[0],
            3 => b.insert(at, rng.next() as u8),
            4 => {
                let t = rng.pick(TOKENS).as_bytes();
                b.splice(at..at, t.iter().copied());
            }
            5 if at < b.len() => {
                let n = (1 + rng.below(16)).min(b.len() - at);
                b.drain(at..at + n);
            }
            6 if at < b.len() => {
                let n = (1 + rng.below(32)).min(b.len() - at);
                let chunk = b[at..at + n].to_vec();
                let to = rng.below(b.len() + 1);
                b.splice(to..to, chunk);
            }
            _ => {
                // Line edits: delete, duplicate or swap whole lines.
                let s = String::from_utf8_lossy(&b).into_owned();
                let mut lines: Vec<&str> = s.split_inclusive('\n').collect();
                if lines.is_empty() {
                    continue;
                }
                let i = rng.below(lines.len());
                let j = rng.below(lines.len());
                match rng.below(3) {
                    0 => {
                        lines.remove(i);
                    }
                    1 => lines.insert(j, lines[i]),
                    _ => lines.swap(i, j),
                }
                b = lines.concat().into_bytes();
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// A `key = value` line: its index, key text and value text (comment and all), and
/// whether it is under `[reference]`.
pub struct ValueLine {
    pub index: usize,
    pub key: String,
    pub value: String,
    pub in_reference: bool,
}

pub fn value_lines(text: &str) -> Vec<ValueLine> {
    let mut in_reference = false;
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let t = line.trim_start();
            if t.starts_with('[') {
                in_reference = t.trim_start_matches('[').starts_with("reference");
                return None;
            }
            if t.starts_with('#') {
                return None;
            }
            let (k, v) = line.split_once('=')?;
            let keyish = !k.trim().is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.\"' \t".contains(c));
            keyish.then(|| ValueLine {
                index,
                key: k.trim().to_string(),
                value: v.trim().to_string(),
                in_reference,
            })
        })
        .collect()
}

/// `text` with line `index` replaced by `with`.
pub fn replace_line(text: &str, index: usize, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i == index {
            out.push_str(with);
            if l.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(l);
        }
    }
    out
}

/// A list of `n` values shaped like `value` (the first element if it is a list), so that
/// most of them are valid: `"10mbit"` gives `["1mbit", "2mbit", ...]`, `0.01` gives floats.
pub fn long_list(value: &str, n: usize) -> String {
    let v = value.split('#').next().unwrap_or("").trim();
    let first = v
        .trim_start_matches('[')
        .split(',')
        .next()
        .unwrap_or("")
        .trim()
        .trim_end_matches(']')
        .trim();
    let item = |i: usize| -> String {
        if let Some(s) = first.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            let unit = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if unit.len() == s.len() {
                // Not a number: cycle through valid names of the same kind (queue
                // disciplines, loss units or congestion controls).
                let names: &[&str] = if AQM_NAMES.contains(&s) {
                    &AQM_NAMES
                } else if s == "segment" || s == "gso" {
                    &["segment", "gso"]
                } else {
                    &["reno", "cubic", "bbr"]
                };
                format!("\"{}\"", names[i % names.len()])
            } else if unit == "%" {
                format!("\"{}%\"", i as f64 / 100.0)
            } else {
                format!("\"{}{unit}\"", i + 1)
            }
        } else if first.contains('.') {
            format!("{}", i as f64 / 10000.0)
        } else {
            (i + 1).to_string()
        }
    };
    let items: Vec<String> = (0..n).map(item).collect();
    format!("[{}]", items.join(", "))
}

/// Queue disciplines `link.aqm` names.
pub const AQM_NAMES: [&str; 4] = ["droptail", "codel", "fq_codel", "pie"];

/// A bare-word list for `--set key=[...]` of `n` values that suit `key`.
pub fn long_set_list(key: &str, n: usize) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    let items: Vec<String> = (1..=n)
        .map(|i| match last {
            "rate" => format!("{i}mbit"),
            "rtt" | "start" | "rtt_extra" | "target" | "interval" | "tupdate" | "jitter"
            | "ack_aggregation" => format!("{i}ms"),
            "aqm" | "kind" => AQM_NAMES[i % AQM_NAMES.len()].to_string(),
            "policer" => format!("{i}mbit"),
            "burst" => format!("{}kb", i + 1),
            "loss_unit" => ["segment", "gso"][i % 2].to_string(),
            "reorder" | "ecn" => (i % 2 == 0).to_string(),
            "host_latency" | "host_jitter" => format!("{i}us"),
            "buffer" => format!("{i}pkt"),
            "loss" | "ack_loss" => format!("{}%", i as f64 / 100.0),
            "size" => format!("{i}kb"),
            "duration" => format!("{i}s"),
            "mss" => (535 + i).to_string(),
            "cc" => ["reno", "cubic", "bbr"][i % 3].to_string(),
            _ => i.to_string(),
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// Every mutant of one file. `trace_values` are `--set link.trace` values (paths of real
/// trace files, good and bad).
pub fn mutate_file(
    fuzz: &mut Fuzz,
    name: &str,
    text: &str,
    rng: &mut Rng,
    nth: usize,
    trace_values: &[String],
) {
    let hostile = hostile_values();
    // The costliest mutants are made for one file in six, in turn.
    let turn = nth % 6;
    let lines = value_lines(text);

    // The file itself, with other line ends, a byte-order mark, no final newline, a NUL.
    fuzz.check(name, Case::text(text));
    fuzz.check(name, Case::text(text.replace('\n', "\r\n")));
    fuzz.check(name, Case::text(text.replace('\n', "\r")));
    fuzz.check(name, Case::text(format!("\u{feff}{text}")));
    fuzz.check(name, Case::text(text.trim_end()));
    fuzz.check(name, Case::text(format!("{text}\0")));

    // 1. Random byte edits.
    for _ in 0..BYTE_MUTANTS {
        fuzz.check(name, Case::text(mutate_bytes(text, rng)));
    }

    // 2. Truncation at evenly spaced byte offsets (some in the middle of a character).
    let b = text.as_bytes();
    let step = (b.len() / TRUNCATIONS).max(1);
    for off in (0..b.len()).step_by(step) {
        let off = (off + rng.below(step)).min(b.len());
        fuzz.check(name, Case::text(String::from_utf8_lossy(&b[..off])));
    }

    // 3 and 4. Every `key = value` line gets every wrong-typed and hostile value (lines of
    // the free-form `[reference]` a random quarter of them).
    for l in &lines {
        for v in &hostile {
            if l.in_reference && rng.below(4) != 0 {
                continue;
            }
            let with = format!("{} = {v}", l.key);
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
    }

    // 4. Long lists: 1000 mostly valid values on a few lines, two of them at once (10^6
    // points, over the limit), and once in a while a list over the limit on its own.
    if !lines.is_empty() {
        for _ in 0..LONG_LISTS {
            let l = rng.pick(&lines);
            let with = format!("{} = {}", l.key, long_list(&l.value, 1000));
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
        // (Not in `[reference]`: it does not make a matrix, and it is the next check's subject.)
        let sweepable: Vec<&ValueLine> = lines.iter().filter(|l| !l.in_reference).collect();
        let (a, b) = (rng.below(sweepable.len()), rng.below(sweepable.len()));
        if a != b {
            let (a, b) = (sweepable[a], sweepable[b]);
            let t = replace_line(
                text,
                a.index,
                &format!("{} = {}", a.key, long_list(&a.value, 1000)),
            );
            let t = replace_line(
                &t,
                b.index,
                &format!("{} = {}", b.key, long_list(&b.value, 1000)),
            );
            fuzz.check(name, Case::text(t));
        }
        if turn == 0 && !sweepable.is_empty() {
            let l = rng.pick(&sweepable);
            let with = format!("{} = {}", l.key, long_list(&l.value, MAX_MATRIX_POINTS + 1));
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
    }

    // A long list in `[reference]` and a sweep: the matrix is small, but each point must not
    // carry a copy of everything.
    if let Some(l) = lines.iter().find(|l| l.in_reference) {
        let with = format!("{} = {}", l.key, long_list(&l.value, 1000));
        fuzz.check(
            name,
            Case {
                text: replace_line(text, l.index, &with),
                sets: vec![format!("seed={}", long_set_list("seed", 200))],
            },
        );
    }

    // Hostile keys in place of real ones, and a very long key.
    for l in &lines {
        for k in HOSTILE_KEYS {
            let with = format!("{k} = {}", l.value);
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
    }
    if let Some(l) = lines.first() {
        let long_key = format!("{} = {}", "k".repeat(10_000), l.value);
        fuzz.check(name, Case::text(replace_line(text, l.index, &long_key)));
        let deep_key = format!("{} = 1", vec!["a"; 300].join("."));
        fuzz.check(name, Case::text(replace_line(text, l.index, &deep_key)));
    }

    // 5. Overrides with hostile values on real and unknown keys, then expand.
    if ScenarioFile::from_str(text, ORIGIN).is_err() {
        return;
    }
    let set_values: Vec<String> = hostile
        .iter()
        .cloned()
        .chain(SET_VALUES.iter().map(|s| s.to_string()))
        .collect();
    let path_values: Vec<String> = PATH_SET_VALUES
        .iter()
        .map(|s| s.to_string())
        .chain(trace_values.iter().cloned())
        .chain(hostile.iter().step_by(8).cloned())
        .collect();
    let set_keys: Vec<&str> = SET_KEYS.iter().chain(PATH_SET_KEYS).copied().collect();
    let all_values: Vec<String> = set_values.iter().chain(&path_values).cloned().collect();
    let with_sets = |sets: Vec<String>| Case {
        text: text.to_string(),
        sets,
    };
    // Every key with every value on a few files (one with two flow groups among them), a
    // random sample of the pairs on the others: override handling hardly depends on the file.
    let groups = text.matches("[[flows]]").count();
    for (keys, values) in [(SET_KEYS, &set_values), (PATH_SET_KEYS, &path_values)] {
        for k in keys {
            for v in values {
                if turn == 0 || groups > 1 || rng.below(8) == 0 {
                    fuzz.check(name, with_sets(vec![format!("{k}={v}")]));
                }
            }
        }
    }
    for s in BAD_SETS {
        fuzz.check(name, with_sets(vec![s.to_string()]));
    }
    for _ in 0..4 {
        let k = rng.pick(&SET_KEYS[..REAL_SET_KEYS]);
        fuzz.check(
            name,
            with_sets(vec![format!("{k}={}", long_set_list(k, 1000))]),
        );
    }
    let k = rng.pick(&SET_KEYS[..REAL_SET_KEYS]);
    fuzz.check(
        name,
        with_sets(vec![
            format!("{k}={}", long_set_list(k, 1000)),
            format!("seed={}", long_set_list("seed", 1000)),
        ]),
    );
    // A long list on a path key, over a file's own path keys or none.
    let k = rng.pick(&PATH_SET_KEYS[..REAL_PATH_SET_KEYS]);
    fuzz.check(
        name,
        with_sets(vec![format!("{k}={}", long_set_list(k, 1000))]),
    );
    if turn == 1 {
        let k = rng.pick(&SET_KEYS[..REAL_SET_KEYS]);
        fuzz.check(
            name,
            with_sets(vec![format!(
                "{k}={}",
                long_set_list(k, MAX_MATRIX_POINTS + 1)
            )]),
        );
    }
    // Random sequences of overrides, good and bad mixed.
    for _ in 0..SET_SEQUENCES {
        let sets = (0..2 + rng.below(3))
            .map(|_| match rng.below(4) {
                0 => rng.pick(BAD_SETS).to_string(),
                _ => format!("{}={}", rng.pick(&set_keys), rng.pick(&all_values)),
            })
            .collect();
        fuzz.check(name, with_sets(sets));
    }
}
